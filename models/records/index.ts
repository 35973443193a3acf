/**
 * Zod schemas of every record in shared/design/domain.md. Field names are the SQLite/Postgres
 * column names (snake_case), so a changeset's field diff maps 1:1 to columns on every tier.
 * Units are in the field names or docs: `_min` minutes, `_bpm` beats/min, `_ms` milliseconds,
 * `_cents` USD cents, `_usd` US dollars, `_deg` degrees.
 */
import { z } from 'zod';
import { ROLES } from '../roles';
import { CAPTURE_TESTS } from '../capture/series';
import { CONDITION_DETAIL_MAX } from '../capture/quality';
import { Id, IsoDate, IsoDateTime, RowMeta } from './common';
import { ValidationError } from '../errors';
import { CONTROL_OR_BIDI } from '../text';

export { Id, IsoDate, IsoDateTime, RowMeta, META_COLUMNS, isRealDate } from './common';

/** Lowercase snake labels for sides of the body. */
export const Side = z.enum(['left', 'right', 'bilateral', 'none']).describe('Side of the body: left, right, bilateral or none.');

export const Organization = z.object({
  ...RowMeta,
  name: z.string().min(1).max(200),
  plan: z.enum(['free', 'club', 'pro']),
  /** Monthly assistant budget cap for the whole org, USD; null = no cap. */
  budget_cap_usd: z.number().min(0).max(100_000).nullable().describe('Monthly assistant budget cap for the whole org, USD; null = no cap.'),
  /** Model id used by the assistant for this org (e.g. `claude-sonnet-4-6`). */
  assistant_model: z.string().min(1).max(100).describe('Model id used by the assistant for this org (e.g. `claude-sonnet-4-6`).'),
});
export type Organization = z.infer<typeof Organization>;

/**
 * An organisation name as typed (Settings → Organisation on a device, `npm run hq -- organisation`
 * at HQ): plain text (no {@link CONTROL_OR_BIDI} character: it shows in the shell, on the sign-in
 * screen and to the assistant), trimmed and NFKC-normalised, then 1–200 characters. Returns the
 * name to store.
 * @throws ValidationError naming `name`
 */
export function checkOrganisationName(raw: string): string {
  if (CONTROL_OR_BIDI.test(raw))
    throw new ValidationError('The organisation name must be plain text: remove the control, invisible or text-direction characters.', [
      { path: 'name', message: 'Remove the control, invisible or text-direction characters.' },
    ]);
  const name = raw.trim().normalize('NFKC');
  if (!Organization.shape.name.safeParse(name).success)
    throw new ValidationError('The organisation name must be 1 to 200 characters.', [
      { path: 'name', message: name === '' ? 'Enter the organisation’s name.' : 'At most 200 characters.' },
    ]);
  return name;
}

export const User = z.object({
  ...RowMeta,
  email: z.string().email().max(200).describe('Sign-in email address.'),
  display_name: z.string().min(1).max(200).describe('Name shown to colleagues.'),
  role: z.enum(ROLES).describe('Role, which sets the permissions (models/roles.ts).'),
  /** For athlete-role users: the one athlete they may see. Null = unlinked (refused, never defaulted). */
  linked_athlete_id: Id.nullable().describe('For athlete-role users: the one athlete they may see. Null = unlinked (refused, never defaulted).'),
  active: z.boolean(),
  /** Personal monthly assistant budget cap, USD; null = no personal cap. */
  budget_cap_usd: z.number().min(0).max(100_000).nullable().describe('Personal monthly assistant budget cap, USD; null = no personal cap.'),
  /** scrypt hash of the sign-in PIN (`scrypt$N$salt$hash`); never returned by services. */
  pin_hash: z.string().nullable().describe('scrypt hash of the sign-in PIN (`scrypt$N$salt$hash`); never returned by services.'),
});
export type User = z.infer<typeof User>;

export const Squad = z.object({
  ...RowMeta,
  name: z.string().min(1).max(100).describe('Squad name, unique in the club (ignoring case).'),
  season: z.string().min(4).max(20).describe('e.g. `2026/27`.'),
});
export type Squad = z.infer<typeof Squad>;

export const Athlete = z.object({
  ...RowMeta,
  name: z.string().min(1).max(200).describe("Athlete's full name."),
  date_of_birth: IsoDate.describe('Date of birth (YYYY-MM-DD).'),
  sex: z.enum(['female', 'male', 'other']).describe('Sex: female, male or other.'),
  position: z.string().max(60).nullable().describe('Playing position, e.g. `winger`; null when none.'),
  squad_id: Id.nullable().describe('Squad the athlete belongs to; null = no squad.'),
  dominant_side: z.enum(['left', 'right', 'both']).describe('Dominant (preferred) side: left, right or both.'),
  status: z.enum(['active', 'deactivated']).describe('active, or deactivated (soft-deleted, records kept).'),
  /** Free text. Reaches the model only inside the labelled data envelope. */
  notes: z.string().max(5000).describe('Free text. Reaches the model only inside the labelled data envelope.'),
  /** Why the athlete was deactivated, as typed ('' when none or active). Free text: never part of a changeset summary. */
  deactivation_reason: z.string().max(500).default('').describe('Why the athlete was deactivated, as typed; empty when none. Free text.'),
});
export type Athlete = z.infer<typeof Athlete>;

