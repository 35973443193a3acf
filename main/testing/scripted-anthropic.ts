/**
 * A scripted Anthropic Messages API server on 127.0.0.1 for tests and offline evals. It speaks
 * the real wire format — `POST /v1/messages`, JSON or SSE streaming with `event:` lines,
 * `tool_use` content blocks with `input_json_delta` chunks, usage with cache tokens, typed error
 * bodies — so the real `@anthropic-ai/sdk` talks to it through `baseURL`. A step can also hang
 * (before any byte, or after `message_start`) to exercise the per-call timeout and Stop.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Token usage a scripted response reports (Anthropic field names). */
export interface ScriptedUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/** One scripted model response. */
export interface ScriptedMessage {
  /** Text, streamed in chunks of `chunk` characters (default 12). */
  text?: string;
  /**
   * Tool calls. `rawJson` is streamed verbatim as `input_json_delta` chunks instead of `input`
   * (cut-off or huge JSON); `inputInStart` sends the input in `content_block_start` and no deltas
   * (as some gateways do).
   */
  toolUses?: { name: string; input?: unknown; id?: string; rawJson?: string; inputInStart?: boolean }[];
  /** Model name reported in this response (default: the requested model). */
  model?: string;
  usage?: Partial<ScriptedUsage>;
  /** Default: `tool_use` when toolUses are present, else `end_turn`. */
  stopReason?: string;
  chunk?: number;
}

/** A scripted HTTP error (`{ type: 'error', error: { type, message } }`). */
export interface ScriptedError {
  error: { status: number; type: string; message: string };
}

/** Never answer: `before_headers` (no byte at all) or `after_start` (SSE `message_start`, then silence). */
export interface ScriptedHang {
  hang: 'before_headers' | 'after_start';
  usage?: Partial<ScriptedUsage>;
  /** With `after_start`: stream this much text first (a client can see the response has begun). */
  text?: string;
}

export type ScriptStep = ScriptedMessage | ScriptedError | ScriptedHang;

/** A request as the server received it. */
export interface RecordedRequest {
  path: string;
  /** The request body exactly as received (UTF-8), for checks on every byte sent. */
  raw: string;
  headers: Record<string, string | string[] | undefined>;
  body: {
    model: string;
    max_tokens: number;
    stream?: boolean;
    system?: string | { type: 'text'; text: string }[];
    messages: { role: string; content: unknown }[];
    tools?: { name: string; description?: string; input_schema: unknown }[];
    [k: string]: unknown;
  };
}

export type ScriptEntry = ScriptStep | ((req: RecordedRequest, index: number) => ScriptStep | Promise<ScriptStep>);

export interface ScriptedAnthropic {
  /** Base URL for the SDK (`http://127.0.0.1:PORT`). */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Append steps to the script. */
  push(...steps: ScriptEntry[]): void;
  /** Requests currently held open by a hang step. */
  readonly hanging: number;
  /** Resolves when the server has received `n` requests in total. */
  waitForRequests(n: number): Promise<void>;
  close(): Promise<void>;
}

export interface ScriptedOptions {
  /** When set, requests must carry this key (`x-api-key` or `Authorization: Bearer`), else 401. */
  expectedKey?: string;
}

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function fullUsage(
  u: Partial<ScriptedUsage> | undefined,
  output: number,
): ScriptedUsage & { cache_read_input_tokens: number; cache_creation_input_tokens: number } {
  return {
    input_tokens: u?.input_tokens ?? 100,
    output_tokens: u?.output_tokens ?? output,
    cache_read_input_tokens: u?.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: u?.cache_creation_input_tokens ?? 0,
  };
}

let idSeq = 0;
const nextId = (p: string) => `${p}_${Date.now().toString(36)}${(++idSeq).toString(36).padStart(6, '0')}`;

