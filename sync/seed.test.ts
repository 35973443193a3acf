/**
 * The HQ's first-start seed writes the desktop's demo club: for the same seed and day, every row of
 * every synced table equals the device's SQLite seed (ids, values, PIN hashes), and the PINs verify
 * at HQ. A second start does not seed again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openDb, type Db } from '../main/data/db';
import { seedDemo, DEMO_PIN, DEMO_EMAILS } from '../main/data/seed';
import { TABLE_NAMES } from '../models/tables';
import { verifyPin } from './auth/pin';
import { hqTypes } from './pg/db';
import { initialiseHq } from './seed';
import { havePg, useHqDatabase } from './testing/hqdb';
import { sqlite } from '../main/data/sqlite';

const TODAY = '2026-03-15';
const BOOLS = new Set(['active', 'view_matches_declared', 'trustworthy', 'via_assistant']);

function normalise(rows: Record<string, unknown>[]): string[] {
  return rows
    .map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, BOOLS.has(k) && typeof v === 'boolean' ? (v ? 1 : 0) : v]))))
    .sort();
}

describe.skipIf(!havePg)('HQ first-start seed', () => {
  const hq = useHqDatabase();
  let device: Db | null = null;
  afterAll(() => device?.close());

  it('seeds the same rows, ids and PIN hashes as the desktop, once', async () => {
    const first = await initialiseHq(hq.ownerUrl, { seed: 1, today: TODAY });
    expect(first.initialised && first.seeded).toBe(true);
    device = openDb(':memory:');
    const local = seedDemo(device, { seed: 1, today: TODAY });
    if (!first.initialised || !first.seeded) throw new Error('not seeded');
    expect(first.summary.orgId).toBe(local.orgId);
    expect(first.summary.userIds).toEqual(local.userIds);
    expect(first.summary.counts).toEqual(local.counts);

    // Read back as the replication role (which reads every org) and compare table by table.
    const client = new pg.Client({ connectionString: hq.replicationUrl, types: hqTypes });
    await client.connect();
    try {
      for (const table of ['organization', ...TABLE_NAMES]) {
        const cols = (sqlite(device).prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name).join(', ');
        const sqliteRows = sqlite(device).prepare(`SELECT ${cols} FROM ${table}`).all() as Record<string, unknown>[];
        const pgRows = (await client.query(`SELECT * FROM ${table}`)).rows as Record<string, unknown>[];
        expect(pgRows.length, table).toBe(sqliteRows.length);
        expect(normalise(pgRows), table).toEqual(normalise(sqliteRows));
      }
      const physio = (await client.query<{ pin_hash: string }>('SELECT pin_hash FROM app_user WHERE email = $1', [DEMO_EMAILS.physio])).rows[0]!;
      expect(await verifyPin(DEMO_PIN, physio.pin_hash)).toBe(true);
      expect(await verifyPin('9999', physio.pin_hash)).toBe(false);
    } finally {
      await client.end();
    }

    expect(await initialiseHq(hq.ownerUrl, { seed: 2, today: TODAY })).toEqual({ initialised: false });
  });
});
