/**
 * From triangulated trajectories to `pose_metric` rows: gap filling, filtering, joint series,
 * gating and per-trial statistics with every condition attached.
 */
import { computeJointSeries, FLEXION_OBSERVABILITY_GATE, type JointSeries } from './angles';
import { butterworthFiltfilt, interpolateGaps, DEFAULT_MAX_GAP_FRAMES } from './filters';
import {
  conditionsPass,
  hipPlacementCondition,
  mergeConditions,
  notCrossCheckedCondition,
  pelvisStats,
  readingConditions,
  segmentLengths,
  type ModelCrossCheck,
  type ReadingCondition,
  type ViewSupport,
} from './quality';
import type { KeypointSet } from './keypoints';
import { PoseMetricInput, POSE_STATISTICS, type ObliquityBand, type OmittedReason, type PoseJoint } from './metrics';
import { median } from './vec';

/** Minimum coverage (fraction of frames with an ungated reading) for a value to be reported. */
export const MIN_COVERAGE = 0.5;

/** Post-processing parameters. */
export interface PostProcessOptions {
  /** Frames per second of the trial. */
  fps: number;
  /** Low-pass cut-off (Hz). @default 6 (Pose2Sim demo; gait/balance) */
  cutoffHz?: number;
  /** Longest gap (frames) that is interpolated. @default 10 */
  maxGapFrames?: number;
  /** Skip the filter (e.g. for comparisons with raw references). @default false */
  noFilter?: boolean;
}

/**
 * Gap-fill then zero-lag low-pass every coordinate of F×K×3 points (metres).
 * Returns the processed copy and the number of point-frames filled.
 */
export function postProcess(points: Float64Array, keypoints: number, opts: PostProcessOptions): { points: Float64Array; interpolated: number } {
  const K = keypoints,
    F = points.length / (K * 3);
  const out = new Float64Array(points.length);
  let interpolated = 0;
  const col = new Float64Array(F);
  for (let k = 0; k < K; k++) {
    for (let d = 0; d < 3; d++) {
      for (let f = 0; f < F; f++) col[f] = points[(f * K + k) * 3 + d] ?? NaN;
      const g = interpolateGaps(col, opts.maxGapFrames ?? DEFAULT_MAX_GAP_FRAMES);
      if (d === 0) interpolated += g.filled;
      const v = opts.noFilter ? g.values : butterworthFiltfilt(g.values, opts.fps, opts.cutoffHz ?? 6, 4);
      for (let f = 0; f < F; f++) out[(f * K + k) * 3 + d] = v[f] ?? NaN;
    }
  }
  return { points: out, interpolated };
}

/** Conditions shared by every reading of a trial. */
export interface ReadingConditions {
  cameraCount: number;
  cameraMode: string;
  viewObliquityDeg: number | null;
  obliquityBand: ObliquityBand;
  viewMatchesDeclared: boolean;
  /** False when the rig drifted from its declared layout beyond tolerance. */
  rigTrustworthy: boolean;
  /** Trial-level conditions (camera synchronisation and imbalance, static trial) given to every reading. */
  trialConditions?: ReadingCondition[];
  /** Best camera's angle (deg) from a pure front or back view (0 = facing a camera); null when the facing is unknown. ≥ 60 → frontal angles fail `view_not_frontal`. */
  frontalObliquityDeg?: number | null;
  /** Mean 2D confidence of a keypoint (full name) over the views and frames that detected it; omitted = not checked. */
  confidence?: (keypoint: string) => number;
  /** SD of a keypoint's 2D confidence over frames and views (full name); given for trials that are not static (`frozen_keypoints`); omitted = not checked. */
  confidenceSpread?: (keypoint: string) => number;
  /** The views each point was triangulated from (F×K masks, frames as `points`): the `two_view_keypoints` check (quality.ts); omitted = not checked. */
  views?: ViewSupport;
  /** Raw (unfiltered, not gap-filled) triangulated points F×K×3 (m), frames as `points`, given for trials that are not static: the `frozen_keypoints` check (quality.ts). Omitted = not checked. */
  rawPoints?: Float64Array;
  /** A second 2D model's processed 3D keypoints, frames as `points` (`--cross-check`): its angles by the same definitions give each reading's `model_disagreement` / `model_difference` condition (quality.ts); omitted = not checked. */
  models?: ModelCrossCheck;
  /**
   * Without `models`: where the 2D came from and why no second model was compared, for the
   * informational `not_cross_checked` condition every reading with a value then carries
   * (quality.ts `notCrossCheckedCondition`). Omitted → the model unnamed, "no second 2D model was run".
   */
  notCrossChecked?: { primary: string; why: string };
}

/** Coverage a reading needs to be called trustworthy (it is reported, with a value, from 0.5). */
export const TRUST_MIN_COVERAGE = 0.8;

