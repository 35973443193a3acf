/**
 * The shapes HQ's proxy lets devices create (sync/http/shape-proxy.ts), bounded. Every distinct
 * upstream definition (table, the proxy's tenant-AND-client `where`, params, columns, replica) is
 * a shape the shape service snapshots, logs on disk, keeps in memory and resumes after a restart;
 * a device token could otherwise mint one per hand-edited `where` without end (issue 12 review:
 * 200 shapes, HQ's RSS 264 → 758 MB, minutes to restart).
 *
 * - **Cap.** A device token may hold at most {@link SHAPE_LIMITS}.perDevice live definitions, an
 *   account (user) at most {@link SHAPE_LIMITS}.perUser over all its devices, an org
 *   {@link SHAPE_LIMITS}.perOrg; a request for a new definition past any is refused 429
 *   `RateLimited` with `kind: "shape_limit"` (nothing is created). Requests for a definition
 *   already live never count again against the org (every device of a club with the same role
 *   shares its shapes), nor against an account one of whose devices already counts for it. The
 *   per-account limit keeps one account (an athlete enrolling device after device) from filling
 *   its club's limit and locking new staff devices out until the shapes go idle.
 * - **Eviction.** A device stops counting for a definition once it has not requested it for
 *   `idleMs`, or once it is revoked, expired or its account deactivated; a definition no device
 *   counts for any more is deleted at the shape service (`DELETE /v1/shape`, with the secret), so
 *   its log leaves disk and memory. The embedded shape service also drops, and never resumes after
 *   a restart, a shape not requested for the same idle time (sync/shape/service.ts `idleShapeMs`),
 *   since this registry lives in memory and starts empty.
 */
import { AppError } from '../../models/errors';
import type { Principal } from '../write/principal';

/**
 * Default limits. `perDevice` 32: a device syncs one shape per table (22 tables today, models/tables.ts
 * plus organization, activity and hq_proposal), with room for ten narrowed ones. `perUser` 64: an
 * account's devices share its table shapes (same role, same tenant `where`), so 64 holds them and
 * the narrowed shapes of about four devices, and one account never holds more than 64 of its
 * club's 500. `perOrg` 500: a club's staff roles share their shapes, an athlete's device holds
 * about six of its own, so 500 covers ~75 athlete devices; each shape costs memory and disk for
 * its whole table slice, so this bounds what one club can make HQ hold. `idleMs` 6 h: a device
 * offline longer refetches its tables on return (a 100,000-row club in under 10 s, BENCHMARKS.md).
 */
export const SHAPE_LIMITS = { perDevice: 32, perUser: 64, perOrg: 500, idleMs: 6 * 3_600_000 } as const;

/** The environment variables that set {@link SHAPE_LIMITS}' counts for `npm run hq`. */
const LIMIT_ENV = { perDevice: 'HQ_SHAPES_PER_DEVICE', perUser: 'HQ_SHAPES_PER_USER', perOrg: 'HQ_SHAPES_PER_ORG' } as const;

/**
 * The shape limits `env` sets (`HQ_SHAPES_PER_DEVICE`, `HQ_SHAPES_PER_USER`, `HQ_SHAPES_PER_ORG`:
 * whole numbers 1–100000; unset or empty: the default of {@link SHAPE_LIMITS}).
 * @throws Error naming the variable and the range, for any other value
 */
export function shapeLimitsFromEnv(env: Record<string, string | undefined>): Partial<ShapeLimits> {
  const out: Partial<ShapeLimits> = {};
  for (const [key, name] of Object.entries(LIMIT_ENV) as [keyof typeof LIMIT_ENV, string][]) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 100_000)
      throw new Error(`${name} must be a whole number of shapes from 1 to 100000, not ${JSON.stringify(text)}`);
    out[key] = Number(text);
  }
  return out;
}

/** Limits of a {@link ShapeRegistry} (defaults {@link SHAPE_LIMITS}): distinct live definitions per device, per account (user), per org; idle time, ms. */
export interface ShapeLimits {
  perDevice: number;
  perUser: number;
  perOrg: number;
  idleMs: number;
}

interface Entry {
  orgId: string;
  /** The upstream query that names the definition (protocol parameters dropped), for DELETE. */
  definition: URLSearchParams;
  /** Device id → its account (user id) and its last request (ms). */
  requesters: Map<string, { userId: string; at: number }>;
}

/** The parameters that define a shape (everything else in a request is protocol state). */
const DEFINING = ['table', 'where', 'columns', 'replica'];

/** The definition part of an upstream shape query (the proxy's output): table, where, params[n], columns, replica. */
export function shapeDefinition(upstream: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  const keys = [...upstream.keys()].filter((k) => DEFINING.includes(k) || /^params\[\d+\]$/.test(k)).sort();
  for (const k of keys) out.set(k, upstream.get(k)!);
  return out;
}

/** True when a device of account `userId` counts for `e`. */
function userFollows(e: Entry, userId: string): boolean {
  for (const r of e.requesters.values()) if (r.userId === userId) return true;
  return false;
}

/** Live shape definitions per org, account and device, with their caps and eviction (see the module comment). */
export class ShapeRegistry {
  private readonly entries = new Map<string, Entry>();
  readonly limits: ShapeLimits;

  constructor(limits: Partial<ShapeLimits> = {}) {
    this.limits = { ...SHAPE_LIMITS, ...limits };
  }

