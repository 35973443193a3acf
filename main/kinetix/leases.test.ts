/**
 * Issue 9 §1: the concurrent-run cap and the rate limits hold per user across processes that
 * share one SQLite file (run leases with owner pid + heartbeat in the database). Real `ask`
 * processes against a slow scripted model, two harnesses on two connections, and reclaiming
 * the lease of a process that is gone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../data/db';
import * as K from '../data/kinetix';
import { DEMO_EMAILS, seedDemo } from '../data/seed';
import { findUserByEmail } from '../data/identity';
import { addOrg, addUser, tempDb, testHarness, type TempDb } from '../testing/kinetix-fixtures';
import { testRegistry } from '../testing/kinetix-tools';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { TooManyRuns } from './errors';
import { LEASE_STALE_MS } from './limits';
import { ManualScheduler } from './scheduler';

let t: TempDb;
let server: ScriptedAnthropic;
const extraDbs: Db[] = [];

beforeEach(async () => {
  t = tempDb('leases-');
  server = await startScriptedAnthropic();
});
afterEach(async () => {
  for (const d of extraDbs.splice(0)) d.close();
  await server.close();
  t.cleanup();
});

function secondConnection(): Db {
  const d = openDb(join(t.dir, 'app.db'));
  extraDbs.push(d);
  return d;
}

describe('run leases in the database', () => {
  it('the 4th run of one user is refused across two harnesses on two connections, with the in-process message; another user is unaffected', async () => {
    const orgId = addOrg(t.db);
    const userId = addUser(t.db, orgId, { role: 'physio' });
    const otherId = addUser(t.db, orgId, { role: 'coach' });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    for (let i = 0; i < 4; i++) server.push(async () => (await gate, { text: `answer ${i}` }));
    const a = testHarness(t.db, testRegistry(), { baseURL: server.url }).kx;
    const b = testHarness(secondConnection(), testRegistry(), { baseURL: server.url }).kx;
    const r1 = a.startRun({ userId, message: 'one' });
    const r2 = a.startRun({ userId, message: 'two' });
    const r3 = b.startRun({ userId, message: 'three' });
    expect(
      K.listRunLeases(t.db, userId)
        .map((l) => l.run_id)
        .sort(),
    ).toEqual([r1.runId, r2.runId, r3.runId].sort());
    expect(() => b.startRun({ userId, message: 'four' })).toThrow(new TooManyRuns(3).message);
    expect(() => a.startRun({ userId, message: 'four again' })).toThrow(expect.objectContaining({ code: 'TooManyRuns' }));
    const other = b.startRun({ userId: otherId, message: 'other user' });
    await server.waitForRequests(4);
    release();
    for (const r of [r1, r2]) expect((await a.waitForRun(r.runId)).status).toBe('completed');
    for (const r of [r3, other]) expect((await b.waitForRun(r.runId)).status).toBe('completed');
    expect(K.listRunLeases(t.db, userId)).toEqual([]);
  });

  it("per-user and per-org rates are counted in the database: a second harness sees the first one's starts", async () => {
    const orgId = addOrg(t.db);
    const userId = addUser(t.db, orgId, { role: 'physio' });
    const ownerId = addUser(t.db, orgId, { role: 'owner' });
    const clock = new ManualScheduler();
    const limits = { userRunsPerMinute: 2, orgRunsPerMinute: 3 };
    const a = testHarness(t.db, testRegistry(), { baseURL: server.url, scheduler: clock, limits }).kx;
    const b = testHarness(secondConnection(), testRegistry(), { baseURL: server.url, scheduler: clock, limits }).kx;
    server.push({ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' });
    await a.waitForRun(a.startRun({ userId, message: '1' }).runId);
    clock.advance(10_000);
    await b.waitForRun(b.startRun({ userId, message: '2' }).runId);
    let err: { code?: string; retryAfterSeconds?: number; message?: string } = {};
    try {
      b.startRun({ userId, message: '3' });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err).toMatchObject({
      code: 'RateLimited',
      retryAfterSeconds: 50,
      message: 'You have started 2 Kinetix requests in the last minute. Try again in 50 s.',
    });
    await a.waitForRun(a.startRun({ userId: ownerId, message: 'owner 1' }).runId);
    expect(() => b.startRun({ userId: ownerId, message: 'owner 2' })).toThrow(
      'Your organisation has started 3 Kinetix requests in the last minute. Try again in 50 s.',
    );
    expect(server.requests).toHaveLength(3);
    clock.advance(60_000);
    expect((await b.waitForRun(b.startRun({ userId, message: '4' }).runId)).status).toBe('completed');
  });

  it('a lease whose process is gone, or whose heartbeat is stale, is reclaimed by the next start', async () => {
    const orgId = addOrg(t.db);
    const userId = addUser(t.db, orgId, { role: 'physio' });
    const dead = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
    const clock = new ManualScheduler();
    const now = clock.now();
    let deadIsGone = false;
    const limits = { maxConcurrentPerUser: 3, userRunsPerMinute: 100, orgRunsPerMinute: 100, staleAfterMs: LEASE_STALE_MS };
    const take = (runId: string, host: string, pid: number, at: number) =>
      K.acquireRunLease(t.db, { runId, orgId, userId, host, pid, nowMs: at }, limits, (p) => deadIsGone && p === dead);
    expect(take('r-dead', hostname(), dead, now)).toMatchObject({ ok: true });
    expect(take('r-remote', 'another-host', 4242, now)).toMatchObject({ ok: true });
    expect(take('r-live', hostname(), process.pid, now)).toMatchObject({ ok: true });
    expect(take('r-4th', hostname(), process.pid, now)).toEqual({ ok: false, limit: 'concurrency', running: 3 });
    // Later: the first process is gone, the remote one stopped heartbeating, the live one did not.
    deadIsGone = true;
    const later = now + LEASE_STALE_MS + 1;
    K.heartbeatRunLeases(t.db, ['r-live'], later);
    expect(take('r-new', hostname(), process.pid, later)).toEqual({ ok: true, reclaimed: 2 });
    expect(
      K.listRunLeases(t.db, userId)
        .map((l) => l.run_id)
        .sort(),
    ).toEqual(['r-live', 'r-new']);
  });

  it('four real `ask` processes of one user against a slow model: exactly one is refused, before any model request, with the in-process message', async () => {
    seedDemo(t.db, { today: '2026-11-29' });
    const physio = findUserByEmail(t.db, DEMO_EMAILS.physio)!;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    for (let i = 0; i < 4; i++) server.push(async () => (await gate, { text: `slow answer ${i}` }));
    const dbPath = join(t.dir, 'app.db');
    const run = () => {
      const child = spawn(
        process.execPath,
        [join(process.cwd(), 'node_modules/tsx/dist/cli.mjs'), 'main/cli/index.ts', 'ask', '--db', dbPath, '--as', DEMO_EMAILS.physio, 'hello'],
        {
          cwd: process.cwd(),
          env: { ...process.env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-leases-000000', ATHLETE_SECRET_KEY: 'test-machine-key' },
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    };
    const procs = [run(), run(), run(), run()];
    // The refused process ends on its own; the other three wait on the model until released.
    const first = await Promise.race(procs);
    await server.waitForRequests(3);
    expect(K.listRunLeases(t.db, physio.id)).toHaveLength(3);
    expect(first.code).toBe(1);
    expect(JSON.parse(first.stderr.trim().split('\n').at(-1)!)).toEqual({ code: 'TooManyRuns', message: new TooManyRuns(3).message });
    expect(first.stdout).toBe('');
    release();
    const all = await Promise.all(procs);
    expect(all.map((p) => p.code).sort()).toEqual([0, 0, 0, 1]);
    expect(server.requests).toHaveLength(3);
    expect(K.listRunLeases(t.db, physio.id)).toEqual([]);
  }, 90_000);
});
