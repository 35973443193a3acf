/**
 * The HQ server's HTTP surface (Hono):
 * - `POST /v1/devices` {email, pin, code, name?} → a device token (`code`: a one-time HQ sign-in
 *   code, sync/auth/enrolment-codes.ts); `DELETE /v1/devices/:id` revokes one;
 * - `POST /v1/enrolment-codes` (Bearer) {user_id} → a one-time sign-in code for that account (the
 *   caller's own, or one they may manage), shown once;
 * - `POST /v1/changesets` (Bearer): a device's outbox changesets, applied in order (sync/write/apply.ts);
 * - `POST /v1/approvals` (Bearer, a staff user's own token): owner approvals of changesets and
 *   authors' attestations of their RTP sign-offs, bound to their content hash, that a needs-owner
 *   changeset, or a sign-off uploaded under another user's token, is verified against
 *   (sync/write/approvals.ts);
 * - `POST /v1/proposals` (Bearer, a staff device): changes waiting for an owner proposed on the
 *   device, and declines of them, so every staff device of the org shows them (`hq_proposal`
 *   shape; sync/write/proposals.ts);
 * - `GET /v1/shape` (Bearer): the auth proxy in front of the shape service (sync/http/shape-proxy.ts);
 * - `/healthz` (liveness, touches nothing), `/readyz` (Postgres reachable, replication slot
 *   active), `/health/deps` (every dependency, hard and soft, with timings).
 * Every error is `{ error: { code, message, … } }` (models/errors.ts) with a matching status.
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getConnInfo } from '@hono/node-server/conninfo';
import type pg from 'pg';
import { z } from 'zod';
import { AppError, Forbidden, RateLimited } from '../../models/errors';
import {
  ApprovalUpload,
  ChangesetUpload,
  ProposalUpload,
  type ApprovalUploadResult,
  dependentRejection,
  type ChangesetOutcome,
  type CurrentRow,
  type ProposalUploadResult,
} from '../../models/sync';
import { SELF_SCOPED_ROLES } from '../../models/roles';
import { isTableName, TABLES } from '../../models/tables';
import { DeviceRegistry } from '../auth/devices';
import { setAccountPin } from '../auth/account-pins';
import { codeRequired, issueEnrolmentCode } from '../auth/enrolment-codes';
import { applyUploadedChangeset, hqPolicy, uploadContentHash } from '../write/apply';
import { recordProposalEvents } from '../write/proposals';
import { recordApprovals } from '../write/approvals';
import { badRequest, errorResponse, payloadTooLarge } from './errors';
import { MAX_TOOL_INPUT_DEPTH, measureJsonText } from '../../models/bounds';
import { proxyShape, UpstreamError } from './shape-proxy';
import { ShapeRegistry, type ShapeLimits } from './shape-registry';
import { UUID_RE } from '../pg/db';

/** Configuration of {@link createHqApp}. */
export interface HqAppOptions {
  /** Pool of the app role (NOSUPERUSER, NOBYPASSRLS): every request's queries run on it. */
  pool: pg.Pool;
  /** Base URL of the shape service (embedded, or Electric's), e.g. `http://127.0.0.1:3000`. */
  shapeUrl: string;
  /** The shape service's secret (Electric's `ELECTRIC_SECRET`), added by the proxy; never from clients. */
  shapeSecret?: string | null;
  /** Longest a proxied shape request (long-poll) may run, ms. @default 60000 */
  maxLongPollMs?: number;
  /** Largest request body accepted, bytes. @default 4 MiB */
  maxBodyBytes?: number;
  /** Replication slot `/readyz` requires to be active; null: any logical slot of this database. */
  slotName?: string | null;
  /** Device token lifetime, days. @default 90 */
  tokenTtlDays?: number;
  /** Enrolment attempts per client address per window. @default 20 per 5 minutes */
  enrolLimit?: { max: number; windowMs: number };
  /** Clock (ms), injectable for tests. */
  now?: () => number;
  /** Limits of live shapes per device and per org, and the idle time after which one is released (sync/http/shape-registry.ts). @default SHAPE_LIMITS */
  shapeLimits?: Partial<ShapeLimits>;
  /** How often idle shapes and those of revoked devices are released, ms (0: only when `sweepShapes` is called). @default 60000 */
  shapeSweepMs?: number;
  /** Operator log lines (a shape the shape service refused, once per definition). @default console.warn */
  log?: (line: string) => void;
}

