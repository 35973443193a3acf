/**
 * From triangulated trajectories to `pose_metric` rows: gap filling, filtering, joint series,
 * gating and per-trial statistics with every condition attached.
 */
import { computeJointSeries, FLEXION_OBSERVABILITY_GATE, type JointSeries } from './angles';
import { butterworthFiltfilt, interpolateGaps, DEFAULT_MAX_GAP_FRAMES } from './filters';
import type { KeypointSet } from './keypoints';
import { PoseMetricInput, POSE_STATISTICS, type ObliquityBand, type OmittedReason } from './metrics';
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
  const K = keypoints, F = points.length / (K * 3);
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
}

/** Coverage a reading needs to be called trustworthy (it is reported, with a value, from 0.5). */
export const TRUST_MIN_COVERAGE = 0.8;

/**
 * When a reading may be called trustworthy: a value was reported (not omitted), the rig had not
 * drifted from its declared layout, at least {@link TRUST_MIN_COVERAGE} of the frames had a valid
 * reading, and the athlete's facing was estimated with the best camera not frontal (band
 * `sagittal` or `oblique`): flexion is a sagittal-plane quantity, and a frontal-only view leaves
 * it weakly observed even when triangulated. Each failing condition is visible beside the number.
 */
export function isTrustworthy(cond: ReadingConditions, coverage: number, omitted: boolean): boolean {
  return !omitted && cond.rigTrustworthy && coverage >= TRUST_MIN_COVERAGE && (cond.obliquityBand === 'sagittal' || cond.obliquityBand === 'oblique');
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
}

/**
 * Decide a joint's outcome: not measurable → `not_measurable_with_coco17`; median sagittal ratio
 * below the gate → `flexion_observability_gate`; coverage below `minCoverage` → `low_coverage`;
 * else statistics over the ungated frames.
 */
export function jointOutcome(s: JointSeries, opts: { gate?: number; minCoverage?: number } = {}): JointOutcome {
  const gate = opts.gate ?? FLEXION_OBSERVABILITY_GATE, minCov = opts.minCoverage ?? MIN_COVERAGE;
  const F = s.angleDeg.length;
  const vals: number[] = [];
  let gated = 0;
  for (let f = 0; f < F; f++) {
    const a = s.angleDeg[f] ?? NaN, r = s.sagittalRatio[f] ?? NaN;
    if (!Number.isFinite(a)) continue;
    if (!(r >= gate)) { gated++; continue; }
    vals.push(a);
  }
  const coverage = F > 0 ? vals.length / F : 0;
  const medRatio = median(s.sagittalRatio);
  const sagittalRatio = Number.isFinite(medRatio) ? medRatio : null;
  let omitted: OmittedReason | null = null;
  if (!s.measurable) omitted = 'not_measurable_with_coco17';
  else if (sagittalRatio !== null && sagittalRatio < gate) omitted = 'flexion_observability_gate';
  else if (coverage < minCov) omitted = 'low_coverage';
  let values: JointOutcome['values'] = null;
  if (!omitted && vals.length > 0) {
    let mn = Infinity, mx = -Infinity, sum = 0;
    for (const v of vals) { mn = Math.min(mn, v); mx = Math.max(mx, v); sum += v; }
    values = { peak: mx, min: mn, mean: sum / vals.length, range: mx - mn };
  }
  return { series: s, coverage, sagittalRatio, omitted, gatedFrames: gated, values };
}

/**
 * `pose_metric` rows (4 statistics × 5 joints × 2 sides) for F frames of K processed 3D points.
 * Every row is validated against `PoseMetricInput`.
 */
export function buildPoseMetrics(points: Float64Array, set: KeypointSet, cond: ReadingConditions, opts: { gate?: number; minCoverage?: number } = {}): { rows: PoseMetricInput[]; outcomes: JointOutcome[] } {
  const series = computeJointSeries(points, set);
  const frames = points.length / (set.length * 3);
  const outcomes = series.map((s) => jointOutcome(s, opts));
  const rows: PoseMetricInput[] = [];
  for (const o of outcomes) {
    for (const statistic of POSE_STATISTICS) {
      const value = o.values ? o.values[statistic] : null;
      const omitted: OmittedReason | null = o.omitted ?? (value === null ? 'low_coverage' : null);
      rows.push(PoseMetricInput.parse({
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
        trustworthy: isTrustworthy(cond, o.coverage, omitted !== null),
        sagittal_ratio: o.sagittalRatio,
        frames,
      }));
    }
  }
  return { rows, outcomes };
}
