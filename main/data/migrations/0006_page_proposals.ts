/**
 * 0006: a change prepared on one of the app's own pages (an entry form) can wait for review like
 * an assistant's or an MCP client's: `changeset_proposal.source` also accepts `page`. A form
 * whose change touches more than one row or an RTP sign-off, or that the policy engine marks
 * *needs owner*, is stored as a proposal and applied through the same approval path
 * (main/kinetix/proposals.ts). SQLite cannot alter a CHECK constraint, so the table is rebuilt
 * (nothing references it; its indexes are recreated). Forward-only.
 */
export const sql = `
CREATE TABLE changeset_proposal_new (
  id TEXT PRIMARY KEY REFERENCES changeset(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  source TEXT NOT NULL CHECK (source IN ('assistant', 'mcp', 'page')),
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
INSERT INTO changeset_proposal_new SELECT id, org_id, user_id, source, run_id, tool_call_id, tool_name, title, status, verdict, policy_json, content_hash, decided_by, decided_at, failure_json, created_at, updated_at FROM changeset_proposal;
DROP TABLE changeset_proposal;
ALTER TABLE changeset_proposal_new RENAME TO changeset_proposal;
CREATE INDEX changeset_proposal_org_status ON changeset_proposal(org_id, status, created_at);
CREATE INDEX changeset_proposal_user_status ON changeset_proposal(user_id, status, created_at);
`;
