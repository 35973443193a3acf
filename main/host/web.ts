/**
 * The web host: serves the built renderer (out/renderer) to a browser and bridges the same
 * contract as Electron IPC over HTTP (POST /api/call/<op>) — never a second implementation of a
 * rule. Bound to 127.0.0.1 only.
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
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import type { CallResult } from '../../models/contract';
import type { ErrorCode } from '../../models/errors';
import type { Db } from '../data/db';
import { defaultToolRegistry } from '../kinetix/catalogue';
import { Kinetix } from '../kinetix/harness';
import type { ToolRegistry } from '../kinetix/registry';
import type { CallContext, WindowSession } from '../ipc/handlers';
import { createHandlers, createStreamHandlers, dispatch, openStream } from '../ipc/handlers';
import { findUserByEmail, setUserPinHash } from '../data/identity';
import { DEMO_PIN, seedLarge } from '../data/seed';
import { hashPin } from '../services/pin';
import { openAppDatabaseWithInfo } from '../app/bootstrap';
import { CSP } from './csp';

/** Default port of `npm run web`. */
export const DEFAULT_PORT = 5170;
/** Header that carries the per-launch token. */
export const TOKEN_HEADER = 'x-ai-token';
/** Header that carries the tab's session id (issued by the host). */
export const SESSION_HEADER = 'x-ai-session';
/** Largest accepted request body. */
export const MAX_BODY_BYTES = 1_000_000;
const SESSION_IDLE_MS = 12 * 3600_000;
/** Most tab sessions kept at once. */
const MAX_SESSIONS = 1000;

/** HTTP status for each error code (the body is always the ErrorPayload). */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  NotFound: 404, Forbidden: 403, Conflict: 409, Validation: 422, RateLimited: 429, TooManyRuns: 429, BudgetExceeded: 402, Unauthenticated: 401, Internal: 500,
};


const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json', '.woff2': 'font/woff2', '.map': 'application/json',
};

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
}

/** A running web host. `token` is for tests and the e2e driver; never print it. */
export interface WebHost {
  server: Server;
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

function securityHeaders(res: ServerResponse): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
  res.setHeader('cross-origin-resource-policy', 'same-origin');
}

