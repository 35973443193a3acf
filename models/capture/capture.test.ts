import { describe, expect, it } from 'vitest';
import { computeJointSeries } from './angles';
import { cameraCenter, projectionMatrix, projectPoint, rodrigues, rodriguesInverse } from './camera';
import { butterworthFiltfilt, butterworthLowpass, filtfilt, interpolateGaps } from './filters';
import { COCO17, BODY25B, BLAZEPOSE33, toeName } from './keypoints';
import { PoseMetricInput } from './metrics';
import { assessRigDrift, athleteHeading, obliquityBand, viewMatchesDeclared, viewObliquity } from './obliquity';
import { buildPoseMetrics } from './summary';
import { projectFrames, ringCamera, syntheticMotion, syntheticPose } from './synthetic';
import { triangulateBatch } from './triangulation';
import { formatTrc, parseTrc } from './trc';

const flat = (frames: [number, number, number][][]) => Float64Array.from(frames.flat(2));

describe('camera model', () => {
  it('round-trips Rodrigues vectors, including near π', () => {
    for (const r of [
      [0.1, -0.2, 0.3],
      [1.6882754799999993, 1.0483220499999997, -0.41955852],
      [Math.PI - 1e-9, 0, 0],
      [0, 0, 0],
    ] as [number, number, number][]) {
      const back = rodriguesInverse(rodrigues(r));
      const R1 = rodrigues(r),
        R2 = rodrigues(back);
      R1.forEach((v, i) => expect(R2[i]).toBeCloseTo(v, 8));
    }
  });
  it('ring cameras look at the target and project it to the image centre', () => {
    const cam = ringCamera('c', 45, { target: [0, 0, 1] });
    const p = projectPoint(cam, [0, 0, 1])!;
    expect(p[0]).toBeCloseTo((cam.width - 1) / 2, 9);
    expect(p[1]).toBeCloseTo((cam.height - 1) / 2, 9);
    const C = cameraCenter(cam);
    expect((Math.atan2(C[1], C[0]) * 180) / Math.PI).toBeCloseTo(45, 9);
  });
});

describe('reference triangulation', () => {
  const cams = [0, 60, -60, 180].map((y, i) => ringCamera(`cam${i}`, y));
  const P = Float64Array.from(cams.flatMap(projectionMatrix));
  const pose = syntheticPose(syntheticMotion(5)[2]!);

  it('recovers noise-free points exactly (< 1e-9 m) with zero reprojection error', () => {
    const obs = projectFrames(cams, [pose]);
    const r = triangulateBatch({ cameras: 4, projections: P, observations: obs });
    pose.forEach((X, k) => X.forEach((v, d) => expect(Math.abs(r.points[k * 3 + d]! - v)).toBeLessThan(1e-9)));
    for (const e of r.reprojectionPx) expect(e).toBeLessThan(1e-6);
    expect(Array.from(r.excludedCounts)).toEqual([0, 0, 0, 0]);
  });

  it('excludes an outlier camera (> 15 px) and counts it; < 2 views → missing', () => {
    const obs = projectFrames(cams, [pose]);
    // corrupt camera 2 for keypoint 0 by 80 px
    obs[(0 * 4 + 2) * 3] = obs[(0 * 4 + 2) * 3]! + 80;
    // keypoint 1: only one confident view
    for (const c of [1, 2, 3]) obs[(1 * 4 + c) * 3 + 2] = 0.1;
    const r = triangulateBatch({ cameras: 4, projections: P, observations: obs });
    expect(r.viewMask[0]).toBe(0b1011);
    expect(Math.abs(r.points[0]! - pose[0]![0])).toBeLessThan(1e-9);
    expect(r.excludedCounts[2]).toBe(1);
    expect(Number.isNaN(r.points[3])).toBe(true);
    expect(r.lowConfidenceCounts[1]).toBe(1);
  });

  it('returns missing when no combination gets under the threshold', () => {
    const obs = projectFrames(cams.slice(0, 2), [pose]);
    obs[1] = obs[1]! + 100; // two views only, one is 100 px off across the epipolar line
    const r = triangulateBatch({ cameras: 2, projections: P.slice(0, 24), observations: obs });
    expect(Number.isNaN(r.points[0])).toBe(true);
    expect(Number.isFinite(r.points[3])).toBe(true);
  });
});

