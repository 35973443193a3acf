/**
 * The web host: serves the built renderer (out/renderer) to a browser and bridges the same
 * contract as Electron IPC over HTTP (POST /api/call/<op>) — never a second implementation of a
 * rule. Bound to 127.0.0.1 only. Built on Hono with @hono/node-server (the framework the HQ server
 * in sync/ uses too): routing, middleware guards, SSE streaming and static files.
 *
 * What every request goes through, in order: security headers on the answer; the Host check
 * (421 unless 127.0.0.1/localhost on our port); for /api/*: the token (401), Origin (403), route
 * (404), JSON content type (415), body size (413 over MAX_BODY_BYTES, answered, never a reset),
 * JSON syntax (400). Any error a handler throws becomes a 500 answer; no request can stop the host.
 *
 * Authentication of the page: a random per-launch token is injected into the served index.html as
 * `<meta name="ai-host-token">`, and the page sends it back in the `X-AI-Token` header on every
 * API request. Why not a cookie: a cookie is ambient authority (the browser attaches it to any
 * request to this origin, including ones another site triggers), whereas a header can only be set
 * by script that read the token from our own page — which other origins cannot read (same-origin
 * policy), and a DNS-rebinding page cannot load either, because every request's Host header must
 * name 127.0.0.1/localhost on our port. The token never appears in a URL or a log line.
 *
 * Each browser tab gets its own sign-in session: the host issues a random session id in the
 * `X-AI-Session` response header and the page keeps it in sessionStorage (per tab).
 *
 * Usage: `npm run web [-- --db PATH] [--port N] [--seed-large N] [--no-build]` (PORT env works
 * too; default 5170; 0 = any free). The renderer is built first when missing or older than its
 * sources, unless `--no-build` (the e2e driver builds once itself). `--seed-large N` fills a new database with N synthetic athletes instead of the
 * demo club (the UI benchmark, e2e/bench/).
 * The database defaults to ATHLETE_DB or ./.data/athlete-intelligence.sqlite (main/app/bootstrap.ts).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createAdaptorServer } from '@hono/node-server';
import type { HttpBindings } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import type { Context, Env } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { CallResult } from '../../models/contract';
import type { ErrorCode } from '../../models/errors';
import { HTTP_STATUS } from '../../models/errors';
import type { Db } from '../data/db';
import { defaultToolRegistry } from '../kinetix/catalogue';
import { Kinetix } from '../kinetix/harness';
import type { ToolRegistry } from '../kinetix/registry';
import type { CallContext, WindowSession } from '../ipc/handlers';
import { createHandlers, createStreamHandlers, dispatch, openStream } from '../ipc/handlers';
import { createCaptureWorkspace } from '../ipc/capture';
import type { CaptureWorkspace } from '../capture/workspace';
import { findUserByEmail, setUserPinHash } from '../data/identity';
import { DEMO_PIN, seedLarge } from '../data/seed';
import { hashPin } from '../services/pin';
import { openAppDatabaseWithInfo } from '../app/bootstrap';
import { startAppSync } from '../app/device-sync';
import type { AppSync } from '../app/sync-runner';
import { CSP } from './csp';

/** Default port of `npm run web`. */
export const DEFAULT_PORT = 5170;
/** Header that carries the per-launch token. */
export const TOKEN_HEADER = 'x-ai-token';
/** Header that carries the tab's session id (issued by the host). */
export const SESSION_HEADER = 'x-ai-session';
/** Largest accepted request body (bytes); a larger one is answered 413 with a typed error. */
export const MAX_BODY_BYTES = 1_000_000;
const SESSION_IDLE_MS = 12 * 3600_000;
/** Most tab sessions kept at once. */
const MAX_SESSIONS = 1000;
/** Interval (ms) of the SSE comment that keeps idle proxies and the browser from closing a stream. */
const SSE_HEARTBEAT_MS = 15_000;

/** HTTP status for each error code (models/errors.ts documents why each; the body is always the ErrorPayload). */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = HTTP_STATUS;

