/**
 * Generic, org-scoped row access for the business tables of models/tables.ts. Column names are
 * checked against the record schema before they reach SQL; values are always bound parameters.
 */
import type { TableName } from '../../models/tables';
import { TABLES } from '../../models/tables';
import type { Db } from './db';
import { sqlite } from './sqlite';

const BOOLEAN_COLUMNS: Partial<Record<TableName, readonly string[]>> = {
  app_user: ['active'],
  pose_metric: ['view_matches_declared', 'trustworthy'],
};

/** Columns holding JSON text (encoded by `encodeValue`), parsed back on read. */
const JSON_COLUMNS: Partial<Record<TableName, readonly string[]>> = {
  pose_metric: ['conditions'],
};

/** SQLite row → record object (0/1 → boolean for boolean columns, JSON text → value for JSON columns). */
export function decodeRow<T = Record<string, unknown>>(table: TableName, row: Record<string, unknown> | undefined): T | null {
  if (!row) return null;
  const bools = BOOLEAN_COLUMNS[table];
  if (bools) for (const c of bools) if (c in row && row[c] !== null) row[c] = row[c] === 1 || row[c] === true;
  const json = JSON_COLUMNS[table];
  if (json) for (const c of json) if (typeof row[c] === 'string') row[c] = JSON.parse(row[c]);
  return row as T;
}

/** Record value → SQLite value (boolean → 0/1, object → JSON text). */
export function encodeValue(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  return v ?? null;
}

/** Columns of a table (business columns plus meta), from its schema. */
export function columnsOf(table: TableName): string[] {
  return Object.keys(TABLES[table].schema.shape);
}

function assertColumn(table: TableName, col: string): string {
  if (!columnsOf(table).includes(col)) throw new Error(`Unknown column ${table}.${col}`);
  return col;
}

/** One row by id within an org; null when missing, in another org, or soft-deleted. */
export function getRow<T = Record<string, unknown>>(db: Db, table: TableName, orgId: string, id: string, opts: { includeDeleted?: boolean } = {}): T | null {
  const sql = `SELECT * FROM ${table} WHERE id = ? AND org_id = ?${opts.includeDeleted ? '' : ' AND deleted_at IS NULL'}`;
  return decodeRow<T>(table, sqlite(db).prepare(sql).get(id, orgId) as Record<string, unknown> | undefined);
}

/** Facts the changeset rules need about a stored row, regardless of org (null if absent). */
export function rowFacts(
  db: Db,
  table: TableName,
  id: string,
): { org_id: string; version: number; athlete_id: string | null; deleted_at: string | null; row: Record<string, unknown> } | null {
  const row = decodeRow<Record<string, unknown>>(
    table,
    sqlite(db).prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id) as Record<string, unknown> | undefined,
  );
  if (!row) return null;
  const athleteCol = TABLES[table].athleteColumn;
  return {
    org_id: row.org_id as string,
    version: row.version as number,
    athlete_id: athleteCol ? ((row[athleteCol] as string | null) ?? null) : null,
    deleted_at: (row.deleted_at as string | null) ?? null,
    row,
  };
}

/**
 * The version and `updated_at` (as stored, ISO-8601 text) of one row of `orgId`, soft-deleted or
 * not; null when there is no such row in that org. A form's stale check compares both with what
 * the form showed.
 */
export function rowState(db: Db, table: TableName, orgId: string, id: string): { version: number; updated_at: string } | null {
  const r = sqlite(db).prepare(`SELECT version, updated_at FROM ${table} WHERE id = ? AND org_id = ?`).get(id, orgId) as
    { version: number; updated_at: string } | undefined;
  return r ?? null;
}

/** True when `id` is a live (not soft-deleted) row of `table` in `orgId`. */
export function liveRowInOrg(db: Db, table: TableName, orgId: string, id: string): boolean {
  return sqlite(db).prepare(`SELECT 1 FROM ${table} WHERE id = ? AND org_id = ? AND deleted_at IS NULL`).get(id, orgId) !== undefined;
}

