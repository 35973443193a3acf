/**
 * Camera synchronisation check: estimates each camera's frame offset from the 2D keypoints and the
 * calibration, and corrects it on request (as Pose2Sim's synchronisation step does, by shifting
 * that camera's frames and trimming to the frames every camera covers).
 *
 * Method (geometric): for camera c, the athlete's keypoints are triangulated from the other
 * cameras only (≥ 2 views), reprojected into c, and compared with c's own detections at frame
 * f + lag for every lag in ±`maxLag`. The median reprojection distance (px) is smallest at the
 * lag where c's images line up in time with the others; a desynchronised camera shows its
 * minimum away from 0. An offset is reported when that minimum is below
 * {@link SYNC_MAX_RATIO} × the distance at lag 0. This is the same temporal alignment that
 * Pose2Sim's synchronisation finds by cross-correlating 2D keypoint speeds between views
 * (Pose2Sim/synchronization.py); on the demo's balancing trial the speed cross-correlation between
 * unshifted views peaks at only 0.3–0.85 and mislocates a 5-frame shift (measured, see
 * main/capture/README.md), so the geometric residual, which does find it, is used.
 * Needs ≥ 3 cameras (2 others to triangulate from) and ≥ 20 frames; otherwise `estimable` is false.
 */
import { triangulateBatch } from './triangulation';
import { median } from './vec';

/** An offset is reported when the best lag's reprojection distance is below this fraction of the lag-0 distance (in-sync cameras on the demo: 0.89–0.99; a 5-frame shift: 0.65–0.71). */
export const SYNC_MAX_RATIO = 0.8;
/** Frames used for the estimate (the middle of longer trials), to bound its cost. */
export const SYNC_WINDOW_FRAMES = 240;

export interface SyncReport {
  /** Per camera: camera c's frame f + offsets[c] shows the moment the other cameras show at f; 0 = in sync. */
  offsets: number[];
  /** Per camera: median reprojection distance (px) against the other cameras at lag 0 and at the best lag (null when not estimable). */
  residualAtZeroPx: (number | null)[];
  residualAtBestPx: (number | null)[];
  /** Largest lag searched (frames). */
  maxLag: number;
  /** False when there are fewer than 3 cameras or 20 frames. */
  estimable: boolean;
}

/** Median distance (px) between camera c's detections at f + lag (F×K×C×3 undistorted observations) and the others' triangulation at f, for every lag in ±maxLag with ≥ 50 pairs (lag → px). */
export function lagResiduals(
  obs: Float64Array,
  projections: Float64Array,
  K: number,
  C: number,
  c: number,
  maxLag: number,
  minConf: number,
): Map<number, number> {
  const F = obs.length / (K * C * 3);
  const others = Float64Array.from(obs);
  for (let o = c * 3 + 2; o < others.length; o += C * 3) others[o] = 0;
  const X = triangulateBatch({ cameras: C, projections, observations: others }, { minConfidence: minConf }).points;
  const P = projections.subarray(c * 12, c * 12 + 12);
  const proj: (readonly [number, number] | null)[] = [];
  for (let i = 0; i < F * K; i++) {
    const x = X[i * 3] ?? NaN,
      y = X[i * 3 + 1] ?? NaN,
      z = X[i * 3 + 2] ?? NaN;
    const w = (P[8] ?? 0) * x + (P[9] ?? 0) * y + (P[10] ?? 0) * z + (P[11] ?? 0);
    proj.push(
      Number.isFinite(x) && w > 0
        ? [((P[0] ?? 0) * x + (P[1] ?? 0) * y + (P[2] ?? 0) * z + (P[3] ?? 0)) / w, ((P[4] ?? 0) * x + (P[5] ?? 0) * y + (P[6] ?? 0) * z + (P[7] ?? 0)) / w]
        : null,
    );
  }
  const out = new Map<number, number>();
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    const d: number[] = [];
    for (let f = Math.max(0, -lag); f < Math.min(F, F - lag); f++)
      for (let k = 0; k < K; k++) {
        const p = proj[f * K + k];
        if (!p) continue;
        const o = (((f + lag) * K + k) * C + c) * 3;
        if (!((obs[o + 2] ?? 0) >= minConf)) continue;
        d.push(Math.hypot(p[0] - (obs[o] ?? NaN), p[1] - (obs[o + 1] ?? NaN)));
      }
    if (d.length >= 50) out.set(lag, median(d));
  }
  return out;
}

/**
 * Estimate each camera's frame offset from F×K×C×3 undistorted observations (u px, v px,
 * confidence) and the C×12 projection matrices; lags up to `maxLag` (default min(30, F/4)) frames.
 * Greedy: the camera whose residual improves most is aligned first, then the others are re-checked
 * against the corrected set (a shifted camera otherwise spoils the triangulation the others are
 * judged by). At most C − 2 cameras can be re-timed.
 */
export function estimateSync(
  obs: Float64Array,
  projections: Float64Array,
  K: number,
  C: number,
  opts: { minConfidence?: number; maxLag?: number } = {},
): SyncReport {
  const Fall = obs.length / (K * C * 3);
  const minConf = opts.minConfidence ?? 0.3;
  const maxLag = Math.max(1, Math.floor(opts.maxLag ?? Math.min(30, Fall / 4)));
  const report: SyncReport = {
    offsets: new Array<number>(C).fill(0),
    residualAtZeroPx: new Array<number | null>(C).fill(null),
    residualAtBestPx: new Array<number | null>(C).fill(null),
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
      const res = lagResiduals(aligned, projections, K, C, c, maxLag, minConf);
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
      if (bestLag !== 0 && ratio < pickRatio) {
        pick = c;
        pickRatio = ratio;
        pickLag = bestLag;
      }
    }
    if (pick < 0 || !(pickRatio < SYNC_MAX_RATIO) || fixed.size >= C - 2) break;
    report.offsets[pick] = (report.offsets[pick] ?? 0) + pickLag;
    fixed.add(pick);
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
