/**
 * Test and benchmark helper: a one-time HQ sign-in code for an account, issued as the HQ operator
 * issues the first owner's (`npm run hq -- enrolment-code`, sync/auth/enrolment-codes.ts
 * `issueOperatorEnrolmentCode`), over the app role's connection `appUrl`. Tests that sign a device
 * in through POST /v1/devices take one per sign-in (a code works once).
 */
import { issueOperatorEnrolmentCode } from '../auth/enrolment-codes';
import { createPool } from '../pg/db';

/**
 * Issue a code for the account with `email` (valid 24 hours, once; revokes that account's earlier unused code).
 * @throws NotFound (no such account), Forbidden (deactivated or unlinked athlete account)
 */
export async function enrolmentCodeFor(appUrl: string, email: string): Promise<string> {
  const pool = createPool(appUrl, 1);
  try {
    return (await issueOperatorEnrolmentCode(pool, email)).code;
  } finally {
    await pool.end();
  }
}
