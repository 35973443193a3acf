/**
 * Per-reading quality checks: whether a joint-angle reading has earned `trustworthy`, and each
 * reason it has not, as a condition the clinician sees beside the number (design/capture.md,
 * "trustworthy is earned per reading"). Bounds are stated here with their source; where the source
 * is our own measurement on the Pose2Sim demo, it says so — these are quality-control limits, not
 * validated clinical thresholds.
 */
import type { Vec3 } from './camera';
import type { KeypointSet } from './keypoints';
import type { PoseJoint, PoseSide } from './metrics';
import { dot, isFiniteVec, length, median, mid, normalize, quantile, RAD2DEG, scale, sub } from './vec';

/**
 * A condition attached to a reading. `fails` conditions make the reading not trustworthy; `info`
 * conditions are said beside the number without failing it.
 */
export const CONDITION_CODES = [
  'rig_drift',
  'view_not_sagittal',
  'view_not_frontal',
  'low_coverage',
  'camera_offset',
  'camera_offset_corrected',
  'sync_unchecked',
  'sync_timestamps',
  'sync_unconfirmed',
  'camera_exclusion_imbalance',
  'reprojection_imbalance',
  'segment_length_unstable',
  'segment_asymmetry',
  'implausible_range',
  'low_2d_confidence',
  'hip_centres_implausible',
  'two_view_keypoints',
  'frozen_keypoints',
  // no tap and more than one person in view: the automatic choice may be someone else (issue 14 review B3)
  'athlete_not_tapped',
  // the athlete's 3D hip centre jumped faster than a person moves: the track switched to someone else
  'athlete_track_jump',
  'model_disagreement',
  'model_difference',
  'not_cross_checked',
  'static_trial',
  // a trial that moves but is too short for the zero-lag filter (≤ filterPad frames): values unfiltered
  'short_trial_unfiltered',
  // a live recording's repeated frames (main/capture/live/sidecar.ts): over the bound / within it
  'duplicated_frames',
  'duplicated_frames_masked',
  // a live recording that ended early (full disk, a source that ended, a killed recorder): its first frames processed
  'recording_cut_short',
  // stored readings recorded before these checks existed (migration 0008)
  'not_checked',
] as const;
export type ConditionCode = (typeof CONDITION_CODES)[number];

/** Codes that are reported but do not by themselves make a reading untrustworthy. */
export const INFO_CONDITIONS: readonly ConditionCode[] = [
  'camera_offset_corrected',
  'sync_timestamps',
  'sync_unconfirmed',
  'static_trial',
  'short_trial_unfiltered',
  'model_difference',
  'not_cross_checked',
  'duplicated_frames_masked',
  'recording_cut_short',
];

/** Longest condition detail (characters) a reading stores: one check's sentence is ≤ 500; merged details of one code (several cameras or segments, {@link mergeConditions}) may need twice that. */
export const CONDITION_DETAIL_MAX = 1000;

/** One condition: its code and a sentence with the measured numbers. */
export interface ReadingCondition {
  code: ConditionCode;
  detail: string;
}

/** Coefficient of variation of a segment's 3D length over the trial above which readings using it fail (`segment_length_unstable`). Measured on the demo BalancingTrial from its OpenPose JSON: 2.9–8.8 % (largest: left shank); with invented legs (testing/demo-cases.ts) 11–18 %. */
export const SEGMENT_CV_MAX = 0.1;
/**
 * Raw (unfiltered) coefficient of variation of a segment's triangulated length below which, in a
 * trial long enough to be a movement (not `static_trial`), its keypoints were not detected frame by
 * frame (`frozen_keypoints`): a 2D model's independent per-frame detections jitter by a pixel or
 * more in every view, which makes a 0.3–0.45 m segment's raw 3D length vary by ≥ 1 % even when the
 * athlete holds still (≈ 2 mm per px at 3 m with f ≈ 1700 px). A segment rigid to 0.5 % over a
 * movement trial is a picture, a mannequin, a repeated frame or a tracker holding its last pose, or
 * points filled in by another tool; its angle measures no movement. Demo, raw CV: BalancingTrial
 * 3.8–10.2 % (every segment); the multi-person trial's auto-selected person (confidence 1.00 in
 * every view, 300 points outside cam_01's image) thigh and shank 0.00–0.04 % over 100 frames
 * (knee flexion range 0.1°). The demo's static trials are 12 copies of one frame (CV 0.00 %): they
 * are `static_trial`, to which this check does not apply.
 */
export const FROZEN_SEGMENT_CV_MAX = 0.005;
/**
 * Standard deviation of a keypoint's 2D confidence over every frame and view that detected it
 * below which, in a trial that is not `static_trial`, it was not scored frame by frame by a 2D model
 * (`frozen_keypoints`): a model's confidence varies from frame to frame and view to view. Catches
 * copied or filled-in points that were given pixel jitter (which the segment-CV test,
 * {@link FROZEN_SEGMENT_CV_MAX}, no longer sees). Demo, measured SD: BalancingTrial (OpenPose)
 * 0.046–0.102 at hips, knees, ankles and wrists; the multi-person trial's auto-selected figure 0.000
 * (confidence 1.00 everywhere), also after 0.7 px Gaussian noise on its pixels (raw thigh CV then
 * 0.57–0.61 %, above the CV bound: knee flexion trustworthy without this check). The demo's static
 * trials are 1.00 everywhere too (static_trial: not checked).
 */
export const FROZEN_CONFIDENCE_SD_MAX = 0.001;

/** SD (0..1) of keypoint `k`'s confidence over the frames and views of F×K×C×3 observations that detected it (confidence > 0); NaN with fewer than 10 detections. See {@link FROZEN_CONFIDENCE_SD_MAX}. */
export function keypointConfidenceSpread(obs: Float64Array, K: number, C: number, k: number): number {
  const F = obs.length / (K * C * 3);
  const v: number[] = [];
  for (let f = 0; f < F; f++)
    for (let c = 0; c < C; c++) {
      const w = obs[((f * K + k) * C + c) * 3 + 2] ?? 0;
      if (w > 0) v.push(w);
    }
  if (v.length < 10) return NaN;
  const m = v.reduce((a, b) => a + b, 0) / v.length;
  return Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / v.length);
}

