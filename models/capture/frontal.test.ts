import { describe, expect, it } from 'vitest';
import { computeJointSeries } from './angles';
import { projectionMatrix } from './camera';
import { COCO17 } from './keypoints';
import { buildPoseMetrics } from './summary';
import { projectFrames, ringCamera, syntheticMotion, syntheticPose, type SyntheticAngles } from './synthetic';
import { triangulateBatch } from './triangulation';

/** A landing-like motion with known frontal-plane truth per frame: limbs (pelvis level, trunk upright), then pelvis and trunk (limbs neutral). */
function frontalMotion(frames: number): SyntheticAngles[] {
  return syntheticMotion(frames).map((m, i) => {
    const s = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (frames - 1));
    if (i < frames / 2)
      return {
        ...m,
        hipFlexion: { left: 10 + 30 * s, right: 10 },
        kneeFlexion: { left: 10 + 40 * s, right: 10 },
        hipAbduction: { left: 5 + 20 * s, right: -8 * s },
        kneeValgus: { left: 15 * s, right: -6 * s },
        pelvicObliquity: 0,
        trunkLean: 0,
      };
    return {
      ...m,
      hipFlexion: { left: 0, right: 0 },
      kneeFlexion: { left: 0, right: 0 },
      hipAbduction: { left: 0, right: 0 },
      kneeValgus: { left: 0, right: 0 },
      pelvicObliquity: -8 * s,
      trunkLean: 12 * s,
    };
  });
}

/** Camera configurations (yaw of each camera, degrees; 0 = in front of the athlete). */
const CONFIGS: Record<string, number[]> = { 'front + 2 oblique': [0, 45, -45], '4 around': [0, 90, 180, 270], '2 oblique': [30, -30] };

describe('frontal-plane angles on synthetic rigs with known truth', () => {
  const motion = frontalMotion(40);
  const frames = motion.map((a) => syntheticPose(a));
  for (const [name, yaws] of Object.entries(CONFIGS)) {
    it(`${name}: hip abduction, knee FPPA (valgus +), pelvic obliquity and trunk lean match the truth within 0.005°`, () => {
      const cams = yaws.map((y, i) => ringCamera(`c${i}`, y));
      const obs = projectFrames(cams, frames);
      const tri = triangulateBatch({ cameras: cams.length, projections: Float64Array.from(cams.flatMap(projectionMatrix)), observations: obs });
      const series = computeJointSeries(tri.points, COCO17);
      const get = (j: string, s: 'left' | 'right') => series.find((x) => x.joint === j && x.side === s)!.angleDeg;
      motion.forEach((m, f) => {
        for (const side of ['left', 'right'] as const) {
          // thigh direction (sin flex, cos flex·sin abd, −cos flex·cos abd): its frontal-plane angle is the abduction itself
          // (relative to the pelvis–trunk frame, so checked where pelvis and trunk are level and upright)
          if (m.pelvicObliquity === 0 && m.trunkLean === 0) expect(get('hip_abduction', side)[f]).toBeCloseTo(m.hipAbduction![side], 2);
          // shank abducted (abd + valgus) at the same flexion offset: FPPA = valgus when hip and knee flexion are equal (right leg), close otherwise
          if (m.hipFlexion[side] === m.kneeFlexion[side]) expect(get('knee_frontal_projection_angle', side)[f]).toBeCloseTo(m.kneeValgus![side], 2);
          const sign = side === 'left' ? 1 : -1;
          expect(get('pelvic_obliquity', side)[f]).toBeCloseTo(sign * m.pelvicObliquity!, 2);
          expect(get('trunk_lateral_lean', side)[f]).toBeCloseTo(sign * m.trunkLean!, 2);
        }
      });
    });
  }

  it('knee FPPA is exact for a leg in the frontal plane: +valgus, −varus', () => {
    const pose = (valgus: number) =>
      syntheticPose({
        ...syntheticMotion(2)[0]!,
        hipFlexion: { left: 0, right: 0 },
        kneeFlexion: { left: 0, right: 0 },
        hipAbduction: { left: 4, right: 4 },
        kneeValgus: { left: valgus, right: -valgus },
      });
    for (const v of [-12, 0, 9, 25]) {
      const s = computeJointSeries(Float64Array.from(pose(v).flat()), COCO17);
      expect(s.find((x) => x.joint === 'knee_frontal_projection_angle' && x.side === 'left')!.angleDeg[0]).toBeCloseTo(v, 9);
      expect(s.find((x) => x.joint === 'knee_frontal_projection_angle' && x.side === 'right')!.angleDeg[0]).toBeCloseTo(-v, 9);
      expect(s.find((x) => x.joint === 'hip_abduction' && x.side === 'left')!.angleDeg[0]).toBeCloseTo(4, 9);
    }
  });

  it('frontal angles need a front or back camera (view_not_frontal) and are gated when the thigh is flexed to 90° (frontal_observability_gate)', () => {
    const pts = Float64Array.from(frames.flat(2));
    const base = { cameraCount: 2, cameraMode: 'x', viewObliquityDeg: 0, obliquityBand: 'sagittal' as const, viewMatchesDeclared: true, rigTrustworthy: true };
    const side = buildPoseMetrics(pts, COCO17, { ...base, frontalObliquityDeg: 90 }).rows.find((r) => r.joint === 'hip_abduction' && r.side === 'left')!;
    expect(side.trustworthy).toBe(false);
    expect(side.conditions.map((c) => c.code)).toContain('view_not_frontal');
    const front = buildPoseMetrics(pts, COCO17, { ...base, frontalObliquityDeg: 0 }).rows.find(
      (r) => r.joint === 'hip_abduction' && r.side === 'left' && r.statistic === 'peak',
    )!;
    expect(front.trustworthy).toBe(true);
    expect(front.sagittal_ratio).toBeNull();
    const squat = Float64Array.from(
      syntheticMotion(30)
        .map((m) => syntheticPose({ ...m, hipFlexion: { left: 88, right: 88 }, hipAbduction: { left: 10, right: 10 } }))
        .flat(2),
    );
    const gated = buildPoseMetrics(squat, COCO17, { ...base, frontalObliquityDeg: 0 }).rows.find((r) => r.joint === 'hip_abduction' && r.side === 'left')!;
    expect(gated.omitted_reason).toBe('frontal_observability_gate');
  });
});
