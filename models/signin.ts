/**
 * PIN lockout: the one rule for every sign-in (the desktop's PIN sign-in and the HQ's device
 * enrolment, POST /v1/devices). After {@link MAX_PIN_FAILURES} wrong PINs for one user, that user
 * is locked for {@link PIN_LOCK_MS}; the count starts again once a lock has run out. Pure and
 * in-memory: the caller supplies the clock.
 */

/** Wrong PINs allowed per user before a lock. */
export const MAX_PIN_FAILURES = 5;
/** How long a user is locked after {@link MAX_PIN_FAILURES} wrong PINs (ms). */
export const PIN_LOCK_MS = 5 * 60_000;

/** Failure counts and locks per key (a user id). */
export class PinLockout {
  private readonly failures = new Map<string, { count: number; lockedUntil: number }>();

  /** Milliseconds left on `key`'s lock at `now` (0 when not locked). */
  lockedFor(key: string, now: number): number {
    const f = this.failures.get(key);
    return f && f.lockedUntil > now ? f.lockedUntil - now : 0;
  }

  /** Record a wrong PIN for `key` at `now`; returns true when this failure starts a lock. */
  fail(key: string, now: number): boolean {
    const f = this.failures.get(key);
    const expired = f !== undefined && f.lockedUntil !== 0 && f.lockedUntil <= now;
    const next = { count: (expired ? 0 : (f?.count ?? 0)) + 1, lockedUntil: 0 };
    if (next.count >= MAX_PIN_FAILURES) next.lockedUntil = now + PIN_LOCK_MS;
    this.failures.set(key, next);
    return next.lockedUntil !== 0;
  }

  /** A right PIN clears `key`'s failures. */
  succeed(key: string): void {
    this.failures.delete(key);
  }
}
