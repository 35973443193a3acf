/**
 * `npm run cli -- enrol …` and `npm run cli -- sync …` as a person runs them: the real CLI entry
 * point (`tsx main/cli/index.ts`) as a child process, against a real HQ (real Postgres, the
 * embedded shape service, the HQ server) started by this file. Exit codes: 6 HQ unreachable,
 * 7 token refused (wrong PIN, revoked token), 8 not enrolled, 4 no database; 0 with the report.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_PIN_FAILURES } from '../../models/signin';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import type { SyncReport } from '../../models/sync';
import { openDb } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { getEnrolment, uploadState } from '../data/sync';
import { machineSecretBox, type SealedSecret } from '../security/secret-box';
import { callVerb } from '../services';
import { havePg, useHqStack } from '../sync/testing/hq-stack';
import { sqlite } from '../data/sqlite';

const ROOT = resolve(__dirname, '../..');
const TSX = join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'tsx.cmd' : 'tsx');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function freshPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'ai-cli-sync-'));
  dirs.push(d);
  return join(d, 'device.sqlite');
}

/** Run the CLI as a child process (asynchronously: HQ runs in this process and must keep answering). */
function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const p = spawn(TSX, ['main/cli/index.ts', ...args], { cwd: ROOT, env: { ...process.env, NODE_NO_WARNINGS: '1' } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => done({ code, stdout, stderr }));
  });
}
/** The typed error the CLI printed last on stderr (log lines may come before it). */
function lastError(stderr: string): { code: string; message: string } {
  const lines = stderr.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as { code: string; message: string };
}

