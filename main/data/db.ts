/**
 * The data layer's handle on one SQLite file (better-sqlite3 v12). The only module that opens
 * the database; everything above it goes through the functions of main/data/.
 * Busy timeout first, then WAL journal and foreign keys; migrations are applied under a write
 * lock so several processes can open (and create) the same file at once.
 */
import { AppError } from '../../models/errors';
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS, sqlSha256 } from './migrations';
import { cleanOneLine } from '../../models/text';
import { accountStampOf } from './account-stamp';
import { bindConnection, sqlite } from './sqlite';

/** Raised when a database file was written by a different build (its migrations diverge). Code Conflict: the file and this build disagree; nothing was changed. */
export class MigrationMismatch extends AppError {
  constructor(message: string) {
    super({ code: 'Conflict', message });
    this.name = 'MigrationMismatch';
  }
}

/**
 * An open database: a handle to pass down, with no way to run SQL through it. The connection is
 * reached only inside the data layer, with `sqlite(db)` from main/data/sqlite.ts (lint keeps that
 * module, and better-sqlite3, to main/data/).
 */
export interface Db {
  readonly path: string;
  close(): void;
}

/**
 * How long (ms) a statement waits for another connection's lock before failing with
 * SQLITE_BUSY. Set on the connection before any other statement (better-sqlite3's `timeout`
 * option installs the busy handler as the file is opened), so the WAL switch and the migration
 * check already wait for another process instead of failing.
 */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * The app's own SQL functions, registered on every connection before migrating: `ai_clean_line(text)`
 * (models/text.ts `cleanOneLine`; NULL and non-text pass through), used by migration 0016;
 * `ai_account_stamp(role, linked_athlete_id, pin_hash, active)` (main/data/account-stamp.ts), used
 * by migration 0017.
 */
export function registerSqlFunctions(raw: Database.Database): void {
  raw.function('ai_clean_line', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? cleanOneLine(v) : v) as string | null);
  raw.function('ai_account_stamp', { deterministic: true }, (role: unknown, linked: unknown, pin: unknown, active: unknown) =>
    accountStampOf(String(role), typeof linked === 'string' ? linked : null, typeof pin === 'string' ? pin : null, Boolean(active)),
  );
}

/**
 * Open (creating if needed) the SQLite file at `path` and bring its schema up to date.
 * Safe when several processes (the app, `npm run cli`, the MCP server) open the same new file at
 * once: pending migrations are decided and applied inside one write lock (BEGIN IMMEDIATE), so
 * exactly one process applies them and the others find them applied.
 * `migrateUpTo` stops after that migration id (tests migrate a database that already holds data).
 * @throws MigrationMismatch when applied migrations are not a prefix of this build's list, or an
 *   applied migration's recorded SHA-256 differs from this build's text of it.
 * @throws Error when this build's own migration text no longer matches its frozen hash.
 */
export function openDb(path: string, opts: { migrateUpTo?: number } = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    enableWal(raw, path);
    raw.pragma('foreign_keys = ON');
    raw.pragma('synchronous = NORMAL');
    registerSqlFunctions(raw);
    migrate(raw, opts.migrateUpTo ?? Number.POSITIVE_INFINITY);
  } catch (e) {
    raw.close();
    throw e;
  }
  const closers: (() => void)[] = [];
  const db: Db = {
    path,
    close: () => {
      for (const c of closers.splice(0)) c();
      raw.close();
    },
  };
  closeHooks.set(db, closers);
  bindConnection(db, raw);
  return db;
}

const closeHooks = new WeakMap<Db, (() => void)[]>();

/**
 * Open a second connection to `db`'s file with foreign keys off, closed with `db`: the sync
 * engine's replica writes (main/data/sync.ts). Turning `foreign_keys` off and on around each
 * transaction on the one connection would expire every prepared statement each time (a flag
 * pragma), which cost more than the rows themselves. Null for an in-memory database (a second
 * connection would be a different database).
 */
