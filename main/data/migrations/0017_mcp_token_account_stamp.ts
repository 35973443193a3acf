/**
 * 0017: an MCP token remembers the account it was issued for (issue 13 re-review): `account_stamp`
 * is main/data/identity.ts `accountStamp` (role, linked athlete, PIN hash, active flag) at issue.
 * A token whose account changed since is refused, as a signed-in session and an assistant run
 * are. Tokens issued before this migration hold NULL and are stamped at their first use.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE mcp_token ADD COLUMN account_stamp TEXT;
`;
