/**
 * Input schemas of every service verb: the one copy used by the service layer, the assistant's
 * tools (JSON Schema is generated from these) and the renderer↔main contract. Org ids are never
 * inputs: services take the org from the signed-in actor.
 */
import { z } from 'zod';
import { PoseMetricInput } from './capture/metrics';
import { AngleSeries } from './capture/series';
import { DeclaredLayout } from './capture/obliquity';
import * as R from './records';
import { noteText, plainText } from './text';

const Page = {
  limit: z.number().int().min(1).max(5000).default(100).describe('Maximum rows to return (1–5000).'),
  offset: z.number().int().min(0).default(0).describe('Rows to skip.'),
};
const ById = z.object({ id: R.Id.describe('Record id (UUID).') }).strict();
export { ById };

// Athletes and squads
export const ListAthletes = z
  .object({
    squad_id: R.Id.optional().describe('Only athletes of this squad.'),
    search: plainText(z.string().max(100)).optional().describe('Case-insensitive part of the name.'),
    status: z.enum(['active', 'deactivated', 'all']).default('active').describe('Which athletes: active (default), deactivated, or all.'),
    ...Page,
  })
  .strict();
export const CreateAthlete = z
  .object({
    name: plainText(R.Athlete.shape.name),
    date_of_birth: R.Athlete.shape.date_of_birth,
    sex: R.Athlete.shape.sex,
    position: plainText(R.Athlete.shape.position).default(null),
    squad_id: R.Athlete.shape.squad_id.default(null),
    dominant_side: R.Athlete.shape.dominant_side.default('right'),
    notes: noteText(R.Athlete.shape.notes).default(''),
  })
  .strict();
export const UpdateAthlete = z
  .object({
    id: R.Id.describe('Athlete id.'),
    name: plainText(R.Athlete.shape.name).optional(),
    date_of_birth: R.Athlete.shape.date_of_birth.optional(),
    sex: R.Athlete.shape.sex.optional(),
    position: plainText(R.Athlete.shape.position).optional(),
    squad_id: R.Athlete.shape.squad_id.optional(),
    dominant_side: R.Athlete.shape.dominant_side.optional(),
    notes: noteText(R.Athlete.shape.notes).optional(),
  })
  .strict();
export const DeactivateAthlete = z
  .object({
    id: R.Id.describe('Athlete id.'),
    reason: noteText(z.string().max(500)).default('').describe('Why the athlete is deactivated (free text, optional).'),
  })
  .strict();
export const CreateSquad = z.object({ name: plainText(R.Squad.shape.name), season: plainText(R.Squad.shape.season) }).strict();
export const UpdateSquad = z
  .object({ id: R.Id.describe('Squad id.'), name: plainText(R.Squad.shape.name).optional(), season: plainText(R.Squad.shape.season).optional() })
  .strict();
export const MoveAthletes = z
  .object({
    athlete_ids: z.array(R.Id).min(1).max(500).describe('The athletes to move (1–500).'),
    squad_id: R.Id.nullable().describe('The squad they move to; null = no squad.'),
  })
  .strict();

// Clinical
export const ListByAthlete = z.object({ athlete_id: R.Id.optional().describe('Only records of this athlete.'), ...Page }).strict();
export const ListInjuries = z
  .object({
    athlete_id: R.Id.optional().describe('Only injuries of this athlete.'),
    status: z.enum(['open', 'closed', 'all']).default('all').describe('Open, closed, or all (default).'),
    ...Page,
  })
  .strict();
export const CreateInjury = z
  .object({
    athlete_id: R.Id.describe('The injured athlete.'),
    body_part: plainText(R.Injury.shape.body_part),
    side: R.Side,
    mechanism: R.Injury.shape.mechanism.default('unknown'),
    onset_date: R.Injury.shape.onset_date,
    severity: R.InjurySeverity,
    clinician_notes: noteText(R.Injury.shape.clinician_notes).default(''),
  })
  .strict();