/** Left/right difference of a segment's median length, relative to their mean, above which readings using it fail (`segment_asymmetry`). Demo: ≤ 6 %. Healthy adults' bone-length asymmetry is a few per cent. */
export const SEGMENT_ASYMMETRY_MAX = 0.15;
/** Mean 2D confidence (0..1) of the keypoints an angle uses, over the views that detected them, below which it fails (`low_2d_confidence`). */
export const MIN_MEAN_2D_CONFIDENCE = 0.5;
/** A camera whose excluded fraction exceeds this and {@link EXCLUSION_IMBALANCE_FACTOR} × the median of the others is flagged. Measured on the demo BalancingTrial in sync: cam_03 26 % (its noisiest view), others 1–5 %. */
export const EXCLUSION_FRACTION_MAX = 0.3;
export const EXCLUSION_IMBALANCE_FACTOR = 3;
/** A camera whose median reprojection residual (px) exceeds this factor × the median of the others, and {@link REPROJECTION_IMBALANCE_MIN_PX}, is flagged. */
export const REPROJECTION_IMBALANCE_FACTOR = 2.5;
export const REPROJECTION_IMBALANCE_MIN_PX = 8;
/** A trial too short for the zero-lag filter (or under half a second) in which the athlete held still ({@link STATIC_MAX_DISPLACEMENT_M}) is a static trial: its values are unfiltered, and peak/range are not movement figures. */
export const STATIC_TRIAL_SECONDS = 0.5;
/**
 * Largest 3D displacement (m) of any keypoint from its median position (95th percentile over the
 * trial's raw, unfiltered triangulated frames) for a short trial to count as a held posture
 * (`static_trial`). Static is measured, not inferred from the clip's length: a short clip in which
 * the athlete moves is not exempt from the `frozen_keypoints` and `sync_unchecked` checks. Demo,
 * measured: the static trials 0.0 cm (12 copies of one frame); the multi-person trial's
 * auto-selected person over 20 frames 2.9–5.3 cm (the whole figure translates rigidly); the
 * BalancingTrial's first 29 frames up to 61 cm (right foot). 2 cm is ≈ 10 px of 2D jitter at 3 m
 * (f ≈ 1700 px), above a held posture's detection jitter and postural sway over half a second.
 */
export const STATIC_MAX_DISPLACEMENT_M = 0.02;

/**
 * Largest keypoint displacement (m) in F×K×3 raw triangulated points: per keypoint, the 95th
 * percentile over frames of its 3D distance from its per-axis median position; the maximum over
 * keypoints seen in ≥ 2 frames. 0 when no keypoint is; NaN-free. Compare with {@link STATIC_MAX_DISPLACEMENT_M}.
 */
export function maxKeypointDisplacement(points: Float64Array, K: number): number {
  const F = Math.floor(points.length / (K * 3));
  let worst = 0;
  for (let k = 0; k < K; k++) {
    const xs: [number[], number[], number[]] = [[], [], []];
    for (let f = 0; f < F; f++) {
      const i = (f * K + k) * 3;
      if (Number.isFinite(points[i]) && Number.isFinite(points[i + 1]) && Number.isFinite(points[i + 2]))
        for (let a = 0; a < 3; a++) xs[a]!.push(points[i + a]!);
    }
    if (xs[0].length < 2) continue;
    const m = xs.map((v) => median(v));
    const d = xs[0].map((_, j) => Math.hypot(xs[0][j]! - m[0]!, xs[1][j]! - m[1]!, xs[2][j]! - m[2]!)).sort((a, b) => a - b);
    worst = Math.max(worst, d[Math.min(d.length - 1, Math.floor(0.95 * d.length))]!);
  }
  return worst;
}

/**
 * Fastest a person's hip centre moves, m/s, for {@link trackJumpCondition}: elite sprinters peak
 * near 12 m/s (Bolt's 2009 100 m, ~12.3 m/s); a clinic movement is far slower. Our bound.
 */
export const TRACK_MAX_SPEED_M_S = 12;
/** Slack (m) on top of the speed bound, for triangulation noise and hip points a 2D model places differently (measured: the demo BalancingTrial's raw hip centre moves ≤ 0.076 m frame to frame at 60 fps). Our bound. */
export const TRACK_JUMP_SLACK_M = 0.25;

/**
 * `athlete_track_jump` (failing, every reading): between two frames with both hips triangulated,
 * the hip centre (raw 3D points, metres) moved further than `TRACK_JUMP_SLACK_M + TRACK_MAX_SPEED_M_S × Δt`.
 * No one moves that fast: the person followed changed — frame-to-frame tracking in the tapped view
 * took another person near the athlete (issue 14 re-review: a stray point moved the athlete's box
 * and the track switched to a second person 0.8 m away; every reading was trustworthy). Limit: a
 * switch to someone closer than the bound is not seen. Null when no jump (or < 2 such frames).
 * @param points F×K×3 raw triangulated points (m)
 * @param hips indices of the left and right hip in the keypoint set
 * @param fps frame rate (frames/s)
 */
export function trackJumpCondition(points: Float64Array, K: number, hips: readonly [number, number], fps: number): ReadingCondition | null {
  const F = Math.floor(points.length / (K * 3));
  const centre = (f: number): Vec3 | null => {
    const a = (f * K + hips[0]) * 3,
      b = (f * K + hips[1]) * 3;
    const c: Vec3 = [(points[a]! + points[b]!) / 2, (points[a + 1]! + points[b + 1]!) / 2, (points[a + 2]! + points[b + 2]!) / 2];
    return isFiniteVec(c) ? c : null;
  };
  let prev: { f: number; c: Vec3 } | null = null;
  const jumps: { from: number; to: number; m: number }[] = [];
  for (let f = 0; f < F; f++) {
    const c = centre(f);
    if (!c) continue;
    if (prev) {
      const d = length(sub(c, prev.c));
      if (d > TRACK_JUMP_SLACK_M + (TRACK_MAX_SPEED_M_S * (f - prev.f)) / fps) jumps.push({ from: prev.f, to: f, m: d });
    }
    prev = { f, c };
  }
  if (jumps.length === 0) return null;
  const worst = jumps.reduce((a, b) => (b.m > a.m ? b : a));
  return {
    code: 'athlete_track_jump',
    detail: `the athlete's hip centre jumped ${worst.m.toFixed(2)} m between frames ${worst.from} and ${worst.to} (${((worst.to - worst.from) / fps).toFixed(2)} s; ${jumps.length} such jump${jumps.length === 1 ? '' : 's'}; limit ${TRACK_JUMP_SLACK_M} m + ${TRACK_MAX_SPEED_M_S} m/s): nobody moves that fast, so the person followed changed — probably someone near the athlete. Record with nobody else near the athlete, or tap the athlete again and process`,
  };
}

/**
 * Plausible joint ranges (degrees), beyond which a value is a measurement failure rather than a
 * movement: normal active ranges (AAOS, Greene & Heckman 1994, "The Clinical Measurement of
 * Joint Motion") widened by ≈ 20° for hypermobility and marker-less definitions.
 */
export const PLAUSIBLE_RANGE_DEG: Readonly<Record<PoseJoint, readonly [number, number]>> = {
  hip_flexion: [-45, 150],
  knee_flexion: [-20, 165],
  shoulder_flexion: [-80, 200],
  elbow_flexion: [-20, 165],
  ankle_dorsiflexion: [-70, 45],
  // frontal plane: hip abduction 0–45° / adduction 0–30° (AAOS) widened; FPPA in landing and
  // single-leg squat rarely beyond ±30° (Munro et al. 2012); pelvic obliquity and trunk lean in gait
  // and landing within ±15–20°.
  hip_abduction: [-45, 70],
  knee_frontal_projection_angle: [-40, 50],
  pelvic_obliquity: [-30, 30],
  trunk_lateral_lean: [-45, 45],
};

