/**
 * Every string a verb takes refuses control and text-direction characters: walks the input schema
 * of every verb in models/verbs.ts (nested objects, arrays, unions included) and feeds each string
 * field, on its own, a bidi override (U+202E) and a NUL. Fields that accept only a closed alphabet
 * (ids, dates, enums, regex-checked slugs) refuse them as well; the one exception is listed with its reason.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as I from './inputs';
import { VERB_SPECS } from './verbs';

/** Explicit exceptions, `verb:path` → why the field may hold a bidi override or a NUL. */
const EXCEPTIONS: Record<string, string> = {
  'help.search:query':
    'search words are only matched against the help index, never stored or shown; main/services/help.test.ts feeds NUL on purpose to prove it never throws',
};

interface Leaf {
  path: string;
  schema: z.ZodType;
}

/** Every string-typed field reachable from `schema`, each with the schema that validates it alone (wrappers kept). */
function stringLeaves(schema: z.ZodType, path: string, outer: z.ZodType = schema, out: Leaf[] = []): Leaf[] {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case 'string':
      out.push({ path, schema: outer });
      break;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      stringLeaves(def.innerType as z.ZodType, path, outer, out);
      break;
    case 'pipe':
      stringLeaves(def.in as z.ZodType, path, outer, out);
      break;
    case 'object':
      for (const [k, v] of Object.entries(def.shape as Record<string, z.ZodType>)) stringLeaves(v, path ? `${path}.${k}` : k, v, out);
      break;
    case 'array':
      stringLeaves(def.element as z.ZodType, `${path}[]`, def.element as z.ZodType, out);
      break;
    case 'union':
      for (const o of def.options as z.ZodType[]) stringLeaves(o, path, o, out);
      break;
    case 'record':
      stringLeaves(def.valueType as z.ZodType, `${path}{}`, def.valueType as z.ZodType, out);
      break;
    case 'lazy':
      stringLeaves((def.getter as () => z.ZodType)(), path, outer, out);
      break;
    default:
      break;
  }
  return out;
}

describe('every string input field of every verb', () => {
  const leaves = Object.entries(VERB_SPECS).flatMap(([verb, spec]) =>
    stringLeaves(spec.input as z.ZodType, '').map((l) => ({ ...l, key: `${verb}:${l.path}` })),
  );
  it('finds the fields (the walk reaches names, notes and nested strings)', () => {
    const keys = leaves.map((l) => l.key);
    for (const k of ['athletes.create:name', 'athletes.create:position', 'injuries.create:body_part', 'screenings.create:test', 'rtp.update:notes'])
      expect(keys).toContain(k);
    expect(leaves.length).toBeGreaterThan(60);
  });
  it('refuses a bidi override (U+202E) and a NUL in each, unless listed as an exception', () => {
    const accepted: string[] = [];
    for (const { key, schema } of leaves) {
      if (EXCEPTIONS[key]) continue;
      for (const bad of ['wing\u202E', 'an\u0000kle']) if (schema.safeParse(bad).success) accepted.push(`${key} accepts ${JSON.stringify(bad)}`);
    }
    expect(accepted).toEqual([]);
  });
});

