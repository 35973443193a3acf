/** Injuries, screenings, return-to-play (RTP) entries with their three sign-offs, wellness, vitals. */
import { codeWords, formatDay } from '../../models/format';
import { SameDayExists, ValidationError } from '../../models/errors';
import type { Injury, RtpEntry, Screening, Vitals, Wellness } from '../../models/records';
import { screeningTest } from '../../models/screening-tests';
import { listRows } from '../data/rows';
import { visibleAthlete } from './scope';
import { scopeAthleteId } from './context';
import { defined, insertRow, updateRow } from './plan';
import { activeAthlete, athleteFilter, listScoped, notInFuture, visibleRow } from './scope';
import type { VerbContext } from './verb';
import { readVerb, writeVerb } from './verb';

// ---- Injuries ----
export const listInjuries = readVerb('injuries.list', {
  run(vc, i) {
    const r = listScoped<Injury>(vc, 'injury', i.athlete_id, {
      eq: { status: i.status === 'all' ? undefined : i.status },
      orderBy: [{ column: 'onset_date', desc: true }],
      limit: i.limit,
      offset: i.offset,
    });
    return { total: r.total, injuries: r.rows };
  },
});

export const getInjury = readVerb('injuries.get', {
  run(vc, i) {
    const injury = visibleRow<Injury>(vc, 'injury', i.id, 'Injury');
    return {
      ...injury,
      rtp_entries: listRows<RtpEntry>(vc.db, 'rtp_entry', vc.actor.orgId, { eq: { injury_id: injury.id }, orderBy: [{ column: 'created_at' }] }),
    };
  },
});

export const createInjury = writeVerb('injuries.create', {
  plan(vc, i) {
    const a = activeAthlete(vc, i.athlete_id);
    notInFuture(vc, 'onset_date', i.onset_date, a);
    return {
      planned: {
        verb: 'injuries.create',
        summary: `Record ${i.side === 'none' ? '' : `${i.side} `}${i.body_part} injury for ${a.name}`,
        changes: [insertRow('injury', { ...i, status: 'open' })],
      },
    };
  },
});

export const updateInjury = writeVerb('injuries.update', {
  plan(vc, i) {
    const row = visibleRow<Injury>(vc, 'injury', i.id, 'Injury');
    if (i.onset_date) notInFuture(vc, 'onset_date', i.onset_date);
    const { id: _id, ...patch } = i;
    const change = updateRow('injury', row, defined(patch));
    return { planned: { verb: 'injuries.update', summary: `Update ${row.body_part} injury`, changes: change ? [change] : [] } };
  },
});

// ---- Screenings ----
export const listScreenings = readVerb('screenings.list', {
  run(vc, i) {
    const r = listScoped<Screening>(vc, 'screening', i.athlete_id, { orderBy: [{ column: 'date', desc: true }], limit: i.limit, offset: i.offset });
    return { total: r.total, screenings: r.rows };
  },
});

export const getScreening = readVerb('screenings.get', {
  run: (vc, i) => visibleRow<Screening>(vc, 'screening', i.id, 'Screening'),
});

/**
 * A screening of a known test (models/screening-tests.ts) must use the test's declared unit and a
 * value within the test's plausible range (no negative distance or force, no millimetres typed as
 * centimetres). Returns the name to store: the known test's own name however it was spelled
 * ("Weight bearing lunge" → "weight_bearing_lunge"), otherwise `test` as given.
 * @throws Validation naming the field
 */
function checkScreening(test: string, unit: string | undefined, value: number | undefined): string {
  const spec = screeningTest(test);
  if (!spec) return test;
  if (unit !== undefined && unit !== spec.unit)
    throw new ValidationError(`${humanTest(spec.test)} is measured in ${spec.unit}, not ${unit}. Nothing was saved: enter the value in ${spec.unit}.`, [
      { path: 'unit', message: `must be ${spec.unit} for this test` },
    ]);
  if (value !== undefined && value < spec.min)
    throw new ValidationError(`${humanTest(spec.test)} (${spec.hint}) cannot be below ${spec.min} ${spec.unit}. Nothing was saved.`, [
      { path: 'value', message: `at least ${spec.min} ${spec.unit}` },
    ]);
  if (value !== undefined && value > spec.max)
    throw new ValidationError(
      `${humanTest(spec.test)} (${spec.hint}) of ${value} ${spec.unit} is above the plausible ${spec.max} ${spec.unit}: check the unit and the figure. Nothing was saved.`,
      [{ path: 'value', message: `at most ${spec.max} ${spec.unit}` }],
    );
  return spec.test;
}

/** "single_leg_hop" → "Single leg hop". */
function humanTest(test: string): string {
  const t = test.replace(/_/g, ' ');
  return t.charAt(0).toUpperCase() + t.slice(1);
}

