/**
 * Data access for the Kinetix tables of migration 0002 (conversations, runs, messages, tool
 * calls, run events, usage, traces). The only SQL of the assistant harness lives here; callers
 * in main/kinetix/ pass plain objects. Every JSON column is written by this module with
 * JSON.stringify; values are always bound parameters.
 */
import type { Db } from './db';
import { sqlite, statement } from './sqlite';

/** Run statuses (kinetix_run.status). */
export type RunStatus = 'running' | 'waiting_confirm' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
/** Tool-call statuses (kinetix.md §8). */
export type ToolCallStatus = 'proposed' | 'confirmed' | 'executed' | 'rejected' | 'skipped' | 'failed';

/** A `kinetix_conversation` row (times are ISO-8601 UTC). */
export interface ConversationRow {
  id: string;
  org_id: string;
  user_id: string;
  title: string;
  created_at: string;
  updated_at: string;
}

/** A `kinetix_run` row (times are ISO-8601 UTC). */
export interface RunRow {
  id: string;
  conversation_id: string;
  org_id: string;
  user_id: string;
  status: RunStatus;
  model: string;
  page: string | null;
  /** Process id of the app instance running it (recovery skips runs of a live other process). */
  host_pid: number;
  user_snapshot_json: string;
  tools_json: string;
  request_text: string;
  iterations: number;
  cost_usd: number;
  error_code: string | null;
  error_message: string | null;
  started_at: string;
  finished_at: string | null;
  /**
   * The provider clearance the run was sent under: JSON array of classes (migration 0013); NULL for
   * runs from before it (read as cleared for everything, so their answers are never replayed to a
   * provider cleared for less).
   */
  cleared_for_json: string | null;
}

/** A `kinetix_message` row (times are ISO-8601 UTC). */
export interface MessageRow {
  id: string;
  conversation_id: string;
  run_id: string | null;
  org_id: string;
  role: 'user' | 'assistant';
  content: string;
  created_at: string;
  seq: number;
}

/** A `kinetix_tool_call` row (times are ISO-8601 UTC). */
export interface ToolCallRow {
  id: string;
  run_id: string;
  conversation_id: string;
  org_id: string;
  user_id: string;
  model_tool_use_id: string | null;
  iteration: number;
  tool_name: string;
  title: string;
  risk: string | null;
  /** Arguments with secrets masked (never the real values). */
  args_json: string;
  args_hash: string;
  requires_confirm: number;
  status: ToolCallStatus;
  proposal_json: string | null;
  changeset_id: string | null;
  result_json: string | null;
  error_json: string | null;
  approver_user_id: string | null;
  decided_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A `kinetix_usage` row (times are ISO-8601 UTC). */
export interface UsageRow {
  id: string;
  run_id: string;
  org_id: string;
  user_id: string;
  request_index: number;
  model: string;
  provider: string;
  provider_response_id: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** USD; null when the price is unknown for this model. */
  cost_usd: number | null;
  price_source: string;
  price_version: string;
  price_snapshot_json: string | null;
  /** 1 for a response cut short by Stop or a timeout (the spend it had reached). */
  partial: number;
  created_at: string;
}

/** A `kinetix_run_event` row (times are ISO-8601 UTC). */
export interface RunEventRow {
  run_id: string;
  seq: number;
  type: string;
  event_json: string;
  created_at: string;
}

/** A `kinetix_run_trace` row (times are ISO-8601 UTC). */
export interface TraceRow {
  run_id: string;
  seq: number;
  kind: string;
  data_json: string;
  created_at: string;
}

/** Run `fn` in one transaction (nested calls become savepoints). */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return sqlite(db).transaction(fn).immediate();
}

// Conversations -----------------------------------------------------------------------------

