/**
 * Camera synchronisation check: estimates each camera's frame offset from the 2D keypoints and the
 * calibration, and corrects it on request (as Pose2Sim's synchronisation step does, by shifting
 * that camera's frames and trimming to the frames every camera covers).
 *
 * Method (geometric): for camera c, the athlete's keypoints are triangulated from the other
 * cameras only (≥ 2 views), reprojected into c, and compared with c's own detections at frame
 * f + lag for every lag in ±`maxLag`. The median reprojection distance (px) is smallest at the
 * lag where c's images line up in time with the others; a desynchronised camera shows its
 * minimum away from 0. Only fast-moving points are compared ({@link SYNC_SPEED_QUANTILE}). An
 * offset is reported when that minimum is more than ±{@link SYNC_CONFIRM_MAX_FRAMES} from 0 and
 * below {@link SYNC_MAX_RATIO} × the distance at lag 0 (the check's resolution is ±1 frame). This is the same temporal alignment that
 * Pose2Sim's synchronisation finds by cross-correlating 2D keypoint speeds between views
 * (Pose2Sim/synchronization.py); on the demo's balancing trial the speed cross-correlation between
 * unshifted views peaks at only 0.3–0.85 and mislocates a 5-frame shift (measured, see
 * main/capture/README.md), so the geometric residual, which does find it, is used.
 * Needs ≥ 3 cameras (2 others to triangulate from), ≥ 20 frames, and for every camera ≥ 50 usable
 * point pairs at lag 0 on the aligned trial (moving, confident, agreeing points) whose best-lag
 * residual is within {@link SYNC_MAX_BEST_RESIDUAL_FACTOR} × its agreement bound; otherwise `estimable` is false.
 */
import { triangulateBatch } from './triangulation';
import { median } from './vec';

/**
 * An offset is reported when the best lag is more than {@link SYNC_CONFIRM_MAX_FRAMES} from 0 and its
 * reprojection distance is below this fraction of the lag-0 distance. Demo BalancingTrial (fast
 * points, {@link SYNC_SPEED_QUANTILE}): in-step cameras' best fits sit at −1, 0, +1 and 0 frames
 * (the recording's own sub-frame timing; not reported); any one camera shifted by ±3, ±5 or ±8
 * frames is found within ±1 frame for all four cameras (24 of 24), with best/lag-0 ratios 0.16–0.79
 * from JSON and 0.41–0.81 from video (MoveNet Lightning; `npm run capture:sync-sweep`, 2026-12-02).
 */
export const SYNC_MAX_RATIO = 0.9;
/**
 * Only the point-frames whose reprojected image speed (px/frame, from the other cameras'
 * triangulation) is at or above this quantile enter the residual: a point that barely moves fits
 * every lag equally, and on a slow trial those points flatten the lag curve until a shift hides in
 * it. Demo BalancingTrial: with every point (the earlier method) cam_01 shifted by +3/+5/+8 frames
 * was never found and cam_03 −3..−8 / cam_04 −3 were missed or mislocated (0 of 24 shifts found
 * within ±1); with the fastest 10 %, 24 of 24; the in-step detection limit went from 10, 3, 11, 4
 * frames to 3, 1, 5, 2.
 */
export const SYNC_SPEED_QUANTILE = 0.9;
/**
 * Points the other cameras disagree on say nothing about timing: a point enters the residual only
 * when the others' triangulation of it reprojects within a bound (mean px over the views used) that
 * follows the 2D source's own noise: max(this floor, {@link SYNC_AGREEMENT_FACTOR} × the median
 * reprojection px of that triangulation over every point-frame of the trial), see
 * {@link syncAgreementBoundPx}; and only where its image motion is smooth (|acceleration| ≤
 * {@link SYNC_MAX_ACCELERATION_RATIO} × speed; frame-to-frame jitter has ≈ 3.5 ×). Demo
 * BalancingTrial with invented legs (2D guesses jittered ±60 px, testing/demo-cases.ts): without
 * these two filters the fastest points are the invented ones and the check reports cam_01 22 and
 * cam_02 4 frames out (false); a looser bound lets them in again (15–18 px: cam_01 −22, cam_02 −4),
 * which {@link SYNC_MAX_BEST_RESIDUAL_FACTOR} then refuses.
 */