export const UpdateInjury = z
  .object({
    id: R.Id.describe('Injury id.'),
    body_part: plainText(R.Injury.shape.body_part).optional(),
    side: R.Side.optional(),
    mechanism: R.Injury.shape.mechanism.optional(),
    onset_date: R.Injury.shape.onset_date.optional(),
    severity: R.InjurySeverity.optional(),
    status: R.Injury.shape.status.optional(),
    clinician_notes: noteText(R.Injury.shape.clinician_notes).optional(),
  })
  .strict();
export const CreateScreening = z
  .object({
    athlete_id: R.Id.describe('The athlete screened.'),
    test: plainText(R.Screening.shape.test),
    side: R.Side,
    value: R.Screening.shape.value,
    unit: plainText(R.Screening.shape.unit),
    date: R.Screening.shape.date,
    notes: noteText(R.Screening.shape.notes).default(''),
  })
  .strict();
export const UpdateScreening = z
  .object({
    id: R.Id.describe('Screening id.'),
    test: plainText(R.Screening.shape.test).optional(),
    side: R.Side.optional(),
    value: R.Screening.shape.value.optional(),
    unit: plainText(R.Screening.shape.unit).optional(),
    date: R.Screening.shape.date.optional(),
    notes: noteText(R.Screening.shape.notes).optional(),
  })
  .strict();
export const ListRtp = z
  .object({
    injury_id: R.Id.optional().describe('Only entries of this injury.'),
    athlete_id: R.Id.optional().describe('Only entries of this athlete.'),
    ...Page,
  })
  .strict();
/** Sign-off flags: `true` signs in the caller's own name, `false` withdraws that sign-off. */
const SignoffFlags = {
  physio_signoff: z.boolean().optional().describe('Sign (true) or withdraw (false) the physio sign-off; needs rtp.signoff_physio.'),
  doctor_signoff: z.boolean().optional().describe('Sign (true) or withdraw (false) the doctor sign-off; needs rtp.signoff_doctor.'),
  coach_signoff: z.boolean().optional().describe('Sign (true) or withdraw (false) the coach sign-off; needs rtp.signoff_coach.'),
};
export const CreateRtp = z
  .object({
    injury_id: R.Id.describe('The injury this RTP entry belongs to.'),
    stage: R.RtpStage,
    criteria_met: noteText(R.RtpEntry.shape.criteria_met).default(''),
    notes: noteText(R.RtpEntry.shape.notes).default(''),
    ...SignoffFlags,
  })
  .strict();
export const UpdateRtp = z
  .object({
    id: R.Id.describe('RTP entry id.'),
    stage: R.RtpStage.optional(),
    criteria_met: noteText(R.RtpEntry.shape.criteria_met).optional(),
    notes: noteText(R.RtpEntry.shape.notes).optional(),
    ...SignoffFlags,
  })
  .strict();
export const SignoffRtp = z
  .object({ id: R.Id.describe('RTP entry id.'), signed: z.boolean().default(true).describe('true to sign, false to withdraw.') })
  .strict();
const From = R.IsoDate.optional().describe('First day to include (YYYY-MM-DD).');
const To = R.IsoDate.optional().describe('Last day to include (YYYY-MM-DD).');
export const ListDated = z
  .object({ athlete_id: R.Id.optional().describe('Only this athlete (athlete accounts: always their own).'), from: From, to: To, ...Page })
  .strict();
export const SubmitWellness = z
  .object({
    athlete_id: R.Id.optional().describe('Defaults to the linked athlete for athlete accounts.'),
    date: R.IsoDate.describe('Day the answers are for (YYYY-MM-DD).'),
    sleep: R.Wellness.shape.sleep,
    soreness: R.Wellness.shape.soreness,
    stress: R.Wellness.shape.stress,
    mood: R.Wellness.shape.mood,
    fatigue: R.Wellness.shape.fatigue,
    notes: noteText(R.Wellness.shape.notes).default(''),
  })
  .strict();
/** One day's stored wellness answers of one athlete (athlete accounts: their own). */
export const GetWellnessDay = z
  .object({
    athlete_id: R.Id.optional().describe('Defaults to the linked athlete for athlete accounts.'),
    date: R.IsoDate.describe('The day (YYYY-MM-DD).'),
  })
  .strict();
