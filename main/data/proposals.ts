/**
 * Data access for changeset proposals (migration 0004): a planned changeset stored as a
 * `changeset` row with status `proposed` / `needs_owner` plus its `changeset_proposal` row. The
 * rules (who may approve, the policy, the apply) live in main/kinetix/proposals.ts; this module
 * only reads and writes rows, always with bound parameters.
 */
import type { PlannedChangeset, RowChange } from '../../models/changeset';
import type { Db } from './db';
import { claimIdempotencyKey } from './changesets';
import { sqlite } from './sqlite';

/** Status of a proposal (and of its changeset row until it is applied). */
export type ProposalStatus = 'proposed' | 'needs_owner' | 'applied' | 'declined' | 'failed';
/** Where a proposal came from: an assistant run, an MCP client, or one of the app's entry forms. */
export type ProposalSource = 'assistant' | 'mcp' | 'page';

/** A `changeset_proposal` row joined with its changeset's verb, summary and changes. */
export interface ProposalRow {
  id: string;
  org_id: string;
  user_id: string;
  source: ProposalSource;
  run_id: string | null;
  tool_call_id: string | null;
  tool_name: string;
  title: string;
  status: ProposalStatus;
  verdict: 'allow' | 'needs_owner';
  policy_json: string;
  content_hash: string;
  decided_by: string | null;
  decided_at: string | null;
  failure_json: string | null;
  created_at: string;
  updated_at: string;
  /** The device the proposal was made on, when another one (synced through HQ; migration 0015), else null. */
  origin_device_id: string | null;
  origin_device_name: string | null;
  /** From the changeset row. */
  verb: string;
  summary: string;
  changes_json: string;
  undo_of: string | null;
  result_json: string | null;
}

/** What {@link insertProposal} stores. */
export interface NewProposal {
  id: string;
  orgId: string;
  userId: string;
  source: ProposalSource;
  runId: string | null;
  toolCallId: string | null;
  toolName: string;
  title: string;
  status: 'proposed' | 'needs_owner';
  verdict: 'allow' | 'needs_owner';
  policyJson: string;
  contentHash: string;
  planned: PlannedChangeset;
  createdAt: string;
  /** The form's idempotency key: one key → at most one changeset of the user (see {@link claimIdempotencyKey}). */
  idempotencyKey?: string | null;
  /** Hash of the request (verb and input) the key was sent with. */
  requestHash?: string | null;
}

/**
 * Insert the changeset row (status = proposal status, not applied) and the proposal row, in one
 * transaction; with an idempotency key, only when the user's key is still unused.
 * @throws IdempotencyKeyTaken / IdempotencyKeyReused (the key already holds a changeset)
 */
export function insertProposal(db: Db, p: NewProposal): void {
  sqlite(db)
    .transaction(() => {
      if (p.idempotencyKey) claimIdempotencyKey(db, p.orgId, p.userId, p.idempotencyKey, p.requestHash ?? null);
      sqlite(db)
        .prepare(
          `INSERT INTO changeset (id, org_id, user_id, verb, summary, changes_json, inverse_json, content_hash, idempotency_key, request_hash, status, run_id, via_assistant, created_at, applied_at, undo_of, result_json)
         VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL)`,
        )
        .run(
          p.id,
          p.orgId,
          p.userId,
          p.planned.verb,
          p.planned.summary,
          JSON.stringify(p.planned.changes),
          p.contentHash,
          p.idempotencyKey ?? null,
          p.requestHash ?? null,
          p.status,
          p.runId,
          p.runId ? 1 : 0,
          p.createdAt,
          p.planned.undoOf ?? null,
        );
      sqlite(db)
        .prepare(
          `INSERT INTO changeset_proposal (id, org_id, user_id, source, run_id, tool_call_id, tool_name, title, status, verdict, policy_json, content_hash, decided_by, decided_at, failure_json, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?)`,
        )
        .run(
          p.id,
          p.orgId,
          p.userId,
          p.source,
          p.runId,
          p.toolCallId,
          p.toolName,
          p.title,
          p.status,
          p.verdict,
          p.policyJson,
          p.contentHash,
          p.createdAt,
          p.createdAt,
        );
      // On an enrolled device a change waiting for an owner is reported to HQ (POST /v1/proposals),
      // so an owner signed in on any of the club's devices can decide it (migration 0015).
      if (p.status === 'needs_owner') queueProposalEvent(db, p.id, 'propose', p.userId, p.createdAt);
    })
    .immediate();
}

/**
 * Queue a proposal event for HQ (migration 0015 `sync_proposal_event`), in the caller's
 * transaction; nothing on a file that is not enrolled. One event per proposal and kind.
 */
function queueProposalEvent(db: Db, proposalId: string, op: 'propose' | 'decline', userId: string, at: string): void {
  if (!sqlite(db).prepare('SELECT 1 FROM sync_enrolment WHERE id = 1').get()) return;
  sqlite(db).prepare('INSERT OR IGNORE INTO sync_proposal_event (proposal_id, op, user_id, created_at) VALUES (?, ?, ?, ?)').run(proposalId, op, userId, at);
}

const SELECT = `SELECT p.*, c.verb AS verb, c.summary AS summary, c.changes_json AS changes_json, c.undo_of AS undo_of, c.result_json AS result_json
  FROM changeset_proposal p JOIN changeset c ON c.id = p.id`;