export const SYNC_MAX_REPROJECTION_PX = 10;
/**
 * The agreement bound's factor on the median leave-one-out reprojection px. A fixed 10 px (the
 * floor, tuned on OpenPose JSON) left every camera of the demo from video (MoveNet Lightning, 17
 * points) under the 50 usable pairs: the others agree about as well there as from JSON (median 7.5–8.9 px
 * vs 5.8–8.9 px per camera; 4.6–7.8 px with invented legs, so no noise scale tells the sources apart), but
 * 17 points instead of 25 and MoveNet's jitter leave fewer fast, smooth points within 10 px. Measured by
 * `npm run capture:sync-sweep -- --factors 1,1.5,2 --cache-2d DIR` (demo, 100 frames; 2026-12-02):
 * factor 1 (= the fixed 10 px) → video not estimable, 0 of 24 shifts found; 1.5 → video not estimable
 * (cam_02–04), 6 of 24; 2 → video in step estimable with no offset and 24 of 24 shifts (±3/±5/±8, any
 * camera) found within ±1; JSON in step no offset and 24 of 24 at every factor; invented legs no offset
 * at every factor (with {@link SYNC_MAX_BEST_RESIDUAL_FACTOR}; without it 1.5 → cam_01 −13, 2 → −22 and −4).
 */
export const SYNC_AGREEMENT_FACTOR = 2;
/**
 * A camera whose residual at its best lag is above this many × its agreement bound is not compared:
 * its detections are not the points the other cameras see (invented, mistracked or another person),
 * and the minimum of a curve of such residuals is noise, not timing. Its timing is unchecked
 * (`estimable` false), never an offset. Demo at factor 2 (`npm run capture:sync-sweep`): best-lag
 * residual / bound, video and JSON, in step and every ±3/±5/±8 shift: ≤ 1.9 (24–30 px video, 14–30 px
 * JSON); invented legs: cam_01 6.8 (106 px), cam_02 4.7 (62 px; without this rule reported −22 and −4 frames out).
 */
export const SYNC_MAX_BEST_RESIDUAL_FACTOR = 4;
export const SYNC_MAX_ACCELERATION_RATIO = 2;
/**
 * Lags whose residual is within this fraction of the best one fit about equally well: the offset is
 * only known to that interval. An automatic correction is accepted only when that interval, after
 * the correction, stays within ±{@link SYNC_CONFIRM_MAX_FRAMES} of 0. Set from the demo (a QC bound,
 * not a validated one): cam_02 corrected from a 5-frame shift rises 4–5 % at ±1 frame and 15 % at
 * ±2; cam_03 (the noisiest view) in the unshifted trial stays within 3 % from lag +1 to +4.
 */
export const SYNC_AMBIGUITY = 0.05;
/** Largest offset (frames) the check may leave unconfirmed without saying so, and the widest a confirmed correction's interval may reach. */
export const SYNC_CONFIRM_MAX_FRAMES = 1;
/** Frames used for the estimate (the middle of longer trials), to bound its cost. */
export const SYNC_WINDOW_FRAMES = 240;

export interface SyncReport {
  /** Per camera: camera c's frame f + offsets[c] shows the moment the other cameras show at f; 0 = in sync. */
  offsets: number[];
  /** Per camera: median reprojection distance (px) against the other cameras at lag 0 and at the best lag (null when not estimable). */
  residualAtZeroPx: (number | null)[];
  residualAtBestPx: (number | null)[];
  /**
   * Per camera, after the offsets: the smallest offset (frames) the check would find, i.e. the
   * smallest d with residual(±d) ≥ residual(0) / {@link SYNC_MAX_RATIO} on both sides (null: not
   * within ±maxLag on at least one side); and the lags whose residual is within
   * {@link SYNC_AMBIGUITY} of the best ([lo, hi]; the offset is known only to that interval).
   */
  detectableFrames: (number | null)[];
  ambiguousLags: ([number, number] | null)[];
  /** Largest lag searched (frames). */
  maxLag: number;
  /** False when there are fewer than 3 cameras or 20 frames, or some camera has < 50 usable point pairs at lag 0 on the aligned trial, or detections that match the others' points nowhere (best-lag residual > {@link SYNC_MAX_BEST_RESIDUAL_FACTOR} × its agreement bound): its timing was not checked. */
  estimable: boolean;
}

/**
 * The others' agreement bound (px) for one leave-one-out triangulation: max({@link SYNC_MAX_REPROJECTION_PX},
 * `factor` × the median of its finite per-point-frame reprojection errors `reprojectionPx` (px)); the floor when none is finite.
 */
export function syncAgreementBoundPx(reprojectionPx: ArrayLike<number>, factor: number = SYNC_AGREEMENT_FACTOR): number {
  const finite: number[] = [];
  for (let i = 0; i < reprojectionPx.length; i++) {
    const r = reprojectionPx[i] ?? NaN;
    if (Number.isFinite(r)) finite.push(r);
  }
  return finite.length ? Math.max(SYNC_MAX_REPROJECTION_PX, factor * median(finite)) : SYNC_MAX_REPROJECTION_PX;
}

/** One camera's lag curve: median residual (px) per lag with ≥ 50 pairs, and the agreement bound (px) its points were admitted by. */
export interface LagCurve {
  residuals: Map<number, number>;
  boundPx: number;
}

