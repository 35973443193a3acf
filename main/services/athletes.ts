/** Athletes and squads. Athlete-role users see only their linked athlete. */
import { Conflict, NotFound, ValidationError } from '../../models/errors';
import { CLINICAL_EVENT_DATE_FIELDS, MIN_ATHLETE_AGE_YEARS, latestDateOfBirth } from '../../models/policy';
import type { TableName } from '../../models/tables';
import type { Athlete, Squad } from '../../models/records';
import { countRows, listRows } from '../data/rows';
import { isSelfScoped, scopeAthleteId } from './context';
import { defined, insertRow, updateRow } from './plan';
import { notInFuture, orgSquad, today, visibleAthlete } from './scope';
import type { VerbContext } from './verb';
import { readVerb, writeVerb } from './verb';

export const listAthletes = readVerb('athletes.list', {
  run(vc, i) {
    const self = isSelfScoped(vc.actor) ? scopeAthleteId(vc.actor, undefined) : undefined;
    const filter = {
      eq: { squad_id: i.squad_id, status: i.status === 'all' ? undefined : i.status, id: self },
      ...(i.search ? { like: { column: 'name', text: i.search } } : {}),
    };
    return {
      total: countRows(vc.db, 'athlete', vc.actor.orgId, filter),
      athletes: listRows<Athlete>(vc.db, 'athlete', vc.actor.orgId, { ...filter, orderBy: [{ column: 'name' }], limit: i.limit, offset: i.offset }),
    };
  },
});

export const getAthlete = readVerb('athletes.get', {
  run: (vc, i) => visibleAthlete(vc, i.id),
});

/** Words for a record kind in the date-of-birth message. */
const RECORD_WORDS: Partial<Record<TableName, string>> = {
  injury: 'injury onset',
  screening: 'screening',
  wellness: 'wellness entry',
  vitals: 'vitals reading',
  session_load: 'session load',
  capture_session: 'capture session',
};

/**
 * A date of birth must be plausible: not in the future, at least {@link MIN_ATHLETE_AGE_YEARS}
 * years ago, and (for an existing athlete) on or before the earliest of their clinical records
 * (every date of {@link CLINICAL_EVENT_DATE_FIELDS}: injury onset, screening, wellness, vitals,
 * session load, capture session), so that no record ends up dated before birth.
 * @throws Validation at `date_of_birth`, naming the record and its date
 */
function checkDateOfBirth(vc: VerbContext, dob: string, athleteId?: string): void {
  notInFuture(vc, 'date_of_birth', dob);
  const latest = latestDateOfBirth(today(vc));
  if (dob > latest)
    throw new ValidationError(
      `A date of birth of ${dob} makes the athlete younger than ${MIN_ATHLETE_AGE_YEARS}; check the year (latest allowed ${latest}). Nothing was saved.`,
      [{ path: 'date_of_birth', message: `at least ${MIN_ATHLETE_AGE_YEARS} years ago (on or before ${latest})` }],
    );
  if (!athleteId) return;
  let earliest: { date: string; table: TableName } | undefined;
  for (const [table, fields] of Object.entries(CLINICAL_EVENT_DATE_FIELDS) as [TableName, readonly string[]][]) {
    for (const column of fields) {
      const row = listRows<Record<string, unknown>>(vc.db, table, vc.actor.orgId, { eq: { athlete_id: athleteId }, orderBy: [{ column }], limit: 1 })[0];
      const date = typeof row?.[column] === 'string' ? (row[column] as string).slice(0, 10) : undefined;
      if (date && (!earliest || date < earliest.date)) earliest = { date, table };
    }
  }
  if (earliest && dob > earliest.date)
    throw new ValidationError(
      `The athlete has a ${RECORD_WORDS[earliest.table] ?? earliest.table.replace(/_/g, ' ')} dated ${earliest.date}, before the date of birth ${dob}. Nothing was saved: check the date of birth (or correct that record first).`,
      [{ path: 'date_of_birth', message: `after the earliest record (${earliest.date})` }],
    );
}

export const createAthlete = writeVerb('athletes.create', {
  plan(vc, i) {
    if (i.squad_id) orgSquad(vc, i.squad_id);
    checkDateOfBirth(vc, i.date_of_birth);
    return { planned: { verb: 'athletes.create', summary: `Add athlete ${i.name}`, changes: [insertRow('athlete', { ...i, status: 'active' })] } };
  },
});

