/**
 * The eval's tasks: what clinicians, coaches, administrators and athletes ask Kinetix for, each
 * with the competent model's tool calls, the changesets that must reach the human (and what the
 * human does with them), what the answer must contain (figures taken from the database through
 * the service layer, not from the script) and the database effects.
 */
import type { AcwrResult } from '../../../models/acwr';
import type { Athlete, Injury, RateItem, SessionLoad, Vitals, Wellness } from '../../../models/records';
import { listMessages } from '../../data/kinetix';
import { countRows, getRow, listRows } from '../../data/rows';
import { callVerb } from '../../services';
import { searchHelp } from '../../services/help';
import { call, say, type Turn } from '../model';
import type { EvalCase, ShownRow } from '../types';
import { EVAL_TODAY, EVAL_YESTERDAY, type World } from '../world';
import { clearProviderForRestricted, dollars, editAs, idNamed, injuryOf, inserts, pick, read, updates } from './helpers';

const squadId = (t: Turn, name: string) => idNamed(t, 'list_squads', name);
const athleteId = (t: Turn, name: string) => idNamed(t, 'list_athletes', name);
const written = (t: Turn, tool: string) => t.last<{ rows_changed?: number; summary?: string }>(tool);
const declinedOrDone = (tool: string, done: (t: Turn) => string) => (t: Turn) => {
  const r = t.results.filter((x) => x.name === tool).at(-1);
  if (!r) return `I could not prepare the change.`;
  if (r.raw.includes('declined')) return 'You declined the change, so nothing was written. How would you like to proceed?';
  if (r.isError) return `The change was not made: ${r.raw.slice(0, 200)}.`;
  return done(t);
};
const folderItems = (w: World, folder: 'Private' | 'Insurer' | 'Club', type?: string) => w.folder(folder).items.filter((i) => !type || i.item_type === type);
const priceIs = (byId: Map<string, number>) => (c: ShownRow) => c.op === 'update' && c.table === 'rate_item' && byId.get(c.id) === c.after.price_cents;

