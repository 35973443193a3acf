/**
 * HQ 0016: which device token issued an HQ sign-in code (issue 12 final review: revoking a stolen
 * administrator's device left valid the codes minted with it for other accounts).
 * `hq_enrolment_code.issued_by_device`: the `hq_device` whose token asked for the code (null: the
 * operator's command, or a code issued before this migration, which expires within 24 hours).
 * Revoking a device revokes the unused codes it issued, as well as its account's own
 * (sync/auth/devices.ts `revoke`).
 * Forward-only: never edit once shipped.
 */
export const sql = `
ALTER TABLE hq_enrolment_code ADD COLUMN issued_by_device uuid REFERENCES hq_device(id);
CREATE INDEX hq_enrolment_code_issuing_device ON hq_enrolment_code(issued_by_device) WHERE issued_by_device IS NOT NULL;
`;
