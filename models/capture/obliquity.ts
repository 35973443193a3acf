/**
 * View obliquity, declared rig layouts and layout drift.
 *
 * Camera yaw (degrees, (−180, 180]) is the horizontal direction from the athlete (or the rig
 * centre) to the camera, measured from the athlete's anterior direction toward the athlete's
 * left: 0 = "front", +90 = "left side", ±180 = "back", −45 = "right 45°".
 * View obliquity of one camera = |90° − |yaw||: 0° when it looks along the athlete's
 * medio-lateral axis (a pure side view, best for sagittal-plane flexion), 90° for a frontal or
 * rear view. A reading's `view_obliquity_deg` is the smallest obliquity among the cameras used.
 */
import { z } from 'zod';
import { plainText } from '../text';
import { type CameraCalibration, type Vec3, cameraCenter, opticalAxis } from './camera';
import type { KeypointSet } from './keypoints';
import type { ObliquityBand } from './metrics';
import { cross, dot, length, mid, normalize, sub, scale, isFiniteVec, median, RAD2DEG } from './vec';

/** Band edges in degrees: sagittal [0, 20), oblique [20, 60), frontal [60, 90]. */
export const OBLIQUITY_BAND_EDGES = { sagittal: 20, oblique: 60 } as const;

/** Band label of an obliquity in degrees; 'unknown' for null/NaN. */
export function obliquityBand(deg: number | null): ObliquityBand {
  if (deg === null || !Number.isFinite(deg)) return 'unknown';
  if (deg < OBLIQUITY_BAND_EDGES.sagittal) return 'sagittal';
  if (deg < OBLIQUITY_BAND_EDGES.oblique) return 'oblique';
  return 'frontal';
}

/** One camera's declared place in a rig (the `rig.declared_layout` JSON list). */
export const DeclaredCamera = z.object({
  /** Camera name as in the calibration (e.g. "cam_01"). */
  camera: plainText(z.string().min(1), { nfkc: false }).describe('Camera name as in the calibration (e.g. "cam_01").'),
  /** Human label, e.g. "front", "left 45°". */
  label: plainText(z.string()).describe('Human label, e.g. "front", "left 45°".'),
  /** Expected yaw in degrees (see module comment). */
  yaw_deg: z.number().min(-180).max(180).describe('Expected camera yaw relative to the athlete, degrees (−180..180).'),
});
export type DeclaredCamera = z.infer<typeof DeclaredCamera>;
export const DeclaredLayout = z.array(DeclaredCamera);
export type DeclaredLayout = z.infer<typeof DeclaredLayout>;

/** Default tolerances: 15° of yaw drift, 0.10 m of camera displacement, 25° for view matching. */
export const DEFAULT_DRIFT_TOLERANCE_DEG = 15;
export const DEFAULT_DRIFT_TOLERANCE_M = 0.1;
export const DEFAULT_VIEW_MATCH_TOLERANCE_DEG = 25;

/** Wrap degrees to (−180, 180]. */
export function wrapDeg(d: number): number {
  let x = ((((d + 180) % 360) + 360) % 360) - 180;
  if (x === -180) x = 180;
  return x;
}

/** Athlete heading over a trial: horizontal anterior and left unit vectors, world up, centre (m). */
export interface AthleteHeading {
  anterior: Vec3;
  left: Vec3;
  up: Vec3;
  centre: Vec3;
}

/**
 * Athlete heading from 3D keypoints (F×K×3, `set` names): up = median trunk axis (mid-hip →
 * mid-shoulder), anterior = up × (right − left hip) made horizontal, centre = median mid-hip.
 * Null when hips or shoulders were never triangulated.
 */