function errorBody(code: ErrorCode, message: string): Extract<CallResult<never>, { ok: false }> {
  return { ok: false, error: { code, message } };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sameToken(given: string | string[] | undefined, token: string): boolean {
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

/**
 * Start the web host on 127.0.0.1. Resolves once it listens.
 * @throws when the renderer has not been built (run `npm run build`).
 */
export async function createWebHost(opts: WebHostOptions): Promise<WebHost> {
  const rendererDir = resolve(opts.rendererDir ?? 'out/renderer');
  const indexPath = join(rendererDir, 'index.html');
  if (!existsSync(indexPath)) throw new Error(`The renderer is not built (${indexPath} is missing). Run \`npm run build\` first.`);
  const token = opts.token ?? randomBytes(32).toString('base64url');
  const log = opts.log ?? (() => {});
  const deps = { db: opts.db, log, kinetix: opts.kinetix ?? null, tools: opts.tools ?? null };
  const handlers = createHandlers(deps);
  const streams = createStreamHandlers(deps);
  const sessions = new Map<string, WindowSession & { seen: number }>();
  let port = opts.port ?? DEFAULT_PORT;

  const allowedHosts = (): Set<string> => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);

  function sessionFor(req: IncomingMessage): { id: string; session: WindowSession & { seen: number }; issued: boolean } {
    const given = req.headers[SESSION_HEADER];
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

  async function handleApi(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (!sameToken(req.headers[TOKEN_HEADER], token)) {
      sendJson(res, 401, errorBody('Unauthenticated', 'Missing or wrong host token. Reload the page from the address the web host printed.'));
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedHosts().has(origin.replace(/^http:\/\//, ''))) {
      sendJson(res, 403, errorBody('Forbidden', 'Cross-origin requests are refused.'));
      return;
    }
    const m = /^\/api\/(call|stream)\/([A-Za-z.]{1,60})$/.exec(path);
    if (!m || req.method !== 'POST') {
      sendJson(res, 404, errorBody('NotFound', 'No such API route. Calls are POST /api/call/<operation>, streams POST /api/stream/<stream>.'));
      return;
    }
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
      sendJson(res, 415, errorBody('Validation', 'Send the input as application/json.'));
      return;
    }
    let input: unknown;
    try {
      const text = await readBody(req);
      input = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      sendJson(res, 400, errorBody('Validation', 'The request body is not valid JSON (or is over 1 MB).'));
      return;
    }
    const { id, session, issued } = sessionFor(req);
    const ctx: CallContext = { session };
    if (m[1] === 'stream') {
      // Server-sent events over a POST (EventSource cannot send the token header). A reconnecting
      // view sends its last event id in `Last-Event-ID` (or the input's last_event_id).
      const lastId = req.headers['last-event-id'];
      if (typeof lastId === 'string' && /^\d{1,20}$/.test(lastId) && input && typeof input === 'object') (input as Record<string, unknown>).last_event_id = lastId;
      const opened = openStream(streams, ctx, m[2], input);
      if (!opened.ok) {
        sendJson(res, STATUS_OF[opened.error.code] ?? 500, { ok: false, error: opened.error }, issued ? { [SESSION_HEADER]: id } : {});
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no', ...(issued ? { [SESSION_HEADER]: id } : {}) });
      res.write(': stream open\n\n');
      const it = opened.events[Symbol.asyncIterator]();
      let closed = false;
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
      res.on('close', () => {
        closed = true;
        clearInterval(heartbeat);
        void it.return?.();
      });
      try {
        for (;;) {
          const next = await it.next();
          if (next.done || closed) break;
          const e = next.value;
          res.write(`${e.ephemeral ? '' : `id: ${e.id}\n`}data: ${JSON.stringify(e)}\n\n`);
        }
        if (!closed) res.end('event: end\ndata: {}\n\n');
      } catch (e) {
        if (!closed) res.end(`event: error\ndata: ${JSON.stringify(errorBody('Internal', 'The event stream failed; reconnect to resume from the last event.').error)}\n\n`);
        log(`stream error: ${e instanceof Error ? e.name : typeof e}`);
      } finally {
        clearInterval(heartbeat);
      }
      return;
    }
    const result = await dispatch(handlers, ctx, m[2], input, log);
    const status = result.ok ? 200 : (STATUS_OF[result.error.code] ?? 500);
    sendJson(res, status, result, issued ? { [SESSION_HEADER]: id } : {});
  }

  function handleStatic(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    let rel: string;
    try {
      rel = path === '/' ? 'index.html' : decodeURIComponent(path.slice(1));
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('Bad request: malformed URL encoding');
      return;
    }
    const file = resolve(rendererDir, rel);
    if (!file.startsWith(rendererDir + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found');
      return;
    }
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    if (file === indexPath) {
      const html = injectToken(readFileSync(indexPath, 'utf8'), token);
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store', 'content-security-policy': CSP });
      res.end(req.method === 'HEAD' ? undefined : html);
      return;
    }
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache' });
    res.end(req.method === 'HEAD' ? undefined : readFileSync(file));
  }

  const server = createServer((req, res) => {
    securityHeaders(res);
    // DNS-rebinding guard: only our own host names on our port.
    if (!allowedHosts().has(req.headers.host ?? '')) {
      sendJson(res, 421, errorBody('Forbidden', 'This host only answers requests addressed to 127.0.0.1 or localhost.'));
      return;
    }
    let path: string;
    try {
      path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (path.startsWith('/api/')) {
      handleApi(req, res, path).catch(() => sendJson(res, 500, errorBody('Internal', 'An internal error occurred.')));
      return;
    }
    try {
      handleStatic(req, res, path);
    } catch {
      // Never let one request take the host down (and every run in flight with it).
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Internal error');
    }
  });

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
    close: () => new Promise<void>((ok) => {
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
  const { values } = parseArgs({ options: { db: { type: 'string' }, port: { type: 'string' }, renderer: { type: 'string' }, 'seed-large': { type: 'string' }, 'no-build': { type: 'boolean', default: false } }, strict: true });
  const port = Number(values.port ?? process.env.PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port/PORT must be 0–65535, got "${values.port ?? process.env.PORT}"`);
  const rendererDir = resolve(values.renderer ?? 'out/renderer');
  if (!values['no-build']) ensureRendererBuilt(rendererDir);
  else if (!existsSync(join(rendererDir, 'index.html'))) throw new Error(`The renderer is not built (${rendererDir}); run \`npm run build\`.`);
  const large = values['seed-large'] === undefined ? 0 : Number(values['seed-large']);
  if (!Number.isInteger(large) || large < 0 || large > 100_000) throw new Error(`--seed-large must be a whole number of athletes (0–100000), got "${values['seed-large']}"`);
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
  const kinetix = new Kinetix({ db, tools, log: (l) => console.log(`kinetix: ${l}`) });
  const host = await createWebHost({ db, rendererDir, port, kinetix, tools, log: (l) => console.log(`web: ${l}`) });
  console.log(`web: database ${dbPath}${seeded ? ` (created and seeded with the demo club; every demo PIN is ${DEMO_PIN})` : ''}`);
  console.log(`web: Athlete Intelligence is running at ${host.url}`);
  const stop = () => {
    void host.close().then(() => {
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
