/**
 * Worker thread of the device sync engine: runs `@electric-sql/client` ShapeStreams (fetch and
 * parse) off the main thread, so the main thread's event loop is never blocked by the client's
 * `JSON.parse` of a whole response (one call per response, 0.5–0.9 s for a 4 MiB chunk on the
 * build machine; BENCHMARKS.md "Device sync"). The decoded messages go to the main thread in slices
 * of at most {@link SLICE} messages, one `postMessage` each (each slice is deserialised in its own
 * task there); the stream waits for the main thread's `ack` after the last slice of a response, so
 * the main thread, which alone writes SQLite, sets the pace.
 *
 * Protocol (shapes in {@link ToWorker} / {@link FromWorker}, one worker hosts many streams by `id`):
 * main → worker `start` (the ShapeStream options that can cross threads), `ack`, `stop`;
 * worker → main `batch` (a slice; `last` on the final one of a response, with the stream's handle
 * and offset after it), `online` (after every request: HQ answered, or could not be reached or
 * did not answer within its deadline, main/sync/fetch-deadline.ts), `error` (`retrying`: the
 * stream backs off and retries by itself — live mode and not a 4xx — else it has stopped).
 */
import { parentPort } from 'node:worker_threads';
import { FetchError, ShapeStream, type Message, type Offset, type Row } from '@electric-sql/client';
import { HQ_SHAPE_PARSER, int8ToNumber } from '../../models/sync';
import { withResponseDeadline } from './fetch-deadline';

/** Messages per `batch` post. */
export const SLICE = 500;

/** What the main thread sends. */
export type ToWorker =
  | {
      type: 'start';
      id: number;
      url: string;
      params: { table: string; replica: 'full' | 'default' };
      offset?: string;
      handle?: string;
      headers: Record<string, string>;
      live: boolean;
      backoff: { initialMs: number; maxMs: number; maxRetries: number };
      /** Response deadlines, ms (see fetch-deadline.ts). */
      deadlines: { liveMs: number; otherMs: number };
    }
  | { type: 'ack'; id: number }
  | { type: 'stop'; id: number };

/** What the worker sends. */
export type FromWorker =
  | { type: 'batch'; id: number; messages: Message<Row>[]; last: boolean; handle: string | undefined; offset: string }
  | { type: 'online'; id: number; online: boolean }
  | { type: 'error'; id: number; status: number | null; message: string; url: string; retrying: boolean; cause?: string };

interface Running {
  ctrl: AbortController;
  ack: (() => void) | null;
}
const streams = new Map<number, Running>();
const post = (m: FromWorker): void => parentPort!.postMessage(m);

function start(m: Extract<ToWorker, { type: 'start' }>): void {
  const ctrl = new AbortController();
  const run: Running = { ctrl, ack: null };
  streams.set(m.id, run);
  // Every request's outcome is posted, not only this stream's changes of state: the engine's
  // online state is one for all streams and the uploads, so a stream whose last word was
  // "unreachable" must still report the next failure (after HQ came back and went away again
  // while its long-poll was held, it had posted nothing in between).
  const setOnline = (v: boolean): void => post({ type: 'online', id: m.id, online: v });
  const deadlineFetch = withResponseDeadline(fetch, m.deadlines);
  const trackedFetch: typeof fetch = async (input, init) => {
    try {
      const res = await deadlineFetch(input, init);
      setOnline(res.status < 502 || res.status > 504);
      return res;
    } catch (e) {
      if (!init?.signal?.aborted) setOnline(false);
      throw e;
    }
  };
  const stream = new ShapeStream<Row>({
    url: m.url,
    params: m.params,
    ...(m.handle && m.offset ? { offset: m.offset as Offset, handle: m.handle } : {}),
    headers: m.headers,
    parser: { ...HQ_SHAPE_PARSER, int8: int8ToNumber },
    subscribe: m.live,
    signal: ctrl.signal,
    fetchClient: trackedFetch,
    backoffOptions: { initialDelay: m.backoff.initialMs, maxDelay: m.backoff.maxMs, multiplier: 2, maxRetries: m.backoff.maxRetries },
    onError: (err) => {
      if (ctrl.signal.aborted) return;
      const status = err instanceof FetchError ? err.status : null;
      // The same rule as the in-thread engine: live streams retry unless HQ refused (4xx).
      const retrying = m.live && !(status !== null && status >= 400 && status < 500);
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? err.name;
      post({ type: 'error', id: m.id, status, message: err.message, url: err instanceof FetchError ? err.url : m.url, retrying, cause });
      return retrying ? {} : undefined;
    },
  });
  stream.subscribe(
    async (messages) => {
      if (ctrl.signal.aborted) return;
      const acked = new Promise<void>((r) => (run.ack = r));
      for (let i = 0; i < messages.length || i === 0; i += SLICE) {
        const last = i + SLICE >= messages.length;
        post({
          type: 'batch',
          id: m.id,
          messages: messages.slice(i, i + SLICE),
          last,
          handle: last ? stream.shapeHandle : undefined,
          offset: last ? stream.lastOffset : '',
        });
      }
      await acked;
    },
    (err) => {
      if (!ctrl.signal.aborted) post({ type: 'error', id: m.id, status: null, message: err.message, url: m.url, retrying: false });
    },
  );
}

parentPort?.on('message', (m: ToWorker) => {
  if (m.type === 'start') start(m);
  else if (m.type === 'ack') {
    const run = streams.get(m.id);
    const ack = run?.ack;
    if (run) run.ack = null;
    ack?.();
  } else if (m.type === 'stop') {
    const run = streams.get(m.id);
    streams.delete(m.id);
    run?.ctrl.abort();
    run?.ack?.();
  }
});
