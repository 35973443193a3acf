/**
 * Pinhole camera model, OpenCV conventions (source: OpenCV calib3d docs, "Camera Calibration and
 * 3D Reconstruction"): x_cam = R·X_world + t (R from a Rodrigues vector, world→camera, metres),
 * [u, v, 1]ᵀ ~ K·x_cam in pixels, with optional Brown–Conrady distortion [k1, k2, p1, p2(, k3(, k4, k5, k6))]
 * (OpenCV's rational model for 8 coefficients). Triangulation undistorts observed pixels first
 * (`undistortObservations`), then uses P = K·[R | t].
 */
export type Vec3 = [number, number, number];
/** Row-major 3×3 matrix (9 numbers). */
export type Mat3 = number[];

/** One calibrated camera. */
export interface CameraCalibration {
  name: string;
  /** Image size in pixels. */
  width: number;
  height: number;
  /** Intrinsic matrix K, row-major 3×3, pixels. */
  K: Mat3;
  /** OpenCV distortion coefficients [k1, k2, p1, p2(, k3)]. */
  dist: number[];
  /** Rodrigues rotation vector, world→camera (radians). */
  rvec: Vec3;
  /** Translation world→camera, metres. */
  tvec: Vec3;
}

/** Rodrigues vector → row-major rotation matrix (Rodrigues' formula). */
export function rodrigues(r: readonly number[]): Mat3 {
  const [rx = 0, ry = 0, rz = 0] = r;
  const th = Math.hypot(rx, ry, rz);
  if (th < 1e-15) return [1, 0, 0, 0, 1, 0, 0, 0, 1];
  const kx = rx / th,
    ky = ry / th,
    kz = rz / th;
  const c = Math.cos(th),
    s = Math.sin(th),
    v = 1 - c;
  return [
    c + kx * kx * v,
    kx * ky * v - kz * s,
    kx * kz * v + ky * s,
    ky * kx * v + kz * s,
    c + ky * ky * v,
    ky * kz * v - kx * s,
    kz * kx * v - ky * s,
    kz * ky * v + kx * s,
    c + kz * kz * v,
  ];
}

/** Rotation matrix → Rodrigues vector (inverse of `rodrigues`, robust near π). */
export function rodriguesInverse(R: Mat3): Vec3 {
  const m = (i: number) => R[i] ?? 0;
  const tr = m(0) + m(4) + m(8);
  const cos = Math.min(1, Math.max(-1, (tr - 1) / 2));
  const th = Math.acos(cos);
  if (th < 1e-12) return [0, 0, 0];
  if (Math.PI - th < 1e-6) {
    // axis from the diagonal of (R + I) / 2 = k kᵀ
    const xx = Math.sqrt(Math.max(0, (m(0) + 1) / 2)),
      yy = Math.sqrt(Math.max(0, (m(4) + 1) / 2)),
      zz = Math.sqrt(Math.max(0, (m(8) + 1) / 2));
    let k: Vec3;
    if (xx >= yy && xx >= zz) k = [xx, (m(1) + m(3)) / (4 * xx), (m(2) + m(6)) / (4 * xx)];
    else if (yy >= zz) k = [(m(1) + m(3)) / (4 * yy), yy, (m(5) + m(7)) / (4 * yy)];
    else k = [(m(2) + m(6)) / (4 * zz), (m(5) + m(7)) / (4 * zz), zz];
    const n = Math.hypot(...k);
    return [(k[0] / n) * th, (k[1] / n) * th, (k[2] / n) * th];
  }
  const s = 2 * Math.sin(th);
  return [((m(7) - m(5)) / s) * th, ((m(2) - m(6)) / s) * th, ((m(3) - m(1)) / s) * th];
}

/** Row-major 3×3 product. */
export function matMul3(A: Mat3, B: Mat3): Mat3 {
  const out: number[] = new Array(9).fill(0);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) {
      let s = 0;
      for (let k = 0; k < 3; k++) s += (A[i * 3 + k] ?? 0) * (B[k * 3 + j] ?? 0);
      out[i * 3 + j] = s;
    }
  return out;
}

