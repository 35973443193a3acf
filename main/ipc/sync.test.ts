/**
 * The contract's sync.* operations on a real SQLite file (the two-org clinic fixture), through
 * `dispatch` as the transports call it: who may enrol a device, who may ask HQ for a one-time
 * sign-in code for which account, which rejected changesets a role sees, and a host without device
 * sync (or a device not enrolled) reading as "not enrolled". The engine itself against a real HQ is
 * covered by main/sync/, main/ipc/sync-hq.test.ts and e2e/sync*.spec.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SyncConflict } from '../../models/sync';
import { deviceSyncFactory } from '../app/device-sync';
import { AppSync } from '../app/sync-runner';
import { findUserById } from '../data/identity';
import { createClinicFixture, type ClinicFixture } from '../testing/clinic-fixture';
import { createHandlers, dispatch, type CallContext } from './handlers';
import { checkMayEnrol, checkMayIssueCode, discardRefusal, mayView } from './sync';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const actor = (id: string) => {
  const u = findUserById(f.db, id)!;
  return { id: u.id, orgId: u.org_id, email: u.email, displayName: u.display_name, role: u.role as never, linkedAthleteId: u.linked_athlete_id };
};

function conflict(table: string, after: Record<string, unknown>, current: Record<string, unknown> | null = null): SyncConflict {
  const id = '0190c6f1-0000-7000-8000-000000000001';
  return {
    changeset_id: '0190c6f1-0000-7000-8000-0000000000ff',
    verb: `${table}.update`,
    summary: 'x',
    author_id: '0190c6f1-0000-7000-8000-0000000000aa',
    author_name: 'Someone Else',
    reason: 'stale',
    message: 'changed at HQ',
    created_at: '2026-11-20T10:00:00.000Z',
    rejected_at: '2026-11-20T11:00:00.000Z',
    rejected_here: false,
    changes: [{ op: 'update', table, id, version: 1, before: {}, after }],
    current: current ? [{ table, id, expected_version: 1, actual_version: 2, row: current }] : [],
  };
}

describe('who may enrol this device', () => {
  it('is owners and admins (settings.manage), and an athlete for their own device only', () => {
    expect(() => checkMayEnrol(actor(f.a.users.owner), 'physio@elsewhere.test')).not.toThrow();
    expect(() => checkMayEnrol(actor(f.a.users.admin), 'admin@x.test')).not.toThrow();
    for (const role of ['physio', 'doctor', 'coach', 'analyst'] as const) {
      expect(() => checkMayEnrol(actor(f.a.users[role]), 'owner@x.test'), role).toThrow(/settings\.manage/);
    }
    const ath = actor(f.a.users.athlete);
    expect(() => checkMayEnrol(ath, ath.email.toUpperCase())).not.toThrow();
    expect(() => checkMayEnrol(ath, 'owner@x.test')).toThrow(/own email/);
    expect(() => checkMayEnrol(actor(f.a.users.athlete_unlinked), actor(f.a.users.athlete_unlinked).email)).toThrow(/settings\.manage/);
  });
});

describe('who may discard a conflict on a shared device (issue 12 review B2)', () => {
  it("is its author, or a user who could have made the change: never a coach dropping a doctor's clinical change, nor a physio a doctor's sign-off", () => {
    const doctor = actor(f.a.users.doctor);
    const notes = {
      ...conflict('injury', { clinician_notes: 'DOCTOR: sling' }, { athlete_id: f.a.athleteId, clinician_notes: 'theirs' }),
      verb: 'injuries.update',
      author_id: doctor.id,
      author_name: doctor.displayName,
    };
    expect(discardRefusal(doctor, notes)).toBeNull();
    expect(discardRefusal(actor(f.a.users.physio), notes)).toBeNull(); // injury.write: could have written it
    expect(discardRefusal(actor(f.a.users.coach), notes)).toMatch(new RegExp(`${doctor.displayName}.*coach`));
    const signoff = {
      ...conflict('rtp_entry', { doctor_signoff_by: doctor.id, doctor_signoff_at: '2026-11-20T10:00:00.000Z' }, { athlete_id: f.a.athleteId }),
      verb: 'rtp.signoffDoctor',
      author_id: doctor.id,
      author_name: doctor.displayName,
    };
    expect(discardRefusal(doctor, signoff)).toBeNull();
    expect(discardRefusal(actor(f.a.users.physio), signoff)).toMatch(/rtp\.signoff_doctor/);
  });
});

describe('which conflicts a user sees', () => {
  it("follows the role's table permissions, and an athlete's own rows", () => {
    const injury = conflict('injury', { clinician_notes: 'ours' }, { athlete_id: f.a.athleteId, clinician_notes: 'theirs' });
    expect(mayView(actor(f.a.users.physio), injury)).toBe(true);
    expect(mayView(actor(f.a.users.analyst), injury)).toBe(false); // no injury.read
    expect(mayView(actor(f.a.users.athlete), injury)).toBe(false);
    const ownWellness = conflict('wellness', { athlete_id: f.a.athleteId, sleep: 3 });
    const otherWellness = conflict('wellness', { athlete_id: f.a.otherAthleteId, sleep: 3 });
    expect(mayView(actor(f.a.users.athlete), ownWellness)).toBe(true); // writes wellness, sees their own rejected entry
    expect(mayView(actor(f.a.users.athlete), otherWellness)).toBe(false);
    expect(mayView(actor(f.a.users.physio), conflict('no_such_table', {}))).toBe(false);
  });

  it("shows a report conflict only to a role that may read the report's kind (issue 13 re-review: an analyst read a doctor's athlete summary here)", () => {
    const summary = { kind: 'athlete_summary', athlete_id: f.a.athleteId, markdown: '## Injuries - left knee, severe' };
    const inserted = { ...conflict('report', summary), changes: [{ op: 'insert' as const, table: 'report', id: 'r1', after: summary }] };
    // before: true (the analyst holds report.generate, the table's permission)
    expect(mayView(actor(f.a.users.analyst), inserted)).toBe(false);
    expect(mayView(actor(f.a.users.doctor), inserted)).toBe(true);
    // a stale Undo names no kind in the change: HQ's row, else this device's row, says it; unknown counts as unreadable
    const undo = conflict('report', { deleted_at: '2026-11-20T10:00:00.000Z' }, { ...summary, id: 'r1' });
    expect(mayView(actor(f.a.users.analyst), undo)).toBe(false);
    const bare = conflict('report', { deleted_at: '2026-11-20T10:00:00.000Z' });
    expect(mayView(actor(f.a.users.analyst), bare)).toBe(false);
    expect(mayView(actor(f.a.users.analyst), bare, () => ({ kind: 'squad_workload' }))).toBe(true);
    const squad = conflict('report', { kind: 'squad_workload', markdown: 'U19 loads' });
    expect(mayView(actor(f.a.users.analyst), squad)).toBe(true);
  });
});

describe('sync operations through dispatch', () => {
  it('reads as not enrolled without device sync, refuses enrolment by role first, and needs a signed-in user', async () => {
    const handlers = createHandlers({ db: f.db });
    const anon: CallContext = { session: { userId: null } };
    expect(await dispatch(handlers, anon, 'sync.status', {})).toMatchObject({ ok: false, error: { code: 'Unauthenticated' } });
    const physio: CallContext = { session: { userId: f.a.users.physio } };
    expect(await dispatch(handlers, physio, 'sync.status', {})).toEqual({
      ok: true,
      value: {
        enrolled: false,
        hq_url: null,
        device_id: null,
        online: false,
        syncing: false,
        pending_uploads: 0,
        conflicts: 0,
        last_synced_at: null,
        last_error: null,
      },
    });
    const enrol = { hqUrl: 'http://127.0.0.1:9', email: 'owner@x.test', pin: '1234', code: 'AAAA-BBBB-CCCC' };
    expect(await dispatch(handlers, physio, 'sync.enrol', enrol)).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    const owner: CallContext = { session: { userId: f.a.users.owner } };
    expect(await dispatch(handlers, owner, 'sync.enrol', enrol)).toMatchObject({ ok: false, error: { code: 'NotConfigured' } });
    expect(await dispatch(handlers, owner, 'sync.enrol', { ...enrol, pin: '' })).toMatchObject({ ok: false, error: { code: 'Validation' } });
    // Email + PIN alone no longer enrol a device: the sign-in code is required.
    const { code: _code, ...noCode } = enrol;
    expect(await dispatch(handlers, owner, 'sync.enrol', noCode)).toMatchObject({ ok: false, error: { code: 'Validation' } });
    expect(await dispatch(handlers, owner, 'sync.enrol', { ...enrol, code: '  ' })).toMatchObject({ ok: false, error: { code: 'Validation' } });
    expect(await dispatch(handlers, physio, 'sync.conflicts', {})).toEqual({ ok: true, value: { conflicts: [], hidden: 0 } });
    expect(await dispatch(handlers, physio, 'sync.now', {})).toMatchObject({ ok: false, error: { code: 'NotConfigured' } });
    expect(await dispatch(handlers, physio, 'sync.discard', { changesetId: 'not-an-id' })).toMatchObject({ ok: false, error: { code: 'Validation' } });
    expect(await dispatch(handlers, anon, 'sync.hqSignIn', {})).toMatchObject({ ok: false, error: { code: 'Unauthenticated' } });
    expect(await dispatch(handlers, owner, 'sync.hqSignIn', {})).toEqual({ ok: true, value: { signed_in: false, signed_in_at: null, enrolled_here: false } });
    expect(await dispatch(handlers, owner, 'sync.signInToHq', { pin: '1234', code: 'AAAA-BBBB-CCCC' })).toMatchObject({
      ok: false,
      error: { code: 'NotConfigured' },
    });
    expect(await dispatch(handlers, owner, 'sync.signInToHq', { pin: '', code: 'AAAA-BBBB-CCCC' })).toMatchObject({ ok: false, error: { code: 'Validation' } });
    expect(await dispatch(handlers, owner, 'sync.signInToHq', { pin: '1234' })).toMatchObject({ ok: false, error: { code: 'Validation' } });
  });
});

describe('who may ask HQ for a one-time sign-in code', () => {
  const target = (id: string) => findUserById(f.db, id);

  it('is anyone for their own account, and user.manage for another account of their club', () => {
    for (const role of ['owner', 'admin', 'physio', 'doctor', 'coach', 'analyst', 'athlete'] as const) {
      expect(() => checkMayIssueCode(actor(f.a.users[role]), target(f.a.users[role])), role).not.toThrow();
    }
    for (const role of ['physio', 'doctor', 'coach', 'analyst', 'athlete'] as const) {
      expect(() => checkMayIssueCode(actor(f.a.users[role]), target(f.a.users.owner)), role).toThrow(/your own account only/);
    }
    // user.manage: any account of the club here; HQ applies the PIN rule (an admin and a physio: Forbidden there).
    expect(() => checkMayIssueCode(actor(f.a.users.owner), target(f.a.users.physio))).not.toThrow();
    expect(() => checkMayIssueCode(actor(f.a.users.admin), target(f.a.users.physio))).not.toThrow();
    // Another club's account, or none: NotFound (never said to exist).
    expect(() => checkMayIssueCode(actor(f.a.users.owner), target(f.b.users.physio))).toThrow(expect.objectContaining({ code: 'NotFound' }));
    expect(() => checkMayIssueCode(actor(f.a.users.owner), null)).toThrow(expect.objectContaining({ code: 'NotFound' }));
    // Without user.manage, another club's account is Forbidden, as any other account is.
    expect(() => checkMayIssueCode(actor(f.a.users.physio), target(f.b.users.physio))).toThrow(expect.objectContaining({ code: 'Forbidden' }));
  });

  it('through dispatch: the rules first, then "not enrolled" (no device sync in the host, or a device not enrolled)', async () => {
    const other = '0190c6f1-0000-7000-8000-00000000abcd';
    for (const sync of [null, new AppSync(f.db, deviceSyncFactory(), { tickMs: 0, stopTimeoutMs: 1000 })]) {
      const handlers = createHandlers({ db: f.db, sync });
      const as = (id: string | null): CallContext => ({ session: { userId: id } });
      const code = (who: string | null, userId: string) => dispatch(handlers, as(who), 'sync.enrolmentCode', { userId });
      expect(await code(null, f.a.users.physio)).toMatchObject({ ok: false, error: { code: 'Unauthenticated' } });
      expect(await code(f.a.users.physio, 'not-an-id')).toMatchObject({ ok: false, error: { code: 'Validation' } });
      expect(await code(f.a.users.physio, f.a.users.doctor)).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
      expect(await code(f.a.users.owner, f.b.users.owner)).toMatchObject({ ok: false, error: { code: 'NotFound' } });
      expect(await code(f.a.users.owner, other)).toMatchObject({ ok: false, error: { code: 'NotFound' } });
      const notEnrolled = { ok: false, error: { code: 'NotConfigured', message: sync ? expect.stringMatching(/not enrolled/) : expect.any(String) } };
      expect(await code(f.a.users.physio, f.a.users.physio)).toMatchObject(notEnrolled);
      expect(await code(f.a.users.admin, f.a.users.physio)).toMatchObject(notEnrolled);
      await sync?.close();
    }
  });
});
