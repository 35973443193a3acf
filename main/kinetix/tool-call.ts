/**
 * One tool call, as one pipeline (kinetix.md §2–3, §8; issue 10 §2). {@link ToolCallPipeline.run}
 * reads top to bottom in the order every call takes:
 *
 *   receive → bound → audit → validate → authorise and gate (reads run here) → plan → policy →
 *   confirm → apply → record
 *
 * - receive: a tool-call id and span;
 * - bound: size and depth before anything hashes, stores, masks or validates the input
 *   (issue 9 §3); an input over the bounds is recorded by digest and refused;
 * - audit: the tool-call row (arguments masked) is written before anything runs;
 * - validate: refusals decided by the loop (repeated id, per-response cap), unknown tool (outside
 *   the run's snapshot), the zod input;
 * - authorise and gate: a per-call capability narrowed to the tool's scopes (the service layer
 *   re-reads the user's role); a read runs now, and untrusted output closes the gate;
 * - plan: a write plans its changeset (nothing written);
 * - policy: the changeset is stored as a proposal with the policy's decisions (deny → refused,
 *   needs owner → waits in the app, the run goes on);
 * - confirm: the user approves or declines the dialog, or it times out or is stopped;
 * - apply: the permission again, then the approved proposal applies in one transaction;
 * - record: the result for the model (masked, classified, in the data envelope).
 */
import { EventType } from '@ag-ui/core';
import { context as otelContext, SpanStatusCode, trace as otel, type Span } from '@opentelemetry/api';
import { createHmac, randomBytes } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { canonicalJson } from '../../models/changeset';
import { AppError, Forbidden, ValidationError, toErrorPayload } from '../../models/errors';
import { hasPermission } from '../../models/roles';
import { accountStamp, findUserById } from '../data/identity';
import * as K from '../data/kinetix';
import type { Capability, ServiceContext } from '../services/context';
import type { Approvals } from './approvals';
import { boundsIssue, boundsMessage, digestInput, measureInput } from '../services/bounds';
import { parseInput, PolicyDenied } from '../services/verb';
import {
  errorForProvider,
  filterNotClearedMessage,
  filtersNotCleared,
  isCleared,
  withheldMarker,
  withholdForProvider,
  writeFieldsNotCleared,
  writeNotClearedMessage,
} from './classification';
import { UnknownTool } from './errors';
import { KINETIX_EVENTS } from './events';
import { gateSnapshot, isUntrusted } from './gate';
import { maskSecrets } from './mask';
import { dataEnvelope, DECLINED_MESSAGE } from './prompt';
import {
  approveProposal,
  declineProposal,
  expireProposal,
  getProposal,
  needsOwnerMessage,
  proposeChangeset,
  STALE_MESSAGE,
  type ProposalView,
} from './proposals';
import type { ModelBlock, ToolInputIssue } from './provider';
import type { RunRecorder } from './recording';
import { refusedInputSummary, toolCallRow } from './recording';
import type { ActiveRun, Decision, HarnessDeps, PreCheck } from './run';
import { ACCOUNT_CHANGED, tracer } from './run';
import { telemetryCapturesContent } from '../telemetry/otel';
import type { Proposal, ReadTool, Tool, ToolContext, WriteTool } from './tool';
import { toolInputDefaults } from './tool';
import type { PlannedChangeset } from '../../models/changeset';

type ToolUse = Extract<ModelBlock, { type: 'tool_use' }>;

/** One call on its way through the pipeline. */
interface Call {
  run: ActiveRun;
  tu: ToolUse;
  iteration: number;
  id: string;
  span: Span;
}

/** A call that passed the audit stage: its row exists and its arguments are masked and hashed. */
interface AuditedCall extends Call {
  row: K.ToolCallRow;
  masked: unknown;
  argsHash: string;
}

/** A planned write with its stored proposal. */
interface Proposed {
  proposal: Proposal & { changeset: PlannedChangeset };
  prop: ProposalView;
  masked: { summary: string; changeset: unknown };
}

/** Runs tool calls through the stages above. */
export class ToolCallPipeline {
  private readonly hashKey = randomBytes(32);

  constructor(
    private readonly d: HarnessDeps,
    private readonly rec: RunRecorder,
    private readonly approvals: Approvals,
  ) {}

