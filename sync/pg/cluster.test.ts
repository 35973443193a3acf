import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { findPgBinDir, PgBinariesMissingError, PgClusterError, startPgCluster, type PgCluster } from './cluster';
import { havePg, usePgCluster } from '../testing/pg';

async function q(url: string, sql: string): Promise<pg.QueryResultRow[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

describe('findPgBinDir', () => {
  it('names what to install when the binaries are missing', () => {
    let err: unknown;
    try {
      findPgBinDir('/nonexistent/pg/bin');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PgBinariesMissingError);
    expect((err as PgClusterError).kind).toBe('binaries_missing');
    expect((err as PgClusterError).code).toBe('NotConfigured');
    expect((err as Error).message).toMatch(/apt-get install postgresql-15/);
    expect((err as Error).message).toContain('/nonexistent/pg/bin');
  });
});

describe.skipIf(!havePg)('startPgCluster', () => {
  const dirs: string[] = [];
  const clusters: PgCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.stop().catch(() => undefined);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('initialises, starts with wal_level=logical on 127.0.0.1, stops, and restarts on the same data dir keeping data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ai-pg-cluster-'));
    dirs.push(dir);
    const c1 = await startPgCluster({ dataDir: dir, unsafeFast: true });
    clusters.push(c1);
    expect(c1.adopted).toBe(false);
    expect(c1.major).toBeGreaterThanOrEqual(15);
    expect(c1.url).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/postgres$/);
    const [row] = await q(
      c1.url,
      "SELECT current_setting('wal_level') AS wal, current_setting('listen_addresses') AS listen, rolsuper FROM pg_roles WHERE rolname = current_user",
    );
    expect(row).toEqual({ wal: 'logical', listen: '127.0.0.1', rolsuper: true });
    await q(c1.url, 'CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (42)');
    // The credential file is private.
    expect(statSync(join(dir, 'admin-credentials.json')).mode & 0o077).toBe(0);
    // A wrong password is refused (SCRAM, not trust).
    await expect(q(c1.url.replace(/:[^:@]+@/, ':wrong@'), 'SELECT 1')).rejects.toThrow(/password authentication failed/);

    // Idempotent: starting again while it runs adopts the running server.
    const again = await startPgCluster({ dataDir: dir, stopOnExit: false });
    expect(again.adopted).toBe(true);
    expect(again.port).toBe(c1.port);

    await c1.stop();
    expect(existsSync(join(dir, 'postmaster.pid'))).toBe(false);
    await expect(q(c1.url, 'SELECT 1')).rejects.toThrow();
    await c1.stop(); // idempotent

    // Restart on the existing data dir: not re-initialised, data kept.
    const c2 = await startPgCluster({ dataDir: dir, unsafeFast: true });
    clusters.push(c2);
    expect(c2.adopted).toBe(false);
    expect(c2.password).toBe(c1.password);
    expect(await q(c2.url, 'SELECT id FROM kept')).toEqual([{ id: 42 }]);
    await c2.stop();
  });

  it('refuses a non-empty directory that is not a cluster, saying so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ai-pg-cluster-'));
    dirs.push(dir);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    await expect(startPgCluster({ dataDir: dir })).rejects.toMatchObject({
      kind: 'data_dir',
      code: 'NotConfigured',
      message: expect.stringMatching(/neither empty nor a PostgreSQL data directory/),
    });
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('hello');
  });
});

describe.skipIf(!havePg)('usePgCluster', () => {
  const pgt = usePgCluster();
  it('gives each test file a running cluster and fresh databases', async () => {
    const url = await pgt.createDatabase();
    const { rows } = await pgt.query<{ db: string }>('SELECT current_database() AS db', [], url);
    expect(url).toContain(`/${rows[0]!.db}`);
    expect(rows[0]!.db).toMatch(/^t_[0-9a-f]{10}$/);
  });
});
