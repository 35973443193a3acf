/**
 * Service-layer guarantees on real SQLite files: tenant isolation for every verb, athlete
 * self-scope, the unlinked athlete, sign-off gating, optimistic concurrency, idempotency, Undo,
 * validation errors that name the field, deactivation taking effect at the next call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../models/errors';
import type { VerbName } from '../../models/verbs';
import type { Role } from '../../models/roles';
import { applyChangeset, getChangeset } from '../data/changesets';
import { openDb } from '../data/db';
import { getRow } from '../data/rows';
import type { ClinicFixture } from '../testing/clinic-fixture';
import { createClinicFixture, fixtureNow, errorOf } from '../testing/clinic-fixture';
import { EXPECTED, ROLE_ORDER, inputFor } from '../testing/verb-matrix';
import { VERBS, applyPlanned, callVerb, callVerbByName, planWrite, resolveActor, runRead } from './index';
import { readOrganisation, setUserPin, updateOrganisation } from './admin';
import { verifyPin } from './pin';
import { sqlite } from '../data/sqlite';

function count(f: ClinicFixture, table: string): number {
  // Test-only peek through the data layer's handle.
  return (sqlite(f.db).prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

let f: ClinicFixture;
beforeAll(() => {
  f = createClinicFixture();
});
afterAll(() => f.close());

describe('tenant isolation', () => {
  const ID_KEYS = ['id', 'athlete_id', 'injury_id', 'squad_id', 'folder_id', 'changeset_id', 'capture_session_id'];
  for (const verbName of Object.keys(EXPECTED)) {
    it(`${verbName}: another org's ids are NotFound, lists show none of its rows`, () => {
      const cells = EXPECTED[verbName]!.split(/\s+/);
      const role = ROLE_ORDER[cells.indexOf('Y')] as Role;
      const verb = VERBS.get(verbName)!;
      const ctx = f.as(f.a.users[role]);
      const foreign = inputFor(verbName, f.b, role) as Record<string, unknown>;
      const run = () => (verb.kind === 'read' ? runRead(ctx, verb, foreign) : planWrite(ctx, verb, foreign));
      if (ID_KEYS.some((k) => typeof foreign[k] === 'string') || Array.isArray(foreign.athlete_ids)) {
        expect(errorOf(run).code).toBe('NotFound');
      } else {
        const out = JSON.stringify(run());
        for (const id of [f.b.orgId, f.b.athleteId, f.b.otherAthleteId, f.b.injuryId, f.b.squadId, f.b.folderId, f.b.deviceId, f.b.users.physio])
          expect(out).not.toContain(id);
      }
    });
  }
  it('the org is never an input: an org_id argument is rejected as unknown', () => {
    const e = errorOf(() => f.call(f.a.users.physio, 'athletes.list', { org_id: f.b.orgId }));
    expect(e.code).toBe('Validation');
  });
});

describe('callVerb is typed per verb', () => {
  // The @ts-expect-error lines are checked by `npm run typecheck` (tsconfig.main.json includes the
  // tests): should callVerb accept them, the directive itself becomes the compile error.
  it("a literal name takes and returns that verb's types", () => {
    const ctx = f.as(f.a.users.physio);
    const athlete = callVerb(ctx, 'athletes.get', { id: f.a.athleteId });
    expect(athlete.id).toBe(f.a.athleteId);
    // @ts-expect-error: athletes.get's input has no squad_id (another verb's input is refused)
    expect(() => callVerb(ctx, 'athletes.get', { squad_id: f.a.squadId })).toThrow(AppError);
  });
  it('a name typed only as VerbName takes no input: it goes through callVerbByName, which validates against that verb', () => {
    const ctx = f.as(f.a.users.physio);
    const name: VerbName = 'athletes.get' as VerbName;
    // @ts-expect-error: with a union of names, any verb's input would type-check; callVerb refuses it
    expect(() => callVerb(ctx, name, { squad_id: f.a.squadId })).toThrow(AppError);
    expect(errorOf(() => callVerbByName(ctx, VERBS, name, { squad_id: f.a.squadId })).code).toBe('Validation');
  });
});

describe('athlete self-scope', () => {
  it('lists only the linked athlete', () => {
    const r = f.call(f.a.users.athlete, 'athletes.list', {});
    expect(r.total).toBe(1);
    expect(r.athletes[0].id).toBe(f.a.athleteId);
  });
  it('another athlete is NotFound (get, wellness, vitals, devices)', () => {
    const u = f.a.users.athlete;
    expect(errorOf(() => f.call(u, 'athletes.get', { id: f.a.otherAthleteId })).code).toBe('NotFound');
    expect(
      errorOf(() => f.call(u, 'wellness.submit', { athlete_id: f.a.otherAthleteId, date: '2026-11-19', sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 }))
        .code,
    ).toBe('NotFound');
    expect(errorOf(() => f.call(u, 'vitals.list', { athlete_id: f.a.otherAthleteId })).code).toBe('NotFound');
    expect(errorOf(() => f.call(u, 'devices.rotateKey', { id: f.a.deviceId })).code).toBe('NotFound');
  });
  it('wellness defaults to the linked athlete', () => {
    const r = f.call(f.a.users.athlete, 'wellness.submit', { date: '2026-11-18', sleep: 5, soreness: 1, stress: 1, mood: 5, fatigue: 1 });
    expect(r.changeset.changes[0].after.athlete_id).toBe(f.a.athleteId);
  });
  it('an unlinked athlete account is refused, never defaulted', () => {
    const u = f.a.users.athlete_unlinked;
    for (const [verb, input] of [
      ['athletes.list', {}],
      ['athletes.get', { id: f.a.athleteId }],
      ['wellness.submit', { date: '2026-11-18', sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 }],
      ['vitals.list', {}],
      ['devices.list', {}],
    ] as const) {
      const e = errorOf(() => f.call(u, verb, input));
      expect(e.code, verb).toBe('Forbidden');
      expect(e.message).toMatch(/not linked/);
    }
  });
});

describe('RTP sign-off gating', () => {
  it('a physio cannot create an entry with a doctor sign-off', () => {
    const e = errorOf(() => f.call(f.a.users.physio, 'rtp.create', { injury_id: f.a.injuryId, stage: 'return_to_play', doctor_signoff: true }));
    expect(e.code).toBe('Forbidden');
    expect(e.message).toMatch(/rtp\.signoff_doctor/);
  });
  it('a physio cannot add a doctor sign-off on update', () => {
    const e = errorOf(() => f.call(f.a.users.physio, 'rtp.update', { id: f.a.rtpId, doctor_signoff: true }));
    expect(e.code).toBe('Forbidden');
  });
  it('a doctor can, in their own name; a coach signs only the coach field', () => {
    const r = f.call(f.a.users.doctor, 'rtp.update', { id: f.a.rtpId, doctor_signoff: true });
    expect(r.changeset.changes[0].after.doctor_signoff_by).toBe(f.a.users.doctor);
    const c = f.call(f.a.users.coach, 'rtp.signoffCoach', { id: f.a.rtpId });
    expect(Object.keys(c.changeset.changes[0].after).sort()).toEqual(['coach_signoff_at', 'coach_signoff_by']);
    expect(errorOf(() => f.call(f.a.users.coach, 'rtp.update', { id: f.a.rtpId, stage: 'return_to_play' })).code).toBe('Forbidden');
  });
  it('a forged changeset (physio writing doctor_signoff_by) is refused by the rules at apply', () => {
    const row = getRow<{ id: string; version: number }>(f.db, 'rtp_entry', f.a.orgId, f.a.rtpId)!;
    const physio = resolveActor(f.as(f.a.users.physio));
    const e = errorOf(() =>
      applyChangeset(f.db, {
        actor: physio,
        planned: {
          verb: 'forged',
          summary: 'forged',
          changes: [{ op: 'update', table: 'rtp_entry', id: row.id, version: row.version, before: {}, after: { doctor_signoff_by: f.a.users.physio } }],
        },
      }),
    );
    expect(e.code).toBe('Forbidden');
  });
  it("a sign-off cannot be given in someone else's name", () => {
    const row = getRow<{ id: string; version: number }>(f.db, 'rtp_entry', f.a.orgId, f.a.rtpId)!;
    const doctor = resolveActor(f.as(f.a.users.doctor));
    const e = errorOf(() =>
      applyChangeset(f.db, {
        actor: doctor,
        planned: {
          verb: 'x',
          summary: 'x',
          changes: [{ op: 'update', table: 'rtp_entry', id: row.id, version: row.version, before: {}, after: { physio_signoff_by: f.a.users.physio } }],
        },
      }),
    );
    expect(e.code).toBe('Forbidden');
  });
});

describe('no hard delete', () => {
  it('a delete change of a clinical record is refused and nothing is removed', () => {
    const injury = getRow<{ id: string; version: number }>(f.db, 'injury', f.a.orgId, f.a.injuryId)!;
    const doctor = resolveActor(f.as(f.a.users.doctor));
    const before = count(f, 'injury');
    const e = errorOf(() =>
      applyChangeset(f.db, {
        actor: doctor,
        planned: { verb: 'x', summary: 'x', changes: [{ op: 'delete', table: 'injury', id: injury.id, version: injury.version }] },
      }),
    );
    expect(e.code).toBe('Forbidden');
    expect(e.message).toMatch(/never deleted/);
    expect(count(f, 'injury')).toBe(before);
  });
  it('deactivating an athlete keeps the row and every record', () => {
    const r = f.call(f.a.users.physio, 'athletes.deactivate', { id: f.a.otherAthleteId });
    expect(r.changeset.changes[0].after).toEqual({ status: 'deactivated' });
    expect(f.call(f.a.users.physio, 'athletes.get', { id: f.a.otherAthleteId }).status).toBe('deactivated');
    expect(f.call(f.a.users.physio, 'athletes.list', {}).athletes.map((a: { id: string }) => a.id)).not.toContain(f.a.otherAthleteId);
  });
});

describe('optimistic concurrency', () => {
  it('a stale version is Conflict and writes nothing', () => {
    const ctx = f.as(f.a.users.physio);
    const verb = VERBS.get('athletes.update')! as import('./verb').WriteVerb;
    const stale = planWrite(ctx, verb, { id: f.a.athleteId, notes: 'first plan' });
    f.call(f.a.users.physio, 'athletes.update', { id: f.a.athleteId, notes: 'someone else edited' });
    const counts = ['changeset', 'activity', 'outbox'].map((t) => count(f, t));
    const e = errorOf(() => applyPlanned(ctx, stale.planned));
    expect(e.code).toBe('Conflict');
    expect(e.conflicts?.[0]).toMatchObject({ table: 'athlete', id: f.a.athleteId });
    expect(f.call(f.a.users.physio, 'athletes.get', { id: f.a.athleteId }).notes).toBe('someone else edited');
    expect(['changeset', 'activity', 'outbox'].map((t) => count(f, t))).toEqual(counts);
  });
  it('two concurrent applies on one row from two connections: one wins, one Conflict', () => {
    const db2 = openDb(f.path);
    try {
      const verb = VERBS.get('rates.updateItem')! as import('./verb').WriteVerb;
      const p1 = planWrite(f.as(f.a.users.owner), verb, { id: f.a.itemId, price_cents: 10_000 });
      const p2 = planWrite({ db: db2, userId: f.a.users.physio, now: fixtureNow }, verb, { id: f.a.itemId, price_cents: 11_000 });
      const results = [
        () => applyPlanned(f.as(f.a.users.owner), p1.planned),
        () => applyPlanned({ db: db2, userId: f.a.users.physio, now: fixtureNow }, p2.planned),
      ].map((fn) => {
        try {
          return fn();
        } catch (e) {
          return e as AppError;
        }
      });
      expect(results.filter((r) => r instanceof AppError && r.code === 'Conflict')).toHaveLength(1);
      expect(f.call(f.a.users.owner, 'rates.listItems', {}).items.find((i: { id: string }) => i.id === f.a.itemId).price_cents).toBe(10_000);
    } finally {
      db2.close();
    }
  });
});

describe('idempotency', () => {
  it('a retry with the same key returns the first result and writes once', () => {
    const before = count(f, 'session_load');
    const input = { athlete_id: f.a.athleteId, date: '2026-11-10', duration_min: 30, rpe: 4 };
    const first = f.call(f.a.users.physio, 'workload.logSessionLoads', input, { idempotencyKey: 'retry-key-1' });
    const again = f.call(f.a.users.physio, 'workload.logSessionLoads', input, { idempotencyKey: 'retry-key-1' });
    expect(again.changeset.id).toBe(first.changeset.id);
    expect(again.changeset.replayed).toBe(true);
    expect(count(f, 'session_load')).toBe(before + 1);
  });
  it('the same key for a different verb is IdempotencyKeyReused', () => {
    const e = errorOf(() => f.call(f.a.users.physio, 'squads.create', { name: 'X', season: '2026' }, { idempotencyKey: 'retry-key-1' }));
    expect(e.code).toBe('IdempotencyKeyReused');
  });
});

describe('Undo', () => {
  it('undoes an update, and a second Undo is Conflict', () => {
    const r = f.call(f.a.users.physio, 'screenings.update', { id: f.a.screeningId, value: 9.5 });
    const u = f.call(f.a.users.physio, 'changesets.undo', { changeset_id: r.changeset.id });
    expect(f.call(f.a.users.physio, 'screenings.get', { id: f.a.screeningId }).value).toBe(11.5);
    expect(getChangeset(f.db, f.a.orgId, r.changeset.id)!.undone_by).toBe(u.changeset.id);
    expect(errorOf(() => f.call(f.a.users.physio, 'changesets.undo', { changeset_id: r.changeset.id })).code).toBe('Conflict');
  });
  it('undoes an insert by soft-deleting it (the clinical row is kept)', () => {
    const r = f.call(f.a.users.physio, 'injuries.create', {
      athlete_id: f.a.athleteId,
      body_part: 'knee',
      side: 'left',
      onset_date: '2026-11-01',
      severity: 'mild',
    });
    const id = r.changeset.changes[0].id;
    f.call(f.a.users.physio, 'changesets.undo', { changeset_id: r.changeset.id });
    expect(errorOf(() => f.call(f.a.users.physio, 'injuries.get', { id })).code).toBe('NotFound');
    expect(getRow(f.db, 'injury', f.a.orgId, id, { includeDeleted: true })).toMatchObject({ id, body_part: 'knee' });
  });
  it('Undo after a later edit is Conflict and writes nothing', () => {
    const r = f.call(f.a.users.physio, 'screenings.update', { id: f.a.screeningId, value: 13 });
    f.call(f.a.users.doctor, 'screenings.update', { id: f.a.screeningId, notes: 'rechecked' });
    const e = errorOf(() => f.call(f.a.users.physio, 'changesets.undo', { changeset_id: r.changeset.id }));
    expect(e.code).toBe('Conflict');
    expect(f.call(f.a.users.physio, 'screenings.get', { id: f.a.screeningId })).toMatchObject({ value: 13, notes: 'rechecked' });
  });
  it('writes one activity row per changeset, naming the person', () => {
    const r = f.call(f.a.users.physio, 'vitals.record', { athlete_id: f.a.athleteId, date: '2026-11-15', resting_hr_bpm: 55, hrv_rmssd_ms: 70 });
    const rows = f.call(f.a.users.owner, 'activity.list', {}).activity.filter((a: { changeset_id: string }) => a.changeset_id === r.changeset.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_name: 'Northbridge physio', via_assistant: false, record_table: 'vitals' });
  });
});

describe('validation', () => {
  it('names the field', () => {
    const e = errorOf(() =>
      f.call(f.a.users.physio, 'wellness.submit', { athlete_id: f.a.athleteId, date: '2026-11-19', sleep: 9, soreness: 3, stress: 3, mood: 3, fatigue: 3 }),
    );
    expect(e.code).toBe('Validation');
    expect(e.issues?.map((i) => i.path)).toContain('sleep');
  });
  it('refuses clinical dates in the future', () => {
    const e = errorOf(() =>
      f.call(f.a.users.physio, 'injuries.create', { athlete_id: f.a.athleteId, body_part: 'knee', side: 'left', onset_date: '2027-01-01', severity: 'mild' }),
    );
    expect(e.code).toBe('Validation');
    expect(e.issues?.[0]?.path).toBe('onset_date');
  });
  it('refuses clinically impossible dates: far in the past, before the date of birth, beyond today + 1 day; allows today + 1 (time zones)', () => {
    const injury = (onset_date: string) => () =>
      f.call(f.a.users.physio, 'injuries.create', { athlete_id: f.a.athleteId, body_part: 'knee', side: 'left', onset_date, severity: 'mild' });
    const far = errorOf(injury('1900-01-01'));
    expect(far).toMatchObject({ code: 'Validation', issues: [{ path: 'onset_date', message: 'date before 1950-01-01' }] });
    const dob = f.call(f.a.users.physio, 'athletes.get', { id: f.a.athleteId }).date_of_birth as string;
    expect(errorOf(injury('1990-01-01' < dob ? '1990-01-01' : dob.replace(/^\d{4}/, (y) => String(Number(y) - 1))))).toMatchObject({
      code: 'Validation',
      issues: [{ path: 'onset_date', message: 'date before the date of birth' }],
    });
    // FIXTURE_TODAY is 2026-11-20 (UTC): the 21st is still today somewhere east of UTC, the 22nd is not.
    const wellness = (date: string) => () =>
      f.call(f.a.users.physio, 'wellness.submit', { athlete_id: f.a.athleteId, date, sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 });
    expect(wellness('2026-11-21')().changeset.replayed).toBe(false);
    expect(errorOf(wellness('2026-11-22'))).toMatchObject({ code: 'Validation', issues: [{ path: 'date' }] });
    expect(
      errorOf(() => f.call(f.a.users.physio, 'reports.generate', { kind: 'athlete_summary', athlete_id: f.a.athleteId, as_of: '2026-12-25' })),
    ).toMatchObject({ code: 'Validation', issues: [{ path: 'as_of' }] });
    expect(
      errorOf(() => f.call(f.a.users.physio, 'workload.logSessionLoads', { athlete_id: f.a.athleteId, date: '1900-01-01', duration_min: 30, rpe: 4 })),
    ).toMatchObject({ code: 'Validation', issues: [{ path: 'date' }] });
  });
  it('refuses new records for a deactivated athlete with a clear message (injury, screening, wellness, vitals, load, RTP)', () => {
    // A new athlete of their own (the fixture is shared by the file's tests).
    const gone = f.call(f.a.users.physio, 'athletes.create', { name: 'Left The Club', date_of_birth: '2000-05-05', sex: 'male' }).changeset.changes[0]
      .id as string;
    const injury = f.call(f.a.users.physio, 'injuries.create', {
      athlete_id: gone,
      body_part: 'ankle',
      side: 'right',
      onset_date: '2026-11-10',
      severity: 'mild',
    }).changeset.changes[0].id as string;
    f.call(f.a.users.physio, 'athletes.deactivate', { id: gone, reason: 'left the club' });
    const attempts: [string, Record<string, unknown>][] = [
      ['injuries.create', { athlete_id: gone, body_part: 'knee', side: 'left', onset_date: '2026-11-19', severity: 'mild' }],
      ['screenings.create', { athlete_id: gone, test: 'single_leg_hop', side: 'left', value: 150, unit: 'cm', date: '2026-11-19' }],
      ['wellness.submit', { athlete_id: gone, date: '2026-11-19', sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 }],
      ['vitals.record', { athlete_id: gone, date: '2026-11-19', resting_hr_bpm: 50, hrv_rmssd_ms: 70 }],
      ['workload.logSessionLoads', { athlete_id: gone, date: '2026-11-19', duration_min: 30, rpe: 4 }],
      ['rtp.create', { injury_id: injury, stage: 'rehabilitation' }],
    ];
    for (const [verb, input] of attempts) {
      const e = errorOf(() => f.call(f.a.users.physio, verb, input));
      expect({ verb, code: e.code, message: e.message }).toMatchObject({ verb, code: 'Validation', message: expect.stringMatching(/is deactivated/) });
    }
  });
  it('refuses control and text-direction characters in names and codes (athlete, squad, fee item, user)', () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      [f.a.users.physio, 'athletes.create', { name: 'Ana\u202Eevil', date_of_birth: '2000-01-01', sex: 'female' }, 'name'],
      [f.a.users.physio, 'athletes.update', { id: f.a.athleteId, name: 'Tab\tName' }, 'name'],
      [f.a.users.owner, 'squads.create', { name: 'U21\u0007', season: '2026/27' }, 'name'],
      [f.a.users.owner, 'rates.createItem', { folder_id: f.a.folderId, code: 'B\u2066 01', name: 'Bell', item_type: 'assessment', price_cents: 9000 }, 'code'],
    ];
    for (const [user, verb, input, path] of cases) {
      const e = errorOf(() => f.call(user, verb, input));
      expect({ verb, code: e.code, issues: e.issues }).toMatchObject({
        verb,
        code: 'Validation',
        issues: [{ path, message: expect.stringMatching(/plain text/) }],
      });
    }
    expect(f.call(f.a.users.physio, 'athletes.create', { name: 'Zoë Ñúñez-O’Brien', date_of_birth: '2000-01-01', sex: 'female' }).changeset.replayed).toBe(
      false,
    );
  });
  it('refuses a duplicate squad name and fee code in the organisation, ignoring case (create and rename)', () => {
    const squads = f.call(f.a.users.owner, 'squads.list', {}) as { id: string; name: string }[];
    const first = squads.find((q) => q.id === f.a.squadId)!;
    expect(errorOf(() => f.call(f.a.users.owner, 'squads.create', { name: ` ${first.name.toUpperCase()} `, season: '2026/27' }))).toMatchObject({
      code: 'Conflict',
      message: expect.stringContaining(`A squad named "${first.name}" already exists`),
    });
    const other = f.call(f.a.users.owner, 'squads.create', { name: 'Dup Check Squad', season: '2026/27' }).changeset.changes[0].id as string;
    expect(errorOf(() => f.call(f.a.users.owner, 'squads.update', { id: other, name: first.name.toLowerCase() })).code).toBe('Conflict');
    // Its own name in another case is a rename, not a duplicate.
    expect(f.call(f.a.users.owner, 'squads.update', { id: other, name: 'DUP CHECK SQUAD' }).changeset.replayed).toBe(false);
    // Another org may use the same name.
    expect(f.call(f.b.users.owner, 'squads.create', { name: 'dup check squad', season: '2026/27' }).changeset.replayed).toBe(false);

    const folder = f.call(f.a.users.owner, 'rates.createFolder', { name: 'Dup Check Folder' }).changeset.changes[0].id as string;
    expect(
      errorOf(() => f.call(f.a.users.owner, 'rates.createItem', { folder_id: folder, code: 'a01', name: 'Again', item_type: 'assessment', price_cents: 9000 })),
    ).toMatchObject({ code: 'Conflict', message: expect.stringMatching(/already has an item with code A01/) });
    const item = f.call(f.a.users.owner, 'rates.createItem', { folder_id: folder, code: 'Z99', name: 'New', item_type: 'assessment', price_cents: 9000 })
      .changeset.changes[0].id as string;
    expect(errorOf(() => f.call(f.a.users.owner, 'rates.updateItem', { id: item, code: 'A01' })).code).toBe('Conflict');
  });
  it('checks a screening against its test: the declared unit, and no negative distance or force (create and correct)', () => {
    const base = { athlete_id: f.a.athleteId, test: 'single_leg_hop', side: 'left', value: 150, unit: 'cm', date: '2026-11-19' };
    expect(errorOf(() => f.call(f.a.users.physio, 'screenings.create', { ...base, unit: 'm' }))).toMatchObject({
      code: 'Validation',
      message: expect.stringMatching(/Single leg hop is measured in cm, not m/),
      issues: [{ path: 'unit' }],
    });
    expect(errorOf(() => f.call(f.a.users.physio, 'screenings.create', { ...base, value: -4 }))).toMatchObject({
      code: 'Validation',
      issues: [{ path: 'value' }],
    });
    const id = f.call(f.a.users.physio, 'screenings.create', base).changeset.changes[0].id as string;
    expect(errorOf(() => f.call(f.a.users.physio, 'screenings.update', { id, value: -1 })).issues?.[0]?.path).toBe('value');
    expect(errorOf(() => f.call(f.a.users.physio, 'screenings.update', { id, test: 'nordic_hamstring' })).issues?.[0]?.path).toBe('unit');
    // A test outside the club's list keeps the unit given.
    expect(f.call(f.a.users.physio, 'screenings.create', { ...base, test: 'y_balance_anterior', unit: '%' }).changeset.replayed).toBe(false);
  });
  it('refuses a price outside $1–$10,000 (bounds), naming the field', () => {
    const e = errorOf(() => f.call(f.a.users.owner, 'rates.updateItem', { id: f.a.itemId, price_cents: 5 }));
    expect(e.code).toBe('Validation');
    expect(e.issues?.[0]?.path).toBe('price_cents');
  });
  it('a second fee folder with the same name (ignoring case) is a Conflict, nothing written', () => {
    f.call(f.a.users.owner, 'rates.createFolder', { name: 'Insurer X' });
    const e = errorOf(() => f.call(f.a.users.physio, 'rates.createFolder', { name: 'insurer x' }));
    expect(e.code).toBe('Conflict');
    expect(e.message).toMatch(/already a fee folder named Insurer X/);
  });
  it('a bulk change that would push a price out of bounds is refused by the rules, nothing written', () => {
    f.call(f.a.users.owner, 'rates.createItem', { folder_id: f.a.folderId, code: 'CHEAP', name: 'Cheap', item_type: 'report', price_cents: 150 });
    const e = errorOf(() => f.call(f.a.users.owner, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: -50 }));
    expect(e.code).toBe('Validation');
    expect(e.message).toMatch(/outside \$1–\$10,000: CHEAP/);
    // The field's own message (what the form shows next to the percentage) names the item too.
    expect(e.issues).toEqual([{ path: 'pct', message: expect.stringMatching(/outside \$1–\$10,000: CHEAP \(\$1\.50 → \$0\.75\)/) }]);
  });
  it('an impossible calendar date is Validation', () => {
    const e = errorOf(() =>
      f.call(f.a.users.physio, 'injuries.create', { athlete_id: f.a.athleteId, body_part: 'knee', side: 'left', onset_date: '2026-02-30', severity: 'mild' }),
    );
    expect(e.code).toBe('Validation');
    expect(e.issues?.[0]?.path).toBe('onset_date');
  });
  it('an unknown field is named as its own path', () => {
    const e = errorOf(() => f.call(f.a.users.physio, 'athletes.update', { id: f.a.athleteId, version: 9 }));
    expect(e.issues?.map((i) => i.path)).toEqual(['version']);
  });
  it('a missing athlete_id for a staff wellness submission is Validation naming it', () => {
    const e = errorOf(() => f.call(f.a.users.physio, 'wellness.submit', { date: '2026-11-18', sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 }));
    expect(e.code).toBe('Validation');
    expect(e.issues?.[0]?.path).toBe('athlete_id');
  });
  it('a duplicate fee code in one folder is Conflict', () => {
    expect(
      errorOf(() =>
        f.call(f.a.users.owner, 'rates.createItem', { folder_id: f.a.folderId, code: 'A01', name: 'Again', item_type: 'assessment', price_cents: 9000 }),
      ).code,
    ).toBe('Conflict');
  });
});

describe('idempotency keys are per request and per user', () => {
  it('the same key with different input is IdempotencyKeyReused, nothing written', () => {
    const before = count(f, 'session_load');
    f.call(
      f.a.users.physio,
      'workload.logSessionLoads',
      { athlete_id: f.a.athleteId, date: '2026-11-09', duration_min: 30, rpe: 4 },
      { idempotencyKey: 'k-diff' },
    );
    const e = errorOf(() =>
      f.call(
        f.a.users.physio,
        'workload.logSessionLoads',
        { athlete_id: f.a.athleteId, date: '2026-11-08', duration_min: 90, rpe: 9 },
        { idempotencyKey: 'k-diff' },
      ),
    );
    expect(e.code).toBe('IdempotencyKeyReused');
    expect(count(f, 'session_load')).toBe(before + 1);
  });
  it("keys are per user: another user's same key is their own new change, never the first user's result", () => {
    const first = f.call(
      f.a.users.physio,
      'workload.logSessionLoads',
      { athlete_id: f.a.athleteId, date: '2026-11-07', duration_min: 30, rpe: 4 },
      { idempotencyKey: 'k-user' },
    );
    const before = count(f, 'session_load');
    // The same athlete and day: the coach's is a second session that day, said so.
    const theirs = f.call(
      f.a.users.coach,
      'workload.logSessionLoads',
      { athlete_id: f.a.athleteId, date: '2026-11-07', duration_min: 30, rpe: 4, second_session_same_day: true },
      { idempotencyKey: 'k-user' },
    );
    expect(theirs.changeset.replayed).toBe(false);
    expect(theirs.changeset.id).not.toBe(first.changeset.id);
    expect(count(f, 'session_load')).toBe(before + 1);
  });
});

describe('signed RTP entries', () => {
  it("a signed entry's stage is locked; a new entry is the way forward", () => {
    const injury = f.call(f.a.users.physio, 'injuries.create', {
      athlete_id: f.a.athleteId,
      body_part: 'calf',
      side: 'right',
      onset_date: '2026-11-02',
      severity: 'moderate',
    }).changeset.changes[0].id;
    const rtp = f.call(f.a.users.doctor, 'rtp.create', { injury_id: injury, stage: 'protection', doctor_signoff: true }).changeset.changes[0].id;
    const e = errorOf(() => f.call(f.a.users.physio, 'rtp.update', { id: rtp, stage: 'return_to_play' }));
    expect(e.code).toBe('Forbidden');
    expect(e.message).toMatch(/signed off \(doctor\); its RTP stage cannot change/);
    const criteria = errorOf(() => f.call(f.a.users.physio, 'rtp.update', { id: rtp, criteria_met: 'Pain-free walking' }));
    expect(criteria.message).toMatch(/its criteria met cannot change/);
    expect(criteria.message).not.toContain('criteria_met');
    expect(f.call(f.a.users.physio, 'rtp.create', { injury_id: injury, stage: 'rehabilitation' }).changeset.changes).toHaveLength(1);
  });
  it('a physio cannot Undo (soft-delete) an entry carrying a doctor sign-off', () => {
    const injury = f.call(f.a.users.physio, 'injuries.create', {
      athlete_id: f.a.athleteId,
      body_part: 'shin',
      side: 'left',
      onset_date: '2026-11-03',
      severity: 'mild',
    }).changeset.changes[0].id;
    const created = f.call(f.a.users.doctor, 'rtp.create', { injury_id: injury, stage: 'protection', doctor_signoff: true });
    const e = errorOf(() => f.call(f.a.users.physio, 'changesets.undo', { changeset_id: created.changeset.id }));
    expect(e.code).toBe('Forbidden');
    expect(f.call(f.a.users.physio, 'rtp.get', { id: created.changeset.changes[0].id }).doctor_signoff_by).toBe(f.a.users.doctor);
  });
});

describe('account management', () => {
  it('an admin cannot deactivate the owner, demote super_admin, or grant clinical roles', () => {
    expect(errorOf(() => f.call(f.a.users.admin, 'users.update', { id: f.a.users.owner, active: false })).code).toBe('Forbidden');
    expect(errorOf(() => f.call(f.a.users.admin, 'users.update', { id: f.a.users.super_admin, role: 'coach' })).code).toBe('Forbidden');
    expect(errorOf(() => f.call(f.a.users.admin, 'users.create', { email: 'doc2@example.test', display_name: 'Doc', role: 'doctor' })).code).toBe('Forbidden');
    expect(f.call(f.a.users.owner, 'users.create', { email: 'doc3@example.test', display_name: 'Doc', role: 'doctor' }).changeset.changes).toHaveLength(1);
  });
  it('nobody changes their own role', () => {
    expect(errorOf(() => f.call(f.a.users.owner, 'users.update', { id: f.a.users.owner, role: 'admin' })).code).toBe('Forbidden');
  });
  it('an athlete account must be linked when created', () => {
    expect(errorOf(() => f.call(f.a.users.owner, 'users.create', { email: 'ath9@example.test', display_name: 'A', role: 'athlete' })).code).toBe('Validation');
  });
  it('an email taken in another org is refused without naming that org', () => {
    const e = errorOf(() => f.call(f.a.users.owner, 'users.create', { email: 'physio@eastvale.test', display_name: 'P', role: 'physio' }));
    expect(e.code).toBe('Conflict');
    expect(e.message).not.toMatch(/eastvale|exists/i);
  });
});

describe('clinical content is not readable through side doors', () => {
  it('changesets.get refuses a diff of records the role cannot read', () => {
    const r = f.call(f.a.users.physio, 'injuries.update', { id: f.a.injuryId, clinician_notes: 'private detail' });
    expect(errorOf(() => f.call(f.a.users.analyst, 'changesets.get', { id: r.changeset.id })).code).toBe('Forbidden');
    expect(errorOf(() => f.call(f.a.users.admin, 'changesets.get', { id: r.changeset.id })).code).toBe('Forbidden');
    expect(f.call(f.a.users.doctor, 'changesets.get', { id: r.changeset.id }).id).toBe(r.changeset.id);
  });
  it('activity rows of unreadable tables are left out', () => {
    const tables = f.call(f.a.users.analyst, 'activity.list', { limit: 1000 }).activity.map((a: { record_table: string }) => a.record_table);
    expect(tables).not.toContain('injury');
    expect(tables).not.toContain('rtp_entry');
    expect(f.call(f.a.users.physio, 'activity.list', { limit: 1000 }).activity.map((a: { record_table: string }) => a.record_table)).toContain('injury');
  });
});

describe('references stay inside the org', () => {
  it("a forged changeset pointing at another org's athlete is NotFound, nothing written", () => {
    const physio = resolveActor(f.as(f.a.users.physio));
    const before = count(f, 'injury');
    const e = errorOf(() =>
      applyChangeset(f.db, {
        actor: physio,
        planned: {
          verb: 'forged',
          summary: 'forged',
          changes: [
            {
              op: 'insert',
              table: 'injury',
              id: '01900000-0000-7000-8000-00000000abcd',
              after: {
                athlete_id: f.b.athleteId,
                body_part: 'knee',
                side: 'left',
                mechanism: 'unknown',
                onset_date: '2026-11-01',
                severity: 'mild',
                status: 'open',
                clinician_notes: '',
              },
            },
          ],
        },
      }),
    );
    expect(e.code).toBe('NotFound');
    expect(count(f, 'injury')).toBe(before);
  });
  it("a capture session naming a rig that isn't the org's is NotFound", () => {
    const e = errorOf(() =>
      f.call(f.a.users.physio, 'capture.recordSession', {
        athlete_id: f.a.athleteId,
        rig_id: '01900000-0000-7000-8000-00000000beef',
        recorded_at: '2026-11-19T09:00:00.000Z',
        fps: 30,
        frame_count: 10,
        camera_count: 2,
        source: 'video',
        metrics: [],
      }),
    );
    expect(e.code).toBe('NotFound');
  });
});

describe('who is calling', () => {
  it('a deactivated user is refused at the next call', () => {
    f.call(f.a.users.owner, 'users.update', { id: f.a.users.analyst, active: false });
    expect(errorOf(() => f.call(f.a.users.analyst, 'athletes.list', {})).code).toBe('Forbidden');
    f.call(f.a.users.owner, 'users.update', { id: f.a.users.analyst, active: true });
    expect(f.call(f.a.users.analyst, 'athletes.list', {}).total).toBeGreaterThan(0);
  });
  it('an assistant call needs an unexpired capability for this user with the scope', () => {
    const ctx = (cap: Parameters<typeof callVerb>[0]['via']) => ({ ...f.as(f.a.users.physio), via: cap });
    const base = { id: 'c1', userId: f.a.users.physio, orgId: f.a.orgId, expiresAt: fixtureNow().getTime() + 300_000 };
    expect(callVerb(ctx({ runId: 'r', capability: { ...base, scopes: ['athlete:read'] } }), 'athletes.list', {})).toBeTruthy();
    expect(errorOf(() => callVerb(ctx({ runId: 'r', capability: { ...base, scopes: ['rates:read'] } }), 'athletes.list', {})).code).toBe('Forbidden');
    expect(
      errorOf(() =>
        callVerb(ctx({ runId: 'r', capability: { ...base, scopes: ['athlete:read'], expiresAt: fixtureNow().getTime() - 1 } }), 'athletes.list', {}),
      ).code,
    ).toBe('Forbidden');
    expect(
      errorOf(() => callVerb(ctx({ runId: 'r', capability: { ...base, userId: f.a.users.doctor, scopes: ['athlete:read'] } }), 'athletes.list', {})).code,
    ).toBe('Forbidden');
    expect(errorOf(() => callVerb(ctx({ runId: 'r' }), 'athletes.list', {})).code).toBe('Forbidden');
  });
  it('an assistant write reads "Name via Assistant" in the activity log, linked to the run', () => {
    const ctx = {
      ...f.as(f.a.users.physio),
      via: {
        runId: 'run-123',
        capability: { id: 'c', userId: f.a.users.physio, orgId: f.a.orgId, scopes: ['workload:write'], expiresAt: fixtureNow().getTime() + 300_000 },
      },
    };
    const r = callVerb(ctx, 'workload.logSessionLoads', { squad_id: f.a.squadId, date: '2026-11-12', duration_min: 60, rpe: 5 }) as {
      changeset: { id: string };
    };
    const act = f.call(f.a.users.owner, 'activity.list', {}).activity.find((a: { changeset_id: string }) => a.changeset_id === r.changeset.id);
    expect(act).toMatchObject({ actor_name: 'Northbridge physio via Assistant', via_assistant: true, run_id: 'run-123' });
  });
});

describe('squads.moveAthletes and devices.revoke', () => {
  it('moves athletes into a new squad as one changeset; one already there is left out; another org’s athlete is NotFound', () => {
    const owner = f.a.users.owner;
    const squad = f.call(owner, 'squads.create', { name: 'Move target', season: '2026/27' }).changeset.changes[0].id as string;
    // A second active athlete of its own (an earlier test deactivates the fixture's other athlete).
    const second = f.call(owner, 'athletes.create', { name: 'Move Second', date_of_birth: '2004-04-04', sex: 'male' }).changeset.changes[0].id as string;
    const r = f.call(f.a.users.physio, 'squads.moveAthletes', { athlete_ids: [f.a.athleteId, second], squad_id: squad });
    expect(r.changeset.changes).toHaveLength(2);
    expect(r.changeset.summary).toBe('Move 2 athletes to Move target');
    expect(getRow<{ squad_id: string }>(f.db, 'athlete', f.a.orgId, f.a.athleteId)!.squad_id).toBe(squad);
    const again = errorOf(() => f.call(f.a.users.physio, 'squads.moveAthletes', { athlete_ids: [f.a.athleteId], squad_id: squad }));
    expect(again.code).toBe('Validation');
    expect(errorOf(() => f.call(f.a.users.physio, 'squads.moveAthletes', { athlete_ids: [f.b.athleteId], squad_id: squad })).code).toBe('NotFound');
    expect(errorOf(() => f.call(f.a.users.physio, 'squads.moveAthletes', { athlete_ids: [], squad_id: squad })).issues?.[0]?.path).toBe('athlete_ids');
    expect(errorOf(() => f.call(f.a.users.coach, 'squads.moveAthletes', { athlete_ids: [f.a.athleteId], squad_id: null })).code).toBe('Forbidden');
  });
  it('a revoked device key is gone (hash and last 4 cleared); revoking again is a Conflict; Replace key issues a new one', () => {
    const owner = f.a.users.owner;
    const made = f.call(owner, 'devices.register', { name: 'Revoke me', kind: 'tablet' });
    const id = made.changeset.changes[0].id as string;
    f.call(owner, 'devices.revoke', { id });
    const row = getRow<{ api_key_hash: string | null; api_key_last4: string | null }>(f.db, 'device', f.a.orgId, id)!;
    expect(row.api_key_hash).toBeNull();
    expect(row.api_key_last4).toBeNull();
    expect(errorOf(() => f.call(owner, 'devices.revoke', { id })).code).toBe('Conflict');
    const rotated = f.call(owner, 'devices.rotateKey', { id });
    expect(rotated.reveal.api_key).toMatch(/^aik_/);
    expect(errorOf(() => f.call(f.a.users.physio, 'devices.revoke', { id })).code).toBe('Forbidden');
  });
});

describe('setUserPin (admin.setPin)', () => {
  it('an owner sets a PIN on an account of the org; the hash is stored, never the PIN; role rules and tenancy hold', () => {
    const ctx = (u: string) => ({ db: f.db, userId: u });
    expect(setUserPin(ctx(f.a.users.owner), { user_id: f.a.users.coach, pin: '735519' })).toEqual({ pin_set: true });
    const stored = (sqlite(f.db).prepare('SELECT pin_hash FROM app_user WHERE id = ?').get(f.a.users.coach) as { pin_hash: string }).pin_hash;
    expect(stored).not.toContain('735519');
    expect(verifyPin('735519', stored)).toBe(true);
    // An admin manages admin and athlete accounts only; a physio holds no user.manage; another org's user is NotFound.
    expect(errorOf(() => setUserPin(ctx(f.a.users.admin), { user_id: f.a.users.doctor, pin: '1111' })).code).toBe('Forbidden');
    expect(errorOf(() => setUserPin(ctx(f.a.users.physio), { user_id: f.a.users.coach, pin: '1111' })).code).toBe('Forbidden');
    expect(errorOf(() => setUserPin(ctx(f.a.users.owner), { user_id: f.b.users.physio, pin: '1111' })).code).toBe('NotFound');
    expect(errorOf(() => setUserPin(ctx(f.a.users.owner), { user_id: f.a.users.owner, pin: '1111' })).code).toBe('Forbidden');
  });
});

describe('reports.generate', () => {
  it('a report as of a day lists only wellness stored for days up to it; a missing athlete or squad is named at its field', () => {
    const physio = f.a.users.physio;
    const md = (asOf: string) => {
      const id = f.call(physio, 'reports.generate', { kind: 'athlete_summary', athlete_id: f.a.athleteId, as_of: asOf }).changeset.changes[0].id;
      return (f.call(physio, 'reports.get', { id }) as { markdown: string }).markdown;
    };
    // The dates of the wellness entries a report lists (other tests in this file add entries too).
    const wellnessDates = (m: string) => [...m.split('## Wellness')[1]!.matchAll(/^- (\d{4}-\d{2}-\d{2}):/gm)].map((x) => x[1]!);
    expect(wellnessDates(md('2026-11-20'))).toContain('2026-11-19');
    const before = wellnessDates(md('2026-11-18'));
    expect(before).not.toContain('2026-11-19');
    expect(before.every((d) => d <= '2026-11-18')).toBe(true);
    const noAthlete = errorOf(() => f.call(physio, 'reports.generate', { kind: 'rtp_status' }));
    expect(noAthlete.code).toBe('Validation');
    expect(noAthlete.issues).toEqual([{ path: 'athlete_id', message: 'Choose the athlete: an RTP status report is about one athlete.' }]);
    const noSquad = errorOf(() => f.call(physio, 'reports.generate', { kind: 'squad_workload' }));
    expect(noSquad.issues?.map((i) => i.path)).toEqual(['squad_id']);
    // An analyst (no injury.read) may generate a squad report but not an athlete summary.
    expect(errorOf(() => f.call(f.a.users.analyst, 'reports.generate', { kind: 'athlete_summary', athlete_id: f.a.athleteId })).code).toBe('Forbidden');
  });

  it("a doctor's athlete summary is neither read nor undone by an analyst through its changeset (issue 13 re-review B3)", () => {
    const generated = f.call(f.a.users.doctor, 'reports.generate', { kind: 'athlete_summary', athlete_id: f.a.athleteId }).changeset;
    const reportId = generated.changes[0].id as string;
    expect(errorOf(() => f.call(f.a.users.analyst, 'reports.get', { id: reportId })).code).toBe('Forbidden');
    // before: changesets.get returned the report's markdown (injuries, RTP sign-offs, wellness) to the analyst
    const read = errorOf(() => f.call(f.a.users.analyst, 'changesets.get', { id: generated.id }));
    expect([read.code, read.message]).toEqual(['Forbidden', expect.stringMatching(/report \(athlete summary/)]);
    const undo = errorOf(() => f.call(f.a.users.analyst, 'changesets.undo', { changeset_id: generated.id }));
    expect(undo.code).toBe('Forbidden');
    expect(getRow(f.db, 'report', f.a.orgId, reportId)).not.toBeNull();
    // the doctor reads it; a squad report stays open to the analyst
    expect((f.call(f.a.users.doctor, 'changesets.get', { id: generated.id }) as { changes: unknown[] }).changes).toHaveLength(1);
    const squad = f.call(f.a.users.analyst, 'reports.generate', { kind: 'squad_workload', squad_id: f.a.squadId }).changeset;
    expect((f.call(f.a.users.analyst, 'changesets.get', { id: squad.id }) as { changes: unknown[] }).changes).toHaveLength(1);
  });
});

describe('the policy on a direct call (verb.call, CLI call)', () => {
  it('a fee change of more than 20 % by an admin is refused, naming the owner, and nothing is written', () => {
    const before = getRow<{ price_cents: number; version: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!;
    const e = errorOf(() => f.call(f.a.users.admin, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 25 }));
    expect(e.code).toBe('Forbidden');
    expect(e.message).toMatch(/needs an owner's approval/);
    expect(e.message).toMatch(/Nothing was written/);
    expect(getRow<{ price_cents: number; version: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)).toMatchObject(before);
  });
  it('the same change by an owner applies (an owner approves their own change)', () => {
    const before = getRow<{ price_cents: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!.price_cents;
    f.call(f.a.users.owner, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 25 });
    expect(getRow<{ price_cents: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!.price_cents).toBe(Math.round(before * 1.25));
    f.call(f.a.users.owner, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: -20 });
  });
  it('a change within the limits by an admin applies at once', () => {
    const before = getRow<{ price_cents: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!.price_cents;
    f.call(f.a.users.admin, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 10 });
    expect(getRow<{ price_cents: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!.price_cents).toBe(Math.round(before * 1.1));
  });
});

describe('bounded input on every door', () => {
  const deep = (n: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  };
  it('a 20,000-level input is Validation (not a stack overflow), with or without an idempotency key, and nothing is written', () => {
    const loads = count(f, 'session_load');
    for (const opts of [{}, { idempotencyKey: 'deep-0001' }]) {
      const e = errorOf(() => f.call(f.a.users.physio, 'workload.logSessionLoads', deep(20_000) as never, opts));
      expect(e.code).toBe('Validation');
      expect(e.message).toMatch(/nested deeper than 32 levels/);
      expect(e.issues).toEqual([{ path: '(input)', message: 'nested too deep' }]);
    }
    const e = errorOf(() => f.call(f.a.users.physio, 'athletes.list', deep(40) as never));
    expect(e.code).toBe('Validation');
    expect(count(f, 'session_load')).toBe(loads);
  });
  it('a 3 MB input is refused by size before validation', () => {
    const e = errorOf(() => f.call(f.a.users.physio, 'athletes.list', { search: 'x'.repeat(3_000_000) }));
    expect(e.code).toBe('Validation');
    expect(e.issues).toEqual([{ path: '(input)', message: 'too large' }]);
    expect(e.message).toMatch(/larger than 65536 bytes/);
    expect(e.message).not.toMatch(/xxxx/);
  });
});

describe('organisation name (settings.updateOrganisation)', () => {
  it('settings.manage renames its own org with the version it read; a stale version, an empty name and other roles are refused', () => {
    const ctx = (u: string) => ({ db: f.db, userId: u });
    const before = readOrganisation(ctx(f.a.users.physio));
    const other = readOrganisation(ctx(f.b.users.owner));
    const after = updateOrganisation(ctx(f.a.users.admin), { name: '  Kestrel Vale Football Club ', expected_version: before.version });
    expect(after).toEqual({ id: before.id, name: 'Kestrel Vale Football Club', version: before.version + 1, set_at_hq: false });
    expect(readOrganisation(ctx(f.a.users.coach)).name).toBe('Kestrel Vale Football Club');
    expect(readOrganisation(ctx(f.b.users.owner))).toEqual(other);
    const bidi = errorOf(() => updateOrganisation(ctx(f.a.users.owner), { name: 'Kestrel \u202eCF', expected_version: after.version }));
    expect(bidi).toMatchObject({ code: 'Validation', issues: [{ path: 'name' }] });
    const stale = errorOf(() => updateOrganisation(ctx(f.a.users.owner), { name: 'Kestrel Vale', expected_version: before.version }));
    expect(stale.code).toBe('Conflict');
    expect(stale.message).toContain('now called "Kestrel Vale Football Club"');
    expect(stale.conflicts).toEqual([{ table: 'organization', id: before.id, expectedVersion: before.version, actualVersion: after.version }]);
    const empty = errorOf(() => updateOrganisation(ctx(f.a.users.owner), { name: '   ', expected_version: after.version }));
    expect(empty.code).toBe('Validation');
    expect(empty.issues).toEqual([{ path: 'name', message: 'Enter the organisation’s name.' }]);
    expect(errorOf(() => updateOrganisation(ctx(f.a.users.owner), { name: 'x'.repeat(201), expected_version: after.version })).issues![0]!.path).toBe('name');
    expect(errorOf(() => updateOrganisation(ctx(f.a.users.physio), { name: 'Physio FC', expected_version: after.version })).code).toBe('Forbidden');
    expect(readOrganisation(ctx(f.a.users.owner))).toEqual(after);
  });
});

describe('text, screening and date-of-birth checks every door shares (break check of issue 13)', () => {
  const physio = () => f.a.users.physio;
  const fields = (e: AppError) => ({ code: e.code, message: e.message, issues: e.issues });
  const newAthlete = (name: string, extra: Record<string, unknown> = {}) =>
    f.call(physio(), 'athletes.create', { name, date_of_birth: '2000-05-05', sex: 'female', ...extra }).changeset.changes[0].id as string;

  it('refuses names that are only spaces (athlete, fee item), naming the field; trims the rest', () => {
    expect(errorOf(() => f.call(physio(), 'athletes.create', { name: '   ', date_of_birth: '2000-01-01', sex: 'female' }))).toMatchObject({
      code: 'Validation',
      issues: [{ path: 'name', message: expect.stringMatching(/blank/) }],
    });
    expect(
      errorOf(() =>
        f.call(f.a.users.owner, 'rates.createItem', { folder_id: f.a.folderId, code: 'SP1', name: '   ', item_type: 'assessment', price_cents: 9000 }),
      ),
    ).toMatchObject({ code: 'Validation', issues: [{ path: 'name' }] });
    const id = newAthlete('  Trim Me  ');
    expect(getRow<{ name: string }>(f.db, 'athlete', f.a.orgId, id)!.name).toBe('Trim Me');
  });

  it('refuses zero-width and direction marks, and NFKC-normalises before the duplicate check (full-width "U１9" is the U19 squad)', () => {
    for (const name of ['U19\u200B', 'U19\u200E', 'U19\u2028', 'U19\u061C', '\uFEFFU19'])
      expect({ name, code: errorOf(() => f.call(f.a.users.owner, 'squads.create', { name, season: '2026/27' })).code }).toEqual({ name, code: 'Validation' });
    expect(errorOf(() => f.call(f.a.users.owner, 'squads.create', { name: 'U\uFF119', season: '2026/27' }))).toMatchObject({
      code: 'Conflict',
      message: expect.stringContaining('A squad named "U19" already exists'),
    });
  });

  it('refuses control and text-direction characters in fields that are not names (body part, position, session kind, notes)', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['injuries.create', { athlete_id: f.a.athleteId, body_part: 'an\u0000kle', side: 'left', onset_date: '2026-11-10', severity: 'mild' }, 'body_part'],
      ['athletes.update', { id: f.a.athleteId, position: 'wing\u202E' }, 'position'],
      ['sessions.create', { squad_id: f.a.squadId, date: '2026-11-19', kind: 'gym\u2066', duration_min: 30 }, 'kind'],
      ['screenings.create', { athlete_id: f.a.athleteId, test: 'y_balance\u200B', side: 'left', value: 90, unit: '%', date: '2026-11-19' }, 'test'],
      [
        'injuries.create',
        { athlete_id: f.a.athleteId, body_part: 'ankle', side: 'left', onset_date: '2026-11-10', severity: 'mild', clinician_notes: 'ok\u0000' },
        'clinician_notes',
      ],
    ];
    const before = count(f, 'injury');
    for (const [verb, input, path] of cases)
      expect({ verb, ...fields(errorOf(() => f.call(physio(), verb, input))) }).toMatchObject({ verb, code: 'Validation', issues: [{ path }] });
    expect(count(f, 'injury')).toBe(before);
    // Notes keep their line breaks and tabs.
    const ok = f.call(physio(), 'injuries.create', {
      athlete_id: f.a.athleteId,
      body_part: 'ankle',
      side: 'left',
      onset_date: '2026-11-10',
      severity: 'mild',
      clinician_notes: 'Line 1\nLine 2\tx',
    }).changeset.changes[0].id as string;
    expect(getRow<{ clinician_notes: string }>(f.db, 'injury', f.a.orgId, ok)!.clinician_notes).toBe('Line 1\nLine 2\tx');
  });

  it('matches a screening test however it is spelled, stores the known name, and refuses implausibly large values', () => {
    const base = { athlete_id: f.a.athleteId, side: 'left', value: 12, unit: 'cm', date: '2026-11-19' };
    for (const test of ['Weight_bearing_lunge', 'weight_bearing_lunge ', 'weight bearing lunge', 'Weight-bearing lunge'])
      expect({ test, ...fields(errorOf(() => f.call(physio(), 'screenings.create', { ...base, test, unit: 'mm' }))) }).toMatchObject({
        test,
        code: 'Validation',
        issues: [{ path: 'unit' }],
      });
    expect(errorOf(() => f.call(physio(), 'screenings.create', { ...base, test: 'weight bearing lunge', value: 120 }))).toMatchObject({
      code: 'Validation',
      message: expect.stringMatching(/above the plausible 30 cm/),
      issues: [{ path: 'value', message: 'at most 30 cm' }],
    });
    const id = f.call(physio(), 'screenings.create', { ...base, test: 'Weight-bearing lunge' }).changeset.changes[0].id as string;
    expect(getRow<{ test: string }>(f.db, 'screening', f.a.orgId, id)!.test).toBe('weight_bearing_lunge');
    expect(errorOf(() => f.call(physio(), 'screenings.update', { id, value: 31 })).issues?.[0]).toMatchObject({ path: 'value' });
    f.call(physio(), 'screenings.update', { id, test: ' Single Leg Hop', value: 180 });
    expect(getRow<{ test: string }>(f.db, 'screening', f.a.orgId, id)!.test).toBe('single_leg_hop');
  });

  it('refuses a date of birth after the athlete’s earliest record (naming it) or less than 5 years ago', () => {
    const id = newAthlete('Dob Check');
    f.call(physio(), 'injuries.create', { athlete_id: id, body_part: 'knee', side: 'left', onset_date: '2015-06-01', severity: 'mild' });
    f.call(physio(), 'wellness.submit', { athlete_id: id, date: '2014-03-03', sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 });
    expect(errorOf(() => f.call(physio(), 'athletes.update', { id, date_of_birth: '2016-01-01' }))).toMatchObject({
      code: 'Validation',
      message: expect.stringContaining('wellness entry dated 2014-03-03'),
      issues: [{ path: 'date_of_birth' }],
    });
    expect(getRow<{ date_of_birth: string }>(f.db, 'athlete', f.a.orgId, id)!.date_of_birth).toBe('2000-05-05');
    expect(f.call(physio(), 'athletes.update', { id, date_of_birth: '2014-03-03' }).changeset.replayed).toBe(false);
    // FIXTURE_TODAY is 2026-11-20: a date of birth after 2021-11-20 is refused.
    expect(errorOf(() => f.call(physio(), 'athletes.create', { name: 'Too Young', date_of_birth: '2024-01-01', sex: 'male' }))).toMatchObject({
      code: 'Validation',
      issues: [{ path: 'date_of_birth', message: expect.stringContaining('2021-11-20') }],
    });
    expect(newAthlete('Just Five', { date_of_birth: '2021-11-20' })).toBeTypeOf('string');
  });

  it('refuses to move a deactivated athlete into a squad, naming them; nothing is moved', () => {
    const gone = newAthlete('Gone Mover');
    const stays = newAthlete('Stays Mover');
    f.call(physio(), 'athletes.deactivate', { id: gone, reason: 'left' });
    expect(errorOf(() => f.call(physio(), 'squads.moveAthletes', { athlete_ids: [stays, gone], squad_id: f.a.squadId }))).toMatchObject({
      code: 'Validation',
      message: expect.stringMatching(/Gone Mover is deactivated/),
      issues: [{ path: 'athlete_ids' }],
    });
    expect(getRow<{ squad_id: string | null }>(f.db, 'athlete', f.a.orgId, stays)!.squad_id).toBeNull();
    // Editing a deactivated athlete's details stays allowed.
    expect(f.call(physio(), 'athletes.update', { id: gone, position: 'Wing' }).changeset.replayed).toBe(false);
  });
});