  /** One tool call from the model, through every stage; returns the tool_result block for the model. Never throws for a tool's failure. */
  async run(run: ActiveRun, tu: ToolUse, iteration: number, pre: PreCheck = {}): Promise<ModelBlock> {
    const call = this.receive(run, tu, iteration);
    try {
      const issue = this.bound(call, pre);
      if (issue) return this.refuseInput(call, issue, pre.truncated === true);
      const audited = this.audit(call);
      // The account changed while the model was answering (role, athlete link, PIN, status): nothing runs.
      // The loop's next step then ends the run (run-loop.ts ACCOUNT_CHANGED).
      if (accountStamp(this.d.db, run.userId) !== run.accountStamp) {
        return this.fail(audited, new Forbidden(ACCOUNT_CHANGED), 'forbidden');
      }
      const checked = this.validate(audited, pre.refusal);
      if ('failed' in checked) return checked.failed;
      const { tool, input } = checked;
      if (tool.kind === 'read') return await this.read(audited, tool, input);
      const planned = this.plan(audited, tool, input);
      if ('failed' in planned) return planned.failed;
      const proposed = this.policy(audited, tool, planned.proposal);
      if ('failed' in proposed) return proposed.failed;
      if (proposed.prop.status === 'needs_owner') return this.waitForOwner(audited, tool, proposed);
      const { decision, approverId } = await this.confirm(audited, tool, proposed);
      if (decision !== 'approve') return this.notApproved(audited, proposed, decision, approverId);
      return this.apply(audited, tool, proposed, approverId);
    } finally {
      this.endSpan(call);
    }
  }

  // -- receive ------------------------------------------------------------------------------

  private receive(run: ActiveRun, tu: ToolUse, iteration: number): Call {
    const id = uuidv7();
    const span = tracer.startSpan(
      'kinetix.tool_call',
      { attributes: { 'kinetix.run_id': run.id, 'kinetix.tool_call_id': id, 'kinetix.tool': tu.name.slice(0, 100), 'kinetix.iteration': iteration } },
      otel.setSpan(otelContext.active(), run.span),
    );
    return { run, tu, iteration, id, span };
  }

  /** The span ends with the call's stored status (ids, names, status; the arguments only when content capture is on, masked). */
  private endSpan(call: Call): void {
    const row = K.getToolCall(this.d.db, call.id);
    call.span.setAttribute('kinetix.status', row?.status ?? 'unknown');
    if (row?.changeset_id) call.span.setAttribute('kinetix.changeset_id', row.changeset_id);
    if (row?.status === 'failed')
      call.span.setStatus({
        code: SpanStatusCode.ERROR,
        message: row.error_json ? ((JSON.parse(row.error_json) as { code?: string }).code ?? 'failed') : 'failed',
      });
    call.span.end();
  }

  // -- bound --------------------------------------------------------------------------------

  /** Bounds first (issue 9 §3): nothing below hashes, stores, masks or validates an input over them. */
  private bound(call: Call, pre: PreCheck): ToolInputIssue | undefined {
    let issue = pre.issue;
    if (!issue) {
      const m = measureInput(call.tu.input ?? {});
      if (!m.ok) issue = { issue: m.reason ?? 'size', bytes: m.bytes, depth: m.depth, sha256: digestInput(call.tu.input) };
    }
    if (!issue && telemetryCapturesContent(this.d.env))
      call.span.setAttribute('kinetix.tool.args', JSON.stringify(maskSecrets(call.tu.input ?? {})).slice(0, 4000));
    return issue;
  }

