/**
 * Device tokens: what a device presents on every HQ request (`Authorization: Bearer aihq_…`).
 * Issued by POST /v1/devices for a user's email + PIN + one-time sign-in code (the PIN alone is
 * no secret from a device's database: sync/auth/enrolment-codes.ts); random (256 bits), shown once, stored only
 * as its SHA-256; bound to one user and org; expiring; revocable. Every request re-reads the token
 * and the user (role, active flag), so a revoked token, an expired one or a deactivated user
 * stops at the next request. A token also stores the stamp of its account as enrolled (role,
 * linked athlete, PIN hash, active flag; HQ migration 0012): a relink, a PIN reset or a role change
 * ends every token issued before it, as on the device (main/data/identity.ts `accountStamp`).
 */
import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { AppError, Forbidden, NotFound, RateLimited } from '../../models/errors';
import { hasPermission, NEEDS_OWNER_APPROVER, SELF_SCOPED_ROLES } from '../../models/roles';
import { PinLockout } from '../../models/signin';
import { withLookup, withTenant } from '../pg/db';
import type { Principal } from '../write/principal';
import { spendEnrolmentCode } from './enrolment-codes';
import { DUMMY_PIN_HASH, verifyPin } from './pin';

/** Prefix of every device token (lets secret scanners and log redaction recognise it). */
export const DEVICE_TOKEN_PREFIX = 'aihq_';
/** Default lifetime of a device token (days). */
export const DEFAULT_TOKEN_TTL_DAYS = 90;

/** SHA-256 (hex) of a token: what is stored and looked up. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Why a token is refused after its account changed at HQ (HQ migration 0012, `hq_account_stamp`). */
export const ACCOUNT_CHANGED =
  'The account this device signed in with changed at HQ (its role, athlete link, PIN or status) since the device was enrolled. Sign the device in to HQ again (Settings → Sync).';

/** The one answer for every failed sign-in (which part was wrong is not said). */
const NO_MATCH =
  'That email, PIN and sign-in code do not match an active account. Check all three; a sign-in code works once, for one account, for 24 hours: ask a club owner or administrator for a new one if yours was used or is older.';

/** The refusal thrown inside the enrolment transaction when the code does not match (rolls the token back). */
class CodeRejected extends AppError {
  constructor() {
    super({ code: 'Unauthenticated', message: NO_MATCH });
  }
}

function unauthenticated(message: string): AppError {
  return new AppError({ code: 'Unauthenticated', message });
}

/** What POST /v1/devices returns (the token appears here once, never again). */
export interface IssuedDevice {
  device_id: string;
  token: string;
  token_hint: string;
  expires_at: string;
  user: { id: string; display_name: string; role: string; email: string; linked_athlete_id: string | null };
  org: { id: string; name: string };
}

/** Device enrolment with the desktop's lockout (models/signin.ts) per user. */
export class DeviceRegistry {
  private readonly lockout = new PinLockout();

