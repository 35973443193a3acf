/**
 * GET /v1/shape on the HQ port: the auth proxy in front of the shape service (the embedded one,
 * or Electric at `ELECTRIC_URL`). The device says which table and how far it has read; the proxy
 * decides what it may see. It forwards only protocol parameters, and sets itself:
 * - `table` (one the user's role may read; athlete accounts only their self-scoped tables);
 * - the tenant `where`: `org_id = <token's org>` (the org row: `id = …`), and for athlete users
 *   `<athlete column> = <linked athlete>`, AND-ed with the client's own `where` (which is checked
 *   to be one parenthesised expression, so it can narrow and never widen);
 * - `columns` (the client may pick columns of the table; nothing else);
 * - the shape service's `secret`.
 * Each distinct definition a device asks for counts against its, its account's and its club's limit of live
 * shapes (sync/http/shape-registry.ts): past it, 429 `shape_limit`, nothing created.
 * A shape the shape service will not hold (more than its whole memory budget: 503 with
 * `kind: "shape_too_large"`, sync/shape ShapeTooLargeError) is answered 503 `Unavailable` with
 * `kind: "shape_too_large"` and the service's words, and logged once per definition; the device
 * reports it as a refusal (HQ answered), not as HQ being unreachable.
 * The shape service reads as the replication role, which row-level security does not narrow:
 * this `where` is what keeps tenants apart on the read path.
 *
 * Who can sign in on a device: `app_user` rows travel *with* their PIN hashes (scrypt, never a
 * PIN; the device's format, sync/auth/pin.ts), so a device signs users in offline. A device
 * enrolled by staff (any role but athlete) is an org device: it holds every account of its org,
 * so a shared clinic laptop signs anyone in the club in, and role changes and deactivations
 * arrive like any other row. A device enrolled by an athlete holds that athlete's account only.
 */
import type { Context } from 'hono';
import { AppError, Forbidden } from '../../models/errors';
import { hasPermission, mayReadReportKind, SELF_SCOPED_ROLES, type Permission } from '../../models/roles';
import { Report } from '../../models/records';
import { isTableName, TABLE_NAMES, TABLES } from '../../models/tables';
import { NO_ATHLETE, UUID_RE } from '../pg/db';
import { SHAPE_TOO_LARGE } from '../shape/service';
import type { Principal } from '../write/principal';
import { badRequest } from './errors';
import type { ShapeRegistry } from './shape-registry';
import { whereProblem } from './where';

/** Protocol parameters passed through as the client sent them. */
const PASS_THROUGH = new Set(['offset', 'handle', 'live', 'cursor', 'replica', 'log', 'expired_handle', 'live_sse', 'experimental_live_sse']);

/** Columns never sent to a device, per table (none today: see "Who can sign in on a device" above). */
const HIDDEN_COLUMNS: Record<string, readonly string[]> = {};

/** Tables outside models/tables.ts that devices sync, with their read permission (null: every role). */
const EXTRA_TABLES: Record<string, Permission | null> = { organization: null, activity: 'activity.read', hq_proposal: null };

const ACTIVITY_COLUMNS = [
  'id',
  'org_id',
  'created_at',
  'actor_user_id',
  'actor_name',
  'via_assistant',
  'run_id',
  'record_table',
  'record_id',
  'summary',
  'changeset_id',
];
const ORGANIZATION_COLUMNS = ['id', 'created_at', 'updated_at', 'version', 'deleted_at', 'name', 'plan', 'budget_cap_usd', 'assistant_model'];

/** Changes waiting for an owner (HQ 0010), as the device's replica table holds them (device migration 0015). */
const PROPOSAL_COLUMNS = [
  'id',
  'org_id',
  'user_id',
  'device_id',
  'device_name',
  'source',
  'tool_name',
  'title',
  'verb',
  'summary',
  'changes_json',
  'tables',
  'policy_json',
  'content_hash',
  'status',
  'decided_by',
  'decided_at',
  'decided_device_name',
  'outcome_json',
  'created_at',
  'updated_at',
  'version',
];

function columnsOf(table: string): string[] {
  if (table === 'activity') return ACTIVITY_COLUMNS;
  if (table === 'hq_proposal') return PROPOSAL_COLUMNS;
  if (table === 'organization') return ORGANIZATION_COLUMNS;
  return Object.keys(TABLES[table as keyof typeof TABLES].schema.shape);
}

const lit = (uuid: string): string => {
  if (!UUID_RE.test(uuid)) throw new Error('not a uuid');
  return `'${uuid}'`;
};

