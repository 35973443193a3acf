/**
 * HQ 0011: stored one-line text follows the text rules, as the device's migration 0016 makes it
 * (issue 13): in the same columns, each value is cleaned as models/text.ts `cleanOneLine` does
 * (remove control, zero-width and text-direction characters, trim, NFKC-normalise, trim; here
 * in SQL with `regexp_replace` and `normalize(…, NFKC)`), never made blank, and a squad name or fee
 * item code is never made equal to another row's of its org (ignoring case, `lower()`): such a
 * value keeps its original and is listed in `text_cleanup_kept` (the migration's log; HQ-internal:
 * row-level security by org, no privileges for the app role). The cleaned rows reach the devices
 * through the shape stream. The owner lifts FORCE row-level security on the tables for the
 * back-fill (it runs across every org, as HQ 0003 and 0007 do) and restores it in the same
 * transaction. The helper function is dropped at the end.
 * Forward-only: never edit once shipped.
 */
export const sql = `
CREATE TABLE text_cleanup_kept (
  table_name text NOT NULL,
  row_id text NOT NULL,
  org_id uuid NOT NULL REFERENCES organization(id),
  column_name text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('blank', 'collision')),
  original text NOT NULL,
  cleaned text NOT NULL,
  PRIMARY KEY (table_name, row_id, column_name)
);
CREATE POLICY tenant ON text_cleanup_kept TO hq_app, hq_owner USING (org_id = hq_org() AND hq_athlete() IS NULL) WITH CHECK (org_id = hq_org() AND hq_athlete() IS NULL);
REVOKE ALL ON text_cleanup_kept FROM PUBLIC;

CREATE FUNCTION hq_clean_line_0011(v text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $f$
  SELECT regexp_replace(normalize(regexp_replace(regexp_replace(v, '[\\u0001-\\u001F\\u007F-\\u009F\\u00AD\\u061C\\u200B-\\u200F\\u2028\\u2029\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u2069\\uFEFF]', '', 'g'), '^[\\s\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]+|[\\s\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]+$', '', 'g'), NFKC), '^[\\s\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]+|[\\s\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]+$', '', 'g')
$f$;

ALTER TABLE app_user NO FORCE ROW LEVEL SECURITY;
ALTER TABLE app_user DISABLE ROW LEVEL SECURITY;
ALTER TABLE athlete NO FORCE ROW LEVEL SECURITY;
ALTER TABLE athlete DISABLE ROW LEVEL SECURITY;
ALTER TABLE capture_session NO FORCE ROW LEVEL SECURITY;
ALTER TABLE capture_session DISABLE ROW LEVEL SECURITY;
ALTER TABLE device NO FORCE ROW LEVEL SECURITY;
ALTER TABLE device DISABLE ROW LEVEL SECURITY;
ALTER TABLE injury NO FORCE ROW LEVEL SECURITY;
ALTER TABLE injury DISABLE ROW LEVEL SECURITY;
ALTER TABLE rate_folder NO FORCE ROW LEVEL SECURITY;
ALTER TABLE rate_folder DISABLE ROW LEVEL SECURITY;
ALTER TABLE rate_item NO FORCE ROW LEVEL SECURITY;
ALTER TABLE rate_item DISABLE ROW LEVEL SECURITY;
ALTER TABLE rig NO FORCE ROW LEVEL SECURITY;
ALTER TABLE rig DISABLE ROW LEVEL SECURITY;
ALTER TABLE screening NO FORCE ROW LEVEL SECURITY;
ALTER TABLE screening DISABLE ROW LEVEL SECURITY;
ALTER TABLE squad NO FORCE ROW LEVEL SECURITY;
ALTER TABLE squad DISABLE ROW LEVEL SECURITY;
ALTER TABLE training_session NO FORCE ROW LEVEL SECURITY;
ALTER TABLE training_session DISABLE ROW LEVEL SECURITY;
ALTER TABLE text_cleanup_kept NO FORCE ROW LEVEL SECURITY;
ALTER TABLE text_cleanup_kept DISABLE ROW LEVEL SECURITY;
-- athlete.name
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'athlete', id::text, org_id, 'name', 'blank', name, hq_clean_line_0011(name) FROM athlete WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) = '';
UPDATE athlete SET name = hq_clean_line_0011(name) WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) <> '';
-- athlete.position
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'athlete', id::text, org_id, 'position', 'blank', position, hq_clean_line_0011(position) FROM athlete WHERE position IS NOT NULL AND hq_clean_line_0011(position) <> position AND hq_clean_line_0011(position) = '';
UPDATE athlete SET position = hq_clean_line_0011(position) WHERE position IS NOT NULL AND hq_clean_line_0011(position) <> position AND hq_clean_line_0011(position) <> '';
-- squad.name
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'squad', id::text, org_id, 'name', 'blank', name, hq_clean_line_0011(name) FROM squad WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) = '';
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'squad', x.id::text, x.org_id, 'name', 'collision', x.name, hq_clean_line_0011(x.name) FROM squad x
  WHERE x.name IS NOT NULL AND hq_clean_line_0011(x.name) <> x.name AND hq_clean_line_0011(x.name) <> ''
    AND EXISTS (SELECT 1 FROM squad o WHERE o.org_id = x.org_id AND o.id <> x.id AND (lower(o.name) = lower(hq_clean_line_0011(x.name)) OR lower(hq_clean_line_0011(o.name)) = lower(hq_clean_line_0011(x.name))));
UPDATE squad SET name = hq_clean_line_0011(name) WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) <> '' AND id::text NOT IN (SELECT row_id FROM text_cleanup_kept WHERE table_name = 'squad' AND column_name = 'name');
-- squad.season
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'squad', id::text, org_id, 'season', 'blank', season, hq_clean_line_0011(season) FROM squad WHERE season IS NOT NULL AND hq_clean_line_0011(season) <> season AND hq_clean_line_0011(season) = '';
UPDATE squad SET season = hq_clean_line_0011(season) WHERE season IS NOT NULL AND hq_clean_line_0011(season) <> season AND hq_clean_line_0011(season) <> '';
-- injury.body_part
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'injury', id::text, org_id, 'body_part', 'blank', body_part, hq_clean_line_0011(body_part) FROM injury WHERE body_part IS NOT NULL AND hq_clean_line_0011(body_part) <> body_part AND hq_clean_line_0011(body_part) = '';
UPDATE injury SET body_part = hq_clean_line_0011(body_part) WHERE body_part IS NOT NULL AND hq_clean_line_0011(body_part) <> body_part AND hq_clean_line_0011(body_part) <> '';
-- screening.test
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'screening', id::text, org_id, 'test', 'blank', test, hq_clean_line_0011(test) FROM screening WHERE test IS NOT NULL AND hq_clean_line_0011(test) <> test AND hq_clean_line_0011(test) = '';
UPDATE screening SET test = hq_clean_line_0011(test) WHERE test IS NOT NULL AND hq_clean_line_0011(test) <> test AND hq_clean_line_0011(test) <> '';
-- screening.unit
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'screening', id::text, org_id, 'unit', 'blank', unit, hq_clean_line_0011(unit) FROM screening WHERE unit IS NOT NULL AND hq_clean_line_0011(unit) <> unit AND hq_clean_line_0011(unit) = '';
UPDATE screening SET unit = hq_clean_line_0011(unit) WHERE unit IS NOT NULL AND hq_clean_line_0011(unit) <> unit AND hq_clean_line_0011(unit) <> '';
-- training_session.kind
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'training_session', id::text, org_id, 'kind', 'blank', kind, hq_clean_line_0011(kind) FROM training_session WHERE kind IS NOT NULL AND hq_clean_line_0011(kind) <> kind AND hq_clean_line_0011(kind) = '';
UPDATE training_session SET kind = hq_clean_line_0011(kind) WHERE kind IS NOT NULL AND hq_clean_line_0011(kind) <> kind AND hq_clean_line_0011(kind) <> '';
-- rate_folder.name
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'rate_folder', id::text, org_id, 'name', 'blank', name, hq_clean_line_0011(name) FROM rate_folder WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) = '';
UPDATE rate_folder SET name = hq_clean_line_0011(name) WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) <> '';
-- rate_item.code
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'rate_item', id::text, org_id, 'code', 'blank', code, hq_clean_line_0011(code) FROM rate_item WHERE code IS NOT NULL AND hq_clean_line_0011(code) <> code AND hq_clean_line_0011(code) = '';
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'rate_item', x.id::text, x.org_id, 'code', 'collision', x.code, hq_clean_line_0011(x.code) FROM rate_item x
  WHERE x.code IS NOT NULL AND hq_clean_line_0011(x.code) <> x.code AND hq_clean_line_0011(x.code) <> ''
    AND EXISTS (SELECT 1 FROM rate_item o WHERE o.org_id = x.org_id AND o.id <> x.id AND (lower(o.code) = lower(hq_clean_line_0011(x.code)) OR lower(hq_clean_line_0011(o.code)) = lower(hq_clean_line_0011(x.code))));
UPDATE rate_item SET code = hq_clean_line_0011(code) WHERE code IS NOT NULL AND hq_clean_line_0011(code) <> code AND hq_clean_line_0011(code) <> '' AND id::text NOT IN (SELECT row_id FROM text_cleanup_kept WHERE table_name = 'rate_item' AND column_name = 'code');
-- rate_item.name
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'rate_item', id::text, org_id, 'name', 'blank', name, hq_clean_line_0011(name) FROM rate_item WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) = '';
UPDATE rate_item SET name = hq_clean_line_0011(name) WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) <> '';
-- device.name
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'device', id::text, org_id, 'name', 'blank', name, hq_clean_line_0011(name) FROM device WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) = '';
UPDATE device SET name = hq_clean_line_0011(name) WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) <> '';
-- app_user.display_name
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'app_user', id::text, org_id, 'display_name', 'blank', display_name, hq_clean_line_0011(display_name) FROM app_user WHERE display_name IS NOT NULL AND hq_clean_line_0011(display_name) <> display_name AND hq_clean_line_0011(display_name) = '';
UPDATE app_user SET display_name = hq_clean_line_0011(display_name) WHERE display_name IS NOT NULL AND hq_clean_line_0011(display_name) <> display_name AND hq_clean_line_0011(display_name) <> '';
-- capture_session.trial_name
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'capture_session', id::text, org_id, 'trial_name', 'blank', trial_name, hq_clean_line_0011(trial_name) FROM capture_session WHERE trial_name IS NOT NULL AND hq_clean_line_0011(trial_name) <> trial_name AND hq_clean_line_0011(trial_name) = '';
UPDATE capture_session SET trial_name = hq_clean_line_0011(trial_name) WHERE trial_name IS NOT NULL AND hq_clean_line_0011(trial_name) <> trial_name AND hq_clean_line_0011(trial_name) <> '';
-- rig.name
INSERT INTO text_cleanup_kept (table_name, row_id, org_id, column_name, reason, original, cleaned)
  SELECT 'rig', id::text, org_id, 'name', 'blank', name, hq_clean_line_0011(name) FROM rig WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) = '';
UPDATE rig SET name = hq_clean_line_0011(name) WHERE name IS NOT NULL AND hq_clean_line_0011(name) <> name AND hq_clean_line_0011(name) <> '';
-- Deferred constraint checks queued by the updates run now (ALTER TABLE refuses pending trigger events).
SET CONSTRAINTS ALL IMMEDIATE;
ALTER TABLE app_user ENABLE ROW LEVEL SECURITY;
ALTER TABLE app_user FORCE ROW LEVEL SECURITY;
ALTER TABLE athlete ENABLE ROW LEVEL SECURITY;
ALTER TABLE athlete FORCE ROW LEVEL SECURITY;
ALTER TABLE capture_session ENABLE ROW LEVEL SECURITY;
ALTER TABLE capture_session FORCE ROW LEVEL SECURITY;
ALTER TABLE device ENABLE ROW LEVEL SECURITY;
ALTER TABLE device FORCE ROW LEVEL SECURITY;
ALTER TABLE injury ENABLE ROW LEVEL SECURITY;
ALTER TABLE injury FORCE ROW LEVEL SECURITY;
ALTER TABLE rate_folder ENABLE ROW LEVEL SECURITY;
ALTER TABLE rate_folder FORCE ROW LEVEL SECURITY;
ALTER TABLE rate_item ENABLE ROW LEVEL SECURITY;
ALTER TABLE rate_item FORCE ROW LEVEL SECURITY;
ALTER TABLE rig ENABLE ROW LEVEL SECURITY;
ALTER TABLE rig FORCE ROW LEVEL SECURITY;
ALTER TABLE screening ENABLE ROW LEVEL SECURITY;
ALTER TABLE screening FORCE ROW LEVEL SECURITY;
ALTER TABLE squad ENABLE ROW LEVEL SECURITY;
ALTER TABLE squad FORCE ROW LEVEL SECURITY;
ALTER TABLE training_session ENABLE ROW LEVEL SECURITY;
ALTER TABLE training_session FORCE ROW LEVEL SECURITY;
ALTER TABLE text_cleanup_kept ENABLE ROW LEVEL SECURITY;
ALTER TABLE text_cleanup_kept FORCE ROW LEVEL SECURITY;

DROP FUNCTION hq_clean_line_0011(text);
`;
