/**
 * HQ 0003: pose_metric carries its conditions, as the device's migration 0008 does (a JSON array of
 * {code, detail}; readings recorded before it get one `not_checked` condition). The owner lifts
 * FORCE for the one back-fill statement (it runs across every org) and restores it in the same
 * transaction. Forward-only: never edit once shipped.
 */
export const sql = `
ALTER TABLE pose_metric ADD COLUMN conditions text NOT NULL DEFAULT '[]';
ALTER TABLE pose_metric NO FORCE ROW LEVEL SECURITY;
ALTER TABLE pose_metric DISABLE ROW LEVEL SECURITY;
UPDATE pose_metric SET conditions = '[{"code":"not_checked","detail":"recorded before per-reading quality checks existed: camera synchronisation, segment lengths, joint ranges and 2D confidence were not checked; re-process the trial to check them"}]';
ALTER TABLE pose_metric ENABLE ROW LEVEL SECURITY;
ALTER TABLE pose_metric FORCE ROW LEVEL SECURITY;
`;