/** Start a scripted server on 127.0.0.1 (random port). Steps are consumed one per request. */
export async function startScriptedAnthropic(steps: ScriptEntry[] = [], opts: ScriptedOptions = {}): Promise<ScriptedAnthropic> {
  const script: ScriptEntry[] = [...steps];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const held = new Set<ServerResponse>();
  const waiters: { n: number; resolve: () => void }[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `No route ${req.method} ${req.url}` } }));
      return;
    }
    let body: RecordedRequest['body'];
    const raw = Buffer.concat(chunks).toString('utf8');
    try {
      body = JSON.parse(raw) as RecordedRequest['body'];
    } catch {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'Body is not JSON.' } }));
      return;
    }
    const rec: RecordedRequest = { path: req.url, raw, headers: { ...req.headers }, body };
    requests.push(rec);
    for (const w of [...waiters])
      if (requests.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    const given =
      req.headers['x-api-key'] ?? (typeof req.headers.authorization === 'string' ? req.headers.authorization.replace(/^Bearer\s+/i, '') : undefined);
    if (opts.expectedKey !== undefined && given !== opts.expectedKey) {
      res
        .writeHead(401, { 'content-type': 'application/json', 'request-id': nextId('req') })
        .end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
      return;
    }
    const entry = script.shift();
    const step: ScriptStep =
      entry === undefined
        ? { error: { status: 500, type: 'api_error', message: 'The scripted server has no more steps.' } }
        : typeof entry === 'function'
          ? await entry(rec, requests.length - 1)
          : entry;

    if ('error' in step) {
      res
        .writeHead(step.error.status, { 'content-type': 'application/json', 'request-id': nextId('req'), 'x-should-retry': 'false' })
        .end(JSON.stringify({ type: 'error', error: { type: step.error.type, message: step.error.message } }));
      return;
    }
    const model = ('model' in step && step.model) || body.model;
    const msgId = nextId('msg');
    if ('hang' in step) {
      held.add(res);
      res.on('close', () => held.delete(res));
      if (step.hang === 'after_start') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': nextId('req') });
        sse(res, 'message_start', {
          type: 'message_start',
          message: {
            id: msgId,
            type: 'message',
            role: 'assistant',
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: fullUsage(step.usage, 1),
          },
        });
        if (step.text) {
          sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
          sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: step.text } });
        }
      }
      return; // never answered
    }

    const toolUses = (step.toolUses ?? []).map((t) => ({ ...t, id: t.id ?? nextId('toolu') }));
    const stopReason = step.stopReason ?? (toolUses.length ? 'tool_use' : 'end_turn');
    const text = step.text ?? '';
    const usage = fullUsage(
      step.usage,
      Math.max(1, Math.ceil((text.length + toolUses.reduce((n, t) => n + (t.rawJson ?? JSON.stringify(t.input ?? {})).length, 0)) / 4)),
    );
    const content = [...(text ? [{ type: 'text', text }] : []), ...toolUses.map((t) => ({ type: 'tool_use', id: t.id, name: t.name, input: t.input }))];

    if (!body.stream) {
      res
        .writeHead(200, { 'content-type': 'application/json', 'request-id': nextId('req') })
        .end(JSON.stringify({ id: msgId, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': nextId('req') });
    sse(res, 'message_start', {
      type: 'message_start',
      message: {
        id: msgId,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    sse(res, 'ping', { type: 'ping' });
    let index = 0;
    if (text) {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      const n = Math.max(1, step.chunk ?? 12);
      for (let i = 0; i < text.length; i += n)
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: text.slice(i, i + n) } });
      sse(res, 'content_block_stop', { type: 'content_block_stop', index });
      index++;
    }
    for (const t of toolUses) {
      sse(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: t.id, name: t.name, input: t.inputInStart ? (t.input ?? {}) : {} },
      });
      const json = t.inputInStart ? '' : (t.rawJson ?? JSON.stringify(t.input ?? {}));
      const step16 = json.length > 64 * 1024 ? 64 * 1024 : 16;
      for (let i = 0; i < json.length; i += step16)
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + step16) } });
      sse(res, 'content_block_stop', { type: 'content_block_stop', index });
      index++;
    }
    sse(res, 'message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    sse(res, 'message_stop', { type: 'message_stop' });
    res.end();
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    push: (...s) => void script.push(...s),
    get hanging() {
      return held.size;
    },
    waitForRequests: (n) => (requests.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
