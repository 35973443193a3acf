/**
 * 0016: stored one-line text follows the text rules (models/text.ts `plainText`, issue 13): values
 * written before the rules existed are cleaned as `cleanOneLine` does (remove control, zero-width
 * and text-direction characters, trim, NFKC-normalise, trim), in the one-line columns people type:
 * athlete name and position, squad name and season, injury body part, screening test and unit,
 * training session kind, fee folder name, fee item code and name, device name, user display name,
 * capture trial name, rig name. A value is never made blank, and a squad name or fee item code
 * (unique in the club, ignoring case) is never made equal to another row's: such a value keeps its
 * original and is listed in `text_cleanup_kept` (table, row, column, why, original, what it would
 * have become), which is the migration's log. Versions are not bumped (HQ 0011 makes the same
 * change to its rows). `ai_clean_line(text)` is the SQL function main/data/db.ts registers on every
 * connection before migrating (models/text.ts `cleanOneLine`). SQLite `lower()` folds ASCII only,
 * as the services' case-insensitive uniqueness checks do.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
CREATE TABLE text_cleanup_kept (
  table_name TEXT NOT NULL,
  row_id TEXT NOT NULL,
  column_name TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (reason IN ('blank', 'collision')),
  original TEXT NOT NULL,
  cleaned TEXT NOT NULL,
  PRIMARY KEY (table_name, row_id, column_name)
);
-- athlete.name
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'athlete', id, 'name', 'blank', name, ai_clean_line(name) FROM athlete WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) = '';
UPDATE athlete SET name = ai_clean_line(name) WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) <> '';
-- athlete.position
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'athlete', id, 'position', 'blank', position, ai_clean_line(position) FROM athlete WHERE position IS NOT NULL AND ai_clean_line(position) <> position AND ai_clean_line(position) = '';
UPDATE athlete SET position = ai_clean_line(position) WHERE position IS NOT NULL AND ai_clean_line(position) <> position AND ai_clean_line(position) <> '';
-- squad.name
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'squad', id, 'name', 'blank', name, ai_clean_line(name) FROM squad WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) = '';
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'squad', x.id, 'name', 'collision', x.name, ai_clean_line(x.name) FROM squad x
  WHERE x.name IS NOT NULL AND ai_clean_line(x.name) <> x.name AND ai_clean_line(x.name) <> ''
    AND EXISTS (SELECT 1 FROM squad o WHERE o.org_id = x.org_id AND o.id <> x.id AND (lower(o.name) = lower(ai_clean_line(x.name)) OR lower(ai_clean_line(o.name)) = lower(ai_clean_line(x.name))));
UPDATE squad SET name = ai_clean_line(name) WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) <> '' AND id NOT IN (SELECT row_id FROM text_cleanup_kept WHERE table_name = 'squad' AND column_name = 'name');
-- squad.season
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'squad', id, 'season', 'blank', season, ai_clean_line(season) FROM squad WHERE season IS NOT NULL AND ai_clean_line(season) <> season AND ai_clean_line(season) = '';
UPDATE squad SET season = ai_clean_line(season) WHERE season IS NOT NULL AND ai_clean_line(season) <> season AND ai_clean_line(season) <> '';
-- injury.body_part
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'injury', id, 'body_part', 'blank', body_part, ai_clean_line(body_part) FROM injury WHERE body_part IS NOT NULL AND ai_clean_line(body_part) <> body_part AND ai_clean_line(body_part) = '';
UPDATE injury SET body_part = ai_clean_line(body_part) WHERE body_part IS NOT NULL AND ai_clean_line(body_part) <> body_part AND ai_clean_line(body_part) <> '';
-- screening.test
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'screening', id, 'test', 'blank', test, ai_clean_line(test) FROM screening WHERE test IS NOT NULL AND ai_clean_line(test) <> test AND ai_clean_line(test) = '';
UPDATE screening SET test = ai_clean_line(test) WHERE test IS NOT NULL AND ai_clean_line(test) <> test AND ai_clean_line(test) <> '';
-- screening.unit
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'screening', id, 'unit', 'blank', unit, ai_clean_line(unit) FROM screening WHERE unit IS NOT NULL AND ai_clean_line(unit) <> unit AND ai_clean_line(unit) = '';
UPDATE screening SET unit = ai_clean_line(unit) WHERE unit IS NOT NULL AND ai_clean_line(unit) <> unit AND ai_clean_line(unit) <> '';
-- training_session.kind
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'training_session', id, 'kind', 'blank', kind, ai_clean_line(kind) FROM training_session WHERE kind IS NOT NULL AND ai_clean_line(kind) <> kind AND ai_clean_line(kind) = '';
UPDATE training_session SET kind = ai_clean_line(kind) WHERE kind IS NOT NULL AND ai_clean_line(kind) <> kind AND ai_clean_line(kind) <> '';
-- rate_folder.name
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'rate_folder', id, 'name', 'blank', name, ai_clean_line(name) FROM rate_folder WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) = '';
UPDATE rate_folder SET name = ai_clean_line(name) WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) <> '';
-- rate_item.code
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'rate_item', id, 'code', 'blank', code, ai_clean_line(code) FROM rate_item WHERE code IS NOT NULL AND ai_clean_line(code) <> code AND ai_clean_line(code) = '';
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'rate_item', x.id, 'code', 'collision', x.code, ai_clean_line(x.code) FROM rate_item x
  WHERE x.code IS NOT NULL AND ai_clean_line(x.code) <> x.code AND ai_clean_line(x.code) <> ''
    AND EXISTS (SELECT 1 FROM rate_item o WHERE o.org_id = x.org_id AND o.id <> x.id AND (lower(o.code) = lower(ai_clean_line(x.code)) OR lower(ai_clean_line(o.code)) = lower(ai_clean_line(x.code))));
UPDATE rate_item SET code = ai_clean_line(code) WHERE code IS NOT NULL AND ai_clean_line(code) <> code AND ai_clean_line(code) <> '' AND id NOT IN (SELECT row_id FROM text_cleanup_kept WHERE table_name = 'rate_item' AND column_name = 'code');
-- rate_item.name
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'rate_item', id, 'name', 'blank', name, ai_clean_line(name) FROM rate_item WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) = '';
UPDATE rate_item SET name = ai_clean_line(name) WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) <> '';
-- device.name
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'device', id, 'name', 'blank', name, ai_clean_line(name) FROM device WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) = '';
UPDATE device SET name = ai_clean_line(name) WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) <> '';
-- app_user.display_name
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'app_user', id, 'display_name', 'blank', display_name, ai_clean_line(display_name) FROM app_user WHERE display_name IS NOT NULL AND ai_clean_line(display_name) <> display_name AND ai_clean_line(display_name) = '';
UPDATE app_user SET display_name = ai_clean_line(display_name) WHERE display_name IS NOT NULL AND ai_clean_line(display_name) <> display_name AND ai_clean_line(display_name) <> '';
-- capture_session.trial_name
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'capture_session', id, 'trial_name', 'blank', trial_name, ai_clean_line(trial_name) FROM capture_session WHERE trial_name IS NOT NULL AND ai_clean_line(trial_name) <> trial_name AND ai_clean_line(trial_name) = '';
UPDATE capture_session SET trial_name = ai_clean_line(trial_name) WHERE trial_name IS NOT NULL AND ai_clean_line(trial_name) <> trial_name AND ai_clean_line(trial_name) <> '';
-- rig.name
INSERT INTO text_cleanup_kept (table_name, row_id, column_name, reason, original, cleaned)
  SELECT 'rig', id, 'name', 'blank', name, ai_clean_line(name) FROM rig WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) = '';
UPDATE rig SET name = ai_clean_line(name) WHERE name IS NOT NULL AND ai_clean_line(name) <> name AND ai_clean_line(name) <> '';
`;
