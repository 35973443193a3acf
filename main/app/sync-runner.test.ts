/**
 * The app's background sync runner (AppSync) over the real engine and a real SQLite file, without
 * an HQ: a database that is not enrolled reads as such and never starts; "Sync now" and discard
 * say it is not enrolled; enrolling against an HQ that cannot be reached is a typed Unavailable
 * and leaves the device as it was; the status stream gives the status at once and its consumer
 * can leave while waiting. (Against a real HQ: main/app/hq-review.test.ts and e2e/sync.spec.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../data/db';
import { deviceSyncFactory } from './device-sync';
import { AppSync, NOT_ENROLLED, statusStream } from './sync-runner';

let dir = '';
let db: Db;
let sync: AppSync;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ai-sync-runner-'));
  db = openDb(join(dir, 'device.sqlite'));
  sync = new AppSync(db, deviceSyncFactory(), { tickMs: 0, stopTimeoutMs: 1000 });
});
afterEach(async () => {
  await sync.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('AppSync without an enrolment', () => {
  it('reads as not enrolled, does not start, and says so for Sync now and discard', async () => {
    expect(sync.status()).toEqual(NOT_ENROLLED);
    expect(sync.startIfEnrolled()).toBe(false);
    expect(sync.conflicts()).toEqual([]);
    await expect(sync.syncNow()).rejects.toMatchObject({ code: 'NotConfigured' });
    expect(() => sync.discard('0190c6f1-0000-7000-8000-000000000001')).toThrow(/not enrolled/);
  });

  it('refuses an HQ that cannot be reached with Unavailable, and a bad address with Validation; nothing is stored', async () => {
    const port = await deadPort();
    await expect(sync.enrol({ hqUrl: `http://127.0.0.1:${port}`, email: 'owner@kestrelvale.test', pin: '1234', code: 'AAAA-BBBB-CCCC' })).rejects.toMatchObject(
      {
        code: 'Unavailable',
      },
    );
    await expect(sync.enrol({ hqUrl: 'ftp://hq.local', email: 'owner@kestrelvale.test', pin: '1234', code: 'AAAA-BBBB-CCCC' })).rejects.toMatchObject({
      code: 'Validation',
    });
    expect(sync.status()).toEqual(NOT_ENROLLED);
  });

  it('streams the status at once, and a consumer waiting for the next one can leave', async () => {
    const iter = statusStream(sync)[Symbol.asyncIterator]();
    expect(await iter.next()).toEqual({ value: NOT_ENROLLED, done: false });
    const waiting = iter.next();
    expect(await iter.return!()).toEqual({ value: undefined, done: true });
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(await iter.next()).toEqual({ value: undefined, done: true });
  });
});
