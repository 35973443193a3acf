/**
 * The Kinetix harness (kinetix.md §2–8): the public API the UI, the MCP host, the CLI and the
 * eval call. A run is detached from its caller and carries a copy of the signed-in user and
 * nothing else; every event is persisted with a sequence number before it is published to views.
 *
 * The work is done in stages, each in its own module:
 * - run-loop.ts (`RunLoop`): model calls, stop reasons, limits, the run's end;
 * - tool-call.ts (`ToolCallPipeline`): one tool call as one pipeline (receive → bound → audit →
 *   validate → authorise and gate → plan → policy → confirm → apply → record);
 * - approvals.ts (`Approvals`): the confirm dialogs a run waits on;
 * - recording.ts (`RunRecorder`): events, traces, usage rows, policy and gate decisions;
 * - recovery.ts: settling runs a stopped process left in flight.
 *
 * Public API: {@link Kinetix.open} (construct and start), {@link Kinetix.startRun},
 * {@link Kinetix.subscribe}, {@link Kinetix.confirm}, {@link Kinetix.stop},
 * {@link Kinetix.waitForRun}, {@link Kinetix.listConversations}, {@link Kinetix.getConversation},
 * {@link Kinetix.getRunTrace}, and the proposals in the app: {@link Kinetix.listProposals},
 * {@link Kinetix.getProposal}, {@link Kinetix.approveProposal}, {@link Kinetix.declineProposal}.
 * The constructor has no side effects: {@link Kinetix.start} registers telemetry and recovers
 * interrupted runs (database writes); the machine key file is read when a provider key is first needed.
 */
import type { AGUIEvent } from '@ag-ui/core';
import { EventType } from '@ag-ui/core';
import { join, dirname } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { Forbidden, NotFound, ValidationError } from '../../models/errors';
import { hasPermission } from '../../models/roles';
import type { Db } from '../data/db';
import { accountStamp, findOrganization, findUserById } from '../data/identity';
import * as K from '../data/kinetix';
import type { AppliedChangeset } from '../data/changesets';
import { initTelemetry } from '../telemetry/otel';
import { Approvals } from './approvals';
import { EventBus, type RunEventEnvelope } from './bus';
import type { ClearanceProvider, ProviderClearance } from './classification';
import { CLASSIFICATIONS, earlierAnswerWithheld, isCleared, parseClearance, withholdForProvider, withholdToolInput } from './classification';
import { providerClearance } from './settings';
import { BudgetExceeded, KinetixNotConfigured } from './errors';
import { gateSnapshot, isUntrusted } from './gate';
import type { KinetixLimits } from './limits';
import { checkBudget, DEFAULT_LIMITS, LEASE_HEARTBEAT_MS, takeRunLease } from './limits';
import { RunLoop } from './run-loop';
import { maskSecrets, redactText, scrubText } from './mask';
import { buildDigest, MAX_HISTORY_MESSAGES, replayHistory, type ChatTurn, type DigestEntry } from './prompt';
import { approveProposal, declineProposal, getProposal, listProposals, type ProposalStatus, type ProposalView } from './proposals';
import type { ModelProvider } from './provider';
import { AnthropicProvider } from './provider';
import { RunRecorder } from './recording';
import { recoverInterrupted } from './recovery';
import type { LogFn, ToolRegistry } from './registry';
import type { ActiveRun, HarnessDeps, RunOutcome } from './run';
import { tracer } from './run';
import type { Scheduler } from './scheduler';
import { realScheduler } from './scheduler';
import { SecretBox, resolveProviderKey } from './secrets';
import { ToolCallPipeline } from './tool-call';
import { assertMayReadTrace } from './trace-access';

export { KINETIX_EVENTS } from './events';
export { MAX_TOOL_CALLS_PER_RESPONSE, REFUSAL_MESSAGE, TRUNCATED_NOTICE } from './run-loop';
export type { Decision, RunOutcome } from './run';

/** Extra config the provider factory receives. */
export interface ProviderConfig {
  apiKey: string;
  orgId: string;
  /** The classes this provider is cleared for (the org's `anthropic` clearance; default `['internal']`). */
  clearedFor: ProviderClearance;
}