export const RecordVitals = z
  .object({
    athlete_id: R.Id.describe('The athlete measured.'),
    date: R.IsoDate.describe('Day of the measurement (YYYY-MM-DD).'),
    resting_hr_bpm: R.Vitals.shape.resting_hr_bpm,
    hrv_rmssd_ms: R.Vitals.shape.hrv_rmssd_ms,
    second_set_same_day: z
      .boolean()
      .default(false)
      .describe(
        'true to record another set on a day that already has one (a new measurement, e.g. a reading retaken); without it a second set that day is refused (Conflict SameDayExists naming the stored set).',
      ),
  })
  .strict();

// Workload
export const ListSessions = z.object({ squad_id: R.Id.optional().describe('Only sessions of this squad.'), from: From, to: To, ...Page }).strict();
export const CreateTrainingSession = z
  .object({
    squad_id: R.Id.nullable().default(null).describe('The squad that trained; null = no squad.'),
    date: R.IsoDate.describe('Day of the session (YYYY-MM-DD).'),
    kind: plainText(R.TrainingSession.shape.kind),
    duration_min: R.TrainingSession.shape.duration_min,
    notes: noteText(R.TrainingSession.shape.notes).default(''),
  })
  .strict();
export const ListLoads = z
  .object({
    athlete_id: R.Id.optional().describe('Only this athlete.'),
    squad_id: R.Id.optional().describe('Every athlete of this squad.'),
    from: From,
    to: To,
    ...Page,
  })
  .strict();
/**
 * Log session-RPE loads for one athlete or a whole squad (one changeset, one row per athlete).
 * load_au = rpe × duration_min (Foster et al. 2001).
 */
export const LogSessionLoads = z
  .object({
    athlete_id: R.Id.optional().describe('One athlete; give this or squad_id.'),
    squad_id: R.Id.optional().describe('Every active athlete of this squad.'),
    date: R.IsoDate.describe('Day of the session (YYYY-MM-DD).'),
    duration_min: R.SessionLoad.shape.duration_min,
    rpe: R.SessionLoad.shape.rpe.describe('Session RPE, CR-10 scale 0–10.'),
    training_session_id: R.Id.optional().describe('The training session these loads belong to, when logged against one.'),
    exclude_athlete_ids: z.array(R.Id).max(200).default([]).describe('Squad members to leave out (e.g. injured).'),
    per_athlete: z
      .array(
        z
          .object({
            athlete_id: R.Id.describe('The athlete whose values differ.'),
            duration_min: R.SessionLoad.shape.duration_min.optional().describe('Minutes this athlete trained, when not the session duration.'),
            rpe: R.SessionLoad.shape.rpe.optional().describe("This athlete's session RPE, when not the squad value."),
          })
          .strict(),
      )
      .max(200)
      .default([])
      .describe('Per-athlete minutes or RPE that differ from the session values (e.g. a late substitute).'),
    second_session_same_day: z
      .boolean()
      .default(false)
      .describe(
        'true when this is another session on a day where some of these athletes already have a load (a second session is legitimate); without it the call is refused (Conflict SameDayExists naming every athlete with a load that day and its AU/minutes/RPE) and nothing is written. For a squad it acknowledges all rows at once.',
      ),
  })
  .strict()
  .refine((v) => (v.athlete_id ? 1 : 0) + (v.squad_id ? 1 : 0) === 1, { message: 'Give exactly one of athlete_id or squad_id.', path: ['athlete_id'] });
export const GetAcwr = z
  .object({
    athlete_id: R.Id.describe('The athlete.'),
    as_of: R.IsoDate.optional().describe('Date to compute for; defaults to today.'),
    method: z
      .enum(['rolling', 'ewma', 'both'])
      .default('both')
      .describe('rolling = 7-day / 28-day rolling averages; ewma = exponentially weighted (Williams et al. 2017); both (default).'),
  })
  .strict();

// Fee schedule
export const ListRateItems = z
  .object({
    folder_id: R.Id.optional().describe('Only items of this folder.'),
    item_type: R.RateItemType.optional().describe('Only items of this type.'),
    ...Page,
  })
  .strict();
