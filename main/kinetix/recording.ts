/**
 * Recording (kinetix.md §5, §8): everything a run leaves behind besides the business writes —
 * AG-UI events (persisted with a sequence number, then published to views), the run's trace
 * entries, usage rows with their cost, and the policy and gate decisions on the trace, on a span
 * and in the user's event stream. Every persisted event and trace entry passes the one redactor.
 */
import type { AGUIEvent } from '@ag-ui/core';
import { EventType } from '@ag-ui/core';
import { context as otelContext, SpanStatusCode, trace as otel } from '@opentelemetry/api';
import { uuidv7 } from 'uuidv7';
import type { ErrorPayload } from '../../models/errors';
import type { PolicyDecision, PolicyVerdict } from '../../models/policy';
import * as K from '../data/kinetix';
import type { EventBus } from './bus';
import { KINETIX_EVENTS } from './events';
import { maskSecrets } from './mask';
import { ceilingCostOf, costOf, PRICE_CEILING_PER_MTOK, PRICE_SOURCE, PRICE_VERSION, type TokenCounts } from './pricing';
import type { ActiveRun, HarnessDeps } from './run';
import { tracer } from './run';
import type { Scheduler } from './scheduler';
import type { Tool } from './tool';

/** What recording an event or a trace entry needs of a run: its id and its two sequence counters. */
export type RecordedRun = Pick<ActiveRun, 'id' | 'seq' | 'traceSeq'>;

/** What the recorder needs: the database, a clock, a log and the live-view bus (the harness passes its {@link HarnessDeps}). */
export type RecorderDeps = Pick<HarnessDeps, 'db' | 'log'> & { scheduler: Pick<Scheduler, 'now'>; bus: Pick<EventBus, 'publish'> };

/** The run a tool call belongs to, as its audit row names it. */
export interface AuditRunRef {
  id: string;
  conversationId: string;
  orgId: string;
  userId: string;
}

/** What the audit row of one tool call says when it is written, before the call runs (kinetix.md §8). */
export interface ToolCallStart {
  /** The tool-call id (uuidv7). */
  id: string;
  run: AuditRunRef;
  /** The caller's id for the call (the model's tool_use id), or null (an MCP client's call). */
  toolUseId: string | null;
  /** Model iteration of the call (the harness), or the call's number in its session (MCP). */
  iteration: number;
  /** The tool name as the caller sent it (cut to 100 characters). */
  name: string;
  /** The tool, when the name is one of the run's tools. */
  tool: Pick<Tool, 'title' | 'risk' | 'kind'> | undefined;
  /** The arguments with secrets masked, or a refused input's digest summary ({@link refusedInputSummary}); never the raw input. */
  args: unknown;
  /** The arguments' hash (`sha256:<hex>` digest, or the harness's keyed hash that an approval must carry). */
  argsHash: string;
  /** Set when the call is refused before anything runs (status `failed` from the start). */
  refused?: ErrorPayload;
  /** ISO-8601 UTC. */
  at: string;
}

/** A refused tool input, recorded by identity only: its digest, size and depth, never its content. */
export function refusedInputSummary(issue: { issue: string; bytes: number; depth: number; sha256: string }): Record<string, unknown> {
  return { refused_input: issue.issue, bytes: issue.bytes, depth: issue.depth, sha256: issue.sha256 };
}

/** The `kinetix_tool_call` row of a call that is about to run (status `proposed`) or was refused before running (`failed`). */
export function toolCallRow(s: ToolCallStart): K.ToolCallRow {
  const name = s.name.slice(0, 100);
  return {
    id: s.id,
    run_id: s.run.id,
    conversation_id: s.run.conversationId,
    org_id: s.run.orgId,
    user_id: s.run.userId,
    model_tool_use_id: s.toolUseId === null ? null : s.toolUseId.slice(0, 200),
    iteration: s.iteration,
    tool_name: name,
    title: s.tool?.title ?? name,
    risk: s.tool?.risk ?? null,
    args_json: JSON.stringify(s.args ?? {}),
    args_hash: s.argsHash,
    requires_confirm: s.tool?.kind === 'write' ? 1 : 0,
    status: s.refused ? 'failed' : 'proposed',
    proposal_json: null,
    changeset_id: null,
    result_json: null,
    error_json: s.refused ? JSON.stringify(s.refused) : null,
    approver_user_id: null,
    decided_at: null,
    created_at: s.at,
    updated_at: s.at,
  };
}

/** Writes a run's events, trace, usage and decisions. Failures to record are logged, never thrown, except the audit row of a tool call. */
export class RunRecorder {
  constructor(private readonly d: RecorderDeps) {}

