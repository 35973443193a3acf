/**
 * HQ 0005: owner approvals as acts HQ can verify (issue 12, sync.md "HQ trusts nothing the device
 * says"). A changeset the policy marks *needs owner* is applied only when HQ can see that an
 * active owner approved exactly that content: either the owner's own device token uploaded the
 * changeset, or the owner's own device token recorded an approval here first
 * (`POST /v1/approvals`), naming the client changeset id and its content hash (SHA-256 of the
 * canonical JSON of verb + changes, sync/write/apply.ts `uploadContentHash`). The approval is
 * kept with the device that recorded it. One approval per (changeset, approver); never updated.
 * Row-level security: the org's rows, none for athlete accounts. The app role may read and insert.
 * Forward-only: never edit once shipped.
 */
export const sql = `
CREATE TABLE hq_approval (
  changeset_id uuid NOT NULL,
  approver_id uuid NOT NULL REFERENCES app_user(id),
  org_id uuid NOT NULL REFERENCES organization(id),
  content_hash text NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
  device_id uuid NOT NULL REFERENCES hq_device(id),
  approved_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (changeset_id, approver_id)
);
CREATE INDEX hq_approval_org_received ON hq_approval(org_id, received_at);
ALTER TABLE hq_approval ENABLE ROW LEVEL SECURITY;
ALTER TABLE hq_approval FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON hq_approval TO hq_app, hq_owner USING (org_id = hq_org() AND hq_athlete() IS NULL) WITH CHECK (org_id = hq_org() AND hq_athlete() IS NULL);
REVOKE ALL ON hq_approval FROM PUBLIC;
GRANT SELECT, INSERT ON hq_approval TO hq_app;
`;
