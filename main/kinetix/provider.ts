/**
 * The model provider behind one small interface (kinetix.md §9), so tests drive the real
 * `@anthropic-ai/sdk` against a scripted Messages API server and an adversarial script can try
 * what a compromised model would. Anthropic is the only implementation: streaming Messages API,
 * `ANTHROPIC_BASE_URL` honoured, errors re-worded without any key material.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ProviderClearance } from './classification';
import { DEFAULT_CLEARANCE } from './classification';
import { ProviderError } from './errors';
import { digestText, measureJsonText, type InputMeasure } from '../services/bounds';
import { scrubText } from './mask';
import type { TokenCounts } from './pricing';
import type { JsonSchemaObject } from './tool';

/** A content block of the Messages API (text, a tool call by the model, a tool result by us). */
export type ModelBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

/** One message of the conversation sent to the model. */
export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string | ModelBlock[];
}

/** A tool as the model sees it (JSON Schema generated from the zod input). */
export interface ModelToolSpec {
  name: string;
  description: string;
  input_schema: JsonSchemaObject;
}

/** One provider call. `maxTokens` bounds the output. */
export interface ModelRequest {
  model: string;
  /** System blocks, in order (hard rules, identity and page, digest). */
  system: string[];
  messages: ModelMessage[];
  tools: ModelToolSpec[];
  maxTokens: number;
}

/**
 * Why a tool_use block's input was not usable as sent: `incomplete` (its JSON was cut off, e.g.
 * at `max_tokens`, or does not parse), `size` / `depth` (over the bounds of bounds.ts; the JSON
 * was never parsed). `sha256` is the digest of the raw JSON text; the text itself is dropped.
 */
export interface ToolInputIssue {
  issue: 'incomplete' | 'size' | 'depth';
  bytes: number;
  depth: number;
  sha256: string;
}

/** One finished model response. `model` is the name the provider reported for this response. */
export interface ModelResponse {
  id: string | null;
  model: string;
  /** Text and tool_use blocks; a tool_use with an entry in `inputIssues` carries `input: {}`. */
  content: Extract<ModelBlock, { type: 'text' | 'tool_use' }>[];
  stopReason: string | null;
  usage: TokenCounts;
  /** Tool inputs that cannot be used, by position in `content`. */
  inputIssues?: Record<number, ToolInputIssue>;
}

/** Streaming callbacks, in the order the provider produces them. */
export interface StreamHandlers {
  /** First frame: the response's id, model and the usage known so far (input tokens). */
  onStart?(info: { id: string | null; model: string; usage: TokenCounts }): void;
  onTextStart?(index: number): void;
  onTextDelta?(index: number, delta: string): void;
  onTextEnd?(index: number): void;
  onToolUse?(block: { index: number; id: string; name: string; input: unknown }): void;
  /** Usage grew (output tokens). */
  onUsage?(usage: TokenCounts): void;
}

/** The one small interface every model provider implements. */
export interface ModelProvider {
  /** Provider id used for pricing (`anthropic`). */
  readonly id: string;
  /** Data classes this provider is cleared for, in class order (models/classification.ts; default `['internal']`). */
  readonly clearedFor: ProviderClearance;
  /**
   * Stream one response. Aborting `signal` ends it with a ProviderError.
   * @throws ProviderError (HTTP error, network, abort)
   */
  stream(req: ModelRequest, handlers: StreamHandlers, signal: AbortSignal): Promise<ModelResponse>;
}

/** Options of {@link AnthropicProvider}. The key is held in memory only and scrubbed from every error. */
export interface AnthropicOptions {
  apiKey: string;
  /** Defaults to `ANTHROPIC_BASE_URL`, then the public API. */
  baseURL?: string;
  /** SDK retries on 429/5xx inside the 90-second per-call budget. @default 2 */
  maxRetries?: number;
  /** @default DEFAULT_CLEARANCE (`['internal']`) */
  clearedFor?: ProviderClearance;
}

