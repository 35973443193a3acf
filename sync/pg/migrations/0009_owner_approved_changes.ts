/**
 * HQ 0009: the history the cumulative price rule reads (models/policy.ts `numericBaselines`,
 * issue 13). `hq_changeset.owner_approved_by` names the owner whose approval (or own act) HQ
 * verified when it applied the changeset (sync/write/approvals.ts: the owner's own device token
 * uploaded it, or recorded an approval of its id and content); null when none was proven. From
 * this migration on, `hq_changeset.changes` of an applied changeset holds the changes as HQ applied
 * them (each `before` read from HQ's own row), and a GIN index finds a row's changes in it.
 * Forward-only: never edit once shipped.
 */
export const sql = `
ALTER TABLE hq_changeset ADD COLUMN owner_approved_by uuid REFERENCES app_user(id);
CREATE INDEX hq_changeset_changes ON hq_changeset USING gin (changes jsonb_path_ops);
`;
