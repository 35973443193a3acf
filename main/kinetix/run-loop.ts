/**
 * The run loop (kinetix.md §4, §6–8): one provider call per iteration under its own deadline,
 * the stop reason honoured, the iteration and budget limits, the tool calls of a response
 * dispatched one by one through the tool-call pipeline (tool-call.ts), and the run's ending
 * (stored answer, AG-UI RUN_FINISHED / RUN_ERROR, lease released).
 */
import { EventType } from '@ag-ui/core';
import { context as otelContext, SpanStatusCode, trace as otel } from '@opentelemetry/api';
import { uuidv7 } from 'uuidv7';
import type { ErrorPayload } from '../../models/errors';
import { AppError, Forbidden, ValidationError, toErrorPayload } from '../../models/errors';
import { accountStamp, findOrganization, findUserById } from '../data/identity';
import * as K from '../data/kinetix';
import { ProviderError } from './errors';
import { BUDGET_STOP_MESSAGE } from './limits';
import { maskSecrets, redactText, TextRedactor } from './mask';
import { PRICE_CEILING_PER_MTOK } from './pricing';
import { HARD_RULES, identityBlock } from './prompt';
import { pageContextFor, withholdForProvider } from './classification';
import type { ModelBlock, ModelResponse, ToolInputIssue } from './provider';
import type { RunRecorder } from './recording';
import type { ActiveRun, HarnessDeps } from './run';
import { ACCOUNT_CHANGED, tracer } from './run';
import { toolInputSchema } from './tool';
import type { ToolCallPipeline } from './tool-call';

/** Tool calls dispatched per model response (issue 9 §4); the 12-iteration limit does not bound them. */
export const MAX_TOOL_CALLS_PER_RESPONSE = 16;

/** Stop reasons after which the response is complete and usable as is. */
const NORMAL_STOP_REASONS: ReadonlySet<string> = new Set(['end_turn', 'tool_use', 'stop_sequence']);

/** Said to the user after a text answer that reached the output limit (`max_tokens`); stored with the answer, so the model sees it on replay. */
export const TRUNCATED_NOTICE = '[This answer was cut off: it reached the output limit. Ask me to continue, or narrow the question.]';

/** The outcome of a response the model ended with `refusal`. */
export const REFUSAL_MESSAGE =
  'The model declined to answer this request (stop reason: refusal). Nothing was changed. Rephrase the request or ask something else.';

/** Drives runs from their first model call to their end. */
export class RunLoop {
  constructor(
    private readonly d: HarnessDeps,
    private readonly rec: RunRecorder,
    private readonly pipeline: ToolCallPipeline,
  ) {}

  /** The run loop: model call, stop-reason handling, limits, tool calls, until the run ends. Never throws. */
  async loop(run: ActiveRun): Promise<void> {
    try {
      for (let i = 0; ; i++) {
        if (run.abort.signal.aborted) return this.finishCancelled(run);
        // Fail closed if the user was deactivated since the last step.
        const u = findUserById(this.d.db, run.userId);
        if (!u || !u.active || u.org_id !== run.orgId) throw new Forbidden('Your account is no longer active; the request was stopped.');
        // ... or changed at all since the run started (role, athlete link, PIN): the run's reach was judged on what it was.
        if (accountStamp(this.d.db, run.userId) !== run.accountStamp) throw new Forbidden(ACCOUNT_CHANGED);

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
          this.rec.trace(run, 'limit', { limit: 'stop_reason', stopReason: stop, unrunToolCalls: toolUses.map((x) => x.tu.name) });
          return this.finishWithMessage(run, text, 'failed', { code: 'Internal', message: REFUSAL_MESSAGE, runCode: 'Refusal' });
        }
        if (stop !== 'max_tokens' && (stop === null || !NORMAL_STOP_REASONS.has(stop))) {
          const what =
            stop === 'pause_turn'
              ? 'The model paused its turn (stop reason: pause_turn) before finishing, so this request ended here. Ask again to continue.'
              : `The model ended its reply with an unexpected stop reason (${stop === null ? 'none' : JSON.stringify(stop.slice(0, 40))}), so this request ended here and nothing more ran. Ask again.`;
          this.rec.trace(run, 'limit', { limit: 'stop_reason', stopReason: stop?.slice(0, 40) ?? null, unrunToolCalls: toolUses.map((x) => x.tu.name) });
          return this.finishWithMessage(run, text, 'failed', {
            code: 'Internal',
            message: what,
            runCode: stop === 'pause_turn' ? 'PauseTurn' : 'UnknownStopReason',
          });
        }
        if (toolUses.length === 0) {
          if (stop === 'max_tokens') {
            this.rec.trace(run, 'limit', { limit: 'stop_reason', stopReason: stop, truncated: true });
            return this.finishTruncated(run, text);
          }
          return this.finishWithMessage(run, text, 'completed');
        }
        if (i + 1 >= this.d.limits.maxIterations) {
          // The last allowed call still asks for tools: stop before running them (their results could never be used).
          const msg = `I stopped after ${this.d.limits.maxIterations} steps without finishing. Tell me which part to continue with, or narrow the request.`;
          this.rec.trace(run, 'limit', { limit: 'iterations', max: this.d.limits.maxIterations, unrunToolCalls: toolUses.map((x) => x.tu.name) });
          return this.finishWithMessage(run, text ? `${text}\n\n${msg}` : msg, 'failed', { code: 'Internal', message: msg, runCode: 'IterationLimit' });
        }

        // Second budget gate: more tools mean at least one more paid call.
        if (run.costUsd >= run.remainingUsd) {
          const why = run.unpriced
            ? `${BUDGET_STOP_MESSAGE} The price of the model "${run.unpriced.slice(0, 80)}" is unknown, so its responses were counted at the price ceiling ($${PRICE_CEILING_PER_MTOK.input} input / $${PRICE_CEILING_PER_MTOK.output} output per million tokens).`
            : BUDGET_STOP_MESSAGE;
          this.rec.trace(run, 'limit', { limit: 'budget', runCostUsd: run.costUsd, remainingUsd: run.remainingUsd, unpricedModel: run.unpriced });
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
          this.rec.trace(run, 'limit', { limit: 'tool_calls_per_response', max: MAX_TOOL_CALLS_PER_RESPONSE, sent: toolUses.length });
        const byBlock = new Map(calls.map((c) => [c.original, c.tu]));
        run.messages.push({
          role: 'assistant',
          content: resp.content.filter((b) => b.type !== 'text' || b.text.trim() !== '').map((b) => (b.type === 'tool_use' ? (byBlock.get(b) ?? b) : b)),
        });
        const results: ModelBlock[] = [];
        for (const c of calls) {
          if (run.abort.signal.aborted) break;
          results.push(await this.pipeline.run(run, c.tu, i, { issue: c.issue, refusal: c.refusal, truncated: stop === 'max_tokens' }));
        }
        if (run.abort.signal.aborted) return this.finishCancelled(run);
        run.messages.push({ role: 'user', content: results });
      }
    } catch (e) {
      if (run.abort.signal.aborted && run.cancelReason) return this.finishCancelled(run);
      const payload = toErrorPayload(e);
      if (!(e instanceof AppError))
        this.d.log('kinetix: run failed with an unexpected error', { runId: run.id, error: e instanceof Error ? e.name : 'unknown' });
      this.rec.trace(run, 'error', payload);
      return this.finish(run, 'failed', '', payload);
    }
  }