/** Severity by days lost, Fuller et al. 2006 consensus (slight 0–1, minimal 2–3, mild 4–7, moderate 8–28, severe >28). */
export const InjurySeverity = z
  .enum(['slight', 'minimal', 'mild', 'moderate', 'severe'])
  .describe('Severity by days lost (Fuller et al. 2006): slight 0–1, minimal 2–3, mild 4–7, moderate 8–28, severe >28.');

export const Injury = z.object({
  ...RowMeta,
  athlete_id: Id,
  body_part: z.string().min(1).max(80).describe('e.g. `hamstring`, `ankle`, `ACL`.'),
  side: Side,
  mechanism: z.enum(['contact', 'non_contact', 'overuse', 'unknown']).describe('How it happened: contact, non_contact, overuse or unknown.'),
  onset_date: IsoDate.describe('Date the injury happened or was first reported (YYYY-MM-DD).'),
  severity: InjurySeverity,
  status: z.enum(['open', 'closed']).describe('open while the injury is being managed; closed once resolved.'),
  clinician_notes: z.string().max(10_000).describe("Clinician's free-text notes (untrusted text)."),
});
export type Injury = z.infer<typeof Injury>;

export const Screening = z.object({
  ...RowMeta,
  athlete_id: Id,
  /** e.g. `weight_bearing_lunge`, `single_leg_hop`, `nordic_hamstring`. */
  test: z.string().min(1).max(80).describe('e.g. `weight_bearing_lunge`, `single_leg_hop`, `nordic_hamstring`.'),
  side: Side,
  value: z.number().min(-10_000).max(10_000).describe('Measured value, in `unit` (e.g. degrees for a lunge angle, cm for a hop).'),
  /** e.g. `cm`, `deg`, `N`, `s`. */
  unit: z.string().min(1).max(20).describe('e.g. `cm`, `deg`, `N`, `s`.'),
  date: IsoDate.describe('Date of the screening (YYYY-MM-DD).'),
  notes: z.string().max(5000).describe('Free-text notes (untrusted text).'),
});
export type Screening = z.infer<typeof Screening>;

/** RTP stages on the return-to-sport continuum (Ardern et al. 2016 consensus). */
export const RtpStage = z
  .enum(['protection', 'rehabilitation', 'return_to_running', 'return_to_training', 'return_to_play', 'return_to_performance'])
  .describe('Stage on the return-to-sport continuum (Ardern et al. 2016).');

export const RtpEntry = z.object({
  ...RowMeta,
  injury_id: Id,
  athlete_id: Id,
  stage: RtpStage,
  criteria_met: z.string().max(2000).describe("The stage's exit criteria met so far, in the clinician's words."),
  notes: z.string().max(5000).describe('Free-text notes (untrusted text).'),
  physio_signoff_by: Id.nullable(),
  physio_signoff_at: IsoDateTime.nullable(),
  doctor_signoff_by: Id.nullable(),
  doctor_signoff_at: IsoDateTime.nullable(),
  coach_signoff_by: Id.nullable(),
  coach_signoff_at: IsoDateTime.nullable(),
});
export type RtpEntry = z.infer<typeof RtpEntry>;

const Scale1to5 = z.number().int().min(1).max(5);
export const Wellness = z.object({
  ...RowMeta,
  athlete_id: Id,
  date: IsoDate,
  /** 1–5 scales, higher = better for sleep and mood, worse for soreness, stress and fatigue. */
  sleep: Scale1to5.describe('Sleep quality, 1 (very poor) – 5 (very good).'),
  soreness: Scale1to5.describe('Muscle soreness, 1 (none) – 5 (very sore).'),
  stress: Scale1to5.describe('Stress, 1 (none) – 5 (very high).'),
  mood: Scale1to5.describe('Mood, 1 (low) – 5 (great).'),
  fatigue: Scale1to5.describe('Fatigue, 1 (fresh) – 5 (exhausted).'),
  notes: z.string().max(2000).describe("The athlete's free-text comment (untrusted text)."),
});
export type Wellness = z.infer<typeof Wellness>;

export const Vitals = z.object({
  ...RowMeta,
  athlete_id: Id,
  date: IsoDate,
  resting_hr_bpm: z.number().int().min(25).max(220).describe('Resting heart rate, beats per minute.'),
  hrv_rmssd_ms: z.number().min(1).max(400).describe('Heart-rate variability, RMSSD in milliseconds.'),
});
export type Vitals = z.infer<typeof Vitals>;