export function openSiblingConnection(db: Db): Database.Database | null {
  const closers = closeHooks.get(db);
  if (db.path === ':memory:' || db.path === '' || !closers) return null;
  const raw = new Database(db.path, { timeout: BUSY_TIMEOUT_MS });
  raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  raw.pragma('foreign_keys = OFF');
  raw.pragma('synchronous = NORMAL');
  closers.push(() => raw.close());
  return raw;
}

/** Page cache of the replica writer connection, KiB (used only as pages are touched). */
export const REPLICA_WRITER_CACHE_KIB = 65_536;

/**
 * Open a connection to an existing, already migrated database file from another thread: the
 * device sync's shape worker (main/sync/shape-worker.ts) writes replica rows through it, with the
 * same busy timeout as {@link openDb}, foreign keys off for good (replica rows, main/data/sync.ts)
 * and `synchronous = NORMAL`. It does not migrate (the thread that opened the file with `openDb`
 * did) and does not switch the journal mode (the file is in WAL already, so this connection's
 * writes and the opener's reads and writes proceed side by side; a writer waits at most the other
 * connection's current transaction, up to BUSY_TIMEOUT_MS). Its page cache is
 * {@link REPLICA_WRITER_CACHE_KIB} (SQLite's default is 2 MiB): a first sync writes tables and
 * indexes larger than that, and re-reading evicted b-tree pages cost ~15 % of the apply's CPU
 * (BENCHMARKS.md "Device sync").
 * @throws Error (SqliteError) when the file cannot be opened, or `path` is `:memory:` (another
 *   connection would be another database)
 */
export function openReplicaWriter(path: string): Db {
  if (path === ':memory:' || path === '') throw new Error('openReplicaWriter needs a database file, not an in-memory database.');
  const raw = new Database(path, { timeout: BUSY_TIMEOUT_MS, fileMustExist: true });
  try {
    raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    raw.pragma('foreign_keys = OFF');
    raw.pragma('synchronous = NORMAL');
    raw.pragma(`cache_size = -${REPLICA_WRITER_CACHE_KIB}`);
  } catch (e) {
    raw.close();
    throw e;
  }
  const db: Db = { path, close: () => raw.close() };
  bindConnection(db, raw);
  return db;
}

/**
 * Switch to WAL. The switch needs an exclusive lock on a fresh file; SQLite can report
 * SQLITE_BUSY for it without calling the busy handler (while another connection runs recovery
 * or its own switch), so it is retried here for up to BUSY_TIMEOUT_MS.
 */
function enableWal(raw: Database.Database, path: string): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      const mode = raw.pragma('journal_mode = WAL', { simple: true });
      if (mode === 'wal' || path === ':memory:') return;
    } catch (e) {
      if (!isBusy(e) || Date.now() > deadline) throw e;
    }
    if (Date.now() > deadline) throw new Error(`Could not switch ${path} to WAL journal mode within ${BUSY_TIMEOUT_MS} ms (another process holds it).`);
    sleepMs(20);
  }
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY_'));
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

let buildChecked = false;
/** This build's migration list is frozen: each entry's SQL still hashes to its recorded sha256. */
function checkBuildMigrations(): void {
  if (buildChecked) return;
  MIGRATIONS.forEach((m, i) => {
    if (m.id !== i + 1) throw new Error(`Migration ${m.name} has id ${m.id}; ids must be 1..n in order.`);
    const actual = sqlSha256(m.sql);
    if (actual !== m.sha256) {
      throw new Error(
        `Migration ${m.name} no longer matches its frozen text (sha256 ${actual}, recorded ${m.sha256}). Applied migrations are never edited: revert the edit and add a new numbered migration. (A brand-new migration records this hash in main/data/migrations/index.ts.)`,
      );
    }
  });
  buildChecked = true;
}

