/**
 * HQ migration 0006 on a database holding real rows (issue 9 §12): a deactivation reason typed
 * into the old summary moves into athlete.deactivation_reason, and every deactivation summary is
 * rewritten from structured fields, across row-level security (the back-fill runs for every org).
 */
import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { describe, expect, it } from 'vitest';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { initialiseHq } from '../seed';
import { migrateHq } from './db';
import { HQ_MIGRATIONS } from './migrations';

describe.skipIf(!havePg)('HQ migration 0006_free_text', () => {
  const hq = useHqDatabase({ migrate: false });

  it('moves the reason of a still deactivated athlete into its column and rewrites deactivation summaries, changeset and activity', async () => {
    const target = HQ_MIGRATIONS.find((m) => m.name === '0006_free_text')!;
    const c = new pg.Client({ connectionString: hq.ownerUrl });
    await c.connect();
    try {
      // The schema as it was before 0006, as migrateHq writes it.
      await c.query(
        'CREATE TABLE IF NOT EXISTS hq_schema_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      for (const m of HQ_MIGRATIONS.filter((x) => x.id < target.id)) {
        await c.query(m.sql);
        await c.query('INSERT INTO hq_schema_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
      }
      const init = await initialiseHq(hq.ownerUrl, { seed: 4, today: '2026-11-20' });
      if (!init.initialised || !init.seeded) throw new Error('the demo club was not seeded');
      const org = init.summary.orgId;
      await c.query('BEGIN');
      await c.query("SELECT set_config('hq.org_id', $1, true)", [org]);
      const { rows: athletes } = await c.query<{ id: string; name: string }>('SELECT id, name FROM athlete WHERE org_id = $1 ORDER BY name LIMIT 2', [org]);
      const { rows: users } = await c.query<{ id: string }>('SELECT id FROM app_user WHERE org_id = $1 LIMIT 1', [org]);
      const [a, b] = athletes as [{ id: string; name: string }, { id: string; name: string }];
      const user = users[0]!.id;
      const reasonA = 'ACL repair (left knee), out for the season';
      const changes = (id: string) =>
        JSON.stringify([{ op: 'update', table: 'athlete', id, version: 1, before: { status: 'active' }, after: { status: 'deactivated' } }]);
      const cs = async (id: string, athlete: { id: string; name: string }, summary: string, receivedAt: string) => {
        await c.query(
          `INSERT INTO hq_changeset (id, org_id, user_id, device_id, verb, summary, content_hash, status, txid, changes, outcome, received_at)
           VALUES ($1, $2, $3, NULL, 'athletes.deactivate', $4, 'h', 'applied', '1', $5, '{}', $6)`,
          [id, org, user, summary, changes(athlete.id), receivedAt],
        );
        await c.query(
          `INSERT INTO activity (id, org_id, created_at, actor_user_id, actor_name, via_assistant, run_id, record_table, record_id, summary, changeset_id)
           VALUES ($1, $2, $3, $4, 'Physio', false, NULL, 'athlete', $5, $6, $7)`,
          [uuidv7(), org, receivedAt, user, athlete.id, summary, id],
        );
      };
      const a1 = uuidv7();
      const a2 = uuidv7();
      const b1 = uuidv7();
      await cs(a1, a, `Deactivate athlete ${a.name} (old reason)`, '2026-10-01T09:00:00Z');
      await cs(a2, a, `Deactivate athlete ${a.name} (${reasonA})`, '2026-11-01T09:00:00Z');
      // B was deactivated, then reactivated: no reason is kept for an active athlete.
      await cs(b1, b, `Deactivate athlete ${b.name} (depression, on leave)`, '2026-11-02T09:00:00Z');
      await c.query(`UPDATE athlete SET status = 'deactivated' WHERE id = $1`, [a.id]);
      await c.query('COMMIT');

      // 0006 runs first (later migrations, e.g. 0007, follow it on the same call).
      expect((await migrateHq(hq.ownerUrl))[0]).toBe('0006_free_text');

      const { rows: summaries } = await c.query<{ summary: string }>(
        `SELECT summary FROM hq_changeset WHERE id = ANY($1) UNION ALL SELECT summary FROM activity WHERE changeset_id = ANY($1)`,
        [[a1, a2, b1]],
      );
      await c.query('BEGIN');
      await c.query("SELECT set_config('hq.org_id', $1, true)", [org]);
      const { rows: reasons } = await c.query<{ id: string; deactivation_reason: string }>('SELECT id, deactivation_reason FROM athlete WHERE id = ANY($1)', [
        [a.id, b.id],
      ]);
      const { rows: activity } = await c.query<{ summary: string }>('SELECT summary FROM activity WHERE changeset_id = ANY($1)', [[a1, a2, b1]]);
      await c.query('COMMIT');
      expect(Object.fromEntries(reasons.map((r) => [r.id, r.deactivation_reason]))).toEqual({ [a.id]: reasonA, [b.id]: '' });
      expect(activity.map((r) => r.summary).sort()).toEqual(
        [`Deactivate athlete ${a.name}`, `Deactivate athlete ${a.name}`, `Deactivate athlete ${b.name}`].sort(),
      );
      const text = JSON.stringify([...summaries, ...activity]);
      for (const typed of ['ACL repair', 'old reason', 'depression']) expect(text).not.toContain(typed);
      // Row-level security is forced again after the back-fill.
      const { rows: forced } = await c.query<{ relname: string; relforcerowsecurity: boolean; relrowsecurity: boolean }>(
        `SELECT relname, relforcerowsecurity, relrowsecurity FROM pg_class WHERE relname IN ('athlete', 'activity', 'hq_changeset') ORDER BY relname`,
      );
      expect(forced.every((r) => r.relforcerowsecurity && r.relrowsecurity)).toBe(true);
      expect(forced).toHaveLength(3);
    } finally {
      await c.end();
    }
  });
});
