/** Injuries, screenings, return-to-play (RTP) entries with their three sign-offs, wellness, vitals. */
import * as I from '../../models/inputs';
import { ValidationError } from '../../models/errors';
import type { Injury, RtpEntry, Screening, Vitals, Wellness } from '../../models/records';
import { listRows } from '../data/rows';
import { visibleAthlete } from './athletes';
import { scopeAthleteId } from './context';
import { defined, insertRow, updateRow } from './plan';
import { athleteFilter, listScoped, notInFuture, visibleRow } from './scope';
import type { VerbContext } from './verb';
import { readVerb, writeVerb } from './verb';

// ---- Injuries ----
export const listInjuries = readVerb({
  name: 'injuries.list',
  description: 'List injuries (optionally one athlete, open/closed).',
  permission: 'injury.read',
  input: I.ListInjuries,
  run(vc, i) {
    const r = listScoped<Injury>(vc, 'injury', i.athlete_id, { eq: { status: i.status === 'all' ? undefined : i.status }, orderBy: [{ column: 'onset_date', desc: true }], limit: i.limit, offset: i.offset });
    return { total: r.total, injuries: r.rows };
  },
});

export const getInjury = readVerb({
  name: 'injuries.get',
  description: 'One injury with its RTP entries.',
  permission: 'injury.read',
  input: I.ById,
  run(vc, i) {
    const injury = visibleRow<Injury>(vc, 'injury', i.id, 'Injury');
    return { ...injury, rtp_entries: listRows<RtpEntry>(vc.db, 'rtp_entry', vc.actor.orgId, { eq: { injury_id: injury.id }, orderBy: [{ column: 'created_at' }] }) };
  },
});

export const createInjury = writeVerb({
  name: 'injuries.create',
  description: 'Record a new injury for an athlete.',
  permission: 'injury.write',
  input: I.CreateInjury,
  plan(vc, i) {
    const a = visibleAthlete(vc, i.athlete_id);
    notInFuture(vc, 'onset_date', i.onset_date);
    return { planned: { verb: 'injuries.create', summary: `Record ${i.side === 'none' ? '' : `${i.side} `}${i.body_part} injury for ${a.name}`, changes: [insertRow('injury', { ...i, status: 'open' })] } };
  },
});

export const updateInjury = writeVerb({
  name: 'injuries.update',
  description: 'Update an injury (details, severity, open/closed, notes).',
  permission: 'injury.write',
  input: I.UpdateInjury,
  plan(vc, i) {
    const row = visibleRow<Injury>(vc, 'injury', i.id, 'Injury');
    if (i.onset_date) notInFuture(vc, 'onset_date', i.onset_date);
    const { id: _id, ...patch } = i;
    const change = updateRow('injury', row, defined(patch));
    return { planned: { verb: 'injuries.update', summary: `Update ${row.body_part} injury`, changes: change ? [change] : [] } };
  },
});

// ---- Screenings ----
export const listScreenings = readVerb({
  name: 'screenings.list',
  description: 'List screening results (optionally one athlete), newest first.',
  permission: 'screening.read',
  input: I.ListByAthlete,
  run(vc, i) {
    const r = listScoped<Screening>(vc, 'screening', i.athlete_id, { orderBy: [{ column: 'date', desc: true }], limit: i.limit, offset: i.offset });
    return { total: r.total, screenings: r.rows };
  },
});

export const getScreening = readVerb({
  name: 'screenings.get',
  description: 'One screening result.',
  permission: 'screening.read',
  input: I.ById,
  run: (vc, i) => visibleRow<Screening>(vc, 'screening', i.id, 'Screening'),
});

export const createScreening = writeVerb({
  name: 'screenings.create',
  description: 'Record a screening test result (e.g. weight-bearing lunge in cm).',
  permission: 'screening.write',
  input: I.CreateScreening,
  plan(vc, i) {
    const a = visibleAthlete(vc, i.athlete_id);
    notInFuture(vc, 'date', i.date);
    return { planned: { verb: 'screenings.create', summary: `Record ${i.test} (${i.value} ${i.unit}) for ${a.name}`, changes: [insertRow('screening', i)] } };
  },
});