export const createScreening = writeVerb('screenings.create', {
  plan(vc, i) {
    const a = activeAthlete(vc, i.athlete_id);
    notInFuture(vc, 'date', i.date, a);
    const test = checkScreening(i.test, i.unit, i.value);
    return {
      planned: {
        verb: 'screenings.create',
        summary: `Record ${codeWords(test)} (${i.value} ${i.unit}) for ${a.name}`,
        changes: [insertRow('screening', { ...i, test })],
      },
    };
  },
});

export const updateScreening = writeVerb('screenings.update', {
  plan(vc, i) {
    const row = visibleRow<Screening>(vc, 'screening', i.id, 'Screening');
    if (i.date) notInFuture(vc, 'date', i.date);
    const test = checkScreening(i.test ?? row.test, i.unit ?? (i.test !== undefined ? row.unit : undefined), i.value);
    const { id: _id, ...patch } = { ...i, ...(i.test !== undefined ? { test } : {}) };
    const change = updateRow('screening', row, defined(patch));
    return { planned: { verb: 'screenings.update', summary: `Update ${codeWords(row.test)} screening`, changes: change ? [change] : [] } };
  },
});

// ---- RTP ----
type SignoffRole = 'physio' | 'doctor' | 'coach';
function signoffPatch(vc: VerbContext, flags: Partial<Record<`${SignoffRole}_signoff`, boolean | undefined>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const r of ['physio', 'doctor', 'coach'] as const) {
    const f = flags[`${r}_signoff`];
    if (f === undefined) continue;
    out[`${r}_signoff_by`] = f ? vc.actor.userId : null;
    out[`${r}_signoff_at`] = f ? vc.now.toISOString() : null;
  }
  return out;
}

/** Keep an existing sign-off's time when the same user signs again (no spurious change). */
function keepSameSigner(row: RtpEntry, patch: Record<string, unknown>): Record<string, unknown> {
  for (const r of ['physio', 'doctor', 'coach'] as const) {
    const by = `${r}_signoff_by`;
    if (by in patch && patch[by] !== null && patch[by] === row[by as keyof RtpEntry]) delete patch[`${r}_signoff_at`];
  }
  return patch;
}

export const listRtp = readVerb('rtp.list', {
  run(vc, i) {
    const r = listScoped<RtpEntry>(vc, 'rtp_entry', i.athlete_id, {
      eq: { injury_id: i.injury_id },
      orderBy: [{ column: 'created_at', desc: true }],
      limit: i.limit,
      offset: i.offset,
    });
    return { total: r.total, rtp_entries: r.rows };
  },
});

export const getRtp = readVerb('rtp.get', {
  run: (vc, i) => visibleRow<RtpEntry>(vc, 'rtp_entry', i.id, 'RTP entry'),
});

export const createRtp = writeVerb('rtp.create', {
  plan(vc, i) {
    const injury = visibleRow<Injury>(vc, 'injury', i.injury_id, 'Injury');
    activeAthlete(vc, injury.athlete_id);
    const after = {
      injury_id: injury.id,
      athlete_id: injury.athlete_id,
      stage: i.stage,
      criteria_met: i.criteria_met,
      notes: i.notes,
      physio_signoff_by: null,
      physio_signoff_at: null,
      doctor_signoff_by: null,
      doctor_signoff_at: null,
      coach_signoff_by: null,
      coach_signoff_at: null,
      ...signoffPatch(vc, i),
    };
    return {
      planned: {
        verb: 'rtp.create',
        summary: `Add RTP entry (${codeWords(i.stage)}) for ${injury.body_part} injury`,
        changes: [insertRow('rtp_entry', after)],
      },
    };
  },
});

export const updateRtp = writeVerb('rtp.update', {
  plan(vc, i) {
    const row = visibleRow<RtpEntry>(vc, 'rtp_entry', i.id, 'RTP entry');
    const patch = keepSameSigner(row, { ...defined({ stage: i.stage, criteria_met: i.criteria_met, notes: i.notes }), ...signoffPatch(vc, i) });
    const change = updateRow('rtp_entry', row, patch);
    return { planned: { verb: 'rtp.update', summary: `Update RTP entry (${codeWords(i.stage ?? row.stage)})`, changes: change ? [change] : [] } };
  },
});

