import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '../data/db';
import type { Db } from '../data/db';
import { DEMO_EMAILS, DEMO_PIN, seedDemo } from '../data/seed';
import type { SeedSummary } from '../data/seed';
import { MAX_PIN_FAILURES } from '../ipc/handlers';
import type { WebHost } from './web';
import { MAX_BODY_BYTES, SESSION_HEADER, TOKEN_HEADER, createWebHost } from './web';
import { errorFromPayload } from '../../models/errors';
import { defaultToolRegistry } from '../kinetix/catalogue';
import type { ErrorPayload } from '../../models/errors';

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
  writeFileSync(join(renderer, 'favicon.ico'), Buffer.from([0, 0, 1, 0, 1, 0]));
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

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

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
    expect(JSON.parse(r.body)).toMatchObject({ ok: false, error: { code: 'MisdirectedRequest' } });
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
    const r = await raw(
      'POST',
      '/api/call/session.users',
      { host: `127.0.0.1:${host.port}`, origin: 'http://evil.test', [TOKEN_HEADER]: host.token, 'content-type': 'application/json' },
      '{}',
    );
    expect(r.status).toBe(403);
    const t = await raw('POST', '/api/call/session.users', { host: `127.0.0.1:${host.port}`, [TOKEN_HEADER]: host.token, 'content-type': 'text/plain' }, '{}');
    expect(t.status).toBe(415);
    expect(JSON.parse(t.body)).toMatchObject({ ok: false, error: { code: 'UnsupportedMediaType' } });
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
    const list = JSON.parse((await call('verb.call', { verb: 'athletes.list', input: { limit: 5 } }, session)).body) as {
      ok: boolean;
      value: { total: number; athletes: unknown[] };
    };
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

  it('a typed error crosses with its details: a policy refusal arrives as Forbidden with kind and every decision', async () => {
    const session = await signIn('admin');
    const sched = JSON.parse((await call('verb.call', { verb: 'rates.schedule', input: {} }, session)).body) as {
      value: { folders: { items: { id: string; price_cents: number }[] }[] };
    };
    const item = sched.value.folders.flatMap((f) => f.items)[0]!;
    // A price rise over 20% by an administrator needs an owner: refused at this door, with the decision.
    const r = await call('verb.call', { verb: 'rates.updateItem', input: { id: item.id, price_cents: Math.min(1_000_000, item.price_cents * 2) } }, session);
    expect(r.status).toBe(403);
    const e = errorFromPayload((JSON.parse(r.body) as { ok: false; error: ErrorPayload }).error);
    expect(e.code).toBe('Forbidden');
    expect(e.details.kind).toBe('PolicyDenied');
    expect(e.details.decisions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'numeric_change_needs_owner', effect: 'needs_owner', table: 'rate_item', rowId: item.id, field: 'price_cents' }),
      ]),
    );
  });

  it('settings.updateAssistant over HTTP needs the version the page read; a stale one is a 409 Conflict saying what changed, nothing saved (issue 13 re-review)', async () => {
    // A host with the assistant's tools (the settings live there); the same database.
    const h = await createWebHost({ db, rendererDir: join(dir, 'renderer'), port: 0, tools: defaultToolRegistry() });
    try {
      const post = async (op: string, input: unknown, session?: string) => {
        const r = await fetch(`${h.url}api/call/${op}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [TOKEN_HEADER]: h.token, ...(session ? { [SESSION_HEADER]: session } : {}) },
          body: JSON.stringify(input),
        });
        return { status: r.status, headers: r.headers, body: (await r.json()) as { ok: boolean; value?: any; error?: ErrorPayload } }; // eslint-disable-line @typescript-eslint/no-explicit-any
      };
      const signInHere = async (role: 'admin' | 'owner') =>
        (await post('session.signIn', { user_id: seed.userIds[role], pin: DEMO_PIN })).headers.get(SESSION_HEADER)!;
      const admin = await signInHere('admin');
      const owner = await signInHere('owner');
      const opened = (await post('settings.assistant', {}, admin)).body.value as { version: number; org: { cap_usd: number | null } }; // the admin's tab
      const missing = await post('settings.updateAssistant', { budget_cap_usd: 1 }, admin);
      expect(missing.status).toBe(422);
      expect(missing.body.error!.issues!.map((i) => i.path)).toContain('expected_version');
      const ownerVersion = (await post('settings.assistant', {}, owner)).body.value.version as number;
      expect((await post('settings.updateAssistant', { disabled_tools: ['list_athletes'], expected_version: ownerVersion }, owner)).status).toBe(200);
      const stale = await post('settings.updateAssistant', { budget_cap_usd: 1, disabled_tools: [], expected_version: opened.version }, admin);
      expect(stale.status).toBe(409);
      const e = stale.body.error!;
      expect(e.code).toBe('Conflict');
      expect(e.message).toMatch(
        /changed since you opened this page \(last: the switched-off tools by .+ at \d{4}-\d\d-\d\d \d\d:\d\d UTC\)\. Nothing was saved/,
      );
      expect(e.conflicts).toEqual([
        { table: 'org_setting', id: 'kinetix.settings_revision', expectedVersion: opened.version, actualVersion: opened.version + 1 },
      ]);
      const now = (await post('settings.assistant', {}, admin)).body.value as { org: { cap_usd: number | null }; tools: { name: string; disabled: boolean }[] };
      expect(now.org.cap_usd).toBe(opened.org.cap_usd);
      expect(now.tools.find((t) => t.name === 'list_athletes')?.disabled).toBe(true);
      // With the current version the admin's change applies.
      const retry = await post('settings.updateAssistant', { disabled_tools: [], expected_version: opened.version + 1 }, admin);
      expect(retry.status).toBe(200);
      expect(retry.body.value.version).toBe(opened.version + 2);
    } finally {
      await h.close();
    }
  });

  it('applies a write once per idempotency key', async () => {
    const session = await signIn('physio');
    const input = {
      verb: 'vitals.record',
      input: { athlete_id: seed.linkedAthleteId, date: '2026-11-19', resting_hr_bpm: 51, hrv_rmssd_ms: 80, second_set_same_day: true },
      idempotency_key: 'test-key-0001',
    };
    const a = JSON.parse((await call('verb.call', input, session)).body) as { value: { changeset: { id: string; replayed: boolean } } };
    const b = JSON.parse((await call('verb.call', input, session)).body) as { value: { changeset: { id: string; replayed: boolean } } };
    expect(b.value.changeset.id).toBe(a.value.changeset.id);
  });

  it('a 20,000-level nested input is refused as Validation before it is hashed (with an idempotency key too)', async () => {
    const session = await signIn('physio');
    const deep = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000);
    for (const key of ['', ',"idempotency_key":"deep-input-key-0001"']) {
      const body = `{"verb":"workload.logSessionLoads","input":${deep}${key}}`;
      const r = await raw(
        'POST',
        '/api/call/verb.call',
        {
          host: `127.0.0.1:${host.port}`,
          [TOKEN_HEADER]: host.token,
          [SESSION_HEADER]: session,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        },
        body,
      );
      expect(r.status).toBe(422);
      expect(JSON.parse(r.body)).toMatchObject({ ok: false, error: { code: 'Validation', message: expect.stringMatching(/nested deeper than 32 levels/) } });
    }
  });

  it('answers a body over the limit with 413 and a typed error, not a reset connection (with and without content-length)', async () => {
    const big = JSON.stringify({ verb: 'athletes.list', input: { search: 'x'.repeat(MAX_BODY_BYTES + 10) } });
    const withLength = await raw(
      'POST',
      '/api/call/verb.call',
      { host: `127.0.0.1:${host.port}`, [TOKEN_HEADER]: host.token, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) },
      big,
    );
    expect(withLength.status).toBe(413);
    expect(JSON.parse(withLength.body)).toMatchObject({ ok: false, error: { code: 'PayloadTooLarge', message: expect.stringMatching(/over the 1 MB limit/) } });
    const chunked = await raw(
      'POST',
      '/api/call/verb.call',
      { host: `127.0.0.1:${host.port}`, [TOKEN_HEADER]: host.token, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      big,
    );
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ ok: false, error: { code: 'PayloadTooLarge' } });
    // fetch (undici) as the browser-like client: it reads the 413 instead of failing on a reset.
    const f = await fetch(`${host.url}api/call/verb.call`, {
      method: 'POST',
      headers: { [TOKEN_HEADER]: host.token, 'content-type': 'application/json' },
      body: big,
    });
    expect(f.status).toBe(413);
    expect((await f.json()) as unknown).toMatchObject({ ok: false, error: { code: 'PayloadTooLarge' } });
    // A body just under the limit is read, parsed and reaches the handler (which refuses the unknown field).
    const under = await call('session.users', { pad: 'y'.repeat(MAX_BODY_BYTES - 100) });
    expect(under.status).toBe(422);
    expect(JSON.parse(under.body)).toMatchObject({ ok: false, error: { code: 'Validation' } });
    expect(under.body).not.toMatch(/limit/);
  });

  it('answers malformed JSON with 400 and a typed error', async () => {
    const r = await raw(
      'POST',
      '/api/call/session.users',
      { host: `127.0.0.1:${host.port}`, [TOKEN_HEADER]: host.token, 'content-type': 'application/json' },
      '{"a":',
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ ok: false, error: { code: 'MalformedRequest', message: 'The request body is not valid JSON.' } });
  });

  it('serves /favicon.ico, answers HEAD without a body, unknown paths with 404 and other methods with 405', async () => {
    const icon = await raw('GET', '/favicon.ico', { host: `127.0.0.1:${host.port}` });
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/x-icon');
    const head = await raw('HEAD', '/', { host: `127.0.0.1:${host.port}` });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect((await raw('GET', '/nope.js', { host: `127.0.0.1:${host.port}` })).status).toBe(404);
    const del = await raw('DELETE', '/', { host: `127.0.0.1:${host.port}` });
    expect(del.status).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD');
  });

  it('puts the security headers on refusals too', async () => {
    const r = await raw('GET', '/', { host: `evil.test:${host.port}` });
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    const api = await call('session.users', {}, undefined, '');
    expect(api.headers['x-frame-options']).toBe('DENY');
    expect(api.headers['cache-control']).toBe('no-store');
  });

  it('survives a client that disconnects in the middle of a request body and one that sends garbage', async () => {
    await new Promise<void>((ok) => {
      const s = connect(host.port, '127.0.0.1', () => {
        s.write(
          `POST /api/call/session.users HTTP/1.1\r\nhost: 127.0.0.1:${host.port}\r\n${TOKEN_HEADER}: ${host.token}\r\ncontent-type: application/json\r\ncontent-length: 5000\r\n\r\n{"a":`,
        );
        setTimeout(() => {
          s.destroy();
          ok();
        }, 50);
      });
    });
    await new Promise<void>((ok) => {
      const s = connect(host.port, '127.0.0.1', () => s.end('NOT HTTP AT ALL\r\n\r\n'));
      s.resume();
      s.on('close', () => ok());
      s.on('error', () => ok());
    });
    const r = await call('session.users', {});
    expect(r.status).toBe(200);
  });

  it(`locks a user after ${MAX_PIN_FAILURES} wrong PINs`, async () => {
    for (let i = 0; i < MAX_PIN_FAILURES; i++) expect((await call('session.signIn', { user_id: seed.userIds.coach, pin: '9999' })).status).toBe(401);
    const locked = await call('session.signIn', { user_id: seed.userIds.coach, pin: DEMO_PIN });
    expect(locked.status).toBe(429);
    expect(JSON.parse(locked.body)).toMatchObject({ ok: false, error: { code: 'RateLimited' } });
  });
});