export const TrainingSession = z.object({
  ...RowMeta,
  squad_id: Id.nullable(),
  date: IsoDate,
  kind: z.string().min(1).max(60).describe('e.g. `pitch`, `gym`, `match`.'),
  duration_min: z.number().int().min(1).max(600).describe('Duration in minutes (1–600).'),
  notes: z.string().max(2000).describe('Free-text notes (untrusted text).'),
});
export type TrainingSession = z.infer<typeof TrainingSession>;

/** One athlete's load for one session. load_au = rpe × duration_min (session-RPE, Foster et al. 2001). */
export const SessionLoad = z.object({
  ...RowMeta,
  athlete_id: Id,
  training_session_id: Id.nullable(),
  date: IsoDate,
  duration_min: z.number().int().min(1).max(600).describe('Duration in minutes (1–600).'),
  rpe: z.number().min(0).max(10).describe('Session RPE on the CR-10 scale (0–10).'),
  load_au: z.number().min(0).max(6000).describe('Load in arbitrary units: RPE × minutes (session-RPE, Foster et al. 2001).'),
});
export type SessionLoad = z.infer<typeof SessionLoad>;

export const Rig = z.object({
  ...RowMeta,
  name: z.string().min(1).max(100).describe('The room the rig is in, e.g. "Clinic room 1".'),
  /** JSON: [{ camera, label: "front" | "left 45°" …, yaw_deg }]. */
  declared_layout: z.string().describe('JSON: [{ camera, label: "front" | "left 45°" …, yaw_deg }].'),
  drift_tolerance_deg: z.number().min(0).max(90).describe('Yaw drift (degrees) above which readings from this rig are not trustworthy.'),
  drift_tolerance_m: z.number().min(0).max(10).describe('Camera displacement (metres) above which the rig counts as moved.'),
});
export type Rig = z.infer<typeof Rig>;

export const Camera = z.object({
  ...RowMeta,
  rig_id: Id,
  name: z.string().min(1).max(100),
  width: z.number().int().min(1),
  height: z.number().int().min(1),
  /** JSON: { K, dist, rvec, tvec } (pixels; Rodrigues radians; metres). */
  calibration: z.string().describe('JSON: { K, dist, rvec, tvec } (pixels; Rodrigues radians; metres).'),
  reprojection_rms_px: z.number().min(0).nullable(),
  calibrated_at: IsoDateTime.nullable(),
});
export type Camera = z.infer<typeof Camera>;

export const CaptureSession = z.object({
  ...RowMeta,
  athlete_id: Id,
  rig_id: Id.nullable(),
  recorded_at: IsoDateTime.describe('When the trial was recorded (ISO-8601 UTC instant).'),
  trial_name: z.string().max(200).describe('Trial folder or clip name; empty when none.'),
  fps: z.number().min(0).max(1000).describe('Frame rate, frames per second.'),
  frame_count: z.number().int().min(0).describe('Frames in the trial.'),
  camera_count: z.number().int().min(0).max(32).describe('Cameras that recorded the trial.'),
  source: z.enum(['video', 'keypoints_json', 'live']).describe('What the poses came from: video, keypoints_json (pre-computed 2D keypoints) or live.'),
  trc_path: z.string().nullable().describe('Path of the triangulated .trc marker file; null when none.'),
  status: z.enum(['processing', 'complete', 'failed']).describe('Processing state of the trial.'),
  notes: z.string().max(5000).describe('Free-text notes (untrusted text).'),
  /** Movement test recorded ('' when not said, e.g. sessions stored before tests were recorded). */
  test: z.enum(['', ...CAPTURE_TESTS]).describe("Movement test recorded: single_leg_squat, drop_jump, gait, balance; '' when not said."),
  /** JSON `AngleSeries` (models/capture/series.ts): per-frame joint angles in degrees; '' when none stored. */
  angle_series: z.string().max(4_000_000).describe('JSON joint-angle time series (models/capture/series.ts AngleSeries); empty when none was stored.'),
});
export type CaptureSession = z.infer<typeof CaptureSession>;

export const PoseJoint = z.enum([
  'knee_flexion',
  'hip_flexion',
  'shoulder_flexion',
  'elbow_flexion',
  'ankle_dorsiflexion',
  'hip_abduction',
  'knee_frontal_projection_angle',
  'pelvic_obliquity',
  'trunk_lateral_lean',
]);

