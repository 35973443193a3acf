/**
 * Joint-angle definitions (degrees) from 3D keypoints, and the flexion observability gate.
 *
 * Segment frames (after the ISB recommendations, Wu et al. 2002 J Biomech 35:543 (lower limb)
 * and Wu et al. 2005 J Biomech 38:981 (upper limb), reduced to what keypoints allow):
 * - Pelvis: Z = unit(right hip − left hip) (medio-lateral, to the right); Y' = unit(mid-shoulder −
 *   mid-hip) (trunk long axis, up); X = unit(Y' × Z) (anterior); Y = Z × X.
 * - Thorax: as the pelvis with the shoulders for Z.
 * The sagittal plane of a frame is the plane normal to its Z. For a segment vector v:
 * in-plane angle θ(v) = atan2(v·X, −v·Y) (0 = pointing down, positive = anterior), and
 * sagittal-projection ratio r(v) = |v − (v·Z)Z| / |v|.
 *
 * Definitions (flexion positive):
 * - hip_flexion = θ(knee − hip) in the pelvis frame (thigh relative to the trunk axis: COCO-17
 *   has no pelvis landmarks beyond the hip centres, so pelvic tilt cannot be separated from trunk
 *   lean — a forward trunk lean over a still thigh reads as *more* hip flexion, + the lean angle, as
 *   the thigh–trunk angle does anatomically; positive = flexion (knee anterior of the trunk axis),
 *   negative = extension; 0 = thigh along the trunk axis).
 * - knee_flexion = the 3D angle between thigh (knee − hip) and shank (ankle − knee), signed by
 *   their in-plane difference θ(thigh) − θ(shank) in the pelvis frame (0 = straight,
 *   hyperextension negative). The magnitude is never larger than the thigh–shank angle, even when
 *   the leg is abducted or rotated out of the pelvis plane (a projected difference would be).
 * - shoulder_flexion = θ(elbow − shoulder) in the thorax frame (humeral elevation in the sagittal
 *   plane; not the ISB Y-X-Y humerothoracic decomposition, which needs the humeral long-axis rotation).
 * - elbow_flexion = 3D angle between (elbow − shoulder) and (wrist − elbow) (0 = straight).
 * - ankle_dorsiflexion = 90° − angle(knee − ankle, toe − heel), toe = big toe (OpenPose BODY_25B)
 *   or foot index (BlazePose): needs heel and toe points, which COCO-17 lacks → not measurable
 *   with COCO-17 (BlazePose video and BODY_25B JSON input have them). 0 = foot at right angles to
 *   the shank; positive = dorsiflexion.
 *
 * Frontal-plane angles (degrees; the frontal plane of the pelvis frame is the plane normal to X,
 * spanned by Y and Z; "lateral" is −Z on the left side and +Z on the right). For a vector v:
 * φ(v) = atan2(v·lateral, −v·Y) (0 = pointing down, positive = away from the midline), and the
 * frontal-projection ratio r_f(v) = |v − (v·X)X| / |v|.
 * - hip_abduction = φ(knee − hip): the thigh's angle to the trunk axis in the pelvis frontal plane,
 *   abduction positive. ISB (Wu et al. 2002) defines hip ab/adduction as the second JCS rotation
 *   between femur and pelvis frames; with COCO-17 the pelvis frame is built from the hip centres
 *   and the trunk axis, so pelvic obliquity relative to the trunk is included — hence "thigh
 *   frontal-plane angle", not the ISB angle.
 * - knee_frontal_projection_angle (FPPA; Willson & Davis 2008, Munro et al. 2012, here in 3D in the
 *   pelvis frontal plane instead of one camera image) = φ(ankle − knee) − φ(knee − hip): positive =
 *   the shank points more laterally than the thigh, i.e. the knee sits medially = dynamic valgus;
 *   negative = varus. Not the ISB knee ab/adduction (that needs the femoral and tibial frames).
 * - pelvic_obliquity (side s) = elevation of hip s above the other hip, asin((hip_s − hip_other)·up
 *   / |hip_s − hip_other|), up = world vertical (the calibration's Z axis when the trial's median
 *   trunk axis is within 45° of it, else that trunk axis): negative on the side that drops
 *   (Trendelenburg). Both sides are reported (mirror values).
 * - trunk_lateral_lean (side s) = the trunk axis (mid-hip → mid-shoulder) tilted towards side s from
 *   `up` in the athlete's frontal plane, degrees; both sides reported (mirror values).
 * Frontal gate: hip abduction and FPPA frames are omitted when the smaller frontal-projection ratio
 * of their segments is below 0.45 (the same bound as the sagittal gate), e.g. a thigh flexed near 90°.
 * Pelvic obliquity and trunk lean need no segment ratio.
 *
 * Gate (applied in summary.ts to the planar angles only: hip and shoulder flexion, ankle
 * dorsiflexion): a frame's reading is omitted when the smaller sagittal-projection ratio of the
 * segments it uses is below 0.45 (shared/design/capture.md, "Flexion observability gate"). Knee and
 * elbow flexion are 3D angles and need no sagittal view; their ratio is still reported.
 */
