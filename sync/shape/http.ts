/**
 * Electric 1.x HTTP Shape API over a `ShapeService` (Hono app; see ../../shared design ref
 * electric-api.yaml): `GET /v1/shape`, `DELETE /v1/shape`, `GET /v1/health`.
 *
 * `live=true&live_sse=true` streams Server-Sent Events (keep-alive comment every 21 s, closed after
 * `sseTimeoutMs`). Not implemented (refused with 400 and a message): `log=changes_only`,
 * `subset__*` snapshots and `POST /v1/shape`.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { formatOffset, parseOffset, type Offset } from './log';
import { TableError } from './schema';
import { isHandle, SHAPE_TOO_LARGE, ShapeTooLargeError, type Shape, type ShapeRequest, type ShapeService } from './service';
import { WhereError } from './where';

/** Options of `createShapeApp`. */
export interface ShapeAppOptions {
  /** When set, every shape request must carry it as `secret` (or the deprecated `api_secret`). */
  secret?: string | undefined;
  /** Longest an SSE response is kept open, ms (default 60 000, Electric's `sse_timeout`). */
  sseTimeoutMs?: number;
}

const EXPOSE = 'electric-cursor,electric-handle,electric-offset,electric-schema,electric-up-to-date,electric-snapshot,etag';
/** Electric's cursor epoch (2024-10-09T00:00:00Z) and interval (20 s). */
const CURSOR_EPOCH_MS = Date.UTC(2024, 9, 9);
const CURSOR_INTERVAL_S = 20;

function secretOk(given: string | undefined, secret: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

/** Electric's live cursor: the current 20 s interval; never equal to the one the client sent. */
function nextCursor(clientCursor: string | undefined): string {
  const now = Math.floor((Date.now() - CURSOR_EPOCH_MS) / 1000);
  let c = Math.ceil(now / CURSOR_INTERVAL_S) * CURSOR_INTERVAL_S;
  if (clientCursor !== undefined && String(c) === clientCursor) c += 1 + Math.floor(Math.random() * 3600);
  return String(c);
}

function badRequest(c: Context, field: string, message: string): Response {
  c.header('cache-control', 'no-store');
  return c.json({ message: 'Invalid request', errors: { [field]: [message] } }, 400);
}

function collectParams(url: URL): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of url.searchParams) {
    const m = /^params\[(.+)\]$/.exec(k);
    if (m) params[m[1]!] = v;
  }
  return params;
}

/**
 * The `up-to-date` control message. Its `global_last_seen_lsn` L is chosen so that the offset an SSE
 * client derives from it (`L_0`) is past every entry sent (`tx + 1`) and before any later change
 * (commits start at or after the processed position).
 */
function upToDate_(service: ShapeService, last: Offset): string {
  const processed = BigInt(service.stats().processedLsn);
  const l = [processed - 1n, last.tx + 1n].reduce((a, b) => (a > b ? a : b));
  return JSON.stringify({ headers: { control: 'up-to-date', global_last_seen_lsn: l.toString() } });
}

/** Most bytes of JSON one SSE read takes from a log (the stream holds at most one such read queued). */
const SSE_READ_BYTES = 256 * 1024;

function sseResponse(c: Context, service: ShapeService, shape: Shape, after: Offset | null, offsetParam: string, maxMs: number): Response {
  const enc = new TextEncoder();
  const signal = c.req.raw.signal;
  const deadline = Date.now() + maxMs;
  let position = after;
  let closed = false;
  const close = (controller: ReadableStreamDefaultController<Uint8Array>): void => {
    // A deleted shape just ends the stream: the client's next request gets the 409.
    if (closed) return;
    closed = true;
    controller.close();
  };
  // Pull-based, one read queued at most: the log is read only as fast as the client takes it (the
  // server writes with backpressure), so a client that stops reading holds ~SSE_READ_BYTES here,
  // not the whole log (issue 12 re-review: 20 unread SSE requests took a server to 1.3 GB).
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Each pull enqueues something or closes: a pull that returns with nothing queued is not called again.
        for (;;) {
          if (closed) return;
          if (signal.aborted || shape.deleted || service.isStopped || Date.now() >= deadline) return close(controller);
          const chunk = service.readLog(shape, position, SSE_READ_BYTES);
          if (shape.deleted) return close(controller);
          if (chunk.messages.length > 0) {
            let text = '';
            for (const m of chunk.messages) text += `data: ${m}\n\n`;
            position = chunk.last;
            if (chunk.complete) text += `data: ${upToDate_(service, position!)}\n\n`;
            controller.enqueue(enc.encode(text));
            return;
          }
          const before = shape.log.length;
          await shape.waitForChange(Math.min(21_000, Math.max(1, deadline - Date.now())), signal);
          if (closed) return;
          if (shape.log.length === before && !shape.deleted && !signal.aborted && Date.now() < deadline) {
            controller.enqueue(enc.encode(': keep-alive\n\n'));
            return;
          }
        }
      },
      cancel() {
        closed = true;
      },
    },
    { highWaterMark: 1 },
  );
  const start = position ?? shape.end;
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'electric-handle': shape.handle,
      'electric-offset': after ? formatOffset(start) : offsetParam,
      'electric-cursor': nextCursor(new URL(c.req.url).searchParams.get('cursor') ?? undefined),
      'electric-schema': shape.schemaHeader,
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSE,
    },
  });
}