/** Angles defined in the sagittal plane (they need a view that sees that plane); knee and elbow flexion are 3D angles between segments and do not. */
export const PLANAR_JOINTS: readonly PoseJoint[] = ['hip_flexion', 'shoulder_flexion', 'ankle_dorsiflexion'];
/** Angles defined in the frontal plane: they need a camera within 60° of the front or back. */
export const FRONTAL_JOINTS: readonly PoseJoint[] = ['hip_abduction', 'knee_frontal_projection_angle', 'pelvic_obliquity', 'trunk_lateral_lean'];

/**
 * The conditions of one reading (each failed check, with its numbers) — trustworthy exactly when
 * it has a value and none of them fails (see `quality.ts`):
 * `rig_drift` (the rig drifted from its declared layout), `view_not_sagittal` (planar angles only:
 * the best camera was frontal, or the facing was unknown), `low_coverage` (under
 * {@link TRUST_MIN_COVERAGE} of the frames), the trial's camera and static-trial conditions, and
 * the reading's own segment, range and 2D-confidence checks.
 */
export function conditionsFor(cond: ReadingConditions, joint: PoseJoint, coverage: number, own: ReadingCondition[]): ReadingCondition[] {
  const out: ReadingCondition[] = [];
  if (!cond.rigTrustworthy)
    out.push({ code: 'rig_drift', detail: "the cameras have moved from the rig's declared layout beyond tolerance: recalibrate the rig" });
  if (PLANAR_JOINTS.includes(joint) && !(cond.obliquityBand === 'sagittal' || cond.obliquityBand === 'oblique')) {
    out.push({
      code: 'view_not_sagittal',
      detail:
        cond.obliquityBand === 'unknown'
          ? "the athlete's facing could not be estimated, so the view of the sagittal plane is unknown"
          : `no camera saw the athlete from the side (best view ${cond.viewObliquityDeg?.toFixed(0) ?? '?'}° from side-on): add a side camera`,
    });
  }
  if (FRONTAL_JOINTS.includes(joint) && cond.frontalObliquityDeg !== undefined && !(cond.frontalObliquityDeg !== null && cond.frontalObliquityDeg < 60)) {
    out.push({
      code: 'view_not_frontal',
      detail:
        cond.frontalObliquityDeg === null
          ? "the athlete's facing could not be estimated, so the view of the frontal plane is unknown"
          : `no camera saw the athlete from the front or back (best view ${cond.frontalObliquityDeg.toFixed(0)}° from facing): add a front or back camera`,
    });
  }
  if (coverage < TRUST_MIN_COVERAGE)
    out.push({
      code: 'low_coverage',
      detail: `only ${Math.round(coverage * 100)} % of frames had a valid reading (trustworthy needs ${TRUST_MIN_COVERAGE * 100} %): keep the athlete in view of at least two cameras`,
    });
  out.push(...(cond.trialConditions ?? []), ...own);
  // one entry per code (two cameras or two segments failing the same check share it)
  return mergeConditions(out);
}

/** When a reading may be called trustworthy: it has a value and none of its conditions fails. */
export function isTrustworthy(conditions: readonly ReadingCondition[], omitted: boolean): boolean {
  return !omitted && conditionsPass(conditions);
}

/** Per-joint outcome before it is spread over the four statistics. */
export interface JointOutcome {
  series: JointSeries;
  coverage: number;
  sagittalRatio: number | null;
  omitted: OmittedReason | null;
  /** Gated frames (ratio < gate) among frames with an angle. */
  gatedFrames: number;
  values: { peak: number; min: number; mean: number; range: number } | null;
  /** The reported per-frame values (ungated frames), degrees. */
  samples: number[];
  /** Per frame: the angle (degrees) where it was reported, NaN where it was missing or gated. */
  perFrame: Float64Array;
}

/**
 * Decide a joint's outcome: not measurable → `not_measurable_with_coco17`; median sagittal ratio
 * below the gate → `flexion_observability_gate`; coverage below `minCoverage` → `low_coverage`;
 * else statistics over the ungated frames.
 */
