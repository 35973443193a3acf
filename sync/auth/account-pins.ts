/**
 * Setting another account's sign-in PIN at HQ (`POST /v1/users/:id/pin`; issue 12 final review B4).
 * The PIN hashes travel to every staff device in the `app_user` shape, so a PIN set on one device
 * alone would be overwritten by HQ's row at the next sync, and a reset meant to cut off a leaked PIN
 * silently reversed. On a device enrolled for sync a PIN is therefore set here, by the account that
 * enrolled the device (main/sync/engine.ts `setPinAtHq`), under the same rules as on the device
 * (main/services/admin.ts `setUserPin`): `user.manage`, a role the actor may manage
 * (`canManageRole`), `pinRefusal`, and never one's own PIN. The new hash changes the account's
 * stamp (HQ 0012, 0014), which ends its device tokens and unused sign-in codes. An activity row
 * says who set whose PIN, from which device (never the PIN).
 */
import { randomBytes, scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { Forbidden, NotFound } from '../../models/errors';
import { canManageRole, hasPermission, pinRefusal, type Role } from '../../models/roles';
import { withTenant } from '../pg/db';
import { activityActorName } from '../write/apply';
import type { Principal } from '../write/principal';
import { PIN_SCRYPT_N } from './pin';

const scryptAsync = promisify(scrypt) as (pin: string, salt: Buffer, keyLen: number, opts: { N: number; r: number; p: number }) => Promise<Buffer>;

/** Hash `pin` as sync/auth/pin.ts `hashPin` does (`scrypt$N$salt$hash`), off the event loop. */
async function hashPinAsync(pin: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(pin.normalize('NFKC'), salt, 32, { N: PIN_SCRYPT_N, r: 8, p: 1 });
  return `scrypt$${PIN_SCRYPT_N}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

interface PinTarget {
  id: string;
  role: string;
  linked_athlete_id: string | null;
  pin_hash: string | null;
  display_name: string;
}

/**
 * The rules of {@link setAccountPin}, read in `c` (the principal's tenant); `lock` takes the rows
 * for the write (the actor's `FOR SHARE`, the target's `FOR UPDATE`).
 * @throws as {@link setAccountPin}
 */
async function checkPinRules(
  c: pg.PoolClient,
  principal: Principal,
  userId: string,
  lock: boolean,
): Promise<{ actorName: string; target: PinTarget; verb: 'set' | 'reset' }> {
  const actor = (
    await c.query<{ role: string; active: boolean; deleted_at: string | null; display_name: string }>(
      `SELECT role, active, deleted_at, display_name FROM app_user WHERE id = $1${lock ? ' FOR SHARE' : ''}`,
      [principal.userId],
    )
  ).rows[0];
  if (!actor || !actor.active || actor.deleted_at || actor.role !== principal.role)
    throw new Forbidden('Your account changed at HQ (role or status) since this device signed in; sign in to HQ again.');
  const target = (
    await c.query<PinTarget>(
      `SELECT id, role, linked_athlete_id, pin_hash, display_name FROM app_user WHERE id = $1 AND deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
      [userId],
    )
  ).rows[0];
  if (!target) throw new NotFound(`User ${userId}`);
  if (!canManageRole(principal.role, target.role)) throw new Forbidden(`Your role (${principal.role}) cannot change ${target.role} accounts.`);
  const verb = target.pin_hash ? 'reset' : 'set';
  const refusal = pinRefusal(principal.role, target, verb);
  if (refusal) throw new Forbidden(refusal);
  return { actorName: actor.display_name, target, verb };
}

/**
 * Set account `userId`'s PIN (4–8 digits, checked by the caller's schema) as `principal`, at `now`
 * (ms since the epoch). The rules are checked before the PIN is hashed (scrypt: CPU an unauthorised
 * request never costs) and again, on locked rows, in the writing transaction. Returns the account's
 * row version and `updated_at` (ISO-8601, UTC) after the write, so the device stores them with the
 * hash and its next change of that account expects HQ's version.
 * @throws Forbidden (no `user.manage`; one's own PIN; a role the principal may not manage;
 *   `pinRefusal`; the principal's own account changed since it signed in), NotFound (no such
 *   account in the principal's club)
 */
export async function setAccountPin(
  pool: pg.Pool,
  principal: Principal,
  userId: string,
  pin: string,
  now: number = Date.now(),
): Promise<{ user_id: string; pin_set: true; version: number; updated_at: string }> {
  if (!hasPermission(principal.role as Role, 'user.manage'))
    throw new Forbidden(`Setting another account's PIN needs user.manage; your role (${principal.role}) does not have it.`);
  if (userId === principal.userId) throw new Forbidden('Your own PIN is not changed here.');
  const tenant = { orgId: principal.orgId, userId: principal.userId };
  await withTenant(pool, tenant, (c) => checkPinRules(c, principal, userId, false));
  const pinHash = await hashPinAsync(pin);
  return withTenant(pool, tenant, async (c) => {
    const { actorName, target, verb } = await checkPinRules(c, principal, userId, true);
    const at = new Date(now).toISOString();
    const written = await c.query<{ version: string | number }>(
      'UPDATE app_user SET pin_hash = $1, updated_at = $2, version = version + 1 WHERE id = $3 RETURNING version',
      [pinHash, at, target.id],
    );
    await c.query(
      `INSERT INTO activity (id, org_id, created_at, actor_user_id, actor_name, via_assistant, run_id, record_table, record_id, summary, changeset_id)
       VALUES ($1, $2, $3, $4, $5, false, NULL, 'app_user', $6, $7, NULL)`,
      [
        uuidv7(),
        principal.orgId,
        at,
        principal.userId,
        activityActorName(actorName, null, principal.deviceName),
        target.id,
        `${verb === 'reset' ? 'Reset' : 'Set'} the sign-in PIN of ${target.display_name} (${target.role})`,
      ],
    );
    return { user_id: target.id, pin_set: true, version: Number(written.rows[0]!.version), updated_at: at };
  });
}
