/**
 * HQ 0008: content hashes carry their version (models/sync.ts `CONTENT_HASH_VERSION`). Version 1
 * hashed `{verb, changes}` only, so an owner approval or a sign-off attestation recorded for a
 * changeset still verified after its author (`user_id`) or approver (`approved_by`) was changed.
 * Version 2 hashes them too. Rows stored before this migration keep version 1 and are verified
 * against the version 1 hash of an upload (a pending approval recorded before the upgrade still
 * counts); every row stored from now on is version 2. Forward-only: never edit once shipped.
 */
export const sql = `
ALTER TABLE hq_approval ADD COLUMN hash_version smallint NOT NULL DEFAULT 1 CHECK (hash_version IN (1, 2));
ALTER TABLE hq_approval ALTER COLUMN hash_version SET DEFAULT 2;
ALTER TABLE hq_changeset ADD COLUMN hash_version smallint NOT NULL DEFAULT 1 CHECK (hash_version IN (1, 2));
ALTER TABLE hq_changeset ALTER COLUMN hash_version SET DEFAULT 2;
`;