export function jointOutcome(s: JointSeries, opts: { gate?: number; minCoverage?: number } = {}): JointOutcome {
  // Knee and elbow flexion are 3D angles between two segments: no view plane to gate them by.
  // Frontal angles are gated by their frontal-projection ratio with the same bound.
  const gate = s.plane === 'sagittal' || s.plane === 'frontal' ? (opts.gate ?? FLEXION_OBSERVABILITY_GATE) : -Infinity;
  const ratioOf = s.plane === 'frontal' ? s.frontalRatio : s.sagittalRatio;
  const minCov = opts.minCoverage ?? MIN_COVERAGE;
  const F = s.angleDeg.length;
  const vals: number[] = [];
  const perFrame = new Float64Array(F).fill(NaN);
  let gated = 0;
  for (let f = 0; f < F; f++) {
    const a = s.angleDeg[f] ?? NaN,
      r = ratioOf[f] ?? NaN;
    if (!Number.isFinite(a)) continue;
    if (gate > -Infinity && !(r >= gate)) {
      gated++;
      continue;
    }
    vals.push(a);
    perFrame[f] = a;
  }
  const coverage = F > 0 ? vals.length / F : 0;
  const medRatio = median(s.sagittalRatio);
  const sagittalRatio = Number.isFinite(medRatio) && s.plane !== 'frontal' && s.plane !== 'global' ? medRatio : null;
  const medFrontal = median(s.frontalRatio);
  let omitted: OmittedReason | null = null;
  if (!s.measurable) omitted = 'not_measurable_with_coco17';
  else if (s.plane === 'sagittal' && sagittalRatio !== null && sagittalRatio < gate) omitted = 'flexion_observability_gate';
  else if (s.plane === 'frontal' && Number.isFinite(medFrontal) && medFrontal < gate) omitted = 'frontal_observability_gate';
  else if (coverage < minCov) omitted = 'low_coverage';
  let values: JointOutcome['values'] = null;
  if (!omitted && vals.length > 0) {
    let mn = Infinity,
      mx = -Infinity,
      sum = 0;
    for (const v of vals) {
      mn = Math.min(mn, v);
      mx = Math.max(mx, v);
      sum += v;
    }
    values = { peak: mx, min: mn, mean: sum / vals.length, range: mx - mn };
  }
  return { series: s, coverage, sagittalRatio, omitted, gatedFrames: gated, values, samples: vals, perFrame };
}

/**
 * `pose_metric` rows (4 statistics × 5 joints × 2 sides) for F frames of K processed 3D points.
 * Every row is validated against `PoseMetricInput`.
 */
export function buildPoseMetrics(
  points: Float64Array,
  set: KeypointSet,
  cond: ReadingConditions,
  opts: { gate?: number; minCoverage?: number } = {},
): { rows: PoseMetricInput[]; outcomes: JointOutcome[] } {
  const series = computeJointSeries(points, set);
  // the second model's angles by the same definitions (the model_disagreement / model_difference condition)
  const second = cond.models ? computeJointSeries(cond.models.secondaryPoints, cond.models.secondarySet) : null;
  const frames = points.length / (set.length * 3);
  const outcomes = series.map((s) => jointOutcome(s, opts));
  const segments = segmentLengths(points, set);
  const hipPlacement = hipPlacementCondition(pelvisStats(points, set));
  const rawSegments = cond.rawPoints ? segmentLengths(cond.rawPoints, set) : undefined;
  const rows: PoseMetricInput[] = [];
  for (const o of outcomes) {
    const own = o.series.measurable
      ? readingConditions(o.series.joint, o.series.side, {
          segments,
          rawSegments,
          values: o.samples,
          confidence: cond.confidence ?? (() => NaN),
          confidenceSpread: cond.confidenceSpread,
          hipPlacement,
          views: cond.views ? { support: cond.views, reported: o.perFrame } : undefined,
          models:
            cond.models && second
              ? {
                  check: cond.models,
                  reported: o.perFrame,
                  secondaryDeg: second.find((y) => y.joint === o.series.joint && y.side === o.series.side && y.measurable)?.angleDeg ?? [],
                }
              : undefined,
        })
      : [];
    const readingOmitted = o.omitted !== null || !o.values;
    const said = conditionsFor(cond, o.series.joint, o.coverage, own);
    // An omitted reading shows its reason (e.g. low_coverage: under half the frames) instead of a value; the
    // low_coverage condition would repeat it, so the reading lists each code once. A reading with a value that no
    // second model checked says so (not_cross_checked).
    const conditions = readingOmitted
      ? said.filter((c) => c.code !== 'low_coverage')
      : cond.models
        ? said
        : mergeConditions([
            ...said,
            notCrossCheckedCondition(cond.notCrossChecked?.primary ?? null, cond.notCrossChecked?.why ?? 'no second 2D model was run'),
          ]);
    for (const statistic of POSE_STATISTICS) {
      const value = o.values ? o.values[statistic] : null;
      const omitted: OmittedReason | null = o.omitted ?? (value === null ? 'low_coverage' : null);
      rows.push(
        PoseMetricInput.parse({
          joint: o.series.joint,
          side: o.series.side,
          statistic,
          value_deg: omitted ? null : value,
          omitted_reason: omitted,
          camera_count: Math.max(1, cond.cameraCount),
          camera_mode: cond.cameraMode,
          view_obliquity_deg: cond.viewObliquityDeg,
          obliquity_band: cond.obliquityBand,
          view_matches_declared: cond.viewMatchesDeclared,
          coverage: o.coverage,
          trustworthy: isTrustworthy(conditions, omitted !== null),
          conditions,
          sagittal_ratio: o.sagittalRatio,
          frames,
        }),
      );
    }
  }
  return { rows, outcomes };
}
