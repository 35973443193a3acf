/**
 * A second set of vitals on the same day needs an explicit acknowledgement, on every door (the
 * check is in the service, `vitals.record`): without `second_set_same_day` the CLI/`verb.call`,
 * the entry form and an assistant/MCP proposal all get Conflict `SameDayExists` naming the stored
 * set, and nothing is written; with it the second set is recorded. Real SQLite file.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { submitForm } from '../ipc/forms';
import { createClinicFixture, fixtureNow, type ClinicFixture, errorOf } from '../testing/clinic-fixture';
import { VERBS, planWrite } from '.';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const DAY = '2026-11-10';
const now = fixtureNow();
const setsOn = (day: string) =>
  (f.call(f.a.users.physio, 'vitals.list', { athlete_id: f.a.athleteId, from: day, to: day }) as { vitals: { id: string; resting_hr_bpm: number }[] }).vitals;

describe('vitals.record: a second set the same day', () => {
  it('CLI / verb.call: refused with a typed error naming the stored set; recorded with the acknowledgement', () => {
    const first = f.call(f.a.users.physio, 'vitals.record', { athlete_id: f.a.athleteId, date: DAY, resting_hr_bpm: 52, hrv_rmssd_ms: 78 });
    const storedId = first.changeset.changes[0].id as string;
    const e = errorOf(() => f.call(f.a.users.physio, 'vitals.record', { athlete_id: f.a.athleteId, date: DAY, resting_hr_bpm: 55, hrv_rmssd_ms: 70 }));
    expect(e.toJSON()).toMatchObject({
      code: 'Conflict',
      kind: 'SameDayExists',
      // One issue per stored set (what the entry form lists); the message names them too.
      issues: [{ path: 'second_set_same_day', message: `Resting heart rate 52 bpm, HRV 78 ms (set ${storedId})` }],
      message: expect.stringContaining(`Resting heart rate 52 bpm, HRV 78 ms (set ${storedId})`),
    });
    expect(setsOn(DAY)).toHaveLength(1);
    f.call(f.a.users.physio, 'vitals.record', { athlete_id: f.a.athleteId, date: DAY, resting_hr_bpm: 55, hrv_rmssd_ms: 70, second_set_same_day: true });
    expect(
      setsOn(DAY)
        .map((v) => v.resting_hr_bpm)
        .sort(),
    ).toEqual([52, 55]);
  });

  it('the first set of a day needs no acknowledgement (and an acknowledgement sent anyway is harmless)', () => {
    f.call(f.a.users.physio, 'vitals.record', { athlete_id: f.a.athleteId, date: DAY, resting_hr_bpm: 52, hrv_rmssd_ms: 78, second_set_same_day: true });
    expect(setsOn(DAY)).toHaveLength(1);
  });

  it('entry form: the same typed error, nothing written', () => {
    submitForm(f.db, f.a.users.physio, { verb: 'vitals.record', input: { athlete_id: f.a.athleteId, date: DAY, resting_hr_bpm: 52, hrv_rmssd_ms: 78 } }, now);
    expect(() =>
      submitForm(f.db, f.a.users.physio, { verb: 'vitals.record', input: { athlete_id: f.a.athleteId, date: DAY, resting_hr_bpm: 52, hrv_rmssd_ms: 78 } }, now),
    ).toThrow(expect.objectContaining({ code: 'Conflict', details: expect.objectContaining({ kind: 'SameDayExists' }) }));
    expect(setsOn(DAY)).toHaveLength(1);
  });

  it('assistant / MCP: planning the tool call is refused the same way (the tools plan through the verb)', () => {
    f.call(f.a.users.physio, 'vitals.record', { athlete_id: f.a.athleteId, date: DAY, resting_hr_bpm: 52, hrv_rmssd_ms: 78 });
    const verb = VERBS.get('vitals.record');
    if (verb?.kind !== 'write') throw new Error('expected a write verb');
    const e = errorOf(() => planWrite(f.as(f.a.users.physio), verb, { athlete_id: f.a.athleteId, date: DAY, resting_hr_bpm: 60, hrv_rmssd_ms: 60 }));
    expect(e.toJSON()).toMatchObject({ code: 'Conflict', kind: 'SameDayExists' });
    const ok = planWrite(f.as(f.a.users.physio), verb, {
      athlete_id: f.a.athleteId,
      date: DAY,
      resting_hr_bpm: 60,
      hrv_rmssd_ms: 60,
      second_set_same_day: true,
    });
    // The acknowledgement is not a column: the planned row holds the measurement only.
    expect(ok.planned.changes[0]).toMatchObject({ op: 'insert', table: 'vitals' });
    expect(Object.keys((ok.planned.changes[0] as { after: object }).after)).not.toContain('second_set_same_day');
  });
});
