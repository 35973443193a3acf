/**
 * The Kinetix run loop (kinetix.md §2–8). A run is detached from its caller and carries a copy of
 * the signed-in user and nothing else; every tool call re-reads the user through the service
 * layer with a five-minute capability narrowed to the tool's scopes. Writes pause for a human
 * (persisted `proposed` row → `confirm_required` → approve/decline/timeout/Stop). Every event is
 * persisted with a sequence number before it is published to views.
 *
 * Public API (what the UI, MCP host and eval harness call): {@link Kinetix.startRun},
 * {@link Kinetix.subscribe}, {@link Kinetix.confirm}, {@link Kinetix.stop},
 * {@link Kinetix.waitForRun}, {@link Kinetix.listConversations}, {@link Kinetix.getConversation},
 * {@link Kinetix.getRunTrace}, and the proposals in the app: {@link Kinetix.listProposals},
 * {@link Kinetix.getProposal}, {@link Kinetix.approveProposal}, {@link Kinetix.declineProposal}.
 * Writes are stored as proposals (proposals.ts) with the policy's decisions; a needs-owner change
 * does not block the run, it waits in the app.
 */
import type { AGUIEvent } from '@ag-ui/core';
import { context as otelContext, SpanStatusCode, trace as otel, type Span } from '@opentelemetry/api';
import { EventType } from '@ag-ui/core';
import { createHmac, randomBytes } from 'node:crypto';
import { join, dirname } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { canonicalJson } from '../../models/changeset';
import type { ErrorPayload } from '../../models/errors';
import { AppError, Conflict, Forbidden, NotFound, ValidationError, toErrorPayload } from '../../models/errors';
import type { PolicyDecision, PolicyVerdict } from '../../models/policy';
import { hasPermission } from '../../models/roles';
import type { Db } from '../data/db';
import { findOrganization, findUserById, getOrgSetting } from '../data/identity';
import * as K from '../data/kinetix';
import type { Capability, ServiceContext } from '../services/context';
import { EventBus, type RunEventEnvelope } from './bus';
import { KINETIX_EVENTS } from './events';
import type { Classification } from './classification';
import { CLEARANCE_SETTING_KEY, parseClearance, withholdRestricted } from './classification';
import { BudgetExceeded, KinetixNotConfigured, ProviderError, UnknownTool } from './errors';
import type { KinetixLimits } from './limits';
import { BUDGET_STOP_MESSAGE, checkBudget, DEFAULT_LIMITS, LEASE_HEARTBEAT_MS, pidAlive, takeRunLease } from './limits';
import { maskSecrets, redactText, scrubText, TextRedactor } from './mask';
import { ceilingCostOf, costOf, PRICE_CEILING_PER_MTOK, PRICE_SOURCE, PRICE_VERSION, type TokenCounts } from './pricing';
import {
  buildDigest,
  dataEnvelope,
  DECLINED_MESSAGE,
  HARD_RULES,
  identityBlock,
  replayHistory,
  type ChatTurn,
  type DigestEntry,
  MAX_HISTORY_MESSAGES,
} from './prompt';
import type { ModelBlock, ModelMessage, ModelProvider, ModelResponse, ToolInputIssue } from './provider';
import { boundsMessage, digestInput, measureInput } from './bounds';
import { AnthropicProvider } from './provider';
import type { LogFn, ToolRegistry } from './registry';
import type { Scheduler } from './scheduler';
import { realScheduler } from './scheduler';
import { SecretBox, resolveProviderKey } from './secrets';
import { gateSnapshot, isUntrusted } from './gate';
import {
  approveProposal,
  declineProposal,
  expireProposal,
  getProposal,
  listProposals,
  needsOwnerMessage,
  PolicyDenied,
  proposeChangeset,
  type ProposalStatus,
  type ProposalView,
} from './proposals';
import type { AppliedChangeset } from '../data/changesets';
import { initTelemetry, telemetryCapturesContent } from '../telemetry/otel';
import type { Proposal, Tool, ToolContext } from './tool';
import { toolInputSchema } from './tool';
import { assertMayReadTrace } from './trace-access';

export { KINETIX_EVENTS } from './events';

/** Extra config the provider factory receives. */
export interface ProviderConfig {
  apiKey: string;
  orgId: string;
  clearedFor: ReadonlySet<Classification>;
}

export interface KinetixOptions {
  db: Db;
  tools: ToolRegistry;
  /** Builds the provider for an org's key. Default: Anthropic through the SDK (`ANTHROPIC_BASE_URL` honoured). */
  providerFactory?: (cfg: ProviderConfig) => ModelProvider;
  /** Machine key for stored provider keys. Default: `ATHLETE_SECRET_KEY` or `machine.key` next to the database. */
  secretBox?: SecretBox | null;
  env?: NodeJS.ProcessEnv;
  limits?: Partial<KinetixLimits>;
  scheduler?: Scheduler;
  /** One-line log sink (never given a secret). Default: stderr JSON line. */
  log?: LogFn;
  bus?: EventBus;
}

/** What {@link Kinetix.startRun} takes. The user id is the signed-in user (never from the model). */
export interface StartRunInput {
  userId: string;
  message: string;
  conversationId?: string;
  /** The page the user is on (`/athletes/…`), sent to the model as context. */
  page?: string | null;
}

/** How a run ended. */
export interface RunOutcome {
  runId: string;
  conversationId: string;
  status: K.RunStatus;
  /** The assistant's final text (empty when none). */
  text: string;
  error?: ErrorPayload & { runCode?: string };
}

/** A user decision on a pending write. */
export type Decision = 'approve' | 'decline' | 'timeout' | 'stopped';

interface PendingConfirm {
  toolCallId: string;
  run: ActiveRun;
  argsHash: string;
  /** Content hash of the proposed changeset shown in the dialog (null for a write without one). */
  contentHash: string | null;
  /** The stored proposal waiting on this dialog (null for a write without a changeset). */
  changesetId: string | null;
  resolve: (d: { decision: Decision; approverId?: string }) => void;
}

interface ActiveRun {
  id: string;
  conversationId: string;
  orgId: string;
  userId: string;
  page: string | null;
  model: string;
  tools: ReadonlyMap<string, Tool>;
  provider: ModelProvider;
  abort: AbortController;
  cancelReason: null | 'stopped' | 'confirm_timeout';
  seq: number;
  traceSeq: number;
  costUsd: number;
  remainingUsd: number;
  iterations: number;
  history: ChatTurn[];
  digest: string;
  messages: ModelMessage[];
  release: () => void;
  done: Promise<RunOutcome>;
  resolveDone: (o: RunOutcome) => void;
  partial: { requestIndex: number; id: string | null; model: string; usage: TokenCounts } | null;
  /** OpenTelemetry span of the run (a no-op unless the app registered a tracer provider). */
  span: Span;
  /** True once untrusted content entered the run: high-privilege tools are gone from `tools`. */
  gated: boolean;
  /** Every tool_use id the model sent in this run (a repeated id is refused). */
  toolUseIds: Set<string>;
  /** A model of this run whose price is unknown (its responses were counted at the price ceiling). */
  unpriced: string | null;
}

/** Tool calls dispatched per model response (issue 9 §4); the 12-iteration limit does not bound them. */
export const MAX_TOOL_CALLS_PER_RESPONSE = 16;

/** Stop reasons after which the response is complete and usable as is. */
const NORMAL_STOP_REASONS: ReadonlySet<string> = new Set(['end_turn', 'tool_use', 'stop_sequence']);

/** Said to the user after a text answer that reached the output limit (`max_tokens`); stored with the answer, so the model sees it on replay. */
export const TRUNCATED_NOTICE = '[This answer was cut off: it reached the output limit. Ask me to continue, or narrow the question.]';

/** The outcome of a response the model ended with `refusal`. */
export const REFUSAL_MESSAGE =
  'The model declined to answer this request (stop reason: refusal). Nothing was changed. Rephrase the request or ask something else.';

/**
 * Spans mirror runs, model calls and tool calls with ids, names, statuses and token counts only:
 * no message text, arguments, results or keys (content capture is off).
 */
const tracer = otel.getTracer('athlete-intelligence.kinetix');

const MAX_MESSAGE_CHARS = 20_000;

/** The harness. One per process (per database). */
export class Kinetix {
  readonly bus: EventBus;
  readonly limits: KinetixLimits;
  private readonly db: Db;
  private readonly tools: ToolRegistry;
  private readonly scheduler: Scheduler;
  private readonly log: LogFn;
  private readonly env: NodeJS.ProcessEnv;
  private readonly box: SecretBox | null;
  private readonly providerFactory: (cfg: ProviderConfig) => ModelProvider;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private readonly active = new Map<string, ActiveRun>();
  private readonly pending = new Map<string, PendingConfirm>();
  private readonly hashKey = randomBytes(32);

