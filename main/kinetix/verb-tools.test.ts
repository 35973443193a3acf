/** The tool catalogue is derived from the verb map (models/verbs.ts): one tool per verb, its schemas the map's. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VERB_NAMES, VERB_SPECS } from '../../models/verbs';
import { VERBS } from '../services';
import { defaultToolRegistry } from './catalogue';
import { toolInputSchema, toolOutputSchema } from './tool';
import { toolNameForVerb } from './verb-tools';

describe('tool catalogue from the verb map', () => {
  const registry = defaultToolRegistry();

  it("has one tool per verb, with the verb's permission, input JSON Schema and (reads) output JSON Schema", () => {
    expect([...VERBS.keys()].sort()).toEqual([...VERB_NAMES].sort());
    for (const name of VERB_NAMES) {
      const spec = VERB_SPECS[name];
      const tool = registry.get(toolNameForVerb(name));
      expect(tool, name).toBeDefined();
      expect(tool!.permission).toBe(spec.permission);
      expect(tool!.kind).toBe(spec.kind);
      const expectedInput = z.toJSONSchema(spec.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      delete expectedInput.$schema;
      expect(toolInputSchema(tool!), name).toEqual(expectedInput);
      if (spec.kind === 'read') {
        const out = toolOutputSchema(tool!);
        expect(out?.type, name).toBe('object');
      } else {
        expect(toolOutputSchema(tool!), name).toBeNull();
      }
    }
  });

  it('carries field descriptions from the schemas to the model', () => {
    const list = toolInputSchema(registry.get('list_athletes')!) as { properties: Record<string, { description?: string }> };
    expect(list.properties.squad_id?.description).toBe('Only athletes of this squad.');
    expect(list.properties.limit?.description).toBe('Maximum rows to return (1–5000).');
    const acwr = toolOutputSchema(registry.get('get_workload_acwr')!);
    expect(JSON.parse(JSON.stringify(acwr))).toMatchObject({
      properties: { results: { items: { properties: { note: { description: 'Plain-language explanation to show beside the number.' } } } } },
    });
    // A read whose result is a list travels as { result } (MCP structured content is an object).
    const squads = toolOutputSchema(registry.get('list_squads')!);
    expect(squads).toMatchObject({ required: ['result'], properties: { result: { type: 'array' } } });
  });
});