import type { Vec3 } from './camera';
import { toeName, type KeypointSet } from './keypoints';
import type { PoseJoint, PoseSide } from './metrics';
import { cross, dot, length, median, mid, normalize, sub, isFiniteVec, RAD2DEG, scale } from './vec';

/** Sagittal-projection ratio below which a flexion reading is omitted (design/capture.md). */
export const FLEXION_OBSERVABILITY_GATE = 0.45;

/** Per-frame series of one joint on one side. */
export interface JointSeries {
  joint: PoseJoint;
  side: PoseSide;
  /** Degrees per frame; NaN where a point is missing. Not gated. */
  angleDeg: Float64Array;
  /** Sagittal-projection ratio per frame (0..1); NaN where missing. */
  sagittalRatio: Float64Array;
  /** False when the keypoint set lacks a point the definition needs. */
  measurable: boolean;
  /** Plane of the definition: `sagittal` and `frontal` angles are gated by their projection ratio; `3d` angles are not; `global` (pelvic obliquity, trunk lean) have no segment ratio. */
  plane: 'sagittal' | 'frontal' | '3d' | 'global';
  /** Frontal-projection ratio per frame for frontal angles (0..1); NaN otherwise. */
  frontalRatio: Float64Array;
}

interface Frame {
  X: Vec3;
  Y: Vec3;
  Z: Vec3;
}

function segmentFrame(left: Vec3, right: Vec3, lower: Vec3, upper: Vec3): Frame | null {
  const Z0 = sub(right, left);
  const Y0 = sub(upper, lower);
  if (!isFiniteVec(Z0) || !isFiniteVec(Y0) || length(Z0) < 1e-9 || length(Y0) < 1e-9) return null;
  const Z = normalize(Z0);
  const X = normalize(cross(normalize(Y0), Z));
  const Y = cross(Z, X);
  return { X, Y, Z };
}

function theta(v: Vec3, f: Frame): number {
  return Math.atan2(dot(v, f.X), -dot(v, f.Y)) * RAD2DEG;
}

function ratio(v: Vec3, f: Frame): number {
  const l = length(v);
  if (!(l > 0)) return NaN;
  const p = sub(v, scale(f.Z, dot(v, f.Z)));
  return Math.min(1, length(p) / l);
}

function angleBetween(a: Vec3, b: Vec3): number {
  const c = dot(a, b) / (length(a) * length(b));
  return Math.acos(Math.max(-1, Math.min(1, c))) * RAD2DEG;
}

/**
 * Compute every joint × side series from F frames of K 3D keypoints (`points` F×K×3, metres,
 * NaN = missing) laid out in `set` (COCO-17, BlazePose-33 or BODY_25B names).
 */