  constructor(opts: KinetixOptions) {
    this.db = opts.db;
    this.tools = opts.tools;
    this.scheduler = opts.scheduler ?? realScheduler;
    this.env = opts.env ?? process.env;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    for (const [k, v] of Object.entries(this.limits)) if (!(typeof v === 'number' && v >= 1)) throw new Error(`Kinetix limit ${k} must be a number ≥ 1.`);
    this.bus = opts.bus ?? new EventBus();
    const secrets = () => [this.env.ANTHROPIC_API_KEY];
    const sink =
      opts.log ?? ((line: string, fields?: Record<string, unknown>) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg: line, ...fields })}\n`));
    this.log = (line, fields) => sink(scrubText(line, secrets()), fields ? (maskSecrets(fields) as Record<string, unknown>) : undefined);
    if (opts.secretBox !== undefined) this.box = opts.secretBox;
    else {
      try {
        this.box = SecretBox.fromEnvOrFile(
          this.db.path === ':memory:' ? join(process.cwd(), '.athlete', 'machine.key') : join(dirname(this.db.path), 'machine.key'),
          this.env,
        );
      } catch {
        this.log('kinetix: no machine key available; stored provider keys cannot be read');
        this.box = null;
      }
    }
    this.providerFactory =
      opts.providerFactory ??
      ((cfg) =>
        new AnthropicProvider({
          apiKey: cfg.apiKey,
          clearedFor: cfg.clearedFor,
          ...(this.env.ANTHROPIC_BASE_URL ? { baseURL: this.env.ANTHROPIC_BASE_URL } : {}),
        }));
    initTelemetry(this.env, { log: (l) => this.log(l) });
    this.recoverInterrupted();
  }

  // ---------------------------------------------------------------------------------------
  // Public API

  /**
   * Start one turn. Returns at once with the run id; the loop continues detached.
   * Checks, in order: the caller (active, `kinetix.use`), the conversation (own; otherwise
   * NotFound), the provider key, concurrency (3 per user), rate limits, the budget gate.
   * @throws Forbidden, NotFound, Validation (empty/oversized message, or no provider key:
   *   {@link KinetixNotConfigured}), TooManyRuns, RateLimited (with retryAfterSeconds),
   *   BudgetExceeded (with remainingUsd)
   */
  startRun(input: StartRunInput): { runId: string; conversationId: string } {
    const user = this.caller(input.userId);
    const raw = typeof input.message === 'string' ? input.message : '';
    // Size first, before anything reads the text.
    if (raw.length > MAX_MESSAGE_CHARS * 2)
      throw new ValidationError(`Messages are limited to ${MAX_MESSAGE_CHARS} characters.`, [{ path: 'message', message: 'too long' }]);
    const trimmed = raw.trim();
    if (!trimmed) throw new ValidationError('Type a message for Kinetix.', [{ path: 'message', message: 'required' }]);
    if (trimmed.length > MAX_MESSAGE_CHARS)
      throw new ValidationError(`Messages are limited to ${MAX_MESSAGE_CHARS} characters.`, [{ path: 'message', message: 'too long' }]);
    // One redactor for every sink (issue 9 §5): the prompt is stored, titled, traced and sent with credentials masked.
    const message = redactText(trimmed);
    const page = input.page ? String(input.page).slice(0, 300) : null;
    let conversation: K.ConversationRow | null = null;
    if (input.conversationId) {
      conversation = K.getOwnConversation(this.db, user.org_id, user.id, input.conversationId);
      if (!conversation) throw new NotFound('Conversation');
    }
    const org = findOrganization(this.db, user.org_id);
    if (!org) throw new NotFound('Organisation');
    const { key } = resolveProviderKey(this.db, user.org_id, this.box, (l) => this.log(l), this.env);
    if (!key) throw new KinetixNotConfigured();

    const runId = uuidv7();
    // Concurrency and rate limits live in the database (run leases), shared by every process on the file.
    takeRunLease(this.db, this.limits, { runId, orgId: user.org_id, userId: user.id, nowMs: this.scheduler.now() });
    const release = () => this.releaseLease(runId);
    let started = false;
    try {
      const now = this.scheduler.now();
      const budget = checkBudget(this.db, user.org_id, user.id, now, (l) => this.log(l));
      if (!budget.allowed) throw new BudgetExceeded(budget.reason ?? 'The Kinetix budget is used up.', budget.remainingUsd);

      const clearedFor = this.clearance(user.org_id, 'anthropic');
      const provider = this.providerFactory({ apiKey: key, orgId: user.org_id, clearedFor });
      const available = this.tools.availableEnabled(this.db, user.org_id, user.role, this.log);
      // Untrusted-content gate at start: the replayed facts already hold untrusted output.
      const untrustedBefore = conversation ? this.untrustedInDigest(conversation.id) : [];
      const gate = untrustedBefore.length > 0 ? gateSnapshot(available) : null;
      const snapshot = gate ? gate.kept : available;
      const nowIso = new Date(now).toISOString();
      const conversationId = conversation?.id ?? uuidv7();

      // History and digest are read before this turn's rows exist.
      const history = conversation
        ? replayHistory(K.recentMessages(this.db, conversationId, MAX_HISTORY_MESSAGES).map((m) => ({ role: m.role, content: m.content })))
        : [];
      const digest = conversation ? this.digestFor(conversationId, provider) : '';

      K.inTransaction(this.db, () => {
        if (!conversation)
          K.insertConversation(this.db, {
            id: conversationId,
            org_id: user.org_id,
            user_id: user.id,
            title: message.slice(0, 80),
            created_at: nowIso,
            updated_at: nowIso,
          });
        else K.touchConversation(this.db, conversationId, nowIso);
        K.insertRun(this.db, {
          id: runId,
          conversation_id: conversationId,
          org_id: user.org_id,
          user_id: user.id,
          status: 'running',
          model: org.assistant_model,
          page,
          host_pid: process.pid,
          user_snapshot_json: JSON.stringify({
            userId: user.id,
            orgId: user.org_id,
            role: user.role,
            displayName: user.display_name,
            email: user.email,
            linkedAthleteId: user.linked_athlete_id,
          }),
          tools_json: JSON.stringify(snapshot.map((t) => t.name)),
          request_text: message,
          iterations: 0,
          cost_usd: 0,
          error_code: null,
          error_message: null,
          started_at: nowIso,
          finished_at: null,
        });
        K.insertMessage(this.db, {
          id: uuidv7(),
          conversation_id: conversationId,
          run_id: runId,
          org_id: user.org_id,
          role: 'user',
          content: message,
          created_at: nowIso,
        });
      });

      let resolveDone!: (o: RunOutcome) => void;
      const done = new Promise<RunOutcome>((r) => (resolveDone = r));
      const run: ActiveRun = {
        id: runId,
        conversationId,
        orgId: user.org_id,
        userId: user.id,
        page,
        model: org.assistant_model,
        tools: new Map(snapshot.map((t) => [t.name, t])),
        provider,
        abort: new AbortController(),
        cancelReason: null,
        seq: 0,
        traceSeq: 0,
        costUsd: 0,
        remainingUsd: budget.remainingUsd,
        iterations: 0,
        history,
        digest,
        messages: [...history.map((h) => ({ role: h.role, content: h.content })), { role: 'user', content: message }],
        release,
        done,
        resolveDone,
        partial: null,
        span: tracer.startSpan('kinetix.run', {
          attributes: {
            'kinetix.run_id': runId,
            'kinetix.conversation_id': conversationId,
            'kinetix.org_id': user.org_id,
            'kinetix.user_id': user.id,
            'gen_ai.request.model': org.assistant_model,
            'kinetix.tools_offered': snapshot.length,
          },
        }),
        gated: gate !== null,
        toolUseIds: new Set(),
        unpriced: null,
      };
      this.active.set(runId, run);
      this.startHeartbeat();
      started = true;
      this.trace(run, 'request', {
        message,
        page,
        model: run.model,
        tools: snapshot.map((t) => t.name),
        budgetRemainingUsd: Number.isFinite(budget.remainingUsd) ? budget.remainingUsd : null,
        replayedMessages: history.length,
      });
      this.emit(run, { type: EventType.RUN_STARTED, threadId: conversationId, runId });
      if (gate) this.gateNarrowed(run, untrustedBefore.join(', '), gate.dropped, 'run_start');
      void this.loop(run);
      return { runId, conversationId };
    } finally {
      if (!started) release();
    }
  }

  /**
   * Events of a run for one of its views: first the persisted events after `lastEventId`, then
   * live ones; a gap left by a full buffer is filled from the table. Ends when the run ends.
   * Only the run's own user may subscribe.
   * @throws NotFound (unknown run, or another user's)
   */
  subscribe(userId: string, runId: string, lastEventId?: string | number | null): AsyncIterable<RunEventEnvelope> {
    const row = K.getRun(this.db, runId);
    const user = findUserById(this.db, userId);
    if (!row || !user || row.user_id !== user.id || row.org_id !== user.org_id) throw new NotFound('Run');
    const after = Number(lastEventId ?? 0);
    const start = Number.isFinite(after) && after > 0 ? Math.floor(after) : 0;
    const db = this.db;
    const bus = this.bus;
    const isActive = () => this.active.has(runId);
    return {
      [Symbol.asyncIterator]: () => {
        async function* gen(): AsyncGenerator<RunEventEnvelope> {
          // Subscribe and read the table in one synchronous step, so nothing falls between them.
          const sub = isActive() ? bus.subscribe(runId) : null;
          let last = start;
          const fromTable = (upTo = Infinity): RunEventEnvelope[] => {
            const out: RunEventEnvelope[] = [];
            for (const r of K.listRunEvents(db, runId, last)) {
              if (r.seq >= upTo) break;
              out.push({ id: String(r.seq), runId, seq: r.seq, event: JSON.parse(r.event_json) as AGUIEvent });
            }
            return out;
          };
          const backlog = fromTable();
          try {
            for (const e of backlog) {
              yield e;
              last = e.seq;
            }
            if (!sub) return;
            for (;;) {
              // A full buffer dropped events: catch up from the table now (a dropped confirm_required
              // must reach the view even though the run then waits and publishes nothing more).
              if (sub.takeOverflow()) {
                for (const g of fromTable()) {
                  yield g;
                  last = g.seq;
                }
              }
              const r = await sub.next();
              if (r.done) break;
              const e = r.value;
              if (e.ephemeral) {
                yield e;
                continue;
              }
              if (e.seq <= last) continue;
              if (e.seq > last + 1) {
                for (const g of fromTable(e.seq)) {
                  yield g;
                  last = g.seq;
                }
              }
              yield e;
              last = e.seq;
            }
            for (const g of fromTable()) {
              yield g;
              last = g.seq;
            }
          } finally {
            sub?.close();
          }
        }
        return gen();
      },
    };
  }

  /**
   * Approve or decline a pending write. Accepted only from the run's own user in the run's org,
   * for this tool-call id; an approval must carry the `argsHash` shown in `confirm_required`, and
   * when it carries a `contentHash` that must be the proposed changeset's (the apply is bound to
   * the stored proposal's content hash either way).
   * @throws NotFound (no such pending call for this user), Conflict (already decided, or the
   *   arguments changed), Forbidden (caller deactivated)
   */
  confirm(userId: string, toolCallId: string, decision: { approve: boolean; argsHash?: string; contentHash?: string }): { status: 'accepted' } {
    const user = findUserById(this.db, userId);
    const p = this.pending.get(toolCallId);
    if (!p) {
      const row = K.getToolCall(this.db, toolCallId);
      if (row && user && row.user_id === user.id && row.org_id === user.org_id && row.status !== 'proposed')
        throw new Conflict(`This action was already ${row.status}.`);
      throw new NotFound('Pending action');
    }
    if (!user || user.id !== p.run.userId || user.org_id !== p.run.orgId) {
      this.trace(p.run, 'decision', { toolCallId, refused: 'confirm from another user or organisation' });
      throw new NotFound('Pending action');
    }
    if (!user.active) throw new Forbidden('Your account is deactivated.');
    if (decision.approve && decision.argsHash !== p.argsHash) {
      this.trace(p.run, 'decision', { toolCallId, refused: 'argument hash mismatch' });
      throw new Conflict('The details of this action changed since they were shown; nothing ran. Review the action again.');
    }
    if (decision.approve && decision.contentHash !== undefined && decision.contentHash !== p.contentHash) {
      this.trace(p.run, 'decision', { toolCallId, refused: 'changeset content hash mismatch' });
      throw new Conflict('This approval is for a different change than the one waiting; nothing ran. Review the action again.');
    }
    p.resolve({ decision: decision.approve ? 'approve' : 'decline', approverId: user.id });
    return { status: 'accepted' };
  }

  /**
   * Stop a run: the provider call is aborted, a pending confirmation becomes `skipped`, spend so
   * far is persisted. Only the run's own user may stop it.
   * @throws NotFound
   */
  stop(userId: string, runId: string): void {
    const run = this.active.get(runId);
    const user = findUserById(this.db, userId);
    if (!run || !user || run.userId !== user.id || run.orgId !== user.org_id) {
      const row = K.getRun(this.db, runId);
      if (row && user && row.user_id === user.id) return; // already finished: nothing to stop
      throw new NotFound('Run');
    }
    if (!run.cancelReason) run.cancelReason = 'stopped';
    run.abort.abort(new Error('Stopped by the user.'));
    for (const p of this.pending.values()) if (p.run === run) p.resolve({ decision: 'stopped' });
  }

  /**
   * Stop every run of `runIds` that `userId` still has in flight in this process (sign-out): each
   * ends as if the user pressed Stop — a dialog waiting for their confirmation is resolved as
   * stopped, its proposal is not applied, and the run's slot and lease are released. Runs of other
   * users, and finished or unknown runs, are skipped. Returns how many were stopped.
   */
  stopRuns(userId: string, runIds: Iterable<string>): number {
    let n = 0;
    for (const id of runIds) {
      const run = this.active.get(id);
      if (!run || run.userId !== userId) continue;
      this.stop(userId, id);
      n++;
    }
    return n;
  }

  /** Resolves when the run ends (any status). @throws NotFound for a run not in this process and not finished. */
  waitForRun(runId: string): Promise<RunOutcome> {
    const run = this.active.get(runId);
    if (run) return run.done;
    const row = K.getRun(this.db, runId);
    if (!row) return Promise.reject(new NotFound('Run'));
    return Promise.resolve(this.outcomeFromRow(row));
  }

  /** This user's conversations, most recent first. */
  listConversations(userId: string, opts: { limit?: number; offset?: number } = {}): K.ConversationRow[] {
    const u = this.caller(userId);
    return K.listOwnConversations(this.db, u.org_id, u.id, Math.min(opts.limit ?? 50, 200), opts.offset ?? 0);
  }

  /** One of this user's conversations with its messages and runs. @throws NotFound */
  getConversation(
    userId: string,
    conversationId: string,
  ): { conversation: K.ConversationRow; messages: K.MessageRow[]; runs: Omit<K.RunRow, 'user_snapshot_json'>[] } {
    const u = this.caller(userId);
    const c = K.getOwnConversation(this.db, u.org_id, u.id, conversationId);
    if (!c) throw new NotFound('Conversation');
    return { conversation: c, messages: K.listMessages(this.db, c.id), runs: K.listRuns(this.db, c.id).map(({ user_snapshot_json: _s, ...r }) => r) };
  }

  /**
   * The audit view of one run: the run row, its tool calls (arguments masked), its trace entries
   * and usage rows. The run's own user, or anyone in the org who may read the activity log and
   * every record the run read (trace-access.ts). @throws NotFound, Forbidden
   */
  getRunTrace(
    userId: string,
    runId: string,
  ): { run: K.RunRow; toolCalls: K.ToolCallRow[]; trace: { seq: number; kind: string; data: unknown; at: string }[]; usage: K.UsageRow[] } {
    const u = this.caller(userId);
    const run = K.getRun(this.db, runId);
    if (!run) throw new NotFound('Run');
    const toolCalls = K.listToolCalls(this.db, runId);
    assertMayReadTrace(this.db, this.tools, u, run, toolCalls);
    return {
      run,
      toolCalls,
      trace: K.listTrace(this.db, runId).map((t) => ({ seq: t.seq, kind: t.kind, data: JSON.parse(t.data_json) as unknown, at: t.created_at })),
      usage: K.listUsage(this.db, runId),
    };
  }

  // ---------------------------------------------------------------------------------------
  // Proposals in the app (MCP writes, needs-owner changes): thin wrappers over proposals.ts for
  // hosts that hold the harness. The caller is the signed-in user, never the model.

  /** Proposals visible to the user (own; an owner also sees every needs-owner one). */
  listProposals(userId: string, opts: { status?: ProposalStatus; limit?: number; offset?: number } = {}): ProposalView[] {
    return listProposals(this.db, userId, opts);
  }

  /** One visible proposal. @throws NotFound */
  getProposal(userId: string, changesetId: string): ProposalView {
    return getProposal(this.db, userId, changesetId);
  }

  /** Approve and apply a proposal as the signed-in user (see {@link approveProposal}). @throws NotFound, Forbidden, Conflict */
  approveProposal(userId: string, changesetId: string, contentHash: string): { proposal: ProposalView; changeset: AppliedChangeset } {
    const r = approveProposal(this.db, { approverUserId: userId, changesetId, contentHash, now: new Date(this.scheduler.now()) });
    // A run's dialog still waiting on this proposal learns that it was approved (and reports it as executed).
    for (const p of this.pending.values()) if (p.changesetId === changesetId) p.resolve({ decision: 'approve', approverId: userId });
    return r;
  }

  /** Decline a proposal as the signed-in user. @throws NotFound, Conflict */
  declineProposal(userId: string, changesetId: string): ProposalView {
    const v = declineProposal(this.db, { userId, changesetId, now: new Date(this.scheduler.now()) });
    for (const p of this.pending.values()) if (p.changesetId === changesetId) p.resolve({ decision: 'decline', approverId: userId });
    return v;
  }

  /** Release a run's lease; a failure is logged (the lease then goes stale and is reclaimed). */
  private releaseLease(runId: string): void {
    try {
      K.releaseRunLease(this.db, runId);
    } catch (e) {
      this.log('kinetix: could not release a run lease', { runId, error: e instanceof Error ? e.name : 'unknown' });
    }
    if (this.active.size === 0 && this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = null;
    }
  }

  /** While this process has runs, refresh their leases' heartbeat (the timer does not keep the process alive). */
  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      try {
        K.heartbeatRunLeases(this.db, [...this.active.keys()], this.scheduler.now());
      } catch (e) {
        this.log('kinetix: could not refresh run leases', { error: e instanceof Error ? e.name : 'unknown' });
      }
    }, LEASE_HEARTBEAT_MS);
    this.heartbeat.unref?.();
  }

  /** Runs in flight in this process (diagnostics). */
  activeRunCount(): number {
    return this.active.size;
  }

  // ---------------------------------------------------------------------------------------
  // The loop

  private async loop(run: ActiveRun): Promise<void> {
    try {
      for (let i = 0; ; i++) {
        if (run.abort.signal.aborted) return this.finishCancelled(run);
        // Fail closed if the user was deactivated since the last step.
        const u = findUserById(this.db, run.userId);
        if (!u || !u.active || u.org_id !== run.orgId) throw new Forbidden('Your account is no longer active; the request was stopped.');

        const resp = await this.callModel(run, i, u);
        run.iterations = i + 1;
        const text = resp.content
          .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
          .map((b) => b.text)
          .join('');
        const toolUses: { tu: Extract<ModelBlock, { type: 'tool_use' }>; issue?: ToolInputIssue }[] = [];
        resp.content.forEach((b, idx) => {
          if (b.type === 'tool_use') toolUses.push({ tu: b, ...(resp.inputIssues?.[idx] ? { issue: resp.inputIssues[idx] } : {}) });
        });
        const stop = resp.stopReason;
        // Stop reasons (issue 9 §4): only a normal stop, or max_tokens with usable parts, goes on.
        if (stop === 'refusal') {
          this.trace(run, 'limit', { limit: 'stop_reason', stopReason: stop, unrunToolCalls: toolUses.map((x) => x.tu.name) });
          return this.finishWithMessage(run, text, 'failed', { code: 'Internal', message: REFUSAL_MESSAGE, runCode: 'Refusal' });
        }
        if (stop !== 'max_tokens' && (stop === null || !NORMAL_STOP_REASONS.has(stop))) {
          const what =
            stop === 'pause_turn'
              ? 'The model paused its turn (stop reason: pause_turn) before finishing, so this request ended here. Ask again to continue.'
              : `The model ended its reply with an unexpected stop reason (${stop === null ? 'none' : JSON.stringify(stop.slice(0, 40))}), so this request ended here and nothing more ran. Ask again.`;
          this.trace(run, 'limit', { limit: 'stop_reason', stopReason: stop?.slice(0, 40) ?? null, unrunToolCalls: toolUses.map((x) => x.tu.name) });
          return this.finishWithMessage(run, text, 'failed', {
            code: 'Internal',
            message: what,
            runCode: stop === 'pause_turn' ? 'PauseTurn' : 'UnknownStopReason',
          });
        }
        if (toolUses.length === 0) {
          if (stop === 'max_tokens') {
            this.trace(run, 'limit', { limit: 'stop_reason', stopReason: stop, truncated: true });
            return this.finishTruncated(run, text);
          }
          return this.finishWithMessage(run, text, 'completed');
        }
        if (i + 1 >= this.limits.maxIterations) {
          // The last allowed call still asks for tools: stop before running them (their results could never be used).
          const msg = `I stopped after ${this.limits.maxIterations} steps without finishing. Tell me which part to continue with, or narrow the request.`;
          this.trace(run, 'limit', { limit: 'iterations', max: this.limits.maxIterations, unrunToolCalls: toolUses.map((x) => x.tu.name) });
          return this.finishWithMessage(run, text ? `${text}\n\n${msg}` : msg, 'failed', { code: 'Internal', message: msg, runCode: 'IterationLimit' });
        }

        // Second budget gate: more tools mean at least one more paid call.
        if (run.costUsd >= run.remainingUsd) {
          const why = run.unpriced
            ? `${BUDGET_STOP_MESSAGE} The price of the model "${run.unpriced.slice(0, 80)}" is unknown, so its responses were counted at the price ceiling ($${PRICE_CEILING_PER_MTOK.input} input / $${PRICE_CEILING_PER_MTOK.output} output per million tokens).`
            : BUDGET_STOP_MESSAGE;
          this.trace(run, 'limit', { limit: 'budget', runCostUsd: run.costUsd, remainingUsd: run.remainingUsd, unpricedModel: run.unpriced });
          return this.finishWithMessage(run, text ? `${text}\n\n${why}` : why, 'failed', { code: 'BudgetExceeded', message: why });
        }

        // A repeated tool_use id is renamed in what is sent back (ids must be unique), then refused.
        const seenHere = new Set<string>();
        const calls = toolUses.map(({ tu, issue }, n) => {
          const duplicate = run.toolUseIds.has(tu.id) || seenHere.has(tu.id);
          seenHere.add(tu.id);
          const sent = duplicate ? { ...tu, id: `dup${n}_${uuidv7().replace(/-/g, '')}` } : tu;
          const refusal: AppError | undefined = duplicate
            ? new ValidationError(
                `The tool call id ${JSON.stringify(tu.id.slice(0, 80))} was already used in this conversation turn; this call was refused and nothing ran. Use a new id for every tool call.`,
              )
            : n >= MAX_TOOL_CALLS_PER_RESPONSE
              ? new ValidationError(
                  `At most ${MAX_TOOL_CALLS_PER_RESPONSE} tool calls are run per reply; this one (number ${n + 1}) was refused and nothing ran. Ask for fewer at a time.`,
                )
              : undefined;
          return { tu: sent, original: tu, issue, refusal };
        });
        for (const c of calls) run.toolUseIds.add(c.original.id);
        if (toolUses.length > MAX_TOOL_CALLS_PER_RESPONSE)
          this.trace(run, 'limit', { limit: 'tool_calls_per_response', max: MAX_TOOL_CALLS_PER_RESPONSE, sent: toolUses.length });
        const byBlock = new Map(calls.map((c) => [c.original, c.tu]));
        run.messages.push({
          role: 'assistant',
          content: resp.content.filter((b) => b.type !== 'text' || b.text.trim() !== '').map((b) => (b.type === 'tool_use' ? (byBlock.get(b) ?? b) : b)),
        });
        const results: ModelBlock[] = [];
        for (const c of calls) {
          if (run.abort.signal.aborted) break;
          results.push(await this.runToolCall(run, c.tu, i, { issue: c.issue, refusal: c.refusal, truncated: stop === 'max_tokens' }));
        }
        if (run.abort.signal.aborted) return this.finishCancelled(run);
        run.messages.push({ role: 'user', content: results });
      }
    } catch (e) {
      if (run.abort.signal.aborted && run.cancelReason) return this.finishCancelled(run);
      const payload = toErrorPayload(e);
      if (!(e instanceof AppError)) this.log('kinetix: run failed with an unexpected error', { runId: run.id, error: e instanceof Error ? e.name : 'unknown' });
      this.trace(run, 'error', payload);
      return this.finish(run, 'failed', '', payload);
    }
  }

  /** One provider call under its own 90-second deadline; records usage even when cut short. */
  private async callModel(run: ActiveRun, requestIndex: number, u: NonNullable<ReturnType<typeof findUserById>>): Promise<ModelResponse> {
    const org = findOrganization(this.db, run.orgId);
    const system = [
      HARD_RULES,
      identityBlock({
        displayName: u.display_name,
        email: u.email,
        role: u.role,
        orgName: org?.name ?? '',
        page: run.page,
        now: new Date(this.scheduler.now()).toISOString(),
      }),
    ];
    if (run.digest) system.push(run.digest);
    const tools = [...run.tools.values()].map((t) => ({
      name: t.name,
      description: t.title === t.description ? t.description : `${t.description} (Shown to the user as: "${t.title}".)`,
      input_schema: toolInputSchema(t),
    }));

    const ac = new AbortController();
    const onRunAbort = () => ac.abort(run.abort.signal.reason);
    run.abort.signal.addEventListener('abort', onRunAbort, { once: true });
    const seconds = Math.round(this.limits.providerTimeoutMs / 1000);
    const timer = this.scheduler.setTimeout(
      () =>
        ac.abort(
          new ProviderError(
            `The model did not answer within ${seconds} s, so this request was stopped. Try again; if it keeps happening, check the network or ANTHROPIC_BASE_URL.`,
          ),
        ),
      this.limits.providerTimeoutMs,
    );
    const stepName = `model_call_${requestIndex + 1}`;
    const span = tracer.startSpan(
      'kinetix.model_call',
      { attributes: { 'kinetix.run_id': run.id, 'kinetix.request_index': requestIndex, 'gen_ai.system': run.provider.id, 'gen_ai.request.model': run.model } },
      otel.setSpan(otelContext.active(), run.span),
    );
    this.emit(run, { type: EventType.STEP_STARTED, stepName });
    const msgIds = new Map<number, string>();
    const redactors = new Map<number, TextRedactor>();
    const ended = new Set<number>();
    // Exactly one TEXT_MESSAGE_END per message, also when the response is cut off or fails.
    const endText = (index: number) => {
      const id = msgIds.get(index);
      if (!id || ended.has(index)) return;
      ended.add(index);
      const rest = redactors.get(index)?.flush() ?? '';
      if (rest) this.emit(run, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: rest });
      this.emit(run, { type: EventType.TEXT_MESSAGE_END, messageId: id });
    };
    run.partial = null;
    try {
      const resp = await run.provider.stream(
        { model: run.model, system, messages: run.messages, tools, maxTokens: this.limits.maxTokens },
        {
          onStart: (info) => {
            run.partial = { requestIndex, id: info.id, model: info.model, usage: info.usage };
          },
          onUsage: (usage) => {
            if (run.partial) run.partial.usage = usage;
          },
          onTextStart: (index) => {
            const id = uuidv7();
            msgIds.set(index, id);
            redactors.set(index, new TextRedactor());
            this.emit(run, { type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' });
          },
          onTextDelta: (index, delta) => {
            const id = msgIds.get(index);
            // Model text is redacted as it streams: what is shown is final up to the last complete word.
            const safe = id && delta ? (redactors.get(index)?.push(delta) ?? '') : '';
            if (id && safe) this.emit(run, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: safe });
          },
          onTextEnd: endText,
        },
        ac.signal,
      );
      run.partial = null;
      for (const index of msgIds.keys()) endText(index);
      // Stored, replayed and answered text is the redacted text (the same as was streamed).
      resp.content = resp.content.map((b) => (b.type === 'text' ? { ...b, text: redactText(b.text) } : b));
      span.setAttributes({
        'gen_ai.response.model': resp.model,
        'gen_ai.usage.input_tokens': resp.usage.inputTokens,
        'gen_ai.usage.output_tokens': resp.usage.outputTokens,
        'kinetix.stop_reason': resp.stopReason ?? '',
      });
      this.recordUsage(run, requestIndex, resp.id, resp.model, resp.usage, false);
      this.trace(run, 'model_step', {
        requestIndex,
        model: resp.model,
        stopReason: resp.stopReason,
        usage: resp.usage,
        toolUses: resp.content.filter((b) => b.type === 'tool_use').map((b) => (b.type === 'tool_use' ? { name: b.name, args: maskSecrets(b.input) } : null)),
        textChars: resp.content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0),
      });
      return resp;
    } catch (e) {
      // Spend is persisted even on Stop or timeout: this write does not depend on the run's signal.
      const p = run.partial as ActiveRun['partial'];
      if (p) this.recordUsage(run, p.requestIndex, p.id, p.model, p.usage, true);
      run.partial = null;
      for (const index of msgIds.keys()) endText(index);
      this.trace(run, 'model_step', {
        requestIndex,
        failed: true,
        error: e instanceof AppError ? e.message : 'provider error',
        partialUsage: p?.usage ?? null,
      });
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof AppError ? e.code : 'provider error' });
      throw e instanceof AppError ? e : new ProviderError('The model provider call failed.');
    } finally {
      this.scheduler.clearTimeout(timer);
      span.end();
      run.abort.signal.removeEventListener('abort', onRunAbort);
      this.emit(run, { type: EventType.STEP_FINISHED, stepName });
    }
  }

  private recordUsage(run: ActiveRun, requestIndex: number, responseId: string | null, model: string, usage: TokenCounts, partial: boolean): void {
    const at = new Date(this.scheduler.now());
    const priced = costOf(run.provider.id, model, usage, at);
    // Unknown price never counts as $0: the response is counted at the stated ceiling, and the run says so.
    const unknownPrice = priced.costUsd === null;
    const costUsd = unknownPrice ? ceilingCostOf(usage) : priced.costUsd;
    const snapshot = unknownPrice ? { unknown_price: true, model, ceiling_usd_per_mtok: PRICE_CEILING_PER_MTOK } : priced.snapshot;
    if (unknownPrice && !run.unpriced) {
      run.unpriced = model;
      this.trace(run, 'limit', { limit: 'unknown_price', model, countedAtCeilingUsd: costUsd, ceilingUsdPerMTok: PRICE_CEILING_PER_MTOK });
    }
    try {
      const inserted = K.insertUsage(this.db, {
        id: uuidv7(),
        run_id: run.id,
        org_id: run.orgId,
        user_id: run.userId,
        request_index: requestIndex,
        model,
        provider: run.provider.id,
        provider_response_id: responseId,
        input_tokens: usage.inputTokens,
        output_tokens: usage.outputTokens,
        cache_read_tokens: usage.cacheReadTokens,
        cache_write_tokens: usage.cacheWriteTokens,
        cost_usd: costUsd,
        price_source: PRICE_SOURCE,
        price_version: PRICE_VERSION,
        price_snapshot_json: snapshot ? JSON.stringify(snapshot) : null,
        partial: partial ? 1 : 0,
        created_at: at.toISOString(),
      });
      if (inserted) {
        run.costUsd += costUsd ?? 0;
        K.updateRun(this.db, run.id, { cost_usd: run.costUsd });
      }
    } catch (e) {
      this.log('kinetix: could not record usage', { runId: run.id, requestIndex, error: e instanceof Error ? e.name : 'unknown' });
    }
    if (unknownPrice) this.log('kinetix: no price for model; usage counted at the price ceiling', { model });
    this.emit(run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.usage,
      value: { requestIndex, model, ...usage, costUsd, partial, ...(unknownPrice ? { priceUnknown: true, countedAtCeiling: true } : {}) },
    });
  }

  // ---------------------------------------------------------------------------------------
  // Tool calls

  private toolContext(run: ActiveRun, tool: Tool): ToolContext {
    const capability: Capability = {
      id: uuidv7(),
      userId: run.userId,
      orgId: run.orgId,
      scopes: [...tool.scopes],
      expiresAt: this.scheduler.now() + this.limits.capabilityTtlMs,
    };
    const service: ServiceContext = { db: this.db, userId: run.userId, via: { runId: run.id, capability }, now: () => new Date(this.scheduler.now()) };
    return {
      service,
      runId: run.id,
      conversationId: run.conversationId,
      orgId: run.orgId,
      userId: run.userId,
      page: run.page,
      emit: (name, value) => this.emit(run, { type: EventType.CUSTOM, name, value }),
    };
  }

  private argsHash(toolName: string, args: unknown): string {
    return createHmac('sha256', this.hashKey)
      .update(canonicalJson({ tool: toolName, args }))
      .digest('hex');
  }

  /** One tool call under its own span (ids, names, status; the arguments only when content capture is on, masked). */
  private async runToolCall(run: ActiveRun, tu: Extract<ModelBlock, { type: 'tool_use' }>, iteration: number, pre: PreCheck = {}): Promise<ModelBlock> {
    const callId = uuidv7();
    const span = tracer.startSpan(
      'kinetix.tool_call',
      { attributes: { 'kinetix.run_id': run.id, 'kinetix.tool_call_id': callId, 'kinetix.tool': tu.name.slice(0, 100), 'kinetix.iteration': iteration } },
      otel.setSpan(otelContext.active(), run.span),
    );
    // Bounds first (issue 9 §3): nothing below hashes, stores, masks or validates an input over them.
    let issue = pre.issue;
    if (!issue) {
      const m = measureInput(tu.input ?? {});
      if (!m.ok) issue = { issue: m.reason ?? 'size', bytes: m.bytes, depth: m.depth, sha256: digestInput(tu.input) };
    }
    if (!issue && telemetryCapturesContent(this.env)) span.setAttribute('kinetix.tool.args', JSON.stringify(maskSecrets(tu.input ?? {})).slice(0, 4000));
    try {
      const out = issue
        ? this.refuseInput(run, tu, iteration, callId, issue, pre.truncated === true)
        : await this.runToolCallInner(run, tu, iteration, callId, pre.refusal);
      const row = K.getToolCall(this.db, callId);
      span.setAttribute('kinetix.status', row?.status ?? 'unknown');
      if (row?.changeset_id) span.setAttribute('kinetix.changeset_id', row.changeset_id);
      if (row?.status === 'failed')
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: row.error_json ? ((JSON.parse(row.error_json) as { code?: string }).code ?? 'failed') : 'failed',
        });
      return out;
    } finally {
      span.end();
    }
  }

  /**
   * A tool call whose input is over the bounds or incomplete: the audit row records the attempt
   * with the input's digest, size and depth only (never its content), the model gets a clear
   * message, nothing runs.
   */
  private refuseInput(
    run: ActiveRun,
    tu: Extract<ModelBlock, { type: 'tool_use' }>,
    iteration: number,
    callId: string,
    issue: ToolInputIssue,
    truncated: boolean,
  ): ModelBlock {
    const nowIso = new Date(this.scheduler.now()).toISOString();
    const name = tu.name.slice(0, 100);
    const tool = run.tools.get(tu.name);
    const summary = { refused_input: issue.issue, bytes: issue.bytes, depth: issue.depth, sha256: issue.sha256 };
    const message =
      issue.issue === 'incomplete'
        ? `Your reply was cut off${truncated ? ' at the output limit (max_tokens)' : ''} before the input of ${name} was complete; the call was not run. Send it again with a shorter input.`
        : boundsMessage(name, { ok: false, bytes: issue.bytes, depth: issue.depth, reason: issue.issue });
    const payload = toErrorPayload(
      new ValidationError(message, [
        { path: '(input)', message: issue.issue === 'incomplete' ? 'incomplete' : `too ${issue.issue === 'depth' ? 'deep' : 'large'}` },
      ]),
    );
    this.emit(run, { type: EventType.TOOL_CALL_START, toolCallId: callId, toolCallName: name });
    this.emit(run, { type: EventType.TOOL_CALL_ARGS, toolCallId: callId, delta: JSON.stringify(summary) });
    this.emit(run, { type: EventType.TOOL_CALL_END, toolCallId: callId });
    K.insertToolCall(this.db, {
      id: callId,
      run_id: run.id,
      conversation_id: run.conversationId,
      org_id: run.orgId,
      user_id: run.userId,
      model_tool_use_id: tu.id.slice(0, 200),
      iteration,
      tool_name: name,
      title: tool?.title ?? name,
      risk: tool?.risk ?? null,
      args_json: JSON.stringify(summary),
      args_hash: `sha256:${issue.sha256}`,
      requires_confirm: tool?.kind === 'write' ? 1 : 0,
      status: 'failed',
      proposal_json: null,
      changeset_id: null,
      result_json: null,
      error_json: JSON.stringify(payload),
      approver_user_id: null,
      decided_at: null,
      created_at: nowIso,
      updated_at: nowIso,
    });
    this.trace(run, 'decision', {
      toolCallId: callId,
      tool: name,
      decision: issue.issue === 'incomplete' ? 'incomplete_input' : 'input_out_of_bounds',
      ...summary,
    });
    this.emit(run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.toolCall,
      value: { toolCallId: callId, tool: name, title: tool?.title ?? name, risk: tool?.risk ?? null, status: 'failed', error: payload },
    });
    const content = JSON.stringify({ error: payload });
    this.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content, role: 'tool' });
    return { type: 'tool_result', tool_use_id: tu.id, content, is_error: true };
  }

  private async runToolCallInner(
    run: ActiveRun,
    tu: Extract<ModelBlock, { type: 'tool_use' }>,
    iteration: number,
    callId: string,
    refusal?: AppError,
  ): Promise<ModelBlock> {
    const masked = maskSecrets(tu.input);
    const argsHash = this.argsHash(tu.name, tu.input);
    const tool = run.tools.get(tu.name);
    const nowIso = () => new Date(this.scheduler.now()).toISOString();
    this.emit(run, { type: EventType.TOOL_CALL_START, toolCallId: callId, toolCallName: tu.name.slice(0, 100) });
    this.emit(run, { type: EventType.TOOL_CALL_ARGS, toolCallId: callId, delta: JSON.stringify(masked ?? {}) });
    this.emit(run, { type: EventType.TOOL_CALL_END, toolCallId: callId });

    const row: K.ToolCallRow = {
      id: callId,
      run_id: run.id,
      conversation_id: run.conversationId,
      org_id: run.orgId,
      user_id: run.userId,
      model_tool_use_id: tu.id,
      iteration,
      tool_name: tu.name.slice(0, 100),
      title: tool?.title ?? tu.name.slice(0, 100),
      risk: tool?.risk ?? null,
      args_json: JSON.stringify(masked ?? {}),
      args_hash: argsHash,
      requires_confirm: tool?.kind === 'write' ? 1 : 0,
      status: 'proposed',
      proposal_json: null,
      changeset_id: null,
      result_json: null,
      error_json: null,
      approver_user_id: null,
      decided_at: null,
      created_at: nowIso(),
      updated_at: nowIso(),
    };
    // The audit row is written before anything runs.
    K.insertToolCall(this.db, row);
    this.trace(run, 'tool_call', { toolCallId: callId, tool: row.tool_name, args: masked, risk: row.risk });
    const status = (s: K.ToolCallStatus, extra: Record<string, unknown> = {}) => {
      run.span.addEvent('kinetix.tool_call', { 'kinetix.tool_call_id': callId, 'kinetix.tool': row.tool_name, 'kinetix.status': s });
      this.emit(run, {
        type: EventType.CUSTOM,
        name: KINETIX_EVENTS.toolCall,
        value: { toolCallId: callId, tool: row.tool_name, title: row.title, risk: row.risk, status: s, ...extra },
      });
    };
    const fail = (e: unknown, decision?: string): ModelBlock => {
      const payload = toErrorPayload(e);
      K.updateToolCall(this.db, callId, { status: 'failed', error_json: JSON.stringify(payload), updated_at: nowIso() });
      if (decision) this.trace(run, 'decision', { toolCallId: callId, decision, reason: payload.message });
      status('failed', { error: payload });
      const content = JSON.stringify({ error: payload });
      this.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content, role: 'tool' });
      return { type: 'tool_result', tool_use_id: tu.id, content, is_error: true };
    };

    status('proposed');
    if (refusal) return fail(refusal, 'refused_call');
    if (!tool) return fail(new UnknownTool(tu.name), 'unknown_tool');
    const parsed = tool.input.safeParse(tu.input ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(input)', message: i.message }));
      return fail(new ValidationError(`Invalid input for ${tool.name}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues), 'invalid_input');
    }
    const input = parsed.data;

    if (tool.kind === 'read') {
      try {
        const result = await Promise.resolve(tool.run(this.toolContext(run, tool), input));
        const maskedResult = maskSecrets(result ?? null);
        K.updateToolCall(this.db, callId, { status: 'executed', result_json: JSON.stringify(maskedResult), updated_at: nowIso() });
        status('executed');
        this.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content: JSON.stringify(maskedResult), role: 'tool' });
        // Untrusted-content gate: from this output on, the run has no high-privilege tools.
        if (isUntrusted(tool) && !run.gated) {
          const { kept, dropped } = gateSnapshot([...run.tools.values()]);
          run.tools = new Map(kept.map((t) => [t.name, t]));
          run.gated = true;
          this.gateNarrowed(run, tool.name, dropped, 'untrusted_output');
        }
        return { type: 'tool_result', tool_use_id: tu.id, content: this.forModel(run, tool, maskedResult) };
      } catch (e) {
        return fail(e, e instanceof AppError && e.code === 'Forbidden' ? 'forbidden' : undefined);
      }
    }

    // A write: plan (nothing written), run the policy, store the proposal, wait for a human.
    let proposal: Proposal;
    try {
      proposal = tool.plan(this.toolContext(run, tool), input);
    } catch (e) {
      return fail(e, e instanceof AppError && e.code === 'Forbidden' ? 'forbidden' : 'plan_refused');
    }
    if (!proposal.changeset) return this.legacyWrite(run, tu, tool, proposal, { callId, masked, argsHash, status, fail, nowIso });

    // Policy at proposal: every decision goes on the trace, on a span and to the user.
    let prop: ProposalView;
    try {
      prop = proposeChangeset(this.db, {
        userId: run.userId,
        planned: proposal.changeset,
        source: 'assistant',
        runId: run.id,
        toolCallId: callId,
        toolName: tool.name,
        title: tool.title,
        permission: tool.permission,
        now: new Date(this.scheduler.now()),
      });
    } catch (e) {
      if (e instanceof PolicyDenied) {
        this.policyDecided(run, callId, tool, null, 'deny', e.decisions);
        return fail(e, 'policy_denied');
      }
      return fail(e, e instanceof AppError && e.code === 'Forbidden' ? 'forbidden' : 'plan_refused');
    }
    this.policyDecided(run, callId, tool, prop.id, prop.verdict, prop.decisions);
    const maskedProposal = maskSecrets({ summary: proposal.summary, changeset: proposal.changeset }) as { summary: string; changeset: unknown };
    K.updateToolCall(this.db, callId, {
      proposal_json: JSON.stringify({
        ...maskedProposal,
        changesetId: prop.id,
        contentHash: prop.contentHash,
        policy: { verdict: prop.verdict, decisions: prop.decisions },
      }),
      changeset_id: prop.id,
      updated_at: nowIso(),
    });

    if (prop.status === 'needs_owner') {
      // Not blocking for an owner who may not be here: the change waits in the app, the run goes on.
      const message = needsOwnerMessage(prop);
      this.emit(run, {
        type: EventType.CUSTOM,
        name: KINETIX_EVENTS.needsOwner,
        value: {
          toolCallId: callId,
          tool: tool.name,
          title: tool.title,
          changesetId: prop.id,
          contentHash: prop.contentHash,
          summary: prop.summary,
          changeset: maskedProposal.changeset,
          decisions: prop.decisions,
          approverRole: prop.approverRole,
        },
      });
      this.trace(run, 'decision', { toolCallId: callId, decision: 'waiting_for_owner', changesetId: prop.id });
      status('proposed', { changesetId: prop.id, needsOwner: true });
      const content = JSON.stringify({ status: 'waiting_for_owner_approval', changeset_id: prop.id, message });
      this.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content, role: 'tool' });
      return { type: 'tool_result', tool_use_id: tu.id, content };
    }

    K.updateRun(this.db, run.id, { status: 'waiting_confirm' });
    const expiresAt = new Date(this.scheduler.now() + this.limits.confirmTimeoutMs).toISOString();
    this.emit(run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.confirmRequired,
      value: {
        toolCallId: callId,
        tool: tool.name,
        title: tool.title,
        risk: tool.risk,
        args: masked,
        argsHash,
        summary: proposal.summary,
        changeset: maskedProposal.changeset,
        changesetId: prop.id,
        contentHash: prop.contentHash,
        policy: { verdict: prop.verdict, decisions: prop.decisions },
        expiresAt,
      },
    });
    this.trace(run, 'decision', {
      toolCallId: callId,
      decision: 'confirm_required',
      changesetId: prop.id,
      summary: proposal.summary,
      rows: proposal.changeset.changes.length,
    });

    let { decision, approverId } = await this.waitForDecision(run, callId, argsHash, prop.contentHash, prop.id);
    K.updateRun(this.db, run.id, { status: 'running' });
    const decidedAt = nowIso();
    // Approved in the app (proposals list) while the dialog waited: the run reports what happened.
    if (decision !== 'approve') {
      const settled = getProposal(this.db, run.userId, prop.id);
      if (settled.status === 'applied') {
        decision = 'approve';
        approverId = settled.decidedBy ?? undefined;
      }
    }

    if (decision === 'decline') {
      try {
        declineProposal(this.db, { userId: approverId ?? run.userId, changesetId: prop.id, now: new Date(this.scheduler.now()) });
      } catch (e) {
        if (!(e instanceof AppError && e.code === 'Conflict'))
          this.log('kinetix: could not mark a declined proposal', { runId: run.id, error: e instanceof Error ? e.name : 'unknown' });
      }
      K.updateToolCall(this.db, callId, {
        status: 'rejected',
        approver_user_id: approverId ?? null,
        decided_at: decidedAt,
        result_json: JSON.stringify({ message: DECLINED_MESSAGE }),
        updated_at: decidedAt,
      });
      this.trace(run, 'approval', { toolCallId: callId, changesetId: prop.id, decision: 'declined', by: approverId });
      status('rejected', { changesetId: prop.id });
      this.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content: DECLINED_MESSAGE, role: 'tool' });
      return { type: 'tool_result', tool_use_id: tu.id, content: DECLINED_MESSAGE };
    }
    if (decision === 'timeout' || decision === 'stopped') {
      const message = decision === 'timeout' ? 'The user did not confirm in time. The action did not run.' : 'The run was stopped before this action ran.';
      expireProposal(this.db, prop.id, { code: decision === 'timeout' ? 'ConfirmTimeout' : 'Stopped', message }, decidedAt);
      K.updateToolCall(this.db, callId, {
        status: 'skipped',
        decided_at: decidedAt,
        error_json: JSON.stringify({ code: decision === 'timeout' ? 'ConfirmTimeout' : 'Stopped', message }),
        updated_at: decidedAt,
      });
      this.trace(run, 'approval', { toolCallId: callId, changesetId: prop.id, decision: decision === 'timeout' ? 'timed_out' : 'stopped' });
      status('skipped', { reason: decision });
      if (decision === 'timeout') {
        run.cancelReason = 'confirm_timeout';
        run.abort.abort(new Error(message));
      }
      return { type: 'tool_result', tool_use_id: tu.id, content: JSON.stringify({ status: decision, message }), is_error: true };
    }

    // Approved by the run's own user (confirm() checked who, the args hash and the content hash).
    K.updateToolCall(this.db, callId, { status: 'confirmed', approver_user_id: approverId ?? null, decided_at: decidedAt, updated_at: decidedAt });
    this.trace(run, 'approval', { toolCallId: callId, changesetId: prop.id, contentHash: prop.contentHash, decision: 'approved', by: approverId });
    status('confirmed', { changesetId: prop.id });
    // Defence in depth: the permission again, read now (a role change during the wait counts).
    const now = findUserById(this.db, run.userId);
    if (!now || !now.active || now.org_id !== run.orgId || !hasPermission(now.role, tool.permission)) {
      expireProposal(this.db, prop.id, { code: 'Forbidden', message: 'The role no longer allows this action.' }, nowIso());
      return fail(new Forbidden(`Your role no longer allows "${tool.title}" (${tool.permission}); nothing was changed.`), 'permission_recheck_failed');
    }
    const span = tracer.startSpan(
      'kinetix.apply',
      {
        attributes: {
          'kinetix.run_id': run.id,
          'kinetix.tool_call_id': callId,
          'kinetix.tool': tool.name,
          'kinetix.changeset_id': prop.id,
          'kinetix.rows': proposal.changeset.changes.length,
        },
      },
      otel.setSpan(otelContext.active(), run.span),
    );
    try {
      const { changeset: applied } = approveProposal(this.db, {
        approverUserId: approverId ?? run.userId,
        changesetId: prop.id,
        contentHash: prop.contentHash,
        now: new Date(this.scheduler.now()),
      });
      const result = {
        changeset_id: applied.id,
        summary: applied.summary,
        rows_changed: applied.changes.length,
        versions: applied.versions,
        undo: { tool: 'undo_changeset', changeset_id: applied.id },
      };
      const maskedResult = maskSecrets(result);
      K.updateToolCall(this.db, callId, { status: 'executed', changeset_id: applied.id, result_json: JSON.stringify(maskedResult), updated_at: nowIso() });
      this.trace(run, 'write', {
        toolCallId: callId,
        changesetId: applied.id,
        approver: approverId ?? null,
        activityId: applied.activity_id,
        summary: proposal.summary,
        rows: proposal.changeset.changes.map((c) => ({ op: c.op, table: c.table, id: c.id })),
      });
      status('executed', { changesetId: applied.id, undo: { verb: 'changesets.undo', changesetId: applied.id } });
      this.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content: JSON.stringify(maskedResult), role: 'tool' });
      if (proposal.reveal)
        this.publishEphemeral(run, { type: EventType.CUSTOM, name: KINETIX_EVENTS.reveal, value: { toolCallId: callId, values: proposal.reveal } });
      return { type: 'tool_result', tool_use_id: tu.id, content: this.forModel(run, tool, maskedResult) };
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof AppError ? e.code : 'error' });
      if (e instanceof AppError && e.code === 'Conflict')
        this.trace(run, 'decision', { toolCallId: callId, changesetId: prop.id, decision: 'stale', conflicts: e.conflicts ?? null });
      return fail(e, 'apply_failed');
    } finally {
      span.end();
    }
  }

  /** Put a policy evaluation on the trace, on a span and in the user's event stream. */
  private policyDecided(run: ActiveRun, toolCallId: string, tool: Tool, changesetId: string | null, verdict: PolicyVerdict, decisions: PolicyDecision[]): void {
    this.trace(run, 'policy', { toolCallId, tool: tool.name, changesetId, verdict, decisions });
    this.emit(run, { type: EventType.CUSTOM, name: KINETIX_EVENTS.policy, value: { toolCallId, tool: tool.name, changesetId, verdict, decisions } });
    const span = tracer.startSpan(
      'kinetix.policy',
      {
        attributes: {
          'kinetix.run_id': run.id,
          'kinetix.tool_call_id': toolCallId,
          'kinetix.tool': tool.name,
          'kinetix.policy.verdict': verdict,
          'kinetix.policy.codes': decisions.map((d) => d.code),
          ...(changesetId ? { 'kinetix.changeset_id': changesetId } : {}),
        },
      },
      otel.setSpan(otelContext.active(), run.span),
    );
    if (verdict === 'deny') span.setStatus({ code: SpanStatusCode.ERROR, message: 'policy_denied' });
    span.end();
  }

  /** A write tool without a changeset (tests, future non-record tools): the original confirm-then-apply path, no policy. */
  private async legacyWrite(
    run: ActiveRun,
    tu: Extract<ModelBlock, { type: 'tool_use' }>,
    tool: Extract<Tool, { kind: 'write' }>,
    proposal: Proposal,
    h: {
      callId: string;
      masked: unknown;
      argsHash: string;
      status: (s: K.ToolCallStatus, extra?: Record<string, unknown>) => void;
      fail: (e: unknown, d?: string) => ModelBlock;
      nowIso: () => string;
    },
  ): Promise<ModelBlock> {
    const { callId, masked, argsHash, status, fail, nowIso } = h;
    const maskedProposal = maskSecrets({ summary: proposal.summary, changeset: null });
    K.updateToolCall(this.db, callId, { proposal_json: JSON.stringify(maskedProposal), updated_at: nowIso() });
    K.updateRun(this.db, run.id, { status: 'waiting_confirm' });
    const expiresAt = new Date(this.scheduler.now() + this.limits.confirmTimeoutMs).toISOString();
    this.emit(run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.confirmRequired,
      value: {
        toolCallId: callId,
        tool: tool.name,
        title: tool.title,
        risk: tool.risk,
        args: masked,
        argsHash,
        summary: proposal.summary,
        changeset: null,
        expiresAt,
      },
    });
    this.trace(run, 'decision', { toolCallId: callId, decision: 'confirm_required', summary: proposal.summary, rows: 0 });
    const { decision, approverId } = await this.waitForDecision(run, callId, argsHash, null);
    K.updateRun(this.db, run.id, { status: 'running' });
    const decidedAt = nowIso();
    if (decision === 'decline') {
      K.updateToolCall(this.db, callId, {
        status: 'rejected',
        approver_user_id: approverId ?? null,
        decided_at: decidedAt,
        result_json: JSON.stringify({ message: DECLINED_MESSAGE }),
        updated_at: decidedAt,
      });
      this.trace(run, 'approval', { toolCallId: callId, decision: 'declined', by: approverId });
      status('rejected');
      this.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content: DECLINED_MESSAGE, role: 'tool' });
      return { type: 'tool_result', tool_use_id: tu.id, content: DECLINED_MESSAGE };
    }
    if (decision === 'timeout' || decision === 'stopped') {
      const message = decision === 'timeout' ? 'The user did not confirm in time. The action did not run.' : 'The run was stopped before this action ran.';
      K.updateToolCall(this.db, callId, {
        status: 'skipped',
        decided_at: decidedAt,
        error_json: JSON.stringify({ code: decision === 'timeout' ? 'ConfirmTimeout' : 'Stopped', message }),
        updated_at: decidedAt,
      });
      this.trace(run, 'approval', { toolCallId: callId, decision: decision === 'timeout' ? 'timed_out' : 'stopped' });
      status('skipped', { reason: decision });
      if (decision === 'timeout') {
        run.cancelReason = 'confirm_timeout';
        run.abort.abort(new Error(message));
      }
      return { type: 'tool_result', tool_use_id: tu.id, content: JSON.stringify({ status: decision, message }), is_error: true };
    }
    K.updateToolCall(this.db, callId, { status: 'confirmed', approver_user_id: approverId ?? null, decided_at: decidedAt, updated_at: decidedAt });
    this.trace(run, 'approval', { toolCallId: callId, decision: 'approved', by: approverId });
    status('confirmed');
    const now = findUserById(this.db, run.userId);
    if (!now || !now.active || now.org_id !== run.orgId || !hasPermission(now.role, tool.permission)) {
      return fail(new Forbidden(`Your role no longer allows "${tool.title}" (${tool.permission}); nothing was changed.`), 'permission_recheck_failed');
    }
    try {
      const applied = K.inTransaction(this.db, () => {
        const r = tool.apply(this.toolContext(run, tool), proposal, { changesetId: uuidv7() });
        K.updateToolCall(this.db, callId, {
          status: 'executed',
          changeset_id: r.changesetId ?? null,
          result_json: JSON.stringify(maskSecrets(r.result ?? null)),
          updated_at: nowIso(),
        });
        return r;
      });
      const maskedResult = maskSecrets(applied.result ?? null);
      this.trace(run, 'write', { toolCallId: callId, changesetId: applied.changesetId ?? null, summary: proposal.summary, rows: [] });
      status('executed', { changesetId: applied.changesetId ?? null });
      this.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content: JSON.stringify(maskedResult), role: 'tool' });
      if (applied.reveal)
        this.publishEphemeral(run, { type: EventType.CUSTOM, name: KINETIX_EVENTS.reveal, value: { toolCallId: callId, values: applied.reveal } });
      return { type: 'tool_result', tool_use_id: tu.id, content: this.forModel(run, tool, maskedResult) };
    } catch (e) {
      return fail(e, 'apply_failed');
    }
  }

  private waitForDecision(
    run: ActiveRun,
    toolCallId: string,
    argsHash: string,
    contentHash: string | null,
    changesetId: string | null = null,
  ): Promise<{ decision: Decision; approverId?: string }> {
    return new Promise((resolve) => {
      let settled = false;
      const timer = this.scheduler.setTimeout(() => finish({ decision: 'timeout' }), this.limits.confirmTimeoutMs);
      const finish = (d: { decision: Decision; approverId?: string }) => {
        if (settled) return;
        settled = true;
        this.scheduler.clearTimeout(timer);
        this.pending.delete(toolCallId);
        resolve(d);
      };
      this.pending.set(toolCallId, { toolCallId, run, argsHash, contentHash, changesetId, resolve: finish });
      if (run.abort.signal.aborted) finish({ decision: 'stopped' });
    });
  }

  /** Names of untrusted tools whose output is among the conversation's replayed facts (the digest). */
  private untrustedInDigest(conversationId: string): string[] {
    const names = new Set<string>();
    for (const r of K.recentExecutedToolCalls(this.db, conversationId, 12)) {
      const t = this.tools.get(r.tool_name);
      if (t && isUntrusted(t)) names.add(t.name);
    }
    return [...names];
  }

  /** Record that the untrusted-content gate closed: trace, span event, event to the user. */
  private gateNarrowed(run: ActiveRun, source: string, dropped: string[], at: 'run_start' | 'untrusted_output'): void {
    this.trace(run, 'decision', { decision: 'untrusted_content_gate', at, source, dropped });
    run.span.addEvent('kinetix.untrusted_gate', { 'kinetix.gate.at': at, 'kinetix.gate.dropped': dropped.length });
    this.emit(run, { type: EventType.CUSTOM, name: KINETIX_EVENTS.toolsNarrowed, value: { reason: 'untrusted_content', at, source, dropped } });
  }

  /** A tool result as the model sees it: secrets masked, restricted fields withheld, inside the data envelope. */
  private forModel(run: ActiveRun, tool: Tool, maskedResult: unknown): string {
    const { value, withheld } = withholdRestricted(maskedResult, tool.tables, run.provider.clearedFor);
    if (withheld > 0) this.trace(run, 'decision', { tool: tool.name, decision: 'withheld_restricted_fields', count: withheld });
    return dataEnvelope(`tool:${tool.name}`, value);
  }

  private digestFor(conversationId: string, provider: ModelProvider): string {
    const entries: DigestEntry[] = K.recentExecutedToolCalls(this.db, conversationId, 12).map((r) => {
      const tool = this.tools.get(r.tool_name);
      const result = r.result_json ? (JSON.parse(r.result_json) as unknown) : null;
      return {
        tool: r.tool_name,
        args: JSON.parse(r.args_json) as unknown,
        result: withholdRestricted(result, tool?.tables ?? 'unknown', provider.clearedFor).value,
      };
    });
    return buildDigest(entries);
  }

  // ---------------------------------------------------------------------------------------
  // Endings, events, traces

  private finishWithMessage(
    run: ActiveRun,
    text: string,
    status: K.RunStatus,
    error?: ErrorPayload & { runCode?: string },
    extra?: Record<string, unknown>,
  ): void {
    if (text.trim())
      K.insertMessage(this.db, {
        id: uuidv7(),
        conversation_id: run.conversationId,
        run_id: run.id,
        org_id: run.orgId,
        role: 'assistant',
        content: text,
        created_at: new Date(this.scheduler.now()).toISOString(),
      });
    if (error) {
      // The stop message is said to the user as an assistant message, then the run ends with an error.
      const id = uuidv7();
      this.emit(run, { type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' });
      this.emit(run, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: error.message });
      this.emit(run, { type: EventType.TEXT_MESSAGE_END, messageId: id });
    }
    this.finish(run, status, text, error, extra);
  }

  /** A text answer that reached `max_tokens`: kept, marked as cut off to the user, stored with the notice. */
  private finishTruncated(run: ActiveRun, text: string): void {
    const id = uuidv7();
    this.emit(run, { type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' });
    this.emit(run, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: TRUNCATED_NOTICE });
    this.emit(run, { type: EventType.TEXT_MESSAGE_END, messageId: id });
    this.finishWithMessage(run, text.trim() ? `${text}\n\n${TRUNCATED_NOTICE}` : TRUNCATED_NOTICE, 'completed', undefined, {
      truncated: true,
      stopReason: 'max_tokens',
    });
  }

  private finishCancelled(run: ActiveRun): void {
    const reason =
      run.cancelReason === 'confirm_timeout' ? 'The confirmation was not answered within 10 minutes, so the request was cancelled.' : 'Stopped by the user.';
    this.finish(run, 'cancelled', '', { code: 'Internal', message: reason, runCode: run.cancelReason === 'confirm_timeout' ? 'ConfirmTimeout' : 'Stopped' });
  }

  private finish(run: ActiveRun, status: K.RunStatus, text: string, error?: ErrorPayload & { runCode?: string }, extra?: Record<string, unknown>): void {
    if (!this.active.has(run.id)) return;
    const nowIso = new Date(this.scheduler.now()).toISOString();
    try {
      K.updateRun(this.db, run.id, {
        status,
        finished_at: nowIso,
        iterations: run.iterations,
        cost_usd: run.costUsd,
        error_code: error ? (error.runCode ?? error.code) : null,
        error_message: error ? error.message : null,
      });
      K.touchConversation(this.db, run.conversationId, nowIso);
    } catch (e) {
      this.log('kinetix: could not record the end of a run', { runId: run.id, error: e instanceof Error ? e.name : 'unknown' });
    }
    this.trace(run, 'finish', { status, iterations: run.iterations, costUsd: run.costUsd, error: error ?? null });
    if (status === 'completed')
      this.emit(run, { type: EventType.RUN_FINISHED, threadId: run.conversationId, runId: run.id, outcome: { type: 'success' }, result: { text, ...extra } });
    else if (status === 'cancelled')
      this.emit(run, {
        type: EventType.RUN_FINISHED,
        threadId: run.conversationId,
        runId: run.id,
        outcome: { type: 'cancelled' },
        result: { reason: error?.message ?? null },
      });
    else this.emit(run, { type: EventType.RUN_ERROR, message: error?.message ?? 'The request failed.', code: error?.runCode ?? error?.code ?? 'Internal' });
    run.span.setAttributes({ 'kinetix.status': status, 'kinetix.iterations': run.iterations, 'kinetix.cost_usd': run.costUsd });
    if (status !== 'completed') run.span.setStatus({ code: SpanStatusCode.ERROR, message: error?.runCode ?? error?.code ?? status });
    run.span.end();
    this.active.delete(run.id);
    this.bus.endRun(run.id);
    run.release();
    run.resolveDone({ runId: run.id, conversationId: run.conversationId, status, text, ...(error ? { error } : {}) });
  }

  private emit(run: ActiveRun, event: AGUIEvent): void {
    const seq = ++run.seq;
    // Every persisted and published event passes the one redactor (secret-named fields and credential-shaped text).
    const stamped = maskSecrets({ ...event, timestamp: this.scheduler.now() }) as AGUIEvent;
    try {
      K.insertRunEvent(this.db, {
        run_id: run.id,
        seq,
        type: event.type,
        event_json: JSON.stringify(stamped),
        created_at: new Date(this.scheduler.now()).toISOString(),
      });
    } catch (e) {
      this.log('kinetix: could not persist a run event', { runId: run.id, seq, error: e instanceof Error ? e.name : 'unknown' });
    }
    this.bus.publish({ id: String(seq), runId: run.id, seq, event: stamped });
  }

  private publishEphemeral(run: ActiveRun, event: AGUIEvent): void {
    this.bus.publish({ id: '', runId: run.id, seq: 0, event: { ...event, timestamp: this.scheduler.now() } as AGUIEvent, ephemeral: true });
  }

  private trace(run: ActiveRun, kind: string, data: unknown): void {
    try {
      K.insertTrace(this.db, {
        run_id: run.id,
        seq: ++run.traceSeq,
        kind,
        data_json: JSON.stringify(maskSecrets(data ?? null)),
        created_at: new Date(this.scheduler.now()).toISOString(),
      });
    } catch (e) {
      this.log('kinetix: could not write a trace entry', { runId: run.id, kind, error: e instanceof Error ? e.name : 'unknown' });
    }
  }

  private caller(userId: string) {
    const u = findUserById(this.db, userId);
    if (!u) throw new Forbidden('Your account was not found. Sign in again.');
    if (!u.active) throw new Forbidden('Your account is deactivated. Ask a club administrator to reactivate it.');
    if (!hasPermission(u.role, 'kinetix.use')) throw new Forbidden('Your role cannot use Kinetix.');
    return u;
  }

  private clearance(orgId: string, providerId: string): ReadonlySet<Classification> {
    try {
      const v = getOrgSetting<Record<string, unknown>>(this.db, orgId, CLEARANCE_SETTING_KEY);
      return parseClearance(v && typeof v === 'object' ? v[providerId] : undefined);
    } catch {
      this.log('kinetix: could not read provider clearance; treating the provider as not cleared');
      return new Set();
    }
  }

  private outcomeFromRow(row: K.RunRow): RunOutcome {
    const msgs = K.listMessages(this.db, row.conversation_id).filter((m) => m.run_id === row.id && m.role === 'assistant');
    const text = msgs.map((m) => m.content).join('\n');
    return {
      runId: row.id,
      conversationId: row.conversation_id,
      status: row.status,
      text,
      ...(row.error_code ? { error: { code: 'Internal' as const, message: row.error_message ?? '', runCode: row.error_code } } : {}),
    };
  }

  /**
   * At start: runs left in flight by a stopped process become `interrupted`; their pending
   * confirmations `skipped`; a confirmed call is settled by whether its changeset committed (the
   * apply is one transaction, so nothing is ever half-applied). Runs of another live process on
   * the same database are left alone.
   */
  private recoverInterrupted(): void {
    let rows: K.RunRow[];
    try {
      rows = K.inFlightRuns(this.db);
    } catch {
      return;
    }
    for (const r of rows) {
      if (r.host_pid !== process.pid && pidAlive(r.host_pid)) continue;
      const nowIso = new Date(this.scheduler.now()).toISOString();
      K.inTransaction(this.db, () => {
        const interrupted = { code: 'Interrupted', message: 'The app stopped before this action was decided; it did not run.' };
        for (const t of K.listToolCalls(this.db, r.id)) {
          if (t.status === 'proposed') {
            // A change waiting for an owner stays waiting in the app; any other open proposal is closed.
            if (t.changeset_id && K.changesetStatus(this.db, t.changeset_id) === 'needs_owner') continue;
            if (t.changeset_id) expireProposal(this.db, t.changeset_id, interrupted, nowIso);
            K.updateToolCall(this.db, t.id, { status: 'skipped', error_json: JSON.stringify(interrupted), updated_at: nowIso });
          } else if (t.status === 'confirmed') {
            const committed = t.changeset_id !== null && K.changesetExists(this.db, t.changeset_id);
            if (!committed && t.changeset_id)
              expireProposal(
                this.db,
                t.changeset_id,
                { code: 'Interrupted', message: 'The app stopped before this action was applied; nothing was changed.' },
                nowIso,
              );
            K.updateToolCall(
              this.db,
              t.id,
              committed
                ? { status: 'executed', updated_at: nowIso }
                : {
                    status: 'failed',
                    error_json: JSON.stringify({ code: 'Interrupted', message: 'The app stopped before this action was applied; nothing was changed.' }),
                    updated_at: nowIso,
                  },
            );
          }
        }
        K.updateRun(this.db, r.id, {
          status: 'interrupted',
          finished_at: nowIso,
          error_code: 'Interrupted',
          error_message: 'The app stopped while this request was running.',
        });
        K.releaseRunLease(this.db, r.id);
        const seq = K.maxRunEventSeq(this.db, r.id) + 1;
        const ev = {
          type: EventType.RUN_ERROR,
          message: 'The app stopped while this request was running. Nothing was half-applied; ask again to continue.',
          code: 'Interrupted',
          timestamp: this.scheduler.now(),
        };
        K.insertRunEvent(this.db, { run_id: r.id, seq, type: ev.type, event_json: JSON.stringify(ev), created_at: nowIso });
        K.insertTrace(this.db, {
          run_id: r.id,
          seq: K.maxTraceSeq(this.db, r.id) + 1,
          kind: 'finish',
          data_json: JSON.stringify({ status: 'interrupted' }),
          created_at: nowIso,
        });
      });
    }
  }
}

/** What the loop decided about a tool call before it is dispatched. */
interface PreCheck {
  /** The provider found the input unusable (oversized, over-deep, cut off). */
  issue?: ToolInputIssue;
  /** Refused outright (repeated id, over the per-response cap); recorded, not run. */
  refusal?: AppError;
  /** The response stopped at max_tokens. */
  truncated?: boolean;
}