describe('filters', () => {
  it('designs the same order-4 Butterworth as SciPy butter(4, 0.2)', () => {
    const { b, a } = butterworthLowpass(4, 6, 60);
    // scipy.signal.butter(4, 0.2) (SciPy 1.17.1)
    const B = [0.004824343357716228, 0.019297373430864913, 0.02894606014629737, 0.019297373430864913, 0.004824343357716228];
    const A = [1, -2.3695130071820376, 2.31398841441588, -1.0546654058785676, 0.18737949236818496];
    B.forEach((v, i) => expect(b[i]).toBeCloseTo(v, 12));
    A.forEach((v, i) => expect(a[i]).toBeCloseTo(v, 12));
  });
  it('filtfilt matches SciPy (odd padding, steady-state initial conditions)', () => {
    const x = Array.from({ length: 40 }, (_, i) => Math.sin(i / 3) + (i % 2 ? 0.3 : -0.3));
    const { b, a } = butterworthLowpass(4, 6, 60);
    const y = filtfilt(b, a, x);
    // scipy.signal.filtfilt(*butter(4, 0.2), x)[:6]
    [-0.29926142, 0.15018936, 0.54387554, 0.83775832, 1.00458917, 1.03572609].forEach((v, i) => expect(y[i]).toBeCloseTo(v, 7));
  });
  it('is zero-lag: a slow sine passes with no phase shift', () => {
    const x = Array.from({ length: 300 }, (_, i) => Math.sin((2 * Math.PI * 1 * i) / 60));
    const y = butterworthFiltfilt(x, 60, 6);
    for (let i = 30; i < 270; i++) expect(Math.abs(y[i]! - x[i]!)).toBeLessThan(2e-3);
  });
  it('fills gaps up to the stated maximum and leaves longer or edge gaps missing', () => {
    const x = Array.from({ length: 60 }, (_, i) => i * i * 0.01);
    const g = x.map((v, i) => ((i >= 10 && i < 13) || (i >= 30 && i < 42) || i < 2 ? NaN : v));
    const r = interpolateGaps(g, 10);
    expect(r.filled).toBe(3);
    for (let i = 10; i < 13; i++) expect(r.values[i]).toBeCloseTo(x[i]!, 2);
    for (let i = 30; i < 42; i++) expect(Number.isNaN(r.values[i])).toBe(true);
    expect(Number.isNaN(r.values[0])).toBe(true);
  });
});

