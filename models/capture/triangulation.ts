/**
 * Reference (TypeScript) confidence-weighted DLT triangulation with camera exclusion.
 * The native addon (`native/triangulation`) implements the same contract for speed; tests
 * cross-check the two to 1e-6 m.
 *
 * Method (after Hartley & Zisserman, "Multiple View Geometry", §12.2, and Pose2Sim's
 * `weighted_triangulation`): for every view c with confidence w_c ≥ `minConfidence`,
 * add the rows w_c·(u_c·P_c[2] − P_c[0]) and w_c·(v_c·P_c[2] − P_c[1]) to A (2N×4);
 * the homogeneous point is the right singular vector of A for its smallest singular value,
 * computed here as the eigenvector of AᵀA by cyclic Jacobi rotations.
 * Reprojection error = mean pixel distance over the views used. Above `maxReprojectionPx`,
 * views are excluded 1, 2, … at a time (every combination; the lowest error wins) until the
 * error is under the threshold; with fewer than `minViews` views left the point is missing (NaN).
 */

/** Triangulation parameters (defaults from shared/design/capture.md and Pose2Sim's Config.toml). */
export interface TriangulationOptions {
  /** Views with confidence below this are dropped (0..1). @default 0.3 */
  minConfidence: number;
  /** Mean reprojection error (px) above which views are excluded. @default 15 */
  maxReprojectionPx: number;
  /** Fewer views than this → missing. Must be ≥ 2 (one view has no depth) and ≤ the camera count; else RangeError. @default 2 */
  minViews: number;
}

export const DEFAULT_TRIANGULATION: TriangulationOptions = { minConfidence: 0.3, maxReprojectionPx: 15, minViews: 2 };

/**
 * Batch input: `cameras` projection matrices P (C×12, row-major 3×4, pixels) and
 * `observations` N×C×3 (u px, v px, confidence 0..1; NaN or confidence 0 = not seen).
 */
export interface TriangulationInput {
  cameras: number;
  projections: Float64Array;
  observations: Float64Array;
}

/** Batch output for N points. */
export interface TriangulationResult {
  /** N×3 world coordinates (same unit as P's translation, metres); NaN when missing. */
  points: Float64Array;
  /** N mean reprojection errors in px over the views used; NaN when missing. */
  reprojectionPx: Float64Array;
  /** N bitmasks of the views used (bit c = camera c). 0 when missing. */
  viewMask: Uint32Array;
  /** Per camera: views (confidence ≥ threshold) excluded for reprojection error. */
  excludedCounts: Uint32Array;
  /** Per camera: views dropped for confidence below the threshold. */
  lowConfidenceCounts: Uint32Array;
}

