/**
 * The admin step: what a database administrator (a superuser, or a role with CREATEROLE and
 * CREATEDB) does once per installation, and what the app's migrations must never do themselves —
 * create the three roles, the database owned by the owner role, and grant connect. Idempotent:
 * re-running it resets the roles' attributes and passwords to what is given.
 *
 * No extension is needed (UUID v7 ids are made by the clients; hashing is done in Node).
 */
import pg from 'pg';
import { HQ_ROLES, type HqRolePasswords } from './roles';

/** A SQL string literal (for passwords in CREATE/ALTER ROLE, which take no bind parameters). */
function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function ident(s: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(s)) throw new Error(`Bad SQL identifier "${s}" (use lowercase letters, digits and _).`);
  return s;
}

/**
 * Create or reset the HQ roles and the database.
 * @param adminUrl a superuser connection URL (any database of the server).
 * @param database the HQ database name (created, owned by `hq_owner`, when missing).
 */
export async function runAdminSetup(adminUrl: string, database: string, passwords: HqRolePasswords): Promise<void> {
  const db = ident(database);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const roles: [string, string, string][] = [
      [HQ_ROLES.owner, 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', passwords.owner],
      [HQ_ROLES.app, 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT', passwords.app],
      [HQ_ROLES.replication, 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE REPLICATION NOBYPASSRLS NOINHERIT', passwords.replication],
    ];
    for (const [name, attrs, pw] of roles) {
      const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [name]);
      await client.query(`${exists.rowCount ? 'ALTER' : 'CREATE'} ROLE ${ident(name)} WITH ${attrs} PASSWORD ${literal(pw)}`);
    }
    const dbExists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
    if (!dbExists.rowCount) await client.query(`CREATE DATABASE ${db} OWNER ${HQ_ROLES.owner} ENCODING 'UTF8'`);
    await client.query(`REVOKE ALL ON DATABASE ${db} FROM PUBLIC`);
    await client.query(`GRANT CONNECT ON DATABASE ${db} TO ${HQ_ROLES.app}, ${HQ_ROLES.replication}`);
    await client.query(`GRANT CONNECT, CREATE, TEMPORARY ON DATABASE ${db} TO ${HQ_ROLES.owner}`);
  } finally {
    await client.end();
  }
  // In the new database: the public schema belongs to the owner role (PostgreSQL 15 makes it the
  // database owner's already; older clusters need it said).
  const inDb = new pg.Client({ connectionString: withDatabase(adminUrl, db) });
  await inDb.connect();
  try {
    await inDb.query(`ALTER SCHEMA public OWNER TO ${HQ_ROLES.owner}`);
    await inDb.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
  } finally {
    await inDb.end();
  }
}

/** `url` with its database (path) replaced. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

/** `url` with its user and password replaced (same host, port and database). */
export function withCredentials(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  return u.toString();
}
