/**
 * Apply a planned changeset in one SQLite transaction: authorise every row change with the pure
 * rules of models/changeset.ts, check every version (any stale row → Conflict, nothing
 * written), write the rows and bump `version`, write one `activity` row, append the changeset
 * to the outbox, store its inverse for Undo, and honour an idempotency key (one key → at most
 * one changeset of a user, pending or applied: a retry of the same request returns the first
 * result; unique index `changeset_idem` on org, user and key, migration 0011).
 */
import type { AppliedChangesetView } from '../../models/contract';
import { createHash } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import type { PlannedChangeset, RowChange, RuleActor, UpdateChange, InsertChange } from '../../models/changeset';
import { authorizeChange, canonicalJson, clearsPinHash, inverseOf, LAST_OWNER_REFUSAL, NOW_PLACEHOLDER, removesOwner } from '../../models/changeset';
import { countActiveOwners } from './identity';
import type { FeeCodeHistory, FeeCodeItemRow, NumericHistory, NumericHistoryEntry } from '../../models/policy';
import { buildFeeCodeHistory, numericHistoryKey } from '../../models/policy';
import { NEEDS_OWNER_APPROVER } from '../../models/roles';
import { AppError, Conflict, Forbidden, IdempotencyKeyReused, NotFound } from '../../models/errors';
import type { Activity } from '../../models/records';
import type { Db } from './db';
import { TABLES, type TableName } from '../../models/tables';
import { columnsOf, decodeRow, encodeValue, liveRowInOrg, rowFacts } from './rows';
import { notifyOutboxAppended, recordOptimisticWrite } from './sync';
import { sqlite } from './sqlite';

/**
 * What apply returns (also stored, so an idempotent retry returns it again): the contract's
 * `AppliedChangesetView` (rows, versions after apply, activity id, `replayed`) plus the hash of
 * the request that produced it, when the caller gave one.
 */
export interface AppliedChangeset extends AppliedChangesetView {
  request_hash?: string;
}

export interface ApplyOptions {
  actor: RuleActor & { displayName: string };
  planned: PlannedChangeset;
  /**
   * One key → at most one changeset of the user: a retry of the same request (same
   * `requestHash`, else the same content) returns the first applied result; another request →
   * IdempotencyKeyReused; a pending proposal under the key → IdempotencyKeyTaken.
   */
  idempotencyKey?: string | null;
  /** Set when the changeset was proposed by the assistant: activity reads "Name via Assistant", linked to the run. */
  runId?: string | null;
  /** Who prepared it for the user, when not the user: `Assistant` (default with a runId) or `MCP client`. */
  viaLabel?: string;
  /** Id of the changeset this one undoes (marks it undone in the same transaction). */
  undoOf?: string | null;
  /** Hash of the request that produced this changeset (verb and input); stored so a retry can be matched to it. */
  requestHash?: string;
  /** Pre-assigned changeset id (a proposal being approved; applied once, a second apply returns the first result); a new UUID v7 otherwise. */
  changesetId?: string;
  now?: Date;
}

/** SHA-256 over the canonical JSON of verb and row changes: what an approval is bound to. */
export function changesetContentHash(planned: Pick<PlannedChangeset, 'verb' | 'changes'>): string {
  return createHash('sha256')
    .update(canonicalJson({ verb: planned.verb, changes: planned.changes }))
    .digest('hex');
}

/**
 * SHA-256 (hex) over the canonical JSON of a request: verb name and raw input (`{}` when absent).
 * What an idempotency key is bound to: the same key with another hash is another request.
 */
export function requestHashOf(verb: string, input: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ verb, input: input ?? {} }))
    .digest('hex');
}

function resolveNow(v: unknown, nowIso: string): unknown {
  return v === NOW_PLACEHOLDER ? nowIso : v;
}

/**
 * Authorise every row change of `changes` for `actor` against the stored rows and check every
 * planned version. Used when planning (so a refusal is reported before anyone is asked to
 * approve) and again inside the apply transaction.
 * @throws NotFound, Forbidden, Validation (rules), Conflict (stale versions, existing ids)
 */