/** What {@link createHqApp} returns. */
export interface HqApp {
  app: Hono;
  registry: DeviceRegistry;
  /** The live shape definitions the proxy admitted. */
  shapes: ShapeRegistry;
  /**
   * Release idle shapes and those only revoked/expired/deactivated devices followed, deleting each
   * at the shape service. @returns how many definitions were released
   */
  sweepShapes(): Promise<number>;
  /** Stop the sweep timer. */
  stop(): void;
}

const Enrol = z
  .object({
    email: z.string().min(3).max(200),
    pin: z.string().min(1).max(64),
    /** One-time HQ sign-in code (sync/auth/enrolment-codes.ts); checked with the PIN, so a malformed one is refused as a wrong one. */
    code: z.string().max(64).optional(),
    name: z.string().trim().min(1).max(100).optional(),
  })
  .strict();

const IssueCode = z.object({ user_id: z.string().uuid() }).strict();
const SetPin = z.object({ pin: z.string().regex(/^\d{4,8}$/, 'A PIN is 4 to 8 digits.') }).strict();

/** A fixed-window counter per key (client address). */
class WindowLimiter {
  private readonly hits = new Map<string, { start: number; n: number }>();
  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}
  /** Seconds to wait when `key` is over its limit at `now`, else 0 (and the hit is counted). */
  take(key: string, now: number): number {
    const h = this.hits.get(key);
    if (!h || now - h.start >= this.windowMs) {
      if (this.hits.size > 10_000) this.hits.clear(); // bounded memory under a flood of addresses
      this.hits.set(key, { start: now, n: 1 });
      return 0;
    }
    h.n++;
    return h.n > this.max ? Math.ceil((h.start + this.windowMs - now) / 1000) : 0;
  }
}

/** Nesting depth above which a request body is refused before it is parsed or hashed (models/bounds.ts). */
const MAX_BODY_DEPTH = MAX_TOOL_INPUT_DEPTH;

async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  // Depth first: a 20,000-level value would overflow the recursive hashing of an upload.
  const m = measureJsonText(text, Number.POSITIVE_INFINITY, MAX_BODY_DEPTH);
  if (!m.ok) throw badRequest(`The request body is nested deeper than ${MAX_BODY_DEPTH} levels; nothing was read. Send the documented shape.`);
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('The request body is not valid JSON. Send a JSON object with Content-Type: application/json.');
  }
}

function zodIssues(e: z.ZodError): { path: string; message: string }[] {
  return e.issues.slice(0, 20).map((i) => ({ path: i.path.join('.'), message: i.message }));
}

/**
 * Request-level checks of an upload: every table and column must exist, ids unique, the org the
 * token's. The user: an athlete's device uploads that athlete's changesets only; an org device
 * (enrolled by staff) uploads the changesets of whoever signed in on it, each applied as its user.
 */
function checkUpload(upload: ChangesetUpload, principal: { orgId: string; userId: string; role: string }): void {
  const selfScoped = SELF_SCOPED_ROLES.has(principal.role as never);
  const seen = new Set<string>();
  upload.changesets.forEach((cs, i) => {
    if (seen.has(cs.changeset_id)) throw badRequest(`changesets.${i}: changeset ${cs.changeset_id} appears twice in this upload.`);
    seen.add(cs.changeset_id);
    if (cs.org_id && cs.org_id !== principal.orgId)
      throw new Forbidden(`changesets.${i} (${cs.changeset_id}) belongs to another organisation than this device's; nothing was applied.`);
    if (cs.user_id && cs.user_id !== principal.userId && selfScoped)
      throw new Forbidden(
        `changesets.${i} (${cs.changeset_id}) was made by another user than the athlete this device belongs to; an athlete's device uploads that athlete's changes only. Nothing was applied.`,
      );
    cs.changes.forEach((ch, j) => {
      const at = `changesets.${i}.changes.${j}`;
      if (!isTableName(ch.table))
        throw badRequest(`${at}: unknown table "${ch.table}". Nothing was applied.`, [{ path: `${at}.table`, message: 'unknown table' }]);
      const cols = TABLES[ch.table].schema.shape as Record<string, unknown>;
      const fields = ch.op === 'delete' ? [] : [...Object.keys(ch.after), ...(ch.op === 'update' ? Object.keys(ch.before) : [])];
      for (const f of fields) {
        if (!(f in cols))
          throw badRequest(`${at}: ${ch.table} has no column "${f}". Nothing was applied.`, [{ path: `${at}.after.${f}`, message: 'unknown column' }]);
      }
    });
  });
}

