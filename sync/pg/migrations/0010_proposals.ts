/**
 * HQ 0010: changes waiting for an owner travel between devices (issue 12). A change the policy
 * marks *needs owner*, proposed on one device, is recorded here (`POST /v1/proposals`, by the
 * proposing device) and synced as the `hq_proposal` shape to every staff device of the org, so an
 * owner signed in on any of them sees it, with who proposed it, when, from which device, and the
 * same diff. HQ is the arbiter of its outcome: the owner's approval arrives as the changeset itself
 * (POST /v1/changesets with the proposal's id as changeset id), applied at most once under a lock
 * of this row; a decline arrives as a decision (POST /v1/proposals). `status`: `needs_owner`
 * (waiting), `applied`, `declined`, `failed` (HQ refused the approved change: `outcome_json`).
 * `content_hash`: SHA-256 of the canonical JSON of `{verb, changes}` (what the owner reviews; the
 * device's proposal hash). `tables`: the tables the diff touches, as `,rate_item,` (the shape
 * proxy sends a proposal only to devices whose role may read every one of them). Columns match the device's replica table (device migration 0015).
 * Row-level security: the org's rows, none for athlete accounts. Forward-only.
 */
export const sql = `
CREATE TABLE hq_proposal (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organization(id),
  user_id uuid NOT NULL REFERENCES app_user(id),
  device_id uuid NOT NULL REFERENCES hq_device(id),
  device_name text NOT NULL,
  source text NOT NULL CHECK (source IN ('assistant', 'mcp', 'page')),
  tool_name text NOT NULL,
  title text NOT NULL,
  verb text NOT NULL,
  summary text NOT NULL,
  changes_json text NOT NULL,
  tables text NOT NULL,
  policy_json text NOT NULL,
  content_hash text NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
  status text NOT NULL CHECK (status IN ('needs_owner', 'applied', 'declined', 'failed')),
  decided_by uuid REFERENCES app_user(id),
  decided_at timestamptz,
  decided_device_name text,
  outcome_json text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1
);
CREATE INDEX hq_proposal_org_status ON hq_proposal(org_id, status, created_at);
ALTER TABLE hq_proposal ENABLE ROW LEVEL SECURITY;
ALTER TABLE hq_proposal FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON hq_proposal TO hq_app, hq_owner USING (org_id = hq_org() AND hq_athlete() IS NULL) WITH CHECK (org_id = hq_org() AND hq_athlete() IS NULL);
CREATE POLICY shape_reader ON hq_proposal FOR SELECT TO hq_replication USING (true);
REVOKE ALL ON hq_proposal FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE ON hq_proposal TO hq_app;
GRANT SELECT ON hq_proposal TO hq_replication;
ALTER TABLE hq_proposal REPLICA IDENTITY FULL;
ALTER PUBLICATION hq_sync ADD TABLE hq_proposal;
`;