export function checkChangeset(db: Db, actor: RuleActor, changes: readonly RowChange[]): void {
  const conflicts: NonNullable<Conflict['conflicts']> = [];
  const insertedHere = new Set(changes.filter((c) => c.op === 'insert').map((c) => `${c.table}:${c.id}`));
  for (const change of changes) {
    const facts = change.op === 'insert' ? null : rowFacts(db, change.table, change.id);
    if (change.op === 'insert') {
      const exists = rowFacts(db, change.table, change.id);
      if (exists) {
        if (exists.org_id !== actor.orgId) throw new Conflict(`A ${change.table} row with id ${change.id} already exists.`);
        conflicts.push({ table: change.table, id: change.id, expectedVersion: 0, actualVersion: exists.version });
        continue;
      }
    }
    const decision = authorizeChange(actor, change, facts ? { orgId: facts.org_id, athleteId: facts.athlete_id, row: facts.row } : null);
    if (!decision.ok) {
      if (decision.code === 'NotFound') throw new NotFound(`${change.table} ${change.id}`);
      if (decision.code === 'Forbidden') throw new Forbidden(decision.reason);
      throw new AppError({
        code: 'Validation',
        message: decision.reason,
        issues: [{ path: `${change.table}.${decision.field ?? ''}`, message: decision.reason }],
      });
    }
    // Tenant of references: every id a row points at must be a live row of the actor's org
    // (or a row inserted by this same changeset).
    if (change.op !== 'delete') {
      for (const [col, refTable] of Object.entries(TABLES[change.table].references ?? {})) {
        const v = change.after[col];
        if (typeof v !== 'string' || insertedHere.has(`${refTable}:${v}`)) continue;
        if (!liveRowInOrg(db, refTable, actor.orgId, v)) throw new NotFound(`${refTable} ${v} (referenced by ${change.table}.${col})`);
      }
    }
    if (change.op === 'update' && facts && facts.version !== change.version) {
      conflicts.push({ table: change.table, id: change.id, expectedVersion: change.version, actualVersion: facts.version });
    }
  }
  if (conflicts.length > 0) {
    throw new Conflict(`${conflicts.length} record(s) changed since this change was prepared. Nothing was written; reload and prepare it again.`, conflicts);
  }
  // The club keeps an active owner: only an owner approves what needs one (forms, CLI, assistant, Undo).
  const ownersOut = changes.filter((c) => removesOwner(c, rowFacts(db, c.table, c.id)?.row)).map((c) => c.id);
  if (ownersOut.length > 0 && countActiveOwners(db, actor.orgId, ownersOut) === 0) throw new Forbidden(LAST_OWNER_REFUSAL);
}

/**
 * Unique keys besides the id, per table: one live row per key (partial unique indexes over
 * `deleted_at IS NULL`, migration 0014), and how a clash is worded for a person.
 */
const UNIQUE_KEYS: Partial<Record<TableName, { columns: readonly string[]; message: string }>> = {
  wellness: {
    columns: ['athlete_id', 'date'],
    message:
      'Wellness for this athlete and day was recorded by someone else a moment ago. Nothing was written; reload the day to see the stored answers and submit again to replace them.',
  },
};

/**
 * The error to throw for a failed row write `e`: a Conflict naming the live row that holds the
 * same unique key (`conflicts[0]`: its table, id and version) when `e` is SQLite's unique
 * constraint on one of UNIQUE_KEYS; otherwise `e` unchanged.
 */
