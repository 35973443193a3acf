/**
 * HQ 0013: one-time HQ sign-in codes (issue 12 review blocker B3). Every staff device holds the
 * club's PIN hashes (the `app_user` shape) so that a shared clinic laptop signs anyone in offline;
 * a 4-digit PIN is then recovered from any device's SQLite in seconds. So the PIN stays the
 * device's offline credential, and an HQ device token (POST /v1/devices) needs email + PIN + a
 * code from this table: issued by the account itself (from a device signed in to HQ), by an owner
 * or administrator who may manage the account, or by the operator (`npm run hq -- enrolment-code`);
 * single use; expiring; bound to one account. Only the code's SHA-256 is stored.
 *
 * - `issued_by`: the user who issued it (null: the operator on the HQ machine).
 * - `used_at` / `used_by_device`: set in the same transaction that creates the device token.
 * - `revoked_at`: set when a newer code is issued for the same account (one live code per account).
 *
 * Row-level security as on `hq_device`: the caller's org; an athlete sees only their own codes.
 * The app role may SELECT, INSERT and UPDATE (never DELETE: the table is the audit of who let whom
 * in). Not synced to devices (not in the publication).
 * Forward-only: never edit once shipped.
 */
export const sql = `
CREATE TABLE hq_enrolment_code (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  user_id uuid NOT NULL REFERENCES app_user(id),
  code_hash text NOT NULL UNIQUE CHECK (code_hash ~ '^[0-9a-f]{64}$'),
  issued_by uuid REFERENCES app_user(id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  used_by_device uuid REFERENCES hq_device(id),
  revoked_at timestamptz,
  CHECK (expires_at > created_at),
  CHECK ((used_at IS NULL) = (used_by_device IS NULL))
);
CREATE INDEX hq_enrolment_code_user ON hq_enrolment_code(org_id, user_id);

ALTER TABLE hq_enrolment_code ENABLE ROW LEVEL SECURITY;
ALTER TABLE hq_enrolment_code FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON hq_enrolment_code TO hq_app, hq_owner
  USING (org_id = hq_org() AND (hq_athlete() IS NULL OR user_id = hq_user()))
  WITH CHECK (org_id = hq_org() AND (hq_athlete() IS NULL OR user_id = hq_user()));
REVOKE ALL ON hq_enrolment_code FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE ON hq_enrolment_code TO hq_app;
`;
