/** Organisations and users: the rows the actor is resolved from on every service call. */
import { uuidv7 } from 'uuidv7';
import type { Organization, User } from '../../models/records';
import type { Db } from './db';
import { accountStampOf } from './account-stamp';
import { decodeRow } from './rows';
import { sqlite, statement } from './sqlite';
import { isRowHeldHere } from './sync';

/** The user row by id (any org; callers compare org themselves), or null. */
export function findUserById(db: Db, id: string): User | null {
  return decodeRow<User>(
    'app_user',
    statement(db, 'SELECT * FROM app_user WHERE id = ? AND deleted_at IS NULL').get(id) as Record<string, unknown> | undefined,
  );
}

/** The user row by email, case-insensitive, or null. */
export function findUserByEmail(db: Db, email: string): User | null {
  return decodeRow<User>(
    'app_user',
    sqlite(db).prepare('SELECT * FROM app_user WHERE lower(email) = lower(?) AND deleted_at IS NULL').get(email) as Record<string, unknown> | undefined,
  );
}

/** Every user of every org (CLI `users`, sign-in picker on a shared clinic laptop). */
export function listAllUsers(db: Db): (User & { org_name: string; linked_athlete_name: string | null })[] {
  const rows = sqlite(db)
    .prepare(
      'SELECT u.*, o.name AS org_name, a.name AS linked_athlete_name FROM app_user u JOIN organization o ON o.id = u.org_id LEFT JOIN athlete a ON a.id = u.linked_athlete_id AND a.org_id = u.org_id WHERE u.deleted_at IS NULL ORDER BY o.name, u.role, u.email',
    )
    .all() as Record<string, unknown>[];
  return rows.map((r) => decodeRow<User & { org_name: string; linked_athlete_name: string | null }>('app_user', r)!);
}

/** The organisation row, or null. */
export function findOrganization(db: Db, id: string): Organization | null {
  const row = sqlite(db)
    .prepare('SELECT id, created_at, updated_at, version, deleted_at, name, plan, budget_cap_usd, assistant_model FROM organization WHERE id = ?')
    .get(id) as (Organization & { org_id?: string }) | undefined;
  return row ? ({ ...row, org_id: row.id } as Organization) : null;
}

/**
 * Rename an organisation if it is still at `expectedVersion` (optimistic concurrency; bumps the
 * version). Returns the row after the change, or `{ stale }` with the row as it now stands, or
 * null when there is no such organisation.
 */
export function renameOrganization(
  db: Db,
  id: string,
  name: string,
  expectedVersion: number,
  nowIso: string,
): { renamed: Organization } | { stale: Organization } | null {
  const r = sqlite(db)
    .prepare('UPDATE organization SET name = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ? AND deleted_at IS NULL')
    .run(name, nowIso, id, expectedVersion);
  const now = findOrganization(db, id);
  if (!now) return null;
  return r.changes === 1 ? { renamed: now } : { stale: now };
}