/** Filter for {@link listRows}. All column names are validated against the table schema. */
export interface ListFilter {
  /** column = value (null → IS NULL). */
  eq?: Record<string, unknown>;
  /** column equals text, case-insensitive (SQLite `lower()`: ASCII letters) and ignoring surrounding spaces. */
  ieq?: Record<string, string>;
  /** column IN (values). */
  in?: Record<string, readonly unknown[]>;
  /** Inclusive range on a date/text column. */
  range?: { column: string; from?: string; to?: string };
  /** Case-insensitive substring match on one column. */
  like?: { column: string; text: string };
  orderBy?: { column: string; desc?: boolean }[];
  limit?: number;
  offset?: number;
  includeDeleted?: boolean;
}

function whereClause(table: TableName, orgId: string, f: ListFilter): { sql: string; params: unknown[] } {
  const parts = ['org_id = ?'];
  const params: unknown[] = [orgId];
  if (!f.includeDeleted) parts.push('deleted_at IS NULL');
  for (const [c, v] of Object.entries(f.eq ?? {})) {
    if (v === undefined) continue;
    if (v === null) parts.push(`${assertColumn(table, c)} IS NULL`);
    else {
      parts.push(`${assertColumn(table, c)} = ?`);
      params.push(encodeValue(v));
    }
  }
  for (const [c, v] of Object.entries(f.ieq ?? {})) {
    parts.push(`lower(trim(${assertColumn(table, c)})) = lower(trim(?))`);
    params.push(v);
  }
  for (const [c, vs] of Object.entries(f.in ?? {})) {
    if (vs.length === 0) {
      parts.push('0');
      continue;
    }
    parts.push(`${assertColumn(table, c)} IN (${vs.map(() => '?').join(',')})`);
    params.push(...vs.map(encodeValue));
  }
  if (f.range) {
    const c = assertColumn(table, f.range.column);
    if (f.range.from !== undefined) {
      parts.push(`${c} >= ?`);
      params.push(f.range.from);
    }
    if (f.range.to !== undefined) {
      parts.push(`${c} <= ?`);
      params.push(f.range.to);
    }
  }
  if (f.like && f.like.text) {
    parts.push(`${assertColumn(table, f.like.column)} LIKE ? ESCAPE '\\'`);
    params.push(`%${f.like.text.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
  }
  return { sql: parts.join(' AND '), params };
}

/** Rows of one org matching `f`, newest-first unless `orderBy` says otherwise. */
export function listRows<T = Record<string, unknown>>(db: Db, table: TableName, orgId: string, f: ListFilter = {}): T[] {
  const { sql, params } = whereClause(table, orgId, f);
  const order = (f.orderBy ?? [{ column: 'created_at', desc: true }]).map((o) => `${assertColumn(table, o.column)}${o.desc ? ' DESC' : ''}`).join(', ');
  const limit = Math.max(0, Math.min(f.limit ?? 1000, 100_000));
  const offset = Math.max(0, f.offset ?? 0);
  const rows = sqlite(db)
    .prepare(`SELECT * FROM ${table} WHERE ${sql} ORDER BY ${order}, id LIMIT ? OFFSET ?`)
    .all(...params, limit, offset) as Record<string, unknown>[];
  return rows.map((r) => decodeRow<T>(table, r) as T);
}

/** Count of rows matching `f` (ignores limit/offset). */
export function countRows(db: Db, table: TableName, orgId: string, f: ListFilter = {}): number {
  const { sql, params } = whereClause(table, orgId, f);
  return (
    sqlite(db)
      .prepare(`SELECT count(*) AS n FROM ${table} WHERE ${sql}`)
      .get(...params) as { n: number }
  ).n;
}

/** Daily summed session loads (AU) for one athlete up to `toDate` inclusive, oldest first. */
export function dailyLoads(db: Db, orgId: string, athleteId: string, toDate: string): { date: string; load_au: number }[] {
  return sqlite(db)
    .prepare(
      `SELECT date, SUM(load_au) AS load_au FROM session_load WHERE org_id = ? AND athlete_id = ? AND deleted_at IS NULL AND date <= ? GROUP BY date ORDER BY date`,
    )
    .all(orgId, athleteId, toDate) as { date: string; load_au: number }[];
}
