/**
 * HQ migration 0012 on a database holding device tokens issued before it (issue 13 review
 * blocker): every existing `hq_device` row gets the stamp of its user's row in the migration
 * itself, across row-level security (every org), so a change made after the upgrade and before the
 * device's next request already ends its token; an unchanged account's old token keeps working.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_SECOND_EMAILS } from '../../models/seed/demo';
import { ACCOUNT_CHANGED, DeviceRegistry, hashToken } from '../auth/devices';
import { hashPin } from '../auth/pin';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { initialiseHq } from '../seed';
import { createPool, hqTypes, migrateHq } from './db';
import { HQ_MIGRATIONS } from './migrations';

describe.skipIf(!havePg)('HQ migration 0012_device_account_stamp', () => {
  const hq = useHqDatabase({ migrate: false });

  it('stamps every existing device from its user in the migration; a later PIN reset or relink ends the old token', async () => {
    const target = HQ_MIGRATIONS.find((m) => m.name === '0012_device_account_stamp')!;
    const c = new pg.Client({ connectionString: hq.ownerUrl, types: hqTypes });
    await c.connect();
    const pool = createPool(hq.appUrl, 2);
    try {
      await c.query(
        'CREATE TABLE IF NOT EXISTS hq_schema_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      for (const m of HQ_MIGRATIONS.filter((x) => x.id < target.id)) {
        await c.query(m.sql);
        await c.query('INSERT INTO hq_schema_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
      }
      const init = await initialiseHq(hq.ownerUrl, { seed: 2, today: '2026-11-20' });
      if (!init.initialised || !init.seeded) throw new Error('the demo club was not seeded');
      const { orgId, secondOrgId } = init.summary;

      // Device tokens as the server before 0012 issued them (no stamp), in both orgs.
      const issued: Record<string, { token: string; id: string; userId: string; orgId: string }> = {};
      const issue = async (key: string, org: string, email: string): Promise<void> => {
        await c.query('BEGIN');
        await c.query("SELECT set_config('hq.org_id', $1, true)", [org]);
        const [u] = (await c.query<{ id: string }>('SELECT id FROM app_user WHERE lower(email) = $1', [email])).rows;
        const token = `aihq_${key}_${uuidv7()}`;
        const id = uuidv7();
        await c.query(
          "INSERT INTO hq_device (id, org_id, user_id, name, token_hash, token_hint, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, 'hint', now(), now() + interval '30 days')",
          [id, org, u!.id, key, hashToken(token)],
        );
        await c.query('COMMIT');
        issued[key] = { token, id, userId: u!.id, orgId: org };
      };
      await issue('athlete', orgId, DEMO_EMAILS.athlete);
      await issue('physio', orgId, DEMO_EMAILS.physio);
      await issue('doctor', orgId, DEMO_EMAILS.doctor);
      await issue('second', secondOrgId, DEMO_SECOND_EMAILS.physio);

      expect((await migrateHq(hq.ownerUrl))[0]).toBe('0012_device_account_stamp');

      // Each row holds its user's stamp: SHA-256 of role, linked athlete, PIN hash, active, one per line.
      await c.query('BEGIN');
      for (const d of Object.values(issued)) {
        await c.query("SELECT set_config('hq.org_id', $1, true)", [d.orgId]);
        const [row] = (
          await c.query<{ account_stamp: string; role: string; linked_athlete_id: string | null; pin_hash: string | null; active: boolean }>(
            'SELECT d.account_stamp, u.role, u.linked_athlete_id, u.pin_hash, u.active FROM hq_device d JOIN app_user u ON u.id = d.user_id WHERE d.id = $1',
            [d.id],
          )
        ).rows;
        const expected = createHash('sha256')
          .update([row!.role, row!.linked_athlete_id ?? '', row!.pin_hash ?? '', row!.active ? '1' : '0'].join('\n'))
          .digest('hex');
        expect(row!.account_stamp).toBe(expected);
      }
      await c.query('COMMIT');
      // Row-level security is back on, FORCEd: without an org the owner sees no device.
      expect((await c.query('SELECT count(*)::int AS n FROM hq_device')).rows[0]).toEqual({ n: 0 });

      const devices = new DeviceRegistry(pool);
      for (const d of Object.values(issued)) await expect(devices.authenticate(`Bearer ${d.token}`)).resolves.toMatchObject({ deviceId: d.id });

      // Changes after the upgrade, before any of these devices came back.
      await c.query('BEGIN');
      await c.query("SELECT set_config('hq.org_id', $1, true)", [orgId]);
      await c.query('UPDATE app_user SET pin_hash = $1 WHERE id = $2', [hashPin('5150'), issued.physio!.userId]);
      const [other] = (await c.query<{ id: string }>('SELECT id FROM athlete WHERE id <> $1 ORDER BY name LIMIT 1', [init.summary.linkedAthleteId])).rows;
      await c.query('UPDATE app_user SET linked_athlete_id = $1, pin_hash = NULL WHERE id = $2', [other!.id, issued.athlete!.userId]);
      await c.query('COMMIT');

      await expect(devices.authenticate(`Bearer ${issued.physio!.token}`)).rejects.toMatchObject({ code: 'Unauthenticated', message: ACCOUNT_CHANGED });
      await expect(devices.authenticate(`Bearer ${issued.athlete!.token}`)).rejects.toMatchObject({ code: 'Unauthenticated', message: ACCOUNT_CHANGED });
      await expect(devices.authenticate(`Bearer ${issued.doctor!.token}`)).resolves.toMatchObject({ deviceId: issued.doctor!.id });
      await expect(devices.authenticate(`Bearer ${issued.second!.token}`)).resolves.toMatchObject({ deviceId: issued.second!.id });
      expect(await devices.inactiveDevices(orgId, [issued.athlete!.id, issued.physio!.id, issued.doctor!.id])).toEqual(
        new Set([issued.athlete!.id, issued.physio!.id]),
      );
    } finally {
      await pool.end();
      await c.end();
    }
  }, 120_000);
});
