/**
 * 0019: what each optimistic row change was made on top of (issue 12: a device's expected row
 * versions count its own changes HQ has not confirmed yet, and such a version can coincide with one
 * HQ reached through another device's write). `sync_optimistic.base_changeset_id`: when a change
 * to a row was made while another changeset of this device still held that row (pending or not yet
 * delivered back), that changeset's id. The upload names it (models/sync.ts `based_on`) and HQ
 * applies the change only if it applied that changeset and gave the row the expected version.
 * Null for a change made on HQ's own row, and for rows held before this migration.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE sync_optimistic ADD COLUMN base_changeset_id TEXT;
`;
