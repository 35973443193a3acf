/**
 * Device sync state and the replica writes of the sync engine (main/sync/): the only SQL of
 * device sync. Tables from migrations 0009 and 0012 (see their headers): enrolment, personal HQ sign-ins of other users, per-shape state, per-outbox
 * upload outcomes, the server's last known rows under optimistic local changes, seen txids.
 *
 * Rules kept here:
 * - A shape batch's rows and its handle/offset are written in one transaction (`applyShapeBatch`),
 *   so a restart resumes exactly where the last committed batch ended.
 * - A row that a not-yet-synced local changeset touched is *optimistic*: incoming server values go
 *   to `sync_server_row`, not the live table, until that changeset is synced (its txid delivered
 *   on every table it touched), rejected or discarded; then the live row becomes the server row
 *   (`releaseChangeset`). No flicker back to an old value, no local write lost.
 * - Foreign keys are not enforced while replica rows are written: each table is its own shape
 *   stream, so a row can arrive before the row it points at (HQ, the system of record, enforces
 *   them). They stay enforced for local writes.
 */
import type { RowChange } from '../../models/changeset';
import { canonicalJson, NOW_PLACEHOLDER } from '../../models/changeset';
import { createHash } from 'node:crypto';
import { AppError, Conflict, NotFound } from '../../models/errors';
import type { ChangesetOutcome, CurrentRow, ProposalEvent, RejectionReason, SyncConflict, UploadedChangeset, UploadedRowChange } from '../../models/sync';
import { dependentRejection, uploadHashPayload } from '../../models/sync';
import type Database from 'better-sqlite3';
import { openSiblingConnection, type Db } from './db';
import { bindConnection, sqlite, statement } from './sqlite';

/** The enrolment of this device file (one HQ, one user). The token is sealed (AES-256-GCM JSON). */
export interface SyncEnrolmentRow {
  hq_url: string;
  device_id: string;
  device_name: string;
  org_id: string;
  org_name: string;
  user_id: string;
  user_email: string;
  user_role: string;
  token_sealed: string;
  token_hint: string;
  token_expires_at: string | null;
  enrolled_at: string;
  last_synced_at: string | null;
  last_error_code: string | null;
  last_error_message: string | null;
  last_error_at: string | null;
}

/** Where one table's shape stands. `offset` is Electric's `-1` before the first batch. */
export interface ShapeState {
  tbl: string;
  handle: string | null;
  offset: string;
  needs_reset: boolean;
  forbidden: boolean;
  rows_applied: number;
  up_to_date_at: string | null;
}

/** One replica write decoded from a shape message: the row's columns (device encoding) or a delete. */
export type ReplicaOp = { op: 'upsert'; id: string; row: Record<string, unknown> } | { op: 'delete'; id: string };

// ---------------------------------------------------------------------------------------------
// Enrolment and status

/** This file's enrolment, or null when it was never enrolled. */
export function getEnrolment(db: Db): SyncEnrolmentRow | null {
  return (sqlite(db).prepare('SELECT * FROM sync_enrolment WHERE id = 1').get() as SyncEnrolmentRow | undefined) ?? null;
}

/**
 * Store the enrolment (replacing an earlier one) and start every shape from scratch: a new HQ or
 * user means a new replica. Upload outcomes of the old enrolment are kept.
 */
