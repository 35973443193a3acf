/** Shared read helpers: athlete-scoped lists and gets for the clinical tables. */
import { NotFound, ValidationError } from '../../models/errors';
import type { Athlete, Squad } from '../../models/records';
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

/** Clinical events cannot be dated in the future. @throws Validation naming the field */
export function notInFuture(vc: VerbContext, field: string, date: string): void {
  if (date > today(vc))
    throw new ValidationError(`${field} is in the future (${date}); clinical events are recorded on or before today.`, [
      { path: field, message: 'date is in the future' },
    ]);
}
