/**
 * In-process event bus for run events (kinetix.md §8): one bounded buffer per subscriber (256
 * events) and a non-blocking publish — a slow view loses live frames, never the record, because
 * every event is persisted with its sequence number before it is published and a view catches up
 * from the table (see `Kinetix.subscribe`).
 */

/** One event of a run as it travels to views: defined once, in the renderer↔main contract. */
export type { RunEventEnvelope } from '../../models/contract';
import type { RunEventEnvelope } from '../../models/contract';

/** Per-subscriber buffer size. */
export const SUBSCRIBER_BUFFER = 256;

/** A view's subscription: an async iterator over a bounded buffer. */
export class Subscription implements AsyncIterable<RunEventEnvelope> {
  private readonly buf: RunEventEnvelope[] = [];
  private waiter: ((r: IteratorResult<RunEventEnvelope>) => void) | null = null;
  private ended = false;
  /** Events dropped because the buffer was full. */
  dropped = 0;
  private overflowed = false;

  constructor(
    readonly runId: string,
    private readonly capacity: number,
    private readonly onClose: (s: Subscription) => void,
  ) {}

  /** Non-blocking: deliver or drop. @returns false when dropped. */
  offer(e: RunEventEnvelope): boolean {
    if (this.ended) return false;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: e, done: false });
      return true;
    }
    if (this.buf.length >= this.capacity) {
      this.dropped++;
      this.overflowed = true;
      return false;
    }
    this.buf.push(e);
    return true;
  }

  /**
   * True once per overflow: events were dropped since the last call. The reader then catches up
   * from the persisted events (the table is the truth) at once, without waiting for a later event.
   */
  takeOverflow(): boolean {
    const o = this.overflowed;
    this.overflowed = false;
    return o;
  }

  /** End the stream after what is buffered (the run finished). */
  end(): void {
    this.ended = true;
    if (this.waiter && this.buf.length === 0) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: undefined, done: true });
    }
  }

  /** Stop receiving; pending reads end. */
  close(): void {
    this.buf.length = 0;
    this.end();
    this.onClose(this);
  }

  next(): Promise<IteratorResult<RunEventEnvelope>> {
    const e = this.buf.shift();
    if (e) return Promise.resolve({ value: e, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEventEnvelope> {
    return {
      next: () => this.next(),
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

/** Pub/sub by run id. */
export class EventBus {
  private readonly subs = new Map<string, Set<Subscription>>();

  constructor(private readonly capacity = SUBSCRIBER_BUFFER) {}

  subscribe(runId: string): Subscription {
    const s = new Subscription(runId, this.capacity, (x) => this.subs.get(runId)?.delete(x));
    let set = this.subs.get(runId);
    if (!set) this.subs.set(runId, (set = new Set()));
    set.add(s);
    return s;
  }

  /** Deliver to every subscriber of the run without waiting; full buffers drop the event. */
  publish(e: RunEventEnvelope): void {
    const set = this.subs.get(e.runId);
    if (!set) return;
    for (const s of set) s.offer(e);
  }

  /** End every subscription of a finished run (each drains its buffer first). */
  endRun(runId: string): void {
    const set = this.subs.get(runId);
    if (!set) return;
    for (const s of set) s.end();
    this.subs.delete(runId);
  }

  /** Subscribers of a run (diagnostics: a run published to nobody looks stuck in a view). */
  subscriberCount(runId: string): number {
    return this.subs.get(runId)?.size ?? 0;
  }
}