/** One proposal of `orgId`, or null. */
export function findProposal(db: Db, orgId: string, id: string): ProposalRow | null {
  return (sqlite(db).prepare(`${SELECT} WHERE p.id = ? AND p.org_id = ?`).get(id, orgId) as ProposalRow | undefined) ?? null;
}

/**
 * The id of `userId`'s open proposal (`proposed` / `needs_owner`) from `source` in `orgId` with
 * this verb and content hash (the same planned changes), newest first; null when there is none.
 */
export function findOpenProposalByContent(db: Db, orgId: string, userId: string, source: ProposalSource, verb: string, contentHash: string): string | null {
  const r = sqlite(db)
    .prepare(
      `SELECT p.id FROM changeset_proposal p JOIN changeset c ON c.id = p.id
        WHERE p.org_id = ? AND p.user_id = ? AND p.source = ? AND c.verb = ? AND p.content_hash = ? AND p.status IN ('proposed', 'needs_owner')
        ORDER BY p.created_at DESC, p.id DESC LIMIT 1`,
    )
    .get(orgId, userId, source, verb, contentHash) as { id: string } | undefined;
  return r?.id ?? null;
}

/** How many proposals of assistant run `runId` in `orgId` needed an owner's approval (waiting or decided). */
export function countNeedsOwnerForRun(db: Db, orgId: string, runId: string): number {
  return (
    sqlite(db).prepare(`SELECT count(*) AS n FROM changeset_proposal WHERE org_id = ? AND run_id = ? AND verdict = 'needs_owner'`).get(orgId, runId) as {
      n: number;
    }
  ).n;
}

/**
 * Proposals visible to a user: their own, plus (when `includeNeedsOwner`) every proposal of the
 * org that needed an owner (waiting, applied, declined or failed). Newest first; optionally one
 * status only.
 */
export function listProposalRows(
  db: Db,
  orgId: string,
  userId: string,
  opts: { status?: ProposalStatus; includeNeedsOwner?: boolean; limit?: number; offset?: number } = {},
): ProposalRow[] {
  const params: unknown[] = [orgId, userId];
  let who = 'p.user_id = ?';
  if (opts.includeNeedsOwner) who = `(${who} OR p.verdict = 'needs_owner')`;
  let where = `p.org_id = ? AND ${who}`;
  if (opts.status) {
    where += ' AND p.status = ?';
    params.push(opts.status);
  }
  return sqlite(db)
    .prepare(`${SELECT} WHERE ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT ? OFFSET ?`)
    .all(...params, opts.limit ?? 100, opts.offset ?? 0) as ProposalRow[];
}

/**
 * Move an open proposal (`proposed` / `needs_owner`) to a final status, with its changeset row
 * (unless it was applied: apply already set the changeset row). Returns false when the proposal
 * was no longer open (someone decided first).
 */
export function closeProposal(
  db: Db,
  id: string,
  patch: { status: Exclude<ProposalStatus, 'proposed' | 'needs_owner'>; decidedBy: string | null; decidedAt: string; failureJson?: string | null },
): boolean {
  return sqlite(db).transaction(() => {
    const res = sqlite(db)
      .prepare(
        `UPDATE changeset_proposal SET status = ?, decided_by = ?, decided_at = ?, failure_json = ?, updated_at = ? WHERE id = ? AND status IN ('proposed', 'needs_owner')`,
      )
      .run(patch.status, patch.decidedBy, patch.decidedAt, patch.failureJson ?? null, patch.decidedAt, id);
    if (res.changes !== 1) return false;
    if (patch.status !== 'applied')
      sqlite(db).prepare(`UPDATE changeset SET status = ? WHERE id = ? AND status IN ('proposed', 'needs_owner')`).run(patch.status, id);
    // A change that waited for an owner, declined here: HQ and the other devices learn it (migration 0015).
    if (patch.status === 'declined' && patch.decidedBy) {
      const verdict = sqlite(db).prepare('SELECT verdict FROM changeset_proposal WHERE id = ?').pluck().get(id);
      if (verdict === 'needs_owner') queueProposalEvent(db, id, 'decline', patch.decidedBy, patch.decidedAt);
    }
    return true;
  })();
}

/**
 * Move the idempotency key (and its request hash) of proposal `fromId` to `toId`, which replaces
 * it (rows left out before approval): a re-sent form then finds the replacement. Call inside the
 * transaction that declines `fromId` and stores `toId`.
 */
export function moveIdempotencyKey(db: Db, fromId: string, toId: string): void {
  const from = sqlite(db).prepare('SELECT idempotency_key, request_hash FROM changeset WHERE id = ?').get(fromId) as
    { idempotency_key: string | null; request_hash: string | null } | undefined;
  if (!from?.idempotency_key) return;
  sqlite(db).prepare('UPDATE changeset SET idempotency_key = NULL WHERE id = ?').run(fromId);
  sqlite(db).prepare('UPDATE changeset SET idempotency_key = ?, request_hash = ? WHERE id = ?').run(from.idempotency_key, from.request_hash, toId);
}

/** The planned changeset stored with a proposal. */
export function plannedOf(row: ProposalRow): PlannedChangeset {
  const planned: PlannedChangeset = { verb: row.verb, summary: row.summary, changes: JSON.parse(row.changes_json) as RowChange[] };
  if (row.undo_of) planned.undoOf = row.undo_of;
  return planned;
}
