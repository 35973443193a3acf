/**
 * The shape service as an HTTP server: `startShapeServer` (embeddable; the HQ server mounts
 * `createShapeApp` instead) and the `npm run shape-server` command:
 *
 *   npm run shape-server -- --database-url postgres://… [--port 3000] [--host 127.0.0.1]
 *        [--secret S] [--storage-dir .data/shapes] [--slot ai_shapes] [--publication ai_shapes]
 *        [--long-poll-ms 20000] [--max-memory-mb 512]
 *
 * `DATABASE_URL`, `ELECTRIC_SECRET`, `SHAPE_STORAGE_DIR`, `SHAPE_MAX_MEMORY_MB` are read when the
 * flags are absent.
 */
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createShapeApp } from './http';
import { ShapeService, ShapeServiceError, type ShapeServiceOptions } from './service';

/** Options of `startShapeServer`. */
export interface ShapeServerOptions extends ShapeServiceOptions {
  /** TCP port (0: a free one). */
  port: number;
  host?: string;
  secret?: string | undefined;
}

/** A running standalone shape server. */
export interface ShapeServer {
  /** Base URL, e.g. `http://127.0.0.1:3000` (append `/v1/shape`). */
  url: string;
  port: number;
  service: ShapeService;
  /** Stop accepting requests, answer held long-polls, persist the logs and close. */
  close(): Promise<void>;
}

/** Start the service and serve it over HTTP. @throws ShapeServiceError (see ShapeService.start). */
export async function startShapeServer(opts: ShapeServerOptions): Promise<ShapeServer> {
  const service = await ShapeService.start(opts);
  const app = createShapeApp(service, { secret: opts.secret });
  const host = opts.host ?? '127.0.0.1';
  let server: ServerType;
  const port = await new Promise<number>((res, rej) => {
    server = serve({ fetch: app.fetch, port: opts.port, hostname: host }, (info: AddressInfo) => res(info.port));
    server.once('error', rej);
  });
  return {
    url: `http://${host}:${port}`,
    port,
    service,
    async close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      await service.stop(); // wakes held long-polls so the server can close
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await closed;
    },
  };
}

function parseArgs(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') out.help = 'true';
    else if (a.startsWith('--')) {
      const [k, v] = a.includes('=') ? [a.slice(2, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a.slice(2), argv[++i]];
      if (v === undefined) throw new Error(`${a} needs a value`);
      out[k!] = v;
    } else throw new Error(`unexpected argument ${a}`);
  }
  return out;
}

const USAGE = `Usage: npm run shape-server -- --database-url URL [--port 3000] [--host 127.0.0.1] [--secret S]
       [--storage-dir .data/shapes] [--slot ai_shapes] [--publication ai_shapes] [--long-poll-ms 20000] [--max-memory-mb 512]
Serves the Electric 1.x HTTP Shape API (GET/DELETE /v1/shape, GET /v1/health) for every table with a primary key.
The database role needs REPLICATION and SELECT; the publication (FOR ALL TABLES) is created if the role may.`;
/**
 * The shapes' memory budget from `--max-memory-mb` / `SHAPE_MAX_MEMORY_MB` (MiB, 16–1,048,576),
 * in bytes; undefined when not given (the service's default, 512 MiB).
 * @throws Error naming the accepted range when the value is not a whole number in it
 */
export function shapeMemoryBudget(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const mb = /^\d{1,7}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(mb >= 16 && mb <= 1_048_576))
    throw new Error(`--max-memory-mb / SHAPE_MAX_MEMORY_MB must be a whole number of MiB from 16 to 1048576, not ${JSON.stringify(text)}`);
  return mb * 1024 * 1024;
}

async function main(): Promise<void> {
  let args: Record<string, string>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`shape-server: ${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const known = new Set(['database-url', 'port', 'host', 'secret', 'storage-dir', 'slot', 'publication', 'long-poll-ms', 'max-memory-mb']);
  for (const k of Object.keys(args)) {
    if (!known.has(k)) {
      console.error(`shape-server: unknown option --${k}\n${USAGE}`);
      process.exit(2);
    }
  }
  const databaseUrl = args['database-url'] ?? process.env.DATABASE_URL;
  if (!databaseUrl) {
    console.error(`shape-server: --database-url (or DATABASE_URL) is required\n${USAGE}`);
    process.exit(2);
  }
  const port = Number(args.port ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`shape-server: --port must be 0–65535`);
    process.exit(2);
  }
  const longPoll = args['long-poll-ms'] ? Number(args['long-poll-ms']) : undefined;
  if (longPoll !== undefined && !(longPoll >= 100 && longPoll <= 300_000)) {
    console.error('shape-server: --long-poll-ms must be 100–300000');
    process.exit(2);
  }
  let maxMemoryBytes: number | undefined;
  try {
    maxMemoryBytes = shapeMemoryBudget(args['max-memory-mb'] ?? process.env.SHAPE_MAX_MEMORY_MB);
  } catch (e) {
    console.error(`shape-server: ${(e as Error).message}`);
    process.exit(2);
  }
  let server: ShapeServer;
  try {
    server = await startShapeServer({
      databaseUrl,
      port,
      host: args.host ?? '127.0.0.1',
      secret: args.secret ?? process.env.ELECTRIC_SECRET,
      storageDir: args['storage-dir'] ?? process.env.SHAPE_STORAGE_DIR ?? '.data/shapes',
      slot: args.slot,
      publication: args.publication,
      longPollTimeoutMs: longPoll,
      ...(maxMemoryBytes !== undefined ? { maxMemoryBytes } : {}),
      log: (l) => console.error(l),
    });
  } catch (e) {
    console.error(e instanceof ShapeServiceError ? e.message : `shape-server: ${(e as Error).message}`);
    process.exit(1);
  }
  console.log(`shape-server: listening on ${server.url} (GET ${server.url}/v1/shape?table=…&offset=-1)`);
  let closing = false;
  const shutdown = (): void => {
    if (closing) return;
    closing = true;
    server.close().then(
      () => process.exit(0),
      (e: Error) => {
        console.error(`shape-server: shutdown failed: ${e.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