/** The tenant `where` of `table` for `p` (throws Forbidden when the role may not read it). */
export function tenantWhere(p: Principal, table: string): string {
  const selfScoped = SELF_SCOPED_ROLES.has(p.role as never);
  const athlete = p.linkedAthleteId ?? NO_ATHLETE;
  if (table === 'organization') return `id = ${lit(p.orgId)}`;
  if (table === 'app_user') {
    // An org device (enrolled by staff) holds the club's accounts with their PIN hashes, so anyone
    // in the club signs in on it offline; an athlete's device holds that athlete's account only.
    return selfScoped ? `org_id = ${lit(p.orgId)} AND id = ${lit(p.userId)}` : `org_id = ${lit(p.orgId)}`;
  }
  if (table === 'hq_proposal') {
    // Every staff device of the org: an owner may sign in on any of them to approve, and the
    // proposer's device learns the outcome. Never an athlete's device.
    if (selfScoped) throw new Forbidden('Athlete accounts do not sync proposals.');
    // Only proposals whose every table the role may read (a device holds no rows of the others).
    const unreadable = TABLE_NAMES.filter((t) => !hasPermission(p.role, TABLES[t].read)).map((t) => ` AND tables NOT LIKE '%,${t},%'`);
    return `org_id = ${lit(p.orgId)}${unreadable.join('')}`;
  }
  if (table === 'activity') {
    if (!hasPermission(p.role, 'activity.read')) throw new Forbidden(`Your role (${p.role}) cannot read the activity log.`);
    // Summaries name clinical facts ("Record left knee injury for …"): only rows of tables this role
    // may read, as the device's own activity.list shows them (main/services/admin.ts).
    const readable = TABLE_NAMES.filter((t) => hasPermission(p.role, TABLES[t].read)).map((t) => `'${t}'`);
    if (readable.length === 0) throw new Forbidden(`Your role (${p.role}) reads no records the activity log describes.`);
    return `org_id = ${lit(p.orgId)} AND record_table IN (${readable.join(', ')})`;
  }
  if (!isTableName(table)) throw new Forbidden(`"${table}" is not a table devices sync.`);
  const def = TABLES[table];
  if (!hasPermission(p.role, def.read)) throw new Forbidden(`Your role (${p.role}) lacks ${def.read}, needed to read ${table}.`);
  // Reports by kind (models/roles.ts mayReadReportKind): an athlete summary carries injury and RTP
  // detail that report.generate alone does not open (issue 13 re-review: analysts' devices got them).
  const kinds =
    table === 'report'
      ? ` AND kind IN (${Report.shape.kind.options
          .filter((k) => mayReadReportKind(p.role, k))
          .map((k) => `'${k}'`)
          .join(', ')})`
      : '';
  if (kinds === ' AND kind IN ()') throw new Forbidden(`Your role (${p.role}) reads no kind of report.`);
  if (selfScoped) {
    if (!def.athleteColumn) throw new Forbidden(`Athlete accounts do not sync ${table}.`);
    return `org_id = ${lit(p.orgId)} AND ${def.athleteColumn} = ${lit(athlete)}${kinds}`;
  }
  return `org_id = ${lit(p.orgId)}${kinds}`;
}

/** Build the upstream query for a client's GET /v1/shape (throws Validation / Forbidden). */
export function upstreamQuery(p: Principal, client: URLSearchParams, secret: string | null): URLSearchParams {
  const table = client.get('table');
  if (!table) throw badRequest('The table parameter is required (e.g. table=athlete).');
  if (!isTableName(table) && !(table in EXTRA_TABLES)) throw badRequest(`"${table}" is not a table devices sync.`);
  const out = new URLSearchParams();
  out.set('table', table);
  const tenant = tenantWhere(p, table);
  const where = client.get('where');
  if (where !== null && where.trim() !== '') {
    const problem = whereProblem(where);
    if (problem) throw badRequest(`The where parameter was refused: ${problem}. Send one SQL condition on the table's columns, with values in params[n].`);
    out.set('where', `(${tenant}) AND (${where})`);
  } else out.set('where', tenant);

  const allowed = columnsOf(table).filter((c) => !(HIDDEN_COLUMNS[table] ?? []).includes(c));
  const asked = client.get('columns');
  if (asked !== null) {
    const cols = asked.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
    const bad = cols.filter((c) => !allowed.includes(c));
    if (bad.length) throw badRequest(`Unknown or unavailable column(s) of ${table}: ${bad.join(', ')}.`);
    if (!cols.includes('id')) throw badRequest('columns must include the primary key (id).');
    out.set('columns', cols.join(','));
  } else if (HIDDEN_COLUMNS[table]) out.set('columns', allowed.join(','));

  for (const [k, v] of client) {
    if (PASS_THROUGH.has(k)) out.set(k, v);
    else if (/^params\[\d+\]$/.test(k)) out.set(k, v);
  }
  if (secret) out.set('secret', secret);
  return out;
}

/** The shape service failed or took too long: 502 / 504 with the usual error body. */
export class UpstreamError extends AppError {
  constructor(
    readonly status: 502 | 503 | 504,
    message: string,
  ) {
    super({ code: 'Internal', message });
  }
}