/** Options of {@link createWebHost}. */
export interface WebHostOptions {
  db: Db;
  /** Folder of the built renderer (index.html + assets). @default out/renderer */
  rendererDir?: string;
  /** Port; 0 picks a free one. @default 5170 */
  port?: number;
  /** Fixed token (tests only). @default 32 random bytes */
  token?: string;
  log?: (line: string) => void;
  /** The assistant harness (omit to run without the assistant). */
  kinetix?: Kinetix | null;
  /** The harness's tool catalogue (the Settings page's tool switches). */
  tools?: ToolRegistry | null;
  /** The capture workspace (the Capture page's recordings and processing jobs). */
  capture?: CaptureWorkspace | null;
  /** Background device sync (main/app/sync-runner.ts); omit to run as a device that is never enrolled. */
  sync?: AppSync | null;
}

/** A running web host. `token` is for tests and the e2e driver; never print it. */
export interface WebHost {
  server: Server;
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

type ErrorBody = Extract<CallResult<never>, { ok: false }>;

function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { ok: false, error: { code, message } };
}

/** A typed refusal: the ErrorPayload body with its code's own HTTP status ({@link HTTP_STATUS}), so the two never disagree. */
function refuse<E extends Env>(c: Context<E>, code: ErrorCode, message: string, extra: Record<string, string> = {}): Response {
  return json(c, HTTP_STATUS[code], errorBody(code, message), extra);
}

function sameToken(given: string | undefined, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Inject the token into index.html (escaped; it is base64url anyway). */
function injectToken(html: string, token: string): string {
  const tag = `<meta name="ai-host-token" content="${token.replace(/[^A-Za-z0-9_-]/g, '')}" />`;
  return html.includes('</head>') ? html.replace('</head>', `    ${tag}\n  </head>`) : `${tag}${html}`;
}

/** Hono environment of the host: the Node request (for the body) and the body text once read. */
type HostEnv = { Bindings: HttpBindings; Variables: { body: string } };

function tooLarge(c: Context<HostEnv>): Response {
  return refuse(
    c,
    'PayloadTooLarge',
    `The request body is over the ${MAX_BODY_BYTES / 1_000_000} MB limit. Send less at once (for example, fewer rows per call).`,
    { connection: 'close' },
  );
}

/**
 * Read a request body as UTF-8 text, keeping at most `max` bytes. Resolves null as soon as the
 * body is over `max`, and lets the rest flow on unread (discarded) so the reply can still be
 * delivered. Rejects when the client goes away before the end of the body.
 */
function readLimited(incoming: IncomingMessage, max: number): Promise<string | null> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('close', onClose);
      incoming.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        done();
        incoming.on('error', () => {});
        incoming.resume();
        ok(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      ok(Buffer.concat(chunks).toString('utf8'));
    };
    const onClose = () => {
      done();
      fail(new Error('The client closed the connection before the end of the request body.'));
    };
    const onError = (e: Error) => {
      done();
      fail(e);
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('close', onClose);
    incoming.on('error', onError);
  });
}

/** JSON reply with no-store (API answers are never cached). */
function json<E extends Env>(c: Context<E>, status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return c.newResponse(JSON.stringify(body), status as 200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...extra });
}

/**
 * Build the host's Hono application (routing, guards, body limit, SSE, static files). Exposed
 * for tests through {@link createWebHost}; the order of the guards is the security contract:
 * Host check (DNS rebinding) on every request, then for /api/*: token, Origin, route, content
 * type, body size, JSON.
 */