/** Median distance (px), over the point-frames moving at or above the {@link SYNC_SPEED_QUANTILE} speed quantile, between camera c's detections at f + lag (F×K×C×3 undistorted observations) and the others' triangulation at f (admitted within {@link syncAgreementBoundPx}), for every lag in ±maxLag with ≥ 50 pairs (lag → px). */
export function lagResiduals(
  obs: Float64Array,
  projections: Float64Array,
  K: number,
  C: number,
  c: number,
  maxLag: number,
  minConf: number,
  agreementFactor: number = SYNC_AGREEMENT_FACTOR,
): LagCurve {
  const F = obs.length / (K * C * 3);
  const others = Float64Array.from(obs);
  for (let o = c * 3 + 2; o < others.length; o += C * 3) others[o] = 0;
  const tri = triangulateBatch({ cameras: C, projections, observations: others }, { minConfidence: minConf });
  const X = tri.points;
  const P = projections.subarray(c * 12, c * 12 + 12);
  const boundPx = syncAgreementBoundPx(tri.reprojectionPx, agreementFactor);
  const proj: (readonly [number, number] | null)[] = [];
  for (let i = 0; i < F * K; i++) {
    const x = X[i * 3] ?? NaN,
      y = X[i * 3 + 1] ?? NaN,
      z = X[i * 3 + 2] ?? NaN;
    const w = (P[8] ?? 0) * x + (P[9] ?? 0) * y + (P[10] ?? 0) * z + (P[11] ?? 0);
    proj.push(
      Number.isFinite(x) && w > 0 && (tri.reprojectionPx[i] ?? Infinity) <= boundPx
        ? [((P[0] ?? 0) * x + (P[1] ?? 0) * y + (P[2] ?? 0) * z + (P[3] ?? 0)) / w, ((P[4] ?? 0) * x + (P[5] ?? 0) * y + (P[6] ?? 0) * z + (P[7] ?? 0)) / w]
        : null,
    );
  }
  // the reprojected point's image speed (px/frame, central difference): only moving points say anything about timing
  const speed = new Float64Array(F * K).fill(NaN);
  for (let f = 1; f < F - 1; f++)
    for (let k = 0; k < K; k++) {
      const a = proj[(f - 1) * K + k],
        m = proj[f * K + k],
        b = proj[(f + 1) * K + k];
      if (!a || !m || !b) continue;
      const v = Math.hypot(b[0] - a[0], b[1] - a[1]) / 2,
        acc = Math.hypot(b[0] - 2 * m[0] + a[0], b[1] - 2 * m[1] + a[1]);
      // smooth motion only: frame-to-frame jitter (an invented or mistracked point) has |acceleration| ≈ 3.5 × speed
      if (acc <= SYNC_MAX_ACCELERATION_RATIO * v) speed[f * K + k] = v;
    }
  const sorted = Array.from(speed)
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
  const vmin = sorted.length ? (sorted[Math.floor(SYNC_SPEED_QUANTILE * (sorted.length - 1))] ?? 0) : -Infinity;
  const out = new Map<number, number>();
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    const d: number[] = [];
    for (let f = Math.max(0, -lag); f < Math.min(F, F - lag); f++)
      for (let k = 0; k < K; k++) {
        const p = proj[f * K + k];
        if (!p || !((speed[f * K + k] ?? NaN) >= vmin)) continue;
        const o = (((f + lag) * K + k) * C + c) * 3;
        if (!((obs[o + 2] ?? 0) >= minConf)) continue;
        d.push(Math.hypot(p[0] - (obs[o] ?? NaN), p[1] - (obs[o + 1] ?? NaN)));
      }
    if (d.length >= 50) out.set(lag, median(d));
  }
  return { residuals: out, boundPx };
}

/**
 * Estimate each camera's frame offset from F×K×C×3 undistorted observations (u px, v px,
 * confidence) and the C×12 projection matrices; lags up to `maxLag` (default min(30, F/4)) frames;
 * `agreementFactor` (default {@link SYNC_AGREEMENT_FACTOR}) scales the others' agreement bound ({@link syncAgreementBoundPx}).
 * Greedy: the camera whose residual improves most is aligned first, then the others are re-checked
 * against the corrected set (a shifted camera otherwise spoils the triangulation the others are
 * judged by). At most C − 2 cameras can be re-timed.
 */