/** Transpose of a row-major 3×3. */
export function transpose3(A: Mat3): Mat3 {
  const a = (i: number) => A[i] ?? 0;
  return [a(0), a(3), a(6), a(1), a(4), a(7), a(2), a(5), a(8)];
}

/** 3×4 projection matrix P = K·[R | t] (row-major, 12 numbers; pixels per metre). */
export function projectionMatrix(cam: CameraCalibration): number[] {
  const R = rodrigues(cam.rvec);
  const P: number[] = new Array(12).fill(0);
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 4; j++) {
      let s = 0;
      for (let k = 0; k < 3; k++) s += (cam.K[i * 3 + k] ?? 0) * (j < 3 ? (R[k * 3 + j] ?? 0) : (cam.tvec[k] ?? 0));
      P[i * 4 + j] = s;
    }
  }
  return P;
}

/** Camera centre in world coordinates, C = −Rᵀ·t (metres). */
export function cameraCenter(cam: Pick<CameraCalibration, 'rvec' | 'tvec'>): Vec3 {
  const R = rodrigues(cam.rvec);
  const t = cam.tvec;
  return [
    -((R[0] ?? 0) * t[0] + (R[3] ?? 0) * t[1] + (R[6] ?? 0) * t[2]),
    -((R[1] ?? 0) * t[0] + (R[4] ?? 0) * t[1] + (R[7] ?? 0) * t[2]),
    -((R[2] ?? 0) * t[0] + (R[5] ?? 0) * t[1] + (R[8] ?? 0) * t[2]),
  ];
}

/** Optical axis (camera +Z) in world coordinates: third row of R. */
export function opticalAxis(cam: Pick<CameraCalibration, 'rvec'>): Vec3 {
  const R = rodrigues(cam.rvec);
  return [R[6] ?? 0, R[7] ?? 0, R[8] ?? 0];
}

/**
 * Project a world point (metres) to pixels. With `distort` the OpenCV model
 * [k1, k2, p1, p2, k3] is applied to the normalised coordinates. Returns null behind the camera.
 */
export function projectPoint(cam: CameraCalibration, X: readonly number[], distort = true): [number, number] | null {
  const R = rodrigues(cam.rvec);
  const x0 = X[0] ?? 0,
    x1 = X[1] ?? 0,
    x2 = X[2] ?? 0;
  const xc = (R[0] ?? 0) * x0 + (R[1] ?? 0) * x1 + (R[2] ?? 0) * x2 + cam.tvec[0];
  const yc = (R[3] ?? 0) * x0 + (R[4] ?? 0) * x1 + (R[5] ?? 0) * x2 + cam.tvec[1];
  const zc = (R[6] ?? 0) * x0 + (R[7] ?? 0) * x1 + (R[8] ?? 0) * x2 + cam.tvec[2];
  if (zc <= 1e-9) return null;
  let x = xc / zc,
    y = yc / zc;
  if (distort && cam.dist.length >= 4) {
    const [k1 = 0, k2 = 0, p1 = 0, p2 = 0, k3 = 0, k4 = 0, k5 = 0, k6 = 0] = cam.dist;
    const r2 = x * x + y * y;
    const radial = (1 + k1 * r2 + k2 * r2 * r2 + k3 * r2 * r2 * r2) / (1 + k4 * r2 + k5 * r2 * r2 + k6 * r2 * r2 * r2);
    const xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x);
    const yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y;
    x = xd;
    y = yd;
  }
  const K = cam.K;
  return [(K[0] ?? 0) * x + (K[1] ?? 0) * y + (K[2] ?? 0), (K[4] ?? 0) * y + (K[5] ?? 0)];
}

/** True when the camera has a non-zero distortion coefficient. */
export function hasDistortion(cam: Pick<CameraCalibration, 'dist'>): boolean {
  return cam.dist.some((d) => d !== 0);
}

