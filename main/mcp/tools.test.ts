/**
 * Every MCP tool, called through the MCP SDK's own client over stdio (the server's transport:
 * `tsx main/mcp/server.ts`), as a role that holds it, against the two-org clinic fixture. Each
 * structured result must match the tool's listed `outputSchema`: the SDK client already refuses a
 * mismatch (-32602), and the test validates it again with the SDK's own Ajv validator, so a result
 * shape that drifts from its declared schema fails here, whatever the tool.
 */
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../models/roles';
import { defaultToolRegistry } from '../kinetix/catalogue';
import { mcpExposableTools } from '../kinetix/gate';
import type { Tool } from '../kinetix/tool';
import { toolOutputSchema, toolOutputWrapped } from '../kinetix/tool';
import { RECORD_TEXT_VERBS, toolNameForVerb } from '../kinetix/verb-tools';
import { VERBS } from '../services';
import type { ClinicFixture } from '../testing/clinic-fixture';
import { createClinicFixture } from '../testing/clinic-fixture';
import { inputFor, ROLE_ORDER } from '../testing/verb-matrix';
import { issueMcpToken } from './tokens';
import { allowWithheld } from './session';
import { CLEARANCE_SETTING_KEY, DEFAULT_CLEARANCE } from '../kinetix/classification';
import { clearanceUpTo } from '../../models/classification';
import { putOrgSetting } from '../data/identity';

const ROOT = resolve(__dirname, '../..');
const TSX = resolve(ROOT, 'node_modules/.bin/tsx');
const SERVER = resolve(ROOT, 'main/mcp/server.ts');

type CallResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };

let f: ClinicFixture;
const clients: Client[] = [];
const registry = defaultToolRegistry();
/** Tool name → verb name (record-text tools read through their table's get verb). */
const verbOfTool = new Map<string, string>();
for (const v of VERBS.keys()) verbOfTool.set(toolNameForVerb(v), v);
for (const [table, verb] of Object.entries(RECORD_TEXT_VERBS)) verbOfTool.set(`read_${table}_notes`, verb!);

/** A valid input for a tool, as `role` in org A. */
function argsFor(tool: string, role: Role): Record<string, unknown> {
  const verb = verbOfTool.get(tool);
  if (!verb) throw new Error(`no verb for tool ${tool}`);
  const input = inputFor(verb, f.a, role) as Record<string, unknown>;
  return tool.startsWith('read_') ? { id: input.id } : input;
}

/** Writes an MCP client may not propose at all: a one-time secret is shown only in the app. */
const REFUSED_OVER_MCP = new Set(['register_device', 'rotate_device_key']);

