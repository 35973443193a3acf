/**
 * Gap interpolation and zero-lag Butterworth low-pass filtering of trajectories.
 * Both operate on one coordinate series (Float64Array, NaN = missing).
 */

/** Interpolation limit: gaps of up to this many consecutive missing frames are filled
 * (Pose2Sim's `interp_if_gap_smaller_than = 10`; 10 frames = 0.17 s at 60 fps). */
export const DEFAULT_MAX_GAP_FRAMES = 10;

/**
 * Fill interior gaps of ≤ `maxGap` missing samples with a natural cubic spline through all valid
 * samples (Burden & Faires, "Numerical Analysis", §3.5). Leading/trailing gaps and longer gaps stay
 * NaN. Returns a new array and the number of samples filled.
 */
export function interpolateGaps(series: ArrayLike<number>, maxGap = DEFAULT_MAX_GAP_FRAMES): { values: Float64Array; filled: number } {
  const n = series.length;
  const out = Float64Array.from(series as ArrayLike<number>);
  const xs: number[] = [],
    ys: number[] = [];
  for (let i = 0; i < n; i++)
    if (Number.isFinite(out[i])) {
      xs.push(i);
      ys.push(out[i] ?? 0);
    }
  if (xs.length < 2 || xs.length === n) return { values: out, filled: 0 };
  const m = naturalSplineSecondDerivatives(xs, ys);
  let filled = 0;
  for (let j = 0; j + 1 < xs.length; j++) {
    const x0 = xs[j] ?? 0,
      x1 = xs[j + 1] ?? 0;
    const gap = x1 - x0 - 1;
    if (gap < 1 || gap > maxGap) continue;
    const h = x1 - x0,
      y0 = ys[j] ?? 0,
      y1 = ys[j + 1] ?? 0,
      m0 = m[j] ?? 0,
      m1 = m[j + 1] ?? 0;
    for (let x = x0 + 1; x < x1; x++) {
      const a = (x1 - x) / h,
        b = (x - x0) / h;
      out[x] = a * y0 + b * y1 + (((a * a * a - a) * m0 + (b * b * b - b) * m1) * (h * h)) / 6;
      filled++;
    }
  }
  return { values: out, filled };
}

function naturalSplineSecondDerivatives(xs: number[], ys: number[]): Float64Array {
  const n = xs.length;
  const m = new Float64Array(n);
  if (n < 3) return m;
  const u = new Float64Array(n);
  for (let i = 1; i < n - 1; i++) {
    const xm = xs[i - 1] ?? 0,
      x = xs[i] ?? 0,
      xp = xs[i + 1] ?? 0;
    const sig = (x - xm) / (xp - xm);
    const p = sig * (m[i - 1] ?? 0) + 2;
    m[i] = (sig - 1) / p;
    const d = ((ys[i + 1] ?? 0) - (ys[i] ?? 0)) / (xp - x) - ((ys[i] ?? 0) - (ys[i - 1] ?? 0)) / (x - xm);
    u[i] = ((6 * d) / (xp - xm) - sig * (u[i - 1] ?? 0)) / p;
  }
  m[n - 1] = 0;
  for (let k = n - 2; k >= 0; k--) m[k] = (m[k] ?? 0) * (m[k + 1] ?? 0) + (u[k] ?? 0);
  return m;
}

/**
 * Digital Butterworth low-pass design, transfer-function form (b, a), a[0] = 1.
 * Same construction as SciPy's `signal.butter(order, cutoff/(fs/2))`: analog prototype poles,
 * frequency pre-warping, bilinear transform (Oppenheim & Schafer, "Discrete-Time Signal
 * Processing", §7.1). `cutoffHz` < fs/2.
 */