function uniqueConflict(db: Db, orgId: string, table: TableName, values: Record<string, unknown>, e: unknown): unknown {
  const key = UNIQUE_KEYS[table];
  if (!key || (e as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE' || !String((e as Error).message).includes(`${table}.`)) return e;
  const where = key.columns.map((c) => `${c} = ?`).join(' AND ');
  const holder = sqlite(db)
    .prepare(`SELECT id, version FROM ${table} WHERE org_id = ? AND ${where} AND deleted_at IS NULL AND id <> ? LIMIT 1`)
    .get(orgId, ...key.columns.map((c) => encodeValue(values[c])), values.id) as { id: string; version: number } | undefined;
  return new Conflict(key.message, holder ? [{ table, id: holder.id, expectedVersion: 0, actualVersion: holder.version }] : undefined);
}

/**
 * Apply `opts.planned` atomically.
 * @throws Conflict (stale version, existing id, already undone; IdempotencyKeyTaken), IdempotencyKeyReused,
 *         Forbidden / NotFound / Validation (a row change the rules refuse). Nothing is written then.
 */
export function applyChangeset(db: Db, opts: ApplyOptions): AppliedChangeset {
  const { actor, planned } = opts;
  if (planned.changes.length === 0) throw new AppError({ code: 'Validation', message: 'Nothing to change: the changeset is empty.' });
  const contentHash = changesetContentHash(planned);
  const tx = sqlite(db).transaction((): AppliedChangeset => {
    const now = (opts.now ?? new Date()).toISOString();
    if (opts.changesetId) {
      // A pre-assigned id applied once already (an approval sent twice): its first result.
      const done = sqlite(db).prepare(`SELECT status, result_json FROM changeset WHERE id = ? AND org_id = ?`).get(opts.changesetId, actor.orgId) as
        { status: string; result_json: string | null } | undefined;
      if (done && done.status !== 'proposed' && done.status !== 'needs_owner') {
        if (done.status === 'applied' && done.result_json) return { ...(JSON.parse(done.result_json) as AppliedChangeset), replayed: true };
        throw new Conflict(`This change was already ${done.status}; nothing was written.`);
      }
    }
    if (opts.idempotencyKey) {
      const prior = keyedRow(db, actor.orgId, actor.userId, opts.idempotencyKey);
      // The proposal being applied holds the form's key itself: that is not a reuse.
      if (prior && prior.id !== opts.changesetId) {
        const same = opts.requestHash ? prior.request_hash === opts.requestHash : prior.content_hash === contentHash;
        if (!same) throw new IdempotencyKeyReused();
        if (prior.status === 'applied' && prior.result_json) return { ...(JSON.parse(prior.result_json) as AppliedChangeset), replayed: true };
        throw new IdempotencyKeyTaken(prior.id, prior.status);
      }
    }
    const undoOf = opts.undoOf ?? planned.undoOf ?? null;
    if (undoOf) {
      const orig = sqlite(db).prepare('SELECT status, undone_by FROM changeset WHERE id = ? AND org_id = ?').get(undoOf, actor.orgId) as
        { status: string; undone_by: string | null } | undefined;
      if (!orig) throw new NotFound('Changeset');
      if (orig.undone_by || orig.status === 'undone') throw new Conflict('This change has already been undone.');
    }

    // Inverse changes carry a placeholder for "the apply time"; resolve it before any check.
    const changes: RowChange[] = planned.changes.map((c) =>
      c.op === 'delete' ? c : { ...c, after: Object.fromEntries(Object.entries(c.after).map(([k, v]) => [k, resolveNow(v, now)])) },
    );

    // 1. Authorise and version-check every row before writing any.
    checkChangeset(db, actor, changes);

    // 2. Write (on an enrolled device, first remember the server's rows these changes cover).
    const id = opts.changesetId ?? uuidv7();
    recordOptimisticWrite(db, id, changes);
    const versions: Record<string, number> = {};
    const applied: (InsertChange | UpdateChange)[] = [];
    for (const change of changes) {
      if (change.op === 'delete') throw new Forbidden('Hard delete is not supported.');
      if (change.op === 'insert') {
        const cols = columnsOf(change.table);
        const values: Record<string, unknown> = { id: change.id, org_id: actor.orgId, created_at: now, updated_at: now, version: 1, deleted_at: null };
        for (const [k, v] of Object.entries(change.after)) values[k] = v;
        const present = cols.filter((c) => c in values);
        try {
          sqlite(db)
            .prepare(`INSERT INTO ${change.table} (${present.join(', ')}) VALUES (${present.map(() => '?').join(', ')})`)
            .run(...present.map((c) => encodeValue(values[c])));
        } catch (e) {
          throw uniqueConflict(db, actor.orgId, change.table, values, e);
        }
        versions[change.id] = 1;
        applied.push(change);
      } else {
        const after = change.after;
        const cols = Object.keys(after);
        // An account newly linked to an athlete's record (or made an athlete account) loses its PIN.
        const clearPin = clearsPinHash(change, rowFacts(db, change.table, change.id)?.row);
        const sets = [...cols.map((c) => `${c} = ?`), ...(clearPin ? ['pin_hash = NULL'] : [])].join(', ');
        let res: { changes: number };
        try {
          res = sqlite(db)
            .prepare(`UPDATE ${change.table} SET ${sets}${sets ? ', ' : ''}version = version + 1, updated_at = ? WHERE id = ? AND org_id = ? AND version = ?`)
            .run(...cols.map((c) => encodeValue(after[c])), now, change.id, actor.orgId, change.version);
        } catch (e) {
          throw uniqueConflict(db, actor.orgId, change.table, { ...(rowFacts(db, change.table, change.id)?.row ?? {}), ...after, id: change.id }, e);
        }
        if (res.changes !== 1) throw new Conflict(`${change.table} ${change.id} changed while this change was being applied. Nothing was written.`);
        versions[change.id] = change.version + 1;
        applied.push({ ...change, after });
      }
    }

    // 3. Inverse (for Undo), changeset row, activity row, outbox.
    const inverse = applied.map((c) => inverseOf(c, versions[c.id]!)).reverse();
    const activityId = uuidv7();
    const result: AppliedChangeset = {
      id,
      verb: planned.verb,
      summary: planned.summary,
      changes: applied,
      versions,
      activity_id: activityId,
      applied_at: now,
      replayed: false,
      ...(opts.requestHash ? { request_hash: opts.requestHash } : {}),
    };
    const viaLabel = opts.viaLabel ?? (opts.runId ? 'Assistant' : null);
    const viaAssistant = viaLabel ? 1 : 0;
    sqlite(db)
      .prepare(
        `INSERT INTO changeset (id, org_id, user_id, verb, summary, changes_json, inverse_json, content_hash, idempotency_key, request_hash, status, run_id, via_assistant, created_at, applied_at, undo_of, result_json)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'applied', ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET changes_json = excluded.changes_json, inverse_json = excluded.inverse_json, content_hash = excluded.content_hash,
           idempotency_key = coalesce(changeset.idempotency_key, excluded.idempotency_key), request_hash = coalesce(changeset.request_hash, excluded.request_hash),
           status = 'applied', applied_at = excluded.applied_at, undo_of = excluded.undo_of, result_json = excluded.result_json`,
      )
      .run(
        id,
        actor.orgId,
        actor.userId,
        planned.verb,
        planned.summary,
        JSON.stringify(applied),
        JSON.stringify(inverse),
        contentHash,
        opts.idempotencyKey ?? null,
        opts.requestHash ?? null,
        opts.runId ?? null,
        viaAssistant,
        now,
        now,
        undoOf,
        JSON.stringify(result),
      );
    if (undoOf) sqlite(db).prepare(`UPDATE changeset SET status = 'undone', undone_by = ? WHERE id = ?`).run(id, undoOf);
    const first = changes[0]!;
    sqlite(db)
      .prepare(
        'INSERT INTO activity (id, org_id, created_at, actor_user_id, actor_name, via_assistant, run_id, record_table, record_id, summary, changeset_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        activityId,
        actor.orgId,
        now,
        actor.userId,
        viaLabel ? `${actor.displayName} via ${viaLabel}` : actor.displayName,
        viaAssistant,
        opts.runId ?? null,
        first.table,
        first.id,
        planned.summary,
        id,
      );
    sqlite(db)
      .prepare('INSERT INTO outbox (changeset_id, org_id, user_id, payload_json, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, actor.orgId, actor.userId, JSON.stringify({ changeset_id: id, verb: planned.verb, changes: planned.changes }), now);
    return result;
  });
  const out = tx.immediate();
  notifyOutboxAppended(db);
  return out;
}

/** The changeset row a user's idempotency key points at (pending proposal or applied), or undefined. */
function keyedRow(db: Db, orgId: string, userId: string, key: string) {
  return sqlite(db)
    .prepare(
      'SELECT id, verb, user_id, status, content_hash, request_hash, result_json FROM changeset WHERE org_id = ? AND user_id = ? AND idempotency_key = ?',
    )
    .get(orgId, userId, key) as
    { id: string; verb: string; user_id: string; status: string; content_hash: string; request_hash: string | null; result_json: string | null } | undefined;
}

/**
 * The changeset a user's idempotency key already points at: `status` `proposed` / `needs_owner`
 * (a proposal waiting for review), `applied` (with its stored `result`, `replayed: true`),
 * `declined`, `failed` or `undone`; `requestHash` is the hash of the request that made it (null
 * for a changeset stored before migration 0011 without one). Null when the key is unused.
 */
export interface KeyedChangeset {
  id: string;
  verb: string;
  userId: string;
  status: string;
  requestHash: string | null;
  contentHash: string;
  result: AppliedChangeset | null;
}

/** See {@link KeyedChangeset}: the changeset of `userId` in `orgId` stored under idempotency key `key`, or null. */
export function findByIdempotencyKey(db: Db, orgId: string, userId: string, key: string): KeyedChangeset | null {
  const r = keyedRow(db, orgId, userId, key);
  if (!r) return null;
  return {
    id: r.id,
    verb: r.verb,
    userId: r.user_id,
    status: r.status,
    requestHash: r.request_hash,
    contentHash: r.content_hash,
    result: r.result_json ? { ...(JSON.parse(r.result_json) as AppliedChangeset), replayed: true } : null,
  };
}

/**
 * Thrown inside a write when the user's idempotency key already holds a changeset for the same
 * request that is not an applied result to replay (a proposal waiting for review, stored by a
 * concurrent submit a moment earlier, or one since declined). A Conflict for a caller that does
 * not handle it; the form door catches it and answers with that changeset's outcome.
 */
export class IdempotencyKeyTaken extends Conflict {
  constructor(
    readonly changesetId: string,
    readonly status: string,
  ) {
    super(
      status === 'proposed' || status === 'needs_owner'
        ? 'This change was already sent and is waiting for review (Approvals). Nothing more was written.'
        : `This change was already sent and then ${status}. Nothing was written; open the form again to send it anew.`,
    );
  }
}

/**
 * Inside a write transaction: refuse to store a second changeset of `userId` under `key`.
 * @throws IdempotencyKeyReused (the key holds another request), IdempotencyKeyTaken (it holds this request)
 */
export function claimIdempotencyKey(db: Db, orgId: string, userId: string, key: string, requestHash: string | null): void {
  const prior = keyedRow(db, orgId, userId, key);
  if (!prior) return;
  if (requestHash !== null && prior.request_hash !== requestHash) throw new IdempotencyKeyReused();
  throw new IdempotencyKeyTaken(prior.id, prior.status);
}

/** A stored changeset as the services and views see it. */
export interface StoredChangeset {
  id: string;
  org_id: string;
  user_id: string;
  verb: string;
  summary: string;
  changes: RowChange[];
  inverse: UpdateChange[] | null;
  content_hash: string;
  status: string;
  run_id: string | null;
  via_assistant: boolean;
  created_at: string;
  applied_at: string | null;
  undo_of: string | null;
  undone_by: string | null;
}

/** One stored changeset of `orgId`, or null. */
export function getChangeset(db: Db, orgId: string, id: string): StoredChangeset | null {
  const r = sqlite(db).prepare('SELECT * FROM changeset WHERE id = ? AND org_id = ?').get(id, orgId) as Record<string, unknown> | undefined;
  if (!r) return null;
  return {
    id: r.id as string,
    org_id: r.org_id as string,
    user_id: r.user_id as string,
    verb: r.verb as string,
    summary: r.summary as string,
    changes: JSON.parse(r.changes_json as string) as RowChange[],
    inverse: r.inverse_json ? (JSON.parse(r.inverse_json as string) as UpdateChange[]) : null,
    content_hash: r.content_hash as string,
    status: r.status as string,
    run_id: (r.run_id as string | null) ?? null,
    via_assistant: r.via_assistant === 1,
    created_at: r.created_at as string,
    applied_at: (r.applied_at as string | null) ?? null,
    undo_of: (r.undo_of as string | null) ?? null,
    undone_by: (r.undone_by as string | null) ?? null,
  };
}

/** Activity rows of an org, newest first. */
export function listActivity(db: Db, orgId: string, opts: { limit?: number; offset?: number; recordId?: string } = {}): Activity[] {
  const params: unknown[] = [orgId];
  let where = 'org_id = ?';
  if (opts.recordId) {
    where += ' AND record_id = ?';
    params.push(opts.recordId);
  }
  const rows = sqlite(db)
    .prepare(`SELECT * FROM activity WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`)
    .all(...params, opts.limit ?? 100, opts.offset ?? 0) as Record<string, unknown>[];
  return rows.map((r) => ({ ...(r as unknown as Activity), via_assistant: r.via_assistant === 1 }));
}

/** The activity rows written by the changesets of assistant run `runId` in `orgId`, newest first. */
export function activityForRun(db: Db, orgId: string, runId: string): Activity[] {
  const rows = sqlite(db)
    .prepare('SELECT * FROM activity WHERE org_id = ? AND run_id = ? ORDER BY created_at DESC, id DESC LIMIT 500')
    .all(orgId, runId) as Record<string, unknown>[];
  return rows.map((r) => ({ ...(r as unknown as Activity), via_assistant: r.via_assistant === 1 }));
}

/** Pending outbox entries, oldest first (the sync uploader's queue). */
export function pendingOutbox(db: Db, limit = 100): { seq: number; changeset_id: string; org_id: string; user_id: string; payload_json: string }[] {
  return sqlite(db).prepare(`SELECT seq, changeset_id, org_id, user_id, payload_json FROM outbox WHERE status = 'pending' ORDER BY seq LIMIT ?`).all(limit) as {
    seq: number;
    changeset_id: string;
    org_id: string;
    user_id: string;
    payload_json: string;
  }[];
}

export { decodeRow };

/**
 * The applied history of the values `targets` names (models/policy.ts `CUMULATIVE_NUMERIC_FIELDS`:
 * a rate item's price) from this device's changeset log, oldest first, keyed by
 * `numericHistoryKey`: each applied (or later undone) change that set the field, with the value
 * before and after it (the `before` the change was planned and version-checked against), when it
 * was applied, and whether an owner made it or approved it (the author's or the proposal's
 * decider's current role is `owner`). Changes made on other devices reach this one as rows, not as
 * changesets: HQ judges those with its own log (sync/write/apply.ts).
 */
export function numericHistory(db: Db, orgId: string, targets: readonly { table: TableName; id: string; field: string }[]): NumericHistory {
  const out = new Map<string, NumericHistoryEntry[]>();
  if (targets.length === 0) return out;
  const stmt = sqlite(db).prepare(
    `SELECT c.changes_json, coalesce(c.applied_at, c.created_at) AS at, u.role AS author_role, d.role AS decider_role
       FROM changeset c JOIN app_user u ON u.id = c.user_id
       LEFT JOIN changeset_proposal p ON p.id = c.id LEFT JOIN app_user d ON d.id = p.decided_by
      WHERE c.org_id = ? AND c.status IN ('applied', 'undone') AND instr(c.changes_json, ?) > 0
      ORDER BY coalesce(c.applied_at, c.created_at), c.id`,
  );
  for (const t of targets) {
    const key = numericHistoryKey(t.table, t.id, t.field);
    if (out.has(key)) continue;
    const entries: NumericHistoryEntry[] = [];
    const rows = stmt.all(orgId, JSON.stringify(t.id)) as { changes_json: string; at: string; author_role: string; decider_role: string | null }[];
    for (const r of rows) {
      for (const ch of JSON.parse(r.changes_json) as RowChange[]) {
        if (ch.op !== 'update' || ch.table !== t.table || ch.id !== t.id || !(t.field in ch.after)) continue;
        const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
        entries.push({
          at: r.at,
          before: num(ch.before[t.field]),
          after: num(ch.after[t.field]),
          ownerApproved: r.author_role === NEEDS_OWNER_APPROVER || r.decider_role === NEEDS_OWNER_APPROVER,
        });
      }
    }
    out.set(key, entries);
  }
  return out;
}

/**
 * The earlier holders of fee codes `codes` (normalised, models/policy.ts `normaliseFeeCode`) in
 * `orgId`, and the stored price of each rate item of `renamedIds`, for the policy's reused-code
 * rule (models/policy.ts `FeeCodeHistory`, built by `buildFeeCodeHistory`) from this device's rate
 * items (live or deleted) and its changeset log (applied or later undone changes). Renames made on other devices reach this
 * one as rows only: HQ judges those with its own log (sync/write/apply.ts).
 */
export function feeCodeHistory(db: Db, orgId: string, codes: readonly string[], renamedIds: readonly string[]): FeeCodeHistory {
  if (codes.length === 0 && renamedIds.length === 0) return buildFeeCodeHistory(codes, renamedIds, [], []);
  const items = sqlite(db).prepare('SELECT id, code, name, price_cents, updated_at, deleted_at FROM rate_item WHERE org_id = ?').all(orgId) as FeeCodeItemRow[];
  const rows =
    codes.length === 0
      ? []
      : (sqlite(db)
          .prepare(
            `SELECT changes_json, coalesce(applied_at, created_at) AS at FROM changeset
              WHERE org_id = ? AND status IN ('applied', 'undone') AND instr(changes_json, '"rate_item"') > 0
              ORDER BY coalesce(applied_at, created_at), id`,
          )
          .all(orgId) as { changes_json: string; at: string }[]);
  return buildFeeCodeHistory(
    codes,
    renamedIds,
    items,
    rows.map((r) => ({ at: r.at, changes: JSON.parse(r.changes_json) as RowChange[] })),
  );
}
