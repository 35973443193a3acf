/** Shared read helpers: athlete-scoped lists and gets for the clinical tables. */
import { NotFound, ValidationError } from '../../models/errors';
import type { Athlete, Squad } from '../../models/records';
import { EARLIEST_CLINICAL_DATE, latestClinicalDate } from '../../models/policy';
import type { TableName } from '../../models/tables';
import { TABLES } from '../../models/tables';
import type { ListFilter } from '../data/rows';
import { countRows, getRow, listRows } from '../data/rows';
import { isSelfScoped, scopeAthleteId } from './context';
import type { VerbContext } from './verb';

/** Load an athlete the actor may see (self-scope, tenant), including deactivated ones. @throws NotFound, Forbidden */
export function visibleAthlete(vc: VerbContext, id: string): Athlete {
  const scoped = scopeAthleteId(vc.actor, id);
  const a = scoped ? getRow<Athlete>(vc.db, 'athlete', vc.actor.orgId, scoped) : null;
  if (!a) throw new NotFound('Athlete');
  return a;
}

/** Load a squad of the actor's org. @throws NotFound */
export function orgSquad(vc: VerbContext, id: string): Squad {
  const s = getRow<Squad>(vc.db, 'squad', vc.actor.orgId, id);
  if (!s) throw new NotFound('Squad');
  return s;
}

/**
 * The athlete filter for a list: the requested athlete (checked visible), or for athlete-role
 * users their linked athlete whatever was asked. @throws NotFound, Forbidden
 */
export function athleteFilter(vc: VerbContext, requested: string | undefined): string | undefined {
  const id = scopeAthleteId(vc.actor, requested);
  if (id) visibleAthlete(vc, id);
  return id;
}

/** A row of an athlete-scoped table that the actor may see. @throws NotFound */
export function visibleRow<T extends Record<string, unknown>>(
  vc: VerbContext,
  table: TableName,
  id: string,
  what: string,
): T & { id: string; version: number } {
  const row = getRow<T & { id: string; version: number }>(vc.db, table, vc.actor.orgId, id);
  if (!row) throw new NotFound(what);
  const col = TABLES[table].athleteColumn;
  if (col && isSelfScoped(vc.actor) && row[col] !== scopeAthleteId(vc.actor, undefined)) throw new NotFound(what);
  return row;
}

/** List rows of an athlete-scoped table, newest first by `dateColumn`, with total. */
export function listScoped<T>(
  vc: VerbContext,
  table: TableName,
  athleteId: string | undefined,
  f: ListFilter & { limit: number; offset: number },
): { total: number; rows: T[] } {
  const filter: ListFilter = { ...f, eq: { ...(f.eq ?? {}), athlete_id: athleteFilter(vc, athleteId) } };
  return { total: countRows(vc.db, table, vc.actor.orgId, filter), rows: listRows<T>(vc.db, table, vc.actor.orgId, filter) };
}

/** Today's date (YYYY-MM-DD, UTC) of the verb context's clock. */
export function today(vc: VerbContext): string {
  return vc.now.toISOString().slice(0, 10);
}

/**
 * A clinical event's date must be plausible: not before `EARLIEST_CLINICAL_DATE` (1950-01-01),
 * not before the athlete's date of birth (when `athlete` is given), and not after today plus
 * `CLINICAL_DATE_GRACE_DAYS` (1 day, UTC: a clinic east of UTC is already on the next date).
 * Bounds from models/policy.ts, which every door's policy check shares.
 * @throws Validation naming the field
 */
export function notInFuture(vc: VerbContext, field: string, date: string, athlete?: Pick<Athlete, 'name' | 'date_of_birth'>): void {
  const latest = latestClinicalDate(today(vc));
  if (date > latest)
    throw new ValidationError(`${field} is in the future (${date}); clinical events are recorded on or before today (${today(vc)}).`, [
      { path: field, message: `date is in the future (latest allowed ${latest})` },
    ]);
  if (date < EARLIEST_CLINICAL_DATE)
    throw new ValidationError(`${field} ${date} is implausibly far in the past; clinical records start on or after ${EARLIEST_CLINICAL_DATE}.`, [
      { path: field, message: `date before ${EARLIEST_CLINICAL_DATE}` },
    ]);
  if (athlete && date < athlete.date_of_birth)
    throw new ValidationError(`${field} ${date} is before ${athlete.name}'s date of birth (${athlete.date_of_birth}).`, [
      { path: field, message: 'date before the date of birth' },
    ]);
}

/**
 * The athlete a new record is about to be added for: visible to the actor and not deactivated.
 * @throws NotFound, Validation (deactivated)
 */
export function activeAthlete(vc: VerbContext, id: string): Athlete {
  const a = visibleAthlete(vc, id);
  if (a.status === 'deactivated')
    throw new ValidationError(`${a.name} is deactivated, so no new records can be added for them (their history stays readable). Nothing was saved.`, [
      { path: 'athlete_id', message: 'athlete is deactivated' },
    ]);
  return a;
}