/** Insert an organisation (seeding and set-up only). */
export function insertOrganization(db: Db, o: Omit<Organization, 'org_id' | 'deleted_at'>): void {
  sqlite(db)
    .prepare('INSERT INTO organization (id, created_at, updated_at, version, name, plan, budget_cap_usd, assistant_model) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    .run(o.id, o.created_at, o.updated_at, o.version, o.name, o.plan, o.budget_cap_usd, o.assistant_model);
}

/** Active, live owner accounts of `orgId`, leaving out the ids in `except` (a changeset's own). */
export function countActiveOwners(db: Db, orgId: string, except: readonly string[]): number {
  const rows = sqlite(db).prepare("SELECT id FROM app_user WHERE org_id = ? AND role = 'owner' AND active = 1 AND deleted_at IS NULL").all(orgId) as {
    id: string;
  }[];
  return rows.filter((r) => !except.includes(r.id)).length;
}

/**
 * SHA-256 (hex) of what a signed-in session stands on: the account's role, linked athlete, PIN
 * hash and active flag. A change to any of them ends the sessions signed in before it (main/ipc/handlers.ts)
 * and the assistant runs started before it (main/kinetix: issue 13 re-reviews — a super admin set a
 * super admin's PIN, signed in as it, then made it a doctor; an athlete's run kept reading after its
 * account was relinked to another athlete). Null for an unknown account.
 */
export function accountStamp(db: Db, userId: string): string | null {
  const u = findUserById(db, userId);
  if (!u) return null;
  return accountStampOf(u.role, u.linked_athlete_id, u.pin_hash, u.active);
}

/** Set (or clear) a user's PIN hash. Not a changeset: credentials never travel in diffs. */
export function setUserPinHash(db: Db, userId: string, pinHash: string | null): void {
  sqlite(db).prepare('UPDATE app_user SET pin_hash = ?, updated_at = ? WHERE id = ?').run(pinHash, new Date().toISOString(), userId);
}

/**
 * Store the hash of a PIN HQ has just set (main/ipc/sync.ts `setPin`), with the row `version` and
 * `updated_at` (ISO-8601 UTC) HQ gave the account, so this device's next change of the account
 * expects HQ's version instead of being refused as stale. HQ's version is adopted only when this
 * device holds the version just before it (`hq.version - 1`): then the PIN was the only change and
 * every other field here is HQ's. Where HQ's row moved further (another device's change this device
 * has not pulled yet), only the hash is stored and the row keeps its older version, so a change made
 * here before the shapes catch up is refused as stale instead of overwriting that other change.
 * Where the shapes have already brought HQ's version or a later one, nothing is written (the row is
 * HQ's, hash included). Where a change of this device still holds the row (`sync_optimistic`), only
 * the hash is stored, on the row and on HQ's copy kept under it (`sync_server_row`): the row's
 * version is that change's, which HQ's answer settles. Known gap: when HQ's shape then brings the
 * account at that change's version (before the PIN's), the row shows that version's hash until the
 * PIN's version arrives, in the same or the next pull. `hq` null (an
 * older HQ): the hash only. One IMMEDIATE transaction (the shape worker writes the same file).
 */
export function storePinHashSetAtHq(db: Db, userId: string, pinHash: string, hq: { version: number; updated_at: string } | null): void {
  const s = sqlite(db);
  s.transaction(() => {
    const held = isRowHeldHere(db, 'app_user', userId);
    const row = s.prepare('SELECT version FROM app_user WHERE id = ?').get(userId) as { version: number } | undefined;
    if (!row) return;
    if (!hq || held) {
      s.prepare('UPDATE app_user SET pin_hash = ? WHERE id = ?').run(pinHash, userId);
      // HQ's copy kept under the held row gets the new hash too: when that change settles, the row
      // goes back to it, and the old PIN must not sign in meanwhile.
      // A copy at HQ's version or later already carries HQ's hash (maybe a later PIN): left as it is.
      if (held)
        s.prepare(
          "UPDATE sync_server_row SET row_json = json_set(row_json, '$.pin_hash', ?) WHERE tbl = 'app_user' AND id = ? AND row_json IS NOT NULL AND (? IS NULL OR coalesce(json_extract(row_json, '$.version'), 0) < ?)",
        ).run(pinHash, userId, hq?.version ?? null, hq?.version ?? null);
    } else if (row.version === hq.version - 1) {
      s.prepare('UPDATE app_user SET pin_hash = ?, version = ?, updated_at = ? WHERE id = ?').run(pinHash, hq.version, hq.updated_at, userId);
    } else if (row.version < hq.version) {
      s.prepare('UPDATE app_user SET pin_hash = ? WHERE id = ?').run(pinHash, userId);
    }
  }).immediate();
}

/** Who set a PIN, for the activity row written with it (`summary` names whose PIN, never the PIN). */
export interface PinActivity {
  orgId: string;
  actorUserId: string;
  actorName: string;
  summary: string;
}

/**
 * Set a user's PIN hash and write the activity row saying who set whose PIN, in one transaction
 * (both or neither). The activity row has no changeset (nothing to diff or undo: the hash is not
 * shown) and names the account (`record_table` app_user, `record_id` the user). Returns the
 * activity row's id.
 */
export function setUserPinHashWithActivity(db: Db, userId: string, pinHash: string, entry: PinActivity): string {
  const id = uuidv7();
  const now = new Date().toISOString();
  sqlite(db).transaction(() => {
    sqlite(db).prepare('UPDATE app_user SET pin_hash = ?, updated_at = ? WHERE id = ?').run(pinHash, now, userId);
    sqlite(db)
      .prepare(
        'INSERT INTO activity (id, org_id, created_at, actor_user_id, actor_name, via_assistant, run_id, record_table, record_id, summary, changeset_id) VALUES (?, ?, ?, ?, ?, 0, NULL, ?, ?, ?, NULL)',
      )
      .run(id, entry.orgId, now, entry.actorUserId, entry.actorName, 'app_user', userId, entry.summary);
  })();
  return id;
}

/** Read an org setting's JSON value, or undefined. */
export function getOrgSetting<T>(db: Db, orgId: string, key: string): T | undefined {
  const row = sqlite(db).prepare('SELECT value_json FROM org_setting WHERE org_id = ? AND key = ?').get(orgId, key) as { value_json: string } | undefined;
  return row ? (JSON.parse(row.value_json) as T) : undefined;
}

/** Write an org setting's JSON value (upsert). */
export function putOrgSetting(db: Db, orgId: string, key: string, value: unknown): void {
  sqlite(db)
    .prepare(
      `INSERT INTO org_setting (org_id, key, value_json, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (org_id, key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at, version = version + 1`,
    )
    .run(orgId, key, JSON.stringify(value), new Date().toISOString());
}

/** Insert a user row directly (bootstrap and seeding only; in the app users are created by `users.create`). */
export function insertUser(db: Db, u: Omit<User, 'created_at' | 'updated_at' | 'version' | 'deleted_at'> & { created_at?: string }): void {
  const now = u.created_at ?? new Date().toISOString();
  sqlite(db)
    .prepare(
      'INSERT INTO app_user (id, org_id, created_at, updated_at, version, deleted_at, email, display_name, role, linked_athlete_id, active, budget_cap_usd, pin_hash) VALUES (?, ?, ?, ?, 1, NULL, ?, ?, ?, ?, ?, ?, ?)',
    )
    .run(u.id, u.org_id, now, now, u.email, u.display_name, u.role, u.linked_athlete_id, u.active ? 1 : 0, u.budget_cap_usd, u.pin_hash);
}