interface AppliedRow {
  id: number;
  name: string;
  sha256: string | null;
}

const SCHEMA_MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL, sha256 TEXT)`;

/** Applied rows, or null when the bookkeeping table (or its sha256 column) does not exist yet. */
function readApplied(raw: Database.Database): AppliedRow[] | null {
  const cols = raw.prepare(`SELECT name FROM pragma_table_info('schema_migrations')`).all() as { name: string }[];
  if (cols.length === 0 || !cols.some((c) => c.name === 'sha256')) return null;
  return raw.prepare('SELECT id, name, sha256 FROM schema_migrations ORDER BY id').all() as AppliedRow[];
}

/** Throws MigrationMismatch unless `applied` is a prefix of this build's list with equal hashes. */
function checkApplied(applied: readonly AppliedRow[]): void {
  applied.forEach((a, i) => {
    const m = MIGRATIONS[i];
    if (!m || m.id !== a.id || m.name !== a.name) {
      throw new MigrationMismatch(
        `Database migration ${a.id} (${a.name}) is not migration #${i + 1} of this build (${m ? m.name : 'none'}). It was written by a different version of the app; open it with that version or restore a backup.`,
      );
    }
    if (a.sha256 !== null && a.sha256 !== m.sha256) {
      throw new MigrationMismatch(
        `Database migration ${a.id} (${a.name}) was applied from different SQL (sha256 ${a.sha256}) than this build's (${m.sha256}). It was written by a different version of the app; open it with that version or restore a backup.`,
      );
    }
  });
}

function migrate(raw: Database.Database, upTo: number): void {
  checkBuildMigrations();
  const wanted = MIGRATIONS.filter((m) => m.id <= upTo).length;
  // Fast path without a write lock: everything wanted is applied and every hash is recorded.
  const seen = readApplied(raw);
  if (seen) {
    checkApplied(seen);
    if (seen.length >= wanted && seen.every((a) => a.sha256 !== null)) return;
  }
  // Decide and apply inside one write lock: a second process waits here (busy_timeout), then
  // re-reads and finds the migrations applied by the first.
  const run = raw.transaction(() => {
    raw.exec(SCHEMA_MIGRATIONS_DDL);
    const cols = raw.prepare(`SELECT name FROM pragma_table_info('schema_migrations')`).all() as { name: string }[];
    if (!cols.some((c) => c.name === 'sha256')) raw.exec('ALTER TABLE schema_migrations ADD COLUMN sha256 TEXT');
    const applied = readApplied(raw) ?? [];
    checkApplied(applied);
    // Rows applied before hashes were recorded (names already match): record this build's hash.
    const backfill = raw.prepare('UPDATE schema_migrations SET sha256 = ? WHERE id = ? AND sha256 IS NULL');
    for (const a of applied) if (a.sha256 === null) backfill.run(MIGRATIONS[a.id - 1]!.sha256, a.id);
    const insert = raw.prepare('INSERT INTO schema_migrations (id, name, applied_at, sha256) VALUES (?, ?, ?, ?)');
    for (const m of MIGRATIONS.slice(applied.length, wanted)) {
      raw.exec(m.sql);
      insert.run(m.id, m.name, new Date().toISOString(), m.sha256);
    }
  });
  run.immediate();
}

/** Applied migrations, oldest first (for diagnostics and tests). */
export function appliedMigrations(db: Db): { id: number; name: string; applied_at: string; sha256: string | null }[] {
  return sqlite(db).prepare('SELECT id, name, applied_at, sha256 FROM schema_migrations ORDER BY id').all() as {
    id: number;
    name: string;
    applied_at: string;
    sha256: string | null;
  }[];
}

/**
 * Run `fn` in one IMMEDIATE transaction (a savepoint when already inside one): everything it
 * writes commits together or not at all. For callers above the data layer that must combine
 * several data-layer writes atomically.
 */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return sqlite(db).transaction(fn).immediate();
}
