/**
 * `npm run hq` as a user runs it: a child process on its embedded default (a private Postgres in a
 * temp data dir), printing where it listens; ready once Postgres and the replication slot are up;
 * serving a device sign-in against the seeded demo club; stopping the cluster on SIGTERM. A
 * second start reuses the data dir without seeding again. The operator's `npm run hq --
 * enrolment-code` issues the one-time sign-in code a device needs with the email and PIN, both
 * while the server runs (adopting its cluster) and while it is stopped (starting and stopping it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../models/seed/demo';
import { havePg } from './testing/pg';

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
}

function startHqProcess(dataDir: string): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sync/hq.ts', '--port', '0', '--data-dir', dataDir], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DATABASE_URL: '' },
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hq did not start in time:\n${out}`)), 90_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /HQ server listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (m && out.includes('Press Ctrl+C to stop.')) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`hq exited with ${code}:\n${out}`));
    });
  });
}

/** `npm run hq -- enrolment-code --as EMAIL --data-dir DIR` to its end: exit status, stdout, stderr, and the code it printed. */
function issueCode(dataDir: string, email: string): Promise<{ status: number | null; out: string; err: string; code: string | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sync/hq.ts', 'enrolment-code', '--as', email, '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DATABASE_URL: '' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) =>
    child.on('exit', (status) => resolve({ status, out, err, code: /: ([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})$/m.exec(out)?.[1] ?? null })),
  );
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    process.kill(-child.pid!, 'SIGTERM');
  });
}

describe.skipIf(!havePg)('npm run hq', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ai-hq-cmd-'));
  chmodSync(dir, 0o711); // the server's OS user (postgres, when tests run as root) passes through it
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts on an embedded Postgres, seeds the demo club, serves devices, and stops the cluster on exit', async () => {
    const dataDir = join(dir, 'hq');
    const hq = await startHqProcess(dataDir);
    children.push(hq.child);
    expect(hq.output()).toMatch(/embedded PostgreSQL \d+/);
    expect(hq.output()).toMatch(/seeded: +the demo club \(Kestrel Vale FC, Larchfield Netball Club\); every PIN is 1234/);

    expect(await (await fetch(`${hq.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${hq.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', replication_slot: { ok: true, slot: 'hq_shapes' } });
    const deps = (await (await fetch(`${hq.url}/health/deps`)).json()) as Record<string, { ok: boolean; hard: boolean }>;
    expect(deps.shape_service).toMatchObject({ ok: true, hard: false });

    expect(hq.output()).toContain(`npm run hq -- enrolment-code --as ${DEMO_EMAILS.owner}`);
    const signIn = (code?: string): Promise<Response> =>
      fetch(`${hq.url}/v1/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: DEMO_EMAILS.physio, pin: DEMO_PIN, ...(code ? { code } : {}), name: 'Pitch laptop' }),
      });
    // Email + PIN alone no longer sign a device in: the answer says where a code comes from.
    const bare = await signIn();
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'Validation',
      message: expect.stringContaining('sign-in code') as string,
    });
    // The operator's code, issued while the server runs (its cluster adopted, left running).
    const issued = await issueCode(dataDir, DEMO_EMAILS.physio);
    expect(issued.err).toBe('');
    expect(issued.status).toBe(0);
    expect(issued.out).toContain(`(${DEMO_EMAILS.physio}, physio)`);
    expect(issued.code).not.toBeNull();
    expect((await fetch(`${hq.url}/readyz`)).status).toBe(200);
    const enrol = await signIn(issued.code!.toLowerCase().replace(/-/g, ' '));
    expect(enrol.status).toBe(201);
    // Once only.
    const reused = await signIn(issued.code!);
    expect(reused.status).toBe(401);
    await reused.arrayBuffer();
    // An account that does not exist, and a folder with no HQ in it: typed refusals, non-zero exits.
    const nobody = await issueCode(dataDir, 'nobody@kestrelvale.test');
    expect(nobody.status).toBe(4);
    expect(nobody.err).toMatch(/nobody@kestrelvale\.test/);
    const nowhere = await issueCode(join(dir, 'no-hq-here'), DEMO_EMAILS.physio);
    expect(nowhere.status).toBe(2);
    expect(nowhere.err).toMatch(/no HQ installation under/);
    const { token } = (await enrol.json()) as { token: string };
    const squads = await fetch(`${hq.url}/v1/shape?table=squad&offset=-1`, { headers: { authorization: `Bearer ${token}` } });
    expect(squads.status).toBe(200);
    const names = ((await squads.json()) as { value?: { name: string } }[])
      .filter((m) => m.value)
      .map((m) => m.value!.name)
      .sort();
    expect(names).toEqual(['First team', 'U19']);

    expect(await stop(hq.child)).toBe(0);
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

    // A code issued while HQ is stopped: the command starts the cluster and stops it again.
    const offline = await issueCode(dataDir, DEMO_EMAILS.doctor);
    expect(offline.status).toBe(0);
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);

    // Second start: same data, not seeded again, the same device token still works.
    const again = await startHqProcess(dataDir);
    children.push(again.child);
    expect(again.output()).toMatch(/seeded: +no \(already initialised\)/);
    const shape = await fetch(`${again.url}/v1/shape?table=squad&offset=-1`, { headers: { authorization: `Bearer ${token}` } });
    expect(shape.status).toBe(200);
    const doctor = await fetch(`${again.url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: DEMO_EMAILS.doctor, pin: DEMO_PIN, code: offline.code, name: 'Clinic laptop' }),
    });
    expect(doctor.status).toBe(201);
    await doctor.arrayBuffer();
    expect(await stop(again.child)).toBe(0);
    expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  });
});