  constructor(
    private readonly pool: pg.Pool,
    private readonly opts: { tokenTtlDays?: number; now?: () => number } = {},
  ) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /**
   * Issue a token for `email` + `pin` + one-time sign-in `code` (spent here, in the transaction
   * that stores the token), naming the device `name`.
   * @throws Unauthenticated (unknown email, inactive user, wrong PIN, or a code that is wrong,
   *   used, revoked, expired or another account's: one answer for all), RateLimited (the user is
   *   locked after 5 wrong PINs or codes), Forbidden (athlete account linked to no athlete).
   */
  async issue(email: string, pin: string, code: string, name: string): Promise<IssuedDevice> {
    const login = email.trim().toLowerCase();
    const user = await withLookup(
      this.pool,
      'hq.login_email',
      login,
      async (c) =>
        (
          await c.query<{
            id: string;
            org_id: string;
            email: string;
            display_name: string;
            role: string;
            active: boolean;
            linked_athlete_id: string | null;
            pin_hash: string | null;
            deleted_at: string | null;
          }>('SELECT id, org_id, email, display_name, role, active, linked_athlete_id, pin_hash, deleted_at FROM app_user WHERE lower(email) = $1', [login])
        ).rows[0],
    );
    const t = this.now();
    if (user) {
      const left = this.lockout.lockedFor(user.id, t);
      if (left > 0) throw new RateLimited('Too many wrong PINs or sign-in codes for this user. Wait a few minutes, then try again.', Math.ceil(left / 1000));
    }
    const ok = await verifyPin(pin, user?.pin_hash ?? DUMMY_PIN_HASH);
    if (!user || !ok || !user.active || user.deleted_at) {
      if (user && !ok) this.lockout.fail(user.id, t);
      throw unauthenticated(NO_MATCH);
    }
    if (SELF_SCOPED_ROLES.has(user.role as never) && !user.linked_athlete_id) {
      throw new Forbidden('This athlete account is not linked to an athlete record; ask a club administrator to link it.');
    }
    const token = `${DEVICE_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const id = uuidv7();
    const expires = new Date(t + (this.opts.tokenTtlDays ?? DEFAULT_TOKEN_TTL_DAYS) * 86_400_000).toISOString();
    const hint = token.slice(-4);
    const orgName = await withTenant(
      this.pool,
      { orgId: user.org_id, userId: user.id, athleteId: SELF_SCOPED_ROLES.has(user.role as never) ? user.linked_athlete_id : null },
      async (c) => {
        // The stamp of the account as it was when the PIN was checked (not as it is now: a change
        // racing this sign-in must end the new token too).
        await c.query(
          `INSERT INTO hq_device (id, org_id, user_id, name, token_hash, token_hint, created_at, expires_at, account_stamp)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, hq_account_stamp($9, $10, $11, $12))`,
          [
            id,
            user.org_id,
            user.id,
            name,
            hashToken(token),
            hint,
            new Date(t).toISOString(),
            expires,
            user.role,
            user.linked_athlete_id,
            user.pin_hash,
            user.active,
          ],
        );
        // The code is spent with the token, or neither happens (a wrong code rolls the insert back).
        if (!(await spendEnrolmentCode(c, user.id, code, id, t))) throw new CodeRejected();
        return (await c.query<{ name: string }>('SELECT name FROM organization WHERE id = $1', [user.org_id])).rows[0]?.name ?? '';
      },
    ).catch((e: unknown) => {
      if (e instanceof CodeRejected) this.lockout.fail(user.id, t);
      throw e;
    });
    this.lockout.succeed(user.id);
    return {
      device_id: id,
      token,
      token_hint: hint,
      expires_at: expires,
      user: { id: user.id, display_name: user.display_name, role: user.role, email: user.email, linked_athlete_id: user.linked_athlete_id },
      org: { id: user.org_id, name: orgName },
    };
  }

  /**
   * The principal behind a bearer token, with the user re-read now.
   * @throws Unauthenticated (missing, unknown, revoked or expired token; deactivated user; an
   *   account whose role, athlete link, PIN or active flag changed since the device enrolled:
   *   its stamp, HQ migration 0012, differs from the one stored at enrolment).
   */
  async authenticate(authorization: string | undefined | null): Promise<Principal> {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!m || !m[1]!.startsWith(DEVICE_TOKEN_PREFIX))
      throw unauthenticated('Sign this device in to HQ first: send Authorization: Bearer <device token> (POST /v1/devices issues one).');
    const hash = hashToken(m[1]!);
    const device = await withLookup(
      this.pool,
      'hq.token_hash',
      hash,
      async (c) =>
        (
          await c.query<{
            id: string;
            org_id: string;
            user_id: string;
            name: string;
            created_at: string;
            expires_at: string;
            revoked_at: string | null;
            account_stamp: string;
          }>('SELECT id, org_id, user_id, name, created_at, expires_at, revoked_at, account_stamp FROM hq_device WHERE token_hash = $1', [hash])
        ).rows[0],
    );
    if (!device) throw unauthenticated('This device token is not known to HQ. Sign the device in again.');
    if (device.revoked_at) throw unauthenticated('This device token was revoked. Sign the device in again.');
    if (Date.parse(device.expires_at) <= this.now()) throw unauthenticated('This device token has expired. Sign the device in again.');
    const user = await withTenant(
      this.pool,
      { orgId: device.org_id, userId: device.user_id },
      async (c) =>
        (
          await c.query<{
            id: string;
            org_id: string;
            display_name: string;
            role: string;
            active: boolean;
            linked_athlete_id: string | null;
            deleted_at: string | null;
            account_stamp: string;
          }>(
            `SELECT id, org_id, display_name, role, active, linked_athlete_id, deleted_at,
                    hq_account_stamp(role, linked_athlete_id, pin_hash, active) AS account_stamp
               FROM app_user WHERE id = $1`,
            [device.user_id],
          )
        ).rows[0],
    );
    if (!user || !user.active || user.deleted_at) throw unauthenticated('The account this device signed in with is deactivated. Ask a club administrator.');
    if (user.account_stamp !== device.account_stamp) throw unauthenticated(ACCOUNT_CHANGED);
    return {
      deviceId: device.id,
      deviceName: device.name,
      orgId: user.org_id,
      userId: user.id,
      displayName: user.display_name,
      role: user.role,
      linkedAthleteId: user.linked_athlete_id,
      active: user.active,
      enrolledAt: new Date(device.created_at).toISOString(),
    };
  }

  /**
   * Which of `deviceIds` (devices of org `orgId`) can no longer make a request: revoked, expired,
   * unknown, or signed in with an account that is deactivated or changed since (its account
   * stamp differs, as in {@link DeviceRegistry.authenticate}). Used to evict the shapes only such
   * devices requested (sync/http/shape-registry.ts).
   */
  async inactiveDevices(orgId: string, deviceIds: readonly string[]): Promise<Set<string>> {
    if (deviceIds.length === 0) return new Set();
    const live = await withTenant(this.pool, { orgId }, async (c) =>
      (
        await c.query<{ id: string }>(
          `SELECT d.id FROM hq_device d JOIN app_user u ON u.id = d.user_id
            WHERE d.id = ANY($1::uuid[]) AND d.revoked_at IS NULL AND d.expires_at > $2 AND u.active AND u.deleted_at IS NULL
              AND d.account_stamp = hq_account_stamp(u.role, u.linked_athlete_id, u.pin_hash, u.active)`,
          [deviceIds, new Date(this.now()).toISOString()],
        )
      ).rows.map((r) => r.id),
    );
    const alive = new Set(live);
    return new Set(deviceIds.filter((id) => !alive.has(id)));
  }

  /**
   * Revoke device `id`: one's own devices always; another user's with `user.manage` (same org).
   * The account's unused HQ sign-in codes, and those its token issued, are revoked with it. Revoking a revoked device is a
   * no-op that answers the first revocation time.
   * @throws NotFound (no such device in the caller's org or scope), Forbidden.
   */
  async revoke(principal: Principal, id: string): Promise<{ device_id: string; revoked_at: string }> {
    const athleteId = SELF_SCOPED_ROLES.has(principal.role as never) ? principal.linkedAthleteId : null;
    return withTenant(this.pool, { orgId: principal.orgId, userId: principal.userId, athleteId }, async (c) => {
      const d = (
        await c.query<{ id: string; user_id: string; revoked_at: string | null }>('SELECT id, user_id, revoked_at FROM hq_device WHERE id = $1 FOR UPDATE', [
          id,
        ])
      ).rows[0];
      if (!d) throw new NotFound(`Device ${id}`);
      if (d.user_id !== principal.userId && !hasPermission(principal.role, 'user.manage')) {
        throw new Forbidden(`Revoking another user's device needs user.manage; your role (${principal.role}) does not have it.`);
      }
      if (d.user_id !== principal.userId && principal.role !== NEEDS_OWNER_APPROVER) {
        // Cutting a device off is protective (an admin may revoke a clinician's lost tablet), but an
        // owner's devices are the owner's to revoke, or another owner's (issue 12 re-review minor).
        const holder = (await c.query<{ role: string }>('SELECT role FROM app_user WHERE id = $1', [d.user_id])).rows[0];
        if (!holder || holder.role === NEEDS_OWNER_APPROVER)
          throw new Forbidden(`An owner's devices are revoked by that owner or another owner; your role (${principal.role}) cannot.`);
      }
      if (d.revoked_at) return { device_id: d.id, revoked_at: d.revoked_at };
      const at = new Date(this.now()).toISOString();
      await c.query('UPDATE hq_device SET revoked_at = $1, revoked_by = $2 WHERE id = $3', [at, principal.userId, id]);
      // A code minted with this device's token (its holder's own, say, or another account's, by
      // whoever stole it) must not outlive the revocation: the account's unused codes and those the
      // device issued go with it (issue 12 re-review minor; final review, HQ 0016).
      await c.query('UPDATE hq_enrolment_code SET revoked_at = $1 WHERE (user_id = $2 OR issued_by_device = $3) AND used_at IS NULL AND revoked_at IS NULL', [
        at,
        d.user_id,
        id,
      ]);
      return { device_id: id, revoked_at: at };
    });
  }
}