/**
 * The Hono app serving the shape API. Mount it in another Hono app with `app.route('/', …)`, or
 * serve it alone (`startShapeServer`).
 */
export function createShapeApp(service: ShapeService, options: ShapeAppOptions = {}): Hono {
  const app = new Hono();
  app.use('/v1/*', async (c, next) => {
    c.header('access-control-allow-origin', '*');
    c.header('access-control-expose-headers', EXPOSE);
    await next();
  });
  app.options('/v1/shape', (c) => {
    c.header('access-control-allow-methods', 'GET, DELETE, OPTIONS');
    c.header('access-control-allow-headers', '*');
    return c.body(null, 204);
  });

  app.get('/v1/health', (c) => {
    c.header('cache-control', 'no-store');
    return service.healthy ? c.json({ status: 'active' }, 200) : c.json({ status: 'waiting', error: service.lastError?.message ?? null }, 503);
  });

  const authorised = (c: Context, url: URL): boolean => {
    if (!options.secret) return true;
    return secretOk(url.searchParams.get('secret') ?? url.searchParams.get('api_secret') ?? undefined, options.secret);
  };

  const readRequest = (url: URL): ShapeRequest => ({
    table: url.searchParams.get('table') ?? '',
    where: url.searchParams.get('where') ?? undefined,
    params: collectParams(url),
    columns: url.searchParams.get('columns') ?? undefined,
    replica: url.searchParams.get('replica') ?? undefined,
  });

  const mustRefetch = async (c: Context, req: ShapeRequest): Promise<Response> => {
    const fresh = await service.getOrCreate(req);
    fresh.touch();
    c.header('electric-handle', fresh.handle);
    c.header('cache-control', 'public, max-age=60, must-revalidate');
    return c.json([{ headers: { control: 'must-refetch' } }], 409);
  };

  app.get('/v1/shape', async (c) => {
    const url = new URL(c.req.url);
    const q = url.searchParams;
    if (!authorised(c, url)) {
      c.header('cache-control', 'no-store');
      return c.json({ message: 'Unauthorized: missing or wrong secret' }, 401);
    }
    if (!q.get('table')) return badRequest(c, 'table', 'table is required');
    const offsetParam = q.get('offset');
    if (offsetParam === null) return badRequest(c, 'offset', 'offset is required (-1 for a new sync, now, or the last electric-offset you received)');
    const reqOffset = parseOffset(offsetParam);
    if (!reqOffset) return badRequest(c, 'offset', `has invalid format: ${JSON.stringify(offsetParam)}`);
    const handleParam = q.get('handle') ?? undefined;
    if (reqOffset.kind === 'at' && !handleParam) return badRequest(c, 'handle', "can't be blank when offset != -1");
    const live = q.get('live') === 'true';
    const sse = q.get('live_sse') === 'true' || q.get('experimental_live_sse') === 'true';
    if (sse && !live) return badRequest(c, 'live_sse', 'live_sse needs live=true');
    const logMode = q.get('log');
    if (logMode !== null && logMode !== 'full') return badRequest(c, 'log', 'only log=full is supported');
    for (const k of q.keys()) if (k.startsWith('subset__')) return badRequest(c, k, 'subset snapshots are not supported by this service');
    const req = readRequest(url);

    let shape: Shape;
    try {
      if (reqOffset.kind === 'start' || !handleParam) {
        shape = await service.getOrCreate(req);
      } else {
        const defKey = await service.definitionKey(req);
        const byHandle = isHandle(handleParam) ? service.getByHandle(handleParam) : undefined;
        if (!byHandle || byHandle.deleted) return await mustRefetch(c, req);
        if (byHandle.defKey !== defKey) return badRequest(c, 'handle', 'The specified shape definition and handle do not match');
        shape = byHandle;
        await shape.ready;
      }
    } catch (e) {
      if (e instanceof TableError) return badRequest(c, /^(\w+):/.exec(e.message)?.[1] ?? 'table', e.message.replace(/^\w+: /, ''));
      if (e instanceof WhereError) return badRequest(c, 'where', e.message);
      const pgCode = (e as { code?: string }).code;
      if (pgCode === '42501') {
        c.header('cache-control', 'no-store');
        return c.json({ message: `The shape service's database role may not read this table: ${(e as Error).message}` }, 403);
      }
      // A where clause that parses but Postgres rejects for its types (e.g. text compared with an integer column).
      if (pgCode && /^(22|42)/.test(pgCode)) return badRequest(c, 'where', (e as Error).message);
      throw e;
    }

    shape.touch();
    const schemaHeader = shape.schemaHeader;
    let after: Offset | null;
    if (reqOffset.kind === 'start') after = null;
    else if (reqOffset.kind === 'now') after = shape.end;
    else after = reqOffset.offset;

    if (sse) return sseResponse(c, service, shape, after, offsetParam, options.sseTimeoutMs ?? 60_000);

    let chunk = service.readLog(shape, after);
    if (live && chunk.messages.length === 0 && !shape.deleted) {
      await shape.waitForChange(service.longPollTimeoutMs, c.req.raw.signal);
      if (shape.deleted) return mustRefetch(c, req);
      chunk = service.readLog(shape, after);
    }
    if (shape.deleted) return mustRefetch(c, req);

    const responseOffset = chunk.last ?? after ?? shape.end;
    const upToDate = chunk.complete;
    const reqOffsetText = reqOffset.kind === 'at' ? formatOffset(reqOffset.offset) : offsetParam;
    const etag = `"${shape.handle}:${reqOffsetText}:${formatOffset(responseOffset)}"`;
    c.header('electric-handle', shape.handle);
    c.header('electric-offset', formatOffset(responseOffset));
    c.header('etag', etag);
    if (live) {
      c.header('electric-cursor', nextCursor(q.get('cursor') ?? undefined));
      c.header('cache-control', 'public, max-age=5, stale-while-revalidate=5');
    } else {
      c.header('electric-schema', schemaHeader);
      c.header(
        'cache-control',
        reqOffset.kind === 'start' ? 'public, max-age=60, stale-while-revalidate=300' : 'public, max-age=604800, s-maxage=3600, stale-while-revalidate=2629746',
      );
    }
    if (upToDate) c.header('electric-up-to-date', '');
    if (!live && c.req.header('if-none-match') === etag) return c.body(null, 304);

    let body = '[' + chunk.messages.join(',');
    if (upToDate) {
      const control = upToDate_(service, responseOffset);
      body += (chunk.messages.length ? ',' : '') + control;
    }
    body += ']';
    c.header('content-type', 'application/json; charset=utf-8');
    return c.body(body, 200);
  });

  app.delete('/v1/shape', async (c) => {
    const url = new URL(c.req.url);
    if (!authorised(c, url)) return c.json({ message: 'Unauthorized: missing or wrong secret' }, 401);
    if (!url.searchParams.get('table')) return badRequest(c, 'table', 'table is required');
    const handle = url.searchParams.get('handle');
    try {
      const defKey = await service.definitionKey(readRequest(url));
      if (handle) {
        const shape = isHandle(handle) ? service.getByHandle(handle) : undefined;
        if (!shape) return c.json({ message: `No shape with handle ${handle}` }, 404);
        if (shape.defKey !== defKey) return badRequest(c, 'handle', 'The specified shape definition and handle do not match');
        await service.deleteShape(shape);
      } else {
        const shape = await service.findByDefinition(defKey);
        if (!shape) return c.json({ message: 'No shape for this definition' }, 404);
        await service.deleteShape(shape);
      }
    } catch (e) {
      if (e instanceof TableError) return badRequest(c, 'table', e.message);
      if (e instanceof WhereError) return badRequest(c, 'where', e.message);
      throw e;
    }
    return c.body(null, 202);
  });

  app.onError((err, c) => {
    c.header('cache-control', 'no-store');
    // `kind` tells HQ's proxy this 503 is a refusal of this shape, not a service that is down.
    if (err instanceof ShapeTooLargeError) return c.json({ message: err.message, kind: SHAPE_TOO_LARGE }, 503);
    return c.json({ message: `Shape service error: ${err.message}` }, 500);
  });
  return app;
}
