import { crossCheckDegrees } from '../../../../models/capture/quality';

/** Labels of the capture results: why a reading was refused, and each condition a reading can carry (shared by the athlete's pose tab and the Capture page). */

/** Why a reading was omitted: a short label beside the number, the full reason under the table. */
export const OMITTED: Record<string, { short: string; long: string }> = {
  flexion_observability_gate: {
    short: 'limb not side-on',
    long: 'The limb was not seen side-on enough (sagittal ratio below 0.45), so flexion cannot be measured from this view.',
  },
  frontal_observability_gate: {
    short: 'limb not in the frontal plane',
    long: 'The limb pointed too far forward or back (frontal ratio below 0.45, e.g. a thigh flexed near 90°), so its frontal-plane angle is not defined.',
  },
  not_measurable_with_coco17: {
    short: 'needs a point the model lacks',
    long: 'The 17-point body model has no point this angle needs (e.g. a foot point for dorsiflexion).',
  },
  low_coverage: { short: 'too few valid frames', long: 'Too few frames had a valid 3D reading (athlete out of view or too few cameras).' },
};

/** Short labels of the conditions a reading can carry (full sentence with the numbers: `detail`; all listed on the help page "Pose metrics"). */
export const CONDITION: Record<string, string> = {
  rig_drift: 'rig moved since calibration',
  view_not_sagittal: 'no side view',
  view_not_frontal: 'no front or back view',
  low_coverage: 'too few valid frames',
  camera_offset: 'cameras out of step',
  camera_offset_corrected: 'camera timing corrected',
  sync_unchecked: 'camera timing not checked',
  sync_timestamps: 'cameras in step (timestamps)',
  sync_unconfirmed: 'camera timing not confirmed',
  camera_exclusion_imbalance: 'one camera disagrees',
  reprojection_imbalance: 'one camera reprojects badly',
  segment_length_unstable: 'limb length unstable',
  segment_asymmetry: 'left/right limb lengths differ',
  implausible_range: 'implausible angle',
  low_2d_confidence: 'low 2D confidence',
  hip_centres_implausible: 'hip points misplaced',
  two_view_keypoints: 'joint seen by only two cameras',
  frozen_keypoints: 'points did not move (not detected per frame)',
  athlete_not_tapped: 'athlete not tapped (others in view)',
  athlete_track_jump: 'tracked person changed mid-trial',
  model_disagreement: 'two pose models disagree',
  model_difference: 'second pose model',
  not_cross_checked: 'not cross-checked by a second model',
  static_trial: 'static trial (unfiltered)',
  short_trial_unfiltered: 'too short to filter (unfiltered)',
  duplicated_frames: 'camera repeated frames',
  duplicated_frames_masked: 'repeated frames left out',
  recording_cut_short: 'recording cut short',
  not_checked: 'recorded before quality checks',
};

/**
 * The short label of one condition as a reading's row shows it. For the second-model cross-check
 * (`model_disagreement`, `model_difference`) it carries the number the detail states, e.g. "two pose
 * models differ by 13.2°", so the difference sits beside the value, not only in the full sentence.
 */
export function conditionLabel(c: { code: string; detail: string }): string {
  const base = CONDITION[c.code] ?? c.code.replace(/_/g, ' ');
  const deg = crossCheckDegrees(c);
  if (deg === null) return c.code === 'model_difference' && /^not cross-checked/.test(c.detail) ? CONDITION.not_cross_checked! : base;
  return c.code === 'model_disagreement' ? `two pose models differ by ${deg.toFixed(1)}°` : `second pose model within ${deg.toFixed(1)}°`;
}

/** Movement tests as the clinician reads them. */
export const TEST_LABEL: Record<string, string> = {
  single_leg_squat: 'Single-leg squat',
  drop_jump: 'Drop jump',
  gait: 'Gait',
  balance: 'Balance',
  '': 'Test not recorded',
};

/**
 * Joint names as the clinician reads them (definitions: help page "Pose metrics"). An angle that is
 * not the ISB joint angle of the same name says so in its name (issue 14: "the name and help page
 * say so"): hip flexion and abduction are measured against the trunk (no pelvis landmarks), shoulder
 * flexion is the side-plane elevation.
 */
export const JOINT_LABEL: Record<string, string> = {
  knee_flexion: 'Knee flexion',
  hip_flexion: 'Hip flexion (thigh to trunk, not ISB)',
  shoulder_flexion: 'Shoulder flexion (side-plane elevation, not ISB)',
  elbow_flexion: 'Elbow flexion',
  ankle_dorsiflexion: 'Ankle dorsiflexion',
  hip_abduction: 'Hip abduction (thigh to trunk midline, not ISB)',
  knee_frontal_projection_angle: 'Knee frontal-plane projection angle (valgus +)',
  pelvic_obliquity: 'Pelvic obliquity',
  trunk_lateral_lean: 'Trunk lateral lean',
};

/** A joint's name inside a sentence: lower case, without the definition note ("hip flexion"). */
export function jointInSentence(joint: string): string {
  return (JOINT_LABEL[joint] ?? joint.replace(/_/g, ' ')).replace(/ \(.*\)$/, '').toLowerCase();
}