export function athleteHeading(points: Float64Array, set: KeypointSet): AthleteHeading | null {
  const K = set.length,
    F = points.length / (K * 3);
  const ix = (n: string) => set.indexOf(n);
  const lh = ix('left_hip'),
    rh = ix('right_hip'),
    ls = ix('left_shoulder'),
    rs = ix('right_shoulder');
  if (lh < 0 || rh < 0 || ls < 0 || rs < 0) return null;
  const at = (f: number, i: number): Vec3 => [points[(f * K + i) * 3] ?? NaN, points[(f * K + i) * 3 + 1] ?? NaN, points[(f * K + i) * 3 + 2] ?? NaN];
  const ups: Vec3[] = [],
    rights: Vec3[] = [],
    centres: Vec3[] = [];
  for (let f = 0; f < F; f++) {
    const mh = mid(at(f, lh), at(f, rh)),
      ms = mid(at(f, ls), at(f, rs)),
      r = sub(at(f, rh), at(f, lh));
    if (!isFiniteVec(mh) || !isFiniteVec(ms) || !isFiniteVec(r)) continue;
    ups.push(normalize(sub(ms, mh)));
    rights.push(normalize(r));
    centres.push(mh);
  }
  if (ups.length === 0) return null;
  const med = (vs: Vec3[]): Vec3 => [median(vs.map((v) => v[0])), median(vs.map((v) => v[1])), median(vs.map((v) => v[2]))];
  const up = normalize(med(ups));
  const right = med(rights);
  const rh2 = normalize(sub(right, scale(up, dot(right, up))));
  const anterior = normalize(cross(up, rh2));
  const left = cross(up, anterior);
  return { anterior, left, up, centre: med(centres) };
}

/** Yaw (deg) of a camera seen from the athlete (see module comment). */
export function cameraYawDeg(cam: Pick<CameraCalibration, 'rvec' | 'tvec'>, h: AthleteHeading): number {
  const d = sub(cameraCenter(cam), h.centre);
  return wrapDeg(Math.atan2(dot(d, h.left), dot(d, h.anterior)) * RAD2DEG);
}

/** Obliquity (deg, 0..90) of a camera at a given yaw. */
export function obliquityFromYaw(yawDeg: number): number {
  return Math.abs(90 - Math.abs(wrapDeg(yawDeg)));
}

/** Per-camera yaw and the reading-level obliquity (min over cameras) with its band. */
export function viewObliquity(cams: CameraCalibration[], h: AthleteHeading | null): { yawsDeg: number[]; obliquityDeg: number | null; band: ObliquityBand } {
  if (!h || cams.length === 0) return { yawsDeg: cams.map(() => NaN), obliquityDeg: null, band: 'unknown' };
  const yaws = cams.map((c) => cameraYawDeg(c, h));
  const obl = Math.min(...yaws.map(obliquityFromYaw));
  return { yawsDeg: yaws, obliquityDeg: obl, band: obliquityBand(obl) };
}

/**
 * True when every declared camera is present and its measured yaw is within `tolDeg` of the
 * declared one. False when no layout is declared (nothing to match).
 */
export function viewMatchesDeclared(
  cams: CameraCalibration[],
  yawsDeg: number[],
  layout: DeclaredLayout | null,
  tolDeg = DEFAULT_VIEW_MATCH_TOLERANCE_DEG,
): boolean {
  if (!layout || layout.length === 0) return false;
  return layout.every((d) => {
    const i = cams.findIndex((c) => c.name === d.camera);
    const y = yawsDeg[i];
    return i >= 0 && y !== undefined && Number.isFinite(y) && Math.abs(wrapDeg(y - d.yaw_deg)) <= tolDeg;
  });
}

/** Result of comparing a (refined) calibration with the rig's declared layout. */
export interface RigDriftReport {
  drifted: boolean;
  /** Largest |measured − declared| yaw after the best common rotation (deg). */
  maxYawDriftDeg: number;
  /** Largest camera-centre displacement from the reference calibration (m); null without one. */
  maxPositionDriftM: number | null;
  perCamera: { camera: string; declaredYawDeg: number | null; measuredYawDeg: number; yawDriftDeg: number | null; positionDriftM: number | null }[];
  reasons: string[];
}

/**
 * Point nearest (least squares) to all cameras' optical axes: the rig centre (m).
 */
