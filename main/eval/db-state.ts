/**
 * What a case did to the database: a snapshot of every business row of both organisations (soft-
 * deleted rows included), the organisations and their assistant settings, the
 * changeset/activity/outbox bookkeeping, read
 * through the data layer; and the row-level difference between two snapshots. The eval judges
 * effects from this difference, never from what the model or the harness says happened.
 * The assistant's own audit tables (runs, tool calls, events, traces, usage) are not business
 * data and are not part of the snapshot.
 */
import type { TableName } from '../../models/tables';
import { TABLE_NAMES } from '../../models/tables';
import { getChangeset, listActivity, pendingOutbox } from '../data/changesets';
import type { Db } from '../data/db';
import { findOrganization, getOrgSetting } from '../data/identity';
import { CLEARANCE_SETTING_KEY, DISABLED_TOOLS_SETTING_KEY, PROVIDER_KEY_SETTING } from '../kinetix';
import { listRows } from '../data/rows';

/** A table of the snapshot: a business table, or one of the bookkeeping/identity tables. */
export type SnapTable = TableName | 'organization' | 'activity' | 'changeset' | 'outbox' | 'org_setting';

/** Organisation settings the snapshot watches (what tools are offered, what the provider may see, its key). */
export const WATCHED_SETTINGS: readonly string[] = [DISABLED_TOOLS_SETTING_KEY, CLEARANCE_SETTING_KEY, PROVIDER_KEY_SETTING];

/** One row as snapshotted. */
export interface SnapRow {
  table: SnapTable;
  org: string;
  id: string;
  row: Record<string, unknown>;
  json: string;
}

/** Every row by `table|id`. */
export type DbSnapshot = Map<string, SnapRow>;

/** One row-level effect between two snapshots. */
export interface RowEffect {
  table: SnapTable;
  org: string;
  id: string;
  op: 'insert' | 'update' | 'delete';
  /** Fields whose value differs (updates); every field (inserts). */
  fields: string[];
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

const key = (table: string, id: string) => `${table}|${id}`;

/** Snapshot both organisations' rows (business tables, activity, changesets, outbox). */
export function snapshot(db: Db, orgIds: readonly string[]): DbSnapshot {
  const out: DbSnapshot = new Map();
  const put = (table: SnapTable, org: string, id: string, row: Record<string, unknown>) =>
    out.set(key(table, id), { table, org, id, row, json: JSON.stringify(row) });
  for (const org of orgIds) {
    const o = findOrganization(db, org);
    if (o) put('organization', org, org, o as unknown as Record<string, unknown>);
    for (const k of WATCHED_SETTINGS) {
      const v = getOrgSetting<unknown>(db, org, k);
      if (v !== undefined) put('org_setting', org, `${org}:${k}`, { key: k, value: v });
    }
    for (const t of TABLE_NAMES) {
      for (const r of listRows<Record<string, unknown>>(db, t, org, { includeDeleted: true, orderBy: [{ column: 'id' }], limit: 100_000 }))
        put(t, org, String(r.id), r);
    }
    for (const a of listActivity(db, org, { limit: 100_000 })) {
      put('activity', org, a.id, a as unknown as Record<string, unknown>);
      if (a.changeset_id) {
        const c = getChangeset(db, org, a.changeset_id);
        if (c) put('changeset', org, c.id, c as unknown as Record<string, unknown>);
      }
    }
  }
  for (const ob of pendingOutbox(db, 100_000)) put('outbox', ob.org_id, String(ob.seq), ob as unknown as Record<string, unknown>);
  return out;
}

/** Row-level differences from `a` to `b`, in a stable order. */
export function diffSnapshots(a: DbSnapshot, b: DbSnapshot): RowEffect[] {
  const out: RowEffect[] = [];
  for (const [k, rb] of b) {
    const ra = a.get(k);
    if (!ra) out.push({ table: rb.table, org: rb.org, id: rb.id, op: 'insert', fields: Object.keys(rb.row), before: null, after: rb.row });
    else if (ra.json !== rb.json) {
      const fields = [...new Set([...Object.keys(ra.row), ...Object.keys(rb.row)])].filter((f) => JSON.stringify(ra.row[f]) !== JSON.stringify(rb.row[f]));
      out.push({ table: rb.table, org: rb.org, id: rb.id, op: 'update', fields, before: ra.row, after: rb.row });
    }
  }
  for (const [k, ra] of a) if (!b.has(k)) out.push({ table: ra.table, org: ra.org, id: ra.id, op: 'delete', fields: [], before: ra.row, after: null });
  return out.sort((x, y) => (x.table + x.id).localeCompare(y.table + y.id));
}

/** A one-line description of an effect for reports. */
export function describeEffect(e: RowEffect): string {
  return `${e.op} ${e.table} ${e.id.slice(-8)}${e.op === 'update' ? ` (${e.fields.join(', ')})` : ''}${e.org ? ` [org …${e.org.slice(-6)}]` : ''}`;
}