export const updateAthlete = writeVerb('athletes.update', {
  plan(vc, i) {
    const a = visibleAthlete(vc, i.id);
    if (i.squad_id) orgSquad(vc, i.squad_id);
    if (i.date_of_birth) checkDateOfBirth(vc, i.date_of_birth, a.id);
    const { id: _id, ...patch } = i;
    const change = updateRow('athlete', a, defined(patch));
    return { planned: { verb: 'athletes.update', summary: `Update athlete ${a.name}`, changes: change ? [change] : [] } };
  },
});

export const deactivateAthlete = writeVerb('athletes.deactivate', {
  plan(vc, i) {
    const a = visibleAthlete(vc, i.id);
    // The reason is free text a person typed: it lives in its own record-text column, never in the
    // summary (summaries are generated from structured fields only; they reach the activity log,
    // Undo and any model cleared for summaries).
    const change = updateRow('athlete', a, { status: 'deactivated', deactivation_reason: i.reason });
    return { planned: { verb: 'athletes.deactivate', summary: `Deactivate athlete ${a.name}`, changes: change ? [change] : [] } };
  },
});

export const listSquads = readVerb('squads.list', {
  run(vc) {
    const squads = listRows<Squad>(vc.db, 'squad', vc.actor.orgId, { orderBy: [{ column: 'name' }] });
    if (isSelfScoped(vc.actor)) {
      const me = visibleAthlete(vc, scopeAthleteId(vc.actor, undefined)!);
      return squads.filter((s) => s.id === me.squad_id).map((s) => ({ ...s, athlete_count: 1 }));
    }
    return squads.map((s) => ({ ...s, athlete_count: countRows(vc.db, 'athlete', vc.actor.orgId, { eq: { squad_id: s.id, status: 'active' } }) }));
  },
});

export const getSquad = readVerb('squads.get', {
  run(vc, i) {
    const s = orgSquad(vc, i.id);
    if (isSelfScoped(vc.actor) && visibleAthlete(vc, scopeAthleteId(vc.actor, undefined)!).squad_id !== s.id) throw new NotFound('Squad');
    return s;
  },
});

/** Squad names are unique in an organisation, ignoring case. @throws Conflict */
function uniqueSquadName(vc: VerbContext, name: string, self?: string): void {
  const same = listRows<Squad>(vc.db, 'squad', vc.actor.orgId, { ieq: { name }, limit: 2 }).find((s) => s.id !== self);
  if (same) throw new Conflict(`A squad named "${same.name}" already exists. Nothing was saved: choose another name (or add the season to tell them apart).`);
}

export const createSquad = writeVerb('squads.create', {
  plan(vc, i) {
    uniqueSquadName(vc, i.name);
    return { planned: { verb: 'squads.create', summary: `Create squad ${i.name}`, changes: [insertRow('squad', i)] } };
  },
});

export const updateSquad = writeVerb('squads.update', {
  plan(vc, i) {
    const s = orgSquad(vc, i.id);
    if (i.name !== undefined) uniqueSquadName(vc, i.name, s.id);
    const { id: _id, ...patch } = i;
    const change = updateRow('squad', s, defined(patch));
    return { planned: { verb: 'squads.update', summary: `Update squad ${s.name}`, changes: change ? [change] : [] } };
  },
});

export const moveAthletes = writeVerb('squads.moveAthletes', {
  plan(vc, i) {
    const target = i.squad_id ? orgSquad(vc, i.squad_id) : null;
    const ids = [...new Set(i.athlete_ids)];
    const athletes = ids.map((id) => visibleAthlete(vc, id));
    const gone = athletes.filter((a) => a.status === 'deactivated');
    if (target && gone.length > 0)
      throw new ValidationError(
        `${gone.map((a) => a.name).join(', ')} ${gone.length === 1 ? 'is' : 'are'} deactivated and cannot be moved into a squad. Nothing was saved: leave ${gone.length === 1 ? 'them' : 'those athletes'} out of the move.`,
        [{ path: 'athlete_ids', message: `deactivated: ${gone.map((a) => a.name).join(', ')}` }],
      );
    const changes = athletes.flatMap((a) => {
      const change = updateRow('athlete', a, { squad_id: target?.id ?? null });
      return change ? [change] : [];
    });
    const where = target ? `to ${target.name}` : 'out of their squad';
    return {
      planned: { verb: 'squads.moveAthletes', summary: `Move ${changes.length} athlete${changes.length === 1 ? '' : 's'} ${where}`, changes },
    };
  },
});