function signoffVerb<K extends 'rtp.signoffPhysio' | 'rtp.signoffDoctor' | 'rtp.signoffCoach'>(name: K, role: SignoffRole) {
  return writeVerb(name, {
    plan(vc, i) {
      const row = visibleRow<RtpEntry>(vc, 'rtp_entry', i.id, 'RTP entry');
      const change = updateRow('rtp_entry', row, keepSameSigner(row, signoffPatch(vc, { [`${role}_signoff`]: i.signed })));
      return {
        planned: {
          verb: `rtp.signoff_${role}`,
          summary: `${i.signed ? 'Sign' : 'Withdraw'} ${role} RTP sign-off (${codeWords(row.stage)})`,
          changes: change ? [change] : [],
        },
      };
    },
  });
}
export const signoffPhysio = signoffVerb('rtp.signoffPhysio', 'physio');
export const signoffDoctor = signoffVerb('rtp.signoffDoctor', 'doctor');
export const signoffCoach = signoffVerb('rtp.signoffCoach', 'coach');

// ---- Wellness ----
export const listWellness = readVerb('wellness.list', {
  run(vc, i) {
    const r = listScoped<Wellness>(vc, 'wellness', i.athlete_id, {
      range: { column: 'date', from: i.from, to: i.to },
      orderBy: [{ column: 'date', desc: true }],
      limit: i.limit,
      offset: i.offset,
    });
    return { total: r.total, wellness: r.rows };
  },
});

/** The questionnaire as stored for one athlete and day (gated by wellness.write: a writer sees what a submit would replace). */
export const getWellness = readVerb('wellness.get', {
  run: (vc, i) => visibleRow<Wellness>(vc, 'wellness', i.id, 'Wellness day'),
});

export const getWellnessDay = readVerb('wellness.getDay', {
  run(vc, i) {
    const athleteId = scopeAthleteId(vc.actor, i.athlete_id);
    if (!athleteId)
      throw new ValidationError('Say whose wellness this is: athlete_id is required (athlete accounts read their own).', [
        { path: 'athlete_id', message: 'required' },
      ]);
    const a = visibleAthlete(vc, athleteId);
    return listRows<Wellness>(vc.db, 'wellness', vc.actor.orgId, { eq: { athlete_id: a.id, date: i.date }, limit: 1 })[0] ?? null;
  },
});

export const submitWellness = writeVerb('wellness.submit', {
  plan(vc, i) {
    const athleteId = scopeAthleteId(vc.actor, i.athlete_id);
    if (!athleteId)
      throw new ValidationError('Say whose wellness this is: athlete_id is required (athlete accounts submit their own).', [
        { path: 'athlete_id', message: 'required' },
      ]);
    const a = activeAthlete(vc, athleteId);
    notInFuture(vc, 'date', i.date, a);
    const { athlete_id: _a, ...values } = i;
    const existing = listRows<Wellness>(vc.db, 'wellness', vc.actor.orgId, { eq: { athlete_id: a.id, date: i.date }, limit: 1 })[0];
    const change = existing ? updateRow('wellness', existing, values) : insertRow('wellness', { athlete_id: a.id, ...values });
    return { planned: { verb: 'wellness.submit', summary: `Wellness for ${a.name} on ${formatDay(i.date)}`, changes: change ? [change] : [] } };
  },
});

// ---- Vitals ----
export const listVitals = readVerb('vitals.list', {
  run(vc, i) {
    const r = listScoped<Vitals>(vc, 'vitals', i.athlete_id, {
      range: { column: 'date', from: i.from, to: i.to },
      orderBy: [{ column: 'date', desc: true }],
      limit: i.limit,
      offset: i.offset,
    });
    return { total: r.total, vitals: r.rows };
  },
});

export const recordVitals = writeVerb('vitals.record', {
  plan(vc, i) {
    const a = activeAthlete(vc, athleteFilter(vc, i.athlete_id)!);
    notInFuture(vc, 'date', i.date, a);
    const { second_set_same_day: again, ...values } = i;
    // A second set the same day must be meant (a re-measurement): a set entered twice skews the
    // day's trend. The check runs on every door (form, CLI, assistant, MCP) and cannot be skipped;
    // if the read itself fails, the verb fails with it (nothing is written).
    const stored = listRows<Vitals>(vc.db, 'vitals', vc.actor.orgId, {
      eq: { athlete_id: a.id, date: i.date },
      orderBy: [{ column: 'created_at' }],
      limit: 20,
    });
    if (stored.length > 0 && !again) {
      const items = stored.map((s) => `Resting heart rate ${s.resting_hr_bpm} bpm, HRV ${s.hrv_rmssd_ms} ms (set ${s.id})`);
      throw new SameDayExists(
        `Vitals for ${a.name} on ${formatDay(i.date)} are already recorded: ${items.join('; ')}. Nothing was written. If this is a new measurement (a reading retaken), send it again with second_set_same_day: true; a set entered by mistake is undone from Activity.`,
        'second_set_same_day',
        items,
      );
    }
    return { planned: { verb: 'vitals.record', summary: `Vitals for ${a.name} on ${formatDay(i.date)}`, changes: [insertRow('vitals', values)] } };
  },
});
