/**
 * 0013: free text people type stays out of generated text (issue 9 §12).
 * - `athlete.deactivation_reason`: why an athlete was deactivated, as typed ('' when none). It was
 *   appended to the changeset summary ("Deactivate athlete <name> (<reason>)"), so it reached the
 *   activity log, Undo's summary and every model cleared for summaries. It is now its own
 *   `clinical-restricted` record-text column (main/kinetix/classification.ts).
 * - Existing data: for a still deactivated athlete, the reason of their latest applied
 *   deactivation whose summary reads exactly "Deactivate athlete <current name> (<reason>)" moves
 *   into the column; then every deactivation summary (changeset and activity, and "Undo: …" of
 *   one) is rewritten from structured fields only: "Deactivate athlete <current name>".
 * - `kinetix_run.cleared_for_json`: the provider clearance a run was sent under (JSON array of
 *   classes; NULL for runs before this migration, read as cleared for everything, fail closed), so a
 *   later turn under a lower clearance does not replay an answer written from data it may no
 *   longer see.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE athlete ADD COLUMN deactivation_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE kinetix_run ADD COLUMN cleared_for_json TEXT;

UPDATE athlete SET deactivation_reason = (
  SELECT substr(c.summary, length('Deactivate athlete ' || athlete.name || ' (') + 1, length(c.summary) - length('Deactivate athlete ' || athlete.name || ' (') - 1)
  FROM changeset c
  WHERE c.verb = 'athletes.deactivate' AND c.status = 'applied' AND json_extract(c.changes_json, '$[0].id') = athlete.id
  ORDER BY c.applied_at DESC LIMIT 1
)
WHERE status = 'deactivated' AND EXISTS (
  SELECT 1 FROM changeset c
  WHERE c.verb = 'athletes.deactivate' AND c.status = 'applied' AND json_extract(c.changes_json, '$[0].id') = athlete.id
    AND c.applied_at = (SELECT max(c2.applied_at) FROM changeset c2 WHERE c2.verb = 'athletes.deactivate' AND c2.status = 'applied' AND json_extract(c2.changes_json, '$[0].id') = athlete.id)
    AND substr(c.summary, 1, length('Deactivate athlete ' || athlete.name || ' (')) = 'Deactivate athlete ' || athlete.name || ' ('
    AND substr(c.summary, -1) = ')'
);

UPDATE changeset SET summary = 'Deactivate athlete ' || coalesce((SELECT a.name FROM athlete a WHERE a.id = json_extract(changeset.changes_json, '$[0].id')), '')
WHERE verb = 'athletes.deactivate';

UPDATE changeset SET summary = 'Undo: ' || (SELECT o.summary FROM changeset o WHERE o.id = changeset.undo_of)
WHERE verb = 'changesets.undo' AND undo_of IN (SELECT id FROM changeset WHERE verb = 'athletes.deactivate');

UPDATE activity SET summary = (SELECT c.summary FROM changeset c WHERE c.id = activity.changeset_id)
WHERE changeset_id IN (SELECT id FROM changeset WHERE verb = 'athletes.deactivate' OR (verb = 'changesets.undo' AND undo_of IN (SELECT id FROM changeset WHERE verb = 'athletes.deactivate')));
`;