describe('joint angles and the observability gate', () => {
  it('recovers the driving angles exactly on the synthetic skeleton', () => {
    const motion = syntheticMotion(9);
    const pts = flat(motion.map((m) => syntheticPose(m)));
    const series = computeJointSeries(pts, COCO17);
    const get = (j: string, s: string) => series.find((x) => x.joint === j && x.side === s)!;
    motion.forEach((m, f) => {
      for (const side of ['left', 'right'] as const) {
        expect(get('hip_flexion', side).angleDeg[f]).toBeCloseTo(m.hipFlexion[side], 9);
        expect(get('knee_flexion', side).angleDeg[f]).toBeCloseTo(m.kneeFlexion[side], 9);
        expect(get('shoulder_flexion', side).angleDeg[f]).toBeCloseTo(m.shoulderFlexion[side], 9);
        expect(get('elbow_flexion', side).angleDeg[f]).toBeCloseTo(m.elbowFlexion[side], 9);
        expect(get('knee_flexion', side).sagittalRatio[f]).toBeCloseTo(1, 9);
      }
    });
    expect(get('ankle_dorsiflexion', 'left').measurable).toBe(false);
  });

  it('omits shoulder flexion when the arm is abducted out of the sagittal plane', () => {
    const motion = syntheticMotion(30, { abductionDeg: 80 }).map((m) => ({ ...m, shoulderFlexion: { left: 10, right: 10 } }));
    const pts = flat(motion.map((m) => syntheticPose(m)));
    const { rows } = buildPoseMetrics(pts, COCO17, {
      cameraCount: 3,
      cameraMode: '3 calibrated cameras + one tap',
      viewObliquityDeg: 10,
      obliquityBand: 'sagittal',
      viewMatchesDeclared: true,
      rigTrustworthy: true,
    });
    const sh = rows.filter((r) => r.joint === 'shoulder_flexion');
    expect(sh.every((r) => r.omitted_reason === 'flexion_observability_gate' && r.value_deg === null && !r.trustworthy)).toBe(true);
    expect(sh[0]!.sagittal_ratio!).toBeLessThan(0.45);
    const knee = rows.find((r) => r.joint === 'knee_flexion' && r.side === 'left' && r.statistic === 'peak')!;
    expect(knee.value_deg!).toBeCloseTo(Math.max(...motion.map((m) => m.kneeFlexion.left)), 6);
    const ank = rows.filter((r) => r.joint === 'ankle_dorsiflexion');
    expect(ank.every((r) => r.omitted_reason === 'not_measurable_with_coco17')).toBe(true);
    for (const r of rows) expect(() => PoseMetricInput.parse(r)).not.toThrow();
    expect(rows).toHaveLength(72);
  });

  it('measures ankle dorsiflexion when the keypoint set has heel and toe (BODY_25B)', () => {
    const pose = syntheticPose(syntheticMotion(3)[0]!);
    const body = BODY25B.map((n) => {
      const i = COCO17.indexOf(n as (typeof COCO17)[number]);
      if (i >= 0) return pose[i]!;
      const side = n.startsWith('left') ? 'left' : 'right';
      const ankle = pose[COCO17.indexOf(`${side}_ankle`)]!;
      if (n.endsWith('heel')) return [ankle[0] - 0.05, ankle[1], ankle[2] - 0.05] as [number, number, number];
      if (n.endsWith('big_toe')) return [ankle[0] + 0.15, ankle[1], ankle[2] - 0.05] as [number, number, number];
      return [NaN, NaN, NaN] as [number, number, number];
    });
    const s = computeJointSeries(Float64Array.from(body.flat()), BODY25B).find((x) => x.joint === 'ankle_dorsiflexion' && x.side === 'left')!;
    expect(s.measurable).toBe(true);
    // frame 0: the left shank points 13 − 8 = 5° anterior (ankle ahead of the knee), the foot is
    // horizontal → the tibia leans back over the foot: 5° of plantarflexion
    expect(s.angleDeg[0]).toBeCloseTo(-5, 9);
  });

  it('measures ankle dorsiflexion from BlazePose-33 points (heel and foot index), the same way', () => {
    const pose = syntheticPose(syntheticMotion(3)[0]!);
    const body = BLAZEPOSE33.map((n) => {
      const i = COCO17.indexOf(n as (typeof COCO17)[number]);
      if (i >= 0) return pose[i]!;
      const side = n.startsWith('left') ? 'left' : 'right';
      const ankle = pose[COCO17.indexOf(`${side}_ankle`)]!;
      if (n.endsWith('heel')) return [ankle[0] - 0.05, ankle[1], ankle[2] - 0.05] as [number, number, number];
      // foot tip 10° above the heel line's horizontal: 5° plantarflexion from the shank + 10° toe up = 5° dorsiflexion
      if (n.endsWith('foot_index')) return [ankle[0] + 0.15, ankle[1], ankle[2] - 0.05 + 0.2 * Math.tan(Math.PI / 18)] as [number, number, number];
      return [NaN, NaN, NaN] as [number, number, number];
    });
    expect(toeName(BLAZEPOSE33, 'left')).toBe('left_foot_index');
    expect(toeName(COCO17, 'left')).toBeNull();
    const s = computeJointSeries(Float64Array.from(body.flat()), BLAZEPOSE33).find((x) => x.joint === 'ankle_dorsiflexion' && x.side === 'left')!;
    expect(s.measurable).toBe(true);
    expect(s.angleDeg[0]).toBeCloseTo(5, 9);
  });

  it('reports low coverage (no numbers) when the athlete is mostly out of view', () => {
    const motion = syntheticMotion(20);
    const pts = flat(motion.map((m, f) => (f < 14 ? syntheticPose(m).map(() => [NaN, NaN, NaN] as [number, number, number]) : syntheticPose(m))));
    const { rows } = buildPoseMetrics(pts, COCO17, {
      cameraCount: 2,
      cameraMode: '2 calibrated cameras + one tap',
      viewObliquityDeg: null,
      obliquityBand: 'unknown',
      viewMatchesDeclared: false,
      rigTrustworthy: true,
    });
    const knee = rows.find((r) => r.joint === 'knee_flexion')!;
    expect(knee.omitted_reason).toBe('low_coverage');
    expect(knee.coverage).toBeCloseTo(6 / 20, 9);
    // the omission says "too few valid frames" once: no low_coverage condition repeating it, on any omitted row
    expect(knee.conditions.map((c) => c.code)).not.toContain('low_coverage');
    for (const r of rows.filter((x) => x.omitted_reason !== null)) expect(r.conditions.map((c) => c.code)).not.toContain('low_coverage');
  });
});

