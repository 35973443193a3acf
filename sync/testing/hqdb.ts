/**
 * Vitest helper: a real Postgres cluster (sync/testing/pg.ts) with the HQ database set up as in
 * production — the admin step (roles, database), then the migrations as the owner role.
 *
 *   const hq = useHqDatabase();          // top of a test file
 *   it('…', async () => { const pool = createPool(hq.appUrl); … });
 */
import { randomBytes } from 'node:crypto';
import { beforeAll } from 'vitest';
import { runAdminSetup, withCredentials, withDatabase } from '../pg/admin';
import { migrateHq } from '../pg/db';
import { HQ_ROLES, type HqRolePasswords } from '../pg/roles';
import { havePg, usePgCluster, type TestPg } from './pg';

export { havePg };

/** URLs of the HQ database for each role; valid inside tests. */
export interface TestHqDb {
  readonly pg: TestPg;
  readonly database: string;
  readonly adminUrl: string;
  readonly ownerUrl: string;
  readonly appUrl: string;
  readonly replicationUrl: string;
  readonly passwords: HqRolePasswords;
}

/** Start a cluster for this test file and set up one migrated HQ database in it. */
export function useHqDatabase(opts: { database?: string; migrate?: boolean } = {}): TestHqDb {
  const cluster = usePgCluster();
  const database = opts.database ?? `hq_${randomBytes(4).toString('hex')}`;
  const passwords: HqRolePasswords = {
    owner: randomBytes(12).toString('hex'),
    app: randomBytes(12).toString('hex'),
    replication: randomBytes(12).toString('hex'),
  };
  let ready = false;
  beforeAll(async () => {
    if (!havePg) return;
    await runAdminSetup(cluster.url, database, passwords);
    if (opts.migrate !== false) await migrateHq(withCredentials(withDatabase(cluster.url, database), HQ_ROLES.owner, passwords.owner));
    ready = true;
  });
  const need = (): string => {
    if (!ready) throw new Error('useHqDatabase: not set up (use it inside a test)');
    return withDatabase(cluster.url, database);
  };
  return {
    get pg() {
      return cluster;
    },
    database,
    passwords,
    get adminUrl() {
      return need();
    },
    get ownerUrl() {
      return withCredentials(need(), HQ_ROLES.owner, passwords.owner);
    },
    get appUrl() {
      return withCredentials(need(), HQ_ROLES.app, passwords.app);
    },
    get replicationUrl() {
      return withCredentials(need(), HQ_ROLES.replication, passwords.replication);
    },
  };
}
