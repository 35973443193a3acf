/**
 * HQ 0002: tenant rules. Row-level security, ENABLEd and FORCEd (so the owner is bound too), on
 * every business table, keyed by per-transaction settings that only the server sets
 * (`set_config(name, value, true)`, i.e. SET LOCAL; see sync/pg/db.ts `withTenant`):
 * - `hq.org_id`: the caller's organisation. No setting → NULL → no row matches: no rows.
 * - `hq.athlete_id`: set only for self-scoped (athlete-role) users: their linked athlete (the nil
 *   UUID when unlinked). Rows of tables with an athlete column are then narrowed to it; tables
 *   with none are closed to them, except their own org row, user row, activity and changesets.
 * - `hq.user_id`: the caller (own user row, own activity, own device tokens).
 * - `hq.login_email` / `hq.token_hash`: the only cross-org reads, each of exactly one row, used
 *   by sign-in (POST /v1/devices) and by bearer-token look-up before the org is known.
 *
 * Privileges: the app role (`hq_app`) may SELECT, INSERT and UPDATE business rows, never DELETE
 * (clinical records are never deleted; others soft-delete). The replication role
 * (`hq_replication`, for the shape service / Electric) may only SELECT, through a policy of its
 * own (the shape service reads every org; the HQ proxy sets each client's tenant `where`). The
 * publication `hq_sync` lists the synced tables, with REPLICA IDENTITY FULL so updates and deletes
 * carry whole rows (what Electric requires).
 * Forward-only: never edit once shipped.
 */
const OWNER = 'hq_owner';
const APP = 'hq_app';
const REPLICATION = 'hq_replication';

/** Business tables and the column holding the athlete id (null: none). Frozen with this migration. */
const SCOPED: readonly (readonly [string, string | null])[] = [
  ['squad', null],
  ['athlete', 'id'],
  ['injury', 'athlete_id'],
  ['screening', 'athlete_id'],
  ['rtp_entry', 'athlete_id'],
  ['wellness', 'athlete_id'],
  ['vitals', 'athlete_id'],
  ['training_session', null],
  ['session_load', 'athlete_id'],
  ['rig', null],
  ['camera', null],
  ['capture_session', 'athlete_id'],
  ['pose_metric', 'athlete_id'],
  ['video', 'athlete_id'],
  ['device', 'athlete_id'],
  ['report', 'athlete_id'],
  ['rate_folder', null],
  ['rate_item', null],
];
const SYNCED = ['organization', 'app_user', ...SCOPED.map(([t]) => t), 'activity'];

function rls(table: string, using: string): string {
  return `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON ${table} TO ${APP}, ${OWNER} USING (${using}) WITH CHECK (${using});`;
}

export const sql = `
CREATE FUNCTION hq_org() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT NULLIF(current_setting('hq.org_id', true), '')::uuid $$;
CREATE FUNCTION hq_user() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT NULLIF(current_setting('hq.user_id', true), '')::uuid $$;
CREATE FUNCTION hq_athlete() RETURNS uuid LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT NULLIF(current_setting('hq.athlete_id', true), '')::uuid $$;

${rls('organization', 'id = hq_org()')}
${rls('app_user', 'org_id = hq_org() AND (hq_athlete() IS NULL OR id = hq_user())')}
CREATE POLICY sign_in ON app_user FOR SELECT TO ${APP} USING (lower(email) = NULLIF(current_setting('hq.login_email', true), ''));
${SCOPED.map(([t, col]) => rls(t, col ? `org_id = hq_org() AND (hq_athlete() IS NULL OR ${col} = hq_athlete())` : 'org_id = hq_org() AND hq_athlete() IS NULL')).join('\n')}
${rls('activity', 'org_id = hq_org() AND (hq_athlete() IS NULL OR actor_user_id = hq_user())')}
${rls('hq_changeset', 'org_id = hq_org() AND (hq_athlete() IS NULL OR user_id = hq_user())')}
${rls('hq_device', 'org_id = hq_org() AND (hq_athlete() IS NULL OR user_id = hq_user())')}
CREATE POLICY bearer ON hq_device FOR SELECT TO ${APP} USING (token_hash = NULLIF(current_setting('hq.token_hash', true), ''));

${SYNCED.map((t) => `CREATE POLICY shape_reader ON ${t} FOR SELECT TO ${REPLICATION} USING (true);`).join('\n')}

REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE ON ${[...SYNCED, 'hq_changeset', 'hq_device'].join(', ')} TO ${APP};
GRANT SELECT ON ${SYNCED.join(', ')} TO ${REPLICATION};
GRANT EXECUTE ON FUNCTION hq_org(), hq_user(), hq_athlete() TO ${APP}, ${REPLICATION};

${SYNCED.map((t) => `ALTER TABLE ${t} REPLICA IDENTITY FULL;`).join('\n')}
CREATE PUBLICATION hq_sync FOR TABLE ${SYNCED.join(', ')};
`;
