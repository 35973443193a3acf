/**
 * HQ 0007: one live wellness questionnaire per athlete and day, as the device's migration 0014
 * makes it, so a device and HQ agree on what a duplicate is. Existing duplicates (more than one
 * live row for one org, athlete and date) keep the newest row (latest `updated_at`, then highest
 * `version`, then highest id: UUIDv7 ids sort by creation time; the same order as the device) and
 * retire every other one by soft delete (`deleted_at` = now()); nothing is removed, and each
 * retired row is listed in `wellness_duplicate_retired` (retired id, the id kept in its place,
 * when). Then the partial unique index `wellness_one_per_day` on (org_id, athlete_id, date) over
 * live rows. An upload that would break it is rejected with a clear message (sync/write/apply.ts).
 * The owner lifts FORCE row-level security on wellness for the back-fill (it runs across every
 * org, as HQ 0003 does) and restores it in the same transaction. The audit table is HQ-internal:
 * row-level security by org, no privileges for the app role.
 * Forward-only: never edit once shipped.
 */
export const sql = `
CREATE TABLE wellness_duplicate_retired (
  retired_id uuid PRIMARY KEY REFERENCES wellness(id),
  kept_id uuid NOT NULL REFERENCES wellness(id),
  org_id uuid NOT NULL REFERENCES organization(id),
  retired_at timestamptz NOT NULL
);
ALTER TABLE wellness_duplicate_retired ENABLE ROW LEVEL SECURITY;
ALTER TABLE wellness_duplicate_retired FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON wellness_duplicate_retired TO hq_app, hq_owner USING (org_id = hq_org() AND hq_athlete() IS NULL) WITH CHECK (org_id = hq_org() AND hq_athlete() IS NULL);
REVOKE ALL ON wellness_duplicate_retired FROM PUBLIC;

ALTER TABLE wellness NO FORCE ROW LEVEL SECURITY;
ALTER TABLE wellness DISABLE ROW LEVEL SECURITY;
ALTER TABLE wellness_duplicate_retired NO FORCE ROW LEVEL SECURITY;
ALTER TABLE wellness_duplicate_retired DISABLE ROW LEVEL SECURITY;

INSERT INTO wellness_duplicate_retired (retired_id, kept_id, org_id, retired_at)
SELECT r.id, r.kept_id, r.org_id, now()
FROM (
  SELECT w.id, w.org_id,
    first_value(w.id) OVER (PARTITION BY w.org_id, w.athlete_id, w.date ORDER BY w.updated_at DESC, w.version DESC, w.id DESC) AS kept_id,
    row_number() OVER (PARTITION BY w.org_id, w.athlete_id, w.date ORDER BY w.updated_at DESC, w.version DESC, w.id DESC) AS rn
  FROM wellness w WHERE w.deleted_at IS NULL
) r
WHERE r.rn > 1;

UPDATE wellness w SET deleted_at = d.retired_at FROM wellness_duplicate_retired d WHERE d.retired_id = w.id AND w.deleted_at IS NULL;

CREATE UNIQUE INDEX wellness_one_per_day ON wellness(org_id, athlete_id, date) WHERE deleted_at IS NULL;

ALTER TABLE wellness ENABLE ROW LEVEL SECURITY;
ALTER TABLE wellness FORCE ROW LEVEL SECURITY;
ALTER TABLE wellness_duplicate_retired ENABLE ROW LEVEL SECURITY;
ALTER TABLE wellness_duplicate_retired FORCE ROW LEVEL SECURITY;
`;
