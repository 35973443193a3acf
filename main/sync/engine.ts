/**
 * The device side of sync (shared/design/sync.md, issue 12): this SQLite file as a local-first
 * replica of the club's HQ.
 *
 * - Enrol: `DeviceSync.enrol` signs the device in at HQ (`POST /v1/devices`, email + PIN) and
 *   stores the device token sealed under the machine key (main/security/secret-box.ts), never in
 *   a log line or an error.
 * - Read path: one `@electric-sql/client` ShapeStream per synced table through HQ's proxy
 *   (`GET /v1/shape`, device token in `Authorization`), run with the application of its messages
 *   in the shape worker thread through the worker's own connection to the file (shape-feed.ts,
 *   shape-worker.ts), or in this thread without one. Messages are applied in bounded
 *   transactions (`applySliceRows` rows each; main/sync/shape-apply.ts); the one that ends an
 *   `up-to-date` batch stores the shape's handle and offset with the rows, so a restart resumes
 *   there. A kill between slices re-applies at most that catch-up: every message carries the
 *   whole row (`replica=full`), so re-applying converges to the same rows. `must-refetch`
 *   replaces the table's synced rows with a fresh snapshot; optimistic local rows are kept.
 * - Write path: the uploader sends the outbox in order (`POST /v1/changesets`), records each
 *   outcome (applied with HQ's txid / rejected with reason and HQ's rows) and keeps optimistic rows
 *   until the shapes deliver that txid (main/data/sync.ts). Failures back off exponentially and
 *   retry on their own.
 * - Owner approvals: HQ applies a *needs owner* changeset only with proof the owner acted
 *   (sync/write/approvals.ts). On a device enrolled by the owner the upload itself is the proof.
 *   On a shared device, an owner signs in to HQ as themselves once while online
 *   (`signInUser`: their own device token, sealed, kept in `sync_user_token`); before a batch is
 *   uploaded, the approvals (and owner-authored changes) it holds are recorded at HQ under that
 *   owner's own token (`POST /v1/approvals`, bound to each changeset's content hash). Without
 *   such a sign-in HQ rejects the change `approval_unverified`, a visible conflict.
 * - Changes waiting for an owner: a *needs owner* proposal made here, and a decline made here,
 *   are reported to HQ before each outbox upload and again after each upload request
 *   (`POST /v1/proposals`); one planned on a change of this device still waiting to be uploaded
 *   is held back until that change is applied at HQ, and never reported if HQ refuses it or if it
 *   was decided here first (main/data/sync.ts `pendingProposalEvents`); the `hq_proposal` shape
 *   brings every such proposal of the club to this device (main/data/sync.ts
 *   `materializeProposals`), so an owner signed in here decides it, and a proposal made here takes
 *   HQ's outcome. The approval itself is the changeset, uploaded with the proposal's id.
 * - Other authors: HQ applies a changeset whose author is not the enrolled user without that
 *   author's own attestation only when the enrolled user could have made it themselves
 *   (models/authorship.ts); a sign-off always needs it. The same path: a user who signed in to HQ
 *   on this device has each of their changesets attested before upload; otherwise HQ rejects
 *   those it needs it for `signoff_unverified` / `author_unverified` (a visible conflict; a
 *   doctor's ordinary clinical change on a physio's laptop needs nothing of this).
 *
 * Errors are typed (models/errors.ts): `NotConfigured` (not enrolled), `Unavailable` (HQ not
 * reachable or not ready; kind `shape_too_large`: HQ answered but its shape service will not hold
 * a table's shape, see {@link isRefusedShape}), `Unauthenticated` (token revoked or expired: sync
 * stops), `Forbidden`, `RateLimited` kind `shape_limit`.
 */
import { setMaxListeners } from 'node:events';
import { FetchError } from '@electric-sql/client';
import { AppError, NotConfigured, type ErrorPayload } from '../../models/errors';
import { hasPermission, NEEDS_OWNER_APPROVER, SELF_SCOPED_ROLES, type Role } from '../../models/roles';
import { uploaderCannotVouch } from '../../models/authorship';
import type { RowChange, RuleActor } from '../../models/changeset';
import { mentionsSignoff } from '../../models/policy';
import type {
  ChangesetOutcome,
  ChangesetUploadResult,
  DeviceSyncStatus,
  SyncConflict,
  SyncReport,
  UploadedApproval,
  UploadedChangeset,
  ProposalUploadResult,
} from '../../models/sync';
import { MAX_CHANGESETS_PER_UPLOAD, MAX_PROPOSAL_EVENTS_PER_UPLOAD, PinSetAtHq } from '../../models/sync';
import { TABLE_NAMES, TABLES } from '../../models/tables';
import type { Db } from '../data/db';
import {
  deleteUserToken,
  discardChangeset,
  getEnrolment,
  getUserToken,
  saveUserToken,
  listConflicts,
  markShapeForbidden,
  pendingUploads,
  pendingProposalEvents,
  resetShape,
  recordProposalEventOutcome,
  type PendingProposalEvent,
  pruneSeenTxids,
  recordSyncOutcome,
  recordUploadAttemptFailed,
  recordUploadOutcome,
  saveEnrolment,
  shapeState,
  syncCounts,
  ensureShapeStates,
  unsettledUploads,
  uploadContentHash,
  onOutboxAppended,
  uploadState,
  isRowHeldHere,
  type SyncEnrolmentRow,
} from '../data/sync';
import { machineSecretBox, SecretBox, type SealedSecret } from '../security/secret-box';
import { findUserById } from '../data/identity';
import { isShapeLimit, isShapeTooLarge, SHAPE_DEADLINES, withResponseDeadline, withShapeRefusalFinal } from './fetch-deadline';
import { inThreadFeed, ShapeWorkerHost, type ShapeFeedOptions } from './shape-feed';
import { ShapeApplier, type ApplyEvent, type ConsumeResult } from './shape-apply';