/**
 * Hip joint-centre placement (`hip_centres_implausible`). 2D models place the "hip" keypoint where
 * their training set's annotators did (COCO: the visible hip region; OpenPose BODY_25B: its own
 * convention), not at the anatomical hip joint centre, and the placement wanders with the view and
 * the pose. The two hip points are only ~20 cm apart, so a few centimetres of misplacement rotate
 * the pelvis axis — the medio-lateral axis of every pelvis-frame angle — by tens of degrees, while
 * triangulation, segment lengths and 2D confidence all still look normal. On the demo
 * BalancingTrial the hips from MoveNet and from OpenPose sit 5–13 cm apart, and left hip flexion
 * differs by 29° mean between the two. The check compares the hip line with the shoulder line,
 * which the same model places reliably (shoulders are visible landmarks): the transverse-plane
 * angle between them (pelvis–thorax axial rotation) stays within about ±10° in gait (Crosbie et al.
 * 1997, Gait Posture 5:6) and small in squats, landings and balance tasks; a hip line that turns
 * far beyond that against the shoulders is a misplaced hip, not a movement.
 * Demo BalancingTrial, p95 of |pelvis–thorax angle| (filtered): OpenPose JSON 22°, MoveNet on the
 * videos 40° (max 46°). A quality-control limit for non-rotational tasks, not a clinical threshold:
 * in throwing, golf or other trunk-rotation tasks the real angle exceeds it.
 */
export const PELVIS_THORAX_TWIST_P95_MAX_DEG = 30;
/** Hip width (between the hip points) over mean thigh length: outside this range the hip points are not at the hip joints. Demo: 0.48 (MoveNet) – 0.50 (OpenPose); adults' inter-hip-joint-centre distance ≈ 0.17–0.20 m against thighs of ≈ 0.40–0.45 m. */
export const HIP_WIDTH_TO_THIGH_RANGE: readonly [number, number] = [0.3, 0.8];
/** Coefficient of variation of the hip width over the trial above which the hip points are unstable (the pelvis is rigid). Demo: 5 % (MoveNet), 8 % (OpenPose). */
export const HIP_WIDTH_CV_MAX = 0.15;
/** Angles whose definition uses the hip points (the pelvis frame, or the hip as a thigh end). */
export const HIP_DEPENDENT_JOINTS: readonly PoseJoint[] = [
  'hip_flexion',
  'knee_flexion',
  'hip_abduction',
  'knee_frontal_projection_angle',
  'pelvic_obliquity',
  'trunk_lateral_lean',
];

/** Hip-placement statistics over a trial (see {@link PELVIS_THORAX_TWIST_P95_MAX_DEG}). */
export interface PelvisStats {
  /** Frames with both hips and both shoulders. */
  frames: number;
  /** p95 and max over frames of |angle between hip line and shoulder line| in the plane normal to the trunk axis, degrees. */
  twistP95Deg: number;
  twistMaxDeg: number;
  /** Median hip width (m), its coefficient of variation, and median hip width / mean thigh length. */
  widthM: number;
  widthCv: number;
  widthToThigh: number;
}

/** Hip-placement statistics from F×K×3 points (metres, NaN missing); null when the set lacks hips or shoulders or fewer than 2 frames have them. */
export function pelvisStats(points: Float64Array, set: KeypointSet): PelvisStats | null {
  const K = set.length,
    F = points.length / (K * 3);
  const I = ['left_hip', 'right_hip', 'left_shoulder', 'right_shoulder', 'left_knee', 'right_knee'].map((n) => set.indexOf(n));
  if (I.slice(0, 4).some((i) => i < 0)) return null;
  const p = (f: number, i: number): Vec3 => (i < 0 ? [NaN, NaN, NaN] : [points[(f * K + i) * 3]!, points[(f * K + i) * 3 + 1]!, points[(f * K + i) * 3 + 2]!]);
  const twist: number[] = [],
    width: number[] = [],
    thigh: number[] = [];
  for (let f = 0; f < F; f++) {
    const [lh, rh, ls, rs, lk, rk] = I.map((i) => p(f, i)) as [Vec3, Vec3, Vec3, Vec3, Vec3, Vec3];
    if (![lh, rh, ls, rs].every(isFiniteVec)) continue;
    const hipLine = sub(rh, lh),
      shLine = sub(rs, ls),
      up = sub(mid(ls, rs), mid(lh, rh));
    if (!(length(up) > 1e-9)) continue;
    const u = normalize(up);
    const h = sub(hipLine, scale(u, dot(hipLine, u))),
      s = sub(shLine, scale(u, dot(shLine, u)));
    if (!(length(h) > 1e-9) || !(length(s) > 1e-9)) continue;
    twist.push(Math.acos(Math.max(-1, Math.min(1, dot(normalize(h), normalize(s))))) * RAD2DEG);
    width.push(length(hipLine));
    const t = [sub(lk, lh), sub(rk, rh)].filter(isFiniteVec).map(length);
    if (t.length) thigh.push(t.reduce((a, b) => a + b, 0) / t.length);
  }
  if (twist.length < 2) return null;
  const mean = width.reduce((a, b) => a + b, 0) / width.length;
  const sd = Math.sqrt(width.reduce((a, b) => a + (b - mean) ** 2, 0) / (width.length - 1));
  return {
    frames: twist.length,
    twistP95Deg: quantile(twist, 0.95),
    twistMaxDeg: Math.max(...twist),
    widthM: median(width),
    widthCv: mean > 0 ? sd / mean : Infinity,
    widthToThigh: thigh.length ? median(width) / median(thigh) : NaN,
  };
}

/** The `hip_centres_implausible` condition for a trial's pelvis statistics, or null when they pass. */
export function hipPlacementCondition(st: PelvisStats | null): ReadingCondition | null {
  if (!st) return null;
  const why: string[] = [];
  if (st.twistP95Deg > PELVIS_THORAX_TWIST_P95_MAX_DEG)
    why.push(
      `hip line turned ${st.twistP95Deg.toFixed(0)}° against the shoulder line (95th percentile; max ${st.twistMaxDeg.toFixed(0)}°; limit ${PELVIS_THORAX_TWIST_P95_MAX_DEG}°)`,
    );
  const [lo, hi] = HIP_WIDTH_TO_THIGH_RANGE;
  if (Number.isFinite(st.widthToThigh) && (st.widthToThigh < lo || st.widthToThigh > hi))
    why.push(`hips ${(100 * st.widthM).toFixed(1)} cm apart = ${st.widthToThigh.toFixed(2)} × thigh length (plausible ${lo}–${hi})`);
  if (st.widthCv > HIP_WIDTH_CV_MAX) why.push(`hip width varied ${(100 * st.widthCv).toFixed(0)} % (limit ${100 * HIP_WIDTH_CV_MAX} %)`);
  if (!why.length) return null;
  return {
    code: 'hip_centres_implausible',
    detail: `hip points misplaced by the 2D model: ${why.join('; ')}. The pelvis axis turns with them, so pelvis-frame and hip-based angles are unreliable: keep the hips visible (no loose clothing, hands off the hips), add a camera with a clear view of the pelvis, or read these angles as estimates`,
  };
}