export function butterworthLowpass(order: number, cutoffHz: number, fs: number): { b: number[]; a: number[] } {
  if (!(cutoffHz > 0 && cutoffHz < fs / 2)) throw new RangeError(`cutoff ${cutoffHz} Hz must be in (0, ${fs / 2}) Hz`);
  const wn = cutoffHz / (fs / 2);
  const fs2 = 2; // SciPy designs at fs = 2 for normalised frequencies
  const warped = 2 * fs2 * Math.tan((Math.PI * wn) / fs2);
  // analog poles (unit circle, left half plane) scaled to the warped cutoff
  const poles: [number, number][] = [];
  for (let k = 0; k < order; k++) {
    const th = (Math.PI * (2 * k + order + 1)) / (2 * order);
    poles.push([warped * Math.cos(th), warped * Math.sin(th)]);
  }
  // bilinear: z = (2fs2 + p) / (2fs2 − p); gain k = warped^N / prod(2fs2 − p)
  const zPoles: [number, number][] = poles.map(([re, im]) => cdiv([2 * fs2 + re, im], [2 * fs2 - re, -im]));
  let den: [number, number] = [1, 0];
  for (const [re, im] of poles) den = cmul(den, [2 * fs2 - re, -im]);
  const gain = Math.pow(warped, order) / den[0]; // imaginary part cancels for conjugate pairs
  const a = polyFromRoots(zPoles);
  const b = polyFromRoots(Array.from({ length: order }, () => [-1, 0] as [number, number])).map((c) => c * gain);
  return { b, a };
}

function cmul(x: [number, number], y: [number, number]): [number, number] {
  return [x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]];
}
function cdiv(x: [number, number], y: [number, number]): [number, number] {
  const d = y[0] * y[0] + y[1] * y[1];
  return [(x[0] * y[0] + x[1] * y[1]) / d, (x[1] * y[0] - x[0] * y[1]) / d];
}
function polyFromRoots(roots: [number, number][]): number[] {
  let p: [number, number][] = [[1, 0]];
  for (const r of roots) {
    const next: [number, number][] = Array.from({ length: p.length + 1 }, () => [0, 0] as [number, number]);
    p.forEach((c, i) => {
      const n0 = next[i]!,
        n1 = next[i + 1]!;
      n0[0] += c[0];
      n0[1] += c[1];
      const m = cmul(c, r);
      n1[0] -= m[0];
      n1[1] -= m[1];
    });
    p = next;
  }
  return p.map((c) => c[0]);
}

/** Direct-form-II-transposed IIR filter (SciPy `lfilter`) with initial state `zi`. */
export function lfilter(b: number[], a: number[], x: ArrayLike<number>, zi?: number[]): Float64Array {
  const n = Math.max(b.length, a.length);
  const bb = Array.from({ length: n }, (_, i) => (b[i] ?? 0) / (a[0] ?? 1));
  const aa = Array.from({ length: n }, (_, i) => (a[i] ?? 0) / (a[0] ?? 1));
  const z = Array.from({ length: n - 1 }, (_, i) => zi?.[i] ?? 0);
  const y = new Float64Array(x.length);
  for (let t = 0; t < x.length; t++) {
    const xt = x[t] ?? 0;
    const yt = (bb[0] ?? 0) * xt + (z[0] ?? 0);
    for (let i = 0; i < n - 2; i++) z[i] = (bb[i + 1] ?? 0) * xt + (z[i + 1] ?? 0) - (aa[i + 1] ?? 0) * yt;
    if (n >= 2) z[n - 2] = (bb[n - 1] ?? 0) * xt - (aa[n - 1] ?? 0) * yt;
    y[t] = yt;
  }
  return y;
}

/** Steady-state initial conditions for a unit step (SciPy `lfilter_zi`). */
export function lfilterZi(b: number[], a: number[]): number[] {
  const n = Math.max(b.length, a.length);
  const bb = Array.from({ length: n }, (_, i) => (b[i] ?? 0) / (a[0] ?? 1));
  const aa = Array.from({ length: n }, (_, i) => (a[i] ?? 0) / (a[0] ?? 1));
  const m = n - 1;
  // (I − companion(a)ᵀ) zi = b[1:] − a[1:]·b[0]
  const A: number[][] = Array.from({ length: m }, (_, i) => Array.from({ length: m }, (_, j) => (i === j ? 1 : 0)));
  for (let i = 0; i < m; i++) {
    A[i]![0]! += aa[i + 1] ?? 0;
    if (i + 1 < m) A[i]![i + 1]! -= 1;
  }
  const B = Array.from({ length: m }, (_, i) => (bb[i + 1] ?? 0) - (aa[i + 1] ?? 0) * (bb[0] ?? 0));
  return solve(A, B);
}