export interface KinetixOptions {
  db: Db;
  tools: ToolRegistry;
  /** Builds the provider for an org's key. Default: Anthropic through the SDK (`ANTHROPIC_BASE_URL` honoured). */
  providerFactory?: (cfg: ProviderConfig) => ModelProvider;
  /** Machine key for stored provider keys. Default: `ATHLETE_SECRET_KEY` or `machine.key` next to the database (read on first need). */
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
  private box: SecretBox | null | undefined;
  private readonly providerFactory: (cfg: ProviderConfig) => ModelProvider;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private readonly active = new Map<string, ActiveRun>();
  private readonly rec: RunRecorder;
  private readonly approvals: Approvals;
  private readonly runLoop: RunLoop;
  private started = false;

  /** Wire the harness. No side effects (see {@link start}). @throws Error on a limit that is not a number ≥ 1 */
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
    this.box = opts.secretBox;
    this.providerFactory =
      opts.providerFactory ??
      ((cfg) =>
        new AnthropicProvider({
          apiKey: cfg.apiKey,
          clearedFor: cfg.clearedFor,
          ...(this.env.ANTHROPIC_BASE_URL ? { baseURL: this.env.ANTHROPIC_BASE_URL } : {}),
        }));
    const deps: HarnessDeps = {
      db: this.db,
      tools: this.tools,
      scheduler: this.scheduler,
      log: this.log,
      env: this.env,
      limits: this.limits,
      bus: this.bus,
      active: this.active,
    };
    this.rec = new RunRecorder(deps);
    this.approvals = new Approvals(deps, this.rec);
    this.runLoop = new RunLoop(deps, this.rec, new ToolCallPipeline(deps, this.rec, this.approvals));
  }

  /** Construct and {@link start} a harness (what the app, the CLI, the MCP host and the eval use). */
  static open(opts: KinetixOptions): Kinetix {
    return new Kinetix(opts).start();
  }

  /**
   * The side effects of starting: register telemetry (when `OTEL_EXPORTER_OTLP_ENDPOINT` is set)
   * and settle runs a stopped process left in flight (database writes, recovery.ts). Idempotent.
   */
  start(): this {
    if (this.started) return this;
    this.started = true;
    initTelemetry(this.env, { log: (l) => this.log(l) });
    recoverInterrupted(this.db, this.scheduler);
    return this;
  }

  /** The machine key for stored provider keys, read on first need (`null` when there is none; logged once). */
  private secretBox(): SecretBox | null {
    if (this.box !== undefined) return this.box;
    try {
      this.box = SecretBox.fromEnvOrFile(
        this.db.path === ':memory:' ? join(process.cwd(), '.athlete', 'machine.key') : join(dirname(this.db.path), 'machine.key'),
        this.env,
      );
    } catch {
      this.log('kinetix: no machine key available; stored provider keys cannot be read');
      this.box = null;
    }
    return this.box;
  }

  // ---------------------------------------------------------------------------------------
  // Public API

  /**
   * Start one turn. Returns at once with the run id; the loop continues detached.
   * Checks, in order: the caller (active, `kinetix.use`), the conversation (own; otherwise
   * NotFound), the provider key, concurrency (3 per user), rate limits, the budget gate.
   * @throws Forbidden, NotFound, Validation (empty/oversized message), NotConfigured (no provider
   *   key: {@link KinetixNotConfigured}), TooManyRuns, RateLimited (with retryAfterSeconds),
   *   BudgetExceeded (with remainingUsd, which crosses IPC/HTTP in the error payload)
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
    const { key } = resolveProviderKey(this.db, user.org_id, this.secretBox(), (l) => this.log(l), this.env);
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
      // An answer written under a clearance this provider no longer holds is not replayed (it may quote what is now withheld).
      const history = conversation ? replayHistory(this.replayable(K.recentMessages(this.db, conversationId, MAX_HISTORY_MESSAGES), clearedFor)) : [];
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
          cleared_for_json: JSON.stringify(clearedFor),
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
        accountStamp: accountStamp(this.db, user.id),
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
      this.rec.trace(run, 'request', {
        message,
        page,
        model: run.model,
        tools: snapshot.map((t) => t.name),
        budgetRemainingUsd: Number.isFinite(budget.remainingUsd) ? budget.remainingUsd : null,
        replayedMessages: history.length,
      });
      this.rec.emit(run, { type: EventType.RUN_STARTED, threadId: conversationId, runId });
      if (gate) this.rec.gateNarrowed(run, untrustedBefore.join(', '), gate.dropped, 'run_start');
      void this.runLoop.loop(run);
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
    return this.approvals.confirm(userId, toolCallId, decision);
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
    this.approvals.stopRun(run);
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
    this.approvals.decidedInApp(changesetId, 'approve', userId);
    return r;
  }

  /** Decline a proposal as the signed-in user. @throws NotFound, Conflict */
  declineProposal(userId: string, changesetId: string): ProposalView {
    const v = declineProposal(this.db, { userId, changesetId, now: new Date(this.scheduler.now()) });
    this.approvals.decidedInApp(changesetId, 'decline', userId);
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

  /** Names of untrusted tools whose output is among the conversation's replayed facts (the digest). */
  private untrustedInDigest(conversationId: string): string[] {
    const names = new Set<string>();
    for (const r of K.recentExecutedToolCalls(this.db, conversationId, 12)) {
      const t = this.tools.get(r.tool_name);
      if (t && isUntrusted(t)) names.add(t.name);
    }
    return [...names];
  }

  /**
   * Earlier messages as they may be replayed to a provider with `clearedFor`: the user's own
   * prompts as typed (what they chose to send; help page "What data the assistant may see"), and
   * each assistant answer only when its run was sent under no class `clearedFor` lacks; otherwise
   * {@link earlierAnswerWithheld}. A run with no recorded clearance (before migration 0013) counts
   * as cleared for everything (fail closed).
   */
  private replayable(messages: readonly K.MessageRow[], clearedFor: ProviderClearance): ChatTurn[] {
    const runs = K.runClearances(
      this.db,
      messages.filter((m) => m.role === 'assistant' && m.run_id).map((m) => m.run_id!),
    );
    return messages.map((m) => {
      if (m.role !== 'assistant') return { role: m.role, content: m.content };
      const stored = m.run_id ? runs.get(m.run_id) : null;
      const then = stored ? parseClearance(JSON.parse(stored) as unknown) : CLASSIFICATIONS;
      const lost = then.filter((c) => !isCleared(clearedFor, c));
      return { role: m.role, content: lost.length === 0 ? m.content : earlierAnswerWithheld(lost) };
    });
  }

  private digestFor(conversationId: string, provider: ModelProvider): string {
    const entries: DigestEntry[] = K.recentExecutedToolCalls(this.db, conversationId, 12).map((r) => {
      const tool = this.tools.get(r.tool_name);
      const result = r.result_json ? (JSON.parse(r.result_json) as unknown) : null;
      return {
        tool: r.tool_name,
        // The model's own arguments carry values too (a name search, a note it wrote): re-masked under today's clearance.
        args: withholdToolInput(JSON.parse(r.args_json) as unknown, tool?.tables ?? 'unknown', provider.clearedFor, tool?.inputClasses),
        result: withholdForProvider(result, tool?.tables ?? 'unknown', provider.clearedFor, undefined, tool?.outputClasses).value,
      };
    });
    return buildDigest(entries);
  }

  private caller(userId: string) {
    const u = findUserById(this.db, userId);
    if (!u) throw new Forbidden('Your account was not found. Sign in again.');
    if (!u.active) throw new Forbidden('Your account is deactivated. Ask a club administrator to reactivate it.');
    if (!hasPermission(u.role, 'kinetix.use')) throw new Forbidden('Your role cannot use Kinetix.');
    return u;
  }

  /** The org's clearance for `provider` (fail closed: a failed read is the default, `['internal']`, and is logged). */
  private clearance(orgId: string, provider: ClearanceProvider): ProviderClearance {
    return providerClearance(this.db, orgId, provider, (l) => this.log(l));
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
}
