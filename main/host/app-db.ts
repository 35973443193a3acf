/**
 * Opening the app database for a host (web host, Electron): created, migrated and seeded with the
 * demo clubs on first start, so `npm run web` works on a fresh machine with no set-up.
 * (Replace with main/app/bootstrap.ts `openAppDatabase` once that lands; same behaviour.)
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { isDatabaseEmpty, seedDemo } from '../data/seed';

/** Default database path for `npm run web` (gitignored). */
export const DEFAULT_WEB_DB = '.data/demo.sqlite';

/** Open (creating and seeding the demo on first start) the database at `path`. */
export function openHostDatabase(path: string): { db: Db; created: boolean; seeded: boolean } {
  const full = resolve(path);
  const created = !existsSync(full);
  const db = openDb(full);
  let seeded = false;
  if (isDatabaseEmpty(db)) {
    seedDemo(db);
    seeded = true;
  }
  return { db, created, seeded };
}