/**
 * Cross-checked keypoints (`two_view_keypoints`). A keypoint triangulated from two views is not
 * checked by anything: its two rays always meet up to the epipolar constraint, so the reprojection
 * residual tests one direction per view and an error along the epipolar line (a 2D model placing
 * the joint somewhere else in one view) moves the point in depth unseen (Hartley & Zisserman,
 * "Multiple View Geometry", 2nd ed., §9.1 and §12.1: two views give one constraint beyond the
 * point's three unknowns; a third view checks the point in both image directions, §15.1). With three
 * or more cameras calibrated, a point left with two views means the others did not see it
 * confidently (hidden, out of frame) or were excluded for disagreeing (> 15 px) — and a pair that
 * agreed only by the epipolar test is kept. A reading is trustworthy only when the keypoints its
 * angle uses were cross-checked by ≥ 3 views in at least {@link TRUST_MIN_CROSS_CHECKED} of its
 * reported frames, the same 80 % share of frames the coverage condition asks for (summary.ts
 * `TRUST_MIN_COVERAGE`): a frame resting on an unchecked point is not counted as a checked one.
 * Frames whose point was missing and gap-filled count as not cross-checked. The check does not apply
 * to a 2-camera rig (no point can ever be cross-checked there; the camera count says so).
 *
 * Measured on the Pose2Sim demo BalancingTrial (frames of each reported reading with a keypoint from
 * < 3 views): OpenPose JSON 1–14 % (every other demo trial 0 %); MoveNet on the videos 11–55 %
 * (left shoulder flexion 21 %, 18 of 86 frames); BlazePose, first 40 frames, 45–82 % (left hip
 * flexion 65 %). In those runs the angle in frames resting on a 2-view point differs from the JSON's
 * by 13.2° (MoveNet) and 14.8° (BlazePose) on average, against 9.1° and 8.6° in cross-checked frames.
 * A quality-control limit, not a validated clinical threshold.
 */
export const TRUST_MIN_CROSS_CHECKED = 0.8;
/** Fewest views that cross-check a triangulated point (see {@link TRUST_MIN_CROSS_CHECKED}). */
export const CROSS_CHECK_MIN_VIEWS = 3;

/** How a trial's keypoints were triangulated, for {@link crossCheckCondition}. */
export interface ViewSupport {
  /** Camera names, in calibration order (bit c of a mask = camera c). */
  cameras: readonly string[];
  /** Keypoint names of the set (index k). */
  keypoints: KeypointSet;
  /** F×K bitmasks of the views used for each point (0 = missing). */
  viewMask: ArrayLike<number>;
  /** F×K bitmasks of the views whose 2D point had confidence ≥ the triangulation threshold; a view in it but not in `viewMask` was excluded for reprojection error. */
  confidentMask: ArrayLike<number>;
}

/** Number of set bits (views) in a view mask. */
export function viewCount(mask: number): number {
  let m = mask >>> 0,
    n = 0;
  while (m) {
    n += m & 1;
    m >>>= 1;
  }
  return n;
}

/** Full keypoint names an angle uses on `side` that exist in `set` ('toe' = big toe or foot index). */
export function jointKeypoints(joint: PoseJoint, side: PoseSide, set: KeypointSet): string[] {
  const names = JOINT_DEPENDS[joint].keypoints.flatMap((k) =>
    k.startsWith('#') ? [k.slice(1)] : k === 'toe' ? [`${side}_big_toe`, `${side}_foot_index`] : [`${side}_${k}`],
  );
  return [...new Set(names)].filter((n) => set.includes(n));
}

/**
 * Per frame (F = viewMask.length / K): 1 when a keypoint the angle uses was triangulated from fewer
 * than {@link CROSS_CHECK_MIN_VIEWS} views (two, or none: missing and gap-filled), else 0 — the
 * frames {@link crossCheckCondition} counts as not cross-checked.
 */
export function uncheckedFrames(joint: PoseJoint, side: PoseSide, set: KeypointSet, viewMask: ArrayLike<number>): Uint8Array {
  const K = set.length,
    F = Math.floor(viewMask.length / K);
  const idx = jointKeypoints(joint, side, set).map((n) => set.indexOf(n));
  const out = new Uint8Array(F);
  for (let f = 0; f < F; f++) out[f] = idx.some((k) => viewCount(viewMask[f * K + k] ?? 0) < CROSS_CHECK_MIN_VIEWS) ? 1 : 0;
  return out;
}

/**
 * The `two_view_keypoints` condition of one reading, or null when it passes or does not apply
 * (fewer than 3 cameras, no reported frame). `reported` = the reading's per-frame values (NaN where
 * missing or gated), length F. The detail names the keypoints, the share of frames, and the camera
 * that most often failed to contribute and why (hidden/unsure vs disagreeing), so the clinician
 * knows which view to fix.
 */
export function crossCheckCondition(joint: PoseJoint, side: PoseSide, reported: ArrayLike<number>, v: ViewSupport): ReadingCondition | null {
  const C = v.cameras.length,
    K = v.keypoints.length;
  if (C < CROSS_CHECK_MIN_VIEWS) return null;
  const names = jointKeypoints(joint, side, v.keypoints);
  const idx = names.map((n) => v.keypoints.indexOf(n));
  let frames = 0,
    unchecked = 0;
  const perKeypoint = new Array<number>(names.length).fill(0);
  const hidden = new Array<number>(C).fill(0),
    excluded = new Array<number>(C).fill(0);
  for (let f = 0; f < reported.length; f++) {
    if (!Number.isFinite(reported[f])) continue;
    frames++;
    let any = false;
    idx.forEach((k, j) => {
      const used = v.viewMask[f * K + k] ?? 0;
      if (viewCount(used) >= CROSS_CHECK_MIN_VIEWS) return;
      any = true;
      perKeypoint[j]!++;
      const conf = v.confidentMask[f * K + k] ?? 0;
      for (let c = 0; c < C; c++) {
        if (used & (1 << c)) continue;
        if (conf & (1 << c)) excluded[c]!++;
        else hidden[c]!++;
      }
    });
    if (any) unchecked++;
  }
  if (!frames || (frames - unchecked) / frames >= TRUST_MIN_CROSS_CHECKED) return null;
  const worst = names
    .map((n, j) => [n, perKeypoint[j]! / frames] as const)
    .filter(([, x]) => x > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([n, x]) => `${n.replace(/_/g, ' ')} ${Math.round(100 * x)} %`);
  const missing = hidden.map((h, c) => h + excluded[c]!);
  const c = missing.indexOf(Math.max(...missing));
  const why =
    hidden[c]! >= excluded[c]!
      ? `most often ${v.cameras[c]}, which did not see it confidently (hidden, out of frame, or the 2D model lost the athlete in that view)`
      : `most often ${v.cameras[c]}, whose 2D point disagreed with the other cameras (excluded for reprojection error)`;
  return {
    code: 'two_view_keypoints',
    detail: `in ${Math.round((100 * unchecked) / frames)} % of frames a point this angle uses was placed from only two cameras (limit ${Math.round(100 * (1 - TRUST_MIN_CROSS_CHECKED))} %; ${worst.join(', ')}), so no third camera checked it; missing: ${why}. Place the cameras so at least three see these joints clearly`,
  };
}

