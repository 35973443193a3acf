/**
 * The audit trail of an MCP client's tool calls (kinetix.md §8: every tool call is a row written
 * before it runs). An MCP call is recorded by the same recorder and the same audit step as an
 * assistant tool call (recording.ts `RunRecorder.auditToolCall`, `toolCallRow`), so it shows in
 * the same tables and the same trace view:
 *
 * - one `kinetix_conversation` per MCP session (id `mcp:<session id>`, title "MCP client session";
 *   listed nowhere in the assistant panel: it holds audit runs, not chat);
 * - one `kinetix_run` per tool call (id `mcp:<uuidv7>`, model `mcp-client`, request text
 *   "tools/call <name>"): a call is one request from outside, and a run that ends with its call
 *   never stays `running`, so a crashed MCP server leaves at most the one call in flight for the
 *   app's recovery to mark `interrupted`, never a whole session's waiting proposals;
 * - its `kinetix_tool_call` row written before the call runs: arguments with secrets masked and
 *   their `sha256:` digest, or, for an input over the bounds (bounds.ts), only its digest, size and
 *   depth; then the outcome: `executed` with the masked result (a read), `proposed` with the stored
 *   proposal's id (a write, which waits for approval in the app), or `failed` with the typed error;
 * - trace entries (`request`, `tool_call`, `policy` or `decision`, `finish`) and the run's AG-UI
 *   events, persisted like an assistant run's (nothing listens live in the MCP process).
 */
import { EventType } from '@ag-ui/core';
import { uuidv7 } from 'uuidv7';
import type { ErrorPayload } from '../../models/errors';
import type { PolicyDecision } from '../../models/policy';
import type { Db } from '../data/db';
import * as K from '../data/kinetix';
import { digestInput, measureInput } from '../services/bounds';
import { EventBus } from './bus';
import { maskSecrets } from './mask';
import { RunRecorder, refusedInputSummary, toolCallRow, type RecordedRun } from './recording';
import type { LogFn } from './registry';
import type { Tool } from './tool';

/** Who makes the call, as the run records them (the token's user; role and names once resolved). */
export interface McpCaller {
  userId: string;
  orgId: string;
  /** Copy of the user the call runs as (`kinetix_run.user_snapshot_json`). */
  snapshot: Record<string, unknown>;
  /** Names of the tools offered to this user now (`kinetix_run.tools_json`). */
  tools: readonly string[];
}

/** An input over the bounds, recorded by digest only. */
export interface McpRefusedInput {
  issue: 'size' | 'depth';
  bytes: number;
  depth: number;
  sha256: string;
}

/** A call being recorded: its run and tool-call ids. */
export interface McpAuditedCall {
  runId: string;
  toolCallId: string;
  /** Set when the input was over the bounds: the call must not run (its row already says failed). */
  refusedInput?: McpRefusedInput;
}

/** How a call ended. */
export type McpCallOutcome =
  | { status: 'executed'; result: unknown }
  | {
      status: 'proposed';
      changesetId: string;
      summary: string;
      changeset: unknown;
      contentHash: string;
      policy: { verdict: string; decisions: PolicyDecision[] };
    }
  | { status: 'failed'; error: ErrorPayload; decision?: string };

interface OpenRun extends RecordedRun {
  conversationId: string;
}

/** Records the tool calls of one MCP session (see the module doc). */
export class McpCallAudit {
  private readonly rec: RunRecorder;
  private readonly conversationId: string;
  private conversationStored = false;
  private calls = 0;
  private readonly open = new Map<string, OpenRun>();

  /**
   * @param db the app's database
   * @param opts sessionId names the conversation; now is the clock; log receives recording failures
   */
  constructor(
    private readonly db: Db,
    private readonly opts: { sessionId: string; now: () => Date; log: LogFn },
  ) {
    this.rec = new RunRecorder({ db, log: opts.log, scheduler: { now: () => opts.now().getTime() }, bus: new EventBus() });
    this.conversationId = `mcp:${opts.sessionId}`;
  }

