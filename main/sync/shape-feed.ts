/**
 * Where the device sync engine's shape streams run: in a worker thread (main/sync/shape-worker.ts)
 * when one can be started and the database is a file, and then the worker also applies the
 * messages through its own connection to that file, so neither the client's parsing of a response
 * nor SQLite's writing of its rows blocks the main thread's event loop; otherwise in this thread
 * (the plain `@electric-sql/client` ShapeStream, whose messages the engine applies itself).
 *
 * The worker is found next to this module: `shape-worker.js` (a bundled build: electron-vite
 * emits out/main/shape-worker.js next to index.js, see electron.vite.config.ts) or
 * `shape-worker-entry.mjs` (from source, with tsx). One worker serves every stream of an engine;
 * it is unref'd (never keeps the process alive) and ends after 2 s without a stream.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { FetchError, ShapeStream, type Offset, type Row } from '@electric-sql/client';
import { HQ_SHAPE_PARSER, int8ToNumber } from '../../models/sync';
import type { ApplyEvent, ConsumeResult } from './shape-apply';
import type { ApplyTarget, FromWorker, ToWorker } from './shape-worker';

/** The options the engine gives a shape stream (a subset of ShapeStream's that can cross threads). */
export interface ShapeFeedOptions {
  url: string;
  params: { table: string; replica: 'full' | 'default' };
  offset?: string;
  handle?: string;
  headers: Record<string, string>;
  live: boolean;
  signal: AbortSignal;
  backoff: { initialMs: number; maxMs: number; maxRetries: number };
  /** How long HQ may take to answer a live / any other shape request, ms (main/sync/fetch-deadline.ts). */
  deadlines: { liveMs: number; otherMs: number };
  /** In-thread mode: the fetch to use (the engine tracks online state through it and applies `deadlines`). */
  fetchClient: typeof fetch;
  /** Worker mode: after every request, HQ answered (true) or could not be reached in time (false). */
  onOnline: (online: boolean) => void;
  /** Every failure; in-thread mode uses the return value as ShapeStream does (`{}` = retry). */
  onError: (err: FetchError | Error) => void | Record<string, never>;
}

/** A ShapeStream in this thread (the engine applies its messages). */
export function inThreadFeed(o: ShapeFeedOptions): ShapeStream<Row> {
  return new ShapeStream<Row>({
    url: o.url,
    params: o.params,
    ...(o.handle && o.offset ? { offset: o.offset as Offset, handle: o.handle } : {}),
    headers: o.headers,
    parser: { ...HQ_SHAPE_PARSER, int8: int8ToNumber },
    subscribe: o.live,
    signal: o.signal,
    fetchClient: o.fetchClient,
    backoffOptions: { initialDelay: o.backoff.initialMs, maxDelay: o.backoff.maxMs, multiplier: 2, maxRetries: o.backoff.maxRetries },
    onError: (err) => o.onError(err) ?? undefined,
  });
}

function workerUrl(): URL | null {
  for (const name of ['./shape-worker.js', './shape-worker-entry.mjs']) {
    const u = new URL(name, import.meta.url);
    try {
      if (u.protocol === 'file:' && existsSync(fileURLToPath(u))) return u;
    } catch {
      /* not a file URL we can check */
    }
  }
  return null;
}

interface Route {
  onApplied: (ev: ApplyEvent) => void;
  onConsumed: (r: ConsumeResult) => void;
  onOnline: (online: boolean) => void;
  onError: (m: Extract<FromWorker, { type: 'error' }>) => void;
  onStopped: () => void;
}

/** What the engine is told of a stream that applies in the worker. */
export interface ApplyingFeedHandlers {
  /** A transaction committed (the worker waits for this to return when `apply.waitAfterEach`). */
  onApplied: (ev: ApplyEvent) => void;
  /** A response's messages are applied. */
  onConsumed: (r: ConsumeResult) => void;
  /** The stream stopped for good (HTTP error it does not retry, a failed apply, the worker died). */
  onFatal: (err: Error) => void;
}