/** Build the HQ app. The caller serves it (sync/hq.ts) and closes the pool. */
export function createHqApp(opts: HqAppOptions): HqApp {
  const now = opts.now ?? Date.now;
  const registry = new DeviceRegistry(opts.pool, { tokenTtlDays: opts.tokenTtlDays ?? 90, now });
  const shapes = new ShapeRegistry(opts.shapeLimits);
  const enrolLimiter = new WindowLimiter(opts.enrolLimit?.max ?? 20, opts.enrolLimit?.windowMs ?? 5 * 60_000);
  // Sign-in codes per issuing user: 30 an hour is a whole squad's worth; every code is a stored row.
  const codeLimiter = new WindowLimiter(30, 60 * 60_000);
  // PIN settings per setting user: each costs an scrypt hash; 30 an hour is a whole squad's resets.
  const pinLimiter = new WindowLimiter(30, 60 * 60_000);
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const app = new Hono();

  app.onError((e, c) => {
    if (e instanceof UpstreamError) return errorResponse(c, e, e.status);
    if (!(e instanceof AppError)) {
      const code = (e as { code?: string }).code;
      // Postgres unreachable or refusing connections: the client should retry later.
      if (code === 'ECONNREFUSED' || code === '57P01' || code === '57P03' || code === '53300' || /timeout|terminat/i.test((e as Error).message ?? '')) {
        return errorResponse(
          c,
          new AppError({ code: 'Internal', message: 'HQ cannot reach its database right now; nothing was applied. Retry shortly.' }),
          503,
        );
      }
      console.error('[hq] unexpected error:', e);
    }
    return errorResponse(c, e);
  });
  app.notFound((c) => errorResponse(c, new AppError({ code: 'NotFound', message: `${c.req.method} ${new URL(c.req.url).pathname} is not an HQ endpoint.` })));

  const limit = bodyLimit({
    maxSize: maxBody,
    onError: (c) =>
      errorResponse(
        c,
        payloadTooLarge(`The request body is larger than ${Math.round(maxBody / 1024)} KiB. Upload fewer changesets per request. Nothing was applied.`),
        413,
      ),
  });

  // --- Health
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const pgCheck = await checkPostgres(opts.pool);
    const slot = pgCheck.ok ? await checkSlot(opts.pool, opts.slotName ?? null) : { ok: false, detail: 'Postgres unreachable' };
    const ready = pgCheck.ok && slot.ok;
    return c.json({ status: ready ? 'ready' : 'not_ready', postgres: pgCheck, replication_slot: slot }, ready ? 200 : 503);
  });
  app.get('/health/deps', async (c) => {
    const [postgres, shape] = await Promise.all([checkPostgres(opts.pool), checkShapeService(opts.shapeUrl)]);
    const slot = postgres.ok ? await checkSlot(opts.pool, opts.slotName ?? null) : { ok: false, detail: 'Postgres unreachable' };
    return c.json({
      postgres: { ...postgres, hard: true },
      replication_slot: { ...slot, hard: true },
      shape_service: { ...shape, hard: false, url: redactUrl(opts.shapeUrl) },
    });
  });

  // --- Devices
  app.post(
    '/v1/devices',
    bodyLimit({ maxSize: 16 * 1024, onError: (c) => errorResponse(c, payloadTooLarge('The request body is too large.'), 413) }),
    async (c) => {
      const ip = clientAddress(c);
      const wait = enrolLimiter.take(ip, now());
      if (wait > 0) throw new RateLimited('Too many sign-in attempts from this address. Wait, then try again.', wait);
      const parsed = Enrol.safeParse(await readJson(c));
      if (!parsed.success) throw badRequest('Send {"email": "…", "pin": "…", "code": "XXXX-XXXX-XXXX", "name": "device name"}.', zodIssues(parsed.error));
      if (!parsed.data.code?.trim()) throw codeRequired();
      const issued = await registry.issue(parsed.data.email, parsed.data.pin, parsed.data.code, parsed.data.name ?? 'Unnamed device');
      return c.json(issued, 201);
    },
  );
  app.post(
    '/v1/enrolment-codes',
    bodyLimit({ maxSize: 4 * 1024, onError: (c) => errorResponse(c, payloadTooLarge('The request body is too large.'), 413) }),
    async (c) => {
      const p = await registry.authenticate(c.req.header('authorization'));
      const wait = codeLimiter.take(p.userId, now());
      if (wait > 0) throw new RateLimited('Too many sign-in codes issued from this account in the last hour. Wait, then try again.', wait);
      const parsed = IssueCode.safeParse(await readJson(c));
      if (!parsed.success) throw badRequest('Send {"user_id": "<the account\'s id>"}.', zodIssues(parsed.error));
      return c.json(await issueEnrolmentCode(opts.pool, p, parsed.data.user_id, now()), 201);
    },
  );
  app.post(
    '/v1/users/:id/pin',
    bodyLimit({ maxSize: 4 * 1024, onError: (c) => errorResponse(c, payloadTooLarge('The request body is too large.'), 413) }),
    async (c) => {
      const p = await registry.authenticate(c.req.header('authorization'));
      const wait = pinLimiter.take(p.userId, now());
      if (wait > 0) throw new RateLimited('Too many PINs set from this account in the last hour. Wait, then try again.', wait);
      const id = c.req.param('id');
      if (!UUID_RE.test(id)) throw badRequest('The account id must be a UUID.');
      const parsed = SetPin.safeParse(await readJson(c));
      if (!parsed.success) throw badRequest('Send {"pin": "4 to 8 digits"}.', zodIssues(parsed.error));
      return c.json(await setAccountPin(opts.pool, p, id, parsed.data.pin, now()));
    },
  );
  app.delete('/v1/devices/:id', async (c) => {
    const p = await registry.authenticate(c.req.header('authorization'));
    const id = c.req.param('id');
    if (!UUID_RE.test(id)) throw badRequest('The device id must be a UUID.');
    return c.json(await registry.revoke(p, id));
  });

  // --- Write path
  app.post('/v1/changesets', limit, async (c) => {
    const p = await registry.authenticate(c.req.header('authorization'));
    const parsed = ChangesetUpload.safeParse(await readJson(c));
    if (!parsed.success)
      throw badRequest(
        'The upload is not a valid changeset batch: {"changesets": [{"changeset_id", "verb", "changes": [...]}, …]}. Nothing was applied.',
        zodIssues(parsed.error),
      );
    checkUpload(parsed.data, p);
    const results: ChangesetOutcome[] = [];
    // A later changeset of the batch that changes a row an earlier rejected one changed was made on
    // top of it (its expected version counts the rejected change): it is rejected unapplied, or it
    // would overwrite whatever HQ holds at that version (issue 12 review B1). The device does the
    // same for what it has not sent yet (main/data/sync.ts `recordUploadOutcome`).
    const blocked = new Map<string, { changesetId: string; current: CurrentRow | undefined }>();
    for (const cs of parsed.data.changesets) {
      const on = cs.changes.map((ch) => blocked.get(`${ch.table}:${ch.id}`)).find((b) => b !== undefined);
      const out: ChangesetOutcome = on
        ? {
            changeset_id: cs.changeset_id,
            status: 'rejected',
            reason: 'stale',
            message: dependentRejection(on.changesetId),
            current: cs.changes.map((ch) => blocked.get(`${ch.table}:${ch.id}`)?.current).filter((r): r is CurrentRow => r !== undefined),
            replayed: false,
          }
        : await applyUploadedChangeset(opts.pool, p, cs, { now: () => new Date(now()) });
      if (out.status === 'rejected')
        for (const ch of cs.changes)
          blocked.set(`${ch.table}:${ch.id}`, {
            changesetId: on?.changesetId ?? cs.changeset_id,
            current: out.current?.find((r) => r.table === ch.table && r.id === ch.id) ?? blocked.get(`${ch.table}:${ch.id}`)?.current,
          });
      results.push(out);
    }
    return c.json({ results });
  });

  // --- Owner approvals and sign-off attestations (recorded by the user's own device token)
  app.post(
    '/v1/approvals',
    bodyLimit({ maxSize: 64 * 1024, onError: (c) => errorResponse(c, payloadTooLarge('The request body is too large.'), 413) }),
    async (c) => {
      const p = await registry.authenticate(c.req.header('authorization'));
      const parsed = ApprovalUpload.safeParse(await readJson(c));
      if (!parsed.success)
        throw badRequest(
          'The request is not a valid approval batch: {"approvals": [{"changeset_id", "content_hash", "approved_at"}, …]}. Nothing was recorded.',
          zodIssues(parsed.error),
        );
      const body: ApprovalUploadResult = { results: await recordApprovals(opts.pool, p, parsed.data.approvals, new Date(now())) };
      return c.json(body);
    },
  );

  // --- Changes waiting for an owner, across devices (sync/write/proposals.ts)
  app.post('/v1/proposals', limit, async (c) => {
    const p = await registry.authenticate(c.req.header('authorization'));
    if (SELF_SCOPED_ROLES.has(p.role as never))
      throw new Forbidden("An athlete's device does not share proposals: athlete accounts propose no changes for an owner. Nothing was recorded.");
    const parsed = ProposalUpload.safeParse(await readJson(c));
    if (!parsed.success)
      throw badRequest(
        'The request is not a valid proposal batch: {"events": [{"op": "propose" | "decline", "changeset_id", …}, …]}. Nothing was recorded.',
        zodIssues(parsed.error),
      );
    const body: ProposalUploadResult = {
      results: await recordProposalEvents(opts.pool, p, parsed.data.events, new Date(now()), {
        contentHash: (cs) => uploadContentHash(cs, 1),
        policy: hqPolicy,
      }),
    };
    return c.json(body);
  });

  // --- Read path
  app.get('/v1/shape', async (c) => {
    const p = await registry.authenticate(c.req.header('authorization'));
    return proxyShape(c, p, {
      shapeUrl: opts.shapeUrl,
      secret: opts.shapeSecret ?? null,
      maxLifetimeMs: opts.maxLongPollMs ?? 60_000,
      shapes,
      now: now(),
      log: opts.log ?? ((l) => console.warn(l)),
    });
  });

  let sweeping: Promise<number> | null = null;
  const sweepShapes = (): Promise<number> => {
    sweeping ??= (async () => {
      const evicted = await shapes.sweep(now(), (orgId, ids) => registry.inactiveDevices(orgId, ids));
      for (const def of evicted) {
        const q = new URLSearchParams(def);
        if (opts.shapeSecret) q.set('secret', opts.shapeSecret);
        // 202 deleted, 404 already gone (dropped by the service itself): either way released.
        await fetch(`${opts.shapeUrl.replace(/\/+$/, '')}/v1/shape?${q.toString()}`, { method: 'DELETE', signal: AbortSignal.timeout(10_000) })
          .then((r) => r.arrayBuffer())
          .catch(() => undefined);
      }
      return evicted.length;
    })().finally(() => {
      sweeping = null;
    });
    return sweeping;
  };
  const sweepMs = opts.shapeSweepMs ?? 60_000;
  const timer = sweepMs > 0 ? setInterval(() => void sweepShapes().catch((e: Error) => console.error(`[hq] shape sweep failed: ${e.message}`)), sweepMs) : null;
  timer?.unref();

  return { app, registry, shapes, sweepShapes, stop: () => timer && clearInterval(timer) };
}