  /** Definitions live now (all orgs). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Live definitions of `orgId`, of those the ones `deviceId` counts for, and (with `userId`) the
   * ones any device of that account counts for.
   */
  counts(orgId: string, deviceId: string, userId?: string): { org: number; device: number; user: number } {
    let org = 0;
    let device = 0;
    let user = 0;
    for (const e of this.entries.values()) {
      if (e.orgId !== orgId) continue;
      org++;
      if (e.requesters.has(deviceId)) device++;
      if (userId !== undefined && userFollows(e, userId)) user++;
    }
    return { org, device, user };
  }

  /**
   * Admit `p`'s request for the shape `upstream` (the proxy's upstream query) at `now` (ms):
   * record it, or refuse a definition new to `p`'s device past the device's limit, new to `p`'s
   * account past the account's, or new to the org past the org's. Returns true when `p`'s device
   * did not count for it before (see {@link forget}).
   * @throws AppError RateLimited, kind `shape_limit` (HTTP 429): nothing was created
   */
  admit(p: Principal, upstream: URLSearchParams, now: number): boolean {
    const definition = shapeDefinition(upstream);
    const key = definition.toString();
    const hit = this.entries.get(key);
    if (hit?.requesters.has(p.deviceId)) {
      hit.requesters.set(p.deviceId, { userId: p.userId, at: now });
      return false;
    }
    const { org, device, user } = this.counts(p.orgId, p.deviceId, p.userId);
    if (device >= this.limits.perDevice) throw this.limitError('device');
    if (!(hit && userFollows(hit, p.userId)) && user >= this.limits.perUser) throw this.limitError('user');
    if (hit) {
      hit.requesters.set(p.deviceId, { userId: p.userId, at: now });
      return true;
    }
    if (org >= this.limits.perOrg) throw this.limitError('org');
    this.entries.set(key, { orgId: p.orgId, definition, requesters: new Map([[p.deviceId, { userId: p.userId, at: now }]]) });
    return true;
  }

  private readonly refused = new Set<string>();

  /**
   * The shape service refused `upstream`'s definition (too large for its memory budget): true the
   * first time for that definition, so HQ logs each refusal once, not at every device's retry.
   * Remembers at most 10,000 definitions (then starts over).
   */
  firstRefusal(upstream: URLSearchParams): boolean {
    const key = shapeDefinition(upstream).toString();
    if (this.refused.has(key)) return false;
    if (this.refused.size >= 10_000) this.refused.clear();
    this.refused.add(key);
    return true;
  }

  /** Undo an {@link admit} that returned true (the shape service refused the request: no shape was made for it). */
  forget(deviceId: string, upstream: URLSearchParams): void {
    const key = shapeDefinition(upstream).toString();
    const e = this.entries.get(key);
    if (!e) return;
    e.requesters.delete(deviceId);
    if (e.requesters.size === 0) this.entries.delete(key);
  }

  private limitError(scope: 'device' | 'user' | 'org'): AppError {
    const hours = Math.round((this.limits.idleMs / 3_600_000) * 10) / 10;
    const message = {
      device: `This device already follows ${this.limits.perDevice} distinct shapes, the most HQ keeps for one device (one per synced table, plus room for a few narrowed ones). Nothing was created. Stop following shapes you no longer need: one not requested for ${hours} h is released.`,
      user: `This account's devices already follow ${this.limits.perUser} distinct shapes, the most HQ keeps for one account (its devices share one shape per synced table, plus room for a few narrowed ones each). Nothing was created. Stop following shapes you no longer need, or revoke this account's devices no longer in use: a shape not requested for ${hours} h, or followed only by revoked devices, is released.`,
      org: `This club's devices already follow ${this.limits.perOrg} distinct shapes, the most HQ keeps for one club. Nothing was created. Shapes not requested for ${hours} h, and those only revoked devices followed, are released.`,
    }[scope];
    return new AppError({ code: 'RateLimited', kind: 'shape_limit', message, retryAfterSeconds: Math.ceil(this.limits.idleMs / 1000) });
  }

  /**
   * Release what is idle or orphaned at `now` (ms): a device stops counting for a definition after
   * `idleMs` without a request for it, or at once when `inactive(orgId, deviceIds)` names it
   * (revoked, expired, deactivated). Definitions no device counts for are removed here and
   * returned, for the caller to delete at the shape service.
   */
  async sweep(now: number, inactive: (orgId: string, deviceIds: string[]) => Promise<Set<string>>): Promise<URLSearchParams[]> {
    const byOrg = new Map<string, Set<string>>();
    for (const e of this.entries.values()) {
      const s = byOrg.get(e.orgId) ?? new Set<string>();
      for (const d of e.requesters.keys()) s.add(d);
      byOrg.set(e.orgId, s);
    }
    const gone = new Set<string>();
    for (const [orgId, devices] of byOrg) for (const d of await inactive(orgId, [...devices])) gone.add(d);
    const evicted: URLSearchParams[] = [];
    for (const [key, e] of this.entries) {
      for (const [d, { at }] of e.requesters) if (gone.has(d) || now - at > this.limits.idleMs) e.requesters.delete(d);
      if (e.requesters.size === 0) {
        this.entries.delete(key);
        evicted.push(e.definition);
      }
    }
    return evicted;
  }
}