/** Options of the engine. Defaults suit the app; tests shorten the delays. */
export interface DeviceSyncOptions {
  /** Machine key for the device token. @default ATHLETE_SECRET_KEY or machine.key next to the database */
  box?: SecretBox;
  /**
   * Rows per apply transaction: in the shape worker, how long the engine's own writes (and the
   * app's) may wait for the file's write lock; in this thread, the longest block of the event loop
   * (it runs between them). @default 2000 in the shape worker, 500 in this thread
   */
  applySliceRows?: number;
  /** Uploader back-off after a failure, ms: doubles from `initialMs` to `maxMs` (full jitter). @default 500..30000 */
  backoff?: { initialMs: number; maxMs: number };
  /** Live mode: how often the uploader looks for new outbox entries, ms. @default 500 */
  pollMs?: number;
  /**
   * Live mode with nothing new: how often a long poll that came back up to date records the last
   * successful sync (the status keeps up with an idle but connected device without a write per
   * poll), ms. @default 15000
   */
  idleSyncedMarkMs?: number;
  /** Live shape requests: the client's retry delays, ms. @default 500..10000 */
  streamBackoff?: { initialMs: number; maxMs: number };
  /**
   * How long HQ may take to answer a live shape request (`liveMs`) and any other (`otherMs`)
   * before the request fails and the device counts HQ as unreachable (main/sync/fetch-deadline.ts).
   * @default 30000 / 120000
   */
  shapeDeadlines?: { liveMs: number; otherMs: number };
  /**
   * Live mode: how long to wait before asking again for a shape HQ refused as too large for its
   * shape service's memory budget (kind `shape_too_large`), ms: doubles from `initialMs` to `maxMs`.
   * The other tables stay live meanwhile. @default 300000..3600000 (5 min → 1 h)
   */
  refusedShapeBackoff?: { initialMs: number; maxMs: number };
  /** Shapes fetched at once by `syncOnce`. @default 4 */
  concurrency?: number;
  /**
   * How long a pass waits, after its pull, for the shapes to deliver the changesets HQ applied
   * (HQ's commit reaches the shape log through logical replication, which can lag its answer), ms.
   * Those still undelivered then stay optimistic and settle in a later pass. @default 10000
   */
  settleTimeoutMs?: number;
  /**
   * Run the shape streams in a worker thread that also applies their messages through its own
   * connection to the database file (fetch, the client's parse of each response and SQLite's
   * writes; main/sync/shape-feed.ts, shape-worker.ts), so none of it blocks this thread's event
   * loop. Falls back to this thread (streams and applies) when the worker's file is not present or
   * the database is in memory. @default true
   */
  shapeWorker?: boolean;
  /** Changesets per upload request (≤ 100). @default 50 */
  uploadBatch?: number;
  /** Diagnostics (never a token). */
  log?: (line: string) => void;
  /**
   * Called at the engine's durable steps, synchronously: `upload:response` (HQ answered, nothing
   * recorded yet), `upload:recorded` (a batch's outcomes committed), `apply:slice` (a non-final
   * slice of a shape batch committed), `apply:commit` (a batch committed with its offset). The
   * kill -9 tests end the process at these points.
   */
  trace?: (point: 'upload:response' | 'upload:recorded' | 'apply:slice' | 'apply:commit', detail: string) => void;
}

/**
 * Enrolment input: HQ's base URL, the user's email and PIN, the one-time HQ sign-in code an owner
 * or administrator issued for that account (`XXXX-XXXX-XXXX`, sync/auth/enrolment-codes.ts), a
 * name for this device.
 */
export interface EnrolInput {
  hqUrl: string;
  email: string;
  pin: string;
  code: string;
  deviceName: string;
}

/** A one-time HQ sign-in code as HQ issued it (POST /v1/enrolment-codes; sync/auth/enrolment-codes.ts). */
export interface IssuedEnrolmentCode {
  /** `XXXX-XXXX-XXXX`, usable once. */
  code: string;
  /** ISO-8601 UTC. */
  expires_at: string;
  user: { id: string; email: string; display_name: string; role: string };
}

type Listener = (status: DeviceSyncStatus) => void;

/** What POST /v1/devices answers (sync/auth/devices.ts IssuedDevice). */
interface IssuedDevice {
  device_id: string;
  token: string;
  token_hint: string;
  expires_at: string;
  user: { id: string; display_name: string; role: string; email: string; linked_athlete_id: string | null };
  org: { id: string; name: string };
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));
/** Rows per apply transaction by default: in the shape worker / in this thread (DeviceSyncOptions.applySliceRows). */
const WORKER_SLICE_ROWS = 2000;
const THREAD_SLICE_ROWS = 500;
/** A database on disk (another connection, in the shape worker, can open the same file). */
const isFileDb = (db: Db): boolean => db.path !== '' && db.path !== ':memory:';

