/**
 * HQ 0012: a device token ends when its account changes (issue 13 review blocker), as the device
 * app's sessions, assistant runs and MCP tokens do (main/data/identity.ts `accountStamp`, device
 * migration 0017). `hq_device.account_stamp` holds the stamp of the user as the device enrolled;
 * sync/auth/devices.ts `authenticate` refuses a token whose stamp differs from the user's stamp
 * now, so a relink to another athlete, a PIN reset (the account handed to someone else), a role
 * change or a deactivation ends every token issued before it.
 *
 * `hq_account_stamp(role, linked_athlete_id, pin_hash, active)`: lowercase hex SHA-256 of the four
 * fields joined with a newline (`linked_athlete_id` and `pin_hash` as '' when null, `active` as
 * '1' / '0'); IMMUTABLE; executable by the app role. Enrolment and authentication both compute it
 * in SQL with this function, so they always agree.
 *
 * Back-fill: every existing device row gets the stamp of its user's row now, in this migration
 * (not at first use, which would let a change between the upgrade and the device's next request
 * through). The owner lifts FORCE row-level security on hq_device and app_user for the back-fill
 * (it runs across every org, as HQ 0003, 0007 and 0011 do) and restores it in the same
 * transaction. Then the column is NOT NULL.
 * Forward-only: never edit once shipped.
 */
export const sql = `
CREATE FUNCTION hq_account_stamp(role text, linked_athlete_id uuid, pin_hash text, active boolean) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT encode(sha256(convert_to(concat_ws(E'\\n', coalesce($1, ''), coalesce($2::text, ''), coalesce($3, ''), CASE WHEN $4 THEN '1' ELSE '0' END), 'UTF8')), 'hex')
$f$;
REVOKE ALL ON FUNCTION hq_account_stamp(text, uuid, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION hq_account_stamp(text, uuid, text, boolean) TO hq_app;

ALTER TABLE hq_device ADD COLUMN account_stamp text;

ALTER TABLE hq_device NO FORCE ROW LEVEL SECURITY;
ALTER TABLE hq_device DISABLE ROW LEVEL SECURITY;
ALTER TABLE app_user NO FORCE ROW LEVEL SECURITY;
ALTER TABLE app_user DISABLE ROW LEVEL SECURITY;

UPDATE hq_device d SET account_stamp = hq_account_stamp(u.role, u.linked_athlete_id, u.pin_hash, u.active)
  FROM app_user u WHERE u.id = d.user_id;

ALTER TABLE hq_device ENABLE ROW LEVEL SECURITY;
ALTER TABLE hq_device FORCE ROW LEVEL SECURITY;
ALTER TABLE app_user ENABLE ROW LEVEL SECURITY;
ALTER TABLE app_user FORCE ROW LEVEL SECURITY;

ALTER TABLE hq_device ALTER COLUMN account_stamp SET NOT NULL;
ALTER TABLE hq_device ADD CONSTRAINT hq_device_account_stamp_hex CHECK (account_stamp ~ '^[0-9a-f]{64}$');
`;
