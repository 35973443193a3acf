/**
 * First start: the app runs on an embedded default, a local SQLite file created and seeded with
 * the demo club the first time it is opened. The web host and Electron main both call
 * {@link openAppDatabase}; neither needs a server.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { ensureHelpIndexed } from '../services/help';
import { seedDemo } from '../data/seed';

/** File name of the app database inside the user-data folder. */
export const APP_DB_FILE = 'athlete-intelligence.sqlite';

/**
 * Where the app keeps its database: `ATHLETE_DB` when set, else
 * `<userDataDir>/athlete-intelligence.sqlite` (Electron's userData), else `./.data/athlete-intelligence.sqlite`.
 */
export function defaultDatabasePath(opts: { userDataDir?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const env = opts.env ?? process.env;
  const fromEnv = env.ATHLETE_DB?.trim();
  if (fromEnv) return resolve(fromEnv);
  return resolve(join(opts.userDataDir ?? '.data', APP_DB_FILE));
}

export interface OpenAppDatabaseOptions {
  /** Electron's `app.getPath('userData')`; ignored when a path or `ATHLETE_DB` is given. */
  userDataDir?: string;
  /** Seed the demo club into a newly created file. @default true */
  seedDemo?: boolean;
  /** Demo seed and "today" (tests); defaults: seed 1, the current date. */
  seed?: number;
  today?: string;
  /** Environment to read `ATHLETE_DB` from. @default process.env */
  env?: NodeJS.ProcessEnv;
}

/** What {@link openAppDatabaseWithInfo} did. */
export interface OpenedAppDatabase {
  db: Db;
  path: string;
  /** True when the file did not exist and was created (and seeded, unless disabled). */
  created: boolean;
  seeded: boolean;
}

/**
 * Open the app database at `path` (default {@link defaultDatabasePath}), creating it and seeding
 * the demo club when the file does not exist yet. An existing file is only migrated, never reseeded.
 */
export function openAppDatabaseWithInfo(path?: string, opts: OpenAppDatabaseOptions = {}): OpenedAppDatabase {
  const file = path ? resolve(path) : defaultDatabasePath(opts);
  const created = !existsSync(file);
  const db = openDb(file);
  let seeded = false;
  if (created && opts.seedDemo !== false) {
    try {
      seedDemo(db, { ...(opts.seed !== undefined ? { seed: opts.seed } : {}), ...(opts.today ? { today: opts.today } : {}) });
      seeded = true;
    } catch (e) {
      db.close();
      throw e;
    }
  }
  // The shipped help pages are (re)indexed when their content changed; a no-op otherwise.
  ensureHelpIndexed(db);
  return { db, path: file, created, seeded };
}

/** Open (and on first start create and seed) the app database; see {@link openAppDatabaseWithInfo}. */
export function openAppDatabase(path?: string, opts: OpenAppDatabaseOptions = {}): Db {
  return openAppDatabaseWithInfo(path, opts).db;
}