function zeroUsage(): TokenCounts {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

/** Anthropic Messages API, streaming, through the official SDK. */
export class AnthropicProvider implements ModelProvider {
  readonly id = 'anthropic';
  readonly clearedFor: ProviderClearance;
  private readonly client: Anthropic;
  private readonly key: string;

  constructor(opts: AnthropicOptions) {
    this.key = opts.apiKey;
    this.clearedFor = opts.clearedFor ?? DEFAULT_CLEARANCE;
    const baseURL = opts.baseURL ?? process.env.ANTHROPIC_BASE_URL ?? undefined;
    this.client = new Anthropic({
      apiKey: opts.apiKey,
      ...(baseURL ? { baseURL } : {}),
      maxRetries: opts.maxRetries ?? 2,
      // The harness enforces the per-call deadline itself; this is only a backstop.
      timeout: 10 * 60_000,
      logLevel: 'off',
    });
  }

  async stream(req: ModelRequest, h: StreamHandlers, signal: AbortSignal): Promise<ModelResponse> {
    const usage = zeroUsage();
    let id: string | null = null;
    let model = req.model;
    let stopReason: string | null = null;
    let stopped = false;
    const blocks = new Map<number, { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; json: string; startJson: string }>();
    try {
      const stream = await this.client.messages.create(
        {
          model: req.model,
          max_tokens: req.maxTokens,
          system: req.system.map((text) => ({ type: 'text' as const, text })),
          messages: req.messages as Anthropic.MessageParam[],
          ...(req.tools.length ? { tools: req.tools as unknown as Anthropic.Tool[] } : {}),
          stream: true,
        },
        { signal },
      );
      for await (const ev of stream) {
        switch (ev.type) {
          case 'message_start': {
            id = ev.message.id ?? null;
            model = ev.message.model || model;
            const u = ev.message.usage;
            usage.inputTokens = u?.input_tokens ?? 0;
            usage.outputTokens = u?.output_tokens ?? 0;
            usage.cacheReadTokens = u?.cache_read_input_tokens ?? 0;
            usage.cacheWriteTokens = u?.cache_creation_input_tokens ?? 0;
            h.onStart?.({ id, model, usage: { ...usage } });
            break;
          }
          case 'content_block_start': {
            const b = ev.content_block;
            if (b.type === 'text') {
              blocks.set(ev.index, { type: 'text', text: b.text ?? '' });
              h.onTextStart?.(ev.index);
              if (b.text) h.onTextDelta?.(ev.index, b.text);
            } else if (b.type === 'tool_use') {
              // Some gateways send the whole input here and no deltas: keep it.
              const startInput = b.input && typeof b.input === 'object' && Object.keys(b.input).length > 0 ? JSON.stringify(b.input) : '';
              blocks.set(ev.index, { type: 'tool_use', id: b.id, name: b.name, json: '', startJson: startInput });
            }
            break;
          }
          case 'content_block_delta': {
            const b = blocks.get(ev.index);
            if (ev.delta.type === 'text_delta' && b?.type === 'text') {
              b.text += ev.delta.text;
              h.onTextDelta?.(ev.index, ev.delta.text);
            } else if (ev.delta.type === 'input_json_delta' && b?.type === 'tool_use') {
              b.json += ev.delta.partial_json;
            }
            break;
          }
          case 'content_block_stop': {
            const b = blocks.get(ev.index);
            if (b?.type === 'text') h.onTextEnd?.(ev.index);
            else if (b?.type === 'tool_use') h.onToolUse?.({ index: ev.index, id: b.id, name: b.name, input: readToolInput(b.json || b.startJson).input });
            break;
          }
          case 'message_delta': {
            stopReason = ev.delta.stop_reason ?? stopReason;
            const u = ev.usage;
            if (u) {
              if (typeof u.output_tokens === 'number') usage.outputTokens = u.output_tokens;
              if (typeof u.input_tokens === 'number') usage.inputTokens = u.input_tokens;
              if (typeof u.cache_read_input_tokens === 'number') usage.cacheReadTokens = u.cache_read_input_tokens;
              if (typeof u.cache_creation_input_tokens === 'number') usage.cacheWriteTokens = u.cache_creation_input_tokens;
              h.onUsage?.({ ...usage });
            }
            break;
          }
          case 'message_stop':
            stopped = true;
            break;
          default:
            break;
        }
      }
      // The SDK ends iteration quietly on abort; a stream without message_stop was cut short.
      if (signal.aborted || !stopped) throw new Error('incomplete stream');
    } catch (e) {
      throw this.wrap(e, signal);
    }
    const content: ModelResponse['content'] = [];
    const inputIssues: Record<number, ToolInputIssue> = {};
    for (const [, b] of [...blocks.entries()].sort((a, b) => a[0] - b[0])) {
      if (b.type === 'text') content.push({ type: 'text', text: b.text });
      else {
        const r = readToolInput(b.json || b.startJson);
        if (r.issue) inputIssues[content.length] = r.issue;
        content.push({ type: 'tool_use', id: b.id, name: b.name, input: r.input });
      }
    }
    return { id, model, content, stopReason, usage, ...(Object.keys(inputIssues).length ? { inputIssues } : {}) };
  }

  private wrap(e: unknown, signal: AbortSignal): ProviderError {
    if (signal.aborted) {
      const reason = signal.reason instanceof Error ? signal.reason.message : 'The request was cancelled.';
      return new ProviderError(scrubText(reason, [this.key]));
    }
    if (e instanceof Anthropic.APIError) {
      const status = typeof e.status === 'number' ? e.status : null;
      const body = (e.error ?? {}) as { error?: { type?: string; message?: string } };
      const detail = body.error?.message ? `: ${body.error.message.slice(0, 300)}` : '';
      const what =
        status === 401 || status === 403
          ? 'The Anthropic API key was rejected. An administrator can update it under Settings → Kinetix'
          : status === 429
            ? 'The model provider is rate limiting requests; try again shortly'
            : status && status >= 500
              ? 'The model provider had an error; try again shortly'
              : status === null
                ? 'Could not reach the model provider (check the network or ANTHROPIC_BASE_URL)'
                : 'The model provider refused the request';
      return new ProviderError(scrubText(`${what} (HTTP ${status ?? 'n/a'}${body.error?.type ? ` ${body.error.type}` : ''}${detail}).`, [this.key]), status);
    }
    if (e instanceof Error && e.message === 'incomplete stream') return new ProviderError('The model provider ended its response early; try again.');
    return new ProviderError('Could not reach the model provider (check the network or ANTHROPIC_BASE_URL).');
  }
}

/**
 * A tool_use block's raw JSON as input: measured before parsing (bounds.ts); oversized, over-deep
 * or unparseable (cut-off) JSON yields `{}` and an issue carrying only its size, depth and digest.
 */
export function readToolInput(raw: string): { input: unknown; issue?: ToolInputIssue } {
  if (!raw.trim()) return { input: {} };
  const m: InputMeasure = measureJsonText(raw);
  if (!m.ok) return { input: {}, issue: { issue: m.reason ?? 'size', bytes: m.bytes, depth: m.depth, sha256: digestText(raw) } };
  try {
    return { input: JSON.parse(raw) as unknown };
  } catch {
    return { input: {}, issue: { issue: 'incomplete', bytes: raw.length, depth: m.depth, sha256: digestText(raw) } };
  }
}
