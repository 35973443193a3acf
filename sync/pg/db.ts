/**
 * Postgres access for the HQ server: the migration runner (as the owner role), the app pool (as
 * the app role) and `withTenant`, the only way a request's queries run: one transaction with the
 * caller's org (and self-scope) set by `set_config(…, true)` (= SET LOCAL), so row-level security
 * sees exactly that tenant and the setting ends with the transaction.
 *
 * Values come back in the device's shapes: `date` as `YYYY-MM-DD`, `timestamptz` as ISO-8601 UTC
 * (`2026-11-29T10:00:00.000Z`), `bigint` as a number.
 */
import pg from 'pg';
import { AppError } from '../../models/errors';
import { HQ_MIGRATIONS } from './migrations';

/**
 * Raised when the database was migrated by a different build (applied migrations diverge). Code
 * `Conflict`, as the device's MigrationMismatch: the database and this build disagree; nothing
 * was changed.
 */
export class HqMigrationMismatch extends AppError {
  constructor(message: string) {
    super({ code: 'Conflict', message });
    this.name = 'HqMigrationMismatch';
  }
}

const OID = { int8: 20, date: 1082, timestamp: 1114, timestamptz: 1184 } as const;
const defaultTz = pg.types.getTypeParser(OID.timestamptz);

/** Per-connection type parsers (not pg's global ones, which other code in the process may use). */
export const hqTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (format === 'binary') return pg.types.getTypeParser(oid, 'binary');
    if (oid === OID.date) return (v: string) => v;
    if (oid === OID.timestamptz) return (v: string) => (defaultTz(v) as Date).toISOString();
    if (oid === OID.int8) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, 'text');
  },
} as unknown as pg.CustomTypesConfig;

/** A pool with the HQ type parsers. */
export function createPool(url: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, types: hqTypes, idleTimeoutMillis: 10_000 });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Bring the HQ schema up to date, as the owner role.
 * @throws HqMigrationMismatch when applied migrations are not a prefix of this build's list.
 * @returns the names of the migrations applied now.
 */
export async function migrateHq(ownerUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: ownerUrl, types: hqTypes });
  await client.connect();
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS hq_schema_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    // One migrator at a time (two HQ processes starting together).
    await client.query('BEGIN');
    await client.query('LOCK TABLE hq_schema_migrations IN EXCLUSIVE MODE');
    const applied = (await client.query<{ id: number; name: string }>('SELECT id, name FROM hq_schema_migrations ORDER BY id')).rows;
    applied.forEach((a, i) => {
      const m = HQ_MIGRATIONS[i];
      if (!m || m.id !== a.id || m.name !== a.name) {
        throw new HqMigrationMismatch(
          `HQ database migration ${a.id} (${a.name}) is not migration #${i + 1} of this build (${m ? m.name : 'none'}); it was written by a different version of the HQ server.`,
        );
      }
    });
    const pending = HQ_MIGRATIONS.slice(applied.length);
    for (const m of pending) {
      await client.query(m.sql);
      await client.query('INSERT INTO hq_schema_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
    }
    await client.query('COMMIT');
    return pending.map((m) => m.name);
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    await client.end();
  }
}

/** Who a transaction runs for. `athleteId` is set only for self-scoped (athlete-role) users. */
export interface Tenant {
  orgId: string;
  userId?: string | null;
  /** Self-scope: the linked athlete, or {@link NO_ATHLETE} for an unlinked athlete account. */
  athleteId?: string | null;
}

/** The self-scope of an athlete account linked to no athlete: matches no row. */
export const NO_ATHLETE = '00000000-0000-0000-0000-000000000000';

/** A UUID in its canonical 8-4-4-4-12 hex form (RFC 9562 §4), any case. */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Run `fn` in one transaction of the app pool with the tenant settings in place (SET LOCAL);
 * commits when `fn` resolves, rolls back when it throws (and rethrows).
 */
export async function withTenant<T>(pool: pg.Pool, tenant: Tenant, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (const v of [tenant.orgId, tenant.userId, tenant.athleteId]) {
    if (v !== undefined && v !== null && !UUID_RE.test(v)) throw new Error('withTenant: ids must be UUIDs');
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT set_config('hq.org_id', $1, true), set_config('hq.user_id', $2, true), set_config('hq.athlete_id', $3, true)", [
      tenant.orgId,
      tenant.userId ?? '',
      tenant.athleteId ?? '',
    ]);
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/**
 * Run `fn` in one app-pool transaction with exactly one cross-org look-up setting (`hq.login_email`
 * or `hq.token_hash`) and no tenant: RLS then shows only the matching row(s) of app_user or
 * hq_device.
 */
export async function withLookup<T>(
  pool: pg.Pool,
  setting: 'hq.login_email' | 'hq.token_hash',
  value: string,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT set_config($1, $2, true)', [setting, value]);
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/**
 * Make sure publication `name` lists the synced tables (those of the HQ's own publication), for a
 * real Electric service run with manual table publishing (Electric names its publication
 * `electric_publication_<ELECTRIC_REPLICATION_STREAM_ID>`). Run as the owner role, which owns the
 * tables. When it already exists, the synced tables it lacks (added by later HQ migrations) are
 * added to it.
 * @returns true when the publication was created now.
 */
export async function ensurePublication(ownerUrl: string, name: string, like: string): Promise<boolean> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`Bad publication name "${name}" (lowercase letters, digits, _).`);
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const listed = async (pub: string): Promise<string[]> =>
      (
        await client.query<{ t: string }>(`SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1`, [pub])
      ).rows.map((r) => r.t);
    const tables = await listed(like);
    if (tables.length === 0) throw new Error(`Publication ${like} lists no tables; run the HQ migrations first.`);
    const exists = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [name]);
    if (exists.rowCount) {
      // Created by an earlier HQ version: tables synced since then (e.g. hq_proposal, HQ 0010) are added.
      const have = new Set(await listed(name));
      const missing = tables.filter((t) => !have.has(t));
      if (missing.length) await client.query(`ALTER PUBLICATION ${name} ADD TABLE ${missing.join(', ')}`);
      return false;
    }
    await client.query(`CREATE PUBLICATION ${name} FOR TABLE ${tables.join(', ')}`);
    return true;
  } finally {
    await client.end();
  }
}
