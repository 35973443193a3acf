/**
 * Apply a planned changeset in one SQLite transaction: authorise every row change with the pure
 * rules of models/changeset.ts, check every version (any stale row → Conflict, nothing
 * written), write the rows and bump `version`, write one `activity` row, append the changeset
 * to the outbox, store its inverse for Undo, and honour an idempotency key (a retry with the
 * same key and content returns the first result).
 */
import type { AppliedChangesetView } from '../../models/contract';
import { createHash } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import type { PlannedChangeset, RowChange, RuleActor, UpdateChange, InsertChange } from '../../models/changeset';
import { authorizeChange, canonicalJson, inverseOf, NOW_PLACEHOLDER } from '../../models/changeset';
import { AppError, Conflict, Forbidden, NotFound } from '../../models/errors';
import type { Activity } from '../../models/records';
import type { Db } from './db';
import { TABLES } from '../../models/tables';
import { columnsOf, decodeRow, encodeValue, liveRowInOrg, rowFacts } from './rows';
import { recordOptimisticWrite } from './sync';
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
  /** A retry with the same key and content returns the first result; other content → Conflict. */
  idempotencyKey?: string | null;
  /** Set when the changeset was proposed by the assistant: activity reads "Name via Assistant", linked to the run. */
  runId?: string | null;
  /** Who prepared it for the user, when not the user: `Assistant` (default with a runId) or `MCP client`. */
  viaLabel?: string;
  /** Id of the changeset this one undoes (marks it undone in the same transaction). */
  undoOf?: string | null;
  /** Hash of the request that produced this changeset; stored so a retry can be matched to it. */
  requestHash?: string;
  /** Pre-assigned changeset id (e.g. an assistant proposal); a new UUID v7 otherwise. */
  changesetId?: string;
  now?: Date;
}

/** SHA-256 over the canonical JSON of verb and row changes: what an approval is bound to. */
export function changesetContentHash(planned: Pick<PlannedChangeset, 'verb' | 'changes'>): string {
  return createHash('sha256')
    .update(canonicalJson({ verb: planned.verb, changes: planned.changes }))
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
}

/**
 * Apply `opts.planned` atomically.
 * @throws Conflict (stale version, existing id, reused idempotency key, already undone),
 *         Forbidden / NotFound / Validation (a row change the rules refuse). Nothing is written then.
 */
export function applyChangeset(db: Db, opts: ApplyOptions): AppliedChangeset {
  const { actor, planned } = opts;
  if (planned.changes.length === 0) throw new AppError({ code: 'Validation', message: 'Nothing to change: the changeset is empty.' });
  const contentHash = changesetContentHash(planned);
  const tx = sqlite(db).transaction((): AppliedChangeset => {
    const now = (opts.now ?? new Date()).toISOString();
    if (opts.idempotencyKey) {
      const prior = sqlite(db)
        .prepare('SELECT user_id, content_hash, result_json FROM changeset WHERE org_id = ? AND idempotency_key = ?')
        .get(actor.orgId, opts.idempotencyKey) as { user_id: string; content_hash: string; result_json: string | null } | undefined;
      if (prior) {
        if (prior.user_id !== actor.userId || prior.content_hash !== contentHash || !prior.result_json) {
          throw new Conflict('This idempotency key was already used for a different change. Use a new key for a new change.');
        }
        return { ...(JSON.parse(prior.result_json) as AppliedChangeset), replayed: true };
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
        sqlite(db)
          .prepare(`INSERT INTO ${change.table} (${present.join(', ')}) VALUES (${present.map(() => '?').join(', ')})`)
          .run(...present.map((c) => encodeValue(values[c])));
        versions[change.id] = 1;
        applied.push(change);
      } else {
        const after = change.after;
        const cols = Object.keys(after);
        const sets = cols.map((c) => `${c} = ?`).join(', ');
        const res = sqlite(db)
          .prepare(`UPDATE ${change.table} SET ${sets}${sets ? ', ' : ''}version = version + 1, updated_at = ? WHERE id = ? AND org_id = ? AND version = ?`)
          .run(...cols.map((c) => encodeValue(after[c])), now, change.id, actor.orgId, change.version);
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
        `INSERT INTO changeset (id, org_id, user_id, verb, summary, changes_json, inverse_json, content_hash, idempotency_key, status, run_id, via_assistant, created_at, applied_at, undo_of, result_json)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'applied', ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET changes_json = excluded.changes_json, inverse_json = excluded.inverse_json, content_hash = excluded.content_hash,
           idempotency_key = excluded.idempotency_key, status = 'applied', applied_at = excluded.applied_at, undo_of = excluded.undo_of, result_json = excluded.result_json`,
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
  return tx.immediate();
}

/** The stored result of the changeset applied with this idempotency key, or null. */
export function findByIdempotencyKey(db: Db, orgId: string, key: string): { verb: string; userId: string; result: AppliedChangeset } | null {
  const r = sqlite(db).prepare('SELECT verb, user_id, result_json FROM changeset WHERE org_id = ? AND idempotency_key = ?').get(orgId, key) as
    { verb: string; user_id: string; result_json: string | null } | undefined;
  if (!r || !r.result_json) return null;
  return { verb: r.verb, userId: r.user_id, result: { ...(JSON.parse(r.result_json) as AppliedChangeset), replayed: true } };
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
