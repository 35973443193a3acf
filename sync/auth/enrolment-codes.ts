/**
 * One-time HQ sign-in codes (HQ migration 0013). The PIN is the device's offline credential: every
 * staff device holds the club's PIN hashes, so a 4-digit PIN is no secret from whoever holds a
 * device's database. An HQ device token therefore needs email + PIN + one of these codes, which
 * never leave HQ except to the person who asked for one:
 * - format: 12 symbols of Crockford's base32 (60 bits), shown as `XXXX-XXXX-XXXX`; typed in any
 *   case, with or without dashes or spaces; `I`/`L` read as `1`, `O` as `0`
 *   (https://www.crockford.com/base32.html);
 * - single use (spent in the transaction that creates the device token), bound to one account as
 *   it was when issued (its role, athlete link, PIN and status: any change ends it, HQ 0014),
 *   expiring after {@link ENROLMENT_CODE_TTL_HOURS} hours; issuing a new one for an account
 *   revokes its earlier unused ones;
 * - stored only as SHA-256 (hex): 60 random bits, single use and a day's life make a slow hash
 *   unnecessary, and a wrong code counts towards the account's PIN lockout (sync/auth/devices.ts).
 *
 * Who may issue one for an account ({@link enrolmentCodeRefusal}): the account itself; otherwise
 * `user.manage` where the issuer may also set that account's PIN (models/roles.ts `canManageRole`
 * and `pinRefusal`: an owner for every non-owner account but the super_admin, an admin for admin
 * and athlete accounts as `pinRefusal` allows), since an issuer who could not set the PIN must not
 * be the one who lets a brute-forced PIN in. A change of the issuer's role, active flag or deletion
 * revokes the unused codes they issued (HQ 0015), and revoking a device the unused codes its token
 * issued (HQ 0016). The operator (whoever runs the HQ server,
 * `npm run hq -- enrolment-code --as EMAIL`) issues the first owner's, and any other owner's or the
 * super_admin's that its holder cannot issue from a device. Revoking a device revokes its
 * account's unused codes (a stolen device's token cannot leave a code behind for later).
 */
import { createHash, randomInt } from 'node:crypto';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { AppError, Forbidden, NotFound } from '../../models/errors';
import { canManageRole, hasPermission, pinRefusal, SELF_SCOPED_ROLES } from '../../models/roles';
import { withLookup, withTenant } from '../pg/db';
import type { Principal } from '../write/principal';

/** Crockford's base32 alphabet (no I, L, O, U). */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Symbols in a code (5 bits each: 60 bits). */
export const ENROLMENT_CODE_LENGTH = 12;
/** How long a code stays usable (hours). */
export const ENROLMENT_CODE_TTL_HOURS = 24;

/** What issuing a code answers (the code appears here once, never again). */
export interface IssuedEnrolmentCode {
  /** `XXXX-XXXX-XXXX`. */
  code: string;
  /** ISO-8601 UTC. */
  expires_at: string;
  user: { id: string; email: string; display_name: string; role: string };
}

/** A fresh random code, `XXXX-XXXX-XXXX`. */
export function newEnrolmentCode(): string {
  let s = '';
  for (let i = 0; i < ENROLMENT_CODE_LENGTH; i++) s += ALPHABET[randomInt(32)];
  return `${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8)}`;
}

/**
 * The canonical form of a typed code (upper case, no separators, Crockford's look-alikes mapped),
 * or null when it cannot be a code (wrong length or symbol).
 */
