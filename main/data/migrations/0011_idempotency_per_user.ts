/**
 * 0011: one idempotency key → at most one changeset of a user, pending or applied.
 * - `changeset.request_hash`: SHA-256 of the request that produced the changeset (verb and input,
 *   canonical JSON), stored for a proposal as well as for an applied change, so a re-sent form
 *   with the same key is matched to its first outcome (a pending proposal or the applied result)
 *   and the same key with other input is refused. Filled from the applied result's
 *   `request_hash` where one was stored.
 * - The key's unique index becomes per organisation *and user* (a client's keys are its own),
 *   and now also covers proposals (their rows carry the form's key): two processes cannot both
 *   store a change under one key.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE changeset ADD COLUMN request_hash TEXT;
UPDATE changeset SET request_hash = json_extract(result_json, '$.request_hash') WHERE result_json IS NOT NULL AND json_valid(result_json);
DROP INDEX changeset_idem;
CREATE UNIQUE INDEX changeset_idem ON changeset(org_id, user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
`;