export function saveEnrolment(db: Db, e: Omit<SyncEnrolmentRow, 'last_synced_at' | 'last_error_code' | 'last_error_message' | 'last_error_at'>): void {
  sqlite(db)
    .transaction(() => {
      sqlite(db).prepare('DELETE FROM sync_enrolment').run();
      sqlite(db)
        .prepare(
          `INSERT INTO sync_enrolment (id, hq_url, device_id, device_name, org_id, org_name, user_id, user_email, user_role, token_sealed, token_hint, token_expires_at, enrolled_at)
           VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          e.hq_url,
          e.device_id,
          e.device_name,
          e.org_id,
          e.org_name,
          e.user_id,
          e.user_email,
          e.user_role,
          e.token_sealed,
          e.token_hint,
          e.token_expires_at,
          e.enrolled_at,
        );
      sqlite(db).prepare('DELETE FROM sync_shape').run();
      sqlite(db).prepare('DELETE FROM sync_seen_txid').run();
      sqlite(db).prepare('DELETE FROM sync_user_token').run(); // personal sign-ins were at the old HQ
    })
    .immediate();
}

/** A user's own HQ sign-in on this device (migration 0012): their device token, sealed. */
export interface SyncUserTokenRow {
  user_id: string;
  hq_device_id: string;
  token_sealed: string;
  token_hint: string;
  token_expires_at: string | null;
  signed_in_at: string;
}

/** Store (or replace) `row.user_id`'s own HQ sign-in on this device. */
export function saveUserToken(db: Db, row: SyncUserTokenRow): void {
  sqlite(db)
    .prepare(
      `INSERT OR REPLACE INTO sync_user_token (user_id, hq_device_id, token_sealed, token_hint, token_expires_at, signed_in_at) VALUES (?, ?, ?, ?, ?, ?)`,
    )
    .run(row.user_id, row.hq_device_id, row.token_sealed, row.token_hint, row.token_expires_at, row.signed_in_at);
}

/** `userId`'s own HQ sign-in on this device, or null. */
export function getUserToken(db: Db, userId: string): SyncUserTokenRow | null {
  return (sqlite(db).prepare('SELECT * FROM sync_user_token WHERE user_id = ?').get(userId) as SyncUserTokenRow | undefined) ?? null;
}

/** Forget `userId`'s own HQ sign-in on this device (HQ refused its token). */
export function deleteUserToken(db: Db, userId: string): void {
  sqlite(db).prepare('DELETE FROM sync_user_token WHERE user_id = ?').run(userId);
}

/** Record the end of a sync pass: success (clears the last error) or a typed error. */
export function recordSyncOutcome(db: Db, outcome: { ok: true; at: string } | { ok: false; at: string; code: string; message: string }): void {
  if (outcome.ok) {
    sqlite(db)
      .prepare('UPDATE sync_enrolment SET last_synced_at = ?, last_error_code = NULL, last_error_message = NULL, last_error_at = NULL WHERE id = 1')
      .run(outcome.at);
  } else {
    sqlite(db)
      .prepare('UPDATE sync_enrolment SET last_error_code = ?, last_error_message = ?, last_error_at = ? WHERE id = 1')
      .run(outcome.code, outcome.message, outcome.at);
  }
}

/**
 * Uploads waiting (outbox changesets not yet accepted or refused by HQ, plus proposal events not
 * yet reported: migration 0015), and conflicts (rejected, not discarded).
 */
export function syncCounts(db: Db): { pending: number; conflicts: number } {
  const pending = (
    sqlite(db)
      .prepare(`SELECT (SELECT count(*) FROM outbox WHERE status = 'pending') + (SELECT count(*) FROM sync_proposal_event WHERE status = 'pending') AS n`)
      .get() as { n: number }
  ).n;
  const conflicts = (sqlite(db).prepare(`SELECT count(*) AS n FROM sync_upload WHERE state = 'rejected'`).get() as { n: number }).n;
  return { pending, conflicts };
}

// ---------------------------------------------------------------------------------------------
// Shapes (read path)

interface ShapeRow {
  tbl: string;
  handle: string | null;
  shape_offset: string;
  needs_reset: number;
  forbidden: number;
  rows_applied: number;
  up_to_date_at: string | null;
}
const toState = (r: ShapeRow): ShapeState => ({
  tbl: r.tbl,
  handle: r.handle,
  offset: r.shape_offset,
  needs_reset: r.needs_reset === 1,
  forbidden: r.forbidden === 1,
  rows_applied: r.rows_applied,
  up_to_date_at: r.up_to_date_at,
});

/**
 * The shape state of `tbl` (created, from scratch, when missing). Only a missing row is written:
 * reading an existing one takes no write lock, so it never waits for the shape worker's apply
 * transaction on its own connection.
 */
export function shapeState(db: Db, tbl: string): ShapeState {
  const row = stmt(db, 'SELECT * FROM sync_shape WHERE tbl = ?').get(tbl) as ShapeRow | undefined;
  if (row) return toState(row);
  stmt(db, `INSERT OR IGNORE INTO sync_shape (tbl, updated_at) VALUES (?, ?)`).run(tbl, new Date().toISOString());
  return toState(stmt(db, 'SELECT * FROM sync_shape WHERE tbl = ?').get(tbl) as ShapeRow);
}

/**
 * Create the missing shape states of `tables` in one transaction (a pass does this before it
 * starts any stream, so that no later `shapeState` call has to write while a shape is applied).
 */
export function ensureShapeStates(db: Db, tables: readonly string[]): void {
  const missing = tables.filter((t) => !stmt(db, 'SELECT 1 FROM sync_shape WHERE tbl = ?').get(t));
  if (missing.length === 0) return;
  const at = new Date().toISOString();
  sqlite(db).transaction(() => missing.forEach((t) => stmt(db, `INSERT OR IGNORE INTO sync_shape (tbl, updated_at) VALUES (?, ?)`).run(t, at)))();
}

/** Every shape's state. */
export function listShapeStates(db: Db): ShapeState[] {
  return (sqlite(db).prepare('SELECT * FROM sync_shape ORDER BY tbl').all() as ShapeRow[]).map(toState);
}

/**
 * `must-refetch`: forget the handle and offset; the next batch starts from scratch and replaces
 * the table's synced rows (local optimistic rows are kept).
 */
export function resetShape(db: Db, tbl: string): void {
  sqlite(db)
    .prepare(`UPDATE sync_shape SET handle = NULL, shape_offset = '-1', needs_reset = 1, updated_at = ? WHERE tbl = ?`)
    .run(new Date().toISOString(), tbl);
}

const columnCache = new WeakMap<Db, Map<string, Set<string>>>();
/** Writable (non-generated) columns of a local table. */
function tableColumns(db: Db, tbl: string): Set<string> {
  let m = columnCache.get(db);
  if (!m) columnCache.set(db, (m = new Map()));
  let cols = m.get(tbl);
  if (!cols) {
    cols = new Set((sqlite(db).prepare(`SELECT name FROM pragma_table_info(?)`).all(tbl) as { name: string }[]).map((r) => r.name));
    if (cols.size === 0) throw new AppError({ code: 'Internal', message: `The local database has no table ${tbl}.` });
    m.set(tbl, cols);
  }
  return cols;
}

/** A value in SQLite's encoding: boolean → 0/1, bigint → number, object → JSON text. */
function sqliteValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}

const stmt = statement;

interface UpsertPlan {
  stmt: Database.Statement<unknown[]>;
  /** The row's keys that are columns of the table, in statement order. */
  cols: string[];
  /** The row's keys the plan was made for, in the row's order. */
  keys: string[];
}
const upsertPlans = new WeakMap<Db, Map<string, UpsertPlan>>();
/** The plan the previous row of each table used (a shape's rows all carry the same keys). */
const lastPlans = new WeakMap<Db, Map<string, UpsertPlan>>();

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Upsert `row` (only the columns it carries and the table has) into the live table. The prepared
 * statement is cached per table and set of keys (a shape's rows all carry the same keys: the
 * previous row's plan is tried first, compared key by key), so the per-row work is building the
 * values and one `run`.
 */
function upsertLive(db: Db, tbl: string, row: Record<string, unknown>): void {
  let last = lastPlans.get(db);
  if (!last) lastPlans.set(db, (last = new Map()));
  const keys = Object.keys(row);
  let plan = last.get(tbl);
  if (!plan || !sameKeys(plan.keys, keys)) plan = upsertPlan(db, tbl, keys);
  last.set(tbl, plan);
  const values = new Array<unknown>(plan.cols.length);
  for (let i = 0; i < plan.cols.length; i++) values[i] = sqliteValue(row[plan.cols[i]!]);
  plan.stmt.run(values);
}

function upsertPlan(db: Db, tbl: string, keys: string[]): UpsertPlan {
  let plans = upsertPlans.get(db);
  if (!plans) upsertPlans.set(db, (plans = new Map()));
  const sig = `${tbl}\u0000${keys.join('\u0000')}`;
  let plan = plans.get(sig);
  if (!plan) {
    const cols = tableColumns(db, tbl);
    const present = keys.filter((c) => cols.has(c));
    if (!present.includes('id')) throw new AppError({ code: 'Internal', message: `A ${tbl} row arrived without its id.` });
    const updates = present.filter((c) => c !== 'id');
    const sql = `INSERT INTO "${tbl}" (${present.map((c) => `"${c}"`).join(', ')}) VALUES (${present.map(() => '?').join(', ')}) ON CONFLICT (id) DO ${
      updates.length ? `UPDATE SET ${updates.map((c) => `"${c}" = excluded."${c}"`).join(', ')}` : 'NOTHING'
    }`;
    plans.set(sig, (plan = { stmt: sqlite(db).prepare(sql), cols: present, keys }));
  }
  return plan;
}

function deleteLive(db: Db, tbl: string, id: string): number {
  tableColumns(db, tbl);
  return stmt(db, `DELETE FROM "${tbl}" WHERE id = ?`).run(id).changes;
}

const replicaDbs = new WeakMap<Db, Db>();
/**
 * The connection shape batches are written through: a sibling connection with foreign keys off
 * for good (db.ts openSiblingConnection), so no pragma is toggled per transaction; `db` itself for
 * an in-memory database. Its statement caches are its own (every cache here is keyed by Db).
 */
function replicaDb(db: Db): Db {
  let r = replicaDbs.get(db);
  if (!r) {
    const conn = openSiblingConnection(db);
    if (conn) {
      r = { path: db.path, close: () => conn.close() };
      bindConnection(r, conn);
    } else r = db;
    replicaDbs.set(db, r);
  }
  return r;
}

/** Run `fn` in one IMMEDIATE transaction with foreign keys off (replica writes; see the module doc). */
function replicaTransaction<T>(db: Db, fn: () => T): T {
  const wasOn = sqlite(db).pragma('foreign_keys', { simple: true }) === 1;
  if (wasOn) sqlite(db).pragma('foreign_keys = OFF');
  try {
    return sqlite(db).transaction(fn).immediate();
  } finally {
    if (wasOn) sqlite(db).pragma('foreign_keys = ON');
  }
}

/**
 * Upsert a row HQ sent. When it collides on wellness's one-row-per-athlete-and-day index (migration
 * 0014) with a row this device inserted and has not yet synced, HQ's row wins in the live table: the
 * local row leaves it, its values stay in the outbox changeset, and HQ refuses that changeset (its
 * own index) so the Sync page shows it as a conflict with both values; nothing is lost and the pull
 * is not stuck on that day. Any other collision is rethrown.
 * @throws SqliteError for a constraint violation this rule does not cover
 */
function upsertServerRow(db: Db, tbl: string, row: Record<string, unknown>): void {
  try {
    upsertLive(db, tbl, row);
  } catch (e) {
    const displaced = tbl === 'wellness' && (e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ? unsyncedWellnessDay(db, row) : [];
    if (displaced.length === 0) throw e;
    for (const id of displaced) deleteLive(db, tbl, id);
    upsertLive(db, tbl, row);
  }
}

/** Live wellness rows of `row`'s athlete and day, other than `row`, that this device inserted and has not synced. */
function unsyncedWellnessDay(db: Db, row: Record<string, unknown>): string[] {
  return (
    stmt(
      db,
      `SELECT w.id FROM wellness w JOIN sync_server_row s ON s.tbl = 'wellness' AND s.id = w.id AND s.row_json IS NULL
        WHERE w.org_id = ? AND w.athlete_id = ? AND w.date = ? AND w.deleted_at IS NULL AND w.id != ?`,
    ).all(row.org_id, row.athlete_id, row.date, row.id) as { id: string }[]
  ).map((r) => r.id);
}

function shadowOf(db: Db, tbl: string, id: string): { row_json: string | null } | undefined {
  return stmt(db, 'SELECT row_json FROM sync_server_row WHERE tbl = ? AND id = ?').get(tbl, id) as { row_json: string | null } | undefined;
}

/**
 * Apply one bounded slice of a shape's messages to `tbl` in one transaction. With `commit`, the
 * same transaction stores the shape's new handle and offset (the slice that ends an up-to-date
 * batch), records the txids delivered, settles changesets whose txids have now been seen on every
 * table, and — after a reset — deletes the table's rows that the fresh snapshot did not deliver
 * (`keepIds`: every id delivered since the reset). Rows under optimistic local changes only
 * update the stored server row.
 * @returns rows written or deleted in the live table, and changesets settled.
 */
export function applyShapeBatch(
  db: Db,
  tbl: string,
  ops: readonly ReplicaOp[],
  commit: { handle: string; offset: string; txids: readonly string[]; keepIds: ReadonlySet<string> | null; at: string } | null,
): { written: number; settled: string[] } {
  db = replicaDb(db);
  return replicaTransaction(db, () => {
    let written = 0;
    // Rows under optimistic local changes (few): looked up once per slice, not once per row.
    const held = new Set(sqlite(db).prepare('SELECT id FROM sync_server_row WHERE tbl = ?').pluck().all(tbl) as string[]);
    for (const op of ops) {
      const shadow = held.size > 0 && held.has(op.id) ? shadowOf(db, tbl, op.id) : undefined;
      if (shadow) {
        if (op.op === 'delete') stmt(db, 'UPDATE sync_server_row SET row_json = NULL WHERE tbl = ? AND id = ?').run(tbl, op.id);
        else {
          const prior = shadow.row_json ? (JSON.parse(shadow.row_json) as Record<string, unknown>) : {};
          const merged: Record<string, unknown> = { ...prior };
          for (const [k, v] of Object.entries(op.row)) merged[k] = sqliteValue(v);
          stmt(db, 'UPDATE sync_server_row SET row_json = ? WHERE tbl = ? AND id = ?').run(JSON.stringify(merged), tbl, op.id);
        }
        continue;
      }
      if (op.op === 'delete') written += deleteLive(db, tbl, op.id);
      else {
        upsertServerRow(db, tbl, op.row);
        written++;
      }
    }
    // Proposals HQ holds (migration 0015): copied into this device's own proposal tables.
    if (tbl === 'hq_proposal')
      materializeProposals(
        db,
        ops.filter((o) => o.op === 'upsert').map((o) => o.id),
      );
    let settled: string[] = [];
    if (commit) {
      if (commit.keepIds) written += sweepAfterReset(db, tbl, commit.keepIds);
      const seen = stmt(db, 'INSERT OR IGNORE INTO sync_seen_txid (txid, tbl, seen_at) VALUES (?, ?, ?)');
      for (const t of commit.txids) seen.run(t, tbl, commit.at);
      stmt(
        db,
        `UPDATE sync_shape SET handle = ?, shape_offset = ?, needs_reset = 0, rows_applied = rows_applied + ?, up_to_date_at = ?, updated_at = ? WHERE tbl = ?`,
      ).run(commit.handle, commit.offset, written, commit.at, commit.at, tbl);
      settled = settleSynced(db);
    } else if (written) {
      stmt(db, 'UPDATE sync_shape SET rows_applied = rows_applied + ? WHERE tbl = ?').run(written, tbl);
    }
    return { written, settled };
  });
}

/** True when the live table `tbl` holds no row (a first sync needs no sweep after its snapshot). */
export function isTableEmpty(db: Db, tbl: string): boolean {
  tableColumns(db, tbl);
  return !sqlite(db).prepare(`SELECT 1 FROM "${tbl}" LIMIT 1`).get();
}

/** After a fresh snapshot: rows HQ no longer has go (live rows, or the stored server row of optimistic ones). */
function sweepAfterReset(db: Db, tbl: string, keepIds: ReadonlySet<string>): number {
  let n = 0;
  const ids = sqlite(db).prepare(`SELECT id FROM "${tbl}"`).pluck().all() as string[];
  for (const id of ids) {
    if (keepIds.has(id)) continue;
    if (shadowOf(db, tbl, id)) stmt(db, 'UPDATE sync_server_row SET row_json = NULL WHERE tbl = ? AND id = ?').run(tbl, id);
    else n += deleteLive(db, tbl, id);
  }
  return n;
}

/**
 * The role may no longer read `tbl` (HQ answers 403): mark the shape and remove its synced rows
 * (optimistic local rows stay until their changesets are settled). Returns rows removed.
 */
export function markShapeForbidden(db: Db, tbl: string, forbidden: boolean): number {
  return replicaTransaction(db, () => {
    sqlite(db).prepare(`INSERT OR IGNORE INTO sync_shape (tbl, updated_at) VALUES (?, ?)`).run(tbl, new Date().toISOString());
    const was = (sqlite(db).prepare('SELECT forbidden FROM sync_shape WHERE tbl = ?').get(tbl) as { forbidden: number }).forbidden === 1;
    if (was === forbidden) return 0;
    sqlite(db)
      .prepare(`UPDATE sync_shape SET forbidden = ?, handle = NULL, shape_offset = '-1', needs_reset = 1, updated_at = ? WHERE tbl = ?`)
      .run(forbidden ? 1 : 0, new Date().toISOString(), tbl);
    if (!forbidden) return 0;
    const removed = sweepAfterReset(db, tbl, new Set());
    settleSynced(db);
    return removed;
  });
}

// ---------------------------------------------------------------------------------------------
// Optimistic rows

/**
 * Called by the changeset writer inside its transaction, before the rows change: remember the
 * server's row (the row as it stands, unless an earlier unsynced changeset already did) and link
 * the row to changeset `changesetId`. Does nothing on a file that is not enrolled.
 */
export function recordOptimisticWrite(db: Db, changesetId: string, changes: readonly RowChange[]): void {
  if (!stmt(db, 'SELECT 1 FROM sync_enrolment WHERE id = 1').get()) return;
  for (const c of changes) {
    if (!shadowOf(db, c.table, c.id)) {
      const row = sqlite(db).prepare(`SELECT * FROM "${c.table}" WHERE id = ?`).get(c.id) as Record<string, unknown> | undefined;
      stmt(db, 'INSERT INTO sync_server_row (tbl, id, row_json) VALUES (?, ?, ?)').run(c.table, c.id, row ? JSON.stringify(row) : null);
    }
    // Made on top of a change of this device still holding the row: its expected version counts
    // that change, which HQ must then have applied with that version (migration 0019).
    const base =
      c.op === 'update'
        ? ((stmt(
            db,
            `SELECT o.changeset_id FROM sync_optimistic o JOIN outbox x ON x.changeset_id = o.changeset_id
              WHERE o.tbl = ? AND o.id = ? AND o.changeset_id != ? ORDER BY x.seq DESC LIMIT 1`,
          )
            .pluck()
            .get(c.table, c.id, changesetId) as string | undefined) ?? null)
        : null;
    stmt(db, 'INSERT OR IGNORE INTO sync_optimistic (changeset_id, tbl, id, base_changeset_id) VALUES (?, ?, ?, ?)').run(changesetId, c.table, c.id, base);
  }
}

/** Drop `changesetId`'s hold on its rows; rows no other changeset holds become the server's row. */
function releaseChangeset(db: Db, changesetId: string): void {
  const rows = sqlite(db).prepare('SELECT tbl, id FROM sync_optimistic WHERE changeset_id = ?').all(changesetId) as { tbl: string; id: string }[];
  sqlite(db).prepare('DELETE FROM sync_optimistic WHERE changeset_id = ?').run(changesetId);
  for (const { tbl, id } of rows) {
    if (stmt(db, 'SELECT 1 FROM sync_optimistic WHERE tbl = ? AND id = ? LIMIT 1').get(tbl, id)) continue;
    const shadow = shadowOf(db, tbl, id);
    if (!shadow) continue;
    if (shadow.row_json === null) deleteLive(db, tbl, id);
    else {
      const row = JSON.parse(shadow.row_json) as Record<string, unknown>;
      upsertLive(db, tbl, row);
    }
    stmt(db, 'DELETE FROM sync_server_row WHERE tbl = ? AND id = ?').run(tbl, id);
  }
}

/**
 * Applied changesets whose every row the shapes have delivered become `synced` and release their
 * rows. A row counts as delivered when its table's shape delivered the changeset's txid, when the
 * server row held for it has reached the version HQ gave it (after a `must-refetch` the fresh
 * snapshot carries the row but not the txid), or when this device does not sync that table.
 * Returns the ids settled.
 */
function settleSynced(db: Db): string[] {
  const applied = sqlite(db).prepare(`SELECT changeset_id, txid, versions_json FROM sync_upload WHERE state = 'applied'`).all() as {
    changeset_id: string;
    txid: string;
    versions_json: string | null;
  }[];
  const settled: string[] = [];
  for (const u of applied) {
    const versions = u.versions_json ? (JSON.parse(u.versions_json) as Record<string, number>) : {};
    const rows = stmt(db, 'SELECT tbl, id FROM sync_optimistic WHERE changeset_id = ?').all(u.changeset_id) as { tbl: string; id: string }[];
    const delivered = rows.every(({ tbl, id }) => {
      if (stmt(db, 'SELECT 1 FROM sync_seen_txid WHERE txid = ? AND tbl = ?').get(u.txid, tbl)) return true;
      if (stmt(db, 'SELECT 1 FROM sync_shape WHERE tbl = ? AND forbidden = 1').get(tbl)) return true;
      const held = shadowOf(db, tbl, id)?.row_json;
      const v = held ? (JSON.parse(held) as { version?: number }).version : undefined;
      return v !== undefined && versions[id] !== undefined && v >= versions[id];
    });
    if (!delivered) continue;
    stmt(db, `UPDATE sync_upload SET state = 'synced' WHERE changeset_id = ?`).run(u.changeset_id);
    stmt(db, `UPDATE outbox SET status = 'synced' WHERE changeset_id = ?`).run(u.changeset_id);
    releaseChangeset(db, u.changeset_id);
    settled.push(u.changeset_id);
  }
  return settled;
}

/**
 * Changesets HQ applied that the shapes have not delivered yet (state `applied`), with the tables
 * whose shape must still deliver them. A sync pass waits on these tables (bounded) so that what it
 * uploaded is settled before it ends: HQ's commit reaches the shape log through logical
 * replication, which may lag HQ's answer to the upload.
 */
export function unsettledUploads(db: Db): { count: number; tables: string[] } {
  const count = (sqlite(db).prepare(`SELECT count(*) AS n FROM sync_upload WHERE state = 'applied'`).get() as { n: number }).n;
  if (count === 0) return { count, tables: [] };
  const tables = sqlite(db)
    .prepare(
      `SELECT DISTINCT o.tbl FROM sync_optimistic o JOIN sync_upload u ON u.changeset_id = o.changeset_id
        WHERE u.state = 'applied' ORDER BY o.tbl`,
    )
    .pluck()
    .all() as string[];
  return { count, tables };
}

/** Forget delivered txids older than `before` (ISO); they only matter until their upload settles. */
export function pruneSeenTxids(db: Db, before: string): void {
  sqlite(db).prepare('DELETE FROM sync_seen_txid WHERE seen_at < ?').run(before);
}

// ---------------------------------------------------------------------------------------------
// Uploads (write path)

interface OutboxJoin {
  seq: number;
  changeset_id: string;
  org_id: string;
  user_id: string;
  payload_json: string;
  created_at: string;
  summary: string | null;
  run_id: string | null;
  applied_at: string | null;
  activity_id: string | null;
  actor_name: string | null;
  via_assistant: number | null;
  approved_by: string | null;
}

const resolveNow = (v: unknown, at: string): unknown => (v === NOW_PLACEHOLDER ? at : v);

/**
 * The next pending outbox changesets (of `userId` only, when given: an athlete's device; an org
 * device uploads every signed-in user's changesets, each applied at HQ as its user), oldest first, in the wire format HQ accepts
 * (models/sync.ts UploadedChangeset): the summary, who prepared it (`via`), the run, the device's
 * activity row id, the owner who approved it (policy *needs owner*), when it was made, the
 * changesets of this device its row versions count (`based_on`, migration 0019); an Undo's
 * `__NOW__` placeholder is replaced by the time the change was applied on this device.
 */
export function pendingUploads(db: Db, userId: string | null, limit: number): UploadedChangeset[] {
  const rows = sqlite(db)
    .prepare(
      `SELECT o.seq, o.changeset_id, o.org_id, o.user_id, o.payload_json, o.created_at,
              c.summary, c.run_id, c.applied_at,
              a.id AS activity_id, a.actor_name, a.via_assistant,
              (SELECT p.decided_by FROM changeset_proposal p WHERE p.id = o.changeset_id AND p.verdict = 'needs_owner' AND p.status = 'applied') AS approved_by
         FROM outbox o
         LEFT JOIN changeset c ON c.id = o.changeset_id
         LEFT JOIN activity a ON a.changeset_id = o.changeset_id
        WHERE o.status = 'pending' AND (? IS NULL OR o.user_id = ?)
        ORDER BY o.seq LIMIT ?`,
    )
    .all(userId, userId, limit) as OutboxJoin[];
  return rows.map((r) => {
    const payload = JSON.parse(r.payload_json) as { changeset_id: string; verb: string; changes: RowChange[] };
    const at = r.applied_at ?? r.created_at;
    const changes = payload.changes.map((c) =>
      c.op === 'delete' ? c : { ...c, after: Object.fromEntries(Object.entries(c.after).map(([k, v]) => [k, resolveNow(v, at)])) },
    ) as UploadedRowChange[];
    const via = r.via_assistant ? (r.actor_name?.endsWith('via MCP client') ? 'MCP client' : 'Assistant') : null;
    const cs: UploadedChangeset = {
      changeset_id: r.changeset_id,
      verb: payload.verb,
      changes,
      org_id: r.org_id,
      user_id: r.user_id,
      created_at: r.created_at,
      via,
      run_id: r.run_id,
      approved_by: r.approved_by,
    };
    if (r.summary) cs.summary = r.summary.slice(0, 500);
    if (r.activity_id) cs.activity_id = r.activity_id;
    const updated = new Set(changes.filter((c) => c.op === 'update').map((c) => `${c.table}:${c.id}`));
    const bases = (
      stmt(db, 'SELECT tbl, id, base_changeset_id FROM sync_optimistic WHERE changeset_id = ? AND base_changeset_id IS NOT NULL').all(r.changeset_id) as {
        tbl: string;
        id: string;
        base_changeset_id: string;
      }[]
    ).filter((b) => updated.has(`${b.tbl}:${b.id}`));
    if (bases.length > 0) cs.based_on = bases.map((b) => ({ table: b.tbl, id: b.id, changeset_id: b.base_changeset_id }));
    return cs;
  });
}

/**
 * The content hash HQ computes for an uploaded changeset (sync/write/apply.ts `uploadContentHash`):
 * SHA-256 (hex) of the canonical JSON of models/sync.ts `uploadHashPayload` (version 2: verb,
 * changes, `user_id` and `approved_by` as uploaded). An owner approval or a sign-off attestation
 * recorded at HQ (POST /v1/approvals) is bound to it, so it does not verify once the author or the
 * approver named in the upload changes.
 */
export function uploadContentHash(cs: Pick<UploadedChangeset, 'verb' | 'changes' | 'user_id' | 'approved_by'>): string {
  // HQ's hash (importing sync/ from main/ is not allowed; the payload is shared in models/sync.ts).
  return createHash('sha256')
    .update(canonicalJson(uploadHashPayload(cs)))
    .digest('hex');
}

/**
 * Store one upload outcome (HQ's answer for changeset `outcome.changeset_id`), atomically with its
 * effects. `answered`: the changesets HQ answered in the same response; a rejection holds back,
 * unsent, the pending changesets made on top of it, except these, which get HQ's own answer.
 */
export function recordUploadOutcome(db: Db, outcome: ChangesetOutcome, at: string, answered: ReadonlySet<string> = new Set()): void {
  replicaTransaction(db, () => {
    const status = (sqlite(db).prepare('SELECT status FROM outbox WHERE changeset_id = ?').get(outcome.changeset_id) as { status: string } | undefined)?.status;
    // Already recorded (a retried request), or discarded meanwhile; but HQ's word that it applied a
    // changeset this device had rejected unsent (made on top of a refused one) is the truth: the
    // conflict would otherwise show a change HQ holds as never written.
    const appliedAfterAll = status === 'rejected' && outcome.status === 'applied';
    if (status !== 'pending' && !appliedAfterAll) return;
    if (outcome.status === 'applied') {
      if (appliedAfterAll) stmt(db, `UPDATE changeset SET status = 'applied' WHERE id = ? AND status = 'refused'`).run(outcome.changeset_id);
      sqlite(db)
        .prepare(`INSERT OR REPLACE INTO sync_upload (changeset_id, state, txid, versions_json, hq_applied_at, decided_at) VALUES (?, 'applied', ?, ?, ?, ?)`)
        .run(outcome.changeset_id, outcome.txid, JSON.stringify(outcome.versions), outcome.applied_at, at);
      sqlite(db).prepare(`UPDATE outbox SET status = 'applied', attempts = attempts + 1, last_error = NULL WHERE changeset_id = ?`).run(outcome.changeset_id);
      settleSynced(db);
      return;
    }
    recordRejection(db, outcome.changeset_id, outcome.reason, outcome.message, outcome.current ?? [], at);
    // Later pending changesets that change any of its rows were made on top of it (their expected
    // versions count it): uploaded as they are, one would overwrite whatever HQ holds at that
    // version (issue 12 review B1). They are rejected with it, unsent, and shown as conflicts.
    // HQ does the same within one upload (sync/http/app.ts).
    rejectDependents(db, outcome.changeset_id, dependentRejection(outcome.changeset_id), outcome.current ?? [], at, answered);
  });
}

/**
 * Reject, unsent, every pending outbox changeset after `changesetId` that changes one of its rows,
 * and then those that change one of theirs (made on top of a change that will never reach HQ),
 * each as `stale` with `message` and the `current` rows among its own (`rejected_here`). Those in
 * `answered` (HQ answered them in the same response) are left to HQ's answer; their rows still count.
 */
function rejectDependents(
  db: Db,
  changesetId: string,
  message: string,
  current: readonly CurrentRow[],
  at: string,
  answered: ReadonlySet<string> = new Set(),
): void {
  const first = sqlite(db).prepare('SELECT seq, payload_json, created_at FROM outbox WHERE changeset_id = ?').get(changesetId) as {
    seq: number;
    payload_json: string;
    created_at: string;
  };
  const rows = new Set(changedRows(first));
  const later = sqlite(db).prepare(`SELECT changeset_id, payload_json FROM outbox WHERE status = 'pending' AND seq > ? ORDER BY seq`).all(first.seq) as {
    changeset_id: string;
    payload_json: string;
  }[];
  for (const o of later) {
    const keys = changedRows(o);
    if (!keys.some((k) => rows.has(k))) continue;
    for (const k of keys) rows.add(k);
    if (answered.has(o.changeset_id)) continue;
    recordRejection(
      db,
      o.changeset_id,
      'stale',
      message,
      current.filter((r) => keys.includes(`${r.table}:${r.id}`)),
      at,
      true,
    );
  }
  failProposalsOn(db, rows, message, at, first.created_at);
}

/**
 * Close as failed every open proposal on this device (an assistant or MCP change waiting for its
 * user's confirmation, or one waiting for an owner) that changes one of `rows`: it was planned on
 * this device's rows while a change to them was pending, so its expected versions may count a
 * change HQ will never hold, and approving it could overwrite another device's write (issue 12
 * re-review). One waiting for an owner is also withdrawn at HQ (a decline by its proposer,
 * migration 0015), so no owner approves it on another device. Only proposals made on this device
 * (`origin_device_id` null: never one HQ copied in from another device, which is not this device's
 * to withdraw; issue 12 final review) and no earlier than the refused change (`since`).
 */
function failProposalsOn(db: Db, rows: ReadonlySet<string>, message: string, at: string, since: string): void {
  const open = sqlite(db)
    .prepare(
      `SELECT p.id, p.user_id, p.status, c.changes_json FROM changeset_proposal p JOIN changeset c ON c.id = p.id
        WHERE p.status IN ('proposed', 'needs_owner') AND p.origin_device_id IS NULL AND p.created_at >= ?`,
    )
    .all(since) as { id: string; user_id: string; status: string; changes_json: string }[];
  const enrolled = !!sqlite(db).prepare('SELECT 1 FROM sync_enrolment WHERE id = 1').get();
  const failure = JSON.stringify({ code: 'Conflict', message });
  for (const p of open) {
    const keys = (JSON.parse(p.changes_json) as { table: string; id: string }[]).map((ch) => `${ch.table}:${ch.id}`);
    if (!keys.some((k) => rows.has(k))) continue;
    sqlite(db)
      .prepare(`UPDATE changeset_proposal SET status = 'failed', decided_by = NULL, decided_at = ?, failure_json = ?, updated_at = ? WHERE id = ?`)
      .run(at, failure, at, p.id);
    sqlite(db).prepare(`UPDATE changeset SET status = 'failed' WHERE id = ? AND status IN ('proposed', 'needs_owner')`).run(p.id);
    if (p.status === 'needs_owner' && enrolled)
      sqlite(db)
        .prepare(`INSERT OR IGNORE INTO sync_proposal_event (proposal_id, op, user_id, created_at) VALUES (?, 'decline', ?, ?)`)
        .run(p.id, p.user_id, at);
  }
}

/**
 * The local `changeset` row of a change that never reached HQ (refused there, held back on this
 * device, or discarded) is `refused`: it is no applied change any more (the rows show HQ's
 * truth), so it cannot be undone (an Undo's expected versions would be its own, which another
 * device's write may have reached at HQ: issue 12 final review), nor count in the price history.
 * An Undo that never reached HQ gives the change it undid back its `applied` status.
 */
function markNeverApplied(db: Db, changesetId: string): void {
  stmt(db, `UPDATE changeset SET status = 'refused' WHERE id = ? AND status IN ('applied', 'undone')`).run(changesetId);
  stmt(db, `UPDATE changeset SET status = 'applied', undone_by = NULL WHERE undone_by = ? AND status = 'undone'`).run(changesetId);
}

/** `table:id` of every row an outbox changeset changes. */
function changedRows(o: { payload_json: string }): string[] {
  return (JSON.parse(o.payload_json) as { changes: UploadedRowChange[] }).changes.map((ch) => `${ch.table}:${ch.id}`);
}

/** Record that HQ (or this device, for a changeset made on top of a rejected one) rejected a pending changeset; see {@link recordUploadOutcome}. */
function recordRejection(db: Db, changesetId: string, reason: RejectionReason, message: string, current: CurrentRow[], at: string, here = false): void {
  sqlite(db)
    .prepare(
      `INSERT OR REPLACE INTO sync_upload (changeset_id, state, reason, message, current_json, decided_at, rejected_here) VALUES (?, 'rejected', ?, ?, ?, ?, ?)`,
    )
    .run(changesetId, reason, message, JSON.stringify(current), at, here ? 1 : 0);
  sqlite(db).prepare(`UPDATE outbox SET status = 'rejected', attempts = attempts + 1, last_error = ? WHERE changeset_id = ?`).run(reason, changesetId);
  // HQ's current rows are the server's truth for those rows (when newer than what we hold).
  for (const cur of current) {
    const shadow = shadowOf(db, cur.table, cur.id);
    if (!shadow) continue;
    const held = shadow.row_json ? (JSON.parse(shadow.row_json) as { version?: number }) : null;
    if (cur.row === null) stmt(db, 'UPDATE sync_server_row SET row_json = NULL WHERE tbl = ? AND id = ?').run(cur.table, cur.id);
    else if (!held || (held.version ?? 0) <= (cur.actual_version ?? 0)) {
      const encoded = Object.fromEntries(Object.entries(cur.row).map(([k, v]) => [k, sqliteValue(v)]));
      stmt(db, 'UPDATE sync_server_row SET row_json = ? WHERE tbl = ? AND id = ?').run(JSON.stringify(encoded), cur.table, cur.id);
    }
  }
  // The change did not happen at HQ: the local activity line for it goes; the rows show the server's truth.
  sqlite(db).prepare('DELETE FROM activity WHERE changeset_id = ?').run(changesetId);
  markNeverApplied(db, changesetId);
  releaseChangeset(db, changesetId);
}

/** Count a failed upload attempt of these changesets (network, HQ unavailable); they stay pending. */
export function recordUploadAttemptFailed(db: Db, changesetIds: readonly string[], error: string): void {
  const s = sqlite(db).prepare(`UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE changeset_id = ? AND status = 'pending'`);
  sqlite(db).transaction(() => changesetIds.forEach((id) => s.run(error.slice(0, 500), id)))();
}

interface ConflictJoin {
  changeset_id: string;
  reason: string;
  message: string;
  current_json: string | null;
  decided_at: string;
  rejected_here: number;
  payload_json: string;
  created_at: string;
  author_id: string;
  author_name: string | null;
  summary: string | null;
}

/** Changesets HQ rejected and the user has not discarded, oldest first. */
export function listConflicts(db: Db): SyncConflict[] {
  const rows = sqlite(db)
    .prepare(
      `SELECT u.changeset_id, u.reason, u.message, u.current_json, u.decided_at, u.rejected_here, o.payload_json, o.created_at, o.user_id AS author_id,
              a.display_name AS author_name, c.summary
         FROM sync_upload u JOIN outbox o ON o.changeset_id = u.changeset_id LEFT JOIN changeset c ON c.id = u.changeset_id
         LEFT JOIN app_user a ON a.id = o.user_id
        WHERE u.state = 'rejected' ORDER BY o.seq`,
    )
    .all() as ConflictJoin[];
  return rows.map((r) => {
    const payload = JSON.parse(r.payload_json) as { verb: string; changes: UploadedRowChange[] };
    return {
      changeset_id: r.changeset_id,
      verb: payload.verb,
      summary: r.summary ?? payload.verb,
      author_id: r.author_id,
      author_name: r.author_name,
      reason: r.reason as RejectionReason,
      message: r.message,
      created_at: r.created_at,
      rejected_at: r.decided_at,
      rejected_here: r.rejected_here === 1,
      changes: payload.changes,
      current: r.current_json ? (JSON.parse(r.current_json) as CurrentRow[]) : [],
    };
  });
}

/**
 * Discard a pending or rejected changeset: it is never uploaded, and its optimistic rows return to
 * the server's last known rows (where no other pending changeset holds them). The outbox keeps its
 * payload; `sync_upload` records when and by whom (`by`: the signed-in user's id; migration 0018).
 * @throws NotFound (no such outbox changeset), Conflict (HQ already applied it: undo it instead)
 */
export function discardChangeset(db: Db, changesetId: string, at: string, by: string | null): void {
  replicaTransaction(db, () => {
    const row = sqlite(db).prepare('SELECT status FROM outbox WHERE changeset_id = ?').get(changesetId) as { status: string } | undefined;
    if (!row || row.status === 'discarded') throw new NotFound(`Outbox changeset ${changesetId}`);
    if (row.status !== 'pending' && row.status !== 'rejected') {
      throw new Conflict('HQ already applied this change, so it cannot be discarded; undo it instead.');
    }
    sqlite(db)
      .prepare(
        `INSERT INTO sync_upload (changeset_id, state, decided_at, discarded_by) VALUES (?, 'discarded', ?, ?)
         ON CONFLICT (changeset_id) DO UPDATE SET state = 'discarded', decided_at = excluded.decided_at, discarded_by = excluded.discarded_by`,
      )
      .run(changesetId, at, by);
    sqlite(db).prepare(`UPDATE outbox SET status = 'discarded' WHERE changeset_id = ?`).run(changesetId);
    if (row.status === 'pending') sqlite(db).prepare('DELETE FROM activity WHERE changeset_id = ?').run(changesetId);
    markNeverApplied(db, changesetId);
    // What was made on top of a discarded pending change counts it in its expected versions: it
    // becomes a conflict to re-plan, never an upload that could overwrite HQ's row (issue 12 review B1).
    if (row.status === 'pending')
      rejectDependents(
        db,
        changesetId,
        `Made on top of an earlier change of this record on this device (changeset ${changesetId}) that was discarded, so it was not sent. Re-plan it on the record as it is now, or discard it.`,
        [],
        at,
      );
    releaseChangeset(db, changesetId);
  });
}

/**
 * True when HQ applied a changeset of this device that gave row `rowId` version `version`
 * (`sync_upload` applied or synced). HQ reaches a row's version through one changeset only, so the
 * device's optimistic state of that row at that version had HQ's content then, though HQ's
 * `updated_at` differs from the device's: a form that showed the optimistic state has not missed a
 * change (main/ipc/forms.ts). False on a device not enrolled.
 */
export function appliedHereAtVersion(db: Db, rowId: string, version: number): boolean {
  return (
    stmt(
      db,
      `SELECT 1 FROM sync_upload u, json_each(u.versions_json) j
        WHERE u.state IN ('applied', 'synced') AND u.versions_json IS NOT NULL AND j.key = ? AND j.value = ? LIMIT 1`,
    ).get(rowId, version) !== undefined
  );
}

/** Upload state of one outbox changeset (tests, diagnostics). */
export function uploadState(db: Db, changesetId: string): { outbox: string | null; state: string | null; txid: string | null; reason: string | null } {
  const o = sqlite(db).prepare('SELECT status FROM outbox WHERE changeset_id = ?').get(changesetId) as { status: string } | undefined;
  const u = sqlite(db).prepare('SELECT state, txid, reason FROM sync_upload WHERE changeset_id = ?').get(changesetId) as
    { state: string; txid: string | null; reason: string | null } | undefined;
  return { outbox: o?.status ?? null, state: u?.state ?? null, txid: u?.txid ?? null, reason: u?.reason ?? null };
}

/**
 * True when a changeset of this device still holds row `tbl`/`id` optimistically (made here, not
 * yet delivered back by HQ's shape: pending, or applied at HQ and on its way).
 */
export function isRowHeldHere(db: Db, tbl: string, id: string): boolean {
  return stmt(db, 'SELECT 1 FROM sync_optimistic WHERE tbl = ? AND id = ? LIMIT 1').get(tbl, id) !== undefined;
}

/** Rows currently held optimistically (under a not-yet-synced local changeset). */
export function optimisticRowCount(db: Db): number {
  return (sqlite(db).prepare('SELECT count(*) AS n FROM sync_server_row').get() as { n: number }).n;
}

// ---------------------------------------------------------------------------------------------
// Proposals across devices (migration 0015, HQ 0010)

/** A proposal event waiting to be reported to HQ, with the user it is sent for (the decider of a decline). */
export interface PendingProposalEvent {
  seq: number;
  userId: string;
  event: ProposalEvent;
}

interface ProposalEventJoin {
  seq: number;
  proposal_id: string;
  op: 'propose' | 'decline';
  user_id: string;
  created_at: string;
  proposer: string;
  source: 'assistant' | 'mcp' | 'page';
  tool_name: string;
  title: string;
  policy_json: string;
  p_created_at: string;
  verb: string;
  summary: string;
  changes_json: string;
}

/**
 * The oldest `limit` proposal events ready to be reported to HQ, in the wire format (models/sync.ts
 * ProposalEvent). Two kinds wait or go unsent (issue 12 final review):
 * - a proposal this device decided (approved, declined, failed) before HQ heard of it: its
 *   pending events are dropped, since no other device needs to decide it (an approval here is
 *   uploaded as the changeset itself);
 * - a proposal whose rows a pending outbox changeset of this device changes is held back until
 *   that changeset is uploaded: its expected versions may count that change, and an owner on
 *   another device must not approve it before HQ has applied (or refused) the change. If HQ
 *   refuses it, the proposal fails here (`failProposalsOn`) and is never reported.
 */
export function pendingProposalEvents(db: Db, limit: number): PendingProposalEvent[] {
  sqlite(db)
    .prepare(
      `DELETE FROM sync_proposal_event WHERE status = 'pending' AND proposal_id IN (
         SELECT e.proposal_id FROM sync_proposal_event e JOIN changeset_proposal p ON p.id = e.proposal_id
          WHERE e.op = 'propose' AND e.status = 'pending' AND p.status != 'needs_owner')`,
    )
    .run();
  const rows = sqlite(db)
    .prepare(
      `SELECT e.seq, e.proposal_id, e.op, e.user_id, e.created_at, p.user_id AS proposer, p.source, p.tool_name, p.title, p.policy_json,
              p.created_at AS p_created_at, c.verb, c.summary, c.changes_json
         FROM sync_proposal_event e JOIN changeset_proposal p ON p.id = e.proposal_id JOIN changeset c ON c.id = e.proposal_id
        WHERE e.status = 'pending' ORDER BY e.seq`,
    )
    .all() as ProposalEventJoin[];
  const proposing = rows.filter((r) => r.op === 'propose');
  const pendingRows = new Set<string>();
  if (proposing.length > 0)
    for (const o of sqlite(db).prepare(`SELECT payload_json FROM outbox WHERE status = 'pending'`).all() as { payload_json: string }[])
      for (const k of changedRows(o)) pendingRows.add(k);
  const held = new Set(
    proposing
      .filter((r) => (JSON.parse(r.changes_json) as { table: string; id: string }[]).some((ch) => pendingRows.has(`${ch.table}:${ch.id}`)))
      .map((r) => r.proposal_id),
  );
  return rows
    .filter((r) => !held.has(r.proposal_id))
    .slice(0, limit)
    .map((r) => {
      if (r.op === 'decline')
        return { seq: r.seq, userId: r.user_id, event: { op: 'decline', changeset_id: r.proposal_id, decided_by: r.user_id, decided_at: r.created_at } };
      const pol = JSON.parse(r.policy_json) as { permission?: string | null };
      return {
        seq: r.seq,
        userId: r.user_id,
        event: {
          op: 'propose',
          changeset_id: r.proposal_id,
          user_id: r.proposer,
          verb: r.verb,
          summary: r.summary.slice(0, 500),
          changes: JSON.parse(r.changes_json) as UploadedRowChange[],
          source: r.source,
          tool_name: r.tool_name.slice(0, 100),
          title: r.title.slice(0, 200),
          permission: pol.permission ?? null,
          created_at: r.p_created_at,
        },
      };
    });
}

/** Store HQ's answer to proposal event `seq` (recorded, or refused with a code and message). */
export function recordProposalEventOutcome(db: Db, seq: number, outcome: { status: 'recorded' } | { status: 'refused'; code: string; message: string }): void {
  sqlite(db)
    .prepare(`UPDATE sync_proposal_event SET status = ?, code = ?, message = ? WHERE seq = ? AND status = 'pending'`)
    .run(outcome.status, outcome.status === 'refused' ? outcome.code : null, outcome.status === 'refused' ? outcome.message.slice(0, 1000) : null, seq);
}

/** Proposal events HQ refused (diagnostics, tests): the proposal stays on this device only. */
export function refusedProposalEvents(db: Db): { proposal_id: string; op: string; code: string | null; message: string | null }[] {
  return sqlite(db).prepare(`SELECT proposal_id, op, code, message FROM sync_proposal_event WHERE status = 'refused' ORDER BY seq`).all() as {
    proposal_id: string;
    op: string;
    code: string | null;
    message: string | null;
  }[];
}

interface HqProposalReplica {
  id: string;
  org_id: string;
  user_id: string;
  device_id: string;
  device_name: string;
  source: string;
  tool_name: string;
  title: string;
  verb: string;
  summary: string;
  changes_json: string;
  policy_json: string;
  content_hash: string;
  status: 'needs_owner' | 'applied' | 'declined' | 'failed';
  decided_by: string | null;
  decided_at: string | null;
  outcome_json: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The local `changeset` row status of a proposal HQ decided: `applied_elsewhere` for one applied
 * by another device's upload (its rows arrive through the shapes; it has no local undo),
 * otherwise the proposal's status.
 */
const changesetStatusOf = (s: HqProposalReplica['status']): string => (s === 'applied' ? 'applied_elsewhere' : s);

/**
 * Copy proposals HQ holds (replica rows `ids` of `hq_proposal`) into this device's proposal
 * tables, in the shape batch's transaction: one made on another device is added (its origin
 * device kept), so the Approvals page lists it and an owner here decides it through the usual
 * path; one this device holds open (made here, or copied earlier) takes HQ's outcome when HQ has
 * decided it (applied on another device, declined, failed), and so does one approved here whose
 * upload HQ refused. A proposal decided here stays as decided here.
 */
function materializeProposals(db: Db, ids: readonly string[]): void {
  for (const id of ids) {
    const r = stmt(db, 'SELECT * FROM hq_proposal WHERE id = ?').get(id) as HqProposalReplica | undefined;
    if (!r) continue;
    const local = stmt(db, 'SELECT status FROM changeset_proposal WHERE id = ?').get(id) as { status: string } | undefined;
    if (!local) {
      stmt(
        db,
        `INSERT OR IGNORE INTO changeset (id, org_id, user_id, verb, summary, changes_json, inverse_json, content_hash, idempotency_key, request_hash, status, run_id, via_assistant, created_at, applied_at, undo_of, result_json)
         VALUES (?, ?, ?, ?, ?, ?, NULL, ?, NULL, NULL, ?, NULL, 0, ?, ?, NULL, NULL)`,
      ).run(
        r.id,
        r.org_id,
        r.user_id,
        r.verb,
        r.summary,
        r.changes_json,
        r.content_hash,
        changesetStatusOf(r.status),
        r.created_at,
        r.status === 'applied' ? r.decided_at : null,
      );
      stmt(
        db,
        `INSERT INTO changeset_proposal (id, org_id, user_id, source, run_id, tool_call_id, tool_name, title, status, verdict, policy_json, content_hash, decided_by, decided_at, failure_json, created_at, updated_at, origin_device_id, origin_device_name)
         VALUES (?, ?, ?, ?, NULL, NULL, ?, ?, ?, 'needs_owner', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        r.id,
        r.org_id,
        r.user_id,
        r.source,
        r.tool_name,
        r.title,
        r.status,
        r.policy_json,
        r.content_hash,
        r.decided_by,
        r.decided_at,
        r.outcome_json,
        r.created_at,
        r.updated_at,
        r.device_id,
        r.device_name,
      );
      continue;
    }
    if (r.status === 'needs_owner' || local.status === r.status) continue;
    const open = local.status === 'proposed' || local.status === 'needs_owner';
    const outbox = stmt(db, 'SELECT status FROM outbox WHERE changeset_id = ?').pluck().get(id) as string | undefined;
    const refusedHere = local.status === 'applied' && (outbox === 'rejected' || outbox === 'discarded');
    if (!open && !refusedHere) continue;
    stmt(db, 'UPDATE changeset_proposal SET status = ?, decided_by = ?, decided_at = ?, failure_json = ?, updated_at = ? WHERE id = ?').run(
      r.status,
      r.decided_by,
      r.decided_at,
      r.outcome_json,
      r.updated_at,
      id,
    );
    if (open)
      stmt(db, `UPDATE changeset SET status = ?, applied_at = ? WHERE id = ? AND status IN ('proposed', 'needs_owner')`).run(
        changesetStatusOf(r.status),
        r.status === 'applied' ? r.decided_at : null,
        id,
      );
  }
}

// ---------------------------------------------------------------------------------------------
// Local writes → the uploader

const outboxListeners = new WeakMap<Db, Set<() => void>>();

/**
 * Call `fn` after each committed local write to this database (every one appends its changeset to
 * `outbox` in its transaction) made through this connection, in this process: the device sync's
 * uploader wakes on it instead of waiting for its next poll. `fn` runs on a later tick (never
 * inside the writing transaction). Returns the function that stops it.
 */
export function onOutboxAppended(db: Db, fn: () => void): () => void {
  let set = outboxListeners.get(db);
  if (!set) outboxListeners.set(db, (set = new Set()));
  set.add(fn);
  return () => void set.delete(fn);
}

/** Run the {@link onOutboxAppended} listeners of `db` (main/data/changesets.ts, after a local write commits). */
export function notifyOutboxAppended(db: Db): void {
  const set = outboxListeners.get(db);
  if (!set || set.size === 0) return;
  setImmediate(() => {
    for (const fn of set) fn();
  });
}
