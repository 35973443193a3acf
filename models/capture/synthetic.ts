/**
 * Synthetic rigs and motion with exact answers, for tests and `capture:validate`.
 * World frame: metres, Z up, athlete at the origin facing +X (anterior), left = +Y.
 */
import { type CameraCalibration, type Vec3, rodriguesInverse, projectPoint } from './camera';
import { COCO17 } from './keypoints';

/**
 * A camera on a ring at `yawDeg` around the athlete (0 = in front, +90 = athlete's left),
 * `distance` m away at `height` m, looking at `target`. K has focal `f` px and centre at the middle.
 */
export function ringCamera(
  name: string,
  yawDeg: number,
  opts: { distance?: number; height?: number; target?: Vec3; f?: number; width?: number; height_px?: number } = {},
): CameraCalibration {
  const d = opts.distance ?? 4,
    h = opts.height ?? 1.2,
    tgt = opts.target ?? [0, 0, 1];
  const f = opts.f ?? 1400,
    W = opts.width ?? 1080,
    H = opts.height_px ?? 1920;
  const yaw = (yawDeg * Math.PI) / 180;
  const C: Vec3 = [d * Math.cos(yaw), d * Math.sin(yaw), h];
  // camera axes in world: z = forward (to target), x = right, y = down
  const z = norm(sub(tgt, C));
  const x = norm(cross(z, [0, 0, 1]));
  const y = cross(z, x);
  const R = [x[0], x[1], x[2], y[0], y[1], y[2], z[0], z[1], z[2]];
  const t: Vec3 = [-(R[0]! * C[0] + R[1]! * C[1] + R[2]! * C[2]), -(R[3]! * C[0] + R[4]! * C[1] + R[5]! * C[2]), -(R[6]! * C[0] + R[7]! * C[1] + R[8]! * C[2])];
  return { name, width: W, height: H, K: [f, 0, (W - 1) / 2, 0, f, (H - 1) / 2, 0, 0, 1], dist: [0, 0, 0, 0], rvec: rodriguesInverse(R), tvec: t };
}

function sub(a: Vec3, b: Vec3): Vec3 {
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
}
function cross(a: Vec3, b: Vec3): Vec3 {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}
function norm(a: Vec3): Vec3 {
  const n = Math.hypot(...a);
  return [a[0] / n, a[1] / n, a[2] / n];
}

/** Joint angles (degrees) that drive the synthetic skeleton in one frame. */
export interface SyntheticAngles {
  hipFlexion: { left: number; right: number };
  kneeFlexion: { left: number; right: number };
  shoulderFlexion: { left: number; right: number };
  elbowFlexion: { left: number; right: number };
  /** Arm abduction (deg) out of the sagittal plane, to exercise the observability gate. */
  shoulderAbduction: { left: number; right: number };
  /** Frontal plane (optional, degrees): thigh abduction, knee valgus (shank abducted this much more than the thigh), pelvis tilted with the left hip up by `pelvicObliquity`, trunk leaning towards the left by `trunkLean`. */
  hipAbduction?: { left: number; right: number };
  kneeValgus?: { left: number; right: number };
  pelvicObliquity?: number;
  trunkLean?: number;
}

/** Segment lengths (m) of the synthetic athlete. */
export const SYNTHETIC_BODY = {
  pelvisHalfWidth: 0.1,
  shoulderHalfWidth: 0.19,
  trunk: 0.5,
  thigh: 0.44,
  shank: 0.42,
  upperArm: 0.3,
  forearm: 0.27,
  hipHeight: 0.95,
};

/**
 * COCO-17 3D keypoints (17×3, metres) for given angles: a sagittal-plane kinematic chain
 * (flexion positive = distal segment rotated anteriorly for hip/shoulder, posteriorly for knee,
 * anteriorly for the elbow forearm) in the frame above. Face points sit above the shoulders.
 */
export function syntheticPose(a: SyntheticAngles, pelvis: Vec3 = [0, 0, SYNTHETIC_BODY.hipHeight]): Vec3[] {
  const B = SYNTHETIC_BODY;
  const rad = (d: number) => (d * Math.PI) / 180;
  const pts = new Map<string, Vec3>();
  const add = (p: Vec3, v: Vec3, l: number): Vec3 => [p[0] + v[0] * l, p[1] + v[1] * l, p[2] + v[2] * l];
  // direction in the sagittal plane at angle θ from straight down toward anterior (+X)
  // direction at angle θ from straight down toward anterior (+X) in the sagittal plane, then
  // rotated about the anterior axis by `abd` toward `side` (rotation keeps in-plane angles exact)
  const sag = (th: number, abd = 0, side = 1): Vec3 => [
    Math.sin(rad(th)),
    side * Math.cos(rad(th)) * Math.sin(rad(abd)),
    -Math.cos(rad(th)) * Math.cos(rad(abd)),
  ];
  const sides = [
    ['left', 1],
    ['right', -1],
  ] as const;
  const lean = rad(a.trunkLean ?? 0),
    obl = rad(a.pelvicObliquity ?? 0);
  const neckBase: Vec3 = [pelvis[0], pelvis[1] + B.trunk * Math.sin(lean), pelvis[2] + B.trunk * Math.cos(lean)];
  for (const [side, sy] of sides) {
    const hip: Vec3 = [pelvis[0], pelvis[1] + sy * B.pelvisHalfWidth * Math.cos(obl), pelvis[2] + sy * B.pelvisHalfWidth * Math.sin(obl)];
    const abd = a.hipAbduction?.[side] ?? 0,
      valgus = a.kneeValgus?.[side] ?? 0;
    const knee = add(hip, sag(a.hipFlexion[side], abd, sy), B.thigh);
    const ankle = add(knee, sag(a.hipFlexion[side] - a.kneeFlexion[side], abd + valgus, sy), B.shank);
    const sh: Vec3 = [neckBase[0], neckBase[1] + sy * B.shoulderHalfWidth, neckBase[2]];
    const ua = sag(a.shoulderFlexion[side], a.shoulderAbduction[side], sy);
    const elbow = add(sh, ua, B.upperArm);
    // forearm: rotate the upper-arm direction by the elbow flexion within the arm's plane
    const th = a.shoulderFlexion[side] + a.elbowFlexion[side];
    const wrist = add(elbow, sag(th, a.shoulderAbduction[side], sy), B.forearm);
    pts.set(`${side}_hip`, hip);
    pts.set(`${side}_knee`, knee);
    pts.set(`${side}_ankle`, ankle);
    pts.set(`${side}_shoulder`, sh);
    pts.set(`${side}_elbow`, elbow);
    pts.set(`${side}_wrist`, wrist);
    pts.set(`${side}_eye`, [neckBase[0] + 0.08, neckBase[1] + sy * 0.03, neckBase[2] + 0.2]);
    pts.set(`${side}_ear`, [neckBase[0], neckBase[1] + sy * 0.07, neckBase[2] + 0.18]);
  }
  pts.set('nose', [neckBase[0] + 0.1, neckBase[1], neckBase[2] + 0.17]);
  return COCO17.map((n) => pts.get(n) ?? [NaN, NaN, NaN]);
}