function createApp(opts: WebHostOptions & { rendererDir: string; token: string; currentPort: () => number }): Hono<HostEnv> {
  const { rendererDir, token } = opts;
  const indexPath = join(rendererDir, 'index.html');
  const log = opts.log ?? (() => {});
  const deps = { db: opts.db, log, kinetix: opts.kinetix ?? null, tools: opts.tools ?? null, sync: opts.sync ?? null, capture: opts.capture ?? null };
  const handlers = createHandlers(deps);
  const streams = createStreamHandlers(deps);
  const sessions = new Map<string, WindowSession & { seen: number }>();
  const allowedHosts = (): Set<string> => new Set([`127.0.0.1:${opts.currentPort()}`, `localhost:${opts.currentPort()}`]);

  function sessionFor(c: Context): { id: string; session: WindowSession & { seen: number }; issued: boolean } {
    const given = c.req.header(SESSION_HEADER);
    const now = Date.now();
    if (typeof given === 'string') {
      const s = sessions.get(given);
      if (s && now - s.seen < SESSION_IDLE_MS) {
        s.seen = now;
        return { id: given, session: s, issued: false };
      }
    }
    for (const [k, s] of sessions) if (now - s.seen >= SESSION_IDLE_MS) sessions.delete(k);
    // Bounded: the oldest session goes first (a Map iterates in insertion order).
    while (sessions.size >= MAX_SESSIONS) {
      const oldest = sessions.keys().next().value;
      if (oldest === undefined) break;
      sessions.delete(oldest);
    }
    const id = randomBytes(24).toString('base64url');
    const session = { userId: null, seen: now };
    sessions.set(id, session);
    return { id, session, issued: true };
  }

  // index.html with the token, read asynchronously and cached until the file changes.
  let indexCache: { mtimeMs: number; html: string } | null = null;
  async function indexHtml(): Promise<string> {
    const st = await stat(indexPath);
    if (!indexCache || indexCache.mtimeMs !== st.mtimeMs) indexCache = { mtimeMs: st.mtimeMs, html: injectToken(await readFile(indexPath, 'utf8'), token) };
    return indexCache.html;
  }

  const app = new Hono<HostEnv>();

  // Security headers on every answer (also the refusals below, which end the chain early).
  app.use('*', async (c, next) => {
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('x-frame-options', 'DENY');
    c.header('cross-origin-opener-policy', 'same-origin');
    c.header('cross-origin-resource-policy', 'same-origin');
  });

  app.use('*', async (c, next) => {
    // DNS-rebinding guard: only our own host names on our port.
    if (!allowedHosts().has(c.req.header('host') ?? '')) {
      return refuse(c, 'MisdirectedRequest', 'This host only answers requests addressed to 127.0.0.1 or localhost.');
    }
    await next();
  });

  app.use('/api/*', async (c, next) => {
    if (!sameToken(c.req.header(TOKEN_HEADER), token)) {
      return refuse(c, 'Unauthenticated', 'Missing or wrong host token. Reload the page from the address the web host printed.');
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !allowedHosts().has(origin.replace(/^http:\/\//, ''))) {
      return refuse(c, 'Forbidden', 'Cross-origin requests are refused.');
    }
    const route = /^\/api\/(call|stream)\/([A-Za-z.]{1,60})$/.exec(c.req.path);
    if (!route || c.req.method !== 'POST') {
      return refuse(c, 'NotFound', 'No such API route. Calls are POST /api/call/<operation>, streams POST /api/stream/<stream>.');
    }
    if (!(c.req.header('content-type') ?? '').startsWith('application/json')) {
      return refuse(c, 'UnsupportedMediaType', 'Send the input as application/json.');
    }
    await next();
  });

  // Body size: refused with 413 as soon as it is known to be over (content-length, or the
  // running count of a chunked body). The rest of an oversized body is read and discarded rather
  // than left unread, so the client receives the 413 instead of a reset connection.
  app.use('/api/*', async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > MAX_BODY_BYTES) return tooLarge(c);
    const text = await readLimited(c.env.incoming, MAX_BODY_BYTES);
    if (text === null) return tooLarge(c);
    c.set('body', text);
    await next();
  });

  /** The JSON input, or a 400 reply. */
  function readInput(c: Context<HostEnv>): { input: unknown } | { reply: Response } {
    try {
      const text = c.get('body');
      return { input: text.trim() === '' ? {} : (JSON.parse(text) as unknown) };
    } catch {
      return { reply: refuse(c, 'MalformedRequest', 'The request body is not valid JSON.') };
    }
  }

  app.post('/api/call/:op', async (c) => {
    const read = readInput(c);
    if ('reply' in read) return read.reply;
    const { id, session, issued } = sessionFor(c);
    const ctx: CallContext = { session };
    const result = await dispatch(handlers, ctx, c.req.param('op'), read.input, log);
    const status = result.ok ? 200 : (STATUS_OF[result.error.code] ?? 500);
    const headers: Record<string, string> = issued ? { [SESSION_HEADER]: id } : {};
    if (!result.ok && result.error.retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(result.error.retryAfterSeconds)));
    return json(c, status, result, headers);
  });

  app.post('/api/stream/:stream', async (c) => {
    const read = readInput(c);
    if ('reply' in read) return read.reply;
    const input = read.input;
    const { id, session, issued } = sessionFor(c);
    const ctx: CallContext = { session };
    // Server-sent events over a POST (EventSource cannot send the token header). A reconnecting
    // view sends its last event id in `Last-Event-ID` (or the input's last_event_id).
    const lastId = c.req.header('last-event-id');
    if (typeof lastId === 'string' && /^\d{1,20}$/.test(lastId) && input && typeof input === 'object')
      (input as Record<string, unknown>).last_event_id = lastId;
    const opened = openStream(streams, ctx, c.req.param('stream'), input);
    if (!opened.ok) return json(c, STATUS_OF[opened.error.code] ?? 500, { ok: false, error: opened.error }, issued ? { [SESSION_HEADER]: id } : {});
    if (issued) c.header(SESSION_HEADER, id);
    c.header('x-accel-buffering', 'no');
    const response = streamSSE(c, async (stream) => {
      const it = opened.events[Symbol.asyncIterator]();
      let closed = false;
      const heartbeat = setInterval(() => void stream.write(': keep-alive\n\n').catch(() => {}), SSE_HEARTBEAT_MS);
      stream.onAbort(() => {
        closed = true;
        clearInterval(heartbeat);
        void it.return?.();
      });
      try {
        await stream.write(': stream open\n\n');
        for (;;) {
          const next = await it.next();
          if (next.done || closed) break;
          const e = next.value;
          // Run events carry an id to resume from; a status event (sync.events) is a snapshot, resumed by the next one.
          const id = 'runId' in e && !e.ephemeral ? `id: ${e.id}\n` : '';
          await stream.write(`${id}data: ${JSON.stringify(e)}\n\n`);
        }
        if (!closed) await stream.write('event: end\ndata: {}\n\n');
      } catch (e) {
        if (!closed)
          await stream
            .write(
              `event: error\ndata: ${JSON.stringify(errorBody('Internal', 'The event stream failed; reconnect to resume from the last event.').error)}\n\n`,
            )
            .catch(() => {});
        log(`stream error: ${e instanceof Error ? e.name : typeof e}`);
      } finally {
        clearInterval(heartbeat);
      }
    });
    response.headers.set('cache-control', 'no-store');
    return response;
  });

  // Static files: index.html (token injected, CSP, no-store) and the built assets, streamed
  // from disk (never read synchronously). Anything else is 404; a non-GET is 405.
  const serveIndex = async (c: Context<HostEnv>): Promise<Response> =>
    c.newResponse(c.req.method === 'HEAD' ? null : await indexHtml(), 200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': CSP,
    });
  app.on(['GET', 'HEAD'], '/', serveIndex);
  app.on(['GET', 'HEAD'], '/index.html', serveIndex);
  app.on(['GET', 'HEAD'], '*', async (c, next) => {
    try {
      decodeURIComponent(c.req.path);
    } catch {
      return c.text('Bad request: malformed URL encoding', 400);
    }
    await next();
    if (c.res.status === 200) c.header('cache-control', 'no-cache');
  });
  app.on(['GET', 'HEAD'], '*', serveStatic({ root: rendererDir }));
  // A renderer build without an icon: answer the browser's automatic request without an error.
  app.on(['GET', 'HEAD'], '/favicon.ico', (c) => c.body(null, 204));
  app.on(['GET', 'HEAD'], '*', (c) => c.text('Not found', 404));
  app.all('*', (c) => c.body(null, 405, { allow: 'GET, HEAD' }));

  // Never let one request take the host down (and every run in flight with it).
  app.onError((e, c) => {
    log(`request error: ${e.name}`);
    return c.req.path.startsWith('/api/') ? refuse(c, 'Internal', 'An internal error occurred.') : c.text('Internal error', 500);
  });
  return app;
}

