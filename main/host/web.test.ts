import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '../data/db';
import type { Db } from '../data/db';
import { DEMO_EMAILS, DEMO_PIN, seedDemo } from '../data/seed';
import type { SeedSummary } from '../data/seed';
import { MAX_PIN_FAILURES } from '../ipc/handlers';
import type { WebHost } from './web';
import { SESSION_HEADER, TOKEN_HEADER, createWebHost } from './web';

let dir: string;
let db: Db;
let seed: SeedSummary;
let host: WebHost;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ai-web-'));
  const renderer = join(dir, 'renderer');
  mkdirSync(join(renderer, 'assets'), { recursive: true });
  writeFileSync(join(renderer, 'index.html'), '<!doctype html><html><head><title>t</title></head><body></body></html>');
  writeFileSync(join(renderer, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(dir, 'secret.txt'), 'outside');
  db = openDb(join(dir, 'db.sqlite'));
  seed = seedDemo(db, { today: '2026-11-20' });
  host = await createWebHost({ db, rendererDir: renderer, port: 0 });
});

afterAll(async () => {
  await host.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Reply { status: number; headers: Record<string, string | string[] | undefined>; body: string }

/** Raw HTTP (fetch cannot set Host). */
function raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port: host.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', fail);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function call(op: string, input: unknown, session?: string, token = host.token): Promise<Reply> {
  const headers: Record<string, string> = { host: `127.0.0.1:${host.port}`, 'content-type': 'application/json' };
  if (token) headers[TOKEN_HEADER] = token;
  if (session) headers[SESSION_HEADER] = session;
  return raw('POST', `/api/call/${op}`, headers, JSON.stringify(input));
}

async function signIn(role: keyof typeof DEMO_EMAILS): Promise<string> {
  const r = await call('session.signIn', { user_id: seed.userIds[role], pin: DEMO_PIN });
  expect(r.status).toBe(200);
  return r.headers[SESSION_HEADER] as string;
}

describe('web host', () => {
  it('listens on 127.0.0.1 only', () => {
    const a = host.server.address();
    expect(typeof a === 'object' && a?.address).toBe('127.0.0.1');
    expect(host.url).toBe(`http://127.0.0.1:${host.port}/`);
  });

  it('serves index.html with the token injected, a CSP and no-store; never the token in a URL', async () => {
    const r = await raw('GET', '/', { host: `127.0.0.1:${host.port}` });
    expect(r.status).toBe(200);
    expect(r.body).toContain(`<meta name="ai-host-token" content="${host.token}"`);
    expect(r.headers['content-security-policy']).toContain("default-src 'self'");
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(host.url).not.toContain(host.token);
  });

  it('serves assets and refuses paths outside the renderer folder', async () => {
    expect((await raw('GET', '/assets/app.js', { host: `localhost:${host.port}` })).status).toBe(200);
    expect((await raw('GET', '/../secret.txt', { host: `localhost:${host.port}` })).status).toBe(404);
    expect((await raw('GET', '/%2e%2e/secret.txt', { host: `localhost:${host.port}` })).status).toBe(404);
  });

  it('answers a malformed URL encoding with 400 and keeps serving (no token needed to send one)', async () => {
    expect((await raw('GET', '/%E0%A4%A', { host: `localhost:${host.port}` })).status).toBe(400);
    expect((await raw('GET', '/', { host: `localhost:${host.port}` })).status).toBe(200);
  });

  it('refuses a foreign Host header (DNS rebinding)', async () => {
    const r = await raw('GET', '/', { host: `evil.test:${host.port}` });
    expect(r.status).toBe(421);
    expect(r.body).not.toContain(host.token);
  });

  it('requires the token in a header on every API call', async () => {
    const none = await call('session.users', {}, undefined, '');
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toMatchObject({ ok: false, error: { code: 'Unauthenticated' } });
    const wrong = await call('session.users', {}, undefined, `${host.token.slice(0, -2)}xx`);
    expect(wrong.status).toBe(401);
  });

  it('refuses cross-origin calls and non-JSON bodies', async () => {
    const r = await raw('POST', '/api/call/session.users', { host: `127.0.0.1:${host.port}`, origin: 'http://evil.test', [TOKEN_HEADER]: host.token, 'content-type': 'application/json' }, '{}');
    expect(r.status).toBe(403);
    const t = await raw('POST', '/api/call/session.users', { host: `127.0.0.1:${host.port}`, [TOKEN_HEADER]: host.token, 'content-type': 'text/plain' }, '{}');
    expect(t.status).toBe(415);
  });

  it('lists sign-in users without credentials', async () => {
    const r = await call('session.users', {});
    const body = JSON.parse(r.body) as { ok: true; value: { users: Record<string, unknown>[] } };
    expect(body.ok).toBe(true);
    expect(body.value.users.length).toBeGreaterThanOrEqual(10);
    expect(r.body).not.toContain('scrypt$');
    expect(body.value.users.every((u) => !('pin_hash' in u))).toBe(true);
  });

  it('signs in with the PIN, keeps the session per tab, and signs out', async () => {
    const bad = await call('session.signIn', { user_id: seed.userIds.physio, pin: '0000' });
    expect(bad.status).toBe(401);
    const session = await signIn('physio');
    const me = JSON.parse((await call('session.me', {}, session)).body) as { value: { role: string; email: string } };
    expect(me.value).toMatchObject({ role: 'physio', email: DEMO_EMAILS.physio });
    const other = JSON.parse((await call('session.me', {})).body) as { value: unknown };
    expect(other.value).toBeNull();
    const list = JSON.parse((await call('verb.call', { verb: 'athletes.list', input: { limit: 5 } }, session)).body) as { ok: boolean; value: { total: number; athletes: unknown[] } };
    expect(list.ok).toBe(true);
    expect(list.value.athletes).toHaveLength(5);
    await call('session.signOut', {}, session);
    const after = await call('verb.call', { verb: 'athletes.list', input: {} }, session);
    expect(after.status).toBe(401);
  });

  it('returns typed errors with HTTP status: Forbidden, NotFound, Validation', async () => {
    const session = await signIn('athlete');
    const forbidden = await call('verb.call', { verb: 'injuries.list', input: {} }, session);
    expect(forbidden.status).toBe(403);
    expect(JSON.parse(forbidden.body)).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    const unknownVerb = await call('verb.call', { verb: 'athletes.purge', input: {} }, session);
    expect(unknownVerb.status).toBe(404);
    const unknownOp = await call('session.sudo', {}, session);
    expect(unknownOp.status).toBe(404);
    const invalid = await call('verb.call', { verb: 'athletes.list', input: { limit: -1 } }, session);
    expect(invalid.status).toBe(422);
    expect(JSON.parse(invalid.body)).toMatchObject({ ok: false, error: { code: 'Validation', issues: [{ path: 'limit' }] } });
  });

  it('applies a write once per idempotency key', async () => {
    const session = await signIn('physio');
    const input = { verb: 'vitals.record', input: { athlete_id: seed.linkedAthleteId, date: '2026-11-19', resting_hr_bpm: 51, hrv_rmssd_ms: 80 }, idempotency_key: 'test-key-0001' };
    const a = JSON.parse((await call('verb.call', input, session)).body) as { value: { changeset: { id: string; replayed: boolean } } };
    const b = JSON.parse((await call('verb.call', input, session)).body) as { value: { changeset: { id: string; replayed: boolean } } };
    expect(b.value.changeset.id).toBe(a.value.changeset.id);
  });

  it(`locks a user after ${MAX_PIN_FAILURES} wrong PINs`, async () => {
    for (let i = 0; i < MAX_PIN_FAILURES; i++) expect((await call('session.signIn', { user_id: seed.userIds.coach, pin: '9999' })).status).toBe(401);
    const locked = await call('session.signIn', { user_id: seed.userIds.coach, pin: DEMO_PIN });
    expect(locked.status).toBe(429);
    expect(JSON.parse(locked.body)).toMatchObject({ ok: false, error: { code: 'RateLimited' } });
  });
});