  /**
   * The audit step of every tool call (kinetix.md §8), the assistant's and an MCP client's alike:
   * the AG-UI start/args/end events, then the `kinetix_tool_call` row, written before anything
   * runs, then its trace entry (`tool_call`, or the refusal's `decision`).
   * @throws the database's error when the row cannot be written: a call that cannot be audited does not run
   */
  auditToolCall(run: RecordedRun, row: K.ToolCallRow, trace: { kind: string; data: unknown }): void {
    this.emit(run, { type: EventType.TOOL_CALL_START, toolCallId: row.id, toolCallName: row.tool_name });
    this.emit(run, { type: EventType.TOOL_CALL_ARGS, toolCallId: row.id, delta: row.args_json });
    this.emit(run, { type: EventType.TOOL_CALL_END, toolCallId: row.id });
    K.insertToolCall(this.d.db, row);
    this.trace(run, trace.kind, trace.data);
  }

  /** One usage row per model response (`partial` when cut short), its cost (unknown price: the ceiling), and a usage event. */
  recordUsage(run: ActiveRun, requestIndex: number, responseId: string | null, model: string, usage: TokenCounts, partial: boolean): void {
    const at = new Date(this.d.scheduler.now());
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
      const inserted = K.insertUsage(this.d.db, {
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
        K.updateRun(this.d.db, run.id, { cost_usd: run.costUsd });
      }
    } catch (e) {
      this.d.log('kinetix: could not record usage', { runId: run.id, requestIndex, error: e instanceof Error ? e.name : 'unknown' });
    }
    if (unknownPrice) this.d.log('kinetix: no price for model; usage counted at the price ceiling', { model });
    this.emit(run, {
      type: EventType.CUSTOM,
      name: KINETIX_EVENTS.usage,
      value: { requestIndex, model, ...usage, costUsd, partial, ...(unknownPrice ? { priceUnknown: true, countedAtCeiling: true } : {}) },
    });
  }

  // ---------------------------------------------------------------------------------------

  /** Put a policy evaluation on the trace, on a span and in the user's event stream. */
  policyDecided(run: ActiveRun, toolCallId: string, tool: Tool, changesetId: string | null, verdict: PolicyVerdict, decisions: PolicyDecision[]): void {
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

  /** Record that the untrusted-content gate closed: trace, span event, event to the user. */
  gateNarrowed(run: ActiveRun, source: string, dropped: string[], at: 'run_start' | 'untrusted_output'): void {
    this.trace(run, 'decision', { decision: 'untrusted_content_gate', at, source, dropped });
    run.span.addEvent('kinetix.untrusted_gate', { 'kinetix.gate.at': at, 'kinetix.gate.dropped': dropped.length });
    this.emit(run, { type: EventType.CUSTOM, name: KINETIX_EVENTS.toolsNarrowed, value: { reason: 'untrusted_content', at, source, dropped } });
  }

  /** Persist an event with the run's next sequence number (redacted), then publish it to live views. */
  emit(run: RecordedRun, event: AGUIEvent): void {
    const seq = ++run.seq;
    // Every persisted and published event passes the one redactor (secret-named fields and credential-shaped text).
    const stamped = maskSecrets({ ...event, timestamp: this.d.scheduler.now() }) as AGUIEvent;
    try {
      K.insertRunEvent(this.d.db, {
        run_id: run.id,
        seq,
        type: event.type,
        event_json: JSON.stringify(stamped),
        created_at: new Date(this.d.scheduler.now()).toISOString(),
      });
    } catch (e) {
      this.d.log('kinetix: could not persist a run event', { runId: run.id, seq, error: e instanceof Error ? e.name : 'unknown' });
    }
    this.d.bus.publish({ id: String(seq), runId: run.id, seq, event: stamped });
  }

  /** Publish a live-only event (a one-time reveal): never persisted. */
  publishEphemeral(run: RecordedRun, event: AGUIEvent): void {
    this.d.bus.publish({ id: '', runId: run.id, seq: 0, event: { ...event, timestamp: this.d.scheduler.now() } as AGUIEvent, ephemeral: true });
  }

  /** Append a trace entry (masked) to the run's audit trail. */
  trace(run: RecordedRun, kind: string, data: unknown): void {
    try {
      K.insertTrace(this.d.db, {
        run_id: run.id,
        seq: ++run.traceSeq,
        kind,
        data_json: JSON.stringify(maskSecrets(data ?? null)),
        created_at: new Date(this.d.scheduler.now()).toISOString(),
      });
    } catch (e) {
      this.d.log('kinetix: could not write a trace entry', { runId: run.id, kind, error: e instanceof Error ? e.name : 'unknown' });
    }
  }
}
