/**
 * What HQ judges a device's row changes against, shared by uploads (sync/write/apply.ts) and
 * proposals (sync/write/proposals.ts): each target row as HQ stores it, each update's `before`
 * rebuilt from that row (the rules judge what a change does to HQ's row, never what the device
 * says it held), the stored-row facts the rules take, and the uploading account as a rule actor.
 */
import type pg from 'pg';
import type { RowChange, RuleActor, StoredRowFacts } from '../../models/changeset';
import type { Role } from '../../models/roles';
import type { TableDef, TableName } from '../../models/tables';
import { TABLES } from '../../models/tables';
import type { Principal } from './principal';

/** One row change with HQ's stored row. */
export interface Target {
  /** As the device sent it. */
  change: RowChange;
  /** What the rules judge: an update's `before` is HQ's stored values of the fields it sets. */
  serverChange: RowChange;
  def: TableDef;
  /** HQ's row (read under the caller's tenant), or null (an insert, or no such row). */
  stored: Record<string, unknown> | null;
  /** `stored` as models/changeset.ts `authorizeChange` takes it (null when absent). */
  facts: StoredRowFacts | null;
}

/**
 * Read each change's target row in transaction `c` (`lock`: `FOR UPDATE`, for an apply) and pair it
 * with the change; inserts read their id too (an id already taken is the caller's to judge). Table
 * names must already be known (models/tables.ts).
 */
export async function readTargets(c: pg.PoolClient, changes: readonly RowChange[], opts: { lock: boolean }): Promise<Target[]> {
  const out: Target[] = [];
  for (const change of changes) {
    const def = TABLES[change.table as TableName];
    const sql = `SELECT * FROM "${def.name.replace(/"/g, '""')}" WHERE id = $1${opts.lock ? ' FOR UPDATE' : ''}`;
    const stored = (await c.query<Record<string, unknown>>(sql, [change.id])).rows[0] ?? null;
    const serverChange: RowChange =
      change.op === 'update' && stored ? { ...change, before: Object.fromEntries(Object.keys(change.after).map((k) => [k, stored[k] ?? null])) } : change;
    const facts: StoredRowFacts | null = stored
      ? { orgId: stored.org_id as string, athleteId: def.athleteColumn ? ((stored[def.athleteColumn] as string | null) ?? null) : null, row: stored }
      : null;
    out.push({ change, serverChange, def, stored, facts });
  }
  return out;
}

/** The account whose device token uploaded, as the rules' actor (as HQ re-read it at authentication). */
export function uploaderActor(principal: Principal): RuleActor {
  return {
    userId: principal.userId,
    orgId: principal.orgId,
    role: principal.role as Role,
    linkedAthleteId: principal.linkedAthleteId,
    active: principal.active,
  };
}
