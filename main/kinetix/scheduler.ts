/**
 * Time for the harness: the clock and timers behind the 10-minute confirm wait, the 90-second
 * provider call, rate-limit windows and capability expiry. Injectable so tests drive the long
 * limits with a manual clock instead of waiting.
 */

/** A clock plus one-shot timers. `now()` is ms since the epoch. */
export interface Scheduler {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock and Node timers. */
export const realScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const h = setTimeout(fn, ms);
    h.unref?.();
    return h;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/**
 * A manual clock for tests: time moves only when `advance(ms)` is called, which fires every
 * timer that falls due, in order.
 */
export class ManualScheduler implements Scheduler {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(startMs = Date.UTC(2026, 10, 30, 9, 0, 0)) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Timers still pending. */
  get pending(): number {
    return this.timers.size;
  }

  /** Move the clock forward by `ms`, firing due timers in time order. */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= target && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = target;
  }
}
