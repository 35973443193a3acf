/**
 * Row-level security as the app role sees it: another org's setting sees and changes nothing; a
 * forged org in a query widens nothing; no setting → no rows; athlete users see their own athlete
 * only; the app role cannot switch the rules off, delete, or escape through the owner's rights.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { createPool, NO_ATHLETE, withTenant } from './db';

interface OrgFixture {
  org: string;
  squad: string;
  athletes: [string, string];
  physio: string;
  athleteUser: string;
}

const NOW = '2026-11-01T10:00:00.000Z';

async function makeOrg(owner: pg.Pool, name: string): Promise<OrgFixture> {
  const f: OrgFixture = { org: uuidv7(), squad: uuidv7(), athletes: [uuidv7(), uuidv7()], physio: uuidv7(), athleteUser: uuidv7() };
  await withTenant(owner, { orgId: f.org }, async (c) => {
    await c.query('INSERT INTO organization (id, created_at, updated_at, name, plan, assistant_model) VALUES ($1, $2, $2, $3, $4, $5)', [
      f.org,
      NOW,
      name,
      'pro',
      'm',
    ]);
    await c.query('INSERT INTO squad (id, org_id, created_at, updated_at, name, season) VALUES ($1, $2, $3, $3, $4, $5)', [
      f.squad,
      f.org,
      NOW,
      'First team',
      '2026/27',
    ]);
    for (const [i, a] of f.athletes.entries()) {
      await c.query(
        'INSERT INTO athlete (id, org_id, created_at, updated_at, name, date_of_birth, sex, squad_id, dominant_side) VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8)',
        [a, f.org, NOW, `${name} athlete ${i}`, '2000-01-02', 'female', f.squad, 'right'],
      );
      await c.query(
        'INSERT INTO wellness (id, org_id, created_at, updated_at, athlete_id, date, sleep, soreness, stress, mood, fatigue) VALUES ($1, $2, $3, $3, $4, $5, 3, 3, 3, 3, 3)',
        [uuidv7(), f.org, NOW, a, '2026-11-01'],
      );
    }
    await c.query(
      'INSERT INTO app_user (id, org_id, created_at, updated_at, email, display_name, role, linked_athlete_id) VALUES ($1, $2, $3, $3, $4, $5, $6, $7)',
      [f.physio, f.org, NOW, `physio@${name}.test`, 'Physio', 'physio', null],
    );
    await c.query(
      'INSERT INTO app_user (id, org_id, created_at, updated_at, email, display_name, role, linked_athlete_id) VALUES ($1, $2, $3, $3, $4, $5, $6, $7)',
      [f.athleteUser, f.org, NOW, `athlete@${name}.test`, 'Athlete', 'athlete', f.athletes[0]],
    );
  });
  return f;
}

describe.skipIf(!havePg)('row-level security (app role)', () => {
  const hq = useHqDatabase();
  let owner: pg.Pool;
  let app: pg.Pool;
  let a: OrgFixture;
  let b: OrgFixture;

  beforeAll(async () => {
    if (!havePg) return;
    owner = createPool(hq.ownerUrl, 2);
    app = createPool(hq.appUrl, 4);
    a = await makeOrg(owner, 'alpha');
    b = await makeOrg(owner, 'bravo');
  });
  afterAll(async () => {
    await app?.end();
    await owner?.end();
  });

  const count = async (c: pg.PoolClient, table: string, where = 'true', params: unknown[] = []): Promise<number> =>
    Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params)).rows[0]!.n);

  it('no setting → no rows, in every table', async () => {
    const c = await app.connect();
    try {
      for (const t of ['organization', 'app_user', 'squad', 'athlete', 'wellness', 'activity', 'hq_device', 'hq_changeset']) {
        expect(await count(c, t), t).toBe(0);
      }
      // …and no write either.
      await expect(
        c.query(`INSERT INTO squad (id, org_id, created_at, updated_at, name, season) VALUES ($1, $2, now(), now(), 'x', '2026')`, [uuidv7(), a.org]),
      ).rejects.toThrow(/row-level security/);
    } finally {
      c.release();
    }
  });

  it("one org's setting sees only its rows; a forged org in the query widens nothing", async () => {
    await withTenant(app, { orgId: a.org, userId: a.physio }, async (c) => {
      expect(await count(c, 'athlete')).toBe(2);
      expect(await count(c, 'wellness')).toBe(2);
      expect(await count(c, 'organization')).toBe(1);
      expect(await count(c, 'athlete', 'org_id = $1', [b.org])).toBe(0);
      expect(await count(c, 'athlete', 'org_id = $1 OR true', [b.org])).toBe(2);
      expect(await count(c, 'athlete', 'id = $1', [b.athletes[0]])).toBe(0);
    });
  });

  it("changes nothing of another org's: updates match no row, inserts into it are refused", async () => {
    await withTenant(app, { orgId: a.org, userId: a.physio }, async (c) => {
      const up = await c.query(`UPDATE athlete SET name = 'hijacked', version = version + 1 WHERE id = $1`, [b.athletes[0]]);
      expect(up.rowCount).toBe(0);
      const all = await c.query(`UPDATE wellness SET notes = 'x'`);
      expect(all.rowCount).toBe(2); // only its own two rows
    });
    await expect(
      withTenant(app, { orgId: a.org }, (c) =>
        c.query(`INSERT INTO squad (id, org_id, created_at, updated_at, name, season) VALUES ($1, $2, now(), now(), 'x', '2026')`, [uuidv7(), b.org]),
      ),
    ).rejects.toThrow(/row-level security/);
    await expect(withTenant(app, { orgId: a.org }, (c) => c.query(`UPDATE athlete SET org_id = $1 WHERE id = $2`, [b.org, a.athletes[1]]))).rejects.toThrow(
      /row-level security/,
    );
    await withTenant(owner, { orgId: b.org }, async (c) => {
      expect((await c.query(`SELECT name FROM athlete WHERE id = $1`, [b.athletes[0]])).rows[0]?.name).toBe('bravo athlete 0');
      expect(await count(c, 'wellness', "notes = 'x'")).toBe(0);
    });
  });

  it('athlete users see their own athlete rows only', async () => {
    await withTenant(app, { orgId: a.org, userId: a.athleteUser, athleteId: a.athletes[0] }, async (c) => {
      expect((await c.query(`SELECT id FROM athlete`)).rows.map((r) => r.id)).toEqual([a.athletes[0]]);
      expect(await count(c, 'wellness')).toBe(1);
      expect(await count(c, 'wellness', 'athlete_id = $1', [a.athletes[1]])).toBe(0);
      expect(await count(c, 'squad')).toBe(0);
      expect((await c.query(`SELECT id FROM app_user`)).rows.map((r) => r.id)).toEqual([a.athleteUser]);
      await expect(
        c.query(
          `INSERT INTO wellness (id, org_id, created_at, updated_at, athlete_id, date, sleep, soreness, stress, mood, fatigue) VALUES ($1, $2, now(), now(), $3, '2026-11-02', 3, 3, 3, 3, 3)`,
          [uuidv7(), a.org, a.athletes[1]],
        ),
      ).rejects.toThrow(/row-level security/);
    });
    await withTenant(app, { orgId: a.org, userId: a.athleteUser, athleteId: NO_ATHLETE }, async (c) => {
      expect(await count(c, 'athlete')).toBe(0);
      expect(await count(c, 'wellness')).toBe(0);
    });
  });

  it('the app role cannot delete, switch row security off, or alter the tables', async () => {
    await expect(withTenant(app, { orgId: a.org }, (c) => c.query(`DELETE FROM wellness`))).rejects.toThrow(/permission denied/);
    await expect(
      withTenant(app, { orgId: a.org }, async (c) => {
        await c.query('SET LOCAL row_security = off');
        return c.query('SELECT * FROM athlete');
      }),
    ).rejects.toThrow(/row-level security/);
    await expect(withTenant(app, { orgId: a.org }, (c) => c.query('ALTER TABLE athlete DISABLE ROW LEVEL SECURITY'))).rejects.toThrow(/must be owner/);
    await expect(withTenant(app, { orgId: a.org }, (c) => c.query('SET LOCAL ROLE hq_owner'))).rejects.toThrow(/permission denied/);
  });

  it('the replication role reads every org and writes nothing', async () => {
    const repl = createPool(hq.replicationUrl, 1);
    try {
      const c = await repl.connect();
      try {
        expect(await count(c, 'athlete')).toBe(4);
        await expect(c.query(`UPDATE athlete SET name = 'x'`)).rejects.toThrow(/permission denied/);
      } finally {
        c.release();
      }
    } finally {
      await repl.end();
    }
  });
});