/** Smallest-eigenvalue eigenvector of a symmetric 4×4 (row-major, 16 numbers) by cyclic Jacobi. */
export function smallestEigenvector4(M: Float64Array | number[]): [number, number, number, number] {
  const a = Float64Array.from(M);
  const v = new Float64Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
  for (let sweep = 0; sweep < 50; sweep++) {
    let off = 0;
    for (let p = 0; p < 4; p++) for (let q = p + 1; q < 4; q++) off += (a[p * 4 + q] ?? 0) ** 2;
    if (off < 1e-30) break;
    for (let p = 0; p < 4; p++) {
      for (let q = p + 1; q < 4; q++) {
        const apq = a[p * 4 + q] ?? 0;
        if (Math.abs(apq) < 1e-300) continue;
        const app = a[p * 4 + p] ?? 0,
          aqq = a[q * 4 + q] ?? 0;
        const theta = (aqq - app) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1),
          s = t * c;
        for (let k = 0; k < 4; k++) {
          const akp = a[k * 4 + p] ?? 0,
            akq = a[k * 4 + q] ?? 0;
          a[k * 4 + p] = c * akp - s * akq;
          a[k * 4 + q] = s * akp + c * akq;
        }
        for (let k = 0; k < 4; k++) {
          const apk = a[p * 4 + k] ?? 0,
            aqk = a[q * 4 + k] ?? 0;
          a[p * 4 + k] = c * apk - s * aqk;
          a[q * 4 + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < 4; k++) {
          const vkp = v[k * 4 + p] ?? 0,
            vkq = v[k * 4 + q] ?? 0;
          v[k * 4 + p] = c * vkp - s * vkq;
          v[k * 4 + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  let best = 0;
  for (let i = 1; i < 4; i++) if ((a[i * 5] ?? 0) < (a[best * 5] ?? 0)) best = i;
  return [v[best] ?? 0, v[4 + best] ?? 0, v[8 + best] ?? 0, v[12 + best] ?? 0];
}

/**
 * Triangulate one point from the views in `mask`. Returns [X, Y, Z, meanReprojPx] or null
 * when the solution is at infinity / behind a camera.
 */
export function triangulateViews(
  P: Float64Array,
  obs: Float64Array,
  obsOffset: number,
  mask: number,
  cameras: number,
): [number, number, number, number] | null {
  const M = new Float64Array(16);
  for (let c = 0; c < cameras; c++) {
    if (!(mask & (1 << c))) continue;
    const u = obs[obsOffset + c * 3] ?? NaN,
      v = obs[obsOffset + c * 3 + 1] ?? NaN,
      w = obs[obsOffset + c * 3 + 2] ?? 0;
    const r1 = new Float64Array(4),
      r2 = new Float64Array(4);
    for (let j = 0; j < 4; j++) {
      const p0 = P[c * 12 + j] ?? 0,
        p1 = P[c * 12 + 4 + j] ?? 0,
        p2 = P[c * 12 + 8 + j] ?? 0;
      r1[j] = w * (u * p2 - p0);
      r2[j] = w * (v * p2 - p1);
    }
    for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) M[i * 4 + j] = (M[i * 4 + j] ?? 0) + (r1[i] ?? 0) * (r1[j] ?? 0) + (r2[i] ?? 0) * (r2[j] ?? 0);
  }
  const h = smallestEigenvector4(M);
  if (Math.abs(h[3]) < 1e-300) return null;
  const X = h[0] / h[3],
    Y = h[1] / h[3],
    Z = h[2] / h[3];
  let err = 0,
    n = 0;
  for (let c = 0; c < cameras; c++) {
    if (!(mask & (1 << c))) continue;
    const o = c * 12;
    const den = (P[o + 8] ?? 0) * X + (P[o + 9] ?? 0) * Y + (P[o + 10] ?? 0) * Z + (P[o + 11] ?? 0);
    if (!(den > 0)) return null;
    const u = ((P[o] ?? 0) * X + (P[o + 1] ?? 0) * Y + (P[o + 2] ?? 0) * Z + (P[o + 3] ?? 0)) / den;
    const v = ((P[o + 4] ?? 0) * X + (P[o + 5] ?? 0) * Y + (P[o + 6] ?? 0) * Z + (P[o + 7] ?? 0)) / den;
    err += Math.hypot(u - (obs[obsOffset + c * 3] ?? NaN), v - (obs[obsOffset + c * 3 + 1] ?? NaN));
    n++;
  }
  return [X, Y, Z, err / n];
}

function popcount(x: number): number {
  let n = 0;
  while (x) {
    x &= x - 1;
    n++;
  }
  return n;
}

/** Triangulate N points over C ≤ 16 cameras (see the module comment for the method). */
export function triangulateBatch(input: TriangulationInput, options: Partial<TriangulationOptions> = {}): TriangulationResult {
  const opt = { ...DEFAULT_TRIANGULATION, ...options };
  const C = input.cameras;
  if (C < 1 || C > 16) throw new RangeError(`triangulation supports 1–16 cameras, got ${C}`);
  if (input.projections.length !== C * 12) throw new RangeError(`projections must hold ${C}×12 numbers`);
  if (input.observations.length % (C * 3) !== 0) throw new RangeError(`observations must hold N×${C}×3 numbers`);
  // One view has no depth: a "3D" point from it would be fabricated. Refuse rather than clamp.
  if (!Number.isInteger(opt.minViews) || opt.minViews < 2 || opt.minViews > C)
    throw new RangeError(`minViews must be between 2 and the number of cameras (${C}): one view cannot give depth`);
  if (!(opt.maxReprojectionPx > 0) || !Number.isFinite(opt.minConfidence)) throw new RangeError('maxReprojectionPx must be > 0 and minConfidence finite');
  const N = input.observations.length / (C * 3);
  const res: TriangulationResult = {
    points: new Float64Array(N * 3).fill(NaN),
    reprojectionPx: new Float64Array(N).fill(NaN),
    viewMask: new Uint32Array(N),
    excludedCounts: new Uint32Array(C),
    lowConfidenceCounts: new Uint32Array(C),
  };
  const obs = input.observations;
  for (let i = 0; i < N; i++) {
    const off = i * C * 3;
    let valid = 0;
    for (let c = 0; c < C; c++) {
      const u = obs[off + c * 3] ?? NaN,
        v = obs[off + c * 3 + 1] ?? NaN,
        w = obs[off + c * 3 + 2] ?? NaN;
      if (Number.isFinite(u) && Number.isFinite(v) && w >= opt.minConfidence) valid |= 1 << c;
      else if (Number.isFinite(u) && Number.isFinite(v) && w > 0) res.lowConfidenceCounts[c] = (res.lowConfidenceCounts[c] ?? 0) + 1;
    }
    const nValid = popcount(valid);
    if (nValid < opt.minViews) continue;
    let accepted: [number, number, number, number] | null = null;
    let acceptedMask = 0;
    for (let drop = 0; nValid - drop >= opt.minViews; drop++) {
      let best: [number, number, number, number] | null = null,
        bestMask = 0;
      for (let sub = valid; sub > 0; sub = (sub - 1) & valid) {
        // enumerate subsets of `valid` in decreasing order; consider those with nValid − drop views
        if (popcount(sub) !== nValid - drop) continue;
        const r = triangulateViews(input.projections, obs, off, sub, C);
        if (r && (best === null || r[3] < best[3] || (r[3] === best[3] && sub < bestMask))) {
          best = r;
          bestMask = sub;
        }
      }
      if (best && best[3] <= opt.maxReprojectionPx) {
        accepted = best;
        acceptedMask = bestMask;
        break;
      }
    }
    if (!accepted) continue;
    res.points[i * 3] = accepted[0];
    res.points[i * 3 + 1] = accepted[1];
    res.points[i * 3 + 2] = accepted[2];
    res.reprojectionPx[i] = accepted[3];
    res.viewMask[i] = acceptedMask;
    for (let c = 0; c < C; c++) if (valid & (1 << c) && !(acceptedMask & (1 << c))) res.excludedCounts[c] = (res.excludedCounts[c] ?? 0) + 1;
  }
  return res;
}
