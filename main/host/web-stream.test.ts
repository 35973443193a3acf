import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import type { SeedSummary } from '../data/seed';
import { DEMO_PIN, seedDemo } from '../data/seed';
import { defaultToolRegistry } from '../kinetix/catalogue';
import type { ScriptedAnthropic } from '../testing/scripted-anthropic';
import { startScriptedAnthropic } from '../testing/scripted-anthropic';
import { testHarness } from '../testing/kinetix-fixtures';
import type { WebHost } from './web';
import { SESSION_HEADER, TOKEN_HEADER, createWebHost } from './web';

let dir: string;
let db: Db;
let seed: SeedSummary;
let host: WebHost;
let model: ScriptedAnthropic;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ai-web-stream-'));
  mkdirSync(join(dir, 'renderer'));
  writeFileSync(join(dir, 'renderer', 'index.html'), '<html><head></head><body></body></html>');
  db = openDb(join(dir, 'db.sqlite'));
  seed = seedDemo(db, { today: '2026-11-20' });
  model = await startScriptedAnthropic([]);
  const { kx } = testHarness(db, defaultToolRegistry(), { baseURL: model.url });
  host = await createWebHost({ db, rendererDir: join(dir, 'renderer'), port: 0, kinetix: kx });
});

afterAll(async () => {
  await host.close();
  await model.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((ok, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: host.port,
        method: 'POST',
        path,
        headers: { host: `127.0.0.1:${host.port}`, 'content-type': 'application/json', [TOKEN_HEADER]: host.token, ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', fail);
    req.end(JSON.stringify(body));
  });
}

async function signIn(userId: string): Promise<string> {
  const r = await post('/api/call/session.signIn', { user_id: userId, pin: DEMO_PIN });
  expect(r.status).toBe(200);
  return r.headers[SESSION_HEADER] as string;
}

function events(sse: string): { id?: string; data: { seq: number; event: { type: string } } }[] {
  return sse
    .split('\n\n')
    .filter((b) => b.includes('data:') && !b.startsWith('event:'))
    .map((b) => {
      const id = /^id: (\d+)$/m.exec(b)?.[1];
      return { ...(id ? { id } : {}), data: JSON.parse(/^data: (.*)$/m.exec(b)![1]!) as { seq: number; event: { type: string } } };
    });
}

describe('web host assistant stream (SSE)', () => {
  it('streams a run as server-sent events with ids, resumes after Last-Event-ID, and ends', async () => {
    const session = await signIn(seed.userIds.physio);
    model.push({ text: 'Hello from the scripted model.' });
    const start = await post('/api/call/assistant.start', { message: 'Hi' }, { [SESSION_HEADER]: session });
    expect(start.status).toBe(200);
    const runId = (JSON.parse(start.body) as { value: { run_id: string } }).value.run_id;
    const all = await post('/api/stream/assistant.events', { run_id: runId }, { [SESSION_HEADER]: session });
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toContain('text/event-stream');
    expect(all.body).toContain('event: end');
    const evs = events(all.body);
    expect(evs[0]?.data.event.type).toBe('RUN_STARTED');
    expect(evs.at(-1)?.data.event.type).toBe('RUN_FINISHED');
    expect(evs.every((e, i) => e.id === String(i + 1))).toBe(true);
    const resumed = await post('/api/stream/assistant.events', { run_id: runId }, { [SESSION_HEADER]: session, 'last-event-id': '2' });
    expect(events(resumed.body).map((e) => e.id)).toEqual(evs.slice(2).map((e) => e.id));
  });

  it('a client that goes away in the middle of a stream ends only its own stream; the host keeps answering', async () => {
    const session = await signIn(seed.userIds.physio);
    model.push({ hang: 'after_start', text: 'Thinking' });
    const runId = (
      JSON.parse((await post('/api/call/assistant.start', { message: 'Slow one' }, { [SESSION_HEADER]: session })).body) as { value: { run_id: string } }
    ).value.run_id;
    const firstEvent = await new Promise<string>((ok, fail) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: host.port,
          method: 'POST',
          path: '/api/stream/assistant.events',
          headers: { host: `127.0.0.1:${host.port}`, 'content-type': 'application/json', [TOKEN_HEADER]: host.token, [SESSION_HEADER]: session },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
            const m = /data: (\{.*\})\n/.exec(text);
            if (m) {
              req.destroy(); // the tab closes mid-run
              ok(m[1]!);
            }
          });
          res.on('error', () => {});
        },
      );
      req.on('error', (e) => (e.message.includes('aborted') || e.message.includes('socket hang up') ? undefined : fail(e)));
      req.end(JSON.stringify({ run_id: runId }));
    });
    expect((JSON.parse(firstEvent) as { event: { type: string } }).event.type).toBe('RUN_STARTED');
    const me = await post('/api/call/session.me', {}, { [SESSION_HEADER]: session });
    expect(me.status).toBe(200);
    expect((JSON.parse(me.body) as { value: { user_id: string } }).value.user_id).toBe(seed.userIds.physio);
    await post('/api/call/assistant.stop', { run_id: runId }, { [SESSION_HEADER]: session });
  });

  it("refuses a stream without the token, without a sign-in, and for another user's run", async () => {
    const physio = await signIn(seed.userIds.physio);
    model.push({ text: 'ok' });
    const runId = (
      JSON.parse((await post('/api/call/assistant.start', { message: 'Hi again' }, { [SESSION_HEADER]: physio })).body) as { value: { run_id: string } }
    ).value.run_id;
    expect((await post('/api/stream/assistant.events', { run_id: runId }, { [TOKEN_HEADER]: 'nope', [SESSION_HEADER]: physio })).status).toBe(401);
    expect((await post('/api/stream/assistant.events', { run_id: runId })).status).toBe(401);
    const coach = await signIn(seed.userIds.coach);
    const other = await post('/api/stream/assistant.events', { run_id: runId }, { [SESSION_HEADER]: coach });
    expect(other.status).toBe(404);
    expect(JSON.parse(other.body)).toMatchObject({ ok: false, error: { code: 'NotFound' } });
    const confirm = await post('/api/call/assistant.confirm', { tool_call_id: 'x', approve: true }, { [SESSION_HEADER]: coach });
    expect(confirm.status).toBe(404);
  });
});