describe('view obliquity, declared layout and drift', () => {
  const cams = [ringCamera('front', 0), ringCamera('left', 90), ringCamera('right45', -45)];
  const pts = flat(syntheticMotion(5).map((m) => syntheticPose(m)));
  it('measures camera yaw relative to the athlete and labels the band', () => {
    const h = athleteHeading(pts, COCO17)!;
    const v = viewObliquity(cams, h);
    expect(v.yawsDeg[0]).toBeCloseTo(0, 6);
    expect(v.yawsDeg[1]).toBeCloseTo(90, 6);
    expect(v.yawsDeg[2]).toBeCloseTo(-45, 6);
    expect(v.obliquityDeg).toBeCloseTo(0, 6);
    expect(v.band).toBe('sagittal');
    expect(obliquityBand(45)).toBe('oblique');
    expect(obliquityBand(75)).toBe('frontal');
    expect(obliquityBand(null)).toBe('unknown');
    const layout = [
      { camera: 'front', label: 'front', yaw_deg: 0 },
      { camera: 'left', label: 'left 90°', yaw_deg: 90 },
      { camera: 'right45', label: 'right 45°', yaw_deg: -45 },
    ];
    expect(viewMatchesDeclared(cams, v.yawsDeg, layout)).toBe(true);
    expect(viewMatchesDeclared(cams, v.yawsDeg, [{ camera: 'left', label: 'right', yaw_deg: -90 }])).toBe(false);
    expect(viewMatchesDeclared(cams, v.yawsDeg, null)).toBe(false);
  });
  it('flags a rig whose calibration drifted from its declared layout', () => {
    const layout = [
      { camera: 'front', label: 'front', yaw_deg: 0 },
      { camera: 'left', label: 'left 90°', yaw_deg: 90 },
      { camera: 'right45', label: 'right 45°', yaw_deg: -45 },
    ];
    expect(assessRigDrift(cams, layout).drifted).toBe(false);
    const moved = [cams[0]!, ringCamera('left', 120), cams[2]!];
    const d = assessRigDrift(moved, layout, { tolDeg: 15 });
    expect(d.drifted).toBe(true);
    expect(d.maxYawDriftDeg).toBeGreaterThan(15);
    const shifted = [cams[0]!, ringCamera('left', 90, { distance: 4.3 }), cams[2]!];
    const p = assessRigDrift(shifted, layout, { tolM: 0.1, reference: cams });
    expect(p.maxPositionDriftM!).toBeCloseTo(0.3, 6);
    expect(p.drifted).toBe(true);
  });
});

describe('TRC', () => {
  it('round-trips through the Y-up file layout', () => {
    const pts = Float64Array.from([1, 2, 3, NaN, NaN, NaN, 0.5, -0.25, 1.75, 4, 5, 6]);
    const t = parseTrc(formatTrc('x.trc', ['a', 'b'], 60, pts));
    expect(t.markers).toEqual(['a', 'b']);
    expect(t.frames).toBe(2);
    expect(t.fps).toBe(60);
    Array.from(pts).forEach((v, i) => (Number.isNaN(v) ? expect(Number.isNaN(t.points[i])).toBe(true) : expect(t.points[i]).toBeCloseTo(v, 6)));
  });
});

describe('trustworthy is earned per reading, each failure a condition', () => {
  const base = { cameraCount: 3, cameraMode: 'x', viewObliquityDeg: 10, obliquityBand: 'sagittal' as const, viewMatchesDeclared: true, rigTrustworthy: true };
  it('needs a reported value, no rig drift, coverage ≥ 0.8 and, for planar angles, a sagittal or oblique best view', async () => {
    const { conditionsFor, isTrustworthy, TRUST_MIN_COVERAGE } = await import('./summary');
    const codes = (c: Parameters<typeof conditionsFor>[0], joint: Parameters<typeof conditionsFor>[1], cov: number) =>
      conditionsFor(c, joint, cov, []).map((x) => x.code);
    expect(TRUST_MIN_COVERAGE).toBe(0.8);
    expect(codes(base, 'hip_flexion', 0.9)).toEqual([]);
    expect(codes({ ...base, obliquityBand: 'oblique' }, 'hip_flexion', 0.8)).toEqual([]);
    expect(codes(base, 'hip_flexion', 0.79)).toEqual(['low_coverage']);
    expect(isTrustworthy([], true)).toBe(false);
    expect(codes({ ...base, rigTrustworthy: false }, 'knee_flexion', 0.9)).toEqual(['rig_drift']);
    expect(codes({ ...base, obliquityBand: 'frontal' }, 'hip_flexion', 0.9)).toEqual(['view_not_sagittal']);
    expect(codes({ ...base, obliquityBand: 'unknown', viewObliquityDeg: null }, 'shoulder_flexion', 0.9)).toEqual(['view_not_sagittal']);
    // knee and elbow flexion are 3D angles: a frontal best view does not fail them
    expect(codes({ ...base, obliquityBand: 'frontal' }, 'knee_flexion', 0.9)).toEqual([]);
    expect(isTrustworthy([{ code: 'static_trial', detail: 'x' }], false)).toBe(true);
    expect(isTrustworthy([{ code: 'camera_offset', detail: 'x' }], false)).toBe(false);
  });
});

