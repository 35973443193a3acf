/**
 * The HQ Postgres schema against the device's: every synced table has the same columns, in the
 * same order, with the same nullability and a compatible type (SQLite affinity → Postgres type),
 * read from the real SQLite migrations (main/data/) and the real `information_schema`. Plus the
 * roles and tenant rules the admin step and migrations must leave behind.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { openDb } from '../../main/data/db';
import { TABLE_NAMES } from '../../models/tables';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { ensurePublication } from './db';
import { HQ_ROLES } from './roles';
import { sqlite } from '../../main/data/sqlite';

const SYNCED = ['organization', ...TABLE_NAMES, 'activity', 'hq_proposal'];

/** Postgres types a SQLite declared type may become on HQ. */
const COMPATIBLE: Record<string, string[]> = {
  TEXT: ['text', 'uuid', 'date', 'timestamp with time zone'],
  INTEGER: ['integer', 'bigint', 'boolean'],
  REAL: ['double precision'],
};

describe.skipIf(!havePg)('HQ schema', () => {
  const hq = useHqDatabase();

  async function q<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await hq.pg.query<R>(sql, params, hq.adminUrl)).rows;
  }

  it('matches the device schema column for column', async () => {
    const device = openDb(':memory:');
    try {
      for (const table of SYNCED) {
        const deviceCols = sqlite(device).prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string; notnull: number; pk: number }[];
        const pgCols = await q<{ column_name: string; data_type: string; is_nullable: string }>(
          `SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
          [table],
        );
        expect(deviceCols.length, `${table} exists on the device`).toBeGreaterThan(0);
        expect(
          pgCols.map((c) => c.column_name),
          `${table} columns`,
        ).toEqual(deviceCols.map((c) => c.name));
        deviceCols.forEach((c, i) => {
          const p = pgCols[i]!;
          expect(COMPATIBLE[c.type], `${table}.${c.name}: SQLite ${c.type}`).toContain(p.data_type);
          expect(p.is_nullable === 'NO', `${table}.${c.name} nullability`).toBe(c.notnull === 1 || c.pk === 1);
        });
      }
    } finally {
      device.close();
    }
  });

  it('keeps ids UUID v7 and versions as on the device', async () => {
    for (const table of SYNCED) {
      const [id] = await q<{ data_type: string }>(`SELECT data_type FROM information_schema.columns WHERE table_name = $1 AND column_name = 'id'`, [table]);
      expect(id?.data_type, table).toBe('uuid');
    }
    const checks = await q<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'athlete'::regclass AND contype = 'c'`,
    );
    expect(checks.map((c) => c.def).join(' ')).toMatch(/substr\(\(id\)::text, 15, 1\) = '7'/);
    const org = '01a02da2-3400-7fc5-86f0-eb46b8c2a352';
    await expect(
      hq.pg.query(
        `SELECT set_config('hq.org_id', '${org}', true); INSERT INTO squad (id, org_id, created_at, updated_at, name, season) VALUES (gen_random_uuid(), '${org}', now(), now(), 'x', '2026')`,
        [],
        hq.ownerUrl,
      ),
    ).rejects.toThrow(/squad_id_check/);
  });

  it('FORCEs row-level security on every business table', async () => {
    const rows = await q<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>(
      `SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'`,
    );
    const byName = new Map(rows.map((r) => [r.relname, r]));
    for (const t of [...SYNCED, 'hq_device', 'hq_changeset']) {
      expect(byName.get(t), t).toMatchObject({ relrowsecurity: true, relforcerowsecurity: true });
    }
  });

  it('has an owner, an unprivileged app role and a replication role with only REPLICATION + SELECT', async () => {
    const roles = await q<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean; rolreplication: boolean; rolcreaterole: boolean; rolcreatedb: boolean }>(
      `SELECT rolname, rolsuper, rolbypassrls, rolreplication, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = ANY($1)`,
      [Object.values(HQ_ROLES)],
    );
    const r = new Map(roles.map((x) => [x.rolname, x]));
    expect(r.get(HQ_ROLES.app)).toMatchObject({ rolsuper: false, rolbypassrls: false, rolreplication: false, rolcreaterole: false, rolcreatedb: false });
    expect(r.get(HQ_ROLES.replication)).toMatchObject({ rolsuper: false, rolbypassrls: false, rolreplication: true, rolcreaterole: false, rolcreatedb: false });
    expect(r.get(HQ_ROLES.owner)).toMatchObject({ rolsuper: false, rolbypassrls: false });

    const owners = await q<{ owner: string }>(`SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'`);
    expect(owners.map((o) => o.owner)).toEqual([HQ_ROLES.owner]);

    const replGrants = await q<{ privilege_type: string }>(`SELECT DISTINCT privilege_type FROM information_schema.role_table_grants WHERE grantee = $1`, [
      HQ_ROLES.replication,
    ]);
    expect(replGrants.map((g) => g.privilege_type)).toEqual(['SELECT']);
    const appGrants = await q<{ privilege_type: string }>(
      `SELECT DISTINCT privilege_type FROM information_schema.role_table_grants WHERE grantee = $1 ORDER BY 1`,
      [HQ_ROLES.app],
    );
    expect(appGrants.map((g) => g.privilege_type)).toEqual(['INSERT', 'SELECT', 'UPDATE']);

    const exts = await q<{ extname: string }>(`SELECT extname FROM pg_extension WHERE extname <> 'plpgsql'`);
    expect(exts).toEqual([]);
  });

  it('publishes every synced table with full replica identity', async () => {
    const pub = await q<{ tablename: string }>(`SELECT tablename FROM pg_publication_tables WHERE pubname = 'hq_sync' ORDER BY 1`);
    expect(pub.map((p) => p.tablename)).toEqual([...SYNCED].sort());
    // A real Electric with manual publishing reads its own publication: HQ creates it as the owner.
    expect(await ensurePublication(hq.ownerUrl, 'electric_publication_hq', 'hq_sync')).toBe(true);
    expect(await ensurePublication(hq.ownerUrl, 'electric_publication_hq', 'hq_sync')).toBe(false);
    const electric = await q<{ tablename: string }>(`SELECT tablename FROM pg_publication_tables WHERE pubname = 'electric_publication_hq' ORDER BY 1`);
    expect(electric.map((p) => p.tablename)).toEqual([...SYNCED].sort());
    // One created by an earlier HQ version (without hq_proposal, HQ 0010) gets the tables it lacks.
    await q('ALTER PUBLICATION electric_publication_hq DROP TABLE hq_proposal');
    expect(await ensurePublication(hq.ownerUrl, 'electric_publication_hq', 'hq_sync')).toBe(false);
    const again = await q<{ tablename: string }>(`SELECT tablename FROM pg_publication_tables WHERE pubname = 'electric_publication_hq' ORDER BY 1`);
    expect(again.map((p) => p.tablename)).toEqual([...SYNCED].sort());
    const ident = await q<{ relname: string; relreplident: string }>(`SELECT relname, relreplident FROM pg_class WHERE relname = ANY($1)`, [SYNCED]);
    expect(ident.every((i) => i.relreplident === 'f')).toBe(true);
  });
});
