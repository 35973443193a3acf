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
import type { PolicyDecision, PolicyVerdict } from '../../models/policy';
import * as K from '../data/kinetix';
import { KINETIX_EVENTS } from './events';
import { maskSecrets } from './mask';
import { ceilingCostOf, costOf, PRICE_CEILING_PER_MTOK, PRICE_SOURCE, PRICE_VERSION, type TokenCounts } from './pricing';
import type { ActiveRun, HarnessDeps } from './run';
import { tracer } from './run';
import type { Tool } from './tool';

/** Writes a run's events, trace, usage and decisions. Failures to record are logged, never thrown. */
export class RunRecorder {
  constructor(private readonly d: HarnessDeps) {}

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
  emit(run: ActiveRun, event: AGUIEvent): void {
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
  publishEphemeral(run: ActiveRun, event: AGUIEvent): void {
    this.d.bus.publish({ id: '', runId: run.id, seq: 0, event: { ...event, timestamp: this.d.scheduler.now() } as AGUIEvent, ephemeral: true });
  }

  /** Append a trace entry (masked) to the run's audit trail. */
  trace(run: ActiveRun, kind: string, data: unknown): void {
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