/** One joint-angle reading with every condition it was measured under (capture.md). */
export const PoseMetric = z.object({
  ...RowMeta,
  athlete_id: Id,
  capture_session_id: Id,
  joint: PoseJoint,
  side: z.enum(['left', 'right']),
  statistic: z.enum(['peak', 'min', 'mean', 'range']),
  /** Degrees; null when the reading is omitted (see omitted_reason). */
  value_deg: z.number().nullable().describe('Degrees; null when the reading is omitted (see omitted_reason).'),
  omitted_reason: z.string().max(200).nullable(),
  camera_count: z.number().int().min(0),
  camera_mode: z.string().max(200),
  view_obliquity_deg: z.number().nullable(),
  obliquity_band: z.string().max(60),
  view_matches_declared: z.boolean(),
  /** Fraction of frames with a valid reading, 0..1. */
  coverage: z.number().min(0).max(1).describe('Fraction of frames with a valid reading, 0..1.'),
  trustworthy: z.boolean(),
  /** Limb sagittal-projection ratio (0..1); the gate omits flexion below 0.45. */
  sagittal_ratio: z.number().nullable().describe('Limb sagittal-projection ratio (0..1); the gate omits flexion below 0.45.'),
  frames: z.number().int().min(0),
  /** Conditions the reading was measured under: failed checks and notes, {code, detail} (models/capture/quality.ts; `not_checked` on readings older than the checks). */
  conditions: z
    .array(z.object({ code: z.string().max(60), detail: z.string().max(CONDITION_DETAIL_MAX) }))
    .max(40)
    .describe(
      'Conditions the reading was measured under: failed checks and notes, {code, detail} (models/capture/quality.ts; `not_checked` on readings older than the checks).',
    ),
});
export type PoseMetric = z.infer<typeof PoseMetric>;

export const Video = z.object({
  ...RowMeta,
  athlete_id: Id.nullable(),
  capture_session_id: Id.nullable(),
  file_path: z.string().min(1).max(1000),
  duration_s: z.number().min(0),
  size_bytes: z.number().int().min(0),
});
export type Video = z.infer<typeof Video>;

export const Device = z.object({
  ...RowMeta,
  name: z.string().min(1).max(100).describe('Device name shown in lists.'),
  kind: z.enum(['camera', 'wearable', 'tablet']).describe('camera, wearable or tablet.'),
  /** Set for an athlete's own wearable. */
  athlete_id: Id.nullable().describe("Set for an athlete's own wearable."),
  /** scrypt hash of the device API key; the key itself is shown once and never stored. */
  api_key_hash: z.string().nullable().describe('scrypt hash of the device API key; the key itself is shown once and never stored.'),
  api_key_last4: z.string().max(4).nullable(),
  key_rotated_at: IsoDateTime.nullable(),
});
export type Device = z.infer<typeof Device>;

export const Report = z.object({
  ...RowMeta,
  athlete_id: Id.nullable(),
  squad_id: Id.nullable(),
  kind: z.enum(['athlete_summary', 'squad_workload', 'rtp_status']),
  title: z.string().min(1).max(200),
  markdown: z.string(),
  pdf_path: z.string().nullable(),
  generated_by: Id,
});
export type Report = z.infer<typeof Report>;

export const RateFolder = z.object({
  ...RowMeta,
  name: z.string().min(1).max(100).describe('Fee-schedule folder name.'),
});
export type RateFolder = z.infer<typeof RateFolder>;

export const RateItemType = z.enum(['assessment', 'treatment', 'report', 'consultation', 'rehab_session', 'screening']).describe('Kind of billable item.');
export const RateItem = z.object({
  ...RowMeta,
  folder_id: Id,
  code: z.string().min(1).max(20).describe('Fee code, unique in the club (ignoring case), e.g. `PHY-01`.'),
  name: z.string().min(1).max(200).describe('Item name as billed.'),
  item_type: RateItemType,
  /** Price in USD cents. Policy: $1 – $10,000 (100 – 1,000,000 cents). */
  price_cents: z.number().int().min(100).max(1_000_000).describe('Price in USD cents. Policy: $1 – $10,000 (100 – 1,000,000 cents).'),
});
export type RateItem = z.infer<typeof RateItem>;

/** Product help page (not org-scoped): versioned, body in Markdown with `{#anchor}` headings. */
export const HelpPage = z.object({
  id: Id,
  slug: z.string(),
  version: z.string(),
  title: z.string(),
  body: z.string(),
});
export type HelpPage = z.infer<typeof HelpPage>;

/** Who changed what. `actor_name` reads "Priya Shah" or "Priya Shah via Assistant". */
export const Activity = z.object({
  id: Id,
  org_id: Id,
  created_at: IsoDateTime,
  actor_user_id: Id,
  actor_name: z.string(),
  via_assistant: z.boolean(),
  run_id: z.string().nullable(),
  record_table: z.string(),
  record_id: z.string(),
  summary: z.string(),
  changeset_id: Id.nullable(),
});
export type Activity = z.infer<typeof Activity>;