export const updateScreening = writeVerb({
  name: 'screenings.update',
  description: 'Correct a screening result.',
  permission: 'screening.write',
  input: I.UpdateScreening,
  plan(vc, i) {
    const row = visibleRow<Screening>(vc, 'screening', i.id, 'Screening');
    if (i.date) notInFuture(vc, 'date', i.date);
    const { id: _id, ...patch } = i;
    const change = updateRow('screening', row, defined(patch));
    return { planned: { verb: 'screenings.update', summary: `Update ${row.test} screening`, changes: change ? [change] : [] } };
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

export const listRtp = readVerb({
  name: 'rtp.list',
  description: 'List RTP entries (for one injury or athlete) with stage and the three sign-offs.',
  permission: 'rtp.read',
  input: I.ListRtp,
  run(vc, i) {
    const r = listScoped<RtpEntry>(vc, 'rtp_entry', i.athlete_id, { eq: { injury_id: i.injury_id }, orderBy: [{ column: 'created_at', desc: true }], limit: i.limit, offset: i.offset });
    return { total: r.total, rtp_entries: r.rows };
  },
});

export const getRtp = readVerb({
  name: 'rtp.get',
  description: 'One RTP entry.',
  permission: 'rtp.read',
  input: I.ById,
  run: (vc, i) => visibleRow<RtpEntry>(vc, 'rtp_entry', i.id, 'RTP entry'),
});

export const createRtp = writeVerb({
  name: 'rtp.create',
  description: 'Add an RTP entry to an injury; sign-off flags sign in your own name and need that sign-off permission.',
  permission: 'rtp.write',
  input: I.CreateRtp,
  plan(vc, i) {
    const injury = visibleRow<Injury>(vc, 'injury', i.injury_id, 'Injury');
    const after = {
      injury_id: injury.id,
      athlete_id: injury.athlete_id,
      stage: i.stage,
      criteria_met: i.criteria_met,
      notes: i.notes,
      physio_signoff_by: null, physio_signoff_at: null, doctor_signoff_by: null, doctor_signoff_at: null, coach_signoff_by: null, coach_signoff_at: null,
      ...signoffPatch(vc, i),
    };
    return { planned: { verb: 'rtp.create', summary: `Add RTP entry (${i.stage}) for ${injury.body_part} injury`, changes: [insertRow('rtp_entry', after)] } };
  },
});

export const updateRtp = writeVerb({
  name: 'rtp.update',
  description: 'Update an RTP entry (stage, criteria, notes, sign-offs). Each sign-off needs its own permission.',
  permission: 'rtp.write',
  input: I.UpdateRtp,
  plan(vc, i) {
    const row = visibleRow<RtpEntry>(vc, 'rtp_entry', i.id, 'RTP entry');
    const patch = keepSameSigner(row, { ...defined({ stage: i.stage, criteria_met: i.criteria_met, notes: i.notes }), ...signoffPatch(vc, i) });
    const change = updateRow('rtp_entry', row, patch);
    return { planned: { verb: 'rtp.update', summary: `Update RTP entry (${i.stage ?? row.stage})`, changes: change ? [change] : [] } };
  },
});

function signoffVerb(role: SignoffRole) {
  return writeVerb({
    name: `rtp.signoff${role[0]!.toUpperCase()}${role.slice(1)}`,
    description: `Give (or withdraw) the ${role} sign-off on an RTP entry, in your own name.`,
    permission: `rtp.signoff_${role}`,
    input: I.SignoffRtp,
    plan(vc, i) {
      const row = visibleRow<RtpEntry>(vc, 'rtp_entry', i.id, 'RTP entry');
      const change = updateRow('rtp_entry', row, keepSameSigner(row, signoffPatch(vc, { [`${role}_signoff`]: i.signed })));
      return { planned: { verb: `rtp.signoff_${role}`, summary: `${i.signed ? 'Sign' : 'Withdraw'} ${role} RTP sign-off (${row.stage})`, changes: change ? [change] : [] } };
    },
  });
}
export const signoffPhysio = signoffVerb('physio');
export const signoffDoctor = signoffVerb('doctor');
export const signoffCoach = signoffVerb('coach');

// ---- Wellness ----
export const listWellness = readVerb({
  name: 'wellness.list',
  description: 'Daily wellness (1–5 scales) for one athlete or all, newest first.',
  permission: 'wellness.read',
  input: I.ListDated,
  run(vc, i) {
    const r = listScoped<Wellness>(vc, 'wellness', i.athlete_id, { range: { column: 'date', from: i.from, to: i.to }, orderBy: [{ column: 'date', desc: true }], limit: i.limit, offset: i.offset });
    return { total: r.total, wellness: r.rows };
  },
});

export const submitWellness = writeVerb({
  name: 'wellness.submit',
  description: "Submit one day's wellness questionnaire (replaces that day's answers if already submitted).",
  permission: 'wellness.write',
  input: I.SubmitWellness,
  plan(vc, i) {
    const athleteId = scopeAthleteId(vc.actor, i.athlete_id);
    if (!athleteId) throw new ValidationError('Say whose wellness this is: athlete_id is required (athlete accounts submit their own).', [{ path: 'athlete_id', message: 'required' }]);
    const a = visibleAthlete(vc, athleteId);
    notInFuture(vc, 'date', i.date);
    const { athlete_id: _a, ...values } = i;
    const existing = listRows<Wellness>(vc.db, 'wellness', vc.actor.orgId, { eq: { athlete_id: a.id, date: i.date }, limit: 1 })[0];
    const change = existing ? updateRow('wellness', existing, values) : insertRow('wellness', { athlete_id: a.id, ...values });
    return { planned: { verb: 'wellness.submit', summary: `Wellness for ${a.name} on ${i.date}`, changes: change ? [change] : [] } };
  },
});

// ---- Vitals ----
export const listVitals = readVerb({
  name: 'vitals.list',
  description: 'Resting heart rate (bpm) and HRV rMSSD (ms) by day, newest first.',
  permission: 'vitals.read',
  input: I.ListDated,
  run(vc, i) {
    const r = listScoped<Vitals>(vc, 'vitals', i.athlete_id, { range: { column: 'date', from: i.from, to: i.to }, orderBy: [{ column: 'date', desc: true }], limit: i.limit, offset: i.offset });
    return { total: r.total, vitals: r.rows };
  },
});

export const recordVitals = writeVerb({
  name: 'vitals.record',
  description: 'Record a day of vitals (resting HR in bpm, HRV rMSSD in ms).',
  permission: 'vitals.write',
  input: I.RecordVitals,
  plan(vc, i) {
    const a = visibleAthlete(vc, athleteFilter(vc, i.athlete_id)!);
    notInFuture(vc, 'date', i.date);
    return { planned: { verb: 'vitals.record', summary: `Vitals for ${a.name} on ${i.date}`, changes: [insertRow('vitals', i)] } };
  },
});