/**
 * Second-model cross-check (`model_disagreement`, `model_difference`): with `--cross-check MODEL` a
 * second 2D model runs on the same frames and is triangulated, filtered and turned into angles with
 * the same definitions. Per reading, the criterion is in the angle's own unit: the mean |difference|
 * (degrees) between the two models' angles over the reading's reported frames where both have one.
 * Above this bound the reading fails `model_disagreement`; at or below it the difference is still
 * reported beside the number (`model_difference`, informational).
 *
 * Why 8°: by the triangle inequality, mean |A − B| ≤ mean |A − truth| + mean |B − truth|, so two models
 * differing by more than 8° mean means at least one is more than 4° mean from the truth — beyond the
 * 3–4° Pose2Sim reports for marker-less angles against markers (walking, running, cycling; Pagnon et
 * al. 2022, "Pose2Sim … Part 2: Accuracy", Sensors 22(7)). The bound comes from that rationale, but it
 * was picked with the demo's sweep in view (> 5° flags 10 readings, > 10° two), so the figures below
 * are not an independent test of it. Measured on the demo
 * BalancingTrial (100 frames; BENCHMARKS.md, "Second-model cross-check"), MoveNet Lightning against
 * MoveNet Thunder: the 5 readings above 8° differ from the OpenPose-JSON run by 16.3° mean, the 11 at or
 * below by 7.1°; per frame, where the two models differ by > 10° the reading is 20.7° from the JSON's,
 * elsewhere 8.1°. The earlier criterion (a keypoint's median 3D distance between the models > 60 mm) did
 * not separate them (flagged 9.8° vs unflagged 11.1° with BlazePose; nothing flagged with Thunder).
 * What it cannot see: a misplacement both models share. Lightning and Thunder place the left shoulder
 * 20 mm apart but 33 mm from OpenPose's, offsets in the same direction (cosine 0.66; right shoulder
 * 0.98): left shoulder flexion, 11.3° from the JSON's, differs between them by 5.8° only.
 * A quality-control limit from one trial, not a clinical threshold.
 */
export const MODEL_DISAGREEMENT_MAX_DEG = 8;

/**
 * The second model the app's cross-check option runs beside the default MoveNet Lightning
 * (`capture.process` `cross_check`): MoveNet Thunder, chosen by the demo table (BENCHMARKS.md).
 */
export const CROSS_CHECK_MODEL = 'movenet-thunder' as const;
/**
 * How much longer the 2D stage (> 99 % of processing from video) takes with the cross-check: demo
 * BalancingTrial, 4 cameras × 100 frames, process CPU time: Lightning 81.4 s, Thunder 211.9 s (its
 * own decode and person boxes) → (81.4 + 211.9) / 81.4 ≈ 3.6 (2026-12-01, BENCHMARKS.md).
 */
export const CROSS_CHECK_COST_FACTOR = 3.6;

/** Two models' processed 3D keypoints for the {@link modelDisagreementCondition}. */
export interface ModelCrossCheck {
  /** Human labels of the models (e.g. "MoveNet Lightning", "BlazePose Full"). */
  primary: string;
  secondary: string;
  /** Keypoint sets and F×K×3 points (metres, NaN missing) of each; frames aligned. */
  primarySet: KeypointSet;
  primaryPoints: Float64Array;
  secondarySet: KeypointSet;
  secondaryPoints: Float64Array;
}

/** Per frame, the 3D distance (mm) between the two models' `name` keypoints; NaN where either is missing or a set lacks it. */
export function keypointDistanceMm(x: ModelCrossCheck, name: string): Float64Array {
  const Ka = x.primarySet.length,
    Kb = x.secondarySet.length;
  const F = Math.min(x.primaryPoints.length / (Ka * 3), x.secondaryPoints.length / (Kb * 3));
  const out = new Float64Array(F).fill(NaN);
  const i = x.primarySet.indexOf(name),
    j = x.secondarySet.indexOf(name);
  if (i < 0 || j < 0) return out;
  for (let f = 0; f < F; f++) {
    const a = (f * Ka + i) * 3,
      b = (f * Kb + j) * 3;
    out[f] =
      1000 *
      Math.hypot(
        x.primaryPoints[a]! - x.secondaryPoints[b]!,
        x.primaryPoints[a + 1]! - x.secondaryPoints[b + 1]!,
        x.primaryPoints[a + 2]! - x.secondaryPoints[b + 2]!,
      );
  }
  return out;
}

/** Per keypoint the angle uses (and both models have): median distance (mm) over the reading's reported frames where both models have the point, and those frames. Sorted worst first. */
export function readingModelDistances(
  joint: PoseJoint,
  side: PoseSide,
  reported: ArrayLike<number>,
  x: ModelCrossCheck,
): { keypoint: string; medianMm: number; frames: number }[] {
  const names = jointKeypoints(joint, side, x.primarySet).filter((n) => x.secondarySet.includes(n));
  return names
    .map((n) => {
      const d = keypointDistanceMm(x, n);
      const v: number[] = [];
      for (let f = 0; f < d.length; f++) if (Number.isFinite(reported[f]) && Number.isFinite(d[f])) v.push(d[f]!);
      return { keypoint: n, medianMm: v.length ? median(v) : NaN, frames: v.length };
    })
    .filter((r) => r.frames > 0)
    .sort((a, b) => b.medianMm - a.medianMm);
}

/** Mean and 95th-percentile |difference| (degrees) between a reading's reported values and the second model's angle, over the frames where both are finite, and how many frames that is. */
export function readingAngleDifference(reported: ArrayLike<number>, secondaryDeg: ArrayLike<number>): { meanDeg: number; p95Deg: number; frames: number } {
  const d: number[] = [];
  const F = Math.min(reported.length, secondaryDeg.length);
  for (let f = 0; f < F; f++) {
    const a = reported[f]!,
      b = secondaryDeg[f]!;
    if (Number.isFinite(a) && Number.isFinite(b)) d.push(Math.abs(a - b));
  }
  return { meanDeg: d.length ? d.reduce((s, x) => s + x, 0) / d.length : NaN, p95Deg: quantile(d, 0.95), frames: d.length };
}

/**
 * The cross-check of one reading: `model_disagreement` (fails) when the two models' angles differ by
 * more than {@link MODEL_DISAGREEMENT_MAX_DEG} mean over the reading's reported frames, else
 * `model_difference` (informational) with the number; when the second model has no value on those
 * frames nothing was cross-checked, and it says so ({@link notCrossCheckedCondition}). The detail gives mean and p95
 * degrees, the frames compared, both models, and the keypoint the two place furthest apart (mm).
 * @param reported the primary reading's per-frame values (NaN = not reported)
 * @param secondaryDeg the second model's angle for the same joint and side per frame (NaN = none)
 */
