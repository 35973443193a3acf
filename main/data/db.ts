/**
 * The data layer's handle on one SQLite file (better-sqlite3 v12). The only module that opens
 * the database; everything above it goes through the functions of main/data/.
 * WAL journal, foreign keys on, a busy timeout so two processes can share a file.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations';

/** Raised when a database file was written by a different build (its migrations diverge). */
export class MigrationMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationMismatch';
  }
}

/** An open database. `raw` is for main/data/ modules only (lint keeps better-sqlite3 here). */
export interface Db {
  readonly path: string;
  readonly raw: Database.Database;
  close(): void;
}

/**
 * Open (creating if needed) the SQLite file at `path` and bring its schema up to date.
 * `migrateUpTo` stops after that migration id (tests migrate a database that already holds data).
 * @throws MigrationMismatch when applied migrations are not a prefix of this build's list.
 */
export function openDb(path: string, opts: { migrateUpTo?: number } = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new Database(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  raw.pragma('synchronous = NORMAL');
  migrate(raw, opts.migrateUpTo ?? Number.POSITIVE_INFINITY);
  return { path, raw, close: () => raw.close() };
}

function migrate(raw: Database.Database, upTo: number): void {
  raw.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const applied = raw.prepare('SELECT id, name FROM schema_migrations ORDER BY id').all() as { id: number; name: string }[];
  applied.forEach((a, i) => {
    const m = MIGRATIONS[i];
    if (!m || m.id !== a.id || m.name !== a.name) {
      throw new MigrationMismatch(`Database migration ${a.id} (${a.name}) is not migration #${i + 1} of this build (${m ? m.name : 'none'}). It was written by a different version of the app; open it with that version or restore a backup.`);
    }
  });
  const pending = MIGRATIONS.slice(applied.length).filter((m) => m.id <= upTo);
  if (pending.length === 0) return;
  const run = raw.transaction(() => {
    for (const m of pending) {
      raw.exec(m.sql);
      raw.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, new Date().toISOString());
    }
  });
  run.immediate();
}

/** Applied migrations, oldest first (for diagnostics and tests). */
export function appliedMigrations(db: Db): { id: number; name: string; applied_at: string }[] {
  return db.raw.prepare('SELECT id, name, applied_at FROM schema_migrations ORDER BY id').all() as { id: number; name: string; applied_at: string }[];
}

/**
 * Run `fn` in one IMMEDIATE transaction (a savepoint when already inside one): everything it
 * writes commits together or not at all. For callers above the data layer that must combine
 * several data-layer writes atomically.
 */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return db.raw.transaction(fn).immediate();
}
