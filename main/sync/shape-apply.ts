/**
 * Applying one table's shape messages to the device file (shared/design/sync.md "Read path"), the
 * same in the thread that runs it: the shape worker (main/sync/shape-worker.ts, through its own
 * connection to the file) or, without a worker, the engine's thread (main/sync/engine.ts).
 *
 * Messages are decoded into replica writes and applied in transactions of at most `sliceRows`
 * rows (`applyShapeBatch`, main/data/sync.ts): full slices as soon as they are buffered (a
 * snapshot that spans many responses is written while the next responses are fetched), the rest
 * at `up-to-date`, whose last transaction also stores the shape's handle and offset, the txids
 * delivered and, after a reset, removes the rows the fresh snapshot did not deliver. A restart
 * resumes at the last stored offset; a kill between two slices of one catch-up re-fetches that
 * catch-up and re-applies its rows, which converges to the same rows (every message carries the
 * whole row, `replica=full`, and they are applied in order). `must-refetch` forgets what was
 * buffered, resets the shape (`resetShape`) and sweeps at the next up-to-date; rows under
 * optimistic local changes only update their stored server row (applyShapeBatch).
 */
import { isChangeMessage, isControlMessage, type Message, type Row } from '@electric-sql/client';
import type { Db } from '../data/db';
import { applyShapeBatch, isTableEmpty, resetShape, type ReplicaOp } from '../data/sync';

/** What one applied transaction did (posted by the worker to the engine, or handed to it in-thread). */
export interface ApplyEvent {
  /** Rows written or deleted in the live table by this transaction. */
  written: number;
  /** True when this transaction stored the shape's handle and offset (the end of an up-to-date batch). */
  committed: boolean;
  /** True when this transaction ended a reset (`must-refetch`, or a shape that starts from scratch). */
  reset: boolean;
}

/** What a response's messages came to, after its transactions. */
export interface ConsumeResult {
  /** The response ended with `up-to-date`. */
  upToDate: boolean;
  /** A `must-refetch` was among the messages. */
  refetched: boolean;
  /** At least one transaction stored the handle and offset. */
  committed: boolean;
}

/** Buffers and applies the messages of one table's shape stream, in order. */
export class ShapeApplier {
  private buffer: ReplicaOp[] = [];
  private txids = new Set<string>();
  private resetting: boolean;
  /**
   * After a reset, every id delivered since (the sweep keeps these); null when the table was empty
   * when the reset began (a first sync has nothing to sweep, which spares reading every id).
   */
  private keepIds: Set<string> | null;
  private lastOffset: string;
  private readonly sliceRows: number;

  /**
   * @param db the connection to write through (the worker's own, or the engine's)
   * @param init `resetting`: the shape starts from scratch (its stored `needs_reset`); `lastOffset`:
   *   its stored offset; `sliceRows`: rows per transaction (≥ 1)
   */
  constructor(
    private readonly db: Db,
    private readonly tbl: string,
    init: { resetting: boolean; lastOffset: string; sliceRows: number },
  ) {
    this.resetting = init.resetting;
    this.keepIds = init.resetting && !isTableEmpty(db, tbl) ? new Set() : null;
    this.lastOffset = init.lastOffset;
    this.sliceRows = Math.max(1, init.sliceRows);
  }

  /**
   * Take one response's messages (the stream's handle and offset after it) and apply what is due:
   * every full slice, and at `up-to-date` the rest with the handle and offset. `afterEach` runs
   * after each committed transaction (it may wait: the kill -9 tests stop the process there, the
   * engine's thread yields to its event loop); `stopped` is checked after each, and ends the
   * response early (what is not applied is fetched again from the stored offset).
   * @throws what applyShapeBatch throws (SqliteError; AppError Internal for an unknown table)
   */
  async consume(
    messages: readonly Message<Row>[],
    at: { handle: string | undefined; offset: string },
    afterEach: (ev: ApplyEvent) => void | Promise<void>,
    stopped: () => boolean,
  ): Promise<ConsumeResult> {
    let upToDate = false;
    let refetched = false;
    let committed = false;
    for (const m of messages) {
      if (isChangeMessage(m)) {
        const id = (m.value.id as string | undefined) ?? /\/"?([^"/]+)"?$/.exec(m.key)?.[1];
        if (!id) continue;
        if (m.headers.operation === 'delete') this.buffer.push({ op: 'delete', id });
        else {
          this.buffer.push({ op: 'upsert', id, row: m.value as Record<string, unknown> });
          this.keepIds?.add(id);
        }
        const txids = (m.headers as { txids?: (number | string)[] }).txids;
        if (txids) for (const t of txids) this.txids.add(String(t));
      } else if (isControlMessage(m)) {
        if (m.headers.control === 'must-refetch') {
          this.buffer = [];
          this.txids = new Set();
          this.resetting = true;
          this.keepIds = new Set();
          resetShape(this.db, this.tbl);
          refetched = true;
        } else if (m.headers.control === 'up-to-date') upToDate = true;
      }
    }
    // Full slices now, whether or not the batch is complete: their rows without the offset.
    while (this.buffer.length > this.sliceRows || (!upToDate && this.buffer.length === this.sliceRows)) {
      const slice = this.buffer.splice(0, this.sliceRows);
      const r = applyShapeBatch(this.db, this.tbl, slice, null);
      await afterEach({ written: r.written, committed: false, reset: false });
      if (stopped()) return { upToDate: false, refetched, committed };
    }
    if (!upToDate) return { upToDate, refetched, committed };
    if (!at.handle) {
      // No handle to store (not seen from a conforming server): the rows without the offset.
      if (this.buffer.length > 0) {
        const r = applyShapeBatch(this.db, this.tbl, this.buffer.splice(0), null);
        await afterEach({ written: r.written, committed: false, reset: false });
      }
      return { upToDate, refetched, committed };
    }
    if (this.buffer.length === 0 && at.offset === this.lastOffset && !this.resetting) return { upToDate, refetched, committed };
    const ops = this.buffer;
    const txids = [...this.txids];
    this.buffer = [];
    this.txids = new Set();
    const reset = this.resetting;
    const r = applyShapeBatch(this.db, this.tbl, ops, {
      handle: at.handle,
      offset: at.offset,
      txids,
      keepIds: reset ? this.keepIds : null,
      at: new Date().toISOString(),
    });
    this.resetting = false;
    this.keepIds = null;
    this.lastOffset = at.offset;
    committed = true;
    await afterEach({ written: r.written, committed: true, reset });
    return { upToDate, refetched, committed };
  }
}
