/**
 * 0008: every pose_metric reading carries its conditions (issue 14): a JSON array of
 * {code, detail} — each failed quality check (camera synchronisation, segment lengths, plausible
 * range, 2D confidence, …) and informational ones (static trial), as built by
 * models/capture/quality.ts. Readings recorded before this migration were never checked: they get
 * one `not_checked` condition saying so, rather than an empty list that would read as "passed".
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE pose_metric ADD COLUMN conditions TEXT NOT NULL DEFAULT '[]';
UPDATE pose_metric SET conditions = '[{"code":"not_checked","detail":"recorded before per-reading quality checks existed: camera synchronisation, segment lengths, joint ranges and 2D confidence were not checked; re-process the trial to check them"}]';
`;