async function connect(userId: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: TSX,
    args: [SERVER, '--db', f.path, '--token', issueMcpToken(f.db, userId).token],
    cwd: ROOT,
    env: getDefaultEnvironment(),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'tools-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Fewest roles (in ROLE_ORDER, greedily) that together hold every MCP-exposable tool. */
function coveringRoles(): { role: Role; tools: Tool[] }[] {
  const left = new Set(mcpExposableTools(registry.all()).map((t) => t.name));
  const out: { role: Role; tools: Tool[] }[] = [];
  while (left.size > 0) {
    let best: { role: Role; tools: Tool[] } | null = null;
    for (const role of ROLE_ORDER) {
      const tools = mcpExposableTools(registry.available(role)).filter((t) => left.has(t.name));
      if (!best || tools.length > best.tools.length) best = { role, tools };
    }
    if (!best || best.tools.length === 0) throw new Error(`no role holds ${[...left].join(', ')}`);
    for (const t of best.tools) left.delete(t.name);
    out.push(best);
  }
  return out;
}

beforeAll(() => {
  f = createClinicFixture();
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  f?.close();
});

describe('every MCP tool through the SDK client', () => {
  it('the covering roles list every exposable tool, each read with an output schema', () => {
    const exposable = mcpExposableTools(registry.all());
    expect(exposable.length).toBeGreaterThan(50);
    const covered = coveringRoles().flatMap((c) => c.tools.map((t) => t.name));
    expect(covered.sort()).toEqual(exposable.map((t) => t.name).sort());
    // Every verb read declares its output; both wrapped and bare shapes occur.
    const verbReads = exposable.filter((t) => t.kind === 'read' && !t.name.startsWith('read_'));
    for (const t of verbReads) expect(toolOutputSchema(t), t.name).not.toBeNull();
    expect(verbReads.some((t) => toolOutputWrapped(t))).toBe(true);
    expect(verbReads.some((t) => !toolOutputWrapped(t))).toBe(true);
  });

  it('every tool returns structured content that matches its listed outputSchema', { timeout: 180_000 }, async () => {
    const validator = new AjvJsonSchemaValidator();
    const called: string[] = [];
    // Every mismatch, by tool, so one run names them all.
    const faults: string[] = [];
    for (const { role, tools } of coveringRoles()) {
      const client = await connect(f.a.users[role]);
      const listed = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
      for (const tool of tools) {
        called.push(tool.name);
        const descriptor = listed.get(tool.name);
        if (!descriptor) {
          faults.push(`${tool.name}: not listed for ${role}`);
          continue;
        }
        // With the default `mcp` clearance (internal only) a field of another class may also be the withheld marker.
        const declared = toolOutputSchema(tool);
        expect(descriptor.outputSchema ?? null, tool.name).toEqual(declared ? allowWithheld(declared, tool.tables, DEFAULT_CLEARANCE) : null);
        // A write sets record values: refused below their class (issue 9 §12, clearance.test.ts); here
        // the org's `mcp` clearance is raised for writes so each one is proposed, and reads run at the default.
        putOrgSetting(f.db, f.a.orgId, CLEARANCE_SETTING_KEY, tool.kind === 'write' ? { mcp: clearanceUpTo('clinical-restricted') } : {});
        let r: CallResult;
        try {
          // The SDK client validates structured content against the listed schema and throws -32602 on a mismatch.
          r = (await client.callTool({ name: tool.name, arguments: argsFor(tool.name, role) })) as CallResult;
        } catch (e) {
          faults.push(`${tool.name} as ${role}: ${(e as Error).message}`);
          continue;
        }
        const text = r.content[0]?.text ?? '';
        if (REFUSED_OVER_MCP.has(tool.name)) {
          if (!r.isError || JSON.parse(text).error.code !== 'Forbidden') faults.push(`${tool.name}: expected Forbidden, got ${text.slice(0, 200)}`);
          continue;
        }
        if (r.isError) {
          faults.push(`${tool.name} as ${role}: ${text.slice(0, 300)}`);
          continue;
        }
        const body: unknown = JSON.parse(text);
        if (descriptor.outputSchema) {
          const check = validator.getValidator(descriptor.outputSchema)(r.structuredContent);
          if (!check.valid) faults.push(`${tool.name}: ${check.errorMessage}`);
          expect(r.structuredContent, tool.name).toEqual(toolOutputWrapped(tool) ? { result: body } : body);
        } else {
          expect(tool.kind === 'write' || tool.name.startsWith('read_'), `${tool.name} has no output schema`).toBe(true);
          expect(r.structuredContent, tool.name).toEqual(body);
        }
      }
    }
    expect(faults).toEqual([]);
    expect(called.sort()).toEqual(
      mcpExposableTools(registry.all())
        .map((t) => t.name)
        .sort(),
    );
  });

  it('a union (search_help) and a nullable result (get_wellness_day, both branches) come back as { result }', async () => {
    const client = await connect(f.a.users.physio);
    await client.listTools();
    const help = (await client.callTool({ name: 'search_help', arguments: { query: 'acwr' } })) as CallResult;
    expect(help.isError).toBeFalsy();
    expect(Object.keys(help.structuredContent ?? {})).toEqual(['result']);
    const day = (await client.callTool({ name: 'get_wellness_day', arguments: { athlete_id: f.a.athleteId, date: '2026-11-19' } })) as CallResult;
    expect(day.isError).toBeFalsy();
    expect(day.structuredContent?.result).toMatchObject({ athlete_id: f.a.athleteId, date: '2026-11-19' });
    const none = (await client.callTool({ name: 'get_wellness_day', arguments: { athlete_id: f.a.athleteId, date: '2026-01-01' } })) as CallResult;
    expect(none.isError).toBeFalsy();
    expect(none.structuredContent).toEqual({ result: null });
  });
});