  /**
   * Before a call runs: its run row and its audit row (arguments masked, `sha256:` digest). An
   * input over the size or depth bounds is measured first and recorded by digest, size and depth
   * only, with status `failed`; `refusedInput` then says why, and the caller must not run it.
   * @throws the database's error when the rows cannot be written (the call then does not run)
   */
  begin(caller: McpCaller, name: string, args: unknown, tool: Tool | undefined): McpAuditedCall {
    const at = this.opts.now().toISOString();
    const measured = measureInput(args ?? {});
    const refusedInput: McpRefusedInput | undefined = measured.ok
      ? undefined
      : { issue: measured.reason ?? 'size', bytes: measured.bytes, depth: measured.depth, sha256: digestInput(args) };
    const run: OpenRun = { id: `mcp:${uuidv7()}`, conversationId: this.conversationId, seq: 0, traceSeq: 0 };
    const toolCallId = uuidv7();
    const toolName = name.slice(0, 100);
    K.inTransaction(this.db, () => {
      if (!this.conversationStored) {
        if (!K.getOwnConversation(this.db, caller.orgId, caller.userId, this.conversationId))
          K.insertConversation(this.db, {
            id: this.conversationId,
            org_id: caller.orgId,
            user_id: caller.userId,
            title: 'MCP client session',
            created_at: at,
            updated_at: at,
          });
        this.conversationStored = true;
      } else K.touchConversation(this.db, this.conversationId, at);
      K.insertRun(this.db, {
        id: run.id,
        conversation_id: this.conversationId,
        org_id: caller.orgId,
        user_id: caller.userId,
        status: 'running',
        model: 'mcp-client',
        page: null,
        host_pid: process.pid,
        user_snapshot_json: JSON.stringify(caller.snapshot),
        tools_json: JSON.stringify(caller.tools),
        request_text: `tools/call ${toolName}`,
        iterations: 1,
        cost_usd: 0,
        error_code: null,
        error_message: null,
        started_at: at,
        finished_at: null,
        // An MCP call has no replayed history (its results go out under the org's \`mcp\` clearance, session.ts).
        cleared_for_json: null,
      });
      this.rec.trace(run, 'request', { source: 'mcp', session: this.opts.sessionId, tool: toolName });
      this.rec.emit(run, { type: EventType.RUN_STARTED, threadId: this.conversationId, runId: run.id });
      const base = { id: toolCallId, run: { ...run, orgId: caller.orgId, userId: caller.userId }, toolUseId: null, iteration: ++this.calls, name, tool, at };
      if (refusedInput) {
        const summary = refusedInputSummary(refusedInput);
        this.rec.auditToolCall(run, toolCallRow({ ...base, args: summary, argsHash: `sha256:${refusedInput.sha256}` }), {
          kind: 'decision',
          data: { toolCallId, tool: toolName, decision: 'input_out_of_bounds', ...summary },
        });
      } else {
        const masked = maskSecrets(args ?? {});
        const row = toolCallRow({ ...base, args: masked, argsHash: `sha256:${digestInput(args ?? {})}` });
        this.rec.auditToolCall(run, row, { kind: 'tool_call', data: { toolCallId, tool: row.tool_name, args: masked, risk: row.risk } });
      }
    });
    this.open.set(run.id, run);
    return refusedInput ? { runId: run.id, toolCallId, refusedInput } : { runId: run.id, toolCallId };
  }

  /** The call's outcome on its audit row, its trace and its run (then ended). Failures to record are logged, never thrown. */
  finish(call: McpAuditedCall, outcome: McpCallOutcome): void {
    const run = this.open.get(call.runId);
    if (!run) return;
    this.open.delete(call.runId);
    const at = this.opts.now().toISOString();
    try {
      K.inTransaction(this.db, () => {
        if (outcome.status === 'executed') {
          const masked = maskSecrets(outcome.result ?? null);
          K.updateToolCall(this.db, call.toolCallId, { status: 'executed', result_json: JSON.stringify(masked), updated_at: at });
          this.rec.emit(run, {
            type: EventType.TOOL_CALL_RESULT,
            messageId: uuidv7(),
            toolCallId: call.toolCallId,
            content: JSON.stringify(masked),
            role: 'tool',
          });
        } else if (outcome.status === 'proposed') {
          const masked = maskSecrets({ summary: outcome.summary, changeset: outcome.changeset });
          K.updateToolCall(this.db, call.toolCallId, {
            proposal_json: JSON.stringify({ ...masked, changesetId: outcome.changesetId, contentHash: outcome.contentHash, policy: outcome.policy }),
            changeset_id: outcome.changesetId,
            updated_at: at,
          });
          this.rec.trace(run, 'policy', { toolCallId: call.toolCallId, changesetId: outcome.changesetId, ...outcome.policy });
          this.rec.trace(run, 'decision', { toolCallId: call.toolCallId, decision: 'waiting_for_approval_in_app', changesetId: outcome.changesetId });
        } else {
          K.updateToolCall(this.db, call.toolCallId, { status: 'failed', error_json: JSON.stringify(outcome.error), updated_at: at });
          this.rec.trace(run, 'decision', { toolCallId: call.toolCallId, decision: outcome.decision ?? 'failed', reason: outcome.error.message });
          this.rec.emit(run, {
            type: EventType.TOOL_CALL_RESULT,
            messageId: uuidv7(),
            toolCallId: call.toolCallId,
            content: JSON.stringify({ error: outcome.error }),
            role: 'tool',
          });
        }
        const failed = outcome.status === 'failed';
        K.updateRun(this.db, run.id, {
          status: failed ? 'failed' : 'completed',
          finished_at: at,
          ...(failed ? { error_code: outcome.error.code, error_message: outcome.error.message } : {}),
        });
        this.rec.trace(run, 'finish', { status: failed ? 'failed' : 'completed', toolCall: outcome.status });
        if (failed) this.rec.emit(run, { type: EventType.RUN_ERROR, message: outcome.error.message, code: outcome.error.code });
        else this.rec.emit(run, { type: EventType.RUN_FINISHED, threadId: run.conversationId, runId: run.id, outcome: { type: 'success' } });
      });
    } catch (e) {
      this.opts.log('mcp: could not record the outcome of a tool call', { runId: run.id, error: e instanceof Error ? e.name : 'unknown' });
    }
  }
}