/** Response headers copied from the shape service (hop-by-hop and encoding headers are not). */
const DROP_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/** The shape service's words when `body` (a 503's text) is its refusal of a shape too large for its memory budget, else null. */
function tooLargeMessage(body: string): string | null {
  try {
    const j = JSON.parse(body) as { kind?: unknown; message?: unknown } | null;
    return j?.kind === SHAPE_TOO_LARGE && typeof j.message === 'string' ? j.message : null;
  } catch {
    return null;
  }
}

/**
 * Forward one shape request. The upstream request is aborted (and the client answered 504, which
 * ShapeStream retries) once it has run for `maxLifetimeMs`, so no long-poll is held for ever.
 * @throws AppError Unavailable kind `shape_too_large` (503) when the shape service refuses the
 *   shape as larger than its memory budget (logged through `log` once per definition);
 *   RateLimited `shape_limit` (429); Validation / Forbidden for the request itself
 */
export async function proxyShape(
  c: Context,
  p: Principal,
  opts: { shapeUrl: string; secret: string | null; maxLifetimeMs: number; shapes?: ShapeRegistry; now?: number; log?: (line: string) => void },
): Promise<Response> {
  const q = upstreamQuery(p, new URL(c.req.url).searchParams, opts.secret);
  // Past the device's or the club's limit of distinct shapes: 429 shape_limit, nothing created.
  const admitted = opts.shapes ? opts.shapes.admit(p, q, opts.now ?? Date.now()) : false;
  const forget = (): void => {
    if (admitted) opts.shapes?.forget(p.deviceId, q);
  };
  const url = `${opts.shapeUrl.replace(/\/+$/, '')}/v1/shape?${q.toString()}`;
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(new Error('lifetime')), opts.maxLifetimeMs);
  const onClientGone = (): void => ctrl.abort(new Error('client gone'));
  c.req.raw.signal?.addEventListener('abort', onClientGone);
  const headers: Record<string, string> = {};
  const inm = c.req.header('if-none-match');
  if (inm) headers['if-none-match'] = inm;
  let upstream: Response;
  try {
    upstream = await fetch(url, { headers, signal: ctrl.signal });
  } catch (e) {
    clearTimeout(timer);
    // Unreachable: nothing was created, so it does not count. Aborted (the client went away, or the
    // lifetime ran out): the shape service may still finish creating the shape, so it stays counted
    // against this device until the idle or revocation sweep deletes it (uncounting it here let a
    // client that cut its requests short create shapes past every limit).
    if (!ctrl.signal.aborted) forget();
    c.req.raw.signal?.removeEventListener('abort', onClientGone);
    if (ctrl.signal.aborted && String((ctrl.signal.reason as Error | undefined)?.message) === 'lifetime') {
      throw new UpstreamError(504, `The shape request ran past its ${Math.round(opts.maxLifetimeMs / 1000)} s lifetime; request it again.`);
    }
    throw new UpstreamError(502, 'The shape service is not reachable from HQ right now; try again shortly.');
  }
  // Refused (bad where, unknown column): no shape exists for it, so it does not count.
  if (upstream.status >= 400 && upstream.status !== 409) forget();
  let text: string | null = null;
  if (upstream.status === 503) {
    // Small JSON bodies: read to tell a shape too large for the service's budget from a service that is down.
    text = await upstream.text().catch(() => '');
    clearTimeout(timer);
    c.req.raw.signal?.removeEventListener('abort', onClientGone);
    const words = tooLargeMessage(text);
    if (words !== null) {
      if (opts.shapes?.firstRefusal(q) ?? true)
        opts.log?.(
          `[hq] the shape service refused a shape for org ${p.orgId} (table ${JSON.stringify(q.get('table'))}, where ${JSON.stringify(q.get('where'))}): ${words} Devices asking for it are told so (503 shape_too_large); this is logged once per shape definition.`,
        );
      throw new AppError({ code: 'Unavailable', kind: SHAPE_TOO_LARGE, message: words });
    }
  }
  const out = new Headers();
  upstream.headers.forEach((v, k) => {
    if (!DROP_HEADERS.has(k.toLowerCase())) out.set(k, v);
  });
  // Each response is one tenant's: a shared cache must never serve it to another device.
  const cc = out.get('cache-control');
  if (cc) out.set('cache-control', cc.replace(/\bpublic\b/, 'private'));
  out.append('vary', 'authorization');
  const body =
    text !== null
      ? text
      : upstream.body
        ? upstream.body.pipeThrough(
            new TransformStream({
              flush() {
                clearTimeout(timer);
                c.req.raw.signal?.removeEventListener('abort', onClientGone);
              },
            }),
          )
        : null;
  if (!body) clearTimeout(timer);
  return new Response(body, { status: upstream.status, headers: out });
}