export function estimateSync(
  obs: Float64Array,
  projections: Float64Array,
  K: number,
  C: number,
  opts: { minConfidence?: number; maxLag?: number; agreementFactor?: number } = {},
): SyncReport {
  const Fall = obs.length / (K * C * 3);
  const minConf = opts.minConfidence ?? 0.3;
  const maxLag = Math.max(1, Math.floor(opts.maxLag ?? Math.min(30, Fall / 4)));
  const factor = opts.agreementFactor ?? SYNC_AGREEMENT_FACTOR;
  const report: SyncReport = {
    offsets: new Array<number>(C).fill(0),
    residualAtZeroPx: new Array<number | null>(C).fill(null),
    residualAtBestPx: new Array<number | null>(C).fill(null),
    detectableFrames: new Array<number | null>(C).fill(null),
    ambiguousLags: new Array<[number, number] | null>(C).fill(null),
    maxLag,
    estimable: false,
  };
  if (C < 3 || Fall < 20) return report;
  report.estimable = true;
  const start = Math.max(0, Math.floor((Fall - SYNC_WINDOW_FRAMES) / 2));
  const win = obs.subarray(start * K * C * 3, Math.min(Fall, start + SYNC_WINDOW_FRAMES) * K * C * 3);
  const fixed = new Set<number>();
  for (let round = 0; round <= C - 2; round++) {
    const aligned = applySyncOffsets(win, K, C, report.offsets).observations;
    let pick = -1,
      pickRatio = Infinity,
      pickLag = 0;
    for (let c = 0; c < C; c++) {
      if (fixed.has(c)) continue;
      const { residuals: res, boundPx } = lagResiduals(aligned, projections, K, C, c, maxLag, minConf, factor);
      const zero = res.get(0);
      let bestLag = 0,
        best = zero ?? Infinity;
      for (const [lag, r] of res)
        if (r < best) {
          best = r;
          bestLag = lag;
        }
      report.residualAtZeroPx[c] = zero ?? null;
      report.residualAtBestPx[c] = Number.isFinite(best) ? best : null;
      const ratio = zero ? best / zero : Infinity;
      // a camera whose detections match the others nowhere near as well as they agree among themselves is not compared (its minimum is noise)
      if (best > SYNC_MAX_BEST_RESIDUAL_FACTOR * boundPx) continue;
      if (Math.abs(bestLag) > SYNC_CONFIRM_MAX_FRAMES && ratio < pickRatio) {
        pick = c;
        pickRatio = ratio;
        pickLag = bestLag;
      }
    }
    if (pick < 0 || !(pickRatio < SYNC_MAX_RATIO) || fixed.size >= C - 2) break;
    report.offsets[pick] = (report.offsets[pick] ?? 0) + pickLag;
    fixed.add(pick);
  }
  // the power of the check and the uncertainty of each camera's timing, on the aligned trial
  const aligned = applySyncOffsets(win, K, C, report.offsets).observations;
  for (let c = 0; c < C; c++) {
    const { residuals: res, boundPx } = lagResiduals(aligned, projections, K, C, c, maxLag, minConf, factor);
    const zero = res.get(0);
    if (zero === undefined || Math.min(...res.values()) > SYNC_MAX_BEST_RESIDUAL_FACTOR * boundPx) {
      // too few usable point pairs (< 50 moving, confident, agreeing), or its detections do not match the others' points: its timing was not checked
      report.estimable = false;
      continue;
    }
    let d: number | null = null;
    for (let k = 1; k <= maxLag && d === null; k++)
      if ((res.get(k) ?? -Infinity) * SYNC_MAX_RATIO >= zero && (res.get(-k) ?? -Infinity) * SYNC_MAX_RATIO >= zero) d = k;
    report.detectableFrames[c] = d;
    const best = Math.min(...res.values());
    const near = [...res].filter(([, r]) => r <= best * (1 + SYNC_AMBIGUITY)).map(([l]) => l);
    report.ambiguousLags[c] = [Math.min(...near), Math.max(...near)];
  }
  return report;
}

/**
 * Shift each camera's observations by its offset (camera c's frame f + offsets[c] is aligned with
 * frame f of the others) and trim to the frames every camera covers — Pose2Sim's correction.
 * Returns the aligned F'×K×C×3 observations and the first original frame kept.
 */
export function applySyncOffsets(
  obs: Float64Array,
  K: number,
  C: number,
  offsets: readonly number[],
): { observations: Float64Array; firstFrame: number; frames: number } {
  const F = obs.length / (K * C * 3);
  const lo = Math.max(0, ...offsets.map((o) => -o)),
    hi = Math.min(F, ...offsets.map((o) => F - o));
  const n = Math.max(0, hi - lo);
  const out = new Float64Array(n * K * C * 3);
  for (let f = 0; f < n; f++)
    for (let k = 0; k < K; k++)
      for (let c = 0; c < C; c++) {
        const src = (((lo + f + (offsets[c] ?? 0)) * K + k) * C + c) * 3,
          dst = ((f * K + k) * C + c) * 3;
        out[dst] = obs[src] ?? NaN;
        out[dst + 1] = obs[src + 1] ?? NaN;
        out[dst + 2] = obs[src + 2] ?? 0;
      }
  return { observations: out, firstFrame: lo, frames: n };
}
