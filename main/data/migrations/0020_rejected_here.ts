/**
 * 0020: which conflicts this device decided itself (issue 12 review note). A changeset made on top
 * of one HQ rejected is rejected with it here, unsent (main/data/sync.ts `rejectDependents`); the
 * Sync page said "refused by HQ" and "HQ said" for it although HQ never saw it.
 * `sync_upload.rejected_here`: 1 for such a rejection, 0 for HQ's own answer (every earlier row).
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE sync_upload ADD COLUMN rejected_here INTEGER NOT NULL DEFAULT 0 CHECK (rejected_here IN (0, 1));
`;
