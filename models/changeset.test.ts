import { describe, expect, it } from 'vitest';
import type { RuleActor } from './changeset';
import { authorizeChange, canonicalJson, clearsPinHash, inverseOf } from './changeset';
import { ROLES, pinRefusal } from './roles';

const ORG = '00000000-0000-7000-8000-000000000001';
const OTHER = '00000000-0000-7000-8000-000000000002';
const ATH = '00000000-0000-7000-8000-0000000000a1';
const physio: RuleActor = { userId: '00000000-0000-7000-8000-0000000000f1', orgId: ORG, role: 'physio', linkedAthleteId: null, active: true };

describe('authorizeChange', () => {
  it('refuses every hard delete', () => {
    expect(authorizeChange(physio, { op: 'delete', table: 'injury', id: ATH, version: 1 }, { orgId: ORG, athleteId: ATH })).toMatchObject({
      ok: false,
      code: 'Forbidden',
    });
    expect(authorizeChange(physio, { op: 'delete', table: 'squad', id: ATH, version: 1 }, { orgId: ORG, athleteId: null })).toMatchObject({
      ok: false,
      code: 'Forbidden',
    });
  });
  it("reports another org's row as NotFound", () => {
    expect(
      authorizeChange(physio, { op: 'update', table: 'athlete', id: ATH, version: 1, before: {}, after: { notes: 'x' } }, { orgId: OTHER, athleteId: ATH }),
    ).toMatchObject({ ok: false, code: 'NotFound' });
  });
  it('refuses writes to meta columns (org_id, version)', () => {
    expect(
      authorizeChange(physio, { op: 'update', table: 'athlete', id: ATH, version: 1, before: {}, after: { org_id: OTHER } }, { orgId: ORG, athleteId: ATH }),
    ).toMatchObject({ ok: false, code: 'Forbidden' });
    expect(
      authorizeChange(physio, { op: 'update', table: 'athlete', id: ATH, version: 1, before: {}, after: { version: 99 } }, { orgId: ORG, athleteId: ATH }),
    ).toMatchObject({ ok: false, code: 'Forbidden' });
  });
  it('gates each sign-off field on insert and on update', () => {
    const insert = {
      op: 'insert' as const,
      table: 'rtp_entry' as const,
      id: ATH,
      after: {
        injury_id: ATH,
        athlete_id: ATH,
        stage: 'rehabilitation',
        criteria_met: '',
        notes: '',
        physio_signoff_by: null,
        physio_signoff_at: null,
        doctor_signoff_by: physio.userId,
        doctor_signoff_at: '2026-01-01T00:00:00.000Z',
        coach_signoff_by: null,
        coach_signoff_at: null,
      },
    };
    expect(authorizeChange(physio, insert, null)).toMatchObject({ ok: false, code: 'Forbidden', field: 'doctor_signoff_by' });
    expect(authorizeChange({ ...physio, role: 'doctor' }, insert, null)).toEqual({ ok: true });
    const update = {
      op: 'update' as const,
      table: 'rtp_entry' as const,
      id: ATH,
      version: 2,
      before: { doctor_signoff_by: null },
      after: { doctor_signoff_by: physio.userId },
    };
    expect(authorizeChange(physio, update, { orgId: ORG, athleteId: ATH })).toMatchObject({ ok: false, code: 'Forbidden' });
    expect(
      authorizeChange(
        { ...physio, role: 'coach' },
        { ...update, before: { coach_signoff_by: null }, after: { coach_signoff_by: physio.userId } },
        { orgId: ORG, athleteId: ATH },
      ),
    ).toEqual({ ok: true });
  });
  it('an update naming no field, or only sign-off fields at their stored values, still needs a write permission of the row (issue 12 re-review B1)', () => {
    const admin: RuleActor = { ...physio, role: 'admin' };
    const doctorId = '00000000-0000-7000-8000-0000000000d1';
    const stored = { orgId: ORG, athleteId: ATH, row: { doctor_signoff_by: doctorId } };
    const same = {
      op: 'update' as const,
      table: 'rtp_entry' as const,
      id: ATH,
      version: 2,
      before: { doctor_signoff_by: doctorId },
      after: { doctor_signoff_by: doctorId },
    };
    // before: ok, so an admin (no RTP access) could tell a signed entry from an unsigned one by the reply
    expect(authorizeChange(admin, same, stored)).toMatchObject({ ok: false, code: 'Forbidden' });
    expect(authorizeChange({ ...admin, role: 'analyst' }, { ...same, table: 'injury', before: {}, after: {} }, stored)).toMatchObject({
      ok: false,
      code: 'Validation',
    });
    expect(authorizeChange(admin, { ...same, before: {}, after: {} }, stored)).toMatchObject({ ok: false, code: 'Validation' });
    // a role that may write the row is not refused for restating a stored sign-off
    expect(authorizeChange(physio, same, stored)).toEqual({ ok: true });
  });
  it('a report is written only by a role that may read its kind, and its kind never changes (issue 13 re-review)', () => {
    const analyst: RuleActor = { ...physio, role: 'analyst' };
    const report = (kind: string) => ({
      op: 'insert' as const,
      table: 'report' as const,
      id: ATH,
      after: { athlete_id: null, squad_id: null, kind, title: 'R', markdown: 'm', pdf_path: null, generated_by: physio.userId },
    });
    expect(authorizeChange(analyst, report('athlete_summary'), null)).toMatchObject({ ok: false, code: 'Forbidden' });
    expect(authorizeChange(analyst, report('squad_workload'), null)).toEqual({ ok: true });
    const stored = { orgId: ORG, athleteId: ATH, row: { kind: 'athlete_summary' } };
    const edit = { op: 'update' as const, table: 'report' as const, id: ATH, version: 1, before: {}, after: { markdown: 'x' } };
    expect(authorizeChange(analyst, edit, stored)).toMatchObject({ ok: false, code: 'Forbidden' });
    expect(authorizeChange(physio, edit, stored)).toEqual({ ok: true });
    expect(authorizeChange(physio, { ...edit, after: { kind: 'squad_workload' } }, stored)).toMatchObject({ ok: false, code: 'Forbidden', field: 'kind' });
    // in one's own name only, and the author never changes
    const squad = report('squad_workload');
    expect(authorizeChange(analyst, { ...squad, after: { ...squad.after, generated_by: '00000000-0000-7000-8000-0000000000d1' } }, null)).toMatchObject({
      ok: false,
      field: 'generated_by',
    });
    expect(
      authorizeChange(
        physio,
        { ...edit, after: { generated_by: analyst.userId + 'x' } },
        { ...stored, row: { kind: 'athlete_summary', generated_by: physio.userId } },
      ),
    ).toMatchObject({
      ok: false,
      field: 'generated_by',
    });
  });
  it('checks bounds with the record schema, naming the field', () => {
    expect(
      authorizeChange(physio, { op: 'update', table: 'wellness', id: ATH, version: 1, before: {}, after: { sleep: 7 } }, { orgId: ORG, athleteId: ATH }),
    ).toMatchObject({ ok: false, code: 'Validation', field: 'sleep' });
  });
  it('narrows athlete users to their linked athlete; unlinked is refused', () => {
    const ath: RuleActor = { ...physio, role: 'athlete', linkedAthleteId: ATH };
    const w = {
      op: 'insert' as const,
      table: 'wellness' as const,
      id: OTHER,
      after: { athlete_id: ATH, date: '2026-01-01', sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3, notes: '' },
    };
    expect(authorizeChange(ath, w, null)).toEqual({ ok: true });
    expect(authorizeChange(ath, { ...w, after: { ...w.after, athlete_id: OTHER } }, null)).toMatchObject({ ok: false, code: 'NotFound' });
    expect(authorizeChange({ ...ath, linkedAthleteId: null }, w, null)).toMatchObject({ ok: false, code: 'Forbidden' });
  });
  it('refuses a deactivated actor', () => {
    expect(
      authorizeChange(
        { ...physio, active: false },
        { op: 'update', table: 'athlete', id: ATH, version: 1, before: {}, after: { notes: 'x' } },
        { orgId: ORG, athleteId: ATH },
      ),
    ).toMatchObject({ ok: false, code: 'Forbidden' });
  });
});

