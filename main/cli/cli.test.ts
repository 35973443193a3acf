/** The CLI as a person runs it: a real process (`tsx main/cli/index.ts`) on a real SQLite file. */
import { VERB_NAMES } from '../../models/verbs';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_SECOND_EMAILS, DEMO_UNLINKED_ATHLETE_EMAIL, LINKED_ATHLETE_NAME } from '../data/seed';

const ROOT = path.resolve(__dirname, '../..');
const TSX = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'tsx.cmd' : 'tsx');
const TODAY = '2026-03-15';
let dir: string;
let db: string;

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(TSX, ['main/cli/index.ts', ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function json<T = Record<string, unknown>>(s: string): T {
  return JSON.parse(s) as T;
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-cli-'));
  db = path.join(dir, 'demo.sqlite');
  const r = cli('seed', '--db', db, '--seed', '1', '--today', TODAY);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const out = json<{ today: string; counts: Record<string, number> }>(r.stdout);
  expect(out.today).toBe(TODAY);
  expect(out.counts.athlete).toBeGreaterThanOrEqual(50);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('cli', () => {
  it('seed refuses a database with data (exit 5) unless --force', () => {
    const r = cli('seed', '--db', db);
    expect(r.code).toBe(5);
    expect(json(r.stderr)).toMatchObject({ code: 'Conflict' });
    expect(json<{ message: string }>(r.stderr).message).toMatch(/--force/);
    const other = path.join(dir, 'forced.sqlite');
    expect(cli('seed', '--db', other, '--today', TODAY).code).toBe(0);
    const f = cli('seed', '--db', other, '--today', TODAY, '--seed', '2', '--force');
    expect(f.code).toBe(0);
    expect(json<{ seed: number }>(f.stdout).seed).toBe(2);
  });

  it('users lists every user with role, org and linked athlete', () => {
    const r = cli('users', '--db', db, '--json');
    expect(r.code).toBe(0);
    const users = json<{ email: string; role: string; org: string; linked_athlete: string | null }[]>(r.stdout);
    for (const [role, email] of Object.entries(DEMO_EMAILS)) expect(users.find((u) => u.email === email)?.role).toBe(role);
    expect(users.find((u) => u.email === DEMO_EMAILS.athlete)?.linked_athlete).toBe(LINKED_ATHLETE_NAME);
    expect(users.find((u) => u.email === DEMO_UNLINKED_ATHLETE_EMAIL)?.linked_athlete).toBeNull();
    expect(users.find((u) => u.email === DEMO_SECOND_EMAILS.physio)?.org).toBe('Larchfield Netball Club');
    const table = cli('users', '--db', db);
    expect(table.stdout).toMatch(/^email\s+role\s+org\s+linked athlete/);
    expect(table.stdout).toContain('physio@kestrelvale.test');
  });

  it('call prints the JSON result of a read and of a write (with an idempotent retry)', () => {
    type SquadRow = { id: string; name: string };
    const sl = json<SquadRow[] | { squads: SquadRow[] }>(cli('call', '--db', db, '--as', DEMO_EMAILS.physio, 'squads.list').stdout);
    const squads = Array.isArray(sl) ? sl : sl.squads;
    const u19 = squads.find((s) => s.name === 'U19');
    expect(u19).toBeDefined();
    const r = cli('call', '--db', db, '--as', DEMO_EMAILS.physio, 'athletes.list', JSON.stringify({ squad_id: u19?.id, limit: 5 }));
    expect(r.code).toBe(0);
    const list = json<{ total: number; athletes: { squad_id: string }[] }>(r.stdout);
    expect(list.total).toBeGreaterThanOrEqual(15);
    expect(list.athletes).toHaveLength(5);
    expect(list.athletes.every((a) => a.squad_id === u19?.id)).toBe(true);

    // The demo holds today's squad loads: a second session that day is refused (Conflict, exit 5,
    // naming the athletes with a load), nothing written, unless the call says it is one.
    const dup = cli(
      'call',
      '--db',
      db,
      '--as',
      DEMO_EMAILS.coach,
      'workload.logSessionLoads',
      JSON.stringify({ squad_id: u19?.id, date: TODAY, duration_min: 30, rpe: 4 }),
    );
    expect(dup.code).toBe(5);
    expect(dup.stdout).toBe('');
    expect(json(dup.stderr)).toMatchObject({ code: 'Conflict', kind: 'SameDayExists', message: expect.stringMatching(/already ha(s|ve) a load on .*AU/) });
    const input = JSON.stringify({ squad_id: u19?.id, date: TODAY, duration_min: 30, rpe: 4, second_session_same_day: true });
    const w1 = cli('call', '--db', db, '--as', DEMO_EMAILS.coach, 'workload.logSessionLoads', input, '--idempotency-key', 'cli-test-1');
    expect(w1.stderr).toBe('');
    expect(w1.code).toBe(0);
    const c1 = json<{ changeset: { id: string; changes: unknown[] } }>(w1.stdout).changeset;
    expect(c1.changes.length).toBe(list.total);
    const w2 = cli('call', '--db', db, '--as', DEMO_EMAILS.coach, 'workload.logSessionLoads', input, '--idempotency-key', 'cli-test-1');
    expect(w2.code).toBe(0);
    expect(json<{ changeset: { id: string } }>(w2.stdout).changeset.id).toBe(c1.id);
  });

  it('typed errors go to stderr as JSON with their exit codes', () => {
    const forbidden = cli('call', '--db', db, '--as', DEMO_EMAILS.coach, 'injuries.create', '{}');
    expect(forbidden.code).toBe(3);
    expect(forbidden.stdout).toBe('');
    expect(json(forbidden.stderr)).toMatchObject({ code: 'Forbidden' });

    const validation = cli('call', '--db', db, '--as', DEMO_EMAILS.physio, 'athletes.list', '{"limit":"many"}');
    expect(validation.code).toBe(2);
    const v = json<{ code: string; issues: { path: string }[] }>(validation.stderr);
    expect(v.code).toBe('Validation');
    expect(v.issues.map((i) => i.path)).toContain('limit');

    const notFound = cli('call', '--db', db, '--as', DEMO_EMAILS.physio, 'athletes.get', '{"id":"019af2ac-c42b-7f0c-b363-000000000000"}');
    expect(notFound.code).toBe(4);
    expect(json(notFound.stderr)).toMatchObject({ code: 'NotFound' });

    const unlinked = cli('call', '--db', db, '--as', DEMO_UNLINKED_ATHLETE_EMAIL, 'athletes.list');
    expect(unlinked.code).toBe(3);

    const badJson = cli('call', '--db', db, '--as', DEMO_EMAILS.physio, 'athletes.list', '{nope');
    expect(badJson.code).toBe(2);

    const unknownUser = cli('call', '--db', db, '--as', 'nobody@nowhere.test', 'athletes.list');
    expect(unknownUser.code).toBe(4);
    expect(json(unknownUser.stderr)).toMatchObject({ code: 'NotFound' });

    const unknownVerb = cli('call', '--db', db, '--as', DEMO_EMAILS.physio, 'athletes.purge');
    expect(unknownVerb.code).toBe(4);
    expect(json(unknownVerb.stderr)).toMatchObject({ code: 'NotFound' });
    expect(cli('verbs', 'athletes.purge').code).toBe(4);
    expect(json<{ message: string }>(unknownUser.stderr).message).toMatch(/No user with email "nobody@nowhere.test"/);

    const noDb = cli('users', '--db', path.join(dir, 'missing.sqlite'));
    expect(noDb.code).toBe(4);
    expect(fs.existsSync(path.join(dir, 'missing.sqlite'))).toBe(false);

    expect(cli('frobnicate').code).toBe(2);
  });

  it('verbs lists every verb with permission and kind; help prints usage', () => {
    const r = cli('verbs', '--json');
    expect(r.code).toBe(0);
    const verbs = json<{ name: string; kind: string; permission: string }[]>(r.stdout);
    expect(verbs.find((v) => v.name === 'workload.acwr')).toMatchObject({ kind: 'read', permission: 'workload.read' });
    expect(verbs.find((v) => v.name === 'workload.logSessionLoads')).toMatchObject({ kind: 'write', permission: 'workload.write' });
    expect(verbs.map((v) => v.name).sort()).toEqual([...VERB_NAMES].sort());
    // One verb: its input and output JSON Schema from the verb map, field descriptions included.
    const one = cli('verbs', 'workload.acwr');
    expect(one.code).toBe(0);
    const acwr = json<{ input: { properties: Record<string, { description?: string }> }; output: { properties: Record<string, unknown> } }>(one.stdout);
    expect(acwr.input.properties.as_of?.description).toBe('Date to compute for; defaults to today.');
    expect(Object.keys(acwr.output.properties).sort()).toEqual(['as_of', 'athlete_id', 'athlete_name', 'results']);
    const typo = cli('call', '--db', 'x.sqlite', '--as', 'a@b.test', 'workload.acrw');
    expect(typo.code).toBe(4);
    expect(json<{ code: string; message: string }>(typo.stderr)).toMatchObject({ code: 'NotFound', message: expect.stringContaining('workload.acwr') });
    const h = cli('help');
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('call  --db PATH --as EMAIL VERB [JSON]');
  });
});
