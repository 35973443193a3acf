/**
 * Worker thread of the device sync engine: runs `@electric-sql/client` ShapeStreams (fetch and
 * parse) and applies their messages to the device file through its own SQLite connection
 * (main/data/db.ts `openReplicaWriter`, the same WAL file the main thread has open), so the main
 * thread's event loop is blocked neither by the client's `JSON.parse` of a whole response (one
 * call per response, 0.5–0.9 s for a 4 MiB chunk on the build machine) nor by SQLite's insert and
 * index work (BENCHMARKS.md "Device sync"). The rows are written by main/sync/shape-apply.ts
 * `ShapeApplier` through the data layer (main/data/sync.ts `applyShapeBatch`): bounded
 * transactions, the last of an up-to-date batch with the shape's handle and offset. The main
 * thread learns of every transaction (`applied`) and of every response's end (`consumed`); the
 * app's status, the sync report and the kill -9 trace points are its business.
 *
 * Protocol (shapes in {@link ToWorker} / {@link FromWorker}, one worker hosts many streams by `id`):
 * main → worker `start` (the ShapeStream options that can cross threads, and where and how to
 * apply), `ack` (with `waitAfterEach`: the engine has handled an `applied`; the worker waits for
 * it before the next transaction, so a kill -9 test ends the process exactly there), `stop`;
 * worker → main `applied` (one committed transaction), `consumed` (a response's messages are
 * applied: up-to-date or not, a must-refetch seen), `online` (after every request: HQ answered, or
 * could not be reached or did not answer within its deadline, main/sync/fetch-deadline.ts),
 * `error` (`retrying`: the stream backs off and retries by itself — live mode and not a 4xx — else
 * it has stopped; an apply that failed stops it too), `stopped` (after `stop`, once no transaction
 * of that stream is under way: the engine's `stop()` waits for it).
 */
import { parentPort } from 'node:worker_threads';
import { FetchError, ShapeStream, type Offset, type Row } from '@electric-sql/client';
import { HQ_SHAPE_PARSER, int8ToNumber } from '../../models/sync';
import { openReplicaWriter, type Db } from '../data/db';
import { withResponseDeadline, withShapeRefusalFinal } from './fetch-deadline';
import { ShapeApplier, type ApplyEvent, type ConsumeResult } from './shape-apply';

/** Where and how a stream's messages are applied. */
export interface ApplyTarget {
  /** The device file (opened by the main thread with openDb, so migrated and in WAL). */
  dbPath: string;
  tbl: string;
  /** The shape starts from scratch (its stored `needs_reset`). */
  resetting: boolean;
  /** Its stored offset. */
  lastOffset: string;
  /** Rows per transaction. */
  sliceRows: number;
  /** Wait for the main thread's `ack` after each `applied` (the engine has a trace hook). */
  waitAfterEach: boolean;
}

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
      apply: ApplyTarget;
    }
  | { type: 'ack'; id: number }
  | { type: 'stop'; id: number };

/** What the worker sends. */
export type FromWorker =
  | { type: 'applied'; id: number; ev: ApplyEvent }
  | { type: 'consumed'; id: number; result: ConsumeResult }
  | { type: 'online'; id: number; online: boolean }
  | { type: 'error'; id: number; status: number | null; message: string; url: string; retrying: boolean; cause?: string; hqMessage?: string; hqKind?: string }
  | { type: 'stopped'; id: number };

interface Running {
  ctrl: AbortController;
  ack: (() => void) | null;
  /** The response being applied, if any. */
  busy: Promise<void> | null;
  dbPath: string;
}
const streams = new Map<number, Running>();
const post = (m: FromWorker): void => parentPort!.postMessage(m);

/** This thread's connections, one per device file, shared by its streams. */
const connections = new Map<string, { db: Db; refs: number }>();
function acquire(path: string): Db {
  let c = connections.get(path);
  if (!c) connections.set(path, (c = { db: openReplicaWriter(path), refs: 0 }));
  c.refs++;
  return c.db;
}
function release(path: string): void {
  const c = connections.get(path);
  if (!c || --c.refs > 0) return;
  connections.delete(path);
  c.db.close();
}

