/**
 * Background device sync for the app hosts (the Electron main and the web host): one engine per
 * database (main/sync/engine.ts `DeviceSync`), started when the database is enrolled with an HQ
 * server, swapped on a new enrolment, stopped on shutdown. It relays the engine's status to every
 * listener (the app shell's indicator, through the `sync.events` stream) and re-reads it on a
 * slow tick, so a local write's new pending upload shows without waiting for the engine.
 *
 * The device token stays inside the engine: nothing here reads, logs or returns it.
 */
import { hostname } from 'node:os';
import type { IssuedSignInCode } from '../../models/contract';
import { NotConfigured } from '../../models/errors';
import type { DeviceSyncStatus, PinSetAtHq, SyncConflict } from '../../models/sync';
import type { Db } from '../data/db';

/** What the app needs of the device sync engine (`DeviceSync` in main/sync/engine.ts). */
export interface SyncEngine {
  status(): DeviceSyncStatus;
  conflicts(): SyncConflict[];
  /** @throws NotFound, Conflict (being uploaded, or already applied) */
  discard(changesetId: string, by?: string | null): void;
  /** Sign a user in to HQ as themselves on this device (their owner approvals become verifiable). @throws as HQ's sign-in */
  signInUser(input: { email: string; pin: string; code: string }): Promise<{ userId: string; signedInAt: string }>;
  /**
   * Ask HQ for a one-time sign-in code for `targetUserId`, as `actorUserId`, the account that enrolled
   * this device. @throws NotConfigured, Forbidden (another user; HQ's refusal), Unauthenticated, NotFound, Unavailable
   */
  issueEnrolmentCode(actorUserId: string, targetUserId: string): Promise<IssuedSignInCode>;
  /** Set `targetUserId`'s PIN at HQ as `actorUserId` (the enrolled account). @throws NotConfigured, Forbidden, NotFound, Unauthenticated, Unavailable */
  setPinAtHq(actorUserId: string, targetUserId: string, pin: string): Promise<PinSetAtHq | null>;
  /** Whether `userId` can record approvals at HQ from this device. */
  hqSignIn(userId: string): { signedIn: boolean; signedInAt: string | null; enrolledHere: boolean };
  syncOnce(): Promise<unknown>;
  start(): void;
  stop(): Promise<void>;
  onChange(listener: (s: DeviceSyncStatus) => void): () => void;
}

/** How to make an engine: open the one a database holds, or enrol it anew at HQ. */
export interface SyncEngineFactory {
  open(db: Db): SyncEngine;
  /** @throws Validation, Unauthenticated, RateLimited, Forbidden, Unavailable (from HQ) */
  enrol(db: Db, input: { hqUrl: string; email: string; pin: string; code: string; deviceName: string }): Promise<SyncEngine>;
}

/** Options of {@link AppSync}. */
export interface AppSyncOptions {
  /** Diagnostics (never a token, PIN or record content). */
  log?: (line: string) => void;
  /** How often the status is re-read for listeners, ms (0: never). @default 2000 */
  tickMs?: number;
  /** Longest wait for the engine to stop (shutdown, re-enrolment), ms. @default 5000 */
  stopTimeoutMs?: number;
}

/** The status of a database that has no engine (not enrolled). */
export const NOT_ENROLLED: DeviceSyncStatus = Object.freeze({
  enrolled: false,
  hq_url: null,
  device_id: null,
  online: false,
  syncing: false,
  pending_uploads: 0,
  conflicts: 0,
  last_synced_at: null,
  last_error: null,
});

