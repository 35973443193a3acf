/**
 * HQ migration 0011 on a database holding real rows (seeded, then dirtied the way old data could
 * be): stored one-line text is cleaned as the device's migration 0016 and models/text.ts
 * `cleanOneLine` clean it, across row-level security (the back-fill runs for every org); a value
 * that would become blank, or a squad name / fee item code equal to another row's (ignoring case),
 * keeps its original and is listed in `text_cleanup_kept`.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { cleanOneLine } from '../../models/text';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { initialiseHq } from '../seed';
import { migrateHq } from './db';
import { HQ_MIGRATIONS } from './migrations';

describe.skipIf(!havePg)('HQ migration 0011_clean_one_line_text', () => {
  const hq = useHqDatabase({ migrate: false });

  it('cleans names, codes and positions as the device does; keeps and lists what would be blank or collide', async () => {
    const target = HQ_MIGRATIONS.find((m) => m.name === '0011_clean_one_line_text')!;
    const c = new pg.Client({ connectionString: hq.ownerUrl });
    await c.connect();
    try {
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
      const athletes = (await c.query<{ id: string; name: string }>('SELECT id, name FROM athlete WHERE org_id = $1 ORDER BY name LIMIT 2', [org])).rows;
      const squads = (await c.query<{ id: string; name: string }>('SELECT id, name FROM squad WHERE org_id = $1 ORDER BY name LIMIT 2', [org])).rows;
      const items = (
        await c.query<{ id: string; code: string; name: string }>('SELECT id, code, name FROM rate_item WHERE org_id = $1 ORDER BY code LIMIT 2', [org])
      ).rows;
      const set = (table: string, col: string, id: string, v: string) => c.query(`UPDATE ${table} SET ${col} = $1 WHERE id = $2`, [v, id]);
      const dirty = {
        name: ` \uFF2A${athletes[0]!.name.slice(1)}\u200B `,
        position: 'Wing\u202Eer',
        blank: '\u200B\u200C',
        season: '２０２６/２７',
        squad: ` ${squads[0]!.name.toUpperCase()}\u200B`,
        code: `${items[0]!.code}\u2066`,
        itemName: `  ${items[1]!.name}\uFEFF`,
      };
      await set('athlete', 'name', athletes[0]!.id, dirty.name);
      await set('athlete', 'position', athletes[0]!.id, dirty.position);
      await set('athlete', 'position', athletes[1]!.id, dirty.blank);
      await set('squad', 'season', squads[0]!.id, dirty.season);
      await set('squad', 'name', squads[1]!.id, dirty.squad);
      await set('rate_item', 'code', items[1]!.id, dirty.code);
      await set('rate_item', 'name', items[1]!.id, dirty.itemName);
      await c.query('COMMIT');

      expect((await migrateHq(hq.ownerUrl))[0]).toBe('0011_clean_one_line_text');

      await c.query('BEGIN');
      await c.query("SELECT set_config('hq.org_id', $1, true)", [org]);
      const get = async (table: string, col: string, id: string) =>
        (await c.query<{ v: string }>(`SELECT ${col} AS v FROM ${table} WHERE id = $1`, [id])).rows[0]!.v;
      // The same result as the device's cleanOneLine, value by value.
      expect(await get('athlete', 'name', athletes[0]!.id)).toBe(cleanOneLine(dirty.name));
      expect(cleanOneLine(dirty.name)).toBe(`J${athletes[0]!.name.slice(1)}`);
      expect(await get('athlete', 'position', athletes[0]!.id)).toBe('Winger');
      expect(await get('athlete', 'position', athletes[1]!.id)).toBe(dirty.blank);
      expect(await get('squad', 'season', squads[0]!.id)).toBe(cleanOneLine(dirty.season));
      expect(await get('squad', 'name', squads[1]!.id)).toBe(dirty.squad);
      expect(await get('rate_item', 'code', items[1]!.id)).toBe(dirty.code);
      expect(await get('rate_item', 'name', items[1]!.id)).toBe(items[1]!.name);
      const kept = (await c.query('SELECT table_name, row_id, column_name, reason, original, cleaned FROM text_cleanup_kept ORDER BY table_name, column_name'))
        .rows;
      await c.query('COMMIT');
      expect(kept).toEqual([
        { table_name: 'athlete', row_id: athletes[1]!.id, column_name: 'position', reason: 'blank', original: dirty.blank, cleaned: '' },
        { table_name: 'rate_item', row_id: items[1]!.id, column_name: 'code', reason: 'collision', original: dirty.code, cleaned: items[0]!.code },
        { table_name: 'squad', row_id: squads[1]!.id, column_name: 'name', reason: 'collision', original: dirty.squad, cleaned: squads[0]!.name.toUpperCase() },
      ]);
      // Row-level security is forced again after the back-fill, and the helper function is gone.
      const { rows: forced } = await c.query<{ relforcerowsecurity: boolean; relrowsecurity: boolean }>(
        `SELECT relforcerowsecurity, relrowsecurity FROM pg_class WHERE relname IN ('athlete', 'squad', 'rate_item', 'app_user', 'text_cleanup_kept')`,
      );
      expect(forced).toHaveLength(5);
      expect(forced.every((r) => r.relforcerowsecurity && r.relrowsecurity)).toBe(true);
      expect((await c.query("SELECT 1 FROM pg_proc WHERE proname = 'hq_clean_line_0011'")).rowCount).toBe(0);
    } finally {
      await c.end();
    }
  });
});
