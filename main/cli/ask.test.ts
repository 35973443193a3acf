/**
 * `ask`: one turn headless, AG-UI events as JSON lines then the answer; approvals by flag;
 * non-zero exit on a run error. In-process and as a real `npm run cli` process.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDb } from '../data/db';
import { countRows } from '../data/rows';
import { DEMO_EMAILS, seedDemo, type SeedSummary } from '../data/seed';
import { AnthropicProvider } from '../kinetix/provider';
import { tempDb, type TempDb } from '../testing/kinetix-fixtures';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { askCommand } from './ask';

let t: TempDb;
let s: SeedSummary;
let dbPath: string;
let server: ScriptedAnthropic;

beforeEach(async () => {
  t = tempDb('ask-');
  s = seedDemo(t.db, { today: '2026-11-29' });
  t.db.close();
  dbPath = join(t.dir, 'app.db');
  server = await startScriptedAnthropic();
});
afterEach(async () => {
  await server.close();
  t.cleanup();
});

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}
const provider = () => ({
  providerFactory: (cfg: { apiKey: string }) => new AnthropicProvider({ apiKey: cfg.apiKey, baseURL: server.url, maxRetries: 0 }),
  env: { ANTHROPIC_API_KEY: 'sk-ant-test-cli-000000' },
  secretBox: null,
});

describe('ask', () => {
  it('prints AG-UI events as JSON lines, approves with --approve all, then prints the answer', async () => {
    server.push(
      {
        toolUses: [
          { name: 'log_session_load', input: { squad_id: s.squadIds.U19, date: '2026-11-28', duration_min: 60, rpe: 5, second_session_same_day: true } },
        ],
      },
      { text: 'Logged the U19 session.' },
    );
    const { io: sink, out, err } = io();
    const code = await askCommand(
      ['--db', dbPath, '--as', DEMO_EMAILS.coach, '--approve', 'all', "log yesterday's U19 session, 60 min at RPE 5"],
      sink,
      provider(),
    );
    expect(err.filter((l) => !l.includes('"level":"warn"'))).toEqual([]);
    expect(code).toBe(0);
    const lines = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ id: '1', type: 'RUN_STARTED' });
    expect(lines.some((l) => l.type === 'CUSTOM' && l.name === 'kinetix.confirm_required')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ answer: 'Logged the U19 session.', status: 'completed' });
    const db = openDb(dbPath);
    try {
      expect(countRows(db, 'session_load', s.orgId, { eq: { date: '2026-11-28', rpe: 5, duration_min: 60 } })).toBeGreaterThan(5);
    } finally {
      db.close();
    }
  });

  it('declines by default and exits non-zero on a run error', async () => {
    server.push({ error: { status: 500, type: 'api_error', message: 'upstream exploded' } });
    const { io: sink, out, err } = io();
    const code = await askCommand(['--db', dbPath, '--as', DEMO_EMAILS.physio, 'hello'], sink, provider());
    expect(code).toBe(1);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ status: 'failed' });
    expect(JSON.parse(err.at(-1)!)).toMatchObject({ code: 'ProviderError', message: expect.stringMatching(/model provider had an error/) });
  });

  it('never prints a credential: a key in the prompt and one echoed by the model are masked on stdout (issue 9 §5)', async () => {
    server.push({ text: 'You sent ghp_GITHUBTOKEN0123456789abcdefABCD, and password: Hunter2Swordfish! ok' });
    const { io: sink, out, err } = io();
    const code = await askCommand(['--db', dbPath, '--as', DEMO_EMAILS.physio, 'my key sk-ant-api03-PROMPTKEY0123456789abcdef'], sink, provider());
    expect(code).toBe(0);
    const all = out.join('\n') + err.join('\n');
    for (const v of ['ghp_GITHUBTOKEN0123456789abcdefABCD', 'Hunter2Swordfish!', 'sk-ant-api03-PROMPTKEY']) expect(all).not.toContain(v);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ answer: 'You sent •••, and password: ••• ok', status: 'completed' });
  });

  it('shows and answers a confirm that comes after more than 300 events (issue 9 §2)', async () => {
    const reads = (tag: string) => ({ toolUses: Array.from({ length: 16 }, (_, i) => ({ name: 'list_athletes', input: {}, id: `toolu_${tag}_${i}` })) });
    server.push(
      reads('a'),
      reads('b'),
      reads('c'),
      reads('d'),
      {
        toolUses: [
          { name: 'log_session_load', input: { squad_id: s.squadIds.U19, date: '2026-11-28', duration_min: 45, rpe: 4, second_session_same_day: true } },
        ],
      },
      { text: 'Logged after looking.' },
    );
    const { io: sink, out } = io();
    const code = await askCommand(['--db', dbPath, '--as', DEMO_EMAILS.coach, '--approve', 'all', 'look, then log'], sink, provider());
    const lines = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    const confirm = lines.find((l) => l.type === 'CUSTOM' && l.name === 'kinetix.confirm_required');
    expect(Number(confirm?.id)).toBeGreaterThan(300);
    expect(lines.at(-1)).toMatchObject({ answer: 'Logged after looking.', status: 'completed' });
    expect(code).toBe(0);
  });

  it('refuses bad arguments and unknown users with typed errors', async () => {
    const a = io();
    expect(await askCommand(['--db', dbPath, 'no user'], a.io, provider())).toBe(2);
    const b = io();
    expect(await askCommand(['--db', dbPath, '--as', 'nobody@example.test', 'hi'], b.io, provider())).toBe(4);
    expect(JSON.parse(b.err[0]!)).toMatchObject({ code: 'NotFound' });
  });

  it('runs as a real process through npm run cli with ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY', async () => {
    server.push({ text: 'Hello from the scripted model.' });
    const child = spawn(
      process.execPath,
      [join(process.cwd(), 'node_modules/tsx/dist/cli.mjs'), 'main/cli/index.ts', 'ask', '--db', dbPath, '--as', DEMO_EMAILS.physio, 'hi'],
      {
        cwd: process.cwd(),
        env: { ...process.env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-process-000000', ATHLETE_SECRET_KEY: 'test-machine-key' },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toMatchObject({ answer: 'Hello from the scripted model.', status: 'completed' });
    expect(stderr).not.toContain('sk-ant-test-process');
  });
});
