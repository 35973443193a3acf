/**
 * Keypoint sets used by the capture pipeline.
 *
 * COCO-17 order (source: COCO keypoint annotation spec; identical to MoveNet's and
 * BodyPix's output order and to OpenPose BODY_25B indices 0–16).
 */
export const COCO17 = [
  'nose',
  'left_eye',
  'right_eye',
  'left_ear',
  'right_ear',
  'left_shoulder',
  'right_shoulder',
  'left_elbow',
  'right_elbow',
  'left_wrist',
  'right_wrist',
  'left_hip',
  'right_hip',
  'left_knee',
  'right_knee',
  'left_ankle',
  'right_ankle',
] as const;
export type Coco17Name = (typeof COCO17)[number];

/**
 * OpenPose BODY_25B keypoint names in index order (source: Pose2Sim `skeletons.py`,
 * commit a948c205; documented in shared/data/pose2sim-demo/README.md). Indices 0–16 = COCO-17.
 */
export const BODY25B = [
  ...COCO17,
  'neck',
  'head_top',
  'left_big_toe',
  'left_small_toe',
  'left_heel',
  'right_big_toe',
  'right_small_toe',
  'right_heel',
] as const;
export type Body25bName = (typeof BODY25B)[number];

/**
 * BlazePose 33 landmark names in index order (MediaPipe Pose, `pose_landmark` model card; the
 * TF.js graph's first 33 of 39 outputs — the last 6 are ROI/auxiliary points, not landmarks),
 * renamed to this module's snake_case convention. `*_foot_index` is MediaPipe's "foot index"
 * (the tip of the foot, between the first and second toe): the toe point ankle dorsiflexion uses
 * when a set has no `*_big_toe`.
 */
export const BLAZEPOSE33 = [
  'nose',
  'left_eye_inner',
  'left_eye',
  'left_eye_outer',
  'right_eye_inner',
  'right_eye',
  'right_eye_outer',
  'left_ear',
  'right_ear',
  'mouth_left',
  'mouth_right',
  'left_shoulder',
  'right_shoulder',
  'left_elbow',
  'right_elbow',
  'left_wrist',
  'right_wrist',
  'left_pinky',
  'right_pinky',
  'left_index',
  'right_index',
  'left_thumb',
  'right_thumb',
  'left_hip',
  'right_hip',
  'left_knee',
  'right_knee',
  'left_ankle',
  'right_ankle',
  'left_heel',
  'right_heel',
  'left_foot_index',
  'right_foot_index',
] as const;
export type BlazePoseName = (typeof BLAZEPOSE33)[number];

/**
 * The toe point of `side` in `set`: `*_big_toe` (OpenPose BODY_25B) or else `*_foot_index`
 * (BlazePose); null when the set has neither (COCO-17).
 */
export function toeName(set: KeypointSet, side: 'left' | 'right'): string | null {
  if (set.includes(`${side}_big_toe`)) return `${side}_big_toe`;
  if (set.includes(`${side}_foot_index`)) return `${side}_foot_index`;
  return null;
}

/** A named keypoint set: the order in which per-frame arrays are laid out. */
export type KeypointSet = readonly string[];

/** Index of `name` in `set`, or −1. */
export function keypointIndex(set: KeypointSet, name: string): number {
  return set.indexOf(name);
}

/**
 * Pose2Sim TRC marker names (BODY_25B without eyes/ears) → our names, in the demo TRC column order
 * (RHip, RKnee, RAnkle, RBigToe, RSmallToe, RHeel, LHip, …, LWrist).
 */
export const POSE2SIM_TRC_MARKERS: Readonly<Record<string, Body25bName>> = {
  RHip: 'right_hip',
  RKnee: 'right_knee',
  RAnkle: 'right_ankle',
  RBigToe: 'right_big_toe',
  RSmallToe: 'right_small_toe',
  RHeel: 'right_heel',
  LHip: 'left_hip',
  LKnee: 'left_knee',
  LAnkle: 'left_ankle',
  LBigToe: 'left_big_toe',
  LSmallToe: 'left_small_toe',
  LHeel: 'left_heel',
  Neck: 'neck',
  Head: 'head_top',
  Nose: 'nose',
  RShoulder: 'right_shoulder',
  RElbow: 'right_elbow',
  RWrist: 'right_wrist',
  LShoulder: 'left_shoulder',
  LElbow: 'left_elbow',
  LWrist: 'left_wrist',
};