  /**
   * A tool call whose input is over the bounds or incomplete: the audit row records the attempt
   * with the input's digest, size and depth only (never its content), the model gets a clear
   * message, nothing runs.
   */
  private refuseInput(call: Call, issue: ToolInputIssue, truncated: boolean): ModelBlock {
    const { run, tu, iteration, id: callId } = call;
    const name = tu.name.slice(0, 100);
    const tool = run.tools.get(tu.name);
    const summary = refusedInputSummary(issue);
    const message =
      issue.issue === 'incomplete'
        ? `Your reply was cut off${truncated ? ' at the output limit (max_tokens)' : ''} before the input of ${name} was complete; the call was not run. Send it again with a shorter input.`
        : boundsMessage(name, { reason: issue.issue });
    const payload = toErrorPayload(
      new ValidationError(message, [issue.issue === 'incomplete' ? { path: '(input)', message: 'incomplete' } : boundsIssue(issue.issue)]),
    );
    this.rec.auditToolCall(
      run,
      toolCallRow({
        id: callId,
        run,
        toolUseId: tu.id,
        iteration,
        name,
        tool,
        args: summary,
        argsHash: `sha256:${issue.sha256}`,
        refused: payload,
        at: this.nowIso(),
      }),
      {
        kind: 'decision',
        data: { toolCallId: callId, tool: name, decision: issue.issue === 'incomplete' ? 'incomplete_input' : 'input_out_of_bounds', ...summary },
      },
    );
    this.rec.emit(run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.toolCall,
      value: { toolCallId: callId, tool: name, title: tool?.title ?? name, risk: tool?.risk ?? null, status: 'failed', error: payload },
    });
    const content = JSON.stringify({ error: payload });
    this.rec.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: callId, content, role: 'tool' });
    return { type: 'tool_result', tool_use_id: tu.id, content, is_error: true };
  }

  // -- audit --------------------------------------------------------------------------------

  /** The audit row is written before anything runs (arguments masked; the handler gets them unmasked). */
  private audit(call: Call): AuditedCall {
    const { run, tu, iteration, id: callId } = call;
    const masked = maskSecrets(tu.input);
    const argsHash = this.argsHash(tu.name, tu.input);
    const row = toolCallRow({
      id: callId,
      run,
      toolUseId: tu.id,
      iteration,
      name: tu.name,
      tool: run.tools.get(tu.name),
      args: masked,
      argsHash,
      at: this.nowIso(),
    });
    this.rec.auditToolCall(run, row, { kind: 'tool_call', data: { toolCallId: callId, tool: row.tool_name, args: masked, risk: row.risk } });
    const audited = { ...call, row, masked, argsHash };
    this.status(audited, 'proposed');
    return audited;
  }

  // -- validate -----------------------------------------------------------------------------

  private validate(call: AuditedCall, refusal: AppError | undefined): { failed: ModelBlock } | { tool: Tool; input: unknown } {
    if (refusal) return { failed: this.fail(call, refusal, 'refused_call') };
    const tool = call.run.tools.get(call.tu.name);
    if (!tool) return { failed: this.fail(call, new UnknownTool(call.tu.name), 'unknown_tool') };
    try {
      return { tool, input: parseInput(tool.input, call.tu.input, tool.name) };
    } catch (e) {
      if (e instanceof ValidationError) return { failed: this.fail(call, e, 'invalid_input') };
      throw e;
    }
  }

  // -- authorise and gate (a read runs here) ---------------------------------------------------

  /** The handler's context: the run's user, `via.runId`, and a five-minute capability narrowed to the tool's scopes. */
  private toolContext(run: ActiveRun, tool: Tool): ToolContext {
    const capability: Capability = {
      id: uuidv7(),
      userId: run.userId,
      orgId: run.orgId,
      scopes: [...tool.scopes],
      expiresAt: this.d.scheduler.now() + this.d.limits.capabilityTtlMs,
    };
    const service: ServiceContext = { db: this.d.db, userId: run.userId, via: { runId: run.id, capability }, now: () => new Date(this.d.scheduler.now()) };
    return {
      service,
      runId: run.id,
      conversationId: run.conversationId,
      orgId: run.orgId,
      userId: run.userId,
      page: run.page,
      emit: (name, value) => this.rec.emit(run, { type: EventType.CUSTOM, name, value }),
    };
  }

  private async read(call: AuditedCall, tool: ReadTool, input: unknown): Promise<ModelBlock> {
    const { run } = call;
    // A filter on a field the provider is not cleared for would confirm the withheld value: refused before the query runs.
    const notCleared = filtersNotCleared(input, tool.tables, run.provider.clearedFor, toolInputDefaults(tool), tool.inputClasses);
    if (notCleared.length > 0)
      return this.fail(
        call,
        new ValidationError(
          filterNotClearedMessage(tool.name, notCleared),
          notCleared.map((r) => ({ path: r.field, message: `${r.class}: this model provider is not cleared for it` })),
        ),
        'filter_not_cleared',
      );
    try {
      const result = await Promise.resolve(tool.run(this.toolContext(run, tool), input));
      const maskedResult = maskSecrets(result ?? null);
      K.updateToolCall(this.d.db, call.id, { status: 'executed', result_json: JSON.stringify(maskedResult), updated_at: this.nowIso() });
      this.status(call, 'executed');
      this.rec.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: call.id, content: JSON.stringify(maskedResult), role: 'tool' });
      this.gate(run, tool);
      return this.toModel(call, tool, maskedResult);
    } catch (e) {
      return this.fail(call, e, e instanceof AppError && e.code === 'Forbidden' ? 'forbidden' : undefined, true);
    }
  }

  /** Untrusted-content gate: from untrusted output on, the run has no high-privilege tools (gate.ts). */
  private gate(run: ActiveRun, tool: Tool): void {
    if (!isUntrusted(tool) || run.gated) return;
    const { kept, dropped } = gateSnapshot([...run.tools.values()]);
    run.tools = new Map(kept.map((t) => [t.name, t]));
    run.gated = true;
    this.rec.gateNarrowed(run, tool.name, dropped, 'untrusted_output');
  }

  // -- plan ---------------------------------------------------------------------------------

  /** A write plans its changeset; nothing is written. A write tool must propose a changeset. */
  private plan(call: AuditedCall, tool: WriteTool, input: unknown): { failed: ModelBlock } | { proposal: Proposal & { changeset: PlannedChangeset } } {
    // A value above the provider's clearance: refused before planning, as a read's filter is ("nothing to change" would confirm a guess).
    const notCleared = writeFieldsNotCleared(input, tool.tables, call.run.provider.clearedFor, tool.inputClasses);
    if (notCleared.length > 0)
      return {
        failed: this.fail(
          call,
          new ValidationError(
            writeNotClearedMessage(tool.name, notCleared),
            notCleared.map((r) => ({ path: r.field, message: `${r.class}: this model provider is not cleared for it` })),
          ),
          'write_not_cleared',
        ),
      };
    let proposal: Proposal;
    try {
      proposal = tool.plan(this.toolContext(call.run, tool), input);
    } catch (e) {
      return { failed: this.fail(call, e, e instanceof AppError && e.code === 'Forbidden' ? 'forbidden' : 'plan_refused', true) };
    }
    if (!proposal.changeset)
      return {
        failed: this.fail(
          call,
          new AppError({ code: 'Internal', message: `${tool.name} proposed no changeset, so there is nothing to approve; nothing was changed.` }),
          'plan_refused',
        ),
      };
    return { proposal: proposal as Proposal & { changeset: PlannedChangeset } };
  }

  // -- policy -------------------------------------------------------------------------------

  /** Store the changeset as a proposal with the policy's decisions (on the trace, a span and to the user). */
  private policy(call: AuditedCall, tool: WriteTool, proposal: Proposal & { changeset: PlannedChangeset }): { failed: ModelBlock } | Proposed {
    const { run } = call;
    let prop: ProposalView;
    try {
      prop = proposeChangeset(this.d.db, {
        userId: run.userId,
        planned: proposal.changeset,
        source: 'assistant',
        runId: run.id,
        toolCallId: call.id,
        toolName: tool.name,
        title: tool.title,
        permission: tool.permission,
        now: new Date(this.d.scheduler.now()),
      });
    } catch (e) {
      if (e instanceof PolicyDenied) {
        this.rec.policyDecided(run, call.id, tool, null, 'deny', e.decisions);
        return { failed: this.fail(call, e, 'policy_denied', true) };
      }
      return { failed: this.fail(call, e, e instanceof AppError && e.code === 'Forbidden' ? 'forbidden' : 'plan_refused', true) };
    }
    this.rec.policyDecided(run, call.id, tool, prop.id, prop.verdict, prop.decisions);
    const masked = maskSecrets({ summary: proposal.summary, changeset: proposal.changeset }) as { summary: string; changeset: unknown };
    K.updateToolCall(this.d.db, call.id, {
      proposal_json: JSON.stringify({
        ...masked,
        changesetId: prop.id,
        contentHash: prop.contentHash,
        policy: { verdict: prop.verdict, decisions: prop.decisions },
      }),
      changeset_id: prop.id,
      updated_at: this.nowIso(),
    });
    return { proposal, prop, masked };
  }

  /** Needs an owner: not blocking for an owner who may not be here; the change waits in the app, the run goes on. */
  private waitForOwner(call: AuditedCall, tool: WriteTool, { prop, masked }: Proposed): ModelBlock {
    const { run } = call;
    // The summary names records ("… for <athlete>"): it reaches only a provider cleared for it.
    const message = needsOwnerMessage(isCleared(run.provider.clearedFor, 'clinical') ? prop : { ...prop, summary: withheldMarker('clinical') });
    this.rec.emit(run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.needsOwner,
      value: {
        toolCallId: call.id,
        tool: tool.name,
        title: tool.title,
        changesetId: prop.id,
        contentHash: prop.contentHash,
        summary: prop.summary,
        changeset: masked.changeset,
        decisions: prop.decisions,
        approverRole: prop.approverRole,
      },
    });
    this.rec.trace(run, 'decision', { toolCallId: call.id, decision: 'waiting_for_owner', changesetId: prop.id });
    this.status(call, 'proposed', { changesetId: prop.id, needsOwner: true });
    const content = JSON.stringify({ status: 'waiting_for_owner_approval', changeset_id: prop.id, message });
    this.rec.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: call.id, content, role: 'tool' });
    return { type: 'tool_result', tool_use_id: call.tu.id, content };
  }

  // -- confirm ------------------------------------------------------------------------------

  /** Show the dialog (`confirm_required`) and wait for the human; approved in the app meanwhile counts as approved. */
  private async confirm(call: AuditedCall, tool: WriteTool, { proposal, prop, masked }: Proposed): Promise<{ decision: Decision; approverId?: string }> {
    const { run } = call;
    K.updateRun(this.d.db, run.id, { status: 'waiting_confirm' });
    const expiresAt = new Date(this.d.scheduler.now() + this.d.limits.confirmTimeoutMs).toISOString();
    this.rec.emit(run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.confirmRequired,
      value: {
        toolCallId: call.id,
        tool: tool.name,
        title: tool.title,
        risk: tool.risk,
        args: call.masked,
        argsHash: call.argsHash,
        summary: proposal.summary,
        changeset: masked.changeset,
        changesetId: prop.id,
        contentHash: prop.contentHash,
        policy: { verdict: prop.verdict, decisions: prop.decisions },
        expiresAt,
      },
    });
    this.rec.trace(run, 'decision', {
      toolCallId: call.id,
      decision: 'confirm_required',
      changesetId: prop.id,
      summary: proposal.summary,
      rows: proposal.changeset.changes.length,
    });
    let { decision, approverId } = await this.approvals.wait(run, call.id, call.argsHash, prop.contentHash, prop.id);
    K.updateRun(this.d.db, run.id, { status: 'running' });
    // Approved in the app (proposals list) while the dialog waited: the run reports what happened.
    if (decision !== 'approve') {
      const settled = getProposal(this.d.db, run.userId, prop.id);
      if (settled.status === 'applied') {
        decision = 'approve';
        approverId = settled.decidedBy ?? undefined;
      }
    }
    return approverId === undefined ? { decision } : { decision, approverId };
  }

  /** Declined, timed out or stopped: recorded, and the model is told (a timeout cancels the run). */
  private notApproved(call: AuditedCall, { prop }: Proposed, decision: Exclude<Decision, 'approve'>, approverId: string | undefined): ModelBlock {
    const { run, tu } = call;
    const decidedAt = this.nowIso();
    if (decision === 'decline') {
      try {
        declineProposal(this.d.db, { userId: approverId ?? run.userId, changesetId: prop.id, now: new Date(this.d.scheduler.now()) });
      } catch (e) {
        if (!(e instanceof AppError && e.code === 'Conflict'))
          this.d.log('kinetix: could not mark a declined proposal', { runId: run.id, error: e instanceof Error ? e.name : 'unknown' });
      }
      K.updateToolCall(this.d.db, call.id, {
        status: 'rejected',
        approver_user_id: approverId ?? null,
        decided_at: decidedAt,
        result_json: JSON.stringify({ message: DECLINED_MESSAGE }),
        updated_at: decidedAt,
      });
      this.rec.trace(run, 'approval', { toolCallId: call.id, changesetId: prop.id, decision: 'declined', by: approverId });
      this.status(call, 'rejected', { changesetId: prop.id });
      this.rec.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: call.id, content: DECLINED_MESSAGE, role: 'tool' });
      return { type: 'tool_result', tool_use_id: tu.id, content: DECLINED_MESSAGE };
    }
    const message = decision === 'timeout' ? 'The user did not confirm in time. The action did not run.' : 'The run was stopped before this action ran.';
    const code = decision === 'timeout' ? 'ConfirmTimeout' : 'Stopped';
    expireProposal(this.d.db, prop.id, { code, message }, decidedAt);
    K.updateToolCall(this.d.db, call.id, { status: 'skipped', decided_at: decidedAt, error_json: JSON.stringify({ code, message }), updated_at: decidedAt });
    this.rec.trace(run, 'approval', { toolCallId: call.id, changesetId: prop.id, decision: decision === 'timeout' ? 'timed_out' : 'stopped' });
    this.status(call, 'skipped', { reason: decision });
    if (decision === 'timeout') {
      run.cancelReason = 'confirm_timeout';
      run.abort.abort(new Error(message));
    }
    return { type: 'tool_result', tool_use_id: tu.id, content: JSON.stringify({ status: decision, message }), is_error: true };
  }

  // -- apply --------------------------------------------------------------------------------

  /** Approved by the run's own user (confirm() checked who and both hashes): the permission again, then one transaction. */
  private apply(call: AuditedCall, tool: WriteTool, { proposal, prop }: Proposed, approverId: string | undefined): ModelBlock {
    const { run } = call;
    const decidedAt = this.nowIso();
    K.updateToolCall(this.d.db, call.id, { status: 'confirmed', approver_user_id: approverId ?? null, decided_at: decidedAt, updated_at: decidedAt });
    this.rec.trace(run, 'approval', { toolCallId: call.id, changesetId: prop.id, contentHash: prop.contentHash, decision: 'approved', by: approverId });
    this.status(call, 'confirmed', { changesetId: prop.id });
    // Defence in depth: the permission again, read now (a role change during the wait counts).
    const now = findUserById(this.d.db, run.userId);
    const roleRefuses = !now || !now.active || now.org_id !== run.orgId || !hasPermission(now.role, tool.permission);
    if (roleRefuses || accountStamp(this.d.db, run.userId) !== run.accountStamp) {
      // Say which: the role (or account) no longer allows it, or the account changed in another way
      // (athlete link, PIN) since the request started (issue 13 re-review minor: both read "Your role").
      const message = roleRefuses
        ? `Your role no longer allows "${tool.title}" (${tool.permission}); nothing was changed.`
        : `Your account changed since this was proposed (its athlete link or PIN), so "${tool.title}" was not applied; nothing was changed. Sign in again.`;
      expireProposal(
        this.d.db,
        prop.id,
        { code: 'Forbidden', message: roleRefuses ? 'The role no longer allows this action.' : 'The account changed since this was proposed.' },
        this.nowIso(),
      );
      return this.fail(call, new Forbidden(message), 'permission_recheck_failed');
    }
    const span = tracer.startSpan(
      'kinetix.apply',
      {
        attributes: {
          'kinetix.run_id': run.id,
          'kinetix.tool_call_id': call.id,
          'kinetix.tool': tool.name,
          'kinetix.changeset_id': prop.id,
          'kinetix.rows': proposal.changeset.changes.length,
        },
      },
      otel.setSpan(otelContext.active(), run.span),
    );
    try {
      const { changeset: applied } = approveProposal(this.d.db, {
        approverUserId: approverId ?? run.userId,
        changesetId: prop.id,
        contentHash: prop.contentHash,
        now: new Date(this.d.scheduler.now()),
      });
      const result = {
        changeset_id: applied.id,
        summary: applied.summary,
        rows_changed: applied.changes.length,
        versions: applied.versions,
        undo: { tool: 'undo_changeset', changeset_id: applied.id },
      };
      const maskedResult = maskSecrets(result);
      K.updateToolCall(this.d.db, call.id, {
        status: 'executed',
        changeset_id: applied.id,
        result_json: JSON.stringify(maskedResult),
        updated_at: this.nowIso(),
      });
      this.rec.trace(run, 'write', {
        toolCallId: call.id,
        changesetId: applied.id,
        approver: approverId ?? null,
        activityId: applied.activity_id,
        summary: proposal.summary,
        rows: proposal.changeset.changes.map((c) => ({ op: c.op, table: c.table, id: c.id })),
      });
      this.status(call, 'executed', { changesetId: applied.id, undo: { verb: 'changesets.undo', changesetId: applied.id } });
      this.rec.emit(run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: call.id, content: JSON.stringify(maskedResult), role: 'tool' });
      if (proposal.reveal)
        this.rec.publishEphemeral(run, { type: EventType.CUSTOM, name: KINETIX_EVENTS.reveal, value: { toolCallId: call.id, values: proposal.reveal } });
      return this.toModel(call, tool, maskedResult);
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof AppError ? e.code : 'error' });
      if (e instanceof AppError && e.code === 'Conflict')
        this.rec.trace(run, 'decision', { toolCallId: call.id, changesetId: prop.id, decision: 'stale', conflicts: e.conflicts ?? null });
      // The stale-proposal conflict is the harness's own wording (STALE_MESSAGE): sent as is.
      return this.fail(call, e, 'apply_failed', !(e instanceof AppError && e.message === STALE_MESSAGE));
    } finally {
      span.end();
    }
  }

  // -- record -------------------------------------------------------------------------------

  /**
   * A tool result as the model sees it: secrets masked, every field whose class the provider is not
   * cleared for (and every untagged column) withheld, inside the data envelope. The trace records
   * how many fields of which class were withheld, never their values.
   */
  private toModel(call: Call, tool: Tool, maskedResult: unknown): ModelBlock {
    const { value, withheld, byClass } = withholdForProvider(maskedResult, tool.tables, call.run.provider.clearedFor, undefined, tool.outputClasses);
    if (withheld > 0)
      this.rec.trace(call.run, 'decision', {
        toolCallId: call.id,
        tool: tool.name,
        decision: 'withheld_fields',
        count: withheld,
        byClass,
        clearedFor: call.run.provider.clearedFor,
      });
    return { type: 'tool_result', tool_use_id: call.tu.id, content: dataEnvelope(`tool:${tool.name}`, value) };
  }

  /**
   * A failed call: stored with its typed error (and the decision on the trace), told to the model.
   * `fromRecords`: the error was raised by code that reads records (a read, a plan, the policy, an
   * apply), so its text may quote stored values: the model gets it through errorForProvider.
   */
  private fail(call: AuditedCall, e: unknown, decision?: string, fromRecords = false): ModelBlock {
    const payload = toErrorPayload(e);
    K.updateToolCall(this.d.db, call.id, { status: 'failed', error_json: JSON.stringify(payload), updated_at: this.nowIso() });
    if (decision) this.rec.trace(call.run, 'decision', { toolCallId: call.id, decision, reason: payload.message });
    this.status(call, 'failed', { error: payload });
    const content = JSON.stringify({ error: payload });
    this.rec.emit(call.run, { type: EventType.TOOL_CALL_RESULT, messageId: uuidv7(), toolCallId: call.id, content, role: 'tool' });
    const toModel = fromRecords ? JSON.stringify({ error: errorForProvider(payload, call.run.provider.clearedFor) }) : content;
    return { type: 'tool_result', tool_use_id: call.tu.id, content: toModel, is_error: true };
  }

  /** The call's status to the user (AG-UI custom event) and on the run's span. */
  private status(call: AuditedCall, s: K.ToolCallStatus, extra: Record<string, unknown> = {}): void {
    call.run.span.addEvent('kinetix.tool_call', { 'kinetix.tool_call_id': call.id, 'kinetix.tool': call.row.tool_name, 'kinetix.status': s });
    this.rec.emit(call.run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.toolCall,
      value: { toolCallId: call.id, tool: call.row.tool_name, title: call.row.title, risk: call.row.risk, status: s, ...extra },
    });
  }

  /** Keyed hash of tool name and arguments: an approval must carry the one shown in the dialog. */
  private argsHash(toolName: string, args: unknown): string {
    return createHmac('sha256', this.hashKey)
      .update(canonicalJson({ tool: toolName, args }))
      .digest('hex');
  }

  private nowIso(): string {
    return new Date(this.d.scheduler.now()).toISOString();
  }
}
