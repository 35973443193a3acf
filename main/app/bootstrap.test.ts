import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findUserByEmail, listAllUsers } from '../data/identity';
import { DEMO_EMAILS } from '../data/seed';
import { APP_DB_FILE, defaultDatabasePath, openAppDatabaseWithInfo } from './bootstrap';

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-boot-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('first-start bootstrap', () => {
  it('default path: ATHLETE_DB, else userData, else ./.data', () => {
    expect(defaultDatabasePath({ env: { ATHLETE_DB: '/x/y.sqlite' } })).toBe(path.resolve('/x/y.sqlite'));
    expect(defaultDatabasePath({ env: {}, userDataDir: '/u' })).toBe(path.resolve('/u', APP_DB_FILE));
    expect(defaultDatabasePath({ env: {} })).toBe(path.resolve('.data', APP_DB_FILE));
  });

  it('creates and seeds a missing file once; reopening never reseeds', () => {
    const file = path.join(tmp(), 'nested', 'app.sqlite');
    const first = openAppDatabaseWithInfo(undefined, { env: { ATHLETE_DB: file }, today: '2026-03-15' });
    expect(first).toMatchObject({ path: file, created: true, seeded: true });
    expect(findUserByEmail(first.db, DEMO_EMAILS.physio)?.role).toBe('physio');
    first.db.close();
    const again = openAppDatabaseWithInfo(file);
    expect(again).toMatchObject({ created: false, seeded: false });
    expect(new Set(listAllUsers(again.db).map((u) => u.org_id)).size).toBe(2);
    expect(listAllUsers(again.db).filter((u) => u.email === DEMO_EMAILS.physio)).toHaveLength(1);
    again.db.close();
  });

  it('seedDemo: false creates an empty, migrated file', () => {
    const file = path.join(tmp(), 'empty.sqlite');
    const r = openAppDatabaseWithInfo(file, { seedDemo: false });
    expect(r).toMatchObject({ created: true, seeded: false });
    expect(listAllUsers(r.db)).toEqual([]);
    r.db.close();
  });
});