function normaliseUrl(u: string): string {
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    throw new AppError({
      code: 'Validation',
      message: `"${u}" is not a URL. Give the HQ address, e.g. http://hq.local:5180.`,
      issues: [{ path: 'hqUrl', message: 'not a URL' }],
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new AppError({
      code: 'Validation',
      message: 'The HQ address must start with http:// or https://.',
      issues: [{ path: 'hqUrl', message: 'not http(s)' }],
    });
  return url.toString().replace(/\/+$/, '');
}

/** An HTTP error answer of HQ as a typed error (its `{error: {code, message}}` body when present). */
async function errorFromResponse(res: Response, what: string): Promise<AppError> {
  let payload: Partial<ErrorPayload> | undefined;
  try {
    payload = ((await res.json()) as { error?: Partial<ErrorPayload> }).error;
  } catch {
    payload = undefined;
  }
  if (res.status >= 500 || res.status === 404 || !payload?.code) {
    if (res.status >= 500)
      return new AppError({ code: 'Unavailable', message: `HQ could not ${what} right now (HTTP ${res.status}); local changes are kept and sync retries.` });
  }
  const code =
    payload?.code && payload.code !== 'Internal' ? payload.code : res.status === 401 ? 'Unauthenticated' : res.status === 403 ? 'Forbidden' : 'Internal';
  return new AppError({
    ...(payload ?? {}),
    code,
    message: payload?.message ?? `HQ refused to ${what} (HTTP ${res.status}).`,
  } as ErrorPayload);
}

/**
 * True for the engine's error when HQ's shape service refused a table's shape as larger than its
 * whole memory budget (`Unavailable`, kind `shape_too_large`): HQ answered, so the device stays
 * online; a pass ends with it after pulling the other tables; live mode asks for that table again
 * after {@link DeviceSyncOptions.refusedShapeBackoff} and keeps the rest live.
 */
export function isRefusedShape(err: unknown): err is AppError {
  return err instanceof AppError && err.code === 'Unavailable' && err.details.kind === 'shape_too_large';
}

function unreachable(hqUrl: string, e: unknown): AppError {
  const reason = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
  return new AppError({ code: 'Unavailable', message: `HQ at ${hqUrl} cannot be reached (${reason}); local changes are kept and sync retries.` });
}

/**
 * The tables this device syncs for `role`, parents before children: the org row, users, then
 * models/tables.ts in its order, then the activity log. Athlete accounts sync only tables with an
 * athlete column (their own rows); a table the role may not read is not requested at all.
 */
export function syncedTables(role: string): string[] {
  const selfScoped = SELF_SCOPED_ROLES.has(role as never);
  const out = ['organization', 'app_user'];
  for (const t of TABLE_NAMES) {
    const def = TABLES[t];
    if (hasPermission(role, def.read) && (!selfScoped || def.athleteColumn)) out.push(t);
  }
  if (hasPermission(role, 'activity.read')) out.push('activity');
  // Changes waiting for an owner, proposed on any staff device of the club (HQ 0010).
  if (!selfScoped) out.push('hq_proposal');
  return out;
}
const ALL_TABLES = ['organization', 'app_user', ...TABLE_NAMES, 'activity', 'hq_proposal'];

/** A sync pass's report before anything moved. */
function emptyReport(): SyncReport {
  return { uploaded: 0, rejected: 0, pending: 0, pulled: {}, refetched: [], forbidden: [], unsettled: 0, ms: 0 };
}

/** The device sync engine for one database file. */
export class DeviceSync {
  private readonly box: SecretBox;
  private readonly sliceRows: number | undefined;
  private readonly listeners = new Set<Listener>();
  private readonly inFlight = new Set<string>();
  /** Live mode: tables whose shape HQ refused as too large (kept as the last error until they sync). */
  private readonly refused = new Map<string, AppError>();
  private lastEmitted = '';
  private online = false;
  private syncing = false;
  private passChain: Promise<unknown> = Promise.resolve();
  private live: { ctrl: AbortController; done: Promise<void>; streams: Map<string, AbortController> } | null = null;
  private wake: (() => void) | null = null;
  private stopped = true;
  private readonly log: (line: string) => void;
  private readonly shapeWorker: ShapeWorkerHost | { available: false; openApplying: never; close(): void };

  constructor(
    private readonly db: Db,
    private readonly opts: DeviceSyncOptions = {},
  ) {
    this.box = opts.box ?? machineSecretBox(db.path);
    this.sliceRows = opts.applySliceRows === undefined ? undefined : Math.max(1, opts.applySliceRows);
    this.log = opts.log ?? (() => undefined);
    this.shapeFetch = this.track(withShapeRefusalFinal(withResponseDeadline((input, init) => fetch(input, init), opts.shapeDeadlines ?? SHAPE_DEADLINES)));
    this.shapeWorker = opts.shapeWorker === false ? { available: false, openApplying: undefined as never, close: () => undefined } : new ShapeWorkerHost();
  }

  /**
   * Sign this device in at HQ with a user's email, PIN and one-time sign-in code and store the
   * enrolment (replacing an earlier one; every shape then starts from scratch).
   * @throws Validation (bad URL, no code), Unauthenticated (unknown email, wrong PIN or code,
   *   inactive user), RateLimited (locked after wrong PINs or codes), Forbidden, Unavailable (HQ unreachable)
   */
  static async enrol(db: Db, input: EnrolInput, opts: DeviceSyncOptions = {}): Promise<DeviceSync> {
    const hqUrl = normaliseUrl(input.hqUrl);
    let res: Response;
    try {
      res = await fetch(`${hqUrl}/v1/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: input.email, pin: input.pin, code: input.code, name: input.deviceName }),
        signal: AbortSignal.timeout(20_000),
      });
    } catch (e) {
      throw unreachable(hqUrl, e);
    }
    if (!res.ok) throw await errorFromResponse(res, 'sign this device in');
    const issued = (await res.json()) as IssuedDevice;
    const engine = new DeviceSync(db, opts);
    saveEnrolment(db, {
      hq_url: hqUrl,
      device_id: issued.device_id,
      device_name: input.deviceName,
      org_id: issued.org.id,
      org_name: issued.org.name,
      user_id: issued.user.id,
      user_email: issued.user.email,
      user_role: issued.user.role,
      token_sealed: JSON.stringify(engine.box.seal(issued.token)),
      token_hint: issued.token_hint,
      token_expires_at: issued.expires_at,
      enrolled_at: new Date().toISOString(),
    });
    engine.emit();
    return engine;
  }

  /**
   * Sign a user of this device's club in to HQ as themselves on this device (email + PIN + a
   * one-time sign-in code, checked by HQ; neither is stored): their own device token is kept
   * sealed, and used only to record
   * at HQ their owner approvals and RTP sign-off attestations made on this device (see the module
   * header). The enrolled user needs none (the device token is theirs). Replaces an earlier sign-in of the same user.
   * @throws NotConfigured (not enrolled), Validation (no code), Unauthenticated (wrong email, PIN
   *   or code), RateLimited, Forbidden (an account of another organisation), Unavailable (HQ unreachable)
   */
  async signInUser(input: { email: string; pin: string; code: string }): Promise<{ userId: string; signedInAt: string }> {
    const e = this.enrolment();
    let res: Response;
    try {
      res = await this.trackedFetch(`${e.hq_url}/v1/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: input.email, pin: input.pin, code: input.code, name: `${e.device_name} (${input.email.trim()})`.slice(0, 100) }),
        signal: AbortSignal.timeout(20_000),
      });
    } catch (err) {
      throw unreachable(e.hq_url, err);
    }
    if (!res.ok) throw await errorFromResponse(res, 'sign you in');
    const issued = (await res.json()) as IssuedDevice;
    const at = new Date().toISOString();
    if (issued.org.id !== e.org_id) {
      // Do not keep a token of another club; revoke it at once (best effort).
      await this.trackedFetch(`${e.hq_url}/v1/devices/${issued.device_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${issued.token}` } }).catch(
        () => undefined,
      );
      throw new AppError({
        code: 'Forbidden',
        message: `That account belongs to ${issued.org.name}, not to ${e.org_name}, which this device is enrolled with.`,
      });
    }
    if (issued.user.id === e.user_id) return { userId: issued.user.id, signedInAt: at };
    saveUserToken(this.db, {
      user_id: issued.user.id,
      hq_device_id: issued.device_id,
      token_sealed: JSON.stringify(this.box.seal(issued.token)),
      token_hint: issued.token_hint,
      token_expires_at: issued.expires_at,
      signed_in_at: at,
    });
    return { userId: issued.user.id, signedInAt: at };
  }

  /**
   * Ask HQ for a one-time sign-in code for the account `targetUserId`, as `actorUserId`, who must be
   * the account that enrolled this device (its device token; never a token {@link signInUser}
   * stored for another user of a shared device). HQ decides who may (sync/auth/enrolment-codes.ts
   * `enrolmentCodeRefusal`: oneself, or someone who may set the account's PIN). The code is
   * returned once and not stored.
   * @throws NotConfigured (not enrolled), Unauthenticated (HQ refused the token), Forbidden (the
   *   actor is not this device's enrolled user; or HQ's refusal), NotFound, Unavailable (HQ unreachable)
   */
  async issueEnrolmentCode(actorUserId: string, targetUserId: string): Promise<IssuedEnrolmentCode> {
    const e = this.enrolment();
    // Only with the token of the account that enrolled this device. A user who signed in to HQ on a
    // shared device ({@link signInUser}) keeps a token here that whoever signs in locally as them
    // (a PIN, which the device's own hashes give away) could use to mint codes for their account,
    // and so HQ tokens anywhere: an owner's among them (issue 12 re-review). They issue codes from a
    // device enrolled with their own account.
    if (actorUserId !== e.user_id)
      throw new AppError({
        code: 'Forbidden',
        message:
          'HQ sign-in codes are issued from a device enrolled with your own account, not from a device someone else enrolled. Use your own device, or ask a club owner or administrator.',
      });
    const token = e.token;
    let res: Response;
    try {
      res = await this.trackedFetch(`${e.hq_url}/v1/enrolment-codes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ user_id: targetUserId }),
        signal: AbortSignal.timeout(20_000),
      });
    } catch (err) {
      throw unreachable(e.hq_url, err);
    }
    if (!res.ok) {
      if (res.status === 401 && actorUserId !== e.user_id) deleteUserToken(this.db, actorUserId);
      throw await errorFromResponse(res, 'issue a sign-in code');
    }
    return (await res.json()) as IssuedEnrolmentCode;
  }

  /**
   * Set account `targetUserId`'s sign-in PIN at HQ (`POST /v1/users/:id/pin`), as `actorUserId`,
   * who must be the account that enrolled this device (as for sign-in codes: never a token another
   * user left here). HQ applies its own rules (sync/auth/account-pins.ts); the new hash reaches every
   * device in the `app_user` shape. The PIN is sent once over the HQ connection, never logged or kept.
   * Returns the account's row version and `updated_at` at HQ after the write, or null when HQ's
   * answer does not carry them (an HQ older than this device).
   * @throws Forbidden (another user than the enrolled account; HQ's refusal), NotFound, RateLimited, Unauthenticated, Unavailable
   */
  async setPinAtHq(actorUserId: string, targetUserId: string, pin: string): Promise<PinSetAtHq | null> {
    const e = this.enrolment();
    if (actorUserId !== e.user_id)
      throw new AppError({
        code: 'Forbidden',
        message:
          'This device is signed in to HQ, so PINs are set at HQ, from a device enrolled with your own account (every device then gets the new PIN). Use your own device, or ask the person who enrolled this one.',
      });
    // A change of this account made here and not yet uploaded goes first (upload only, in outbox
    // order, under the upload lock): HQ's PIN write would otherwise move the row past the version
    // that change expects, and it would come back as a stale conflict (review i12i minor 1).
    if (isRowHeldHere(this.db, 'app_user', targetUserId)) {
      await this.uploadAll(e, emptyReport());
    }
    let res: Response;
    try {
      res = await this.trackedFetch(`${e.hq_url}/v1/users/${encodeURIComponent(targetUserId)}/pin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${e.token}` },
        body: JSON.stringify({ pin }),
        signal: AbortSignal.timeout(20_000),
      });
    } catch (err) {
      throw unreachable(e.hq_url, err);
    }
    if (!res.ok) throw await errorFromResponse(res, "set this account's PIN");
    const body: unknown = await res.json().catch(() => null);
    const parsed = PinSetAtHq.safeParse(body);
    return parsed.success && parsed.data.user_id === targetUserId ? parsed.data : null;
  }

  /**
   * Whether `userId` can record approvals at HQ from this device: the enrolled user, or signed in to
   * HQ here ({@link signInUser}); `enrolledHere`: they enrolled it (only then do they issue sign-in
   * codes from it, {@link issueEnrolmentCode}).
   */
  hqSignIn(userId: string): { signedIn: boolean; signedInAt: string | null; enrolledHere: boolean } {
    const e = getEnrolment(this.db);
    if (e?.user_id === userId) return { signedIn: true, signedInAt: e.enrolled_at, enrolledHere: true };
    const t = getUserToken(this.db, userId);
    return { signedIn: !!t, signedInAt: t?.signed_in_at ?? null, enrolledHere: false };
  }

  // ------------------------------------------------------------------------------------------
  // Status

  /** The device's sync state now (cheap: two counts and the enrolment row). */
  status(): DeviceSyncStatus {
    const e = getEnrolment(this.db);
    const { pending, conflicts } = syncCounts(this.db);
    return {
      enrolled: !!e,
      hq_url: e?.hq_url ?? null,
      device_id: e?.device_id ?? null,
      online: !!e && this.online,
      syncing: this.syncing,
      pending_uploads: pending,
      conflicts,
      last_synced_at: e?.last_synced_at ?? null,
      last_error: e?.last_error_code ? { code: e.last_error_code, message: e.last_error_message ?? '' } : null,
    };
  }

  /** Call `listener` with the new status whenever it changes. Returns the unsubscribe function. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    if (this.listeners.size === 0) return;
    const s = this.status();
    const key = JSON.stringify(s);
    if (key === this.lastEmitted) return;
    this.lastEmitted = key;
    for (const l of this.listeners) {
      try {
        l(s);
      } catch (e) {
        this.log(`sync: a status listener failed: ${(e as Error).message}`);
      }
    }
  }

  /** Changesets HQ rejected, kept until discarded or re-planned. */
  conflicts(): SyncConflict[] {
    return listConflicts(this.db);
  }

  /**
   * Drop a pending or rejected changeset and its optimistic rows (the rows show the server's); `by`:
   * the user who discarded it, recorded with it (null: not known, e.g. a test or the CLI).
   * @throws NotFound, Conflict (being uploaded right now, or already applied at HQ)
   */
  discard(changesetId: string, by: string | null = null): void {
    if (this.inFlight.has(changesetId)) throw new AppError({ code: 'Conflict', message: 'This change is being uploaded right now; try again in a moment.' });
    discardChangeset(this.db, changesetId, new Date().toISOString(), by);
    this.emit();
  }

  /** A local write happened: upload soon (live mode). */
  nudge(): void {
    this.wake?.();
  }

  private enrolment(): SyncEnrolmentRow & { token: string } {
    const e = getEnrolment(this.db);
    if (!e) throw new NotConfigured('This device is not enrolled with an HQ server. Enrol it first (Settings → Sync, or `npm run cli -- enrol`).');
    let token: string;
    try {
      token = this.box.open(JSON.parse(e.token_sealed) as SealedSecret);
    } catch {
      throw new AppError({
        code: 'Unauthenticated',
        message: 'The stored device token cannot be decrypted with this machine key (ATHLETE_SECRET_KEY or machine.key changed). Enrol the device again.',
      });
    }
    return { ...e, token };
  }

  /** The role to sync for: the enrolled user's row as HQ last sent it, else the role at enrolment. */
  private currentRole(e: SyncEnrolmentRow): string {
    return findUserById(this.db, e.user_id)?.role ?? e.user_role;
  }

  /**
   * `inner` that keeps `online` true while HQ answers (any HTTP status but 502–504) and false when
   * it cannot be reached or does not answer in time (a failure that is not the caller's own abort).
   */
  private track(inner: typeof fetch): typeof fetch {
    return async (input, init) => {
      try {
        const res = await inner(input, init);
        this.setOnline(res.status < 502 || res.status > 504);
        return res;
      } catch (e) {
        if (!init?.signal?.aborted) this.setOnline(false);
        throw e;
      }
    };
  }
  private readonly trackedFetch: typeof fetch = this.track((input, init) => fetch(input, init));
  /** Shape requests in this thread: tracked, with HQ's answer due by the deadlines. */
  private readonly shapeFetch: typeof fetch;

  private setOnline(online: boolean): void {
    if (this.online === online) return;
    this.online = online;
    this.emit();
  }

  // ------------------------------------------------------------------------------------------
  // One pass

  /**
   * Upload the outbox, then pull every shape to up-to-date. Passes never overlap (a second call
   * waits for the first).
   * @throws NotConfigured, Unavailable, Unauthenticated, Forbidden — after recording it as the last error
   */
  syncOnce(): Promise<SyncReport> {
    const run = this.passChain.then(() => this.pass());
    this.passChain = run.catch(() => undefined);
    return run;
  }

  private async pass(): Promise<SyncReport> {
    const t0 = performance.now();
    const e = this.enrolment();
    const report = emptyReport();
    this.syncing = true;
    this.emit();
    try {
      await this.uploadAll(e, report);
      await this.pullAll(e, report, false, new AbortController().signal);
      report.unsettled = await this.awaitSettled(e, report);
      recordSyncOutcome(this.db, { ok: true, at: new Date().toISOString() });
      pruneSeenTxids(this.db, new Date(Date.now() - 7 * 86_400_000).toISOString());
      this.online = true;
      report.pending = syncCounts(this.db).pending;
      report.ms = Math.round(performance.now() - t0);
      return report;
    } catch (err) {
      this.fail(err);
      throw err;
    } finally {
      this.syncing = false;
      this.emit();
    }
  }

  private fail(err: unknown): void {
    const p = err instanceof AppError ? err : new AppError({ code: 'Internal', message: `Sync failed: ${(err as Error).message}` });
    if (p.code === 'Unavailable' && !isRefusedShape(p)) this.online = false;
    try {
      recordSyncOutcome(this.db, { ok: false, at: new Date().toISOString(), code: p.code, message: p.message });
    } catch {
      /* the database is closing */
    }
    this.log(`sync: ${p.code}: ${p.message}`);
    this.emit();
  }

  // ------------------------------------------------------------------------------------------
  // Write path

  private async post(e: { hq_url: string; token: string }, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    try {
      return await this.trackedFetch(`${e.hq_url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${e.token}` },
        body: JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(60_000)]) : AbortSignal.timeout(60_000),
      });
    } catch (err) {
      throw unreachable(e.hq_url, err);
    }
  }

  private uploadLock: Promise<unknown> = Promise.resolve();

  /** Upload every pending changeset, in outbox order; one upload run at a time (live uploader and `syncOnce`). */
  private uploadAll(e: SyncEnrolmentRow & { token: string }, report: SyncReport, signal?: AbortSignal): Promise<void> {
    const run = this.uploadLock.then(() => this.uploadQueue(e, report, signal));
    this.uploadLock = run.catch(() => undefined);
    return run;
  }

  private async uploadQueue(e: SyncEnrolmentRow & { token: string }, report: SyncReport, signal?: AbortSignal): Promise<void> {
    const perRequest = Math.min(MAX_CHANGESETS_PER_UPLOAD, Math.max(1, this.opts.uploadBatch ?? 50));
    // Proposals first: HQ must hold a proposal before the changeset that approves it arrives.
    await this.uploadProposalEvents(e, signal);
    for (;;) {
      if (signal?.aborted) return;
      // An athlete's device uploads that athlete's changesets; an org device everyone's who signed in on it.
      const only = SELF_SCOPED_ROLES.has(this.currentRole(e) as never) ? e.user_id : null;
      let batch = pendingUploads(this.db, only, perRequest);
      if (batch.length === 0) return;
      // Stay well under HQ's 4 MiB body limit.
      let size = 0;
      const cut = batch.findIndex((cs) => (size += JSON.stringify(cs).length) > 3 * 1024 * 1024);
      if (cut > 0) batch = batch.slice(0, cut);
      else if (cut === 0) batch = batch.slice(0, 1);
      await this.uploadBatch(e, batch, report, signal);
      // Proposals held back behind a change this request uploaded go now, not at the next pass, and
      // so do the withdrawals a refused change queued (main/data/sync.ts pendingProposalEvents,
      // failProposalsOn; issue 12 final review B-c).
      await this.uploadProposalEvents(e, signal);
      this.emit();
    }
  }

  private async uploadBatch(e: SyncEnrolmentRow & { token: string }, batch: UploadedChangeset[], report: SyncReport, signal?: AbortSignal): Promise<void> {
    const ids = batch.map((c) => c.changeset_id);
    ids.forEach((id) => this.inFlight.add(id));
    try {
      await this.recordApprovals(e, batch, signal);
      let res: Response;
      try {
        res = await this.post(e, '/v1/changesets', { changesets: batch }, signal);
      } catch (err) {
        recordUploadAttemptFailed(this.db, ids, (err as Error).message);
        throw err;
      }
      if (res.ok) {
        this.online = true;
        const { results } = (await res.json()) as ChangesetUploadResult;
        this.opts.trace?.('upload:response', `${results.length}`);
        const at = new Date().toISOString();
        const answered = new Set(results.map((r) => r.changeset_id));
        for (const outcome of results) {
          recordUploadOutcome(this.db, outcome, at, answered);
          if (outcome.status === 'applied') report.uploaded++;
          else report.rejected++;
        }
        this.opts.trace?.('upload:recorded', `${results.length}`);
        return;
      }
      const err = await errorFromResponse(res, 'accept these changes');
      recordUploadAttemptFailed(this.db, ids, `${err.code}: ${err.message}`);
      // The whole request was refused (400/403/413: a changeset HQ cannot take at all). Isolate it so
      // one bad changeset becomes a visible conflict instead of blocking the queue for ever.
      if ((res.status === 400 || res.status === 403 || res.status === 413) && err.code !== 'Unauthenticated') {
        if (batch.length > 1) {
          // One at a time, each only while still pending: refusing one rejects, unsent, what was made
          // on top of it (main/data/sync.ts rejectDependents), which must then not go (issue 12 re-review B2).
          for (const cs of batch) if (uploadState(this.db, cs.changeset_id).outbox === 'pending') await this.uploadBatch(e, [cs], report, signal);
          return;
        }
        const outcome: ChangesetOutcome = {
          changeset_id: batch[0]!.changeset_id,
          status: 'rejected',
          reason: err.code === 'Forbidden' ? 'forbidden' : 'validation',
          message: err.message,
          replayed: false,
        };
        recordUploadOutcome(this.db, outcome, new Date().toISOString());
        report.rejected++;
        return;
      }
      if (res.status < 500) this.online = true;
      throw err;
    } finally {
      ids.forEach((id) => this.inFlight.delete(id));
    }
  }

  /**
   * Report this device's proposal events to HQ in order (POST /v1/proposals): a change waiting for
   * an owner proposed here (HQ then syncs it to every staff device of the club), and declines made
   * here. A decline is sent under the decider's own HQ token when they signed in to HQ on this
   * device (an owner's decline needs it), else under the device token. An event HQ refuses is
   * kept as refused (logged); the proposal then stays on this device only.
   * @throws Unavailable (HQ unreachable or failing: the events wait and are sent again), Unauthenticated (device token refused)
   */
  private async uploadProposalEvents(e: SyncEnrolmentRow & { token: string }, signal?: AbortSignal): Promise<void> {
    if (SELF_SCOPED_ROLES.has(this.currentRole(e) as never)) return;
    for (;;) {
      if (signal?.aborted) return;
      const pending = pendingProposalEvents(this.db, MAX_PROPOSAL_EVENTS_PER_UPLOAD);
      if (pending.length === 0) return;
      // Consecutive events sent under the same token.
      const tokenOf = (p: PendingProposalEvent): { userId: string; token: string } | null => {
        if (p.event.op !== 'decline' || p.userId === e.user_id) return null;
        const row = getUserToken(this.db, p.userId);
        if (!row) return null;
        try {
          return { userId: p.userId, token: this.box.open(JSON.parse(row.token_sealed) as SealedSecret) };
        } catch {
          deleteUserToken(this.db, p.userId);
          return null;
        }
      };
      const own = tokenOf(pending[0]!);
      const batch = [pending[0]!];
      for (const p of pending.slice(1)) {
        if (tokenOf(p)?.userId !== own?.userId) break;
        batch.push(p);
      }
      const res = await this.post({ hq_url: e.hq_url, token: own?.token ?? e.token }, '/v1/proposals', { events: batch.map((p) => p.event) }, signal);
      if (res.ok) {
        const { results } = (await res.json()) as ProposalUploadResult;
        results.forEach((r, i) => {
          const p = batch[i];
          if (!p) return;
          recordProposalEventOutcome(this.db, p.seq, r.status === 'recorded' ? r : { status: 'refused', code: r.code, message: r.message });
          if (r.status === 'refused') this.log(`sync: HQ did not record the ${r.op} of proposal ${r.changeset_id}: ${r.code}: ${r.message}`);
        });
        continue;
      }
      const err = await errorFromResponse(res, 'record these proposals');
      if (res.status >= 500) throw err;
      if (res.status === 401 && own) {
        deleteUserToken(this.db, own.userId); // the decider's own sign-in was revoked: sent under the device token next time
        continue;
      }
      if (res.status === 401) throw err;
      // The whole request was refused (400/403/413): kept as refused so the queue moves on.
      for (const p of batch) recordProposalEventOutcome(this.db, p.seq, { status: 'refused', code: err.code, message: err.message });
      this.log(`sync: HQ refused ${batch.length} proposal event(s): ${err.code}: ${err.message}`);
    }
  }

  /**
   * Before `batch` is uploaded: record at HQ, under each user's own device token held on this
   * device, the approvals the batch names (`approved_by`), the changes owners made themselves,
   * and the RTP sign-offs each user made here (their attestation: HQ applies a sign-off uploaded
   * under another user's token only with it), each bound to the content hash HQ will compute for
   * the upload, and every other change a user signed in to HQ here made (HQ needs it for any the
   * enrolled user could not have made, models/authorship.ts). Nothing is needed for the enrolled
   * user (the upload's token is theirs). A user without an HQ sign-in here, or whose token HQ
   * refuses, is left out: HQ then rejects those changes `approval_unverified` /
   * `signoff_unverified` / `author_unverified`, a visible conflict.
   * @throws Unavailable (HQ unreachable or failing: the batch waits and retries)
   */
  private async recordApprovals(e: SyncEnrolmentRow & { token: string }, batch: UploadedChangeset[], signal?: AbortSignal): Promise<void> {
    const byApprover = new Map<string, UploadedApproval[]>();
    const add = (userId: string, cs: UploadedChangeset): void => {
      const list = byApprover.get(userId) ?? [];
      if (list.some((a) => a.changeset_id === cs.changeset_id)) return;
      list.push({ changeset_id: cs.changeset_id, content_hash: uploadContentHash(cs), approved_at: cs.created_at });
      byApprover.set(userId, list);
    };
    /** Changesets HQ will refuse without their author's or approver's own attestation (for the log line). */
    const needed = new Set<string>();
    const uploader: RuleActor = {
      userId: e.user_id,
      orgId: e.org_id,
      role: this.currentRole(e) as Role,
      linkedAthleteId: null,
      active: true,
    };
    for (const cs of batch) {
      const author = cs.user_id ? findUserById(this.db, cs.user_id) : null;
      const approver = cs.approved_by ?? (author?.role === NEEDS_OWNER_APPROVER ? author.id : null);
      if (approver && approver !== e.user_id) {
        add(approver, cs);
        needed.add(`${approver}:${cs.changeset_id}`);
      }
      if (cs.user_id && cs.user_id !== e.user_id) {
        // Another user's change on this (shared) device: their own attestation, whenever they
        // signed in to HQ here. HQ needs it for a sign-off and for anything the enrolled user
        // could not have done themselves (models/authorship.ts; judged here on the change's own
        // `before`, HQ judges on its rows); recording it for the rest costs one request per user.
        const changes = cs.changes as RowChange[];
        const why =
          mentionsSignoff(changes) ||
          uploaderCannotVouch(uploader, cs.verb, changes, (ch) => (ch.op === 'update' ? { orgId: e.org_id, athleteId: null, row: ch.before } : null)) !== null;
        if (why) needed.add(`${cs.user_id}:${cs.changeset_id}`);
        if (why || getUserToken(this.db, cs.user_id)) add(cs.user_id, cs);
      }
    }
    for (const [userId, approvals] of byApprover) {
      const row = getUserToken(this.db, userId);
      if (!row) {
        const n = approvals.filter((a) => needed.has(`${userId}:${a.changeset_id}`)).length;
        if (n > 0)
          this.log(`sync: ${n} change(s) approved, signed off or made by user ${userId}, who is not signed in to HQ on this device: HQ cannot verify them`);
        continue;
      }
      let token: string;
      try {
        token = this.box.open(JSON.parse(row.token_sealed) as SealedSecret);
      } catch {
        deleteUserToken(this.db, userId);
        continue;
      }
      const res = await this.post({ hq_url: e.hq_url, token }, '/v1/approvals', { approvals }, signal);
      if (res.ok) {
        await res.arrayBuffer();
        continue;
      }
      const err = await errorFromResponse(res, 'record an approval or sign-off attestation');
      if (res.status >= 500) throw err;
      if (res.status === 401) deleteUserToken(this.db, userId); // revoked, expired or deactivated: sign in again
      this.log(`sync: HQ did not record ${approvals.length} approval(s) or attestation(s) of user ${userId}: ${err.code}: ${err.message}`);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Read path

  private tablesFor(e: SyncEnrolmentRow, report: SyncReport | null): string[] {
    const tables = syncedTables(this.currentRole(e));
    for (const t of ALL_TABLES) {
      if (tables.includes(t)) continue;
      if (!shapeState(this.db, t).forbidden) {
        markShapeForbidden(this.db, t, true);
      }
      report?.forbidden.push(t);
    }
    return tables;
  }

  private async pullAll(e: SyncEnrolmentRow & { token: string }, report: SyncReport, live: boolean, signal: AbortSignal): Promise<void> {
    const queue = this.tablesFor(e, report);
    ensureShapeStates(this.db, queue); // before any stream applies (see shapeState)
    // A table HQ's shape service refuses as too large ends the pass with that error, after the others are pulled.
    let refusal: AppError | null = null;
    const workers = Array.from({ length: Math.min(queue.length, this.opts.concurrency ?? 4) }, async () => {
      for (let t = queue.shift(); t !== undefined; t = queue.shift()) {
        try {
          await this.follow(e, t, report, live, signal);
        } catch (err) {
          if (!isRefusedShape(err)) throw err;
          refusal ??= err;
        }
      }
    });
    await Promise.all(workers);
    if (refusal) throw refusal;
  }

  /**
   * After the pull: while changesets HQ applied are not yet delivered by the shapes (their txid, or
   * their row at HQ's version), follow the tables they touched live until they are, or until
   * `settleTimeoutMs`. An up-to-date only means "caught up with the shape log as it stands", and
   * HQ's commit reaches that log through logical replication, which can lag HQ's answer; without
   * this wait a pass could end with its own uploads unsettled (rows optimistic, outbox `applied`).
   * @returns the changesets still unsettled (they settle in a later pass or in live mode).
   */
  private async awaitSettled(e: SyncEnrolmentRow & { token: string }, report: SyncReport): Promise<number> {
    const first = unsettledUploads(this.db);
    if (first.count === 0) return 0;
    const synced = new Set(this.tablesFor(e, null));
    const tables = first.tables.filter((t) => synced.has(t));
    if (tables.length === 0) return first.count;
    const ctrl = new AbortController();
    setMaxListeners(64, ctrl.signal);
    const deadline = Date.now() + (this.opts.settleTimeoutMs ?? 10_000);
    const follows = Promise.all(tables.map((t) => this.follow(e, t, report, true, ctrl.signal)));
    // A follow that fails (revoked token) ends the wait with its error.
    let failed: unknown = null;
    follows.catch((err: unknown) => {
      failed = err;
      ctrl.abort();
    });
    while (!ctrl.signal.aborted && Date.now() < deadline && unsettledUploads(this.db).count > 0) await sleep(50, ctrl.signal);
    ctrl.abort();
    await follows.catch(() => undefined);
    if (failed) throw failed;
    const left = unsettledUploads(this.db).count;
    if (left > 0) this.log(`sync: ${left} applied changeset(s) not yet delivered by the shapes; they settle in a later pass`);
    return left;
  }

  /**
   * Follow `tbl`'s shape: until its first up-to-date (`live` false) or until `signal` aborts.
   * Resolves when done (in worker mode: once the worker has no transaction of it under way);
   * rejects with a typed error (401 → Unauthenticated, network → Unavailable).
   */
  private follow(
    e: SyncEnrolmentRow & { token: string },
    tbl: string,
    report: SyncReport | null,
    live: boolean,
    signal: AbortSignal,
    restarted = false,
  ): Promise<void> {
    if (shapeState(this.db, tbl).forbidden) markShapeForbidden(this.db, tbl, false);
    const state = shapeState(this.db, tbl);
    const ctrl = new AbortController();
    setMaxListeners(64, ctrl.signal);
    const backoff = live ? (this.opts.streamBackoff ?? { initialMs: 500, maxMs: 10_000 }) : { initialMs: 200, maxMs: 2_000 };

    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let closed: Promise<void> = Promise.resolve();
      const onAbort = (): void => finish();
      const finish = (err?: unknown): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        ctrl.abort();
        void closed.then(() => (err ? reject(err) : resolve()));
      };
      if (signal.aborted) return finish();
      signal.addEventListener('abort', onAbort, { once: true });
      const feedOptions: ShapeFeedOptions = {
        url: `${e.hq_url}/v1/shape`,
        params: { table: tbl, replica: 'full' },
        ...(state.handle && state.offset !== '-1' ? { offset: state.offset, handle: state.handle } : {}),
        headers: { Authorization: `Bearer ${e.token}` },
        live,
        signal: ctrl.signal,
        fetchClient: this.shapeFetch,
        deadlines: this.opts.shapeDeadlines ?? SHAPE_DEADLINES,
        onOnline: (online) => this.setOnline(online),
        backoff: { initialMs: backoff.initialMs, maxMs: backoff.maxMs, maxRetries: live ? Infinity : 3 },
        onError: (err) => {
          if (ctrl.signal.aborted) return;
          if (err instanceof FetchError && err.status === 401) {
            // HQ says why (revoked, expired, the account deactivated): pass its words on.
            const hq = (err.json as { error?: { message?: unknown } } | undefined)?.error?.message;
            finish(
              new AppError({
                code: 'Unauthenticated',
                message:
                  typeof hq === 'string' && hq
                    ? `HQ no longer accepts this device token: ${hq}`
                    : 'HQ no longer accepts this device token (revoked or expired). Enrol the device again.',
              }),
            );
            return;
          }
          if (err instanceof FetchError && err.status === 400 && !restarted && state.handle && /handle do not match/.test(err.message)) {
            // The shape HQ defines for this device changed under the stored handle (the proxy's
            // where depends on the role for hq_proposal: a role change redefines it). Start the
            // table over from a fresh snapshot, once, as after must-refetch.
            if (settled) return;
            settled = true;
            signal.removeEventListener('abort', onAbort);
            ctrl.abort();
            void closed
              .then(() => {
                resetShape(this.db, tbl);
                return this.follow(e, tbl, report, live, signal, true);
              })
              .then(resolve, reject);
            return;
          }
          if (err instanceof FetchError && err.status === 400 && isShapeLimit(err.json)) {
            // HQ keeps no more shapes for this device or club (see withShapeRefusalFinal): say so in its words, now.
            const hq = (err.json as { error?: { message?: unknown } }).error?.message;
            finish(
              new AppError({
                code: 'RateLimited',
                kind: 'shape_limit',
                message: `HQ will not open the ${tbl} shape for this device: ${typeof hq === 'string' ? hq : 'too many shapes.'} Nothing on this device was lost (changes waiting to upload stay queued). Sync again later, or ask an administrator to revoke devices no longer in use: their shapes are released within a minute.`,
              }),
            );
            return;
          }
          if (err instanceof FetchError && err.status === 400 && isShapeTooLarge(err.json)) {
            // HQ answered: its shape service will not hold this table's shape (see withShapeRefusalFinal).
            const hq = (err.json as { error?: { message?: unknown } }).error?.message;
            const refusal = new AppError({
              code: 'Unavailable',
              kind: 'shape_too_large',
              message: `HQ will not send the ${tbl} shape: ${typeof hq === 'string' ? hq : 'it is larger than its shape service can hold.'} Nothing on this device was lost (changes waiting to upload stay queued) and the other tables still sync. Ask HQ's administrator to raise the shape service's memory budget; sync asks for ${tbl} again later.`,
            });
            if (live) this.refused.set(tbl, refusal);
            finish(refusal);
            return;
          }
          if (err instanceof FetchError && err.status === 403) {
            try {
              markShapeForbidden(this.db, tbl, true);
            } catch {
              /* closing */
            }
            report?.forbidden.push(tbl);
            finish();
            return;
          }
          if (live && !(err instanceof FetchError && err.status >= 400 && err.status < 500)) return {}; // retry (with back-off)
          finish(
            err instanceof FetchError && err.status >= 400 && err.status < 500
              ? new AppError({
                  code: err.status === 400 ? 'Validation' : 'Internal',
                  message: `HQ refused the ${tbl} shape request (HTTP ${err.status}): ${err.message}`,
                })
              : unreachable(e.hq_url, err),
          );
          return;
        },
      };

      // One transaction of this shape committed (in the worker or here): count it, and when it
      // stored the offset, tell the app (status listeners re-read; live: the device is in sync).
      const onApplied = (ev: ApplyEvent): void => {
        if (ev.reset && report && !report.refetched.includes(tbl)) report.refetched.push(tbl);
        if (report) report.pulled[tbl] = (report.pulled[tbl] ?? 0) + ev.written;
        this.opts.trace?.(ev.committed ? 'apply:commit' : 'apply:slice', tbl);
        if (!ev.committed) return;
        if (live) this.markLiveSynced();
        this.emit();
      };
      const onConsumed = (r: ConsumeResult): void => {
        if (r.refetched && report && !report.refetched.includes(tbl)) report.refetched.push(tbl);
        if (!r.upToDate) return;
        this.online = true;
        const refusedBefore = this.refused.delete(tbl);
        if ((live && this.markLiveSynced(this.opts.idleSyncedMarkMs ?? 15_000)) || refusedBefore) this.emit();
        if (!live) finish();
      };
      const init = { resetting: state.needs_reset, lastOffset: state.offset };

      if (this.shapeWorker.available && isFileDb(this.db)) {
        // The worker fetches, parses and applies through its own connection to the file.
        closed = this.shapeWorker.openApplying(
          feedOptions,
          { dbPath: this.db.path, tbl, ...init, sliceRows: this.sliceRows ?? WORKER_SLICE_ROWS, waitAfterEach: !!this.opts.trace },
          { onApplied, onConsumed, onFatal: (err) => finish(err) },
        ).closed;
        return;
      }
      // This thread: the client here, the rows through the engine's connection, yielding to the
      // event loop between transactions.
      const applier = new ShapeApplier(this.db, tbl, { ...init, sliceRows: this.sliceRows ?? THREAD_SLICE_ROWS });
      const stream = inThreadFeed(feedOptions);
      stream.subscribe(
        async (messages) => {
          if (settled) return;
          try {
            const r = await applier.consume(
              messages,
              { handle: stream.shapeHandle, offset: stream.lastOffset },
              async (ev) => {
                onApplied(ev);
                if (!ev.committed) await yieldToLoop();
              },
              () => ctrl.signal.aborted,
            );
            if (!ctrl.signal.aborted) onConsumed(r);
          } catch (err) {
            finish(err);
          }
        },
        (err) => finish(err),
      );
    });
  }

  // ------------------------------------------------------------------------------------------
  // Live

  /**
   * Stay live: follow every shape with long-polls and run the uploader, which retries with
   * exponential back-off on its own. Errors are recorded in the status; a revoked token
   * (Unauthenticated) stops everything until `start()` is called again.
   */
  start(): void {
    if (this.live) return;
    const e = this.enrolment();
    const ctrl = new AbortController();
    setMaxListeners(256, ctrl.signal);
    this.stopped = false;
    const streams = new Map<string, AbortController>();
    const stopAll = (err: unknown): void => {
      this.fail(err);
      ctrl.abort();
    };
    this.refused.clear();
    const rb = this.opts.refusedShapeBackoff ?? { initialMs: 300_000, maxMs: 3_600_000 };
    const shapes = (async () => {
      const tables = this.tablesFor(e, null);
      await Promise.all(
        tables.map(async (t) => {
          // A shape HQ refuses as too large is asked for again after a long back-off; the other tables stay live.
          let wait = rb.initialMs;
          while (!ctrl.signal.aborted) {
            try {
              await this.follow(e, t, null, true, ctrl.signal);
              return;
            } catch (err) {
              if (ctrl.signal.aborted) return;
              if (!isRefusedShape(err)) return stopAll(err);
              this.fail(err);
              this.log(`sync: the ${t} shape is asked for again in ${Math.round(wait / 1000)} s`);
              await sleep(wait, ctrl.signal);
              wait = Math.min(wait * 2, rb.maxMs);
            }
          }
        }),
      );
    })();
    const uploader = this.uploaderLoop(e, ctrl.signal, stopAll);
    // A local write wakes the uploader at once (the poll is the fallback for writes from other processes).
    const off = onOutboxAppended(this.db, () => this.wake?.());
    const done = Promise.all([shapes, uploader]).then(() => off());
    this.live = { ctrl, done, streams };
    this.emit();
  }

  private async uploaderLoop(e: SyncEnrolmentRow & { token: string }, signal: AbortSignal, stopAll: (err: unknown) => void): Promise<void> {
    const b = this.opts.backoff ?? { initialMs: 500, maxMs: 30_000 };
    let delay = b.initialMs;
    while (!signal.aborted) {
      try {
        if (syncCounts(this.db).pending > 0) {
          this.syncing = true;
          this.emit();
          await this.uploadAll(e, emptyReport(), signal);
          const refusal = this.refused.values().next().value;
          // A table HQ refuses stays the last error until it syncs.
          recordSyncOutcome(
            this.db,
            refusal ? { ok: false, at: new Date().toISOString(), code: refusal.code, message: refusal.message } : { ok: true, at: new Date().toISOString() },
          );
        } else if (this.online && this.refused.size === 0 && getEnrolment(this.db)?.last_error_code) {
          recordSyncOutcome(this.db, { ok: true, at: new Date().toISOString() });
        }
        this.syncing = false;
        this.emit();
        delay = b.initialMs;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          void sleep(this.opts.pollMs ?? 500, signal).then(resolve);
        });
      } catch (err) {
        this.syncing = false;
        if (signal.aborted) return;
        if (err instanceof AppError && (err.code === 'Unauthenticated' || err.code === 'NotConfigured')) {
          stopAll(err);
          return;
        }
        this.fail(err);
        await sleep(Math.random() * delay, signal);
        delay = Math.min(delay * 2, b.maxMs);
      }
    }
  }

  private lastLiveMark = 0;
  /**
   * Live mode: a shape batch committed, or a long poll came back up to date with nothing new
   * (`minGapMs` then `idleSyncedMarkMs`: the last successful sync keeps up with an idle but connected device
   * without a write per poll); with nothing left to upload the device is in sync now. True when recorded.
   */
  private markLiveSynced(minGapMs = 1000): boolean {
    const now = Date.now();
    // Not in sync while HQ refuses a table's shape (its error stays the last one).
    if (now - this.lastLiveMark < minGapMs || this.refused.size > 0 || syncCounts(this.db).pending > 0) return false;
    this.lastLiveMark = now;
    recordSyncOutcome(this.db, { ok: true, at: new Date(now).toISOString() });
    return true;
  }

  /** Stop live mode and wait until in-flight applies have finished. */
  async stop(): Promise<void> {
    const l = this.live;
    if (!l) return;
    this.live = null;
    this.stopped = true;
    l.ctrl.abort();
    this.wake?.();
    await l.done;
    this.syncing = false;
    this.emit();
  }

  /** True while `start()` is in effect (and not stopped by a revoked token). */
  get isLive(): boolean {
    return !!this.live && !this.live.ctrl.signal.aborted && !this.stopped;
  }
}