/** Background sync of one app database (see the module comment). */
export class AppSync {
  private engine: SyncEngine;
  private offEngine: () => void;
  private readonly listeners = new Set<(s: DeviceSyncStatus) => void>();
  private lastKey = '';
  private readonly timer: NodeJS.Timeout | null;
  private readonly log: (line: string) => void;
  private readonly stopTimeoutMs: number;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly factory: SyncEngineFactory,
    opts: AppSyncOptions = {},
  ) {
    this.log = opts.log ?? (() => undefined);
    this.stopTimeoutMs = opts.stopTimeoutMs ?? 5000;
    this.engine = factory.open(db);
    this.offEngine = this.engine.onChange(() => this.emit());
    const tick = opts.tickMs ?? 2000;
    this.timer = tick > 0 ? setInterval(() => this.emit(), tick) : null;
    this.timer?.unref();
  }

  /** Start the engine in the background when this database is enrolled; a no-op otherwise. */
  startIfEnrolled(): boolean {
    if (this.closed || !this.engine.status().enrolled) return false;
    this.engine.start();
    this.log('sync: background sync started');
    return true;
  }

  /** The device's sync status now. */
  status(): DeviceSyncStatus {
    return this.engine.status();
  }

  /**
   * Enrol this database at HQ (replacing an earlier enrolment) and start syncing.
   * `deviceName` defaults to the computer's name.
   */
  async enrol(input: { hqUrl: string; email: string; pin: string; code: string; deviceName?: string | undefined }): Promise<DeviceSyncStatus> {
    const next = await this.factory.enrol(this.db, {
      hqUrl: input.hqUrl,
      email: input.email,
      pin: input.pin,
      code: input.code,
      deviceName: input.deviceName?.trim() || hostname() || 'Clinic device',
    });
    await this.stopEngine(this.engine);
    this.offEngine();
    this.engine = next;
    this.offEngine = next.onChange(() => this.emit());
    this.log('sync: device enrolled');
    if (!this.closed) next.start();
    this.emit();
    return next.status();
  }

  /**
   * One sync pass now (upload, then pull to up-to-date); resolves with the status after it.
   * @throws NotConfigured (not enrolled), and the pass's typed error (e.g. Unavailable, Unauthenticated)
   */
  async syncNow(): Promise<DeviceSyncStatus> {
    this.requireEnrolled();
    try {
      await this.engine.syncOnce();
    } finally {
      this.emit();
    }
    return this.engine.status();
  }

  /** Changesets HQ rejected, kept until re-planned or discarded. */
  conflicts(): SyncConflict[] {
    if (!this.engine.status().enrolled) return [];
    return this.engine.conflicts();
  }

  /** Discard a rejected changeset, as user `by` (recorded on the device). @throws NotConfigured, NotFound, Conflict */
  discard(changesetId: string, by: string | null = null): DeviceSyncStatus {
    this.requireEnrolled();
    this.engine.discard(changesetId, by);
    this.log(`sync: changeset ${changesetId} discarded${by ? ` by user ${by}` : ''}`);
    this.emit();
    return this.engine.status();
  }

  /**
   * Sign `email` in to HQ as themselves on this device (PIN and one-time sign-in code checked by
   * HQ, neither stored), so the owner approvals they give here are verifiable at HQ.
   * @throws NotConfigured, Unauthenticated, RateLimited, Forbidden, Unavailable
   */
  async signInUser(input: { email: string; pin: string; code: string }): Promise<{ signed_in: boolean; signed_in_at: string | null }> {
    this.requireEnrolled();
    const r = await this.engine.signInUser(input);
    this.log('sync: a user signed in to HQ on this device');
    return { signed_in: true, signed_in_at: r.signedInAt };
  }

  /**
   * A one-time HQ sign-in code for `targetUserId`, issued by HQ with the device token of the account
   * that enrolled this device, which `actorUserId` must be (never a token {@link signInUser} stored
   * for another user). Never logged or kept.
   * @throws NotConfigured (not enrolled), Forbidden (the actor did not enrol this device; HQ's
   *   refusal), Unauthenticated / NotFound (HQ's answer), RateLimited, Unavailable (HQ not reachable)
   */
  async issueEnrolmentCode(actorUserId: string, targetUserId: string): Promise<IssuedSignInCode> {
    this.requireEnrolled();
    const issued = await this.engine.issueEnrolmentCode(actorUserId, targetUserId);
    this.log('sync: an HQ sign-in code was issued from this device');
    return issued;
  }

  /**
   * Set another account's sign-in PIN at HQ, as `actorUserId` (the account that enrolled this
   * device). Returns HQ's row version and updated_at after the write (null from an older HQ).
   * @throws NotConfigured (not enrolled), Forbidden, NotFound, RateLimited, Unauthenticated, Unavailable
   */
  async setPinAtHq(actorUserId: string, targetUserId: string, pin: string): Promise<PinSetAtHq | null> {
    this.requireEnrolled();
    const at = await this.engine.setPinAtHq(actorUserId, targetUserId, pin);
    this.log('sync: a sign-in PIN was set at HQ from this device');
    return at;
  }

  /** Whether this app's database is enrolled for sync (PINs are then set at HQ). */
  get enrolled(): boolean {
    return this.engine.status().enrolled;
  }

  /** Whether `userId` is signed in to HQ on this device (the enrolled user always is), and whether they enrolled it. */
  hqSignIn(userId: string): { signed_in: boolean; signed_in_at: string | null; enrolled_here: boolean } {
    if (!this.engine.status().enrolled) return { signed_in: false, signed_in_at: null, enrolled_here: false };
    const r = this.engine.hqSignIn(userId);
    return { signed_in: r.signedIn, signed_in_at: r.signedInAt, enrolled_here: r.enrolledHere };
  }

  /** Call `listener` with each new status. Returns the unsubscribe function. */
  onChange(listener: (s: DeviceSyncStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stop syncing (shutdown). Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.offEngine();
    this.listeners.clear();
    await this.stopEngine(this.engine);
  }

  /**
   * Stop an engine, waiting at most `stopTimeoutMs`: a stop that does not settle (a live shape
   * request that ignores its abort) must not hold the app's shutdown or a re-enrolment.
   */
  private async stopEngine(engine: SyncEngine): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      engine.stop().then(
        () => 'stopped' as const,
        (e: unknown) => (this.log(`sync: stop failed: ${e instanceof Error ? e.name : typeof e}`), 'failed' as const),
      ),
      new Promise<'timeout'>((r) => {
        timer = setTimeout(() => r('timeout'), this.stopTimeoutMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.log(`sync: the engine did not stop within ${this.stopTimeoutMs} ms; going on without waiting`);
  }

  private requireEnrolled(): void {
    if (!this.engine.status().enrolled)
      throw new NotConfigured(
        'This device is not enrolled with an HQ server. Enrol it in Settings → Sync (HQ address, email, PIN and a sign-in code from a club owner or administrator).',
      );
  }

  private emit(): void {
    if (this.listeners.size === 0 || this.closed) return;
    let s: DeviceSyncStatus;
    try {
      s = this.engine.status();
    } catch {
      return; // the database is closing
    }
    const key = JSON.stringify(s);
    if (key === this.lastKey) return;
    this.lastKey = key;
    for (const l of this.listeners) {
      try {
        l(s);
      } catch {
        // A listener's failure is its own.
      }
    }
  }
}

/**
 * The status as a stream: the current status at once, then each change, until the consumer
 * returns (which unsubscribes at once, even while waiting).
 */
export function statusStream(sync: Pick<AppSync, 'status' | 'onChange'>): AsyncIterable<DeviceSyncStatus> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<DeviceSyncStatus> {
      let pending: DeviceSyncStatus | null = sync.status();
      let waiter: ((r: IteratorResult<DeviceSyncStatus>) => void) | null = null;
      let done = false;
      const off = sync.onChange((s) => {
        if (waiter) {
          const w = waiter;
          waiter = null;
          w({ value: s, done: false });
        } else pending = s;
      });
      const finish = (): Promise<IteratorResult<DeviceSyncStatus>> => {
        done = true;
        off();
        if (waiter) waiter({ value: undefined, done: true });
        waiter = null;
        return Promise.resolve({ value: undefined, done: true });
      };
      return {
        next: () => {
          if (done) return Promise.resolve({ value: undefined, done: true });
          if (pending) {
            const v = pending;
            pending = null;
            return Promise.resolve({ value: v, done: false });
          }
          return new Promise((r) => (waiter = r));
        },
        return: finish,
      };
    },
  };
}
