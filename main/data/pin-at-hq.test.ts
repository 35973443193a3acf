/**
 * `storePinHashSetAtHq` (main/data/identity.ts) on a real SQLite file: which of the row's fields it
 * takes from HQ's answer, by the state of the local row (review i12h B1, i12i minor 2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_EMAILS } from '../../models/seed/demo';
import { openDb, type Db } from './db';
import { findUserByEmail, storePinHashSetAtHq } from './identity';
import { seedDemo } from './seed';
import { sqlite } from './sqlite';

describe('storePinHashSetAtHq', () => {
  let dir: string;
  let db: Db;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'pin-at-hq-'));
    db = openDb(path.join(dir, 'device.sqlite'));
    seedDemo(db, { seed: 2 });
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const coach = () => findUserByEmail(db, DEMO_EMAILS.coach)!;
  const at = '2026-12-03T10:00:00.000Z';

  it("adopts HQ's version and updated_at only from the version just before it; otherwise the hash alone; never over a newer row", () => {
    const c = coach();
    storePinHashSetAtHq(db, c.id, 'h1', { version: c.version + 1, updated_at: at });
    expect(coach()).toMatchObject({ pin_hash: 'h1', version: c.version + 1, updated_at: at });
    // HQ two versions ahead (another device's change not pulled): the hash only, the version stays.
    storePinHashSetAtHq(db, c.id, 'h2', { version: c.version + 3, updated_at: '2026-12-03T11:00:00.000Z' });
    expect(coach()).toMatchObject({ pin_hash: 'h2', version: c.version + 1, updated_at: at });
    // The row here is already at (or past) HQ's version: nothing is written.
    storePinHashSetAtHq(db, c.id, 'h3', { version: c.version + 1, updated_at: at });
    expect(coach().pin_hash).toBe('h2');
  });

  it('on a row a change of this device still holds: the hash on the row and on the HQ copy kept under it, the version untouched', () => {
    const c = coach();
    const s = sqlite(db);
    s.prepare("INSERT INTO sync_optimistic (changeset_id, tbl, id) VALUES ('cs-1', 'app_user', ?)").run(c.id);
    s.prepare("INSERT INTO sync_server_row (tbl, id, row_json) VALUES ('app_user', ?, ?)").run(c.id, JSON.stringify({ ...c, pin_hash: 'old' }));
    storePinHashSetAtHq(db, c.id, 'h-new', { version: c.version + 1, updated_at: at });
    expect(coach()).toMatchObject({ pin_hash: 'h-new', version: c.version, updated_at: c.updated_at });
    const kept = s.prepare("SELECT row_json FROM sync_server_row WHERE tbl = 'app_user' AND id = ?").get(c.id) as { row_json: string };
    expect(JSON.parse(kept.row_json)).toMatchObject({ pin_hash: 'h-new', version: c.version });
  });

  it("never over HQ's copy at HQ's version or later: that copy carries HQ's hash, maybe a later PIN (review i12j)", () => {
    const c = coach();
    const s = sqlite(db);
    s.prepare("INSERT INTO sync_optimistic (changeset_id, tbl, id) VALUES ('cs-1', 'app_user', ?)").run(c.id);
    s.prepare("INSERT INTO sync_server_row (tbl, id, row_json) VALUES ('app_user', ?, ?)").run(
      c.id,
      JSON.stringify({ ...c, version: c.version + 2, pin_hash: 'h-newer' }),
    );
    storePinHashSetAtHq(db, c.id, 'h-ours', { version: c.version + 1, updated_at: at });
    const kept = s.prepare("SELECT row_json FROM sync_server_row WHERE tbl = 'app_user' AND id = ?").get(c.id) as { row_json: string };
    expect(JSON.parse(kept.row_json)).toMatchObject({ pin_hash: 'h-newer', version: c.version + 2 });
  });
});