export function normaliseEnrolmentCode(typed: string): string | null {
  const s = typed.toUpperCase().replace(/[\s-]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
  if (s.length !== ENROLMENT_CODE_LENGTH) return null;
  for (const ch of s) if (!ALPHABET.includes(ch)) return null;
  return s;
}

/** SHA-256 (hex) of a code's canonical form: what is stored and looked up. Null for a malformed code. */
export function hashEnrolmentCode(typed: string): string | null {
  const s = normaliseEnrolmentCode(typed);
  return s === null ? null : createHash('sha256').update(s).digest('hex');
}

/**
 * Why `issuer` may not issue a code for `target`, or null when it may (see the module header).
 * Pure; `issuer.userId === target.id` is the account itself.
 */
export function enrolmentCodeRefusal(
  issuer: { userId: string; role: string },
  target: { id: string; role: string; linked_athlete_id: string | null },
): string | null {
  if (issuer.userId === target.id) return null;
  if (!hasPermission(issuer.role, 'user.manage'))
    return `Your role (${issuer.role}) cannot issue HQ sign-in codes for other accounts; ask a club owner or administrator.`;
  // No shortcut for owners: an owner manages no super_admin account and sets no other owner's PIN
  // (issue 12 re-review B1: an owner got the super_admin's code, and with its PIN from a device, its token).
  if (target.role === 'owner')
    return "An owner's HQ sign-in code is issued by that owner, from a device signed in to HQ, or by the HQ operator (npm run hq -- enrolment-code).";
  if (!canManageRole(issuer.role, target.role))
    return `Your role (${issuer.role}) cannot manage ${target.role} accounts, so it cannot issue their HQ sign-in code. The account's holder issues it from a device signed in to HQ, or the HQ operator does (npm run hq -- enrolment-code).`;
  const pin = pinRefusal(issuer.role, target);
  return pin === null ? null : `Your role (${issuer.role}) cannot issue this account's HQ sign-in code: ${pin}`;
}

interface TargetRow {
  id: string;
  org_id: string;
  email: string;
  display_name: string;
  role: string;
  active: boolean;
  linked_athlete_id: string | null;
  deleted_at: string | null;
  pin_hash: string | null;
}

const TARGET_COLUMNS = 'id, org_id, email, display_name, role, active, linked_athlete_id, deleted_at, pin_hash';

async function insertCode(
  c: pg.PoolClient,
  target: TargetRow,
  issuedBy: { userId: string; deviceId: string } | null,
  now: number,
): Promise<IssuedEnrolmentCode> {
  if (!target.active || target.deleted_at)
    throw new Forbidden(`${target.display_name}'s account is deactivated; reactivate it before issuing an HQ sign-in code.`);
  if (SELF_SCOPED_ROLES.has(target.role as never) && !target.linked_athlete_id)
    throw new Forbidden(`${target.display_name}'s athlete account is not linked to an athlete record; link it first.`);
  const at = new Date(now).toISOString();
  await c.query('UPDATE hq_enrolment_code SET revoked_at = $1 WHERE user_id = $2 AND used_at IS NULL AND revoked_at IS NULL', [at, target.id]);
  const code = newEnrolmentCode();
  const expires = new Date(now + ENROLMENT_CODE_TTL_HOURS * 3_600_000).toISOString();
  await c.query(
    `INSERT INTO hq_enrolment_code (id, org_id, user_id, code_hash, issued_by, issued_by_device, created_at, expires_at, account_stamp)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, hq_account_stamp($9, $10, $11, $12))`,
    [
      uuidv7(),
      target.org_id,
      target.id,
      hashEnrolmentCode(code),
      issuedBy?.userId ?? null,
      issuedBy?.deviceId ?? null,
      at,
      expires,
      target.role,
      target.linked_athlete_id,
      target.pin_hash,
      target.active,
    ],
  );
  return { code, expires_at: expires, user: { id: target.id, email: target.email, display_name: target.display_name, role: target.role } };
}

/**
 * Issue a code for the account `userId` on behalf of `principal` (a device token's user).
 * @throws NotFound (no such account in the caller's club, or out of an athlete's own scope),
 *   Forbidden ({@link enrolmentCodeRefusal}; a deactivated or unlinked athlete account)
 */
export async function issueEnrolmentCode(pool: pg.Pool, principal: Principal, userId: string, now: number = Date.now()): Promise<IssuedEnrolmentCode> {
  const athleteId = SELF_SCOPED_ROLES.has(principal.role as never) ? principal.linkedAthleteId : null;
  return withTenant(pool, { orgId: principal.orgId, userId: principal.userId, athleteId }, async (c) => {
    // The issuer's row is held until the code is stored: a change of the issuer's role or status
    // (HQ 0015 revokes the codes they issued) either comes first and is seen here, or waits and
    // revokes this one too.
    if (userId !== principal.userId) {
      const issuer = (
        await c.query<{ role: string; active: boolean; deleted_at: string | null }>('SELECT role, active, deleted_at FROM app_user WHERE id = $1 FOR SHARE', [
          principal.userId,
        ])
      ).rows[0];
      if (!issuer || !issuer.active || issuer.deleted_at || issuer.role !== principal.role)
        throw new Forbidden('Your account changed at HQ (role or status) since this device signed in; sign in to HQ again.');
    }
    const target = (await c.query<TargetRow>(`SELECT ${TARGET_COLUMNS} FROM app_user WHERE id = $1 FOR UPDATE`, [userId])).rows[0];
    if (!target) throw new NotFound(`User ${userId}`);
    const refusal = enrolmentCodeRefusal({ userId: principal.userId, role: principal.role }, target);
    if (refusal) throw new Forbidden(refusal);
    return insertCode(c, target, { userId: principal.userId, deviceId: principal.deviceId }, now);
  });
}

/**
 * Issue a code for the account with `email` as the operator of the HQ server (no user: the
 * first owner's enrolment, or a club locked out of its own accounts). Reached only from the HQ
 * machine's command line (`npm run hq -- enrolment-code`), never over HTTP.
 * @throws NotFound (no account with that email), Forbidden (deactivated or unlinked athlete account)
 */
export async function issueOperatorEnrolmentCode(pool: pg.Pool, email: string, now: number = Date.now()): Promise<IssuedEnrolmentCode> {
  const login = email.trim().toLowerCase();
  const found = await withLookup(
    pool,
    'hq.login_email',
    login,
    async (c) => (await c.query<TargetRow>(`SELECT ${TARGET_COLUMNS} FROM app_user WHERE lower(email) = $1`, [login])).rows[0],
  );
  if (!found) throw new NotFound(`An account with the email ${email.trim()}`);
  return withTenant(pool, { orgId: found.org_id, userId: found.id }, async (c) => {
    const target = (await c.query<TargetRow>(`SELECT ${TARGET_COLUMNS} FROM app_user WHERE id = $1 FOR UPDATE`, [found.id])).rows[0];
    if (!target) throw new NotFound(`An account with the email ${email.trim()}`);
    return insertCode(c, target, null, now);
  });
}

/**
 * Spend a code for `userId` in the caller's transaction (inside the tenant of that user's org),
 * recording the device it let in. True when a live code matched (and is now spent), false when
 * none did (wrong, used, revoked, expired, another account's, or issued before the account's
 * role, athlete link, PIN or status changed: HQ 0014 `account_stamp`).
 */
export async function spendEnrolmentCode(c: pg.PoolClient, userId: string, typed: string, deviceId: string, now: number): Promise<boolean> {
  const hash = hashEnrolmentCode(typed);
  if (hash === null) return false;
  const at = new Date(now).toISOString();
  const r = await c.query(
    `UPDATE hq_enrolment_code SET used_at = $1, used_by_device = $2
      WHERE user_id = $3 AND code_hash = $4 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $1
        AND account_stamp = (SELECT hq_account_stamp(u.role, u.linked_athlete_id, u.pin_hash, u.active) FROM app_user u WHERE u.id = $3)`,
    [at, deviceId, userId, hash],
  );
  return r.rowCount === 1;
}

/** The refusal for a missing code on POST /v1/devices (code `Validation`): what to do next. */
export function codeRequired(): AppError {
  return new AppError({
    code: 'Validation',
    message:
      'Signing a device in to HQ needs a one-time sign-in code as well as the email and PIN. Ask a club owner or administrator for one, or issue one for yourself from a device already signed in to HQ (Settings → Sync).',
    issues: [{ path: 'code', message: 'required' }],
  });
}