export function computeJointSeries(points: Float64Array, set: KeypointSet): JointSeries[] {
  const K = set.length;
  const F = points.length / (K * 3);
  const idx = (n: string) => set.indexOf(n);
  const at = (f: number, i: number): Vec3 =>
    i < 0 ? [NaN, NaN, NaN] : [points[(f * K + i) * 3] ?? NaN, points[(f * K + i) * 3 + 1] ?? NaN, points[(f * K + i) * 3 + 2] ?? NaN];
  const I = {
    lh: idx('left_hip'),
    rh: idx('right_hip'),
    ls: idx('left_shoulder'),
    rs: idx('right_shoulder'),
  };
  const out: JointSeries[] = [];
  const sides: PoseSide[] = ['left', 'right'];
  const PLANE: Record<PoseJoint, JointSeries['plane']> = {
    hip_flexion: 'sagittal',
    shoulder_flexion: 'sagittal',
    ankle_dorsiflexion: 'sagittal',
    knee_flexion: '3d',
    elbow_flexion: '3d',
    hip_abduction: 'frontal',
    knee_frontal_projection_angle: 'frontal',
    pelvic_obliquity: 'global',
    trunk_lateral_lean: 'global',
  };
  const mk = (joint: PoseJoint, side: PoseSide, measurable: boolean): JointSeries => ({
    joint,
    side,
    angleDeg: new Float64Array(F).fill(NaN),
    sagittalRatio: new Float64Array(F).fill(NaN),
    measurable,
    plane: PLANE[joint],
    frontalRatio: new Float64Array(F).fill(NaN),
  });
  // `up` for pelvic obliquity and trunk lean: the trial's median trunk axis.
  const ups: Vec3[] = [];
  for (let f = 0; f < F; f++) {
    const u = sub(mid(at(f, I.ls), at(f, I.rs)), mid(at(f, I.lh), at(f, I.rh)));
    if (isFiniteVec(u) && length(u) > 1e-9) ups.push(normalize(u));
  }
  const trunkUp: Vec3 | null = ups.length ? normalize([median(ups.map((u) => u[0])), median(ups.map((u) => u[1])), median(ups.map((u) => u[2]))]) : null;
  // World vertical = the calibration's Z axis (floor-board extrinsics and the Pose2Sim/Qualisys TOML
  // put Z up) when the median trunk axis is within 45° of it; otherwise the median trunk axis.
  const medUp: Vec3 | null = !trunkUp ? null : trunkUp[2] > Math.SQRT1_2 ? [0, 0, 1] : trunkUp[2] < -Math.SQRT1_2 ? [0, 0, -1] : trunkUp;
  for (const side of sides) {
    const hip = idx(`${side}_hip`),
      knee = idx(`${side}_knee`),
      ankle = idx(`${side}_ankle`);
    const sh = idx(`${side}_shoulder`),
      el = idx(`${side}_elbow`),
      wr = idx(`${side}_wrist`);
    const toeN = toeName(set, side);
    const heel = idx(`${side}_heel`),
      toe = toeN ? idx(toeN) : -1;
    const hipS = mk('hip_flexion', side, hip >= 0 && knee >= 0);
    const kneeS = mk('knee_flexion', side, hip >= 0 && knee >= 0 && ankle >= 0);
    const shS = mk('shoulder_flexion', side, sh >= 0 && el >= 0);
    const elS = mk('elbow_flexion', side, sh >= 0 && el >= 0 && wr >= 0);
    const ankS = mk('ankle_dorsiflexion', side, knee >= 0 && ankle >= 0 && heel >= 0 && toe >= 0);
    const abdS = mk('hip_abduction', side, hip >= 0 && knee >= 0);
    const fppaS = mk('knee_frontal_projection_angle', side, hip >= 0 && knee >= 0 && ankle >= 0);
    const oblS = mk('pelvic_obliquity', side, I.lh >= 0 && I.rh >= 0);
    const leanS = mk('trunk_lateral_lean', side, I.lh >= 0 && I.rh >= 0 && I.ls >= 0 && I.rs >= 0);
    const sgn = side === 'left' ? -1 : 1; // lateral = sgn·Z
    for (let f = 0; f < F; f++) {
      const midHip = mid(at(f, I.lh), at(f, I.rh)),
        midSh = mid(at(f, I.ls), at(f, I.rs));
      const pelvis = segmentFrame(at(f, I.lh), at(f, I.rh), midHip, midSh);
      const thorax = segmentFrame(at(f, I.ls), at(f, I.rs), midHip, midSh);
      const thigh = sub(at(f, knee), at(f, hip)),
        shank = sub(at(f, ankle), at(f, knee));
      const upper = sub(at(f, el), at(f, sh)),
        fore = sub(at(f, wr), at(f, el));
      if (pelvis && isFiniteVec(thigh)) {
        hipS.angleDeg[f] = theta(thigh, pelvis);
        hipS.sagittalRatio[f] = ratio(thigh, pelvis);
        if (isFiniteVec(shank)) {
          const planar = theta(thigh, pelvis) - theta(shank, pelvis);
          kneeS.angleDeg[f] = (planar < 0 ? -1 : 1) * angleBetween(thigh, shank);
          kneeS.sagittalRatio[f] = Math.min(ratio(thigh, pelvis), ratio(shank, pelvis));
        }
      }
      if (thorax && isFiniteVec(upper)) {
        shS.angleDeg[f] = theta(upper, thorax);
        shS.sagittalRatio[f] = ratio(upper, thorax);
        if (isFiniteVec(fore)) {
          elS.angleDeg[f] = angleBetween(upper, fore);
          elS.sagittalRatio[f] = Math.min(ratio(upper, thorax), ratio(fore, thorax));
        }
      }
      if (pelvis && isFiniteVec(thigh)) {
        const lat = scale(pelvis.Z, sgn);
        const phi = (v: Vec3) => Math.atan2(dot(v, lat), -dot(v, pelvis.Y)) * RAD2DEG;
        const fr = (v: Vec3) => {
          const l = length(v);
          return l > 0 ? Math.min(1, length(sub(v, scale(pelvis.X, dot(v, pelvis.X)))) / l) : NaN;
        };
        abdS.angleDeg[f] = phi(thigh);
        abdS.frontalRatio[f] = fr(thigh);
        if (isFiniteVec(shank)) {
          fppaS.angleDeg[f] = phi(shank) - phi(thigh);
          fppaS.frontalRatio[f] = Math.min(fr(thigh), fr(shank));
        }
      }
      if (medUp && pelvis) {
        const other = side === 'left' ? I.rh : I.lh;
        const across = sub(at(f, hip), at(f, other));
        if (isFiniteVec(across) && length(across) > 1e-9)
          oblS.angleDeg[f] = Math.asin(Math.max(-1, Math.min(1, dot(across, medUp) / length(across)))) * RAD2DEG;
        const trunk = sub(midSh, midHip);
        if (isFiniteVec(trunk) && length(trunk) > 1e-9) {
          // towards side s: component along that side's lateral direction (horizontal, ⟂ up)
          const latH0 = scale(pelvis.Z, sgn);
          const latH = sub(latH0, scale(medUp, dot(latH0, medUp)));
          if (length(latH) > 1e-9) {
            const l = normalize(latH);
            leanS.angleDeg[f] = Math.atan2(dot(trunk, l), dot(trunk, medUp)) * RAD2DEG;
          }
        }
      }
      if (ankS.measurable && pelvis) {
        const shankUp = sub(at(f, knee), at(f, ankle)),
          foot = sub(at(f, toe), at(f, heel));
        if (isFiniteVec(shankUp) && isFiniteVec(foot)) {
          ankS.angleDeg[f] = 90 - angleBetween(shankUp, foot);
          ankS.sagittalRatio[f] = Math.min(ratio(shankUp, pelvis), ratio(foot, pelvis));
        }
      }
    }
    out.push(hipS, kneeS, shS, elS, ankS, abdS, fppaS, oblS, leanS);
  }
  return out;
}
