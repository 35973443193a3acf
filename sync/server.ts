/**
 * Serve the HQ app over HTTP (@hono/node-server) and close it cleanly: the listening socket, open
 * long-polls and the app pool. Used by `npm run hq` (sync/hq.ts), the tests and the benchmark.
 */
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { createHqApp, type HqApp, type HqAppOptions } from './http/app';
import { createPool } from './pg/db';

/** A running HQ HTTP server. */
export interface HqServer {
  /** Base URL, e.g. `http://127.0.0.1:5180`. */
  readonly url: string;
  readonly port: number;
  readonly pool: pg.Pool;
  /** The proxy's live shape definitions and their release (sync/http/shape-registry.ts). */
  readonly shapes: Pick<HqApp, 'shapes' | 'sweepShapes'>;
  close(): Promise<void>;
}

/** Start the HQ server. `port` 0 picks a free port; `host` defaults to 127.0.0.1. */
export async function startHqServer(opts: Omit<HqAppOptions, 'pool'> & { appUrl: string; port?: number; host?: string; poolSize?: number }): Promise<HqServer> {
  const pool = createPool(opts.appUrl, opts.poolSize ?? 10);
  const hqApp = createHqApp({ ...opts, pool });
  const { app } = hqApp;
  const host = opts.host ?? '127.0.0.1';
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: host }, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  let closed = false;
  return {
    url: `http://${shown}:${port}`,
    port,
    pool,
    shapes: { shapes: hqApp.shapes, sweepShapes: hqApp.sweepShapes },
    async close() {
      if (closed) return;
      closed = true;
      hqApp.stop();
      await new Promise<void>((res) => {
        server.close(() => res());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await pool.end();
    },
  };
}
