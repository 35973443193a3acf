/**
 * A device past HQ's shape limit (sync/http/shape-registry.ts) is told so at once, in HQ's words,
 * instead of sleeping: HQ answers 429 `shape_limit` with a Retry-After of hours, which
 * @electric-sql/client would otherwise wait out on every retry (issue 12 review: `cli sync` hung).
 * Real HQ, real shape service and Postgres, the real engine on a device file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { AppError } from '../../models/errors';
import { openDb } from '../data/db';
import { DeviceSync } from './engine';
import { isShapeLimit, withShapeRefusalFinal } from './fetch-deadline';
import { havePg, useHqStack } from './testing/hq-stack';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('withShapeRefusalFinal', () => {
  const answer = (status: number, body: unknown) =>
    withShapeRefusalFinal(async () => new Response(JSON.stringify(body), { status, headers: { 'retry-after': '21600' } }));
  it("turns HQ's 429 shape_limit into a 400 with the same body; other 429s and answers pass unchanged", async () => {
    const limit = { error: { code: 'RateLimited', kind: 'shape_limit', message: 'This device already follows 32 distinct shapes.' } };
    const r = await answer(429, limit)('http://hq/v1/shape');
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual(limit);
    expect(isShapeLimit(limit)).toBe(true);
    const other = await answer(429, { error: { code: 'RateLimited', kind: 'login' } })('http://hq/v1/shape');
    expect(other.status).toBe(429);
    expect(other.headers.get('retry-after')).toBe('21600');
    expect((await answer(429, 'not json')('http://hq/v1/shape')).status).toBe(429);
    expect((await answer(200, [])('http://hq/v1/shape')).status).toBe(200);
  });
});

describe.skipIf(!havePg)('a device past its shape limit', () => {
  const hq = useHqStack({ shapeLimits: { perDevice: 5, perOrg: 500, idleMs: 6 * 3_600_000 } });

  it("fails the sync with RateLimited shape_limit and HQ's words at once, instead of waiting hours", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ai-shape-limit-device-'));
    dirs.push(dir);
    const db = openDb(join(dir, 'device.db'));
    const sync = await DeviceSync.enrol(
      db,
      { hqUrl: hq.url, email: DEMO_EMAILS.physio, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.physio), deviceName: 'physio laptop' },
      { log: () => undefined, backoff: { initialMs: 50, maxMs: 500 }, streamBackoff: { initialMs: 100, maxMs: 500 }, pollMs: 50 },
    );
    try {
      const err = await sync.syncOnce().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'RateLimited', details: { kind: 'shape_limit' } });
      expect((err as Error).message).toMatch(/^HQ will not open the \w+ shape for this device: This device already follows 5 distinct shapes/);
      expect((err as Error).message).toMatch(/Nothing on this device was lost/);
    } finally {
      await sync.stop();
      db.close();
    }
  }, 60_000);
});