/** A shape stream whose messages the worker applies. */
export interface ApplyingFeed {
  /** Resolves once the stream is stopped (the options' signal aborted) and none of its transactions is under way. */
  readonly closed: Promise<void>;
}

/** One worker thread hosting the shape streams of one engine. */
export class ShapeWorkerHost {
  private worker: Worker | null = null;
  private readonly routes = new Map<number, Route>();
  private nextId = 1;
  private idle: NodeJS.Timeout | null = null;
  private readonly url = workerUrl();

  /** True when a worker can be started here (its file is present). */
  get available(): boolean {
    return this.url !== null;
  }

  private ensure(): Worker {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    if (this.worker) return this.worker;
    const w = new Worker(this.url!);
    w.unref();
    w.on('message', (m: FromWorker) => {
      const r = this.routes.get(m.id);
      if (!r) return;
      if (m.type === 'applied') r.onApplied(m.ev);
      else if (m.type === 'consumed') r.onConsumed(m.result);
      else if (m.type === 'online') r.onOnline(m.online);
      else if (m.type === 'error') r.onError(m);
      else r.onStopped();
    });
    const fail = (err: Error): void => {
      if (this.worker !== w) return;
      this.worker = null;
      const routes = [...this.routes.values()];
      this.routes.clear();
      for (const r of routes) {
        r.onError({ type: 'error', id: 0, status: null, message: `The shape worker stopped: ${err.message}`, url: '', retrying: false });
        r.onStopped();
      }
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    this.worker = w;
    return w;
  }

  private release(id: number): void {
    this.routes.delete(id);
    if (this.routes.size > 0 || !this.worker || this.idle) return;
    this.idle = setTimeout(() => this.close(), 2000);
    this.idle.unref();
  }

  /** End the worker now (its streams were all stopped). */
  close(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const w = this.worker;
    this.worker = null;
    if (w) void w.terminate();
  }

  /**
   * A shape stream running in the worker, which applies its messages to `apply.dbPath` (see
   * main/sync/shape-apply.ts). Stopped by aborting `o.signal`; `closed` resolves when it has.
   */
  openApplying(o: ShapeFeedOptions, apply: ApplyTarget, h: ApplyingFeedHandlers): ApplyingFeed {
    const id = this.nextId++;
    let stopped = false;
    let closedResolve!: () => void;
    const closed = new Promise<void>((r) => (closedResolve = r));
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      if (this.worker && this.routes.has(id)) this.worker.postMessage({ type: 'stop', id } satisfies ToWorker);
      else {
        this.release(id);
        closedResolve();
      }
    };
    const fatal = (err: Error): void => {
      stop();
      h.onFatal(err);
    };
    const route: Route = {
      onApplied: (ev) => {
        try {
          h.onApplied(ev);
        } finally {
          if (apply.waitAfterEach && !stopped) this.worker?.postMessage({ type: 'ack', id } satisfies ToWorker);
        }
      },
      onConsumed: (r) => {
        if (!stopped) h.onConsumed(r);
      },
      onOnline: (online) => o.onOnline(online),
      onError: (m) => {
        if (stopped) return;
        const err =
          m.status !== null
            ? new FetchError(
                m.status,
                undefined,
                m.hqMessage !== undefined ? { error: { message: m.hqMessage, ...(m.hqKind !== undefined ? { kind: m.hqKind } : {}) } } : undefined,
                {},
                m.url,
                m.message,
              )
            : Object.assign(new Error(m.message), { cause: { code: m.cause } });
        o.onError(err);
        if (!m.retrying) fatal(err);
      },
      onStopped: () => {
        this.release(id);
        closedResolve();
      },
    };
    if (o.signal.aborted) {
      closedResolve();
      return { closed };
    }
    const w = this.ensure();
    this.routes.set(id, route);
    o.signal.addEventListener('abort', stop, { once: true });
    w.postMessage({
      type: 'start',
      id,
      url: o.url,
      params: o.params,
      ...(o.handle && o.offset ? { offset: o.offset, handle: o.handle } : {}),
      headers: o.headers,
      live: o.live,
      backoff: o.backoff,
      deadlines: o.deadlines,
      apply,
    } satisfies ToWorker);
    return { closed };
  }
}