export const CreateRateFolder = z.object({ name: plainText(R.RateFolder.shape.name) }).strict();
/**
 * A fee code as typed: plain text (see plainText), then ASCII letters, digits and . _ / - only,
 * starting with a letter or digit. A billing code is read by people and by insurers' systems: a
 * look-alike character ("PRI‑011" with U+2011, a non-breaking hyphen) would sit beside PRI-011 as
 * a second item at another price.
 */
const FeeCode = plainText(R.RateItem.shape.code).refine((v) => /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(v), {
  message: 'Use letters A–Z, digits and . _ / - only (e.g. PHY-01): a look-alike character would make a second code that reads the same.',
  // One message per field: a code already refused (blank, invisible characters, too long) is not judged again.
  when: (p) => p.issues.length === 0,
});
export const CreateRateItem = z
  .object({
    folder_id: R.Id.describe('Fee-schedule folder the item goes in.'),
    code: FeeCode,
    name: plainText(R.RateItem.shape.name),
    item_type: R.RateItemType,
    price_cents: R.RateItem.shape.price_cents,
  })
  .strict();
export const UpdateRateItem = z
  .object({
    id: R.Id.describe('Fee item id.'),
    code: FeeCode.optional(),
    name: plainText(R.RateItem.shape.name).optional(),
    item_type: R.RateItemType.optional(),
    price_cents: R.RateItem.shape.price_cents.optional(),
  })
  .strict();
export const BulkUpdateRates = z
  .object({
    folder_id: R.Id.describe('Fee-schedule folder.'),
    pct: z.number().min(-50).max(50).describe('Percentage change, −50..50 (e.g. 5 for +5%).'),
    item_type: R.RateItemType.optional().describe('Only items of this type.'),
  })
  .strict();

// Capture / pose
export const GetPoseMetrics = z
  .object({
    athlete_id: R.Id.describe('The athlete measured.'),
    capture_session_id: R.Id.optional().describe('Only readings of this capture session (trial).'),
    ...Page,
  })
  .strict();

// Devices, reports, users, activity
export const RegisterDevice = z
  .object({ name: plainText(R.Device.shape.name), kind: R.Device.shape.kind, athlete_id: R.Device.shape.athlete_id.optional() })
  .strict();
export const RotateDeviceKey = z.object({ id: R.Id.describe('Device id.') }).strict();
export const RevokeDevice = z.object({ id: R.Id.describe('Device id.') }).strict();
export const GenerateReport = z
  .object({
    kind: R.Report.shape.kind.describe('athlete_summary and rtp_status need athlete_id; squad_workload needs squad_id.'),
    athlete_id: R.Id.optional().describe('The athlete the report is about.'),
    squad_id: R.Id.optional().describe('The squad the report is about.'),
    as_of: R.IsoDate.optional().describe('Date the report describes; defaults to today.'),
  })
  .strict();
export const CreateUser = z
  .object({
    email: R.User.shape.email,
    display_name: plainText(R.User.shape.display_name),
    role: R.User.shape.role,
    linked_athlete_id: R.User.shape.linked_athlete_id.default(null),
    budget_cap_usd: R.User.shape.budget_cap_usd.default(null),
  })
  .strict();
export const UpdateUser = z
  .object({
    id: R.Id.describe('User id.'),
    display_name: plainText(R.User.shape.display_name).optional(),
    role: R.User.shape.role.optional(),
    linked_athlete_id: R.User.shape.linked_athlete_id.optional(),
    active: z.boolean().optional().describe('false deactivates the account (it can no longer sign in); true reactivates it.'),
    budget_cap_usd: R.User.shape.budget_cap_usd.optional(),
  })
  .strict();
export const ListActivity = z
  .object({ record_id: plainText(z.string().max(200)).optional().describe('Only changes to this record (its id).'), ...Page })
  .strict();
export const UndoChangeset = z.object({ changeset_id: R.Id.describe('The applied changeset to undo.') }).strict();
export const Empty = z.object({}).strict();