/**
 * A squat-and-reach motion over `frames` frames at `fps`: hips 10→90°, knees 10→110°,
 * shoulders 0→90°, elbows 10→60°, optional arm abduction; one cycle over the clip.
 */
export function syntheticMotion(frames: number, opts: { abductionDeg?: number } = {}): SyntheticAngles[] {
  const out: SyntheticAngles[] = [];
  for (let i = 0; i < frames; i++) {
    const s = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / Math.max(1, frames - 1));
    const both = (v: number, d = 0) => ({ left: v + d, right: v - d });
    out.push({
      hipFlexion: both(10 + 80 * s, 3),
      kneeFlexion: both(10 + 100 * s, -2),
      shoulderFlexion: both(90 * s, 5),
      elbowFlexion: both(10 + 50 * s),
      shoulderAbduction: both(opts.abductionDeg ?? 0),
    });
  }
  return out;
}

/** Deterministic PRNG (mulberry32) for reproducible noise. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal sample (Box–Muller). */
export function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-12),
    v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * Project F frames of K world points into the cameras: observations F×K×C×3 (u, v, conf=1),
 * with isotropic Gaussian pixel noise of `noisePx` (σ per axis). With `distort` the cameras' lens
 * distortion is applied (what a real lens records).
 */
export function projectFrames(cams: CameraCalibration[], frames: Vec3[][], noisePx = 0, seed = 1, distort = false): Float64Array {
  const C = cams.length,
    K = frames[0]?.length ?? 0;
  const out = new Float64Array(frames.length * K * C * 3);
  const rand = prng(seed);
  frames.forEach((pts, f) =>
    pts.forEach((X, k) =>
      cams.forEach((cam, c) => {
        const p = projectPoint(cam, X, distort);
        const o = ((f * K + k) * C + c) * 3;
        if (!p) {
          out[o] = NaN;
          out[o + 1] = NaN;
          out[o + 2] = 0;
          return;
        }
        out[o] = p[0] + noisePx * gaussian(rand);
        out[o + 1] = p[1] + noisePx * gaussian(rand);
        out[o + 2] = 1;
      }),
    ),
  );
  return out;
}

/**
 * A camera at `C` (world, m) looking at `target`, with image "up" as close to `up` as possible
 * (`rollDeg` rotates the image about the optical axis). K: focal `f` px, centre in the middle.
 */
export function lookAtCamera(
  name: string,
  C: Vec3,
  target: Vec3,
  opts: { f?: number; width?: number; height?: number; up?: Vec3; rollDeg?: number } = {},
): CameraCalibration {
  const f = opts.f ?? 1400,
    W = opts.width ?? 1080,
    H = opts.height ?? 1920;
  const z = norm(sub(target, C));
  let x = cross(z, opts.up ?? [0, 0, 1]);
  if (Math.hypot(...x) < 1e-9) x = cross(z, [0, 1, 0]);
  x = norm(x);
  let y = cross(z, x);
  const r = ((opts.rollDeg ?? 0) * Math.PI) / 180;
  const xr: Vec3 = [x[0] * Math.cos(r) + y[0] * Math.sin(r), x[1] * Math.cos(r) + y[1] * Math.sin(r), x[2] * Math.cos(r) + y[2] * Math.sin(r)];
  y = cross(z, xr);
  const R = [xr[0], xr[1], xr[2], y[0], y[1], y[2], z[0], z[1], z[2]];
  const t: Vec3 = [-(R[0]! * C[0] + R[1]! * C[1] + R[2]! * C[2]), -(R[3]! * C[0] + R[4]! * C[1] + R[5]! * C[2]), -(R[6]! * C[0] + R[7]! * C[1] + R[8]! * C[2])];
  return { name, width: W, height: H, K: [f, 0, (W - 1) / 2, 0, f, (H - 1) / 2, 0, 0, 1], dist: [0, 0, 0, 0], rvec: rodriguesInverse(R), tvec: t };
}
