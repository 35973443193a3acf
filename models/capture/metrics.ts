/**
 * `pose_metric` row contract (issue 6). The data layer's `pose_metric` table and
 * `captureService.recordSession` / `poseService.getPoseMetrics` import this schema;
 * it is exactly the table's columns minus ids (id, org_id, athlete_id,
 * capture_session_id), timestamps and version.
 *
 * Booleans (`view_matches_declared`, `trustworthy`) are stored as INTEGER 0/1.
 */
import { z } from 'zod';
import { noteText, plainText } from '../text';
import { CONDITION_CODES, CONDITION_DETAIL_MAX } from './quality';

/** Joints the pipeline reports; definitions in `models/capture/angles.ts`. The last four are frontal-plane angles. */
export const POSE_JOINTS = [
  'knee_flexion',
  'hip_flexion',
  'shoulder_flexion',
  'elbow_flexion',
  'ankle_dorsiflexion',
  'hip_abduction',
  'knee_frontal_projection_angle',
  'pelvic_obliquity',
  'trunk_lateral_lean',
] as const;
export type PoseJoint = (typeof POSE_JOINTS)[number];

export const POSE_SIDES = ['left', 'right'] as const;
export type PoseSide = (typeof POSE_SIDES)[number];

/** Statistic over the valid frames of a trial: peak = max, min, mean, range = max − min (degrees). */
export const POSE_STATISTICS = ['peak', 'min', 'mean', 'range'] as const;
export type PoseStatistic = (typeof POSE_STATISTICS)[number];

/**
 * Why a reading has no value:
 * - `flexion_observability_gate`: the limb's sagittal-projection ratio was below 0.45 (design/capture.md).
 * - `frontal_observability_gate`: a frontal-plane angle whose segments' frontal-projection ratio was below 0.45 (e.g. hip abduction with the thigh flexed towards 90°).
 * - `not_measurable_with_coco17`: the definition needs a point COCO-17 lacks (e.g. a foot point for dorsiflexion).
 * - `low_coverage`: too few frames had a valid 3D reading (athlete out of view, too few cameras).
 */
export const OMITTED_REASONS = ['flexion_observability_gate', 'frontal_observability_gate', 'not_measurable_with_coco17', 'low_coverage'] as const;
export type OmittedReason = (typeof OMITTED_REASONS)[number];

/**
 * Band label of `view_obliquity_deg` (see `models/capture/obliquity.ts`):
 * 0° = the best camera looks straight along the athlete's medio-lateral axis (a pure side view).
 * `sagittal` [0, 20), `oblique` [20, 60), `frontal` [60, 90], `unknown` when the athlete's
 * facing direction could not be estimated (then `view_obliquity_deg` is null).
 */
export const OBLIQUITY_BANDS = ['sagittal', 'oblique', 'frontal', 'unknown'] as const;
export type ObliquityBand = (typeof OBLIQUITY_BANDS)[number];

/** One `pose_metric` row as produced by the capture pipeline (angles in degrees). */
export const PoseMetricInput = z
  .object({
    joint: z.enum(POSE_JOINTS).describe('Joint measured.'),
    side: z.enum(POSE_SIDES).describe('Side of the body.'),
    statistic: z.enum(POSE_STATISTICS).describe('Statistic over the trial: peak, min, mean or range.'),
    /** Degrees; null exactly when `omitted_reason` is set. */
    value_deg: z.number().finite().nullable().describe('Angle in degrees; null exactly when omitted_reason is set.'),
    omitted_reason: z.enum(OMITTED_REASONS).nullable().describe('Why no value was reported; null when there is a value.'),
    /** Cameras in the rig that contributed (≥ 1). */
    camera_count: z.number().int().min(1).describe('Cameras in the rig that contributed (≥ 1).'),
    /** Human-readable acquisition mode, e.g. "3 calibrated cameras + one tap". */
    camera_mode: plainText(z.string().min(1), { nfkc: false }).describe('Acquisition mode in words, e.g. "3 calibrated cameras + one tap".'),
    /** Degrees in [0, 90]; null when the athlete's facing could not be estimated. */
    view_obliquity_deg: z.number().min(0).max(90).nullable().describe("View obliquity, degrees 0–90; null when the athlete's facing could not be estimated."),
    obliquity_band: z.enum(OBLIQUITY_BANDS).describe('View band: sagittal, oblique, frontal or unknown.'),
    /** True when each camera's measured yaw relative to the athlete matches the rig's declared layout. */
    view_matches_declared: z.boolean().describe("True when each camera's measured yaw matches the rig's declared layout."),
    /** Fraction (0..1) of the trial's frames with a valid reading of this joint. */
    coverage: z.number().min(0).max(1).describe("Fraction (0–1) of the trial's frames with a valid reading of this joint."),
    /** True exactly when the reading has a value and none of its `conditions` fails (quality.ts). */
    trustworthy: z.boolean().describe('True exactly when the reading has a value and none of its conditions fails.'),
    /** Median sagittal-projection ratio (0..1) of the limb segments; null for joints without one. */
    sagittal_ratio: z.number().min(0).max(1).nullable().describe('Median sagittal-projection ratio (0–1) of the limb segments; null for joints without one.'),
    /** Frames in the trial. */
    frames: z.number().int().min(0).describe('Frames in the trial.'),
    /**
     * Every condition the reading was measured under that the clinician must see: each failed
     * check (code + a sentence with the numbers and what to do), and informational ones
     * (`static_trial`, `camera_offset_corrected`). Codes and bounds: `models/capture/quality.ts`.
     */
    conditions: z
      .array(
        z.object({
          code: z.enum(CONDITION_CODES).describe('Condition code (models/capture/quality.ts).'),
          detail: noteText(z.string().min(1).max(CONDITION_DETAIL_MAX)).describe('One sentence with the numbers and what to do.'),
        }),
      )
      .max(40)
      .describe('Conditions the reading was measured under that the clinician must see (failed checks and informational ones).'),
  })
  .refine((m) => (m.value_deg === null) === (m.omitted_reason !== null), {
    message: 'value_deg must be null exactly when omitted_reason is set',
    path: ['value_deg'],
  });
export type PoseMetricInput = z.infer<typeof PoseMetricInput>;