/** A localhost port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

describe.skipIf(!havePg)('cli enrol and sync against a real HQ', () => {
  const hq = useHqStack();

  it('HQ unreachable → 6; the database is created but not enrolled, so sync → 8; no database → 4', async () => {
    const path = freshPath();
    const port = await closedPort();
    const r = await cli('enrol', '--db', path, '--hq', `http://127.0.0.1:${port}`, '--as', DEMO_EMAILS.physio, '--pin', DEMO_PIN, '--code', 'AAAA-AAAA-AAAA');
    expect(r.code, r.stderr).toBe(6);
    expect(lastError(r.stderr)).toMatchObject({ code: 'Unavailable' });
    expect(lastError(r.stderr).message).toContain(`127.0.0.1:${port}`);
    expect(r.stderr).not.toContain(DEMO_PIN);
    expect(existsSync(path)).toBe(true);

    const s = await cli('sync', '--db', path);
    expect(s.code, s.stderr).toBe(8);
    expect(lastError(s.stderr)).toMatchObject({ code: 'NotConfigured' });

    const missing = await cli('sync', '--db', join(path, '..', 'nowhere.sqlite'));
    expect(missing.code).toBe(4);
    expect(lastError(missing.stderr)).toMatchObject({ code: 'NotFound' });
  }, 60_000);

  it('a wrong PIN → 7 and nothing enrolled; a bad HQ address → 2; a locked account → 10', async () => {
    const path = freshPath();
    const r = await cli('enrol', '--db', path, '--hq', hq.url, '--as', DEMO_EMAILS.coach, '--pin', '999999', '--code', await hq.code(DEMO_EMAILS.coach));
    expect(r.code, r.stderr).toBe(7);
    expect(lastError(r.stderr)).toMatchObject({ code: 'Unauthenticated' });
    expect(r.stderr).not.toContain('999999');
    const db = openDb(path);
    expect(getEnrolment(db)).toBeNull();
    db.close();
    const bad = await cli('enrol', '--db', path, '--hq', 'ftp://hq', '--as', DEMO_EMAILS.coach, '--pin', DEMO_PIN, '--code', 'AAAA-AAAA-AAAA');
    expect(bad.code).toBe(2);
    expect(lastError(bad.stderr)).toMatchObject({ code: 'Validation' });
    // Email + PIN without a one-time sign-in code: refused before anything is sent, saying where codes come from.
    const nocode = await cli('enrol', '--db', path, '--hq', hq.url, '--as', DEMO_EMAILS.coach, '--pin', DEMO_PIN);
    expect(nocode.code).toBe(2);
    expect(lastError(nocode.stderr)).toMatchObject({ code: 'Validation', message: expect.stringContaining('--code CODE') as string });
    // A code that is not the account's: the same refusal as a wrong PIN.
    const wrongCode = await cli('enrol', '--db', path, '--hq', hq.url, '--as', DEMO_EMAILS.coach, '--pin', DEMO_PIN, '--code', 'AAAA-AAAA-AAAA');
    expect(wrongCode.code).toBe(7);
    // After MAX_PIN_FAILURES wrong PINs the account is locked at HQ: 10 RateLimited, saying how long to wait.
    const code = await hq.code(DEMO_EMAILS.strength_coach);
    for (let i = 0; i < MAX_PIN_FAILURES; i++)
      expect((await cli('enrol', '--db', path, '--hq', hq.url, '--as', DEMO_EMAILS.strength_coach, '--pin', '999999', '--code', code)).code).toBe(7);
    const locked = await cli('enrol', '--db', path, '--hq', hq.url, '--as', DEMO_EMAILS.strength_coach, '--pin', DEMO_PIN, '--code', code);
    expect(locked.code, locked.stderr).toBe(10);
    expect(lastError(locked.stderr)).toMatchObject({ code: 'RateLimited' });
  }, 120_000);

  it('enrol + sync: the replica arrives, a local write is uploaded and settled; a revoked token → 7', async () => {
    const path = freshPath();
    const e = await cli(
      'enrol',
      '--db',
      path,
      '--hq',
      hq.url,
      '--as',
      DEMO_EMAILS.physio,
      '--pin',
      DEMO_PIN,
      '--code',
      await hq.code(DEMO_EMAILS.physio),
      '--name',
      'cli test laptop',
    );
    expect(e.code, e.stderr).toBe(0);
    const enrolled = JSON.parse(e.stdout) as { db: string; created: boolean; enrolled: boolean; hq_url: string; device_id: string };
    expect(enrolled).toMatchObject({ db: path, created: true, enrolled: true, hq_url: hq.url });
    expect(e.stdout + e.stderr).not.toContain(DEMO_PIN);

    const first = await cli('sync', '--db', path);
    expect(first.code, first.stderr).toBe(0);
    const pulled = JSON.parse(first.stdout) as SyncReport;
    const orgId = hq.summary.orgId;
    const [{ n }] = (await hq.query<{ n: string }>(orgId, 'SELECT count(*) AS n FROM athlete WHERE org_id = $1', [orgId])) as [{ n: string }];
    expect(pulled.pulled.athlete).toBe(Number(n));
    expect(pulled).toMatchObject({ uploaded: 0, rejected: 0, pending: 0, unsettled: 0 });

    // A write on the device (as the app makes it: service verb, outbox in the same transaction).
    const db = openDb(path);
    const userId = findUserByEmail(db, DEMO_EMAILS.physio)!.id;
    const athlete = sqlite(db).prepare('SELECT id FROM athlete WHERE deleted_at IS NULL ORDER BY id LIMIT 1').pluck().get() as string;
    const w = callVerb({ db, userId }, 'athletes.update', { id: athlete, notes: 'written offline, synced by the CLI' }) as { changeset: { id: string } };
    const token = machineSecretBox(db.path).open(JSON.parse(getEnrolment(db)!.token_sealed) as SealedSecret);
    db.close();

    const second = await cli('sync', '--db', path);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ uploaded: 1, rejected: 0, pending: 0, unsettled: 0 });
    const [row] = await hq.query<{ notes: string }>(orgId, 'SELECT notes FROM athlete WHERE id = $1', [athlete]);
    expect(row?.notes).toBe('written offline, synced by the CLI');
    const after = openDb(path);
    expect(uploadState(after, w.changeset.id)).toMatchObject({ outbox: 'synced', state: 'synced' });
    after.close();

    expect(await hq.revokeDevice(enrolled.device_id, token)).toBe(200);
    const refused = await cli('sync', '--db', path);
    expect(refused.code, refused.stderr).toBe(7);
    expect(lastError(refused.stderr)).toMatchObject({ code: 'Unauthenticated' });
    expect(refused.stderr).not.toContain(token);
  }, 120_000);

  it("sync names each rejected changeset (id, verb, reason, message) and where to resolve it; a deactivated account's 401 says so", async () => {
    const path = freshPath();
    const e = await cli(
      'enrol',
      '--db',
      path,
      '--hq',
      hq.url,
      '--as',
      DEMO_EMAILS.sports_scientist,
      '--pin',
      DEMO_PIN,
      '--code',
      await hq.code(DEMO_EMAILS.sports_scientist),
      '--name',
      'gym laptop',
    );
    expect(e.code, e.stderr).toBe(0);
    expect((await cli('sync', '--db', path)).code).toBe(0);
    // The admin, signed in offline on the sports scientist's laptop, renames an account: the
    // laptop's own user could not (user.manage), and the admin has no HQ sign-in there.
    const db = openDb(path);
    const adminId = findUserByEmail(db, DEMO_EMAILS.admin)!.id;
    const athleteUser = findUserByEmail(db, DEMO_EMAILS.athlete)!.id;
    const w = callVerb({ db, userId: adminId }, 'users.update', { id: athleteUser, display_name: 'Renamed on the gym laptop' }) as {
      changeset: { id: string };
    };
    db.close();
    const r = await cli('sync', '--db', path);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as SyncReport & {
      rejected_changesets: { changeset_id: string; verb: string; reason: string; message: string }[];
      resolve: string;
    };
    expect(out.rejected).toBe(1);
    expect(out.rejected_changesets).toEqual([
      {
        changeset_id: w.changeset.id,
        verb: 'users.update',
        reason: 'author_unverified',
        message: expect.stringMatching(/cannot verify that the user this change names as its author/),
      },
    ]);
    expect(out.resolve).toMatch(/Sync conflicts page/);
    expect(r.stderr).toContain(`sync: rejected ${w.changeset.id} (users.update): author_unverified`);

    // The laptop's account is deactivated at HQ: the CLI passes HQ's reason on, not "revoked or expired".
    await hq.adminQuery('UPDATE app_user SET active = false, version = version + 1 WHERE email = $1', [DEMO_EMAILS.sports_scientist]);
    const refused = await cli('sync', '--db', path);
    expect(refused.code, refused.stderr).toBe(7);
    expect(lastError(refused.stderr)).toMatchObject({ code: 'Unauthenticated', message: expect.stringMatching(/deactivated/) });
  }, 120_000);
});
