/**
 * Test fixture: device SQLite files, each migrated and empty (no demo seed) in a directory of its
 * own under the system temp folder, closed and removed after the file's tests. Call it inside a
 * `describe` before registering the hooks that stop engines on these files: vitest runs `afterAll`
 * hooks in reverse order, so the engines stop before their files close.
 *
 *   const devices = useDeviceFiles('ai-sync-pin-');
 *   it('…', async () => { const db = devices.open(); … });
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openDb, type Db } from '../../data/db';

/** Fresh device files for the tests of one `describe`; `prefix` names their temp directories. */
export function useDeviceFiles(prefix: string): { open(): Db } {
  const dirs: string[] = [];
  const dbs: Db[] = [];
  afterAll(() => {
    for (const db of dbs) db.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    open(): Db {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      const db = openDb(join(d, 'device.sqlite'));
      dbs.push(db);
      return db;
    },
  };
}