function solve(A: number[][], B: number[]): number[] {
  const n = B.length;
  const M = A.map((r, i) => [...r, B[i] ?? 0]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    [M[c], M[p]] = [M[p]!, M[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r]![c]! / M[c]![c]!;
      for (let k = c; k <= n; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  return M.map((r, i) => r[n]! / r[i]!);
}

/**
 * Zero-phase forward–backward filtering (SciPy `filtfilt` defaults: odd extension of
 * 3·max(len(a), len(b)) samples, steady-state initial conditions). Series no longer than
 * the pad are returned unchanged.
 */
export function filtfilt(b: number[], a: number[], x: ArrayLike<number>): Float64Array {
  const pad = 3 * Math.max(a.length, b.length);
  const n = x.length;
  if (n <= pad) return Float64Array.from(x as ArrayLike<number>);
  const ext = new Float64Array(n + 2 * pad);
  const x0 = x[0] ?? 0,
    xn = x[n - 1] ?? 0;
  for (let i = 0; i < pad; i++) ext[i] = 2 * x0 - (x[pad - i] ?? 0);
  for (let i = 0; i < n; i++) ext[pad + i] = x[i] ?? 0;
  for (let i = 0; i < pad; i++) ext[pad + n + i] = 2 * xn - (x[n - 2 - i] ?? 0);
  const zi = lfilterZi(b, a);
  let y = lfilter(
    b,
    a,
    ext,
    zi.map((z) => z * (ext[0] ?? 0)),
  );
  y.reverse();
  y = lfilter(
    b,
    a,
    y,
    zi.map((z) => z * (y[0] ?? 0)),
  );
  y.reverse();
  return y.slice(pad, pad + n);
}

/**
 * Zero-lag Butterworth low-pass of a series with gaps: each run of consecutive finite samples
 * is filtered on its own (runs no longer than the filtfilt pad, 9 samples for order 4, stay
 * unfiltered — `filterPad` says how many).
 *
 * `order` is the effective order of the zero-lag filter: forward–backward filtering squares the
 * magnitude response, so a designed order n acts as order 2n. The filter is therefore designed at
 * order/2 (order 4 → two passes of a 2nd-order Butterworth), as Pose2Sim does
 * (`signal.butter(order/2, …)` in Pose2Sim/filtering.py) and as Winter recommends for a
 * "4th-order zero-lag" filter (Winter, "Biomechanics and Motor Control of Human Movement", 4th ed.,
 * §3.4.4). The −3 dB point of the two passes lies at ≈ 0.80 × `cutoffHz` (|H|² = 1/2 at the design
 * cut-off); the cut-off is not corrected, matching Pose2Sim. Default 6 Hz, order 4 (Pose2Sim's demo
 * `[filtering.butterworth]`). `order` must be even (RangeError).
 */
export function butterworthFiltfilt(series: ArrayLike<number>, fs: number, cutoffHz = 6, order = 4): Float64Array {
  if (!(Number.isInteger(order) && order >= 2 && order % 2 === 0))
    throw new RangeError(`zero-lag filter order must be an even integer ≥ 2 (got ${order}): it is built from two passes of order/2`);
  const { b, a } = butterworthLowpass(order / 2, cutoffHz, fs);
  const out = Float64Array.from(series as ArrayLike<number>);
  let i = 0;
  while (i < out.length) {
    if (!Number.isFinite(out[i])) {
      i++;
      continue;
    }
    let j = i;
    while (j < out.length && Number.isFinite(out[j])) j++;
    const f = filtfilt(b, a, out.subarray(i, j));
    out.set(f, i);
    i = j;
  }
  return out;
}

/** Samples a run must exceed to be filtered by `butterworthFiltfilt` of this effective order (SciPy filtfilt's odd-extension pad, 3·(order/2 + 1)). */
export function filterPad(order = 4): number {
  return 3 * (order / 2 + 1);
}
