/**
 * 0004: changeset proposals (shared/design/kinetix.md §3). A write planned by the assistant or an
 * MCP client is stored as a `changeset` row whose status is `proposed` or `needs_owner` (the row
 * later becomes `applied` through the same id), and one `changeset_proposal` row holding what the
 * approval needs: who proposed it and from where, the policy verdict and every decision, the
 * content hash an approval is bound to, and the decision (approver, time, failure reason).
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
CREATE TABLE changeset_proposal (
  id TEXT PRIMARY KEY REFERENCES changeset(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  source TEXT NOT NULL CHECK (source IN ('assistant', 'mcp')),
  run_id TEXT,
  tool_call_id TEXT,
  tool_name TEXT NOT NULL,
  title TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('proposed', 'needs_owner', 'applied', 'declined', 'failed')),
  verdict TEXT NOT NULL CHECK (verdict IN ('allow', 'needs_owner')),
  policy_json TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  decided_by TEXT REFERENCES app_user(id),
  decided_at TEXT,
  failure_json TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX changeset_proposal_org_status ON changeset_proposal(org_id, status, created_at);
CREATE INDEX changeset_proposal_user_status ON changeset_proposal(user_id, status, created_at);
`;