describe('knee flexion with the leg out of the pelvis plane', () => {
  it('is the 3D thigh–shank angle (a projected difference would exceed it)', () => {
    const K = COCO17.length;
    const pts = new Float64Array(K * 3).fill(NaN);
    const put = (name: (typeof COCO17)[number], p: [number, number, number]) => pts.set(p, COCO17.indexOf(name) * 3);
    put('left_hip', [-0.1, 1, 0]);
    put('right_hip', [0.1, 1, 0]);
    put('left_shoulder', [-0.2, 1.5, 0]);
    put('right_shoulder', [0.2, 1.5, 0]);
    // Left leg abducted 40° and the shank swung forward: thigh and shank leave the sagittal plane.
    const knee: [number, number, number] = [-0.1 - 0.45 * Math.sin(0.7), 1 - 0.45 * Math.cos(0.7), 0.05];
    const ankle: [number, number, number] = [knee[0] - 0.1, knee[1] - 0.35, knee[2] + 0.25];
    put('left_knee', knee);
    put('left_ankle', ankle);
    put('right_knee', [0.1, 0.55, 0]);
    put('right_ankle', [0.1, 0.1, 0]);
    const s = computeJointSeries(pts, COCO17).find((x) => x.joint === 'knee_flexion' && x.side === 'left')!;
    const thigh = [knee[0] + 0.1, knee[1] - 1, knee[2]];
    const shank = [ankle[0] - knee[0], ankle[1] - knee[1], ankle[2] - knee[2]];
    const dot = thigh[0]! * shank[0]! + thigh[1]! * shank[1]! + thigh[2]! * shank[2]!;
    const angle3d = (Math.acos(dot / (Math.hypot(...thigh) * Math.hypot(...shank))) * 180) / Math.PI;
    expect(Math.abs(s.angleDeg[0]!)).toBeCloseTo(angle3d, 9);
  });
});

describe('hip flexion sign (documented in angles.ts)', () => {
  const K = COCO17.length;
  const pose = (leanDeg: number, thighDeg: number) => {
    // Y up, X anterior, Z right (ISB axes); pelvis at the origin
    const pts = new Float64Array(K * 3).fill(NaN);
    const put = (name: (typeof COCO17)[number], p: [number, number, number]) => pts.set(p, COCO17.indexOf(name) * 3);
    const l = (leanDeg * Math.PI) / 180,
      t = (thighDeg * Math.PI) / 180;
    put('left_hip', [0, 0, -0.1]);
    put('right_hip', [0, 0, 0.1]);
    put('left_shoulder', [0.5 * Math.sin(l), 0.5 * Math.cos(l), -0.2]);
    put('right_shoulder', [0.5 * Math.sin(l), 0.5 * Math.cos(l), 0.2]);
    for (const s of ['left', 'right'] as const) put(`${s}_knee`, [0.44 * Math.sin(t), -0.44 * Math.cos(t), s === 'left' ? -0.1 : 0.1]);
    return computeJointSeries(pts, COCO17).find((x) => x.joint === 'hip_flexion' && x.side === 'left')!.angleDeg[0]!;
  };
  it('is positive with the knee forward, negative behind, and a forward trunk lean adds to it', () => {
    expect(pose(0, 40)).toBeCloseTo(40, 9);
    expect(pose(0, -15)).toBeCloseTo(-15, 9);
    expect(pose(30, 0)).toBeCloseTo(30, 9);
    expect(pose(30, 40)).toBeCloseTo(70, 9);
  });
});