// Capture
/** Input of `capture.recordSession`: one processed trial and its pose metrics. */
export const RecordCaptureSession = z
  .object({
    athlete_id: R.Id.describe('The athlete recorded.'),
    rig_id: R.Id.nullable().default(null).describe('The calibrated rig used; null when none.'),
    recorded_at: R.CaptureSession.shape.recorded_at,
    trial_name: plainText(R.CaptureSession.shape.trial_name).default(''),
    fps: R.CaptureSession.shape.fps,
    frame_count: R.CaptureSession.shape.frame_count,
    camera_count: R.CaptureSession.shape.camera_count,
    source: R.CaptureSession.shape.source,
    trc_path: plainText(R.CaptureSession.shape.trc_path, { nfkc: false }).default(null),
    notes: noteText(R.CaptureSession.shape.notes).default(''),
    test: R.CaptureSession.shape.test.default(''),
    angle_series: AngleSeries.nullable().default(null).describe('Per-frame joint angles (degrees) the statistics were computed from; stored as JSON.'),
    metrics: z.array(PoseMetricInput).max(500).describe('Pose metrics computed from the trial (angles in degrees), up to 500.'),
  })
  .strict();

/** One calibrated camera of `capture.saveRig` (OpenCV pinhole model, Pose2Sim TOML fields). */
export const RigCameraInput = z
  .object({
    name: R.Camera.shape.name.regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ or -').describe('Camera name as in the trial folder (cam01 …).'),
    width: z.number().int().min(1).max(16384).describe('Image width (px).'),
    height: z.number().int().min(1).max(16384).describe('Image height (px).'),
    K: z.array(z.number().finite()).length(9).describe('3×3 intrinsic matrix, row-major (px).'),
    dist: z
      .array(z.number().finite())
      .refine((d) => d.length === 4 || d.length === 5 || d.length === 8, 'distortions must hold 4, 5 or 8 coefficients (OpenCV: k1 k2 p1 p2 [k3 [k4 k5 k6]])')
      .describe('OpenCV distortion coefficients.'),
    rvec: z.array(z.number().finite()).length(3).describe('World→camera rotation as a Rodrigues vector (rad).'),
    tvec: z.array(z.number().finite()).length(3).describe('World→camera translation (m).'),
    reprojection_rms_px: z.number().min(0).max(1000).nullable().default(null).describe('Intrinsic reprojection RMS (px); null when imported without one.'),
  })
  .strict();
/** Input of `capture.saveRig`: a room's calibrated rig, new or replacing the calibration of `rig_id`. */
export const SaveRig = z
  .object({
    rig_id: R.Id.optional().describe('Replace the calibration of this rig (its cameras by name); absent: a new rig.'),
    name: plainText(R.Rig.shape.name).describe('The room the rig is in, e.g. "Clinic room 1".'),
    declared_layout: DeclaredLayout.max(32).default([]).describe("Each camera's declared place: { camera, label, yaw_deg }."),
    drift_tolerance_deg: R.Rig.shape.drift_tolerance_deg.default(15).describe('Yaw drift (deg) above which readings from this rig are not trustworthy.'),
    drift_tolerance_m: R.Rig.shape.drift_tolerance_m.default(0.1).describe('Camera displacement (m) above which the rig counts as moved.'),
    cameras: z.array(RigCameraInput).min(1).max(16).describe('The calibrated cameras (1–16).'),
  })
  .strict()
  .refine((r) => new Set(r.cameras.map((c) => c.name)).size === r.cameras.length, { message: 'camera names must be unique', path: ['cameras'] })
  .refine((r) => r.declared_layout.every((d) => r.cameras.some((c) => c.name === d.camera)), {
    message: 'the declared layout names a camera the rig does not have',
    path: ['declared_layout'],
  });

// Help
export const SearchHelp = z
  .object({
    query: z.string().trim().min(1).max(200).describe('What the user wants to know, in their words.'),
    limit: z.number().int().min(1).max(10).default(5).describe('Passages to return (1–10).'),
  })
  .strict();
export const GetHelpPage = z
  .object({
    slug: z
      .string()
      .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'a help page slug (kebab-case)')
      .max(100)
      .describe('Help page slug (kebab-case), e.g. `activity-and-undo`.'),
    version: z
      .string()
      .regex(/^\d+\.\d+(?:\.\d+)?$/, 'a version such as 1.0')
      .max(20)
      .optional()
      .describe('Defaults to the version shipped with this build.'),
  })
  .strict();