  /** One provider call under its own 90-second deadline; records usage even when cut short. */
  private async callModel(run: ActiveRun, requestIndex: number, u: NonNullable<ReturnType<typeof findUserById>>): Promise<ModelResponse> {
    const org = findOrganization(this.d.db, run.orgId);
    // The signed-in user's name and e-mail are `personal` (app_user's tags); the page is sent only as an app route.
    const who = withholdForProvider({ display_name: u.display_name, email: u.email }, ['app_user'], run.provider.clearedFor).value;
    const system = [
      HARD_RULES,
      identityBlock({
        displayName: who.display_name,
        email: who.email,
        role: u.role,
        orgName: org?.name ?? '',
        page: pageContextFor(run.page),
        now: new Date(this.d.scheduler.now()).toISOString(),
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
    const seconds = Math.round(this.d.limits.providerTimeoutMs / 1000);
    const timer = this.d.scheduler.setTimeout(
      () =>
        ac.abort(
          new ProviderError(
            `The model did not answer within ${seconds} s, so this request was stopped. Try again; if it keeps happening, check the network or ANTHROPIC_BASE_URL.`,
          ),
        ),
      this.d.limits.providerTimeoutMs,
    );
    const stepName = `model_call_${requestIndex + 1}`;
    const span = tracer.startSpan(
      'kinetix.model_call',
      { attributes: { 'kinetix.run_id': run.id, 'kinetix.request_index': requestIndex, 'gen_ai.system': run.provider.id, 'gen_ai.request.model': run.model } },
      otel.setSpan(otelContext.active(), run.span),
    );
    this.rec.emit(run, { type: EventType.STEP_STARTED, stepName });
    const msgIds = new Map<number, string>();
    const redactors = new Map<number, TextRedactor>();
    const ended = new Set<number>();
    // Exactly one TEXT_MESSAGE_END per message, also when the response is cut off or fails.
    const endText = (index: number) => {
      const id = msgIds.get(index);
      if (!id || ended.has(index)) return;
      ended.add(index);
      const rest = redactors.get(index)?.flush() ?? '';
      if (rest) this.rec.emit(run, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: rest });
      this.rec.emit(run, { type: EventType.TEXT_MESSAGE_END, messageId: id });
    };
    run.partial = null;
    try {
      const resp = await run.provider.stream(
        { model: run.model, system, messages: run.messages, tools, maxTokens: this.d.limits.maxTokens },
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
            this.rec.emit(run, { type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' });
          },
          onTextDelta: (index, delta) => {
            const id = msgIds.get(index);
            // Model text is redacted as it streams: what is shown is final up to the last complete word.
            const safe = id && delta ? (redactors.get(index)?.push(delta) ?? '') : '';
            if (id && safe) this.rec.emit(run, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: safe });
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
      this.rec.recordUsage(run, requestIndex, resp.id, resp.model, resp.usage, false);
      this.rec.trace(run, 'model_step', {
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
      if (p) this.rec.recordUsage(run, p.requestIndex, p.id, p.model, p.usage, true);
      run.partial = null;
      for (const index of msgIds.keys()) endText(index);
      this.rec.trace(run, 'model_step', {
        requestIndex,
        failed: true,
        error: e instanceof AppError ? e.message : 'provider error',
        partialUsage: p?.usage ?? null,
      });
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof AppError ? e.code : 'provider error' });
      throw e instanceof AppError ? e : new ProviderError('The model provider call failed.');
    } finally {
      this.d.scheduler.clearTimeout(timer);
      span.end();
      run.abort.signal.removeEventListener('abort', onRunAbort);
      this.rec.emit(run, { type: EventType.STEP_FINISHED, stepName });
    }
  }

  private finishWithMessage(
    run: ActiveRun,
    text: string,
    status: K.RunStatus,
    error?: ErrorPayload & { runCode?: string },
    extra?: Record<string, unknown>,
  ): void {
    if (text.trim())
      K.insertMessage(this.d.db, {
        id: uuidv7(),
        conversation_id: run.conversationId,
        run_id: run.id,
        org_id: run.orgId,
        role: 'assistant',
        content: text,
        created_at: new Date(this.d.scheduler.now()).toISOString(),
      });
    if (error) {
      // The stop message is said to the user as an assistant message, then the run ends with an error.
      const id = uuidv7();
      this.rec.emit(run, { type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' });
      this.rec.emit(run, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: error.message });
      this.rec.emit(run, { type: EventType.TEXT_MESSAGE_END, messageId: id });
    }
    this.finish(run, status, text, error, extra);
  }

  /** A text answer that reached `max_tokens`: kept, marked as cut off to the user, stored with the notice. */
  private finishTruncated(run: ActiveRun, text: string): void {
    const id = uuidv7();
    this.rec.emit(run, { type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' });
    this.rec.emit(run, { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: TRUNCATED_NOTICE });
    this.rec.emit(run, { type: EventType.TEXT_MESSAGE_END, messageId: id });
    this.finishWithMessage(run, text.trim() ? `${text}\n\n${TRUNCATED_NOTICE}` : TRUNCATED_NOTICE, 'completed', undefined, {
      truncated: true,
      stopReason: 'max_tokens',
    });
  }

  /** End a stopped or timed-out run as `cancelled`. */
  finishCancelled(run: ActiveRun): void {
    const reason =
      run.cancelReason === 'confirm_timeout' ? 'The confirmation was not answered within 10 minutes, so the request was cancelled.' : 'Stopped by the user.';
    this.finish(run, 'cancelled', '', { code: 'Internal', message: reason, runCode: run.cancelReason === 'confirm_timeout' ? 'ConfirmTimeout' : 'Stopped' });
  }

  /** End a run once: its row, trace, AG-UI end event and span; the run leaves the active set and releases its lease. */
  finish(run: ActiveRun, status: K.RunStatus, text: string, error?: ErrorPayload & { runCode?: string }, extra?: Record<string, unknown>): void {
    if (!this.d.active.has(run.id)) return;
    const nowIso = new Date(this.d.scheduler.now()).toISOString();
    try {
      K.updateRun(this.d.db, run.id, {
        status,
        finished_at: nowIso,
        iterations: run.iterations,
        cost_usd: run.costUsd,
        error_code: error ? (error.runCode ?? error.code) : null,
        error_message: error ? error.message : null,
      });
      K.touchConversation(this.d.db, run.conversationId, nowIso);
    } catch (e) {
      this.d.log('kinetix: could not record the end of a run', { runId: run.id, error: e instanceof Error ? e.name : 'unknown' });
    }
    this.rec.trace(run, 'finish', { status, iterations: run.iterations, costUsd: run.costUsd, error: error ?? null });
    if (status === 'completed')
      this.rec.emit(run, {
        type: EventType.RUN_FINISHED,
        threadId: run.conversationId,
        runId: run.id,
        outcome: { type: 'success' },
        result: { text, ...extra },
      });
    else if (status === 'cancelled')
      this.rec.emit(run, {
        type: EventType.RUN_FINISHED,
        threadId: run.conversationId,
        runId: run.id,
        outcome: { type: 'cancelled' },
        result: { reason: error?.message ?? null },
      });
    else this.rec.emit(run, { type: EventType.RUN_ERROR, message: error?.message ?? 'The request failed.', code: error?.runCode ?? error?.code ?? 'Internal' });
    run.span.setAttributes({ 'kinetix.status': status, 'kinetix.iterations': run.iterations, 'kinetix.cost_usd': run.costUsd });
    if (status !== 'completed') run.span.setStatus({ code: SpanStatusCode.ERROR, message: error?.runCode ?? error?.code ?? status });
    run.span.end();
    this.d.active.delete(run.id);
    this.d.bus.endRun(run.id);
    run.release();
    run.resolveDone({ runId: run.id, conversationId: run.conversationId, status, text, ...(error ? { error } : {}) });
  }
}