function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function redactUrl(u: string): string {
  try {
    const url = new URL(u);
    url.username = '';
    url.password = '';
    url.search = '';
    return url.toString();
  } catch {
    return '(invalid URL)';
  }
}

async function timed<T>(fn: () => Promise<T>, timeoutMs: number): Promise<{ ok: boolean; ms: number; value?: T; detail?: string }> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const value = await Promise.race([
      fn(),
      new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
    ]);
    return { ok: true, ms: Math.round(performance.now() - t0), value };
  } catch (e) {
    return { ok: false, ms: Math.round(performance.now() - t0), detail: (e as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

async function checkPostgres(pool: pg.Pool): Promise<{ ok: boolean; ms: number; detail?: string }> {
  const r = await timed(() => pool.query('SELECT 1'), 2000);
  return r.ok ? { ok: true, ms: r.ms } : { ok: false, ms: r.ms, detail: r.detail ?? 'unreachable' };
}

async function checkSlot(pool: pg.Pool, slotName: string | null): Promise<{ ok: boolean; detail: string; slot?: string }> {
  const r = await timed(
    () =>
      pool.query<{ slot_name: string; active: boolean }>(
        `SELECT slot_name, active FROM pg_replication_slots WHERE database = current_database() AND slot_type = 'logical' AND ($1::text IS NULL OR slot_name = $1) ORDER BY active DESC, slot_name`,
        [slotName],
      ),
    2000,
  );
  if (!r.ok) return { ok: false, detail: r.detail ?? 'query failed' };
  const rows = r.value!.rows;
  const active = rows.find((s) => s.active);
  if (active) return { ok: true, detail: 'active', slot: active.slot_name };
  if (rows.length) return { ok: false, detail: 'the replication slot exists but no shape service is streaming from it', slot: rows[0]!.slot_name };
  return {
    ok: false,
    detail: slotName ? `replication slot ${slotName} does not exist` : 'no logical replication slot on this database (is the shape service running?)',
  };
}

async function checkShapeService(shapeUrl: string): Promise<{ ok: boolean; ms: number; detail?: string }> {
  const r = await timed(async () => {
    const res = await fetch(`${shapeUrl.replace(/\/+$/, '')}/v1/health`, { signal: AbortSignal.timeout(2000) });
    const body = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return body;
  }, 2500);
  return r.ok ? { ok: true, ms: r.ms } : { ok: false, ms: r.ms, detail: r.detail ?? 'unreachable' };
}
