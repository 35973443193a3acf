/**
 * Test and benchmark fixture: the real HQ stack for device-sync tests — a real Postgres cluster
 * with the HQ database set up as in production (sync/testing/hqdb.ts), the demo club seeded, the
 * embedded shape service reading as the replication role, and the HQ server in front of it.
 * The HQ server can be stopped and started again on the same port (an HQ restart), and device
 * tokens revoked, as in production.
 *
 *   const hq = useHqStack();                 // top of a vitest file
 *   it('…', async () => { await DeviceSync.enrol(db, { hqUrl: hq.url, code: await hq.code(email), … }) });
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { SeedSummary } from '../../../models/seed/demo';
import { HQ_PUBLICATION } from '../../../sync/pg/roles';
import { initialiseHq } from '../../../sync/seed';
import type { ShapeLimits } from '../../../sync/http/shape-registry';
import { startHqServer, type HqServer } from '../../../sync/server';
import { startShapeServer, type ShapeServer } from '../../../sync/shape/server';
import { enrolmentCodeFor } from '../../../sync/testing/enrolment';
import { havePg, useHqDatabase, type TestHqDb } from '../../../sync/testing/hqdb';

export { havePg };

const SECRET = 'device-sync-test-secret';

/** The running stack; fields are valid inside tests. */
export interface HqStack {
  readonly db: TestHqDb;
  readonly url: string;
  readonly summary: SeedSummary;
  readonly today: string;
  /** Stop the HQ HTTP server (devices see connection errors). */
  stopHq(): Promise<void>;
  /** Start it again on the same port. */
  startHq(): Promise<void>;
  /** One statement as the owner role with the tenant set to `orgId` (RLS binds the owner too). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(orgId: string, sql: string, params?: unknown[]): Promise<R[]>;
  /** Delete a shape at the shape service (its clients get 409 must-refetch), as an operator would. */
  deleteShape(table: string, handle: string, where: string): Promise<number>;
  /** Revoke a device token at HQ (DELETE /v1/devices/:id with that token). */
  revokeDevice(deviceId: string, token: string): Promise<number>;
  /** A one-time HQ sign-in code for the account `email`, as the operator issues it (sync/testing/enrolment.ts). */
  code(email: string): Promise<string>;
  /** One statement as the cluster's superuser (no RLS). */
  adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
}

/**
 * Start Postgres + shape service + HQ for this test file; see the module doc. `shapeMaxMemoryBytes`:
 * the shape service's memory budget (default its own); `hqLog`: HQ's operator log lines (default console).
 */
export function useHqStack(
  opts: {
    longPollMs?: number;
    shapeLimits?: Partial<ShapeLimits>;
    shapeMaxMemoryBytes?: number;
    hqLog?: (line: string) => void;
  } = {},
): HqStack {
  const db = useHqDatabase();
  const today = new Date().toISOString().slice(0, 10);
  let shapes: ShapeServer | null = null;
  let server: HqServer | null = null;
  let port = 0;
  let storage = '';
  let summary: SeedSummary | null = null;
  const startHq = async (): Promise<void> => {
    server = await startHqServer({
      appUrl: db.appUrl,
      shapeUrl: shapes!.url,
      shapeSecret: SECRET,
      maxLongPollMs: 15_000,
      poolSize: 6,
      // Device sign-ins per address (20 in 5 min in production) are sync/write/changesets.test.ts's
      // subject; a test file here enrols a device per test from the one address.
      enrolLimit: { max: 1000, windowMs: 60_000 },
      port,
      ...(opts.shapeLimits ? { shapeLimits: opts.shapeLimits } : {}),
      ...(opts.hqLog ? { log: opts.hqLog } : {}),
    });
    port = server.port;
  };
  beforeAll(async () => {
    if (!havePg) return;
    const init = await initialiseHq(db.ownerUrl, { seed: 1, today });
    if (!init.initialised || !init.seeded) throw new Error('useHqStack: seeding HQ failed');
    summary = init.summary;
    storage = mkdtempSync(join(tmpdir(), 'ai-device-sync-shapes-'));
    shapes = await startShapeServer({
      databaseUrl: db.replicationUrl,
      storageDir: storage,
      port: 0,
      secret: SECRET,
      slot: 'hq_shapes',
      publication: HQ_PUBLICATION,
      longPollTimeoutMs: opts.longPollMs ?? 5_000,
      ...(opts.shapeMaxMemoryBytes !== undefined ? { maxMemoryBytes: opts.shapeMaxMemoryBytes } : {}),
    });
    await startHq();
  }, 300_000);
  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await shapes?.close().catch(() => undefined);
    if (storage) rmSync(storage, { recursive: true, force: true });
  });
  const run = async <R extends pg.QueryResultRow>(url: string, orgId: string | null, sql: string, params: unknown[] = []): Promise<R[]> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      if (!orgId) return (await c.query<R>(sql, params)).rows;
      await c.query('BEGIN');
      await c.query("SELECT set_config('hq.org_id', $1, true)", [orgId]);
      const r = await c.query<R>(sql, params);
      await c.query('COMMIT');
      return r.rows;
    } finally {
      await c.end();
    }
  };
  return {
    db,
    today,
    get url() {
      if (!server) throw new Error('useHqStack: HQ is not running');
      return server.url;
    },
    get summary() {
      if (!summary) throw new Error('useHqStack: not started');
      return summary;
    },
    async stopHq() {
      await server?.close();
      server = null;
    },
    startHq,
    async deleteShape(table, handle, where) {
      const q = new URLSearchParams({ table, handle, where, replica: 'full', secret: SECRET });
      const r = await fetch(`${shapes!.url}/v1/shape?${q.toString()}`, { method: 'DELETE' });
      await r.arrayBuffer();
      return r.status;
    },
    async revokeDevice(deviceId, token) {
      const r = await fetch(`${server!.url}/v1/devices/${deviceId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      await r.arrayBuffer();
      return r.status;
    },
    query: (orgId, sql, params) => run(db.ownerUrl, orgId, sql, params),
    adminQuery: (sql, params) => run(db.adminUrl, null, sql, params),
    code: (email) => enrolmentCodeFor(db.appUrl, email),
  };
}
