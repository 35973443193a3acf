/**
 * HQ 0014: an HQ sign-in code ends when its account changes (issue 12 re-review: an admin's code
 * for an admin account still signed it in after the owner made it a doctor, with a PIN any staff
 * device's hash gives away). `hq_enrolment_code.account_stamp` holds the account's stamp when the
 * code was issued (`hq_account_stamp(role, linked_athlete_id, pin_hash, active)`, HQ 0012, as
 * device tokens keep); a code is spent only while the account's stamp is still that one, so a
 * role change, a relink, a PIN reset or a deactivation ends every code issued before it. Codes
 * issued before this migration have none and no longer sign anyone in (issue a new one).
 * Forward-only: never edit once shipped.
 */
export const sql = `
ALTER TABLE hq_enrolment_code ADD COLUMN account_stamp text CHECK (account_stamp ~ '^[0-9a-f]{64}$');
`;