/** Insert a conversation row (one user in one org). */
export function insertConversation(db: Db, c: ConversationRow): void {
  sqlite(db)
    .prepare('INSERT INTO kinetix_conversation (id, org_id, user_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(c.id, c.org_id, c.user_id, c.title, c.created_at, c.updated_at);
}

/** The conversation if it belongs to this user in this org; null otherwise (no existence oracle). */
export function getOwnConversation(db: Db, orgId: string, userId: string, id: string): ConversationRow | null {
  return (
    (sqlite(db).prepare('SELECT * FROM kinetix_conversation WHERE id = ? AND org_id = ? AND user_id = ?').get(id, orgId, userId) as
      ConversationRow | undefined) ?? null
  );
}

/**
 * This user's assistant conversations in this org, most recently active first. An MCP session's
 * audit conversation (id `mcp:…`, kinetix/mcp-audit.ts) holds runs, not chat, and is not listed.
 */
export function listOwnConversations(db: Db, orgId: string, userId: string, limit = 50, offset = 0): ConversationRow[] {
  return sqlite(db)
    .prepare(`SELECT * FROM kinetix_conversation WHERE org_id = ? AND user_id = ? AND id NOT LIKE 'mcp:%' ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`)
    .all(orgId, userId, limit, offset) as ConversationRow[];
}

/** Bump a conversation's `updated_at` (and set its title if it has none). */
export function touchConversation(db: Db, id: string, updatedAt: string, title?: string): void {
  if (title !== undefined)
    sqlite(db)
      .prepare(`UPDATE kinetix_conversation SET updated_at = ?, title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?`)
      .run(updatedAt, title, id);
  else sqlite(db).prepare('UPDATE kinetix_conversation SET updated_at = ? WHERE id = ?').run(updatedAt, id);
}

// Messages ----------------------------------------------------------------------------------

/** Append a user/assistant message; its `seq` is the next in the conversation. */
export function insertMessage(db: Db, m: Omit<MessageRow, 'seq'>): MessageRow {
  const next = (
    sqlite(db).prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM kinetix_message WHERE conversation_id = ?').get(m.conversation_id) as { n: number }
  ).n;
  sqlite(db)
    .prepare('INSERT INTO kinetix_message (id, conversation_id, run_id, org_id, role, content, created_at, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    .run(m.id, m.conversation_id, m.run_id, m.org_id, m.role, m.content, m.created_at, next);
  return { ...m, seq: next };
}

/** The last `limit` messages of a conversation, oldest first, excluding those of `exceptRunId`. */
export function recentMessages(db: Db, conversationId: string, limit: number, exceptRunId?: string): MessageRow[] {
  const rows = sqlite(db)
    .prepare('SELECT * FROM kinetix_message WHERE conversation_id = ? AND (run_id IS NULL OR run_id != ?) ORDER BY seq DESC LIMIT ?')
    .all(conversationId, exceptRunId ?? '', limit) as MessageRow[];
  return rows.reverse();
}

/** Every message of a conversation, oldest first (the thread view). */
export function listMessages(db: Db, conversationId: string): MessageRow[] {
  return sqlite(db).prepare('SELECT * FROM kinetix_message WHERE conversation_id = ? ORDER BY seq').all(conversationId) as MessageRow[];
}

// Runs --------------------------------------------------------------------------------------

/** Insert a run row (status `running` at start). */
export function insertRun(db: Db, r: RunRow): void {
  sqlite(db)
    .prepare(
      `INSERT INTO kinetix_run (id, conversation_id, org_id, user_id, status, model, page, host_pid, user_snapshot_json, tools_json, request_text, iterations, cost_usd, error_code, error_message, started_at, finished_at, cleared_for_json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      r.id,
      r.conversation_id,
      r.org_id,
      r.user_id,
      r.status,
      r.model,
      r.page,
      r.host_pid,
      r.user_snapshot_json,
      r.tools_json,
      r.request_text,
      r.iterations,
      r.cost_usd,
      r.error_code,
      r.error_message,
      r.started_at,
      r.finished_at,
      r.cleared_for_json,
    );
}

/** Each run's recorded provider clearance (`cleared_for_json`, NULL for runs before migration 0013), by run id; unknown ids are absent. */
export function runClearances(db: Db, runIds: readonly string[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const stmt = sqlite(db).prepare('SELECT cleared_for_json FROM kinetix_run WHERE id = ?');
  for (const id of new Set(runIds)) {
    const r = stmt.get(id) as { cleared_for_json: string | null } | undefined;
    if (r) out.set(id, r.cleared_for_json);
  }
  return out;
}

const RUN_PATCHABLE = ['status', 'iterations', 'cost_usd', 'error_code', 'error_message', 'finished_at', 'model'] as const;
type RunPatch = Partial<Pick<RunRow, (typeof RUN_PATCHABLE)[number]>>;

/** Patch a run's status, counters, cost or error (only the listed columns). */
export function updateRun(db: Db, id: string, patch: RunPatch): void {
  const cols = RUN_PATCHABLE.filter((c) => patch[c] !== undefined);
  if (cols.length === 0) return;
  sqlite(db)
    .prepare(`UPDATE kinetix_run SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`)
    .run(...cols.map((c) => patch[c] ?? null), id);
}

/** A run by id (any user: callers check ownership), or null. */
export function getRun(db: Db, id: string): RunRow | null {
  return (sqlite(db).prepare('SELECT * FROM kinetix_run WHERE id = ?').get(id) as RunRow | undefined) ?? null;
}

/** Runs of a conversation, oldest first. */
export function listRuns(db: Db, conversationId: string): RunRow[] {
  return sqlite(db).prepare('SELECT * FROM kinetix_run WHERE conversation_id = ? ORDER BY started_at, id').all(conversationId) as RunRow[];
}

// Tool calls --------------------------------------------------------------------------------

/** Insert a tool-call audit row; written before the tool runs. `args_json` must already be masked. */
export function insertToolCall(db: Db, t: ToolCallRow): void {
  statement(
    db,
    `INSERT INTO kinetix_tool_call (id, run_id, conversation_id, org_id, user_id, model_tool_use_id, iteration, tool_name, title, risk, args_json, args_hash, requires_confirm, status,
         proposal_json, changeset_id, result_json, error_json, approver_user_id, decided_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    t.id,
    t.run_id,
    t.conversation_id,
    t.org_id,
    t.user_id,
    t.model_tool_use_id,
    t.iteration,
    t.tool_name,
    t.title,
    t.risk,
    t.args_json,
    t.args_hash,
    t.requires_confirm,
    t.status,
    t.proposal_json,
    t.changeset_id,
    t.result_json,
    t.error_json,
    t.approver_user_id,
    t.decided_at,
    t.created_at,
    t.updated_at,
  );
}

const TOOL_PATCHABLE = ['status', 'proposal_json', 'changeset_id', 'result_json', 'error_json', 'approver_user_id', 'decided_at', 'updated_at'] as const;
type ToolPatch = Partial<Pick<ToolCallRow, (typeof TOOL_PATCHABLE)[number]>>;

/** Patch a tool call's status, proposal, result, error or decision. */
export function updateToolCall(db: Db, id: string, patch: ToolPatch): void {
  const cols = TOOL_PATCHABLE.filter((c) => patch[c] !== undefined);
  if (cols.length === 0) return;
  statement(db, `UPDATE kinetix_tool_call SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`).run(...cols.map((c) => patch[c] ?? null), id);
}

/** A tool call by id (any user: callers check ownership), or null. */
export function getToolCall(db: Db, id: string): ToolCallRow | null {
  return (statement(db, 'SELECT * FROM kinetix_tool_call WHERE id = ?').get(id) as ToolCallRow | undefined) ?? null;
}

/** Tool calls of a run, in the order they were proposed. */
export function listToolCalls(db: Db, runId: string): ToolCallRow[] {
  return sqlite(db).prepare('SELECT * FROM kinetix_tool_call WHERE run_id = ? ORDER BY created_at, rowid').all(runId) as ToolCallRow[];
}

/** The most recent `limit` executed tool calls of a conversation, newest first. */
export function recentExecutedToolCalls(db: Db, conversationId: string, limit: number): ToolCallRow[] {
  return sqlite(db)
    .prepare(`SELECT * FROM kinetix_tool_call WHERE conversation_id = ? AND status = 'executed' ORDER BY created_at DESC, rowid DESC LIMIT ?`)
    .all(conversationId, limit) as ToolCallRow[];
}

// Events ------------------------------------------------------------------------------------

/** Persist one AG-UI event of a run at sequence `seq` (1, 2, 3… per run). */
export function insertRunEvent(db: Db, e: RunEventRow): void {
  statement(db, 'INSERT INTO kinetix_run_event (run_id, seq, type, event_json, created_at) VALUES (?, ?, ?, ?, ?)').run(
    e.run_id,
    e.seq,
    e.type,
    e.event_json,
    e.created_at,
  );
}

/** Persisted events of a run with `seq > afterSeq`, in order. */
export function listRunEvents(db: Db, runId: string, afterSeq = 0): RunEventRow[] {
  return sqlite(db).prepare('SELECT * FROM kinetix_run_event WHERE run_id = ? AND seq > ? ORDER BY seq').all(runId, afterSeq) as RunEventRow[];
}

/** The last persisted event sequence of a run (0 when none). */
export function maxRunEventSeq(db: Db, runId: string): number {
  return (sqlite(db).prepare('SELECT COALESCE(MAX(seq), 0) AS n FROM kinetix_run_event WHERE run_id = ?').get(runId) as { n: number }).n;
}

// Usage -------------------------------------------------------------------------------------

/** Insert one usage row; a second row for the same (run_id, request_index) is ignored. Returns true when inserted. */
export function insertUsage(db: Db, u: UsageRow): boolean {
  const res = statement(
    db,
    `INSERT INTO kinetix_usage (id, run_id, org_id, user_id, request_index, model, provider, provider_response_id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
         cost_usd, price_source, price_version, price_snapshot_json, partial, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id, request_index) DO NOTHING`,
  ).run(
    u.id,
    u.run_id,
    u.org_id,
    u.user_id,
    u.request_index,
    u.model,
    u.provider,
    u.provider_response_id,
    u.input_tokens,
    u.output_tokens,
    u.cache_read_tokens,
    u.cache_write_tokens,
    u.cost_usd,
    u.price_source,
    u.price_version,
    u.price_snapshot_json,
    u.partial,
    u.created_at,
  );
  return res.changes === 1;
}

/** Usage rows of a run in request order. */
export function listUsage(db: Db, runId: string): UsageRow[] {
  return sqlite(db).prepare('SELECT * FROM kinetix_usage WHERE run_id = ? ORDER BY request_index').all(runId) as UsageRow[];
}

/** Summed cost (USD) since `sinceIso` for an org, and for one user of it. */
export function spendSince(db: Db, orgId: string, userId: string, sinceIso: string): { orgUsd: number; userUsd: number } {
  const org = sqlite(db).prepare('SELECT COALESCE(SUM(cost_usd), 0) AS s FROM kinetix_usage WHERE org_id = ? AND created_at >= ?').get(orgId, sinceIso) as {
    s: number;
  };
  const user = sqlite(db)
    .prepare('SELECT COALESCE(SUM(cost_usd), 0) AS s FROM kinetix_usage WHERE org_id = ? AND user_id = ? AND created_at >= ?')
    .get(orgId, userId, sinceIso) as { s: number };
  return { orgUsd: org.s, userUsd: user.s };
}

/** Set the organisation's monthly assistant cap (USD; null = no cap). Bumps the row's version. */
export function setOrgBudgetCap(db: Db, orgId: string, capUsd: number | null, nowIso: string): void {
  sqlite(db).prepare('UPDATE organization SET budget_cap_usd = ?, updated_at = ?, version = version + 1 WHERE id = ?').run(capUsd, nowIso, orgId);
}

/** The org's and the user's monthly assistant caps (USD; null = no cap). */
export function budgetCaps(db: Db, orgId: string, userId: string): { orgCapUsd: number | null; userCapUsd: number | null } {
  const o = sqlite(db).prepare('SELECT budget_cap_usd FROM organization WHERE id = ?').get(orgId) as { budget_cap_usd: number | null } | undefined;
  const u = sqlite(db).prepare('SELECT budget_cap_usd FROM app_user WHERE id = ? AND org_id = ?').get(userId, orgId) as
    { budget_cap_usd: number | null } | undefined;
  return { orgCapUsd: o?.budget_cap_usd ?? null, userCapUsd: u?.budget_cap_usd ?? null };
}

// Traces ------------------------------------------------------------------------------------

/** Append one trace entry (request, model step, tool call, decision, approval, write, finish). */
export function insertTrace(db: Db, t: TraceRow): void {
  statement(db, 'INSERT INTO kinetix_run_trace (run_id, seq, kind, data_json, created_at) VALUES (?, ?, ?, ?, ?)').run(
    t.run_id,
    t.seq,
    t.kind,
    t.data_json,
    t.created_at,
  );
}

/** A run's trace entries in order. */
export function listTrace(db: Db, runId: string): TraceRow[] {
  return sqlite(db).prepare('SELECT * FROM kinetix_run_trace WHERE run_id = ? ORDER BY seq').all(runId) as TraceRow[];
}

/** The last trace sequence of a run (0 when none). */
export function maxTraceSeq(db: Db, runId: string): number {
  return (sqlite(db).prepare('SELECT COALESCE(MAX(seq), 0) AS n FROM kinetix_run_trace WHERE run_id = ?').get(runId) as { n: number }).n;
}

// Recovery ----------------------------------------------------------------------------------

/**
 * True when a changeset with this id was applied here (used to settle a confirmed call after a
 * crash), including one undone since or refused by HQ later (`refused`: main/data/sync.ts).
 */
export function changesetExists(db: Db, id: string): boolean {
  return sqlite(db).prepare(`SELECT 1 FROM changeset WHERE id = ? AND status IN ('applied', 'undone', 'refused')`).get(id) !== undefined;
}

/** Status of a changeset row (`proposed`, `needs_owner`, `applied`, …), or null when there is none. */
export function changesetStatus(db: Db, id: string): string | null {
  const r = sqlite(db).prepare('SELECT status FROM changeset WHERE id = ?').get(id) as { status: string } | undefined;
  return r?.status ?? null;
}

/** Runs that were in flight (running or waiting for a confirmation). */
export function inFlightRuns(db: Db): RunRow[] {
  return sqlite(db).prepare(`SELECT * FROM kinetix_run WHERE status IN ('running', 'waiting_confirm') ORDER BY started_at`).all() as RunRow[];
}

// Run leases and run starts (issue 9 §1) ------------------------------------------------------

/** One run lease: the owning host and process, and its last heartbeat (epoch ms). */
export interface RunLeaseRow {
  run_id: string;
  org_id: string;
  user_id: string;
  host: string;
  pid: number;
  acquired_at_ms: number;
  heartbeat_at_ms: number;
}

/** What {@link acquireRunLease} checks, in this order. */
export interface LeaseLimits {
  maxConcurrentPerUser: number;
  userRunsPerMinute: number;
  orgRunsPerMinute: number;
  /** A lease whose heartbeat is older than this (ms) is reclaimed, wherever its process runs. */
  staleAfterMs: number;
}

/** Outcome of {@link acquireRunLease}: taken, or the first limit that refused (nothing written then). */
export type LeaseOutcome =
  { ok: true; reclaimed: number } | { ok: false; limit: 'concurrency'; running: number } | { ok: false; limit: 'user_rate' | 'org_rate'; retryAfterMs: number };

const RATE_WINDOW_MS = 60_000;

/**
 * Take a run lease for `userId` inside the database write lock (BEGIN IMMEDIATE), so every
 * process sharing the file sees one count. First reclaims leases whose process is gone (same
 * `host` and `processGone(pid)`) or whose heartbeat is older than `staleAfterMs`; then refuses on
 * the per-user concurrency cap, then on the per-user and per-org one-minute rates (sliding
 * window over recorded starts); otherwise records the lease and the start.
 */
export function acquireRunLease(
  db: Db,
  lease: { runId: string; orgId: string; userId: string; host: string; pid: number; nowMs: number },
  limits: LeaseLimits,
  processGone: (pid: number) => boolean,
): LeaseOutcome {
  return sqlite(db)
    .transaction((): LeaseOutcome => {
      const now = lease.nowMs;
      let reclaimed = 0;
      for (const l of sqlite(db).prepare('SELECT * FROM kinetix_run_lease').all() as RunLeaseRow[]) {
        const dead = l.heartbeat_at_ms < now - limits.staleAfterMs || (l.host === lease.host && l.pid !== lease.pid && processGone(l.pid));
        if (dead) reclaimed += sqlite(db).prepare('DELETE FROM kinetix_run_lease WHERE run_id = ?').run(l.run_id).changes;
      }
      const running = (sqlite(db).prepare('SELECT COUNT(*) AS n FROM kinetix_run_lease WHERE user_id = ?').get(lease.userId) as { n: number }).n;
      if (running >= limits.maxConcurrentPerUser) return { ok: false, limit: 'concurrency', running };
      const since = now - RATE_WINDOW_MS;
      const window = (col: 'user_id' | 'org_id', id: string) =>
        sqlite(db)
          .prepare(`SELECT COUNT(*) AS n, MIN(started_at_ms) AS oldest FROM kinetix_run_start WHERE ${col} = ? AND started_at_ms > ?`)
          .get(id, since) as {
          n: number;
          oldest: number | null;
        };
      const user = window('user_id', lease.userId);
      if (user.n >= limits.userRunsPerMinute) return { ok: false, limit: 'user_rate', retryAfterMs: (user.oldest ?? now) + RATE_WINDOW_MS - now };
      const org = window('org_id', lease.orgId);
      if (org.n >= limits.orgRunsPerMinute) return { ok: false, limit: 'org_rate', retryAfterMs: (org.oldest ?? now) + RATE_WINDOW_MS - now };
      sqlite(db)
        .prepare('INSERT INTO kinetix_run_lease (run_id, org_id, user_id, host, pid, acquired_at_ms, heartbeat_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(lease.runId, lease.orgId, lease.userId, lease.host, lease.pid, now, now);
      sqlite(db).prepare('INSERT INTO kinetix_run_start (org_id, user_id, started_at_ms) VALUES (?, ?, ?)').run(lease.orgId, lease.userId, now);
      sqlite(db)
        .prepare('DELETE FROM kinetix_run_start WHERE started_at_ms < ?')
        .run(now - 60 * RATE_WINDOW_MS);
      return { ok: true, reclaimed };
    })
    .immediate();
}

/** Drop a run's lease (the run ended). Idempotent. */
export function releaseRunLease(db: Db, runId: string): void {
  sqlite(db).prepare('DELETE FROM kinetix_run_lease WHERE run_id = ?').run(runId);
}

/** Refresh the heartbeat of the given runs' leases. */
export function heartbeatRunLeases(db: Db, runIds: readonly string[], nowMs: number): void {
  const stmt = sqlite(db).prepare('UPDATE kinetix_run_lease SET heartbeat_at_ms = ? WHERE run_id = ?');
  sqlite(db).transaction(() => {
    for (const id of runIds) stmt.run(nowMs, id);
  })();
}

/** Leases held by a user (diagnostics and tests). */
export function listRunLeases(db: Db, userId: string): RunLeaseRow[] {
  return sqlite(db).prepare('SELECT * FROM kinetix_run_lease WHERE user_id = ? ORDER BY acquired_at_ms').all(userId) as RunLeaseRow[];
}
