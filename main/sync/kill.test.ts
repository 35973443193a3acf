/**
 * Kill -9 safety of device sync: a real device process (main/sync/testing/sync-child.ts) is
 * SIGKILLed mid-upload (HQ answered, nothing recorded; a batch recorded, the next not sent) and
 * mid-apply (between the bounded transactions of one shape batch; between tables), then restarted.
 * The final state must equal a run without kills: every changeset applied at HQ exactly once,
 * nothing lost locally, and the replica row for row the same as a device synced without a kill.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { callVerb } from '../services';
import { DeviceSync, syncedTables } from './engine';
import { havePg, useHqStack } from './testing/hq-stack';
import { sqlite } from '../data/sqlite';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function devicePath(): string {
  const d = mkdtempSync(join(tmpdir(), 'ai-device-kill-'));
  dirs.push(d);
  return join(d, 'device.sqlite');
}

/** Run the device process; resolves with its exit code and the signal that ended it. */
function runChild(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'main/sync/testing/sync-child.ts', ...args], {
      cwd: process.cwd(),
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    proc.on('exit', (code, signal) => resolve({ code, signal, out, err }));
  });
}

/** Every synced table's rows, in id order (the replica as a whole). */
function replica(db: Db, tables: string[]): Record<string, unknown[]> {
  return Object.fromEntries(tables.map((t) => [t, sqlite(db).prepare(`SELECT * FROM ${t} ORDER BY id`).all()]));
}

describe.skipIf(!havePg)('kill -9 during sync', () => {
  const hq = useHqStack();

  // Was skipped (2026-12-01): the last run's changesets stayed `applied`, not `synced`. The cause was
  // not the replayed txid (HQ replays the original outcome, txid included) but the pass ending at the
  // shapes' up-to-date before logical replication had brought HQ's last commits into the shape log;
  // a pass now waits, bounded, for what HQ applied to be delivered (DeviceSync.awaitSettled).
  it('killed mid-upload (after HQ answered; between batches), restarted: every changeset applied once, nothing lost', async () => {
    const path = devicePath();
    const db = openDb(path);
    const sync = await DeviceSync.enrol(db, {
      hqUrl: hq.url,
      email: DEMO_EMAILS.physio,
      pin: DEMO_PIN,
      code: await hq.code(DEMO_EMAILS.physio),
      deviceName: 'kill laptop',
    });
    await sync.syncOnce();
    const userId = findUserByEmail(db, DEMO_EMAILS.physio)!.id;
    const athletes = sqlite(db).prepare('SELECT id, version FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 12').all() as {
      id: string;
      version: number;
    }[];
    const ids: string[] = [];
    for (const [i, a] of athletes.entries()) {
      const r = callVerb({ db, userId }, 'athletes.update', { id: a.id, notes: `kill test ${i}` }) as { changeset: { id: string } };
      ids.push(r.changeset.id);
    }
    db.close();

    // 1. Dies right after HQ answered the first batch of 5 (applied at HQ, not recorded here).
    const k1 = await runChild(['--db', path, '--batch', '5', '--kill-at', 'upload:response', '--kill-after', '1']);
    expect(k1.signal).toBe('SIGKILL');
    // 2. Dies after the second batch's outcomes were recorded, before the third is sent.
    const k2 = await runChild(['--db', path, '--batch', '5', '--kill-at', 'upload:recorded', '--kill-after', '2']);
    expect(k2.signal).toBe('SIGKILL');
    // 3. Runs to the end.
    const done = await runChild(['--db', path, '--batch', '5']);
    expect(done.code, done.err).toBe(0);

    const orgId = hq.summary.orgId;
    const applied = await hq.query<{ id: string; n: string }>(
      orgId,
      'SELECT id::text, count(*) AS n FROM hq_changeset WHERE id = ANY($1::uuid[]) GROUP BY id',
      [ids],
    );
    expect(applied.length).toBe(12);
    expect(applied.every((r) => Number(r.n) === 1)).toBe(true);
    const activity = await hq.query<{ n: string }>(orgId, 'SELECT count(*) AS n FROM activity WHERE changeset_id = ANY($1::uuid[])', [ids]);
    expect(Number(activity[0]!.n)).toBe(12);
    const hqRows = await hq.query<{ id: string; notes: string; version: number }>(
      orgId,
      'SELECT id::text, notes, version FROM athlete WHERE id = ANY($1::uuid[]) ORDER BY id',
      [athletes.map((a) => a.id)],
    );
    // Exactly one write each: version moved by one, the note is the device's.
    expect(hqRows).toEqual(athletes.map((a, i) => ({ id: a.id, notes: `kill test ${i}`, version: a.version + 1 })));

    const after = openDb(path);
    try {
      expect(
        sqlite(after)
          .prepare(`SELECT DISTINCT status FROM outbox WHERE changeset_id IN (${ids.map(() => '?').join(',')})`)
          .pluck()
          .all(...ids),
      ).toEqual(['synced']);
      const local = sqlite(after)
        .prepare(`SELECT id, notes, version FROM athlete WHERE id IN (${athletes.map(() => '?').join(',')}) ORDER BY id`)
        .all(...athletes.map((a) => a.id));
      expect(local).toEqual(hqRows);
      expect(sqlite(after).prepare('SELECT count(*) FROM sync_server_row').pluck().get()).toBe(0);
    } finally {
      after.close();
    }
  }, 120_000);

  it('killed mid-apply (inside a shape batch, between tables) several times, restarted: the same replica as without a kill', async () => {
    // The reference: a device synced in one go.
    const refPath = devicePath();
    const ref = openDb(refPath);
    await DeviceSync.enrol(ref, { hqUrl: hq.url, email: DEMO_EMAILS.doctor, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.doctor), deviceName: 'reference' });
    ref.close();
    const refRun = await runChild(['--db', refPath, '--slice', '40']);
    expect(refRun.code, refRun.err).toBe(0);

    const path = devicePath();
    const db = openDb(path);
    await DeviceSync.enrol(db, { hqUrl: hq.url, email: DEMO_EMAILS.doctor, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.doctor), deviceName: 'killed' });
    db.close();
    for (const [point, n] of [
      ['apply:slice', '3'],
      ['apply:commit', '4'],
      ['apply:slice', '5'],
      ['apply:commit', '2'],
    ] as const) {
      const k = await runChild(['--db', path, '--slice', '40', '--kill-at', point, '--kill-after', n]);
      expect(k.signal, `${point} #${n}: ${k.err}`).toBe('SIGKILL');
    }
    const done = await runChild(['--db', path, '--slice', '40']);
    expect(done.code, done.err).toBe(0);

    const a = openDb(refPath);
    const b = openDb(path);
    try {
      const tables = syncedTables('doctor');
      const want = replica(a, tables);
      expect(want.athlete!.length).toBeGreaterThan(0);
      expect(replica(b, tables)).toEqual(want);
    } finally {
      a.close();
      b.close();
    }
  }, 180_000);
});