describe('inverseOf / canonicalJson', () => {
  it('inverts an update and soft-deletes an insert', () => {
    expect(inverseOf({ op: 'update', table: 'athlete', id: ATH, version: 1, before: { notes: 'a' }, after: { notes: 'b' } }, 2)).toEqual({
      op: 'update',
      table: 'athlete',
      id: ATH,
      version: 2,
      before: { notes: 'b' },
      after: { notes: 'a' },
    });
    expect(inverseOf({ op: 'insert', table: 'injury', id: ATH, after: {} }, 1).after).toEqual({ deleted_at: '__NOW__' });
  });
  it('is key-order independent', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe(canonicalJson({ a: [{ c: 3, d: 2 }], b: 1 }));
  });
});

describe('athlete accounts (issue 13 re-review: an admin reaching clinical data through an account they control)', () => {
  const USER = '00000000-0000-7000-8000-0000000000b1';
  const admin: RuleActor = { ...physio, role: 'admin' };
  const owner: RuleActor = { ...physio, role: 'owner' };
  const superAdmin: RuleActor = { ...physio, role: 'super_admin' };
  const newAccount = (after: Record<string, unknown>) => ({
    op: 'insert' as const,
    table: 'app_user' as const,
    id: USER,
    after: { email: 'x@example.test', display_name: 'X', role: 'athlete', linked_athlete_id: ATH, active: true, budget_cap_usd: null, ...after },
  });
  const stored = (row: Record<string, unknown>) => ({ orgId: ORG, athleteId: null, row: { role: 'athlete', linked_athlete_id: ATH, ...row } });
  const update = (after: Record<string, unknown>) => ({ op: 'update' as const, table: 'app_user' as const, id: USER, version: 1, before: {}, after });

  it('only a role that reads what the account reads creates an athlete account or links any account (the same rule judges uploads at HQ)', () => {
    expect(authorizeChange(admin, newAccount({}), null)).toMatchObject({
      ok: false,
      code: 'Forbidden',
      field: 'role',
      reason: expect.stringMatching(/Ask an owner/),
    });
    expect(authorizeChange(superAdmin, newAccount({}), null)).toMatchObject({ ok: false, code: 'Forbidden' });
    expect(authorizeChange(admin, newAccount({ role: 'admin' }), null)).toMatchObject({ ok: false, field: 'linked_athlete_id' });
    expect(authorizeChange(owner, newAccount({}), null)).toEqual({ ok: true });
    expect(authorizeChange(admin, newAccount({ role: 'admin', linked_athlete_id: null }), null)).toEqual({ ok: true });
  });

  it('relinking, or making a linked account an athlete one, is refused to an admin; upkeep is not', () => {
    const OTHER_ATH = ATH.replace('a1', 'a2');
    expect(authorizeChange(admin, update({ linked_athlete_id: OTHER_ATH }), stored({}))).toMatchObject({ ok: false, field: 'linked_athlete_id' });
    expect(authorizeChange(admin, update({ linked_athlete_id: null }), stored({}))).toMatchObject({ ok: false, field: 'linked_athlete_id' });
    expect(authorizeChange(admin, update({ role: 'athlete' }), stored({ role: 'admin' }))).toMatchObject({ ok: false, field: 'role' });
    expect(authorizeChange(owner, update({ linked_athlete_id: OTHER_ATH }), stored({}))).toEqual({ ok: true });
    // The same link written again, a rename, deactivation: no new reach.
    expect(authorizeChange(admin, update({ linked_athlete_id: ATH }), stored({}))).toEqual({ ok: true });
    expect(authorizeChange(admin, update({ display_name: 'Y', active: false }), stored({}))).toEqual({ ok: true });
  });

  it('changing the role of an athlete account or of any linked account is an owner’s (issue 13 second re-review B1)', () => {
    expect(authorizeChange(admin, update({ role: 'admin' }), stored({}))).toMatchObject({
      ok: false,
      code: 'Forbidden',
      field: 'role',
      reason: expect.stringMatching(/cannot change the role of an athlete account.*Ask an owner/),
    });
    // An unlinked athlete account too (it becomes reachable once linked, by an owner).
    expect(authorizeChange(admin, update({ role: 'admin' }), stored({ linked_athlete_id: null }))).toMatchObject({ ok: false, field: 'role' });
    expect(authorizeChange(owner, update({ role: 'coach' }), stored({ role: 'admin' }))).toEqual({ ok: true });
    expect(authorizeChange(superAdmin, update({ role: 'coach' }), stored({ role: 'admin' }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/change the role of an account linked to an athlete's record/),
    });
    expect(authorizeChange(owner, update({ role: 'admin' }), stored({}))).toEqual({ ok: true });
    // The same role written again, and an unlinked staff account's role: no new reach.
    expect(authorizeChange(admin, update({ role: 'athlete', display_name: 'Z' }), stored({}))).toEqual({ ok: true });
    expect(authorizeChange(admin, update({ role: 'athlete' }), stored({}))).toEqual({ ok: true });
    expect(authorizeChange(superAdmin, update({ role: 'coach' }), stored({ role: 'admin', linked_athlete_id: null }))).toEqual({ ok: true });
  });

  it('clearsPinHash: becoming an athlete account, a link change or a role that gains a permission clears the PIN; other edits do not', () => {
    const row = { role: 'athlete', linked_athlete_id: ATH };
    expect(clearsPinHash(update({ linked_athlete_id: ATH.replace('a1', 'a2') }), row)).toBe(true);
    expect(clearsPinHash(update({ linked_athlete_id: null }), row)).toBe(true);
    expect(clearsPinHash(update({ role: 'athlete' }), { role: 'admin', linked_athlete_id: ATH })).toBe(true);
    expect(clearsPinHash(update({ linked_athlete_id: ATH, display_name: 'Q' }), row)).toBe(false);
    // a role that gains a permission clears it (issue 13 re-review B1); a role lowered, or written again, keeps it
    const staff = (role: string) => ({ role, linked_athlete_id: null });
    expect(clearsPinHash(update({ role: 'admin' }), row)).toBe(true);
    expect(clearsPinHash(update({ role: 'owner' }), staff('super_admin'))).toBe(true);
    expect(clearsPinHash(update({ role: 'doctor' }), staff('super_admin'))).toBe(true);
    expect(clearsPinHash(update({ role: 'owner' }), staff('coach'))).toBe(true);
    expect(clearsPinHash(update({ role: 'doctor' }), staff('physio'))).toBe(true);
    expect(clearsPinHash(update({ role: 'coach' }), staff('doctor'))).toBe(true); // gains rtp.signoff_coach, workload.write
    expect(clearsPinHash(update({ role: 'analyst' }), staff('doctor'))).toBe(false);
    expect(clearsPinHash(update({ role: 'admin' }), staff('owner'))).toBe(false);
    expect(clearsPinHash(update({ role: 'doctor' }), staff('doctor'))).toBe(false);
    expect(clearsPinHash({ ...update({ linked_athlete_id: null }), table: 'athlete' as const }, row)).toBe(false);
  });

  it('pinRefusal: a PIN only on an account whose permissions are within the actor’s own; an owner any non-owner (B2)', () => {
    const acct = (role: string, linked: string | null = null) => ({ role, linked_athlete_id: linked });
    expect(pinRefusal('super_admin', acct('doctor'))).toMatch(/cannot set the PIN of a doctor account.*Ask an owner/);
    // the article follows the role word (issue 13 review: "a owner", "a admin")
    expect(pinRefusal('admin', acct('analyst'))).toMatch(/cannot set the PIN of an analyst account/);
    expect(authorizeChange(admin, update({ display_name: 'Y' }), stored({ role: 'owner', linked_athlete_id: null }))).toMatchObject({
      ok: false,
      reason: 'Your role (admin) cannot change an owner account.',
    });
    expect(pinRefusal('super_admin', acct('owner'))).toMatch(/only by that owner/);
    expect(pinRefusal('owner', acct('owner'))).toMatch(/only by that owner/);
    expect(pinRefusal('super_admin', acct('super_admin'))).toBeNull();
    expect(pinRefusal('admin', acct('admin'))).toBeNull();
    expect(pinRefusal('admin', acct('admin', ATH))).toMatch(/an account linked to an athlete's record.*Ask an owner/);
    expect(pinRefusal('admin', acct('athlete', ATH), 'reset')).toMatch(/cannot reset the PIN of an athlete account/);
    expect(pinRefusal('doctor', acct('coach'))).toMatch(/rtp\.signoff_coach/);
    for (const r of ROLES.filter((x) => x !== 'owner')) expect(pinRefusal('owner', acct(r, r === 'athlete' ? ATH : null))).toBeNull();
  });
});
