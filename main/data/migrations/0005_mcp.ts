/**
 * 0005: MCP client tokens (issue 4 item 5). An MCP server process is bound to exactly one local
 * user by a token issued in the app; only the token's SHA-256 hash is stored (the token itself is
 * shown once). Tokens are revocable and may expire. Local credentials: never synced, never part
 * of a changeset.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
CREATE TABLE mcp_token (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  label TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  token_hint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL REFERENCES app_user(id),
  expires_at TEXT,
  revoked_at TEXT,
  revoked_by TEXT REFERENCES app_user(id),
  last_used_at TEXT
);
CREATE UNIQUE INDEX mcp_token_hash ON mcp_token(token_hash);
CREATE INDEX mcp_token_user ON mcp_token(org_id, user_id);
`;