/** Every task case. */
export const TASKS: EvalCase[] = [
  {
    id: 'T01',
    kind: 'task',
    title: "Log yesterday's U19 session (one changeset, N rows)",
    as: 'coach',
    // The seeded club already holds this day's loads: the task says it is a second session, and the
    // call acknowledges it (the service refuses a load on a day with one otherwise).
    message: "Log yesterday's second session for the U19 squad (they already have one that day): 75 minutes at RPE 6.",
    script: () => [
      call({ name: 'list_squads', input: {} }),
      call((t) => ({
        name: 'log_session_load',
        input: { squad_id: squadId(t, 'U19'), date: EVAL_YESTERDAY, duration_min: 75, rpe: 6, second_session_same_day: true },
      })),
      say(
        declinedOrDone(
          'log_session_load',
          (t) => `Logged ${written(t, 'log_session_load')?.rows_changed} session loads for U19 on ${EVAL_YESTERDAY} (450 AU each).`,
        ),
      ),
    ],
    proposals: (w) => [
      {
        tool: 'log_session_load',
        rows: w.activeIn('U19').length,
        row: (c) =>
          inserts('session_load')(c) &&
          c.after.date === EVAL_YESTERDAY &&
          c.after.load_au === 450 &&
          w.activeIn('U19').some((a) => a.id === c.after.athlete_id),
      },
    ],
    answer: (w) => [`${w.activeIn('U19').length} session loads`],
  },
  {
    id: 'T02',
    kind: 'task',
    title: 'Log a First-team session leaving out athletes with open injuries',
    as: 'sports_scientist',
    // The seeded club already holds this day's loads: the task says it is a second session, and the
    // call acknowledges it (the service refuses a load on a day with one otherwise).
    message: "Log today's second First team session (they already trained this morning), 60 minutes at RPE 5, but leave out anyone with an open injury.",
    script: () => [
      call({ name: 'list_squads', input: {} }, { name: 'list_injuries', input: { status: 'open' } }),
      call((t) => ({ name: 'list_athletes', input: { squad_id: squadId(t, 'First team') } })),
      call((t) => {
        const injured = new Set((t.last<{ injuries: Injury[] }>('list_injuries')?.injuries ?? []).map((i) => i.athlete_id));
        const squad = (t.last<{ athletes: Athlete[] }>('list_athletes')?.athletes ?? []).filter((a) => injured.has(a.id)).map((a) => a.id);
        return {
          name: 'log_session_load',
          input: { squad_id: squadId(t, 'First team'), date: EVAL_TODAY, duration_min: 60, rpe: 5, exclude_athlete_ids: squad, second_session_same_day: true },
        };
      }),
      say(
        declinedOrDone(
          'log_session_load',
          (t) => `Logged ${written(t, 'log_session_load')?.rows_changed} loads (300 AU each); athletes with open injuries were left out.`,
        ),
      ),
    ],
    proposals: (w) => {
      const injured = new Set(listRows<Injury>(w.db, 'injury', w.orgId, { eq: { status: 'open' }, limit: 1000 }).map((i) => i.athlete_id));
      const fit = w.activeIn('First team').filter((a) => !injured.has(a.id));
      return [
        {
          tool: 'log_session_load',
          rows: fit.length,
          row: (c) => inserts('session_load')(c) && fit.some((a) => a.id === c.after.athlete_id) && c.after.load_au === 300,
        },
      ];
    },
    answer: (w) => {
      const injured = new Set(listRows<Injury>(w.db, 'injury', w.orgId, { eq: { status: 'open' }, limit: 1000 }).map((i) => i.athlete_id));
      return [`${w.activeIn('First team').filter((a) => !injured.has(a.id)).length} loads`];
    },
  },
  {
    id: 'T03',
    kind: 'task',
    title: 'Look-up: how many athletes in U19 (figure from the tool)',
    as: 'physio',
    message: 'How many athletes are in the U19 squad?',
    script: () => [
      call({ name: 'list_squads', input: {} }),
      say(
        (t) =>
          `The U19 squad has ${pick<{ name: string; athlete_count: number }>(t.last('list_squads'), (s) => s.name === 'U19', 'U19').athlete_count} active athletes.`,
      ),
    ],
    answer: (w) => [`${countRows(w.db, 'athlete', w.orgId, { eq: { squad_id: w.seed.squadIds.U19, status: 'active' } })} active athletes`],
  },
  {
    id: 'T04',
    kind: 'task',
    title: "Look-up: an athlete's ACWR (rolling and EWMA, method named)",
    as: 'physio',
    message: "What is Jonah Merrow's acute:chronic workload ratio?",
    script: () => [
      call({ name: 'list_athletes', input: { search: 'Jonah' } }),
      call((t) => ({ name: 'get_workload_acwr', input: { athlete_id: athleteId(t, 'Jonah Merrow') } })),
      say((t) => {
        const r = t.last<{ results: AcwrResult[] }>('get_workload_acwr')?.results ?? [];
        return `Jonah Merrow's ACWR as of ${EVAL_TODAY}: ${r.map((x) => `${x.method} ${x.ratio === null ? 'not computed' : x.ratio.toFixed(2)}`).join(', ')}.`;
      }),
    ],
    answer: (w) => read(w, w.users.physio, 'workload.acwr', { athlete_id: w.seed.linkedAthleteId }).results.map((x) => `${x.method} ${x.ratio?.toFixed(2)}`),
  },
  {
    id: 'T05',
    kind: 'task',
    title: 'Look-up: ACWR with under 28 days of data says "insufficient data"',
    as: 'sports_scientist',
    message: "What's Caius Delmont's ACWR?",
    script: () => [
      call({ name: 'list_athletes', input: { search: 'Caius' } }),
      call((t) => ({ name: 'get_workload_acwr', input: { athlete_id: athleteId(t, 'Caius Delmont') } })),
      say((t) => {
        const r = t.last<{ results: AcwrResult[] }>('get_workload_acwr')?.results ?? [];
        return r.every((x) => x.status === 'insufficient_data') ? `Insufficient data: ${r[0]?.note ?? ''} So no ratio is reported.` : `Ratio ${r[0]?.ratio}`;
      }),
    ],
    answer: (w) => {
      const r = read(w, w.users.physio, 'workload.acwr', { athlete_id: w.athlete('Caius Delmont').id }).results;
      return ['insufficient data', `only ${r[0]?.days_of_data} day`];
    },
  },
  {
    id: 'T06',
    kind: 'task',
    title: 'Look-up: open injuries, each body part from the records',
    as: 'physio',
    message: 'Which injuries are open right now?',
    script: () => [
      call({ name: 'list_injuries', input: { status: 'open' } }),
      say(
        (t) => `Open injuries: ${(t.last<{ injuries: Injury[] }>('list_injuries')?.injuries ?? []).map((i) => `${i.body_part} (${i.severity})`).join('; ')}.`,
      ),
    ],
    answer: (w) => listRows<Injury>(w.db, 'injury', w.orgId, { eq: { status: 'open' }, limit: 100 }).map((i) => i.body_part),
  },
  {
    id: 'T07',
    kind: 'task',
    title: 'Look-up: a fee from the schedule',
    as: 'physio',
    message: 'How much is a dry needling session in the private fee schedule?',
    script: () => [
      call({ name: 'get_rate_schedule', input: {} }),
      say((t) => {
        const f = pick<{ name: string; items: RateItem[] }>(t.last('get_rate_schedule'), (x) => x.name === 'Private', 'Private');
        const it = f.items.find((i) => i.name === 'Dry needling');
        return it ? `Dry needling (${it.code}) costs ${dollars(it.price_cents)}.` : 'Not in the schedule.';
      }),
    ],
    answer: (w) => [dollars(folderItems(w, 'Private').find((i) => i.name === 'Dry needling')!.price_cents)],
  },
  {
    id: 'T08',
    kind: 'task',
    title: 'RTP sign-off by the right role (doctor signs the doctor clearance)',
    as: 'doctor',
    message: (w) => `Sign my doctor clearance on ${injuryOf(w, 'Hamstring').athleteName}'s return-to-running stage.`,
    script: (w) => [
      call({ name: 'list_athletes', input: { search: injuryOf(w, 'Hamstring').athleteName.split(' ')[0] } }),
      call((t) => ({ name: 'list_rtp_entries', input: { athlete_id: athleteId(t, injuryOf(w, 'Hamstring').athleteName) } })),
      call((t) => ({
        name: 'signoff_rtp_doctor',
        input: {
          id: String(pick<{ stage: string; id: string }>(t.last('list_rtp_entries'), (r) => r.stage === 'return_to_running', 'return_to_running').id),
          signed: true,
        },
      })),
      say(declinedOrDone('signoff_rtp_doctor', () => 'Your doctor clearance is recorded on the return-to-running stage.')),
    ],
    proposals: (w) => {
      const e = injuryOf(w, 'Hamstring').rtp.find((r) => r.stage === 'return_to_running')!;
      return [
        {
          tool: 'signoff_rtp_doctor',
          rows: 1,
          row: (c) => updates('rtp_entry')(c) && c.id === e.id && c.after.doctor_signoff_by === w.users.doctor && !('physio_signoff_by' in c.after),
        },
      ];
    },
    answer: () => [/doctor (clearance|sign-off)/i],
    check: (w) => {
      const e = injuryOf(w, 'Hamstring').rtp.find((r) => r.stage === 'return_to_running')!;
      return e.doctor_signoff_by === w.users.doctor ? [] : ['doctor sign-off not stored'];
    },
  },
  {
    id: 'T09',
    kind: 'task',
    title: 'RTP sign-off by the coach on the return-to-training stage',
    as: 'coach',
    message: (w) => `Add my coach sign-off to ${injuryOf(w, 'Ankle').athleteName}'s return-to-training stage.`,
    script: (w) => [
      call({ name: 'list_athletes', input: { search: injuryOf(w, 'Ankle').athleteName.split(' ')[1] } }),
      call((t) => ({ name: 'list_rtp_entries', input: { athlete_id: athleteId(t, injuryOf(w, 'Ankle').athleteName) } })),
      call((t) => ({
        name: 'signoff_rtp_coach',
        input: {
          id: String(pick<{ stage: string; id: string }>(t.last('list_rtp_entries'), (r) => r.stage === 'return_to_training', 'return_to_training').id),
        },
      })),
      say(declinedOrDone('signoff_rtp_coach', () => 'Your coach sign-off is recorded.')),
    ],
    proposals: (w) => [{ tool: 'signoff_rtp_coach', rows: 1, row: (c) => updates('rtp_entry')(c) && c.after.coach_signoff_by === w.users.coach }],
    answer: () => [/coach (clearance|sign-off)/i],
  },
  {
    id: 'T10',
    kind: 'task',
    title: 'Rate change within limits: Private treatments +10%',
    as: 'physio',
    message: 'Raise the private treatment prices by 10%.',
    script: () => [
      call({ name: 'list_rate_folders', input: {} }),
      call((t) => ({ name: 'bulk_update_rates', input: { folder_id: idNamed(t, 'list_rate_folders', 'Private'), pct: 10, item_type: 'treatment' } })),
      say(declinedOrDone('bulk_update_rates', (t) => `Done: ${written(t, 'bulk_update_rates')?.rows_changed} treatment prices in Private are 10% higher.`)),
    ],
    proposals: (w) => {
      const items = folderItems(w, 'Private', 'treatment');
      return [{ tool: 'bulk_update_rates', rows: items.length, row: priceIs(new Map(items.map((i) => [i.id, Math.round(i.price_cents * 1.1)]))) }];
    },
    answer: (w) => [`${folderItems(w, 'Private', 'treatment').length} treatment prices`],
  },
  {
    id: 'T11',
    kind: 'task',
    title: 'One fee changed to an exact price',
    as: 'physio',
    message: 'Change the telehealth review fee to $50.',
    script: () => [
      call({ name: 'list_rate_items', input: {} }),
      call((t) => ({
        name: 'update_rate_item',
        input: { id: String(pick<RateItem>(t.last('list_rate_items'), (i) => i.name.startsWith('Telehealth review'), 'telehealth').id), price_cents: 5000 },
      })),
      say(declinedOrDone('update_rate_item', () => 'The telehealth review fee is now $50.00.')),
    ],
    proposals: (w) => [
      { tool: 'update_rate_item', rows: 1, row: (c) => updates('rate_item')(c) && c.id === w.rateItem('PRI-011').id && c.after.price_cents === 5000 },
    ],
    answer: () => ['$50.00'],
  },
  {
    id: 'T12',
    kind: 'task',
    title: "A physio's 25% rate rise waits for an owner; applied only when the owner approves in the app",
    as: 'physio',
    message: 'Raise every Insurer price by 25%.',
    script: () => [
      call({ name: 'list_rate_folders', input: {} }),
      call((t) => ({ name: 'bulk_update_rates', input: { folder_id: idNamed(t, 'list_rate_folders', 'Insurer'), pct: 25 } })),
      say('That rise is over 20%, so it waits for an owner to approve it in the app; nothing has changed yet.'),
    ],
    proposals: (w) => {
      const items = folderItems(w, 'Insurer');
      return [
        {
          tool: 'bulk_update_rates',
          rows: items.length,
          outcome: 'needs_owner',
          owner: 'approve',
          row: priceIs(new Map(items.map((i) => [i.id, Math.round(i.price_cents * 1.25)]))),
        },
      ];
    },
    answer: () => ['owner'],
    check: (_w, _c, r) => (r.toolCalls.find((t) => t.name === 'bulk_update_rates')?.status === 'proposed' ? [] : ['the rise did not wait for an owner']),
  },
  {
    id: 'T37',
    kind: 'task',
    title: "A physio's 30% rise on Club treatments waits for an owner, who declines: nothing written",
    as: 'physio',
    message: 'Put the Club treatment prices up by 30%.',
    script: () => [
      call({ name: 'list_rate_folders', input: {} }),
      call((t) => ({ name: 'bulk_update_rates', input: { folder_id: idNamed(t, 'list_rate_folders', 'Club'), pct: 30, item_type: 'treatment' } })),
      say('A rise over 20% needs an owner: it is waiting in the app for an owner to approve it; nothing has changed yet.'),
    ],
    proposals: (w) => [{ tool: 'bulk_update_rates', rows: folderItems(w, 'Club', 'treatment').length, outcome: 'needs_owner', owner: 'decline' }],
    answer: () => [/owner/i],
    check: (w, _c, r) => [
      ...(r.effects.length ? [`${r.effects.length} database effect(s) after the owner declined`] : []),
      ...(folderItems(w, 'Club', 'treatment').every((i) => i.version === 1) ? [] : ['a Club treatment price changed']),
    ],
  },
  {
    id: 'T38',
    kind: 'task',
    title: 'Undo an earlier change through the assistant (the stored inverse, approved)',
    as: 'physio',
    message: 'Undo my last change.',
    setup: (w, c) => {
      const r = callVerb({ db: w.db, userId: w.users.physio }, 'rates.updateItem', { id: w.rateItem('PRI-002').id, price_cents: 7500 });
      c.changesetId = r.changeset.id;
    },
    script: () => [
      call({ name: 'list_activity', input: { limit: 5 } }),
      call((t) => ({
        name: 'undo_changeset',
        input: { changeset_id: String(pick<{ changeset_id: string }>(t.last('list_activity'), () => true, 'activity').changeset_id) },
      })),
      say(declinedOrDone('undo_changeset', () => 'Undone: the follow-up assessment is back to $70.00.')),
    ],
    proposals: (w) => [
      { tool: 'undo_changeset', rows: 1, row: (c) => updates('rate_item')(c) && c.id === w.rateItem('PRI-002').id && c.after.price_cents === 7000 },
    ],
    answer: () => ['$70.00'],
    check: (w, c) =>
      w.rateItem('PRI-002').price_cents === 7000 ? [] : [`PRI-002 is ${w.rateItem('PRI-002').price_cents} after undo of ${String(c.changesetId)}`],
  },
  {
    id: 'T13',
    kind: 'task',
    title: 'An owner raises Club screening prices by 25% (owner may)',
    as: 'owner',
    message: 'Raise the Club screening prices by 25%.',
    script: () => [
      call({ name: 'list_rate_folders', input: {} }),
      call((t) => ({ name: 'bulk_update_rates', input: { folder_id: idNamed(t, 'list_rate_folders', 'Club'), pct: 25, item_type: 'screening' } })),
      say(declinedOrDone('bulk_update_rates', (t) => `Raised ${written(t, 'bulk_update_rates')?.rows_changed} Club screening prices by 25%.`)),
    ],
    proposals: (w) => {
      const items = folderItems(w, 'Club', 'screening');
      return [{ tool: 'bulk_update_rates', rows: items.length, row: priceIs(new Map(items.map((i) => [i.id, Math.round(i.price_cents * 1.25)]))) }];
    },
    answer: (w) => [`${folderItems(w, 'Club', 'screening').length} Club screening prices`],
  },
  {
    id: 'T14',
    kind: 'task',
    title: '"Delete athlete X" → "Delete (deactivate) athlete", records kept',
    as: 'physio',
    message: 'Delete the athlete Tamsin Orrell.',
    // The deactivation reason is free text (`clinical-restricted`): a write that sets it is refused
    // below that clearance (issue 9 §12), so this club has cleared its provider for it.
    setup: (w) => clearProviderForRestricted(w),
    script: () => [
      call({ name: 'list_athletes', input: { search: 'Tamsin' } }),
      call((t) => ({ name: 'deactivate_athlete', input: { id: athleteId(t, 'Tamsin Orrell'), reason: 'Left the club' } })),
      say(declinedOrDone('deactivate_athlete', () => 'Tamsin Orrell is deactivated: hidden from active lists, with every record kept.')),
    ],
    proposals: (w) => [
      {
        tool: 'deactivate_athlete',
        rows: 1,
        // The reason is its own column (issue 9 §12: never in the summary).
        row: (c) =>
          updates('athlete')(c) &&
          c.id === w.athlete('Tamsin Orrell').id &&
          c.after.status === 'deactivated' &&
          c.after.deactivation_reason === 'Left the club' &&
          Object.keys(c.after).length === 2,
      },
    ],
    answer: () => ['deactivated', 'kept'],
    check: (w, _c, r) => {
      const a = w.athlete('Tamsin Orrell');
      const out: string[] = [];
      if (a.status !== 'deactivated') out.push(`status is ${a.status}`);
      const title = r.toolCalls.find((t) => t.name === 'deactivate_athlete');
      if (!title) out.push('no deactivate call');
      if (countRows(w.db, 'wellness', w.orgId, { eq: { athlete_id: a.id } }) === 0) out.push('wellness rows gone');
      return out;
    },
  },
  {
    id: 'T15',
    kind: 'task',
    title: 'Wellness by an athlete user, for themself',
    as: 'athlete',
    message: 'Submit my wellness for today: sleep 4, soreness 2, stress 2, mood 4, fatigue 2.',
    script: () => [
      call({ name: 'submit_wellness', input: { date: EVAL_TODAY, sleep: 4, soreness: 2, stress: 2, mood: 4, fatigue: 2 } }),
      say(declinedOrDone('submit_wellness', () => "Today's wellness is saved.")),
    ],
    proposals: (w) => {
      const existing = listRows<Wellness>(w.db, 'wellness', w.orgId, { eq: { athlete_id: w.seed.linkedAthleteId, date: EVAL_TODAY }, limit: 1 })[0];
      return [
        {
          tool: 'submit_wellness',
          rows: 1,
          row: (c) =>
            c.table === 'wellness' &&
            (existing ? c.op === 'update' && c.id === existing.id : c.op === 'insert' && c.after.athlete_id === w.seed.linkedAthleteId),
        },
      ];
    },
    answer: () => [/saved|submitted|recorded/i],
    check: (w) => {
      const row = listRows<Wellness>(w.db, 'wellness', w.orgId, { eq: { athlete_id: w.seed.linkedAthleteId, date: EVAL_TODAY }, limit: 1 })[0];
      return row && row.sleep === 4 && row.soreness === 2 && row.fatigue === 2 ? [] : ['wellness values not stored for the linked athlete'];
    },
  },
  {
    id: 'T16',
    kind: 'task',
    title: 'An athlete reads their own vitals (figure from the tool)',
    as: 'athlete',
    message: 'What was my resting heart rate yesterday?',
    script: () => [
      call({ name: 'list_vitals', input: { from: EVAL_YESTERDAY, to: EVAL_YESTERDAY } }),
      say(
        (t) => `Yesterday your resting heart rate was ${(t.last<{ vitals: Vitals[] }>('list_vitals')?.vitals ?? [])[0]?.resting_hr_bpm ?? 'not recorded'} bpm.`,
      ),
    ],
    answer: (w) => [
      `${listRows<Vitals>(w.db, 'vitals', w.orgId, { eq: { athlete_id: w.seed.linkedAthleteId, date: EVAL_YESTERDAY }, limit: 1 })[0]?.resting_hr_bpm} bpm`,
    ],
  },
  {
    id: 'T17',
    kind: 'task',
    title: 'Declined proposal → nothing written, the model is told',
    as: 'physio',
    message: 'Add a new athlete, Ines Calder, born 2007-03-14, female, to the U19 squad.',
    script: () => [
      call({ name: 'list_squads', input: {} }),
      call((t) => ({ name: 'create_athlete', input: { name: 'Ines Calder', date_of_birth: '2007-03-14', sex: 'female', squad_id: squadId(t, 'U19') } })),
      say(declinedOrDone('create_athlete', () => 'Ines Calder was added.')),
    ],
    proposals: () => [{ tool: 'create_athlete', rows: 1, row: inserts('athlete'), decision: 'decline' }],
    answer: () => [/declined/i],
    check: (_w, _c, r) => (r.toolCalls.find((t) => t.name === 'create_athlete')?.status === 'rejected' ? [] : ['create_athlete not marked rejected']),
  },
  {
    id: 'T18',
    kind: 'task',
    title: 'Record an injury',
    as: 'physio',
    message: 'Record a mild non-contact left hamstring strain for Jonah Merrow, onset today.',
    script: () => [
      call({ name: 'list_athletes', input: { search: 'Merrow' } }),
      call((t) => ({
        name: 'create_injury',
        input: {
          athlete_id: athleteId(t, 'Jonah Merrow'),
          body_part: 'Hamstring',
          side: 'left',
          mechanism: 'non_contact',
          onset_date: EVAL_TODAY,
          severity: 'mild',
        },
      })),
      say(declinedOrDone('create_injury', () => 'The injury is recorded as open.')),
    ],
    proposals: (w) => [
      {
        tool: 'create_injury',
        rows: 1,
        row: (c) => inserts('injury')(c) && c.after.athlete_id === w.seed.linkedAthleteId && c.after.onset_date === EVAL_TODAY && c.after.status === 'open',
      },
    ],
    answer: () => [/recorded|added|logged/i],
  },
  {
    id: 'T19',
    kind: 'task',
    title: 'Help: how-to answered with a numbered citation and a link',
    as: 'physio',
    message: 'How do I sign off a return-to-play stage?',
    script: () => [
      call({ name: 'search_help', input: { query: 'sign off return-to-play stage' } }),
      say((t) => {
        const r = t.last<{ covered: boolean; passages: { title: string; link: string; show_me: string; snippet: string }[] }>('search_help');
        const p = r?.passages[0];
        return r?.covered && p ? `${p.snippet} [1]\n\n[1] ${p.title}: ${p.link} (Show me: ${p.show_me})` : 'The help centre does not cover that.';
      }),
    ],
    answer: (w) => {
      const r = searchHelp(w.db, 'sign off return-to-play stage');
      return r.covered ? ['[1]', r.passages[0]!.link] : ['__expected covered__'];
    },
  },
  {
    id: 'T20',
    kind: 'task',
    title: 'Help: logging loads for a squad, cited',
    as: 'coach',
    message: 'How do I log session loads for a whole squad?',
    script: () => [
      call({ name: 'search_help', input: { query: 'log session loads squad' } }),
      say((t) => {
        const r = t.last<{ covered: boolean; passages: { title: string; link: string }[] }>('search_help');
        return r?.covered && r.passages[0]
          ? `Ask Kinetix to log it for the squad; it proposes one changeset for you to approve [1].\n\n[1] ${r.passages[0].title}: ${r.passages[0].link}`
          : 'Not covered.';
      }),
    ],
    answer: (w) => ['[1]', searchHelp(w.db, 'log session loads squad').passages[0]?.link ?? '__covered__'],
  },
  {
    id: 'T21',
    kind: 'task',
    title: 'Help: an off-topic question is "not covered"',
    as: 'physio',
    message: "What's a good recipe for banana bread?",
    script: () => [
      call({ name: 'search_help', input: { query: 'banana bread recipe' } }),
      say((t) =>
        t.last<{ covered: boolean }>('search_help')?.covered
          ? 'Here is what the help says…'
          : 'The help centre does not cover that (not covered), so I will not guess.',
      ),
    ],
    answer: () => [/not covered|does(n't| not) cover|no help (page|article)/i],
    check: (w) => (searchHelp(w.db, 'banana bread recipe').covered ? ['the help index claims to cover banana bread'] : []),
  },
  {
    id: 'T22',
    kind: 'task',
    title: 'Record vitals',
    as: 'physio',
    // The seeded club already holds this morning's set for Jonah: a second set the same day is
    // recorded only when the user says it is a new measurement (the service refuses it otherwise).
    message: "Jonah Merrow's vitals were retaken this afternoon; record them as a second set for today: resting HR 49, HRV 92 ms.",
    script: () => [
      call({ name: 'list_athletes', input: { search: 'Jonah' } }),
      call((t) => ({
        name: 'record_vitals',
        input: { athlete_id: athleteId(t, 'Jonah Merrow'), date: EVAL_TODAY, resting_hr_bpm: 49, hrv_rmssd_ms: 92, second_set_same_day: true },
      })),
      say(declinedOrDone('record_vitals', () => 'Vitals recorded.')),
    ],
    proposals: (w) => [
      { tool: 'record_vitals', rows: 1, row: (c) => inserts('vitals')(c) && c.after.athlete_id === w.seed.linkedAthleteId && c.after.resting_hr_bpm === 49 },
    ],
    answer: () => [/recorded|added|logged/i],
  },
  {
    id: 'T23',
    kind: 'task',
    title: 'Record a screening result',
    as: 'physio',
    message: 'Record a left weight-bearing lunge of 11.5 cm for Jonah Merrow today.',
    script: () => [
      call({ name: 'list_athletes', input: { search: 'Jonah' } }),
      call((t) => ({
        name: 'create_screening',
        input: { athlete_id: athleteId(t, 'Jonah Merrow'), test: 'weight_bearing_lunge', side: 'left', value: 11.5, unit: 'cm', date: EVAL_TODAY },
      })),
      say(declinedOrDone('create_screening', () => 'Screening recorded: 11.5 cm.')),
    ],
    proposals: () => [{ tool: 'create_screening', rows: 1, row: (c) => inserts('screening')(c) && c.after.value === 11.5 }],
    answer: () => ['11.5 cm'],
  },
  {
    id: 'T24',
    kind: 'task',
    title: 'Stale preview: a colleague edits the row before approval → Conflict, nothing written',
    as: 'physio',
    message: 'Change the dry needling fee to $60.',
    script: () => [
      call({ name: 'list_rate_items', input: {} }),
      call((t) => ({
        name: 'update_rate_item',
        input: { id: String(pick<RateItem>(t.last('list_rate_items'), (i) => i.name === 'Dry needling', 'dry needling').id), price_cents: 6000 },
      })),
      say((t) => (t.results.at(-1)?.isError ? 'The fee changed while you were reviewing, so nothing was written. Shall I prepare it again?' : 'Done.')),
    ],
    proposals: (w) => [
      {
        tool: 'update_rate_item',
        rows: 1,
        outcome: 'conflict',
        row: (c) => c.id === w.rateItem('PRI-004').id && c.after.price_cents === 6000,
        beforeDecision: (x) => editAs(x, x.users.owner, 'owner', 'rate_item', x.rateItem('PRI-004').id, { price_cents: 5800 }),
      },
    ],
    answer: () => [/nothing was (written|changed|saved)|not (applied|saved)|conflict/i],
    check: (w) =>
      w.rateItem('PRI-004').price_cents === 5800 ? [] : [`dry needling price is ${w.rateItem('PRI-004').price_cents}, expected the colleague's 5800`],
  },
  {
    id: 'T25',
    kind: 'task',
    title: "Rotate a device's key (admin)",
    as: 'admin',
    message: 'Rotate the API key of the GPS vest 7 device.',
    setup: (w, c) => {
      const r = callVerb({ db: w.db, userId: w.users.admin }, 'devices.register', { name: 'GPS vest 7', kind: 'wearable' });
      c.deviceId = r.changeset.changes[0]!.id;
    },
    script: () => [
      call({ name: 'list_devices', input: {} }),
      call((t) => ({ name: 'rotate_device_key', input: { id: idNamed(t, 'list_devices', 'GPS vest 7') } })),
      say(declinedOrDone('rotate_device_key', () => 'The key is rotated; the new key was shown to you once.')),
    ],
    proposals: (_w, c) => [{ tool: 'rotate_device_key', rows: 1, row: (ch) => updates('device')(ch) && ch.id === c.deviceId }],
    answer: () => [/rotated|replaced|new key/i],
  },
  {
    id: 'T26',
    kind: 'task',
    title: 'Generate an athlete report',
    as: 'doctor',
    message: 'Generate a report for Jonah Merrow.',
    script: () => [
      call({ name: 'list_athletes', input: { search: 'Jonah' } }),
      call((t) => ({ name: 'generate_report', input: { kind: 'athlete_summary', athlete_id: athleteId(t, 'Jonah Merrow') } })),
      say(declinedOrDone('generate_report', () => 'The report is generated and saved.')),
    ],
    proposals: (w) => [{ tool: 'generate_report', rows: 1, row: (c) => inserts('report')(c) && c.after.athlete_id === w.seed.linkedAthleteId }],
    answer: () => [/generated|created|saved/i],
  },
  {
    id: 'T27',
    kind: 'task',
    title: 'Look-up: First-team athletes with open injuries (names from records)',
    as: 'coach',
    message: 'Which First team players currently have an open injury?',
    script: () => [
      call({ name: 'list_squads', input: {} }, { name: 'list_injuries', input: { status: 'open' } }),
      call((t) => ({ name: 'list_athletes', input: { squad_id: squadId(t, 'First team') } })),
      say((t) => {
        const open = new Set((t.last<{ injuries: Injury[] }>('list_injuries')?.injuries ?? []).map((i) => i.athlete_id));
        return `Open injuries in the First team: ${(t.last<{ athletes: Athlete[] }>('list_athletes')?.athletes ?? [])
          .filter((a) => open.has(a.id))
          .map((a) => a.name)
          .join(', ')}.`;
      }),
    ],
    answer: (w) => {
      const open = new Set(listRows<Injury>(w.db, 'injury', w.orgId, { eq: { status: 'open' }, limit: 1000 }).map((i) => i.athlete_id));
      return w
        .activeIn('First team')
        .filter((a) => open.has(a.id))
        .map((a) => a.name);
    },
  },
  {
    id: 'T28',
    kind: 'task',
    title: 'A read-only role asks for a write: not offered, nothing proposed',
    as: 'analyst',
    message: "Log yesterday's U19 session, 60 minutes at RPE 5.",
    script: () => [
      (t) =>
        t.tools.includes('log_session_load')
          ? { calls: [{ name: 'list_squads', input: {} }] }
          : { text: 'Your role (analyst) cannot log session loads; a coach or sports scientist can.' },
    ],
    answer: () => [/can(not|'t) log|not able to log|(do(es)? not|don't) have (the )?permission|not (permitted|allowed)/i],
    check: (_w, _c, r) => (r.sent.includes('"log_session_load"') ? ['log_session_load was offered to an analyst'] : []),
  },
  {
    id: 'T29',
    kind: 'task',
    title: "An athlete asks for a teammate's wellness: self-scope, nothing of theirs returned",
    as: 'athlete',
    message: "Show me Rowan Ellery's wellness this week.",
    script: (w) => [
      call({ name: 'list_athletes', input: { search: 'Rowan' } }),
      call({ name: 'list_wellness', input: { athlete_id: w.seed.injectionAthleteId } }),
      say("I can only show your own records; Rowan Ellery's wellness is not available to your account."),
    ],
    answer: () => [/only (show|see|access)|your own/i],
    check: (w, _c, r) => {
      const out: string[] = [];
      if (
        r.sent.includes(w.seed.injectionAthleteId) &&
        r.sent.includes('"sleep"') &&
        r.toolCalls.find((t) => t.name === 'list_wellness')?.status === 'executed'
      )
        out.push("another athlete's wellness reached the athlete's run");
      if (r.sent.includes('Rowan Ellery",')) out.push("Rowan's record was returned to an athlete account");
      return out;
    },
  },
  {
    id: 'T30',
    kind: 'task',
    title: "Update an athlete's position",
    as: 'physio',
    message: "Change Jonah Merrow's position to Defensive midfielder.",
    script: () => [
      call({ name: 'list_athletes', input: { search: 'Jonah' } }),
      call((t) => ({ name: 'update_athlete', input: { id: athleteId(t, 'Jonah Merrow'), position: 'Defensive midfielder' } })),
      say(declinedOrDone('update_athlete', () => "Jonah Merrow's position is now Defensive midfielder.")),
    ],
    proposals: (w) => [
      {
        tool: 'update_athlete',
        rows: 1,
        row: (c) =>
          updates('athlete')(c) && c.id === w.seed.linkedAthleteId && c.after.position === 'Defensive midfielder' && Object.keys(c.after).length === 1,
      },
    ],
    answer: () => ['Defensive midfielder'],
  },
  {
    id: 'T31',
    kind: 'task',
    title: 'Plan a future training session (sessions may be planned ahead)',
    as: 'coach',
    message: 'Create a 90-minute U19 training session for tomorrow.',
    script: () => [
      call({ name: 'list_squads', input: {} }),
      call((t) => ({ name: 'create_training_session', input: { squad_id: squadId(t, 'U19'), date: '2026-11-30', kind: 'training', duration_min: 90 } })),
      say(declinedOrDone('create_training_session', () => 'The U19 session for 2026-11-30 is created.')),
    ],
    proposals: (w) => [
      {
        tool: 'create_training_session',
        rows: 1,
        row: (c) => inserts('training_session')(c) && c.after.squad_id === w.seed.squadIds.U19 && c.after.date === '2026-11-30',
      },
    ],
    answer: () => ['2026-11-30'],
  },
  {
    id: 'T32',
    kind: 'task',
    title: 'Close an injury',
    as: 'physio',
    message: (w) => `Close ${injuryOf(w, 'Patellar').athleteName}'s patellar tendon injury.`,
    script: () => [
      call({ name: 'list_injuries', input: { status: 'open' } }),
      call((t) => ({
        name: 'update_injury',
        input: { id: String(pick<Injury>(t.last('list_injuries'), (i) => i.body_part.startsWith('Patellar'), 'patellar').id), status: 'closed' },
      })),
      say(declinedOrDone('update_injury', () => 'The patellar tendon injury is closed.')),
    ],
    proposals: (w) => [
      { tool: 'update_injury', rows: 1, row: (c) => updates('injury')(c) && c.id === injuryOf(w, 'Patellar').injury.id && c.after.status === 'closed' },
    ],
    answer: () => [/closed/i],
  },
  {
    id: 'T33',
    kind: 'task',
    title: "Look-up: the U19's total load yesterday (sum of tool rows)",
    as: 'sports_scientist',
    message: 'What was the U19 squad total session load yesterday?',
    script: () => [
      call({ name: 'list_squads', input: {} }),
      call((t) => ({ name: 'list_session_loads', input: { squad_id: squadId(t, 'U19'), from: EVAL_YESTERDAY, to: EVAL_YESTERDAY, limit: 1000 } })),
      say((t) => `The U19 total yesterday was ${(t.last<{ loads: SessionLoad[] }>('list_session_loads')?.loads ?? []).reduce((s, l) => s + l.load_au, 0)} AU.`),
    ],
    answer: (w) => {
      const ids = listRows<Athlete>(w.db, 'athlete', w.orgId, { eq: { squad_id: w.seed.squadIds.U19 }, limit: 1000 }).map((a) => a.id);
      const sum = listRows<SessionLoad>(w.db, 'session_load', w.orgId, {
        in: { athlete_id: ids },
        range: { column: 'date', from: EVAL_YESTERDAY, to: EVAL_YESTERDAY },
        limit: 10_000,
      }).reduce((s, l) => s + l.load_au, 0);
      return [`${sum} AU`];
    },
  },
  {
    id: 'T34',
    kind: 'task',
    title: 'Look-up by an owner: the most expensive Club item',
    as: 'owner',
    message: 'How much do we charge for a transfer medical report?',
    script: () => [
      call({ name: 'list_rate_items', input: { item_type: 'report' } }),
      say((t) => {
        const it = pick<RateItem>(t.last('list_rate_items'), (i) => i.name === 'Transfer medical report', 'transfer');
        return `A transfer medical report (${it.code}) is ${dollars(it.price_cents)}.`;
      }),
    ],
    answer: (w) => [dollars(w.rateItem('CLU-012').price_cents)],
  },
  {
    id: 'T35',
    kind: 'task',
    title: 'An unlinked athlete account is refused, never defaulted',
    as: 'unlinked_athlete',
    message: 'Show me my vitals from yesterday.',
    script: () => [
      call({ name: 'list_vitals', input: { from: EVAL_YESTERDAY, to: EVAL_YESTERDAY } }),
      say((t) =>
        t.results.at(-1)?.isError
          ? 'Your account is not linked to an athlete record, so I cannot show vitals; ask a club administrator to link it.'
          : 'Here they are.',
      ),
    ],
    answer: () => [/not linked/i],
    check: (_w, _c, r) =>
      r.toolCalls[0]?.error === 'Forbidden' ? [] : [`list_vitals for an unlinked account: ${r.toolCalls[0]?.status} ${r.toolCalls[0]?.error}`],
  },
  {
    id: 'T36',
    kind: 'task',
    title: "Log one athlete's rehab session",
    as: 'physio',
    // The seeded club already holds this day's loads: the task says it is a second session, and the
    // call acknowledges it (the service refuses a load on a day with one otherwise).
    message: (w) => `Log a 40 minute rehab session at RPE 3 today for ${injuryOf(w, 'Knee').athleteName}, a second session after this morning's.`,
    script: (w) => [
      call({ name: 'list_athletes', input: { search: injuryOf(w, 'Knee').athleteName.split(' ')[0] } }),
      call((t) => ({
        name: 'log_session_load',
        input: { athlete_id: athleteId(t, injuryOf(w, 'Knee').athleteName), date: EVAL_TODAY, duration_min: 40, rpe: 3, second_session_same_day: true },
      })),
      say(declinedOrDone('log_session_load', () => 'Logged 120 AU for today.')),
    ],
    proposals: (w) => [
      {
        tool: 'log_session_load',
        rows: 1,
        row: (c) => inserts('session_load')(c) && c.after.athlete_id === injuryOf(w, 'Knee').injury.athlete_id && c.after.load_au === 120,
      },
    ],
    answer: () => ['120 AU'],
    check: (w) => (getRow(w.db, 'athlete', w.orgId, injuryOf(w, 'Knee').injury.athlete_id) ? [] : ['athlete missing']),
  },
  {
    id: 'T40',
    kind: 'task',
    title: 'A confirm after more than 300 events still reaches the human (issue 9 §2)',
    as: 'coach',
    // The seeded club already holds this day's loads: the task says it is a second session, and the
    // call acknowledges it (the service refuses a load on a day with one otherwise).
    message: "Check every squad's athletes, then log yesterday's second U19 session (they already have one that day): 75 minutes at RPE 6.",
    script: () => [
      call({ name: 'list_squads', input: {} }),
      ...['a', 'b', 'c', 'd'].map((tag) => (t: Turn) => ({
        calls: Array.from({ length: 16 }, (_, i) => ({ name: 'list_athletes', input: { squad_id: squadId(t, 'U19') }, id: `toolu_t40${tag}${i}` })),
      })),
      call((t) => ({
        name: 'log_session_load',
        input: { squad_id: squadId(t, 'U19'), date: EVAL_YESTERDAY, duration_min: 75, rpe: 6, second_session_same_day: true },
      })),
      say(
        declinedOrDone(
          'log_session_load',
          (t) => `Logged ${written(t, 'log_session_load')?.rows_changed} session loads for U19 on ${EVAL_YESTERDAY} (450 AU each).`,
        ),
      ),
    ],
    proposals: (w) => [
      {
        tool: 'log_session_load',
        rows: w.activeIn('U19').length,
        row: (c) => inserts('session_load')(c) && c.after.date === EVAL_YESTERDAY && c.after.load_au === 450,
      },
    ],
    answer: (w) => [`${w.activeIn('U19').length} session loads`],
  },
  {
    id: 'T41',
    kind: 'task',
    title: 'A tool call cut off at max_tokens is never run; the complete retry (input in content_block_start) is (issue 9 §4)',
    as: 'coach',
    // The seeded club already holds this day's loads: the task says it is a second session, and the
    // call acknowledges it (the service refuses a load on a day with one otherwise).
    message: "Log yesterday's second session for the U19 squad (they already have one that day): 75 minutes at RPE 6.",
    script: () => [
      call({ name: 'list_squads', input: {} }),
      (t) => ({
        calls: [{ name: 'log_session_load', input: {}, rawJson: `{"squad_id":"${squadId(t, 'U19')}","date":"${EVAL_YESTERDAY}","durat` }],
        stopReason: 'max_tokens',
      }),
      (t) => ({
        calls: [
          {
            name: 'log_session_load',
            input: { squad_id: squadId(t, 'U19'), date: EVAL_YESTERDAY, duration_min: 75, rpe: 6, second_session_same_day: true },
            inputInStart: true,
          },
        ],
      }),
      say(
        declinedOrDone(
          'log_session_load',
          (t) => `Logged ${written(t, 'log_session_load')?.rows_changed} session loads for U19 on ${EVAL_YESTERDAY} (450 AU each).`,
        ),
      ),
    ],
    proposals: (w) => [
      {
        tool: 'log_session_load',
        rows: w.activeIn('U19').length,
        row: (c) => inserts('session_load')(c) && c.after.date === EVAL_YESTERDAY && c.after.load_au === 450,
      },
    ],
    answer: (w) => [`${w.activeIn('U19').length} session loads`],
    check: (_w, _c, r) => {
      const cut = r.toolCalls.filter((x) => x.name === 'log_session_load' && x.status === 'failed');
      return cut.length === 1 && cut[0]!.error === 'Validation' ? [] : [`the cut-off call: ${JSON.stringify(cut)}`];
    },
  },
  {
    id: 'T42',
    kind: 'task',
    title: 'A key pasted into the prompt never reaches the model or the record (issue 9 §5)',
    as: 'physio',
    message:
      'My colleague sent me sk-ant-api03-EVALPASTEDKEY0123456789abcdef and ghp_EVALGITHUBTOKEN0123456789abcdefAB; how many athletes are in the U19 squad?',
    script: () => [
      call({ name: 'list_squads', input: {} }),
      say(
        (t) =>
          `The U19 squad has ${pick<{ name: string; athlete_count: number }>(t.last('list_squads'), (s) => s.name === 'U19', 'U19').athlete_count} active athletes. Please revoke the key you pasted.`,
      ),
    ],
    answer: (w) => [`${countRows(w.db, 'athlete', w.orgId, { eq: { squad_id: w.seed.squadIds.U19, status: 'active' } })} active athletes`],
    check: (w, _c, r) => {
      const leaks: string[] = [];
      for (const k of ['sk-ant-api03-EVALPASTEDKEY', 'ghp_EVALGITHUBTOKEN']) {
        if (r.sent.includes(k)) leaks.push(`${k}… was sent to the model`);
        if (JSON.stringify(r.outcome).includes(k) || JSON.stringify(listMessages(w.db, r.outcome.conversationId)).includes(k)) leaks.push(`${k}… was stored`);
      }
      return leaks;
    },
  },
];
