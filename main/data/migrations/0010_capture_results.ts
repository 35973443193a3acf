/**
 * 0010: a capture session says which movement test it recorded (`test`: single_leg_squat,
 * drop_jump, gait, balance, or '' when not said, as for sessions recorded before this migration)
 * and carries its joint-angle time series (`angle_series`: JSON, models/capture/series.ts
 * `AngleSeries`; '' when none was stored). The results page draws the series, finds the
 * repetitions in them and compares a session with the athlete's previous session of the same test.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
ALTER TABLE capture_session ADD COLUMN test TEXT NOT NULL DEFAULT '';
ALTER TABLE capture_session ADD COLUMN angle_series TEXT NOT NULL DEFAULT '';
`;
