/**
 * 0018: who discarded a changeset that never reached HQ (issue 12 review B2). A discarded pending
 * or rejected changeset stays in `outbox` (its payload kept); `sync_upload.discarded_by` now says
 * which signed-in user of this device discarded it, beside `decided_at` (when). Null for those
 * discarded before this migration.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE sync_upload ADD COLUMN discarded_by TEXT;
`;