export function modelDisagreementCondition(
  joint: PoseJoint,
  side: PoseSide,
  reported: ArrayLike<number>,
  secondaryDeg: ArrayLike<number>,
  x: ModelCrossCheck,
): ReadingCondition {
  const d = readingAngleDifference(reported, secondaryDeg);
  if (d.frames === 0)
    return notCrossCheckedCondition(x.primary, `${x.secondary} ran but has no value for this angle on the reading's frames (it did not find these joints)`);
  const far = readingModelDistances(joint, side, reported, x)[0];
  const where = far ? `; the joint they place furthest apart is the ${far.keypoint.replace(/_/g, ' ')}, ${Math.round(far.medianMm)} mm` : '';
  const num = `${x.primary} and ${x.secondary} differ by ${d.meanDeg.toFixed(1)}° mean here (p95 ${d.p95Deg.toFixed(1)}°, ${d.frames} frames${where})`;
  if (d.meanDeg > MODEL_DISAGREEMENT_MAX_DEG)
    return {
      code: 'model_disagreement',
      detail: `two 2D models disagree on this angle: ${num}; limit ${MODEL_DISAGREEMENT_MAX_DEG}°, so at least one is more than ${MODEL_DISAGREEMENT_MAX_DEG / 2}° mean off. Read it as an estimate, or improve what the cameras see of these joints (tight clothing, contrast, a camera facing them)`,
    };
  return {
    code: 'model_difference',
    detail: `${num}, within the ${MODEL_DISAGREEMENT_MAX_DEG}° limit. Agreement does not prove both right: two models can misplace a joint the same way`,
  };
}

/**
 * `not_cross_checked` (informational): the reading's 2D points come from one model and no second
 * model's angle was compared with it, so a misplacement by that model is checked only by the
 * geometric checks (which cannot see an offset consistent across views; README "Not done").
 * Said on every reading that has no `model_difference` / `model_disagreement`: the cross-check
 * was turned off (`--cross-check none`, the Process step's option unticked), the 2D came from
 * keypoint files (the cross-check runs a model on the videos), or the second model found none of
 * the angle's joints.
 * @param primary label of where the 2D came from, e.g. "MoveNet Lightning" or "the keypoint files"; null when unknown
 * @param why why no second model was compared (a clause, no final full stop)
 */
export function notCrossCheckedCondition(primary: string | null, why: string): ReadingCondition {
  return {
    code: 'not_cross_checked',
    detail: `2D points from one model${primary ? ` (${primary})` : ''}; no second model compared: ${why}. A joint that model misplaces the same way in every camera passes the other checks, so read the angle with the spread measured for that model (capture:validate)`,
  };
}

/**
 * `athlete_not_tapped` (failing, every reading): nobody tapped the athlete and some camera shows
 * more than one person in some frame, so the automatic choice (the largest person in the first
 * camera that sees anyone) may be a bystander, a picture or a mannequin — and a figure whose points
 * were filled in can be given the pixel and confidence noise of a real detection, which no check on
 * the points alone can tell apart (issue 14 review B3). Only a person can say who the athlete is.
 * Null when tapped or when every camera sees at most one person.
 * @param counts people per camera, the most in one frame (`peopleInView`, models/capture/association.ts)
 * @param cameraNames the calibration's camera names, same order
 */
export function athleteNotTappedCondition(tapped: boolean, counts: readonly number[], cameraNames: readonly string[]): ReadingCondition | null {
  if (tapped || !counts.some((n) => n > 1)) return null;
  const seen = counts
    .map((n, c) => (n > 1 ? `${cameraNames[c] ?? `camera ${c}`} ${n}` : null))
    .filter((x) => x !== null)
    .join(', ');
  return {
    code: 'athlete_not_tapped',
    detail: `more than one person is in view (most in one frame: ${seen}) and nobody tapped the athlete: the largest person was taken, and these readings may be someone else's. Tap the athlete on the first frame and process again: in the app, "Tap the athlete" on the Process page (a trial with videos) or after recording; for a trial of 2D keypoint files only, on the command line (npm run capture -- process … --tap CAM:X,Y)`,
  };
}

/**
 * The mean angle difference (degrees) a `model_difference` / `model_disagreement` detail states
 * ("… differ by 5.8° mean here …"), or null for other conditions and for details without it. For
 * the CLI table and the app's short labels, so the number sits beside the code.
 */
export function crossCheckDegrees(c: ReadingCondition | { code: string; detail: string }): number | null {
  if (c.code !== 'model_difference' && c.code !== 'model_disagreement') return null;
  const m = /differ by (\d+(?:\.\d+)?)° mean/.exec(c.detail);
  return m ? Number(m[1]) : null;
}

/**
 * One entry per condition code, in first-seen order: when a check fails for several segments or
 * cameras (e.g. thigh and shank both unstable), their details are joined with "; " so the list never
 * repeats a code and no detail is lost.
 */
export function mergeConditions(conds: readonly ReadingCondition[]): ReadingCondition[] {
  const out: ReadingCondition[] = [];
  for (const c of conds) {
    const prev = out.find((o) => o.code === c.code);
    if (!prev) out.push({ ...c });
    else if (!prev.detail.includes(c.detail)) {
      const joined = `${prev.detail}; ${c.detail}`;
      prev.detail = joined.length <= CONDITION_DETAIL_MAX ? joined : `${joined.slice(0, CONDITION_DETAIL_MAX - 1)}…`;
    }
  }
  return out;
}

/** Long-bone segments checked for length constancy and symmetry. */
export const SEGMENTS = {
  thigh: ['hip', 'knee'],
  shank: ['knee', 'ankle'],
  upper_arm: ['shoulder', 'elbow'],
  forearm: ['elbow', 'wrist'],
} as const;
export type SegmentName = keyof typeof SEGMENTS;

/** Segments and keypoints each angle depends on (definitions in angles.ts). */
export const JOINT_DEPENDS: Readonly<Record<PoseJoint, { segments: readonly SegmentName[]; keypoints: readonly string[] }>> = {
  hip_flexion: { segments: ['thigh'], keypoints: ['hip', 'knee', '#left_hip', '#right_hip', '#left_shoulder', '#right_shoulder'] },
  knee_flexion: { segments: ['thigh', 'shank'], keypoints: ['hip', 'knee', 'ankle'] },
  shoulder_flexion: { segments: ['upper_arm'], keypoints: ['shoulder', 'elbow', '#left_shoulder', '#right_shoulder', '#left_hip', '#right_hip'] },
  elbow_flexion: { segments: ['upper_arm', 'forearm'], keypoints: ['shoulder', 'elbow', 'wrist'] },
  ankle_dorsiflexion: { segments: ['shank'], keypoints: ['knee', 'ankle', 'heel', 'toe'] },
  hip_abduction: { segments: ['thigh'], keypoints: ['hip', 'knee', '#left_hip', '#right_hip', '#left_shoulder', '#right_shoulder'] },
  knee_frontal_projection_angle: { segments: ['thigh', 'shank'], keypoints: ['hip', 'knee', 'ankle', '#left_hip', '#right_hip'] },
  pelvic_obliquity: { segments: [], keypoints: ['#left_hip', '#right_hip'] },
  trunk_lateral_lean: { segments: [], keypoints: ['#left_hip', '#right_hip', '#left_shoulder', '#right_shoulder'] },
};

