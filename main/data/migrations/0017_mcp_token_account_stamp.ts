/**
 * 0017: an MCP token remembers the account it was issued for (issue 13 re-review): `account_stamp`
 * is main/data/account-stamp.ts `accountStampOf` (role, linked athlete, PIN hash, active flag) at
 * issue. A token whose account changed since is refused, as a signed-in session and an assistant
 * run are. Tokens issued before this migration are stamped here, from their account as it is now
 * (`ai_account_stamp`, registered by main/data/db.ts), so a change after the upgrade ends them too.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE mcp_token ADD COLUMN account_stamp TEXT;
UPDATE mcp_token SET account_stamp = (
  SELECT ai_account_stamp(u.role, u.linked_athlete_id, u.pin_hash, u.active) FROM app_user u WHERE u.id = mcp_token.user_id
);
`;
