/**
 * 0014: one live wellness questionnaire per athlete and day (issue 13). Two processes submitting
 * the same athlete's day at the same moment both planned an insert (neither saw the other's row)
 * and both rows were stored; nothing in the schema stopped it.
 * - Existing duplicates (more than one live row for one org, athlete and date): the newest row is
 *   kept (latest `updated_at`, then highest `version`, then highest id — UUIDv7 ids sort by
 *   creation time) and every other one is retired by soft delete (`deleted_at` = the migration
 *   time). Nothing is lost: the retired rows stay in the table, and each is listed in
 *   `wellness_duplicate_retired` (retired id, the id kept in its place, when) for audit or a manual
 *   restore.
 * - Then a partial unique index `wellness_one_per_day` on (org_id, athlete_id, date) over live
 *   rows only (a day undone by soft delete may be submitted again). The write path turns its
 *   violation into a Conflict (main/data/changesets.ts); HQ carries the same index (HQ 0007).
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
CREATE TABLE wellness_duplicate_retired (
  retired_id TEXT PRIMARY KEY REFERENCES wellness(id),
  kept_id TEXT NOT NULL REFERENCES wellness(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  retired_at TEXT NOT NULL
);

INSERT INTO wellness_duplicate_retired (retired_id, kept_id, org_id, retired_at)
SELECT r.id, r.kept_id, r.org_id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM (
  SELECT w.id, w.org_id,
    first_value(w.id) OVER (PARTITION BY w.org_id, w.athlete_id, w.date ORDER BY w.updated_at DESC, w.version DESC, w.id DESC) AS kept_id,
    row_number() OVER (PARTITION BY w.org_id, w.athlete_id, w.date ORDER BY w.updated_at DESC, w.version DESC, w.id DESC) AS rn
  FROM wellness w WHERE w.deleted_at IS NULL
) r
WHERE r.rn > 1;

UPDATE wellness SET deleted_at = (SELECT d.retired_at FROM wellness_duplicate_retired d WHERE d.retired_id = wellness.id)
WHERE id IN (SELECT retired_id FROM wellness_duplicate_retired) AND deleted_at IS NULL;

CREATE UNIQUE INDEX wellness_one_per_day ON wellness(org_id, athlete_id, date) WHERE deleted_at IS NULL;
`;
