/**
 * A session load on a day where the athlete already has one needs an explicit acknowledgement, on
 * every door (the check is in the service, `workload.logSessionLoads`): without
 * `second_session_same_day` the CLI/`verb.call`, the entry form and an assistant/MCP proposal all
 * get Conflict `SameDayExists` naming every athlete with a load that day (minutes, RPE, AU), and
 * nothing is written; with it the second session is logged, for a squad all rows at once. Real
 * SQLite file.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { submitForm } from '../ipc/forms';
import { createClinicFixture, FIXTURE_TODAY, fixtureNow, type ClinicFixture, errorOf } from '../testing/clinic-fixture';
import { VERBS, planWrite } from '.';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

/** A day with no loads in the fixture. */
const DAY = '2026-11-10';
/** The fixture's squad session day: every squad member already has 75 min × RPE 6 = 450 AU. */
const SQUAD_DAY = new Date(Date.parse(`${FIXTURE_TODAY}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
const now = fixtureNow();
const loadsOn = (day: string) =>
  (f.call(f.a.users.physio, 'workload.listLoads', { squad_id: f.a.squadId, from: day, to: day }) as { loads: { athlete_id: string; load_au: number }[] }).loads;

describe('workload.logSessionLoads: a load on a day that already has one', () => {
  it('CLI / verb.call, one athlete: refused with a typed error naming the stored load; logged with the acknowledgement', () => {
    const first = f.call(f.a.users.physio, 'workload.logSessionLoads', { athlete_id: f.a.athleteId, date: DAY, duration_min: 60, rpe: 5 });
    const storedId = first.changeset.changes[0].id as string;
    const e = errorOf(() => f.call(f.a.users.physio, 'workload.logSessionLoads', { athlete_id: f.a.athleteId, date: DAY, duration_min: 30, rpe: 7 }));
    expect(e.toJSON()).toMatchObject({
      code: 'Conflict',
      kind: 'SameDayExists',
      issues: [{ path: 'second_session_same_day', message: expect.stringContaining('60 min × RPE 5 = 300 AU') }],
      message: expect.stringContaining(`60 min × RPE 5 = 300 AU (load ${storedId})`),
    });
    expect(loadsOn(DAY)).toHaveLength(1);
    f.call(f.a.users.physio, 'workload.logSessionLoads', { athlete_id: f.a.athleteId, date: DAY, duration_min: 30, rpe: 7, second_session_same_day: true });
    expect(
      loadsOn(DAY)
        .map((l) => l.load_au)
        .sort((a, b) => a - b),
    ).toEqual([210, 300]);
  });

  it('squad: refused naming every athlete with a load that day; one acknowledgement logs all rows', () => {
    const before = loadsOn(SQUAD_DAY);
    expect(before.length).toBeGreaterThanOrEqual(2);
    const e = errorOf(() => f.call(f.a.users.physio, 'workload.logSessionLoads', { squad_id: f.a.squadId, date: SQUAD_DAY, duration_min: 40, rpe: 3 }));
    const json = e.toJSON() as { code: string; kind: string; message: string; issues: { path: string; message: string }[] };
    expect(json).toMatchObject({ code: 'Conflict', kind: 'SameDayExists' });
    expect(json.issues).toHaveLength(before.length);
    expect(json.issues.every((i) => i.path === 'second_session_same_day' && i.message.includes('75 min × RPE 6 = 450 AU'))).toBe(true);
    expect(json.message).toContain(`${before.length} athletes already have a load`);
    expect(json.message).toContain('Athlete One: 75 min × RPE 6 = 450 AU');
    expect(json.message).toContain('Athlete Two: 75 min × RPE 6 = 450 AU');
    expect(loadsOn(SQUAD_DAY)).toHaveLength(before.length);
    const ok = f.call(f.a.users.physio, 'workload.logSessionLoads', {
      squad_id: f.a.squadId,
      date: SQUAD_DAY,
      duration_min: 40,
      rpe: 3,
      second_session_same_day: true,
    });
    expect(ok.changeset.changes).toHaveLength(before.length);
    expect(loadsOn(SQUAD_DAY)).toHaveLength(2 * before.length);
  });

  it('squad: an athlete left out is not named, and a call whose athletes have no load that day needs no acknowledgement', () => {
    f.call(f.a.users.physio, 'workload.logSessionLoads', { athlete_id: f.a.athleteId, date: DAY, duration_min: 60, rpe: 5 });
    // Only Athlete One has a load on DAY: the squad call names them alone.
    const e = errorOf(() => f.call(f.a.users.physio, 'workload.logSessionLoads', { squad_id: f.a.squadId, date: DAY, duration_min: 40, rpe: 3 }));
    expect(e.toJSON()).toMatchObject({ kind: 'SameDayExists', issues: [{ message: expect.stringContaining('Athlete One: 60 min × RPE 5 = 300 AU') }] });
    expect(e.message).toContain('1 athlete already has a load');
    // Leaving that athlete out: nobody of the call has a load that day.
    f.call(f.a.users.physio, 'workload.logSessionLoads', { squad_id: f.a.squadId, date: DAY, duration_min: 40, rpe: 3, exclude_athlete_ids: [f.a.athleteId] });
    expect(loadsOn(DAY)).toHaveLength(2);
  });

  it('the first load of a day needs no acknowledgement (and one sent anyway is harmless)', () => {
    f.call(f.a.users.physio, 'workload.logSessionLoads', { athlete_id: f.a.athleteId, date: DAY, duration_min: 60, rpe: 5, second_session_same_day: true });
    expect(loadsOn(DAY)).toHaveLength(1);
  });

  it('entry form: the same typed error, nothing written', () => {
    submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input: { athlete_id: f.a.athleteId, date: DAY, duration_min: 60, rpe: 5 } }, now);
    expect(() =>
      submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input: { athlete_id: f.a.athleteId, date: DAY, duration_min: 60, rpe: 5 } }, now),
    ).toThrow(expect.objectContaining({ code: 'Conflict', details: expect.objectContaining({ kind: 'SameDayExists' }) }));
    expect(loadsOn(DAY)).toHaveLength(1);
  });

  it('assistant / MCP: planning the tool call is refused the same way (the tools plan through the verb)', () => {
    const verb = VERBS.get('workload.logSessionLoads');
    if (verb?.kind !== 'write') throw new Error('expected a write verb');
    const e = errorOf(() => planWrite(f.as(f.a.users.physio), verb, { squad_id: f.a.squadId, date: SQUAD_DAY, duration_min: 40, rpe: 3 }));
    expect(e.toJSON()).toMatchObject({ code: 'Conflict', kind: 'SameDayExists' });
    const ok = planWrite(f.as(f.a.users.physio), verb, { squad_id: f.a.squadId, date: SQUAD_DAY, duration_min: 40, rpe: 3, second_session_same_day: true });
    // The acknowledgement is not a column: the planned rows hold the load only.
    expect(ok.planned.changes[0]).toMatchObject({ op: 'insert', table: 'session_load' });
    expect(Object.keys((ok.planned.changes[0] as { after: object }).after)).not.toContain('second_session_same_day');
  });
});