/**
 * Start the web host on 127.0.0.1 (Hono on @hono/node-server). Resolves once it listens.
 * @throws when the renderer has not been built (run `npm run build`).
 */
export async function createWebHost(opts: WebHostOptions): Promise<WebHost> {
  const rendererDir = resolve(opts.rendererDir ?? 'out/renderer');
  const indexPath = join(rendererDir, 'index.html');
  if (!existsSync(indexPath)) throw new Error(`The renderer is not built (${indexPath} is missing). Run \`npm run build\` first.`);
  const token = opts.token ?? randomBytes(32).toString('base64url');
  let port = opts.port ?? DEFAULT_PORT;
  const app = createApp({ ...opts, rendererDir, token, currentPort: () => port });
  const server = createAdaptorServer({ fetch: app.fetch, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail);
      ok();
    });
  });
  port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}/`,
    token,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

function newestMtime(dir: string): number {
  if (!existsSync(dir)) return 0;
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Build the renderer when it is missing, or (in a source checkout) older than renderer/ or models/. */
function ensureRendererBuilt(dir: string): void {
  const index = join(dir, 'index.html');
  const stale = existsSync(index) && existsSync('renderer') && Math.max(newestMtime('renderer'), newestMtime('models')) > statSync(index).mtimeMs;
  if (existsSync(index) && !stale) return;
  console.log(`web: the renderer is ${stale ? 'older than its sources' : 'not built yet'}; running \`npm run build\`…`);
  const r = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(join(dir, 'index.html'))) {
    console.error('web: the build failed. Run `npm run build` and fix what it reports, then `npm run web` again.');
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      db: { type: 'string' },
      port: { type: 'string' },
      renderer: { type: 'string' },
      'seed-large': { type: 'string' },
      'no-build': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const port = Number(values.port ?? process.env.PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port/PORT must be 0–65535, got "${values.port ?? process.env.PORT}"`);
  const rendererDir = resolve(values.renderer ?? 'out/renderer');
  if (!values['no-build']) ensureRendererBuilt(rendererDir);
  else if (!existsSync(join(rendererDir, 'index.html'))) throw new Error(`The renderer is not built (${rendererDir}); run \`npm run build\`.`);
  const large = values['seed-large'] === undefined ? 0 : Number(values['seed-large']);
  if (!Number.isInteger(large) || large < 0 || large > 100_000)
    throw new Error(`--seed-large must be a whole number of athletes (0–100000), got "${values['seed-large']}"`);
  const { db, path: dbPath, seeded, created } = openAppDatabaseWithInfo(values.db, large ? { seedDemo: false } : {});
  if (large && created) {
    // Benchmark data set (e2e/bench): one large synthetic club whose users sign in with the demo PIN.
    const s = seedLarge(db, { athletes: large, loads: 0 });
    for (const email of Object.values(s.emails)) {
      const u = findUserByEmail(db, email);
      if (u) setUserPinHash(db, u.id, hashPin(DEMO_PIN));
    }
    console.log(`web: seeded ${large} synthetic athletes (users ${Object.values(s.emails).join(', ')})`);
  }
  const tools = defaultToolRegistry();
  const kinetix = Kinetix.open({ db, tools, log: (l) => console.log(`kinetix: ${l}`) });
  // Recordings live next to the database (ATHLETE_CAPTURE_DIR overrides), one folder per trial.
  const capture = createCaptureWorkspace(db, resolve(process.env.ATHLETE_CAPTURE_DIR ?? join(dirname(dbPath), 'captures')), (l) => console.log(`web: ${l}`));
  // Device sync runs in the background when this database is enrolled with an HQ server.
  const sync = startAppSync(db, (l) => console.log(`web: ${l}`));
  const host = await createWebHost({ db, rendererDir, port, kinetix, tools, sync, capture, log: (l) => console.log(`web: ${l}`) });
  console.log(`web: database ${dbPath}${seeded ? ` (created and seeded with the demo club; every demo PIN is ${DEMO_PIN})` : ''}`);
  console.log(`web: Athlete Intelligence is running at ${host.url}`);
  const stop = () => {
    capture.close();
    void host
      .close()
      .then(() => sync.close())
      .then(() => {
        db.close();
        process.exit(0);
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname);
if (invokedDirectly) {
  main().catch((e: unknown) => {
    console.error(`web: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
