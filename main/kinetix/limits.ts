/**
 * The limits of kinetix.md §4 that are not timers: concurrent runs per user, runs per minute
 * per org and per user, and the two budget gates (org and user monthly caps, month to date).
 */
import { RateLimited } from '../../models/errors';
import type { Db } from '../data/db';
import { hostname } from 'node:os';
import { acquireRunLease, budgetCaps, spendSince } from '../data/kinetix';
import { BUDGET_WHERE, TooManyRuns } from './errors';

export { BUDGET_WHERE } from './errors';

/** Defaults (kinetix.md §4; rate limits are this build's choice). */
export interface KinetixLimits {
  /** Concurrent runs per user; the next is refused with TooManyRuns. @default 3 */
  maxConcurrentRunsPerUser: number;
  /** How long a confirmation may wait before the call is skipped and the run cancelled (ms). @default 600_000 */
  confirmTimeoutMs: number;
  /** Per provider call, not per run (ms). @default 90_000 */
  providerTimeoutMs: number;
  /** Model calls per run. @default 12 */
  maxIterations: number;
  /** Runs per minute per user. @default 10 */
  userRunsPerMinute: number;
  /** Runs per minute per organisation. @default 60 */
  orgRunsPerMinute: number;
  /** Lifetime of a per-tool-call capability (ms). @default 300_000 */
  capabilityTtlMs: number;
  /** Max output tokens per model call. @default 4096 */
  maxTokens: number;
}

/** kinetix.md §4 defaults (3 runs, 10 min, 90 s, 12 iterations) plus this build's rate limits. */
export const DEFAULT_LIMITS: KinetixLimits = {
  maxConcurrentRunsPerUser: 3,
  confirmTimeoutMs: 10 * 60_000,
  providerTimeoutMs: 90_000,
  maxIterations: 12,
  userRunsPerMinute: 10,
  orgRunsPerMinute: 60,
  capabilityTtlMs: 5 * 60_000,
  maxTokens: 4096,
};

/** A lease whose heartbeat is older than this is reclaimed (ms); heartbeats are written every {@link LEASE_HEARTBEAT_MS}. */
export const LEASE_STALE_MS = 60_000;
/** How often a process refreshes the leases of its runs (ms). */
export const LEASE_HEARTBEAT_MS = 15_000;

/**
 * Take the database lease for a new run (the limits hold per user across every process sharing
 * the file: the app, `npm run cli -- ask`, the MCP server). Refusals carry the same messages
 * whichever process refused.
 * @throws TooManyRuns (the user already has `maxConcurrentRunsPerUser` runs),
 *   RateLimited with `retryAfterSeconds` ≥ 1 (user first, then org, over the last minute)
 */
export function takeRunLease(db: Db, limits: KinetixLimits, lease: { runId: string; orgId: string; userId: string; nowMs: number }): void {
  const out = acquireRunLease(
    db,
    { ...lease, host: hostname(), pid: process.pid },
    {
      maxConcurrentPerUser: limits.maxConcurrentRunsPerUser,
      userRunsPerMinute: limits.userRunsPerMinute,
      orgRunsPerMinute: limits.orgRunsPerMinute,
      staleAfterMs: LEASE_STALE_MS,
    },
    (pid) => !pidAlive(pid),
  );
  if (out.ok) return;
  if (out.limit === 'concurrency') throw new TooManyRuns(limits.maxConcurrentRunsPerUser);
  const retry = Math.max(1, Math.ceil(out.retryAfterMs / 1000));
  if (out.limit === 'user_rate')
    throw new RateLimited(`You have started ${limits.userRunsPerMinute} Kinetix requests in the last minute. Try again in ${retry} s.`, retry);
  throw new RateLimited(`Your organisation has started ${limits.orgRunsPerMinute} Kinetix requests in the last minute. Try again in ${retry} s.`, retry);
}

/** True when a process with this id exists on this machine (EPERM: it exists, owned by someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** First instant of the UTC month containing `now`, ISO-8601. */
export function monthStartIso(now: number): string {
  const d = new Date(now);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
}

/** Outcome of the first budget gate. `remainingUsd` is Infinity when neither cap is set. */
export interface BudgetCheck {
  allowed: boolean;
  remainingUsd: number;
  reason?: string;
  orgSpendUsd?: number;
  userSpendUsd?: number;
}

/**
 * Budget gate before any paid call: the smaller headroom of the org cap and the user's cap,
 * month to date. A failing read allows the run (and is logged): a billing-table glitch must not
 * lock a clinician out of their records.
 */
export function checkBudget(db: Db, orgId: string, userId: string, now: number, log: (line: string) => void): BudgetCheck {
  try {
    const caps = budgetCaps(db, orgId, userId);
    const spend = spendSince(db, orgId, userId, monthStartIso(now));
    const orgLeft = caps.orgCapUsd === null ? Infinity : caps.orgCapUsd - spend.orgUsd;
    const userLeft = caps.userCapUsd === null ? Infinity : caps.userCapUsd - spend.userUsd;
    const remainingUsd = Math.min(orgLeft, userLeft);
    const base = { remainingUsd, orgSpendUsd: spend.orgUsd, userSpendUsd: spend.userUsd };
    if (orgLeft <= 0) return { ...base, allowed: false, reason: `Your organisation has reached its monthly Kinetix budget ($${caps.orgCapUsd!.toFixed(2)}).` };
    if (userLeft <= 0) return { ...base, allowed: false, reason: `You have reached your personal monthly Kinetix budget ($${caps.userCapUsd!.toFixed(2)}).` };
    return { ...base, allowed: true };
  } catch (e) {
    log(`kinetix: budget read failed (${e instanceof Error ? e.name : 'error'}); allowing the run`);
    return { allowed: true, remainingUsd: Infinity };
  }
}

/** The message of the second gate (kinetix.md §4), said when a run stops mid-way on budget. */
export const BUDGET_STOP_MESSAGE = `I stopped partway through because this turn reached the remaining Kinetix budget for the month. ${BUDGET_WHERE}`;