/** Per side and segment: median length (m), coefficient of variation and frames measured. */
export interface SegmentStats {
  medianM: number;
  cv: number;
  frames: number;
}

/** Length statistics of every segment on both sides from F×K×3 points (metres, NaN missing). */
export function segmentLengths(points: Float64Array, set: KeypointSet): Record<PoseSide, Partial<Record<SegmentName, SegmentStats>>> {
  const K = set.length,
    F = points.length / (K * 3);
  const out: Record<PoseSide, Partial<Record<SegmentName, SegmentStats>>> = { left: {}, right: {} };
  for (const side of ['left', 'right'] as const) {
    for (const [name, [a, b]] of Object.entries(SEGMENTS) as [SegmentName, readonly [string, string]][]) {
      const i = set.indexOf(`${side}_${a}`),
        j = set.indexOf(`${side}_${b}`);
      if (i < 0 || j < 0) continue;
      const L: number[] = [];
      for (let f = 0; f < F; f++) {
        const d = Math.hypot(
          (points[(f * K + i) * 3] ?? NaN) - (points[(f * K + j) * 3] ?? NaN),
          (points[(f * K + i) * 3 + 1] ?? NaN) - (points[(f * K + j) * 3 + 1] ?? NaN),
          (points[(f * K + i) * 3 + 2] ?? NaN) - (points[(f * K + j) * 3 + 2] ?? NaN),
        );
        if (Number.isFinite(d)) L.push(d);
      }
      if (L.length < 2) continue;
      const mean = L.reduce((s, x) => s + x, 0) / L.length;
      const sd = Math.sqrt(L.reduce((s, x) => s + (x - mean) ** 2, 0) / (L.length - 1));
      out[side][name] = { medianM: median(L), cv: mean > 0 ? sd / mean : Infinity, frames: L.length };
    }
  }
  return out;
}

/** Mean confidence (0..1) of keypoint `k` over the views and frames where it was detected (confidence > 0) in F×K×C×3 observations; NaN if never. */
export function meanKeypointConfidence(obs: Float64Array, K: number, C: number, k: number): number {
  const F = obs.length / (K * C * 3);
  let s = 0,
    n = 0;
  for (let f = 0; f < F; f++)
    for (let c = 0; c < C; c++) {
      const w = obs[((f * K + k) * C + c) * 3 + 2] ?? 0;
      if (w > 0) {
        s += w;
        n++;
      }
    }
  return n ? s / n : NaN;
}

/**
 * Margin (px) beyond the image border inside which a 2D keypoint still counts as seen: one 16-px
 * codec macroblock, the uncertainty of the image border itself (a calibration and its videos may
 * differ by that much, e.g. 1080 vs 1088; `SIZE_TOLERANCE_PX` in main/capture/sources.ts). A camera
 * cannot see a point outside its image: a keypoint placed there is the 2D model's guess (a
 * regression model or a padded crop extrapolating a body that leaves the frame), whatever confidence
 * it carries. Demo: the multi-person trial's auto-selected person has 300 points 20–50 px outside
 * cam_01's image with confidence 1.00; the static trials' farthest point is 8 px outside; the
 * BalancingTrial has none.
 */
export const OUT_OF_IMAGE_MARGIN_PX = 16;

/**
 * Treat 2D keypoints outside their camera's image (beyond {@link OUT_OF_IMAGE_MARGIN_PX}) as unseen:
 * their confidence is set to 0 in place in the F×K×C×3 observations (observed, distorted pixels),
 * before triangulation, so coverage, `two_view_keypoints` and `low_2d_confidence` see the view as
 * missing. `sizes[c]` = camera c's image width and height (px). Returns the count per camera.
 */
export function dropOutOfImage(obs: Float64Array, K: number, sizes: readonly { width: number; height: number }[], marginPx = OUT_OF_IMAGE_MARGIN_PX): number[] {
  const C = sizes.length,
    F = obs.length / (K * C * 3);
  const counts = new Array<number>(C).fill(0);
  for (let i = 0; i < F * K; i++)
    for (let c = 0; c < C; c++) {
      const o = (i * C + c) * 3;
      if (!((obs[o + 2] ?? 0) > 0)) continue;
      const x = obs[o] ?? NaN,
        y = obs[o + 1] ?? NaN,
        s = sizes[c]!;
      if (x < -marginPx || y < -marginPx || x > s.width + marginPx || y > s.height + marginPx) {
        obs[o + 2] = 0;
        counts[c]!++;
      }
    }
  return counts;
}

/** Inputs of the trial-level camera checks. */
export interface CameraCheckInput {
  names: string[];
  /** Per camera: views excluded for reprojection error, and views that were valid (confidence ≥ threshold). */
  excluded: ArrayLike<number>;
  valid: ArrayLike<number>;
  /** Per camera: median reprojection residual (px) of its used views; NaN if unused. */
  residualPx: ArrayLike<number>;
}

/** Trial-level camera conditions: exclusion and reprojection-residual imbalance. */
export function cameraConditions(i: CameraCheckInput): ReadingCondition[] {
  const C = i.names.length;
  const out: ReadingCondition[] = [];
  const frac = Array.from({ length: C }, (_, c) => ((i.valid[c] ?? 0) > 0 ? (i.excluded[c] ?? 0) / (i.valid[c] ?? 1) : 0));
  for (let c = 0; c < C; c++) {
    const others = median(frac.filter((_, j) => j !== c));
    if ((frac[c] ?? 0) > EXCLUSION_FRACTION_MAX && (frac[c] ?? 0) > EXCLUSION_IMBALANCE_FACTOR * others) {
      out.push({
        code: 'camera_exclusion_imbalance',
        detail: `camera ${i.names[c]} was excluded from ${Math.round(100 * (frac[c] ?? 0))} % of its views for reprojection error (others ${Math.round(100 * others)} %): it disagrees with the other cameras — check it is synchronised, did not move since calibration, and sees the athlete`,
      });
    }
    const r = i.residualPx[c] ?? NaN,
      ro = median(Array.from(i.residualPx).filter((_, j) => j !== c));
    if (Number.isFinite(r) && Number.isFinite(ro) && r > REPROJECTION_IMBALANCE_MIN_PX && r > REPROJECTION_IMBALANCE_FACTOR * ro) {
      out.push({
        code: 'reprojection_imbalance',
        detail: `camera ${i.names[c]} reprojects ${r.toFixed(1)} px from the 3D points (others ${ro.toFixed(1)} px): check its synchronisation and calibration`,
      });
    }
  }
  return out;
}

