/**
 * A table whose shape HQ's shape service refuses as larger than its whole memory budget (503
 * `shape_too_large`, sync/shape ShapeTooLargeError) is reported as that refusal, in HQ's words,
 * and not as HQ being unreachable (issue 12 review M3: `cli sync` exited "HQ cannot be reached
 * (FetchError)" after 33 s, and live mode re-read the snapshot every ~10 s, online false, no
 * error shown, nothing logged at HQ). Real HQ, real shape service with a small budget, real
 * Postgres, the real engine on device files.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PIN } from '../../models/seed/demo';
import { AppError } from '../../models/errors';
import { openDb } from '../data/db';
import { sqlite } from '../data/sqlite';
import { DeviceSync, type DeviceSyncOptions } from './engine';
import { isShapeTooLarge, withShapeRefusalFinal } from './fetch-deadline';
import { havePg, useHqStack } from './testing/hq-stack';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function devicePath(): string {
  const d = mkdtempSync(join(tmpdir(), 'ai-shape-too-large-'));
  dirs.push(d);
  return join(d, 'device.sqlite');
}

async function waitFor<T>(what: string, fn: () => T | undefined | null | false, timeoutMs = 30_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('withShapeRefusalFinal on a 503', () => {
  const answer = (status: number, body: unknown) => withShapeRefusalFinal(async () => new Response(JSON.stringify(body), { status }));
  it("turns HQ's 503 shape_too_large into a 400 with the same body; any other 503 passes unchanged", async () => {
    const refusal = { error: { code: 'Unavailable', kind: 'shape_too_large', message: 'This shape needs 29.0 MB of the shape service’s memory.' } };
    const r = await answer(503, refusal)('http://hq/v1/shape');
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual(refusal);
    expect(isShapeTooLarge(refusal)).toBe(true);
    expect((await answer(503, { error: { code: 'Internal', message: 'HQ cannot reach its database' } })('http://hq/v1/shape')).status).toBe(503);
    expect((await answer(503, 'not json')('http://hq/v1/shape')).status).toBe(503);
  });
});

/** Injury rows added to Larchfield's demo data: their shape alone outgrows the budget (~60 B a row). */
const EXTRA_INJURIES = 120_000;
const BUDGET_MB = 4;

describe.skipIf(!havePg)('a table whose shape is too large for HQ', () => {
  const hqLog: string[] = [];
  const hq = useHqStack({ shapeMaxMemoryBytes: BUDGET_MB * 1048576, hqLog: (l) => hqLog.push(l) });
  const refusals = (): string[] => hqLog.filter((l) => /the shape service refused a shape/.test(l) && /table "injury"/.test(l));

  beforeAll(async () => {
    if (!havePg) return;
    const org = hq.summary.secondOrgId; // Larchfield
    await hq.adminQuery(
      `INSERT INTO injury SELECT (jsonb_populate_record(NULL::injury, to_jsonb(i) || jsonb_build_object('id', overlay(gen_random_uuid()::text placing '7' from 15 for 1)))).*
         FROM (SELECT * FROM injury WHERE org_id = $1 LIMIT 1) i, generate_series(1, ${EXTRA_INJURIES})`,
      [org],
    );
  }, 120_000);

  const enrol = async (opts: DeviceSyncOptions = {}) => {
    const db = openDb(devicePath());
    const sync = await DeviceSync.enrol(
      db,
      { hqUrl: hq.url, email: 'physio@larchfield.test', pin: DEMO_PIN, code: await hq.code('physio@larchfield.test'), deviceName: 'physio laptop' },
      { log: () => undefined, backoff: { initialMs: 50, maxMs: 500 }, streamBackoff: { initialMs: 100, maxMs: 500 }, pollMs: 50, ...opts },
    );
    return { db, sync };
  };

  it("ends a pass with Unavailable shape_too_large in HQ's words, online, the other tables pulled; HQ logs it once", async () => {
    const { db, sync } = await enrol();
    try {
      const fail = () =>
        sync.syncOnce().then(
          () => null,
          (e: unknown) => e,
        );
      const err = await fail();
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'Unavailable', details: { kind: 'shape_too_large' } });
      const message = (err as Error).message;
      expect(message).toMatch(
        new RegExp(
          `^HQ will not send the injury shape: This shape needs [\\d.]+ MB of the shape service's memory, more than its whole budget of ${BUDGET_MB}\\.0 MB`,
        ),
      );
      expect(message).toMatch(/Nothing on this device was lost/);
      expect(message).not.toMatch(/cannot be reached/);
      const s = sync.status();
      expect(s.online).toBe(true); // HQ answered
      expect(s.last_error).toEqual({ code: 'Unavailable', message });
      // The other tables were pulled; none of the refused table arrived.
      expect(sqlite(db).prepare('SELECT count(*) FROM athlete').pluck().get()).toBeGreaterThan(0);
      expect(sqlite(db).prepare('SELECT count(*) FROM injury').pluck().get()).toBe(0);
      // Asked again: refused the same way, and HQ logged the refusal once for this definition.
      expect(await fail()).toMatchObject({ code: 'Unavailable', details: { kind: 'shape_too_large' } });
      expect(refusals()).toHaveLength(1);
      expect(refusals()[0]).toMatch(/This shape needs [\d.]+ MB/);
    } finally {
      await sync.stop();
      db.close();
    }
  }, 120_000);

  it('live: shows the refusal as the last error while online, keeps the other tables live and does not ask again before its back-off', async () => {
    const lines: string[] = [];
    const { db, sync } = await enrol({ log: (l) => lines.push(l), refusedShapeBackoff: { initialMs: 600_000, maxMs: 600_000 } });
    try {
      sync.start();
      await waitFor('the refusal as the last error', () => /^HQ will not send the injury shape/.test(sync.status().last_error?.message ?? ''));
      // Another table stays live: a change at HQ arrives.
      const org = hq.summary.secondOrgId;
      const [a] = await hq.query<{ id: string }>(org, 'SELECT id FROM athlete WHERE org_id = $1 ORDER BY id LIMIT 1', [org]);
      await hq.query(org, `UPDATE athlete SET notes = 'live despite injury', version = version + 1, updated_at = now() WHERE id = $1`, [a!.id]);
      await waitFor(
        'the athlete change to arrive',
        () => sqlite(db).prepare('SELECT notes FROM athlete WHERE id = ?').pluck().get(a!.id) === 'live despite injury',
      );
      await new Promise((r) => setTimeout(r, 1500));
      const s = sync.status();
      expect(s.online).toBe(true);
      expect(s.last_error?.code).toBe('Unavailable');
      expect(s.last_error?.message).toMatch(/^HQ will not send the injury shape/);
      // Refused once, then left alone for the back-off (before: retried every few seconds, forever).
      expect(lines.filter((l) => /^sync: Unavailable: HQ will not send the injury shape/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => /the injury shape is asked for again in 600 s/.test(l))).toHaveLength(1);
      expect(refusals()).toHaveLength(1);
    } finally {
      await sync.stop();
      db.close();
    }
  }, 120_000);
});
