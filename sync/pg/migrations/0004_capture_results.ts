/**
 * HQ 0004: capture_session carries its movement test and joint-angle time series, as the device's
 * migration 0010 does (`test` text, '' when not said; `angle_series` JSON text, '' when none).
 * Forward-only: never edit once shipped.
 */
export const sql = `
ALTER TABLE capture_session ADD COLUMN test text NOT NULL DEFAULT '';
ALTER TABLE capture_session ADD COLUMN angle_series text NOT NULL DEFAULT '';
`;
