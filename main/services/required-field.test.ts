/**
 * A required text field left out is a Validation error that names the field, for every verb whose
 * input uses models/text.ts `plainText` (issue 13 re-review blocker: it was `Internal … Cannot
 * read properties of undefined (reading 'length')`). Real SQLite file, real service verbs, the
 * `verb.call` / CLI door (`callVerbByName`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClinicFixture, errorOf, type ClinicFixture } from '../testing/clinic-fixture';

let f: ClinicFixture;
beforeAll(() => {
  f = createClinicFixture();
});
afterAll(() => f.close());

describe('a required text field left out', () => {
  const cases: [string, 'admin' | 'physio' | 'owner', () => Record<string, unknown>, string][] = [
    ['squads.create', 'admin', () => ({ name: 'Q' }), 'season'],
    ['squads.create', 'admin', () => ({ season: '2026/27' }), 'name'],
    ['athletes.create', 'admin', () => ({ date_of_birth: '2008-01-01', sex: 'female' }), 'name'],
    ['users.create', 'admin', () => ({ email: 'nobody.named@example.test', role: 'admin' }), 'display_name'],
    ['rates.createFolder', 'admin', () => ({}), 'name'],
    ['injuries.create', 'physio', () => ({ athlete_id: f.a.athleteId, side: 'left', onset_date: '2026-11-01', severity: 'mild' }), 'body_part'],
    ['devices.register', 'admin', () => ({ kind: 'camera' }), 'name'],
  ];
  for (const [verb, role, input, field] of cases) {
    it(`${verb} without ${field}: Validation naming ${field} ("Required."), nothing written`, () => {
      const e = errorOf(() => f.call(f.a.users[role], verb, input()));
      expect(e.code).toBe('Validation');
      expect(e.message).not.toMatch(/Cannot read properties/);
      expect(e.issues).toEqual([{ path: field, message: 'Required.' }]);
    });
  }
  it('a required field sent as null or only spaces is named too (one message each)', () => {
    expect(errorOf(() => f.call(f.a.users.admin, 'squads.create', { name: null, season: '2026/27' })).issues?.map((i) => i.path)).toEqual(['name']);
    expect(errorOf(() => f.call(f.a.users.admin, 'squads.create', { name: '   ', season: '2026/27' })).issues).toEqual([
      { path: 'name', message: 'Enter a value: it cannot be blank or only spaces.' },
    ]);
    expect(errorOf(() => f.call(f.a.users.admin, 'squads.create', { name: '', season: '2026/27' })).issues).toHaveLength(1);
  });
});