function start(m: Extract<ToWorker, { type: 'start' }>): void {
  const ctrl = new AbortController();
  const run: Running = { ctrl, ack: null, busy: null, dbPath: m.apply.dbPath };
  let applier: ShapeApplier;
  try {
    const db = acquire(m.apply.dbPath);
    streams.set(m.id, run);
    applier = new ShapeApplier(db, m.apply.tbl, m.apply);
  } catch (e) {
    if (streams.delete(m.id)) release(m.apply.dbPath);
    post({
      type: 'error',
      id: m.id,
      status: null,
      message: `The shape worker cannot apply the ${m.apply.tbl} shape to the device file: ${(e as Error).message}`,
      url: m.url,
      retrying: false,
    });
    return;
  }
  // Every request's outcome is posted, not only this stream's changes of state: the engine's
  // online state is one for all streams and the uploads, so a stream whose last word was
  // "unreachable" must still report the next failure (after HQ came back and went away again
  // while its long-poll was held, it had posted nothing in between).
  const setOnline = (v: boolean): void => post({ type: 'online', id: m.id, online: v });
  const deadlineFetch = withShapeRefusalFinal(withResponseDeadline(fetch, m.deadlines));
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
      // HQ's own words for a refusal (e.g. "revoked" vs "deactivated"), passed through to the engine.
      const hqError = err instanceof FetchError ? (err.json as { error?: { message?: unknown; kind?: unknown } } | undefined)?.error : undefined;
      const hqMessage = hqError?.message;
      const hqKind = hqError?.kind;
      post({
        type: 'error',
        id: m.id,
        status,
        message: err.message,
        url: err instanceof FetchError ? err.url : m.url,
        retrying,
        cause,
        ...(typeof hqMessage === 'string' ? { hqMessage } : {}),
        ...(typeof hqKind === 'string' ? { hqKind } : {}),
      });
      return retrying ? {} : undefined;
    },
  });
  const afterEach = async (ev: ApplyEvent): Promise<void> => {
    post({ type: 'applied', id: m.id, ev });
    if (m.apply.waitAfterEach && !ctrl.signal.aborted) await new Promise<void>((r) => (run.ack = r));
  };
  stream.subscribe(
    async (messages) => {
      if (ctrl.signal.aborted) return;
      const busy = (async () => {
        try {
          const result = await applier.consume(messages, { handle: stream.shapeHandle, offset: stream.lastOffset }, afterEach, () => ctrl.signal.aborted);
          if (!ctrl.signal.aborted) post({ type: 'consumed', id: m.id, result });
        } catch (e) {
          if (ctrl.signal.aborted) return;
          ctrl.abort();
          post({
            type: 'error',
            id: m.id,
            status: null,
            message: `Applying the ${m.apply.tbl} shape failed: ${(e as Error).message}`,
            url: m.url,
            retrying: false,
          });
        }
      })();
      run.busy = busy;
      await busy;
      if (run.busy === busy) run.busy = null;
    },
    (err) => {
      if (!ctrl.signal.aborted) post({ type: 'error', id: m.id, status: null, message: err.message, url: m.url, retrying: false });
    },
  );
}

async function stop(id: number): Promise<void> {
  const run = streams.get(id);
  if (!run) return post({ type: 'stopped', id });
  streams.delete(id);
  run.ctrl.abort();
  run.ack?.();
  run.ack = null;
  await run.busy;
  release(run.dbPath);
  post({ type: 'stopped', id });
}

parentPort?.on('message', (m: ToWorker) => {
  if (m.type === 'start') start(m);
  else if (m.type === 'ack') {
    const run = streams.get(m.id);
    const ack = run?.ack;
    if (run) run.ack = null;
    ack?.();
  } else if (m.type === 'stop') void stop(m.id);
});