describe('single-line text and notes', () => {
  it('trims, NFKC-normalises and refuses blanks and invisible characters in names', () => {
    expect(I.CreateSquad.parse({ name: ' U\uFF119 ', season: '2026/27' }).name).toBe('U19');
    for (const name of ['   ', 'U19\u200B', 'U19\u200E', 'U19\u2028', 'U19\u061C', '\uFEFFU19', 'U19\u2067'])
      expect({ name, ok: I.CreateSquad.safeParse({ name, season: '2026/27' }).success }).toEqual({ name, ok: false });
    expect(
      I.CreateRateItem.safeParse({ folder_id: '00000000-0000-4000-8000-000000000000', code: 'A1', name: '  ', item_type: 'assessment', price_cents: 100 })
        .success,
    ).toBe(false);
  });
  it('a fee code is ASCII letters, digits and . _ / - (no look-alike hyphen), one message per field', () => {
    const base = { folder_id: '00000000-0000-4000-8000-000000000000', name: 'X', item_type: 'assessment', price_cents: 100 };
    for (const code of ['PHY-01', 'A1', 'INS/2026.3', 'x_1']) expect(I.CreateRateItem.safeParse({ ...base, code }).success, code).toBe(true);
    for (const code of ['PRI\u2011011', 'PRI 011', '-A', 'ÄB', 'PRI—1']) {
      const r = I.CreateRateItem.safeParse({ ...base, code });
      expect(
        r.error?.issues.filter((i) => i.path[0] === 'code'),
        code,
      ).toHaveLength(1);
    }
    expect(I.UpdateRateItem.safeParse({ id: base.folder_id, code: 'PRI\u2011011' }).success).toBe(false);
  });
  it('a blank required name gets one message, not two (the minimum and the blank check)', () => {
    for (const name of ['', '   ']) {
      const r = I.CreateSquad.safeParse({ name, season: '2026/27' });
      expect(r.error?.issues.filter((i) => i.path[0] === 'name')).toHaveLength(1);
    }
  });
  it('checks the length limit on the normalised text: NFKC can lengthen it (U+FDFA becomes 18 characters)', () => {
    expect('\uFDFA'.normalize('NFKC')).toHaveLength(18);
    // 6 characters typed (under the squad name's 100), 6 × 18 = 108 once normalised: refused.
    const long = I.CreateSquad.safeParse({ name: '\uFDFA'.repeat(6), season: '2026/27' });
    expect(long.success).toBe(false);
    expect(long.error?.issues[0]).toMatchObject({ path: ['name'], message: expect.stringMatching(/at most 100 characters once normalised/) });
    // 5 of them (90 characters) fit, stored normalised.
    expect(I.CreateSquad.parse({ name: '\uFDFA'.repeat(5), season: '2026/27' }).name).toHaveLength(90);
    // Through .nullable() as well: an athlete's position (at most 60; 4 typed are 72 once normalised).
    const pos = I.CreateAthlete.safeParse({ name: 'A', date_of_birth: '2000-01-01', position: '\uFDFA'.repeat(4) });
    expect(pos.error?.issues.filter((i) => /once normalised/.test(i.message)).map((i) => i.path.join('.'))).toEqual(['position']);
  });
  it('notes keep line breaks and tabs but refuse NUL, other C0 controls and bidi overrides', () => {
    const base = { athlete_id: '00000000-0000-4000-8000-000000000000', body_part: 'ankle', side: 'left', onset_date: '2026-11-01', severity: 'mild' };
    expect(I.CreateInjury.parse({ ...base, clinician_notes: 'Line 1\r\nLine 2\tindented' }).clinician_notes).toBe('Line 1\r\nLine 2\tindented');
    for (const clinician_notes of ['a\u0000b', 'a\u0007b', 'a\u202Eb', 'a\u2066b'])
      expect(I.CreateInjury.safeParse({ ...base, clinician_notes }).success).toBe(false);
  });
});

describe('a field left out, null or of the wrong type is an issue, never a thrown error (issue 13 re-review)', () => {
  // Every verb's input, with each top-level field in turn left out, set to null, or a number:
  // the schema answers with issues (zod's own "required"/type message); nothing in a refinement
  // may read the value as a string first (a TypeError is a 500 for every door).
  for (const [verb, spec] of Object.entries(VERB_SPECS)) {
    it(verb, () => {
      const shape = (spec.input as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      const probes: unknown[] = [{}, null, 42, ...Object.keys(shape).flatMap((k) => [{ [k]: null }, { [k]: 7 }, { [k]: undefined }])];
      for (const p of probes) expect(() => spec.input.safeParse(p)).not.toThrow();
    });
  }
});