/** Per-reading checks for one joint and side. */
export function readingConditions(
  joint: PoseJoint,
  side: PoseSide,
  x: {
    segments: ReturnType<typeof segmentLengths>;
    /** Reported values (ungated frames), degrees. */
    values: readonly number[];
    /** Mean 2D confidence per keypoint name (full names, e.g. "left_knee"). */
    confidence: (name: string) => number;
    /** The trial's hip-placement condition ({@link hipPlacementCondition}); applied to {@link HIP_DEPENDENT_JOINTS}. */
    hipPlacement?: ReadingCondition | null;
    /** Segment lengths of the raw (unfiltered) triangulated points, given for trials that are not static: the `frozen_keypoints` check ({@link FROZEN_SEGMENT_CV_MAX}). Omitted = not checked. */
    rawSegments?: ReturnType<typeof segmentLengths>;
    /** SD of a keypoint's 2D confidence (full name), given for trials that are not static: the `frozen_keypoints` check ({@link FROZEN_CONFIDENCE_SD_MAX}). Omitted = not checked. */
    confidenceSpread?: (name: string) => number;
    /** How the points were triangulated, and the reading's per-frame reported values (NaN = not reported): the {@link crossCheckCondition}. Omitted = not checked. */
    views?: { support: ViewSupport; reported: ArrayLike<number> };
    /** A second 2D model's 3D keypoints and its angle for this joint and side per frame (`--cross-check`): the {@link modelDisagreementCondition} over the reading's reported per-frame values. Omitted = not checked. */
    models?: { check: ModelCrossCheck; reported: ArrayLike<number>; secondaryDeg: ArrayLike<number> };
  },
): ReadingCondition[] {
  const out: ReadingCondition[] = [];
  if (x.hipPlacement && HIP_DEPENDENT_JOINTS.includes(joint)) out.push(x.hipPlacement);
  const cross = x.views ? crossCheckCondition(joint, side, x.views.reported, x.views.support) : null;
  if (cross) out.push(cross);
  if (x.models) out.push(modelDisagreementCondition(joint, side, x.models.reported, x.models.secondaryDeg, x.models.check));
  const dep = JOINT_DEPENDS[joint];
  const other: PoseSide = side === 'left' ? 'right' : 'left';
  const label = (s: SegmentName) => s.replace('_', ' ');
  const frozen = dep.segments.filter((s) => (x.rawSegments?.[side][s]?.cv ?? Infinity) < FROZEN_SEGMENT_CV_MAX);
  const depNames = [
    ...new Set(dep.keypoints.flatMap((k) => (k.startsWith('#') ? [k.slice(1)] : k === 'toe' ? [`${side}_big_toe`, `${side}_foot_index`] : [`${side}_${k}`]))),
  ];
  const flat = x.confidenceSpread
    ? depNames.map((n) => [n, x.confidenceSpread!(n)] as const).filter(([, sd]) => Number.isFinite(sd) && sd < FROZEN_CONFIDENCE_SD_MAX)
    : [];
  if (frozen.length || flat.length) {
    const why: string[] = [];
    if (frozen.length)
      why.push(
        `the ${side} ${frozen.map(label).join(' and ')} length${frozen.length > 1 ? 's' : ''} varied by only ${frozen.map((s) => `${(100 * x.rawSegments![side][s]!.cv).toFixed(2)} %`).join(' and ')} over ${x.rawSegments![side][frozen[0]!]!.frames} frames before filtering (a 2D model's frame-by-frame detections vary ≥ ${100 * FROZEN_SEGMENT_CV_MAX} %)`,
      );
    if (flat.length)
      why.push(
        `the 2D confidence of ${flat.map(([n, sd]) => `${n.replace('_', ' ')} (${x.confidence(n).toFixed(2)} ± ${sd.toFixed(3)})`).join(', ')} was the same in every frame and view (a 2D model's varies by ≥ ${FROZEN_CONFIDENCE_SD_MAX} SD)`,
      );
    out.push({
      code: 'frozen_keypoints',
      detail: `${why.join('; ')}: these points were not detected in each frame — a picture, a mannequin, a repeated frame, a tracker holding a pose or points filled in by another tool — so the angle measures no movement; check the tap is on the athlete and the 2D came from this recording`,
    });
  }
  for (const s of dep.segments) {
    const st = x.segments[side][s];
    if (st && st.cv > SEGMENT_CV_MAX)
      out.push({
        code: 'segment_length_unstable',
        detail: `the ${side} ${label(s)} length varied by ${(100 * st.cv).toFixed(0)} % over the trial (coefficient of variation; limit ${100 * SEGMENT_CV_MAX} %): a keypoint was mislocated or belongs to someone else — check the athlete is fully in view and the tap is on them`,
      });
    const so = x.segments[other][s];
    if (st && so) {
      const asym = Math.abs(st.medianM - so.medianM) / ((st.medianM + so.medianM) / 2);
      if (asym > SEGMENT_ASYMMETRY_MAX)
        out.push({
          code: 'segment_asymmetry',
          detail: `left and right ${label(s)} lengths differ by ${(100 * asym).toFixed(0)} % (${(100 * (x.segments.left[s]?.medianM ?? NaN)).toFixed(1)} vs ${(100 * (x.segments.right[s]?.medianM ?? NaN)).toFixed(1)} cm; limit ${100 * SEGMENT_ASYMMETRY_MAX} %): one side was tracked poorly`,
        });
    }
  }
  if (x.values.length) {
    const [lo, hi] = PLAUSIBLE_RANGE_DEG[joint];
    const mn = Math.min(...x.values),
      mx = Math.max(...x.values);
    if (mn < lo || mx > hi)
      out.push({
        code: 'implausible_range',
        detail: `values reach ${mn.toFixed(0)}° to ${mx.toFixed(0)}°, outside the plausible ${lo}° to ${hi}° for this joint: a measurement failure, not a movement`,
      });
  }
  // 'toe' is the big toe (BODY_25B) or the foot index (BlazePose), whichever the set has
  const names = dep.keypoints.flatMap((k) => (k.startsWith('#') ? [k.slice(1)] : k === 'toe' ? [`${side}_big_toe`, `${side}_foot_index`] : [`${side}_${k}`]));
  const conf = names.map((n) => [n, x.confidence(n)] as const).filter(([, c]) => Number.isFinite(c));
  const low = conf.filter(([, c]) => c < MIN_MEAN_2D_CONFIDENCE);
  if (low.length)
    out.push({
      code: 'low_2d_confidence',
      detail: `the 2D model was unsure of ${low.map(([n, c]) => `${n.replace('_', ' ')} (${c.toFixed(2)})`).join(', ')} (mean confidence; needs ${MIN_MEAN_2D_CONFIDENCE}): improve lighting, clothing contrast or camera placement`,
    });
  return mergeConditions(out);
}

/** True when none of the conditions fails the reading. */
export function conditionsPass(conds: readonly ReadingCondition[]): boolean {
  return conds.every((c) => INFO_CONDITIONS.includes(c.code));
}
