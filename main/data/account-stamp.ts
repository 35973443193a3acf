/**
 * The account stamp: SHA-256 (hex) of what a signed-in session, an assistant run and an MCP token
 * stand on — the account's role, linked athlete, PIN hash and active flag (issue 13 re-reviews).
 * Pure, so the same value comes from a decoded user row (main/data/identity.ts `accountStamp`) and
 * from SQL during a migration (`ai_account_stamp`, main/data/db.ts `registerSqlFunctions`).
 */
import { createHash } from 'node:crypto';

/** The stamp of these account fields; `active` as stored (boolean, or SQLite's 1/0). */
export function accountStampOf(role: string, linkedAthleteId: string | null, pinHash: string | null, active: boolean | number): string {
  return createHash('sha256')
    .update([role, linkedAthleteId ?? '', pinHash ?? '', active ? '1' : '0'].join('\0'))
    .digest('hex');
}