export function rigCentre(cams: CameraCalibration[]): Vec3 {
  const A = [0, 0, 0, 0, 0, 0, 0, 0, 0],
    b = [0, 0, 0];
  for (const c of cams) {
    const C = cameraCenter(c),
      d = opticalAxis(c);
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        const m = (i === j ? 1 : 0) - d[i]! * d[j]!;
        A[i * 3 + j]! += m;
        b[i]! += m * C[j]!;
      }
  }
  const det = (m: number[]) => m[0]! * (m[4]! * m[8]! - m[5]! * m[7]!) - m[1]! * (m[3]! * m[8]! - m[5]! * m[6]!) + m[2]! * (m[3]! * m[7]! - m[4]! * m[6]!);
  const D = det(A);
  if (Math.abs(D) < 1e-12) return [0, 0, 0];
  const col = (k: number) => A.map((v, idx) => (idx % 3 === k ? b[Math.floor(idx / 3)]! : v));
  return [det(col(0)) / D, det(col(1)) / D, det(col(2)) / D];
}

/**
 * Drift of a calibration from the declared layout: camera azimuths around the rig centre in the
 * plane normal to `up` are aligned to the declared yaws by the best common rotation (circular mean
 * of the differences); a residual above `tolDeg`, a declared camera missing from the calibration,
 * or a camera centre more than `tolM` from `reference` (the rig's previous calibration) → drifted.
 */
export function assessRigDrift(
  cams: CameraCalibration[],
  layout: DeclaredLayout | null,
  opts: { tolDeg?: number; tolM?: number; up?: Vec3; reference?: CameraCalibration[] } = {},
): RigDriftReport {
  const tolDeg = opts.tolDeg ?? DEFAULT_DRIFT_TOLERANCE_DEG,
    tolM = opts.tolM ?? DEFAULT_DRIFT_TOLERANCE_M;
  const up = normalize(opts.up ?? [0, 0, 1]);
  const centre = rigCentre(cams);
  // horizontal reference axes
  const seed: Vec3 = Math.abs(up[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
  const e1 = normalize(sub(seed, scale(up, dot(seed, up))));
  const e2 = cross(up, e1);
  const azimuth = (c: CameraCalibration) => {
    const d = sub(cameraCenter(c), centre);
    return Math.atan2(dot(d, e2), dot(d, e1)) * RAD2DEG;
  };
  const reasons: string[] = [];
  const declared = new Map((layout ?? []).map((d) => [d.camera, d.yaw_deg]));
  for (const d of layout ?? []) if (!cams.some((c) => c.name === d.camera)) reasons.push(`declared camera ${d.camera} is not in the calibration`);
  const az = cams.map(azimuth);
  // best common rotation: circular mean of (declared − measured)
  let sx = 0,
    sy = 0;
  cams.forEach((c, i) => {
    const y = declared.get(c.name);
    if (y === undefined) return;
    const diff = ((y - (az[i] ?? 0)) * Math.PI) / 180;
    sx += Math.cos(diff);
    sy += Math.sin(diff);
  });
  const offset = Math.atan2(sy, sx) * RAD2DEG;
  let maxYaw = 0,
    maxPos: number | null = null;
  const perCamera = cams.map((c, i) => {
    const measured = wrapDeg((az[i] ?? 0) + offset);
    const decl = declared.get(c.name) ?? null;
    const yd = decl === null ? null : Math.abs(wrapDeg(measured - decl));
    if (yd !== null) maxYaw = Math.max(maxYaw, yd);
    const ref = opts.reference?.find((r) => r.name === c.name);
    const pd = ref ? length(sub(cameraCenter(c), cameraCenter(ref))) : null;
    if (pd !== null) maxPos = Math.max(maxPos ?? 0, pd);
    return { camera: c.name, declaredYawDeg: decl, measuredYawDeg: measured, yawDriftDeg: yd, positionDriftM: pd };
  });
  if (maxYaw > tolDeg) reasons.push(`camera yaw drift ${maxYaw.toFixed(1)}° exceeds ${tolDeg}°`);
  if (maxPos !== null && maxPos > tolM) reasons.push(`camera position drift ${(maxPos as number).toFixed(3)} m exceeds ${tolM} m`);
  return { drifted: reasons.length > 0, maxYawDriftDeg: maxYaw, maxPositionDriftM: maxPos, perCamera, reasons };
}