/**
 * Undistort one pixel: the inverse of `projectPoint`'s distortion, returning the pixel where an
 * ideal pinhole camera with the same K would see the point (so it can be triangulated with
 * P = K·[R | t]). OpenCV's model [k1, k2, p1, p2(, k3(, k4, k5, k6))] inverted by the fixed-point
 * iteration of `cv::undistortPoints` (x ← (x_d − Δ_tangential(x)) · (1 + k4 r² + k5 r⁴ + k6 r⁶) /
 * (1 + k1 r² + k2 r⁴ + k3 r⁶); OpenCV calib3d, undistort.dispatch.cpp), run to 1e-12 in normalised
 * units or 50 steps (OpenCV's default stops after 5). Non-finite input gives NaN, and so does a
 * point where the iteration did not converge (its result does not distort back to within
 * {@link UNDISTORT_MAX_RESIDUAL_PX} of the input: e.g. k1 −0.35, k2 0.12, f 600 px at a 1280×720
 * image's corners, which OpenCV's iteration puts 78 px off without saying so).
 */
export function undistortPixel(cam: Pick<CameraCalibration, 'K' | 'dist'>, u: number, v: number): [number, number] {
  if (!Number.isFinite(u) || !Number.isFinite(v)) return [NaN, NaN];
  const fx = cam.K[0] ?? 1,
    skew = cam.K[1] ?? 0,
    cx = cam.K[2] ?? 0,
    fy = cam.K[4] ?? 1,
    cy = cam.K[5] ?? 0;
  const [k1 = 0, k2 = 0, p1 = 0, p2 = 0, k3 = 0, k4 = 0, k5 = 0, k6 = 0] = cam.dist;
  const yd = (v - cy) / fy,
    xd = (u - cx - skew * yd) / fx;
  let x = xd,
    y = yd;
  for (let it = 0; it < 50; it++) {
    const r2 = x * x + y * y;
    const icdist = (1 + ((k6 * r2 + k5) * r2 + k4) * r2) / (1 + ((k3 * r2 + k2) * r2 + k1) * r2);
    if (!(icdist > 0)) return [NaN, NaN];
    const dx = 2 * p1 * x * y + p2 * (r2 + 2 * x * x);
    const dy = p1 * (r2 + 2 * y * y) + 2 * p2 * x * y;
    const nx = (xd - dx) * icdist,
      ny = (yd - dy) * icdist;
    const step = Math.abs(nx - x) + Math.abs(ny - y);
    x = nx;
    y = ny;
    if (step < 1e-12) break;
  }
  // The fixed point need not converge (strong barrel distortion near the image corners, where the
  // model folds over): re-distort the result and refuse it unless it lands back on the input.
  const r2 = x * x + y * y;
  const radial = (1 + ((k3 * r2 + k2) * r2 + k1) * r2) / (1 + ((k6 * r2 + k5) * r2 + k4) * r2);
  const bx = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x),
    by = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y;
  if (!(Math.hypot(fx * (bx - xd), fy * (by - yd)) <= UNDISTORT_MAX_RESIDUAL_PX)) return [NaN, NaN];
  return [fx * x + skew * y + cx, fy * y + cy];
}

/** Largest round-trip error (px) of {@link undistortPixel}: a point whose undistorted position does not distort back to within this of the observed pixel is refused (NaN; `undistortObservations` marks it unseen). */
export const UNDISTORT_MAX_RESIDUAL_PX = 0.01;

/**
 * Undistort F×K×C×3 observations (u px, v px, confidence) in place of a copy, camera by camera
 * (`cams[c]` for the c-th view): triangulation with P = K·[R | t] assumes ideal pinhole pixels.
 * Cameras without distortion are copied unchanged.
 */
export function undistortObservations(observations: Float64Array, cams: readonly Pick<CameraCalibration, 'K' | 'dist'>[]): Float64Array {
  const C = cams.length;
  const out = Float64Array.from(observations);
  for (let c = 0; c < C; c++) {
    const cam = cams[c]!;
    if (!hasDistortion(cam)) continue;
    for (let o = c * 3; o < out.length; o += C * 3) {
      const [u, v] = undistortPixel(cam, out[o] ?? NaN, out[o + 1] ?? NaN);
      out[o] = u;
      out[o + 1] = v;
      // a point the lens model cannot invert was not usably seen by this camera
      if (!Number.isFinite(u)) out[o + 2] = 0;
    }
  }
  return out;
}

/** Rig: ordered calibrated cameras. */
export interface RigCalibration {
  cameras: CameraCalibration[];
}
