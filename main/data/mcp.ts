/**
 * Data access for MCP client tokens (migration 0005). Only hashes are stored; callers in
 * main/mcp/ hash the token before calling these. Values are always bound parameters.
 */
import type { Db } from './db';
import { sqlite } from './sqlite';

/** A `mcp_token` row (times are ISO-8601 UTC; never holds the token itself). */
export interface McpTokenRow {
  id: string;
  org_id: string;
  user_id: string;
  label: string;
  /** SHA-256 (hex) of the token. */
  token_hash: string;
  /** The token's first characters, to tell tokens apart in lists (not enough to use it). */
  token_hint: string;
  created_at: string;
  created_by: string;
  expires_at: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  last_used_at: string | null;
  /** main/data/identity.ts `accountStamp` of the token's user at issue (migration 0017, which stamped the tokens issued before it); null only where its user row was gone. */
  account_stamp: string | null;
}

/** Insert a newly issued token row. */
export function insertMcpToken(db: Db, row: Omit<McpTokenRow, 'revoked_at' | 'revoked_by' | 'last_used_at'>): void {
  sqlite(db)
    .prepare(
      'INSERT INTO mcp_token (id, org_id, user_id, label, token_hash, token_hint, created_at, created_by, expires_at, account_stamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    )
    .run(row.id, row.org_id, row.user_id, row.label, row.token_hash, row.token_hint, row.created_at, row.created_by, row.expires_at, row.account_stamp);
}

/** The token row with this hash (revoked and expired rows included; the caller decides), or null. */
export function findMcpTokenByHash(db: Db, tokenHash: string): McpTokenRow | null {
  return (sqlite(db).prepare('SELECT * FROM mcp_token WHERE token_hash = ?').get(tokenHash) as McpTokenRow | undefined) ?? null;
}

/** The token row by id within an org, or null. */
export function findMcpToken(db: Db, orgId: string, id: string): McpTokenRow | null {
  return (sqlite(db).prepare('SELECT * FROM mcp_token WHERE org_id = ? AND id = ?').get(orgId, id) as McpTokenRow | undefined) ?? null;
}

/** Tokens of an org, newest first; only `userId`'s when given. */
export function listMcpTokens(db: Db, orgId: string, userId?: string): McpTokenRow[] {
  if (userId)
    return sqlite(db).prepare('SELECT * FROM mcp_token WHERE org_id = ? AND user_id = ? ORDER BY created_at DESC, id DESC').all(orgId, userId) as McpTokenRow[];
  return sqlite(db).prepare('SELECT * FROM mcp_token WHERE org_id = ? ORDER BY created_at DESC, id DESC').all(orgId) as McpTokenRow[];
}

/** Mark a token revoked (idempotent: an already revoked token keeps its first revocation). Returns true if this call revoked it. */
export function revokeMcpToken(db: Db, orgId: string, id: string, by: string, at: string): boolean {
  return (
    sqlite(db).prepare('UPDATE mcp_token SET revoked_at = ?, revoked_by = ? WHERE org_id = ? AND id = ? AND revoked_at IS NULL').run(at, by, orgId, id)
      .changes === 1
  );
}

/** Record that a token was used (server start). */
export function touchMcpToken(db: Db, id: string, at: string): void {
  sqlite(db).prepare('UPDATE mcp_token SET last_used_at = ? WHERE id = ?').run(at, id);
}
