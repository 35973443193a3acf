/**
 * Vitest helper: a real PostgreSQL cluster for one test file.
 *
 *   const pg = usePgCluster();            // at the top of a test file
 *   it('…', async () => { new pg.Client(pg.url) … });
 *
 * Starts a private cluster (sync/pg/cluster.ts) in a fresh temp dir in `beforeAll`, stops it and
 * deletes the dir in `afterAll`. Durability is traded for speed (fsync off): throw-away data only.
 *
 * Where the PostgreSQL binaries are missing the tests are skipped with the reason printed — except
 * in CI (`CI=true`), where `.ci/run` installs them and a missing server is a failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { findPgBinDir, PgBinariesMissingError, startPgCluster, type PgCluster, type PgClusterOptions } from '../pg/cluster';

/** Handle returned by `usePgCluster`; fields are valid inside tests (after `beforeAll`). */
export interface TestPg {
  /** Admin (superuser) URL of the `postgres` database. */
  readonly url: string;
  readonly cluster: PgCluster;
  /** Create a fresh database (owned by the admin) and return its admin URL. */
  createDatabase(name?: string): Promise<string>;
  /** Run one statement as admin against `url` (default: the `postgres` database). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[], url?: string): Promise<pg.QueryResult<R>>;
}

/** True when the PostgreSQL binaries are installed (for `describe.skipIf(!havePg)`); always true in CI. */
export const havePg: boolean = (() => {
  if (process.env.CI === 'true') return true;
  try {
    findPgBinDir();
    return true;
  } catch (e) {
    if (e instanceof PgBinariesMissingError) {
      console.warn(`[sync/testing/pg] skipping Postgres tests: ${e.message}`);
      return false;
    }
    throw e;
  }
})();

/** Start a cluster once for the calling test file; see the module doc. */
export function usePgCluster(options: Omit<PgClusterOptions, 'dataDir'> = {}): TestPg {
  let cluster: PgCluster | null = null;
  let dir = '';
  beforeAll(async () => {
    if (!havePg) return;
    // /tmp is world-searchable, so the server's OS user (postgres, when we are root) can reach it.
    dir = mkdtempSync(join(tmpdir(), 'ai-pg-test-'));
    cluster = await startPgCluster({ unsafeFast: true, ...options, dataDir: dir });
  });
  afterAll(async () => {
    try {
      await cluster?.stop();
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });
  const need = (): PgCluster => {
    if (!cluster) throw new Error('usePgCluster: the cluster is not started (use it inside a test, after beforeAll)');
    return cluster;
  };
  const query = async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = [], url?: string): Promise<pg.QueryResult<R>> => {
    const client = new pg.Client({ connectionString: url ?? need().url });
    await client.connect();
    try {
      return await client.query<R>(sql, params);
    } finally {
      await client.end();
    }
  };
  return {
    get url() {
      return need().url;
    },
    get cluster() {
      return need();
    },
    query,
    async createDatabase(name?: string) {
      const db = name ?? `t_${randomBytes(5).toString('hex')}`;
      if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error(`createDatabase: bad database name ${db}`);
      await query(`CREATE DATABASE ${db}`);
      return need().urlFor(db);
    },
  };
}
