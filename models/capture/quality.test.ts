import { describe, expect, it } from 'vitest';
import { COCO17 } from './keypoints';
import {
  athleteNotTappedCondition,
  trackJumpCondition,
  TRACK_JUMP_SLACK_M,
  TRACK_MAX_SPEED_M_S,
  cameraConditions,
  CONDITION_DETAIL_MAX,
  conditionsPass,
  crossCheckCondition,
  crossCheckDegrees,
  mergeConditions,
  MODEL_DISAGREEMENT_MAX_DEG,
  modelDisagreementCondition,
  readingAngleDifference,
  readingModelDistances,
  type ModelCrossCheck,
  hipPlacementCondition,
  pelvisStats,
  readingConditions,
  segmentLengths,
  SEGMENT_CV_MAX,
  uncheckedFrames,
  type ViewSupport,
} from './quality';
import { applySyncOffsets, estimateSync, SYNC_MAX_RATIO } from './sync';
import { projectionMatrix } from './camera';
import { projectFrames, ringCamera, syntheticMotion, syntheticPose } from './synthetic';
import { buildPoseMetrics, conditionsFor } from './summary';
import { MIN_PERSON_KEYPOINTS, peopleInView } from './association';

describe('hip placement (pelvis axis against the shoulder line)', () => {
  const frames = syntheticMotion(40).map((a) => syntheticPose(a));
  const pts = Float64Array.from(frames.flat().flat());
  const K = COCO17.length,
    lh = COCO17.indexOf('left_hip'),
    rh = COCO17.indexOf('right_hip');
  /** Turn the hip line about the vertical (Z) through mid-hip by `deg(f)` degrees. */
  const turnHips = (deg: (f: number) => number) => {
    const out = Float64Array.from(pts);
    for (let f = 0; f < 40; f++) {
      const a = (deg(f) * Math.PI) / 180;
      const o = (i: number) => (f * K + i) * 3;
      const mx = (out[o(lh)]! + out[o(rh)]!) / 2,
        my = (out[o(lh) + 1]! + out[o(rh) + 1]!) / 2;
      for (const i of [lh, rh]) {
        const dx = out[o(i)]! - mx,
          dy = out[o(i) + 1]! - my;
        out[o(i)] = mx + dx * Math.cos(a) - dy * Math.sin(a);
        out[o(i) + 1] = my + dx * Math.sin(a) + dy * Math.cos(a);
      }
    }
    return out;
  };
  it('a synthetic skeleton (hip line parallel to the shoulders) passes; hips turned 40° against the shoulders in a third of the frames fail', () => {
    const ok = pelvisStats(pts, COCO17)!;
    expect(ok.twistP95Deg).toBeLessThan(1e-6);
    expect(hipPlacementCondition(ok)).toBeNull();
    const st = pelvisStats(
      turnHips((f) => (f >= 20 && f < 34 ? 40 : 0)),
      COCO17,
    )!;
    expect(st.twistP95Deg).toBeCloseTo(40, 3);
    expect(hipPlacementCondition(st)!.code).toBe('hip_centres_implausible');
    // 25° everywhere stays within the limit (pelvis–thorax rotation a task may really have)
    expect(
      hipPlacementCondition(
        pelvisStats(
          turnHips(() => 25),
          COCO17,
        ),
      ),
    ).toBeNull();
  });
  it('hips collapsed onto each other (width 0.1 × thigh) fail; the condition reaches hip- and knee-based readings only', () => {
    const out = Float64Array.from(pts);
    for (let f = 0; f < 40; f++)
      for (let d = 0; d < 3; d++) {
        const m = (out[(f * K + lh) * 3 + d]! + out[(f * K + rh) * 3 + d]!) / 2;
        out[(f * K + lh) * 3 + d] = m + (out[(f * K + lh) * 3 + d]! - m) * 0.2;
        out[(f * K + rh) * 3 + d] = m + (out[(f * K + rh) * 3 + d]! - m) * 0.2;
      }
    const cond = hipPlacementCondition(pelvisStats(out, COCO17))!;
    expect(cond.detail).toMatch(/× thigh length \(plausible 0\.3–0\.8\)/);
    const seg = segmentLengths(pts, COCO17);
    const x = { segments: seg, values: [10, 20], confidence: () => 0.9, hipPlacement: cond };
    expect(readingConditions('knee_flexion', 'left', x).map((c) => c.code)).toEqual(['hip_centres_implausible']);
    expect(readingConditions('elbow_flexion', 'left', x)).toEqual([]);
  });
});

describe('segment checks', () => {
  const frames = syntheticMotion(40).map((a) => syntheticPose(a));
  const pts = Float64Array.from(frames.flat().flat());
  it('a rigid synthetic skeleton has constant, symmetric segments and passes', () => {
    const seg = segmentLengths(pts, COCO17);
    expect(seg.left.thigh!.medianM).toBeCloseTo(0.44, 6);
    expect(seg.left.thigh!.cv).toBeLessThan(1e-9);
    expect(readingConditions('knee_flexion', 'left', { segments: seg, values: [10, 60], confidence: () => 0.9 })).toEqual([]);
  });
  it('flags a shank whose length varies, a thigh longer on one side, a value out of range and low confidence', () => {
    const K = COCO17.length,
      ankle = COCO17.indexOf('left_ankle'),
      knee = COCO17.indexOf('right_knee');
    const bad = Float64Array.from(pts);
    for (let f = 0; f < 40; f++) bad[(f * K + ankle) * 3 + 2]! -= f % 2 ? 0.12 : 0; // shank jumps 12 cm every other frame
    for (let f = 0; f < 40; f++) bad[(f * K + knee) * 3 + 2]! -= 0.15; // right thigh 15 cm longer
    const seg = segmentLengths(bad, COCO17);
    expect(seg.left.shank!.cv).toBeGreaterThan(SEGMENT_CV_MAX);
    const left = readingConditions('knee_flexion', 'left', { segments: seg, values: [10, 170], confidence: (n) => (n === 'left_ankle' ? 0.3 : 0.9) }).map(
      (c) => c.code,
    );
    // moving the right knee down lengthens the right thigh and shortens the right shank: both asymmetric,
    // one segment_asymmetry entry carrying both details (a code never repeats)
    expect(left).toEqual(['segment_asymmetry', 'segment_length_unstable', 'implausible_range', 'low_2d_confidence']);
    const asym = readingConditions('knee_flexion', 'left', { segments: seg, values: [10, 60], confidence: () => 0.9 }).find(
      (c) => c.code === 'segment_asymmetry',
    )!;
    expect(asym.detail).toMatch(/^left and right thigh lengths differ by \d+ %.*; left and right shank lengths differ by \d+ %/);
  });
});

describe('merged conditions (one entry per code)', () => {
  it('joins the details of repeated codes in order, drops exact repeats, keeps other codes and their order', () => {
    const m = mergeConditions([
      { code: 'camera_exclusion_imbalance', detail: 'camera a …' },
      { code: 'low_coverage', detail: 'only 70 %' },
      { code: 'camera_exclusion_imbalance', detail: 'camera b …' },
      { code: 'low_coverage', detail: 'only 70 %' },
    ]);
    expect(m).toEqual([
      { code: 'camera_exclusion_imbalance', detail: 'camera a …; camera b …' },
      { code: 'low_coverage', detail: 'only 70 %' },
    ]);
  });
  it('two cameras failing the same check give one condition per reading, both cameras named, within the stored length', () => {
    const cams = cameraConditions({ names: ['a', 'b', 'c', 'd'], excluded: [400, 400, 10, 12], valid: [1000, 1000, 1000, 1000], residualPx: [3, 4, 5, 4] });
    expect(cams.map((c) => c.code)).toEqual(['camera_exclusion_imbalance', 'camera_exclusion_imbalance']);
    const [c] = conditionsFor(
      {
        cameraCount: 4,
        cameraMode: 'x',
        viewObliquityDeg: 10,
        obliquityBand: 'sagittal',
        viewMatchesDeclared: true,
        rigTrustworthy: true,
        trialConditions: cams,
      },
      'knee_flexion',
      1,
      [],
    );
    expect(c!.code).toBe('camera_exclusion_imbalance');
    expect(c!.detail).toMatch(/camera a was excluded .*; camera b was excluded/);
    expect(c!.detail.length).toBeLessThanOrEqual(CONDITION_DETAIL_MAX);
  });
});

describe('second-model cross-check (model_disagreement / model_difference, in degrees)', () => {
  const F = 40,
    K = COCO17.length;
  const pts = Float64Array.from(syntheticMotion(F).flatMap((a) => syntheticPose(a).flat()));
  const at = (p: Float64Array, f: number, name: string): [number, number, number] => {
    const k = (f * K + COCO17.indexOf(name as (typeof COCO17)[number])) * 3;
    return [p[k]!, p[k + 1]!, p[k + 2]!];
  };
  /** The same skeleton with the left forearm turned by `deg` about the elbow, in the arm's plane: the left elbow angle changes by exactly `deg` (a second model that bends the elbow differently). */
  const bentElbow = (deg: number) => {
    const out = Float64Array.from(pts);
    const th = (deg * Math.PI) / 180;
    for (let f = 0; f < F; f++) {
      const s = at(pts, f, 'left_shoulder'),
        e = at(pts, f, 'left_elbow'),
        w = at(pts, f, 'left_wrist');
      const u = [s[0] - e[0], s[1] - e[1], s[2] - e[2]],
        v = [w[0] - e[0], w[1] - e[1], w[2] - e[2]];
      // axis n = u × v (normalised); rotating v about n by -th opens the elbow (angle u–v grows by th)
      const n0 = [u[1]! * v[2]! - u[2]! * v[1]!, u[2]! * v[0]! - u[0]! * v[2]!, u[0]! * v[1]! - u[1]! * v[0]!];
      const nl = Math.hypot(...n0);
      const n = n0.map((x) => x / nl);
      const c = Math.cos(-th),
        sn = Math.sin(-th);
      const nxv = [n[1]! * v[2]! - n[2]! * v[1]!, n[2]! * v[0]! - n[0]! * v[2]!, n[0]! * v[1]! - n[1]! * v[0]!];
      const nd = n[0]! * v[0]! + n[1]! * v[1]! + n[2]! * v[2]!;
      const k = (f * K + COCO17.indexOf('left_wrist')) * 3;
      for (let d = 0; d < 3; d++) out[k + d] = e[d]! + v[d]! * c + nxv[d]! * sn + n[d]! * nd * (1 - c);
    }
    return out;
  };
  const check = (secondary: Float64Array): ModelCrossCheck => ({
    primary: 'MoveNet Lightning',
    secondary: 'MoveNet Thunder',
    primarySet: COCO17,
    primaryPoints: pts,
    secondarySet: COCO17,
    secondaryPoints: secondary,
  });
  const base = {
    cameraCount: 4,
    cameraMode: 'test',
    viewObliquityDeg: 0,
    obliquityBand: 'sagittal' as const,
    viewMatchesDeclared: true,
    rigTrustworthy: true,
  };
  const reading = (rows: ReturnType<typeof buildPoseMetrics>['rows'], joint: string, side: string) =>
    rows.find((r) => r.joint === joint && r.side === side && r.statistic === 'mean')!;

  it('readingAngleDifference: mean and p95 |Δ| over the frames where both models have a value', () => {
    const d = readingAngleDifference([10, 20, NaN, 40], [12, 25, 30, NaN]);
    expect(d.frames).toBe(2);
    expect(d.meanDeg).toBeCloseTo(3.5, 12);
    expect(d.p95Deg).toBeCloseTo(2 + 0.95 * 3, 12);
    expect(readingAngleDifference([1, 2], [NaN, NaN]).frames).toBe(0);
  });

  it(`fails above ${MODEL_DISAGREEMENT_MAX_DEG}° mean with the number and both models; at or below, reports the number without failing`, () => {
    const reported = Float64Array.from({ length: F }, (_, f) => 20 + f);
    const plus = (x: number) => Float64Array.from(reported, (v) => v + x);
    const same = check(pts);
    const over = modelDisagreementCondition('elbow_flexion', 'left', reported, plus(MODEL_DISAGREEMENT_MAX_DEG + 1), same);
    expect(over.code).toBe('model_disagreement');
    expect(over.detail).toMatch(
      new RegExp(
        `^two 2D models disagree on this angle: MoveNet Lightning and MoveNet Thunder differ by ${MODEL_DISAGREEMENT_MAX_DEG + 1}\\.0° mean here \\(p95 ${MODEL_DISAGREEMENT_MAX_DEG + 1}\\.0°, ${F} frames`,
      ),
    );
    expect(over.detail).toContain(`limit ${MODEL_DISAGREEMENT_MAX_DEG}°`);
    const at8 = modelDisagreementCondition('elbow_flexion', 'left', reported, plus(-MODEL_DISAGREEMENT_MAX_DEG), same);
    expect(at8.code).toBe('model_difference');
    expect(at8.detail).toMatch(new RegExp(`differ by ${MODEL_DISAGREEMENT_MAX_DEG}\\.0° mean here .*within the ${MODEL_DISAGREEMENT_MAX_DEG}° limit`));
    expect(conditionsPass([at8])).toBe(true);
    expect(conditionsPass([over])).toBe(false);
    // only the reading's reported frames count: a 30° difference in frames it did not report is ignored
    const secondHalf = Float64Array.from(reported, (v, f) => (f < F / 2 ? v + 30 : v + 2));
    const late = Float64Array.from(reported, (v, f) => (f < F / 2 ? NaN : v));
    expect(modelDisagreementCondition('elbow_flexion', 'left', late, secondHalf, same).detail).toMatch(/differ by 2\.0° mean here .*20 frames/);
    expect(modelDisagreementCondition('elbow_flexion', 'left', reported, secondHalf, same).code).toBe('model_disagreement');
    // a second model with no value on the reading's frames: said (not_cross_checked, naming both), not hidden, and not failed
    const none = modelDisagreementCondition('elbow_flexion', 'left', reported, new Float64Array(F).fill(NaN), same);
    expect(none).toMatchObject({
      code: 'not_cross_checked',
      detail: expect.stringMatching(
        /^2D points from one model \(MoveNet Lightning\); no second model compared: MoveNet Thunder ran but has no value for this angle/,
      ),
    });
    expect(conditionsPass([none])).toBe(true);
    expect(crossCheckDegrees(none)).toBeNull();
    expect([over, at8].map(crossCheckDegrees)).toEqual([MODEL_DISAGREEMENT_MAX_DEG + 1, MODEL_DISAGREEMENT_MAX_DEG]);
    for (const c of [over, at8, none]) expect(c.detail.length).toBeLessThanOrEqual(500);
  });

  it('through buildPoseMetrics: a second model bending the left elbow 12° more fails left elbow flexion only; every other reading carries its (0°) difference', () => {
    const moved = bentElbow(12);
    const { rows } = buildPoseMetrics(pts, COCO17, { ...base, models: check(moved) });
    const el = reading(rows, 'elbow_flexion', 'left');
    expect(el.trustworthy).toBe(false);
    const c = el.conditions.find((x) => x.code === 'model_disagreement')!;
    expect(c.detail).toMatch(/differ by 12\.0° mean here \(p95 12\.0°, 40 frames; the joint they place furthest apart is the left wrist, \d+ mm\)/);
    const right = reading(rows, 'elbow_flexion', 'right');
    expect(right.trustworthy).toBe(true);
    expect(right.conditions.map((x) => x.code)).toEqual(['model_difference']);
    expect(right.conditions[0]!.detail).toMatch(/differ by 0\.0° mean here/);
    // a reading that does not use the wrist: unchanged and trustworthy
    expect(reading(rows, 'knee_flexion', 'left').conditions.map((x) => x.code)).toEqual(['model_difference']);
    // 6° more: reported beside the number, not failed
    const small = buildPoseMetrics(pts, COCO17, { ...base, models: check(bentElbow(6)) }).rows;
    const el6 = reading(small, 'elbow_flexion', 'left');
    expect(el6.trustworthy).toBe(true);
    expect(el6.conditions.find((x) => x.code === 'model_difference')?.detail).toMatch(/differ by 6\.0° mean here/);
    // without a second model: the reading says it was not cross-checked (informational: still trustworthy), with the reason given
    const alone = reading(buildPoseMetrics(pts, COCO17, base).rows, 'elbow_flexion', 'left');
    expect([alone.trustworthy, alone.conditions.map((x) => x.code)]).toEqual([true, ['not_cross_checked']]);
    expect(alone.conditions[0]!.detail).toMatch(/^2D points from one model; no second model compared: no second 2D model was run\./);
    const why = { primary: 'MoveNet Lightning', why: 'the second-model cross-check was turned off' };
    const off = buildPoseMetrics(pts, COCO17, { ...base, notCrossChecked: why }).rows;
    expect(reading(off, 'knee_flexion', 'right').conditions).toEqual([
      {
        code: 'not_cross_checked',
        detail: expect.stringMatching(
          /^2D points from one model \(MoveNet Lightning\); no second model compared: the second-model cross-check was turned off\./,
        ),
      },
    ]);
    // an omitted reading shows its reason, not a not-cross-checked note on a number it does not have
    expect(off.filter((r) => r.omitted_reason !== null).every((r) => !r.conditions.some((x) => x.code === 'not_cross_checked'))).toBe(true);
  });

  it("readingModelDistances (the detail's furthest joint) counts only the reported frames", () => {
    const far = check(bentElbow(12));
    const all = new Float64Array(F).fill(30);
    expect(readingModelDistances('elbow_flexion', 'left', all, far)[0]).toMatchObject({ keypoint: 'left_wrist', frames: F });
    expect(readingModelDistances('elbow_flexion', 'left', new Float64Array(F).fill(NaN), far)).toEqual([]);
  });
});

describe('camera imbalance', () => {
  it('flags the camera excluded far more often than the others, and the one reprojecting far worse', () => {
    const c = cameraConditions({ names: ['a', 'b', 'c'], excluded: [10, 400, 12], valid: [1000, 1000, 1000], residualPx: [3, 4, 20] });
    expect(c.map((x) => [x.code, x.detail.match(/camera (\w)/)?.[1]])).toEqual([
      ['camera_exclusion_imbalance', 'b'],
      ['reprojection_imbalance', 'c'],
    ]);
    expect(cameraConditions({ names: ['a', 'b', 'c'], excluded: [10, 20, 12], valid: [1000, 1000, 1000], residualPx: [3, 4, 5] })).toEqual([]);
  });
});

describe('synchronisation on a synthetic rig (3 and 4 cameras)', () => {
  for (const C of [3, 4]) {
    it(`finds a ${C}-camera rig in sync, then a camera 4 frames late, and aligns it`, () => {
      const cams = Array.from({ length: C }, (_, i) => ringCamera(`cam_0${i + 1}`, 20 + (i * 300) / C));
      const frames = syntheticMotion(120).map((a) => syntheticPose(a));
      const obs = projectFrames(cams, frames, 1, 3);
      const P = Float64Array.from(cams.flatMap(projectionMatrix));
      const K = frames[0]!.length;
      expect(estimateSync(obs, P, K, C).offsets).toEqual(new Array(C).fill(0));
      const late = new Array(C).fill(0);
      late[1] = 4;
      const shifted = applySyncOffsets(obs, K, C, late).observations; // camera 1's frame f shows f + 4
      const rep = estimateSync(shifted, P, K, C);
      expect(rep.offsets).toEqual(late.map((x) => (x ? -x : 0)));
      expect(rep.residualAtBestPx[1]!).toBeLessThan(SYNC_MAX_RATIO * rep.residualAtZeroPx[1]!);
    });
  }
  it('is not estimable with 2 cameras', () => {
    const cams = [ringCamera('a', 0), ringCamera('b', 90)];
    const frames = syntheticMotion(60).map((a) => syntheticPose(a));
    expect(estimateSync(projectFrames(cams, frames), Float64Array.from(cams.flatMap(projectionMatrix)), frames[0]!.length, 2).estimable).toBe(false);
  });
});

describe('cross-checked keypoints (two_view_keypoints)', () => {
  const F = 40,
    K = COCO17.length;
  const ALL = 0b1111; // 4 cameras
  /** A 4-camera trial where every point used all views, then `edit` changes some. */
  const support = (edit: (viewMask: Uint32Array, confident: Uint32Array) => void = () => {}): ViewSupport => {
    const viewMask = new Uint32Array(F * K).fill(ALL),
      confidentMask = new Uint32Array(F * K).fill(ALL);
    edit(viewMask, confidentMask);
    return { cameras: ['cam_01', 'cam_02', 'cam_03', 'cam_04'], keypoints: COCO17, viewMask, confidentMask };
  };
  const knee = COCO17.indexOf('left_knee');
  const reported = new Float64Array(F).fill(30);
  it('passes when every point of the angle was seen by 3 or more cameras, and up to 20 % of frames from two', () => {
    expect(crossCheckCondition('knee_flexion', 'left', reported, support())).toBeNull();
    const eight = support((m, conf) => {
      for (let f = 0; f < 8; f++) {
        m[f * K + knee] = 0b0011; // cam_03 and cam_04 did not see it (8 of 40 frames = 20 %)
        conf[f * K + knee] = 0b0011;
      }
    });
    expect(crossCheckCondition('knee_flexion', 'left', reported, eight)).toBeNull();
  });
  it('fails when more than 20 % of the reported frames rest on a two-view point, naming the point and the camera missing and why', () => {
    const s = support((m, conf) => {
      for (let f = 0; f < 12; f++) {
        m[f * K + knee] = 0b0011; // 12 of 40 frames = 30 %
        conf[f * K + knee] = 0b0111; // cam_04 unsure; cam_03 confident but excluded for disagreeing
        if (f < 4) conf[f * K + knee] = 0b0011;
      }
    });
    const c = crossCheckCondition('knee_flexion', 'left', reported, s)!;
    expect(c.code).toBe('two_view_keypoints');
    expect(Array.from(uncheckedFrames('knee_flexion', 'left', COCO17, s.viewMask))).toEqual(Array.from({ length: F }, (_, f) => (f < 12 ? 1 : 0)));
    expect(c.detail).toMatch(/^in 30 % of frames a point this angle uses was placed from only two cameras \(limit 20 %; left knee 30 %\)/);
    // cam_03 missed 12 times (8 excluded, 4 unsure), cam_04 12 times (unsure): the first worst camera is named
    expect(c.detail).toMatch(/most often cam_03, whose 2D point disagreed with the other cameras/);
    // the knee is not a point of the right side or of the arms
    expect(crossCheckCondition('knee_flexion', 'right', reported, s)).toBeNull();
    expect(crossCheckCondition('elbow_flexion', 'left', reported, s)).toBeNull();
    // hip flexion uses the knee too; the frames it did not report are not counted
    expect(crossCheckCondition('hip_flexion', 'left', reported, s)?.code).toBe('two_view_keypoints');
    const gated = Float64Array.from(reported, (x, f) => (f < 6 ? NaN : x)); // 6 of 34 reported frames = 18 %
    expect(crossCheckCondition('hip_flexion', 'left', gated, s)).toBeNull();
    // and it reaches the reading through readingConditions
    const seg = segmentLengths(Float64Array.from(syntheticMotion(F).flatMap((a) => syntheticPose(a).flat())), COCO17);
    expect(
      readingConditions('knee_flexion', 'left', { segments: seg, values: [10, 60], confidence: () => 0.9, views: { support: s, reported } }).map((x) => x.code),
    ).toEqual(['two_view_keypoints']);
  });
  it('counts a missing, gap-filled point as not cross-checked', () => {
    const s = support((m, conf) => {
      for (let f = 10; f < 20; f++) m[f * K + knee] = conf[f * K + knee] = 0; // seen by no camera in 10 frames, interpolated
    });
    expect(crossCheckCondition('knee_flexion', 'left', reported, s)!.detail).toMatch(/most often cam_01, which did not see it confidently/);
  });
  it('does not apply to a 2-camera rig (no point can be cross-checked there)', () => {
    const two: ViewSupport = {
      cameras: ['a', 'b'],
      keypoints: COCO17,
      viewMask: new Uint32Array(F * K).fill(3),
      confidentMask: new Uint32Array(F * K).fill(3),
    };
    expect(crossCheckCondition('knee_flexion', 'left', reported, two)).toBeNull();
  });
});

describe('who the athlete is (athlete_not_tapped)', () => {
  // a person: n keypoints at confidence `c`, the rest unseen (17 COCO points × [x, y, c])
  const person = (n: number, c = 0.9) => Float64Array.from(Array.from({ length: 17 }, (_, k) => (k < n ? [100 + k, 200 + k, c] : [0, 0, 0])).flat());

  it('counts people with ≥ MIN_PERSON_KEYPOINTS confident points: the most in any one frame of each camera', () => {
    const people = [
      [
        [person(17), person(MIN_PERSON_KEYPOINTS)],
        [person(17), person(17), person(17)],
      ], // cam 0: 2 in frame 0, 3 in frame 1: 3
      [[person(17), person(MIN_PERSON_KEYPOINTS - 1), person(17, 0.2)]], // cam 1: a 3-point fragment and a low-confidence figure are not people
      [[]],
    ];
    expect(peopleInView(people, 0.3)).toEqual([3, 1, 0]);
  });

  it('fails every reading only when nobody tapped and some camera sees more than one person', () => {
    expect(athleteNotTappedCondition(true, [3, 2], ['cam_01', 'cam_02'])).toBeNull();
    expect(athleteNotTappedCondition(false, [1, 1, 0], ['cam_01', 'cam_02', 'cam_03'])).toBeNull();
    const c = athleteNotTappedCondition(false, [1, 3, 2], ['cam_01', 'cam_02', 'cam_03'])!;
    expect(c.code).toBe('athlete_not_tapped');
    expect(c.detail).toMatch(/^more than one person is in view \(most in one frame: cam_02 3, cam_03 2\) and nobody tapped the athlete: .* Tap the athlete/);
    expect(conditionsPass([c])).toBe(false);
    expect(c.detail.length).toBeLessThanOrEqual(500);
  });
});

describe('the person followed stays the same (athlete_track_jump)', () => {
  // K = 2 keypoints (left, right hip), hips 0.3 m apart, the centre moving along x by `step(f)` metres
  const track = (xs: number[]) => Float64Array.from(xs.flatMap((x) => [x - 0.15, 0, 1, x + 0.15, 0, 1]));
  it('a sprint at 10 m/s (60 fps) passes; a 0.8 m jump between frames fails, naming the frames and the limit', () => {
    expect(trackJumpCondition(track(Array.from({ length: 60 }, (_, f) => (10 * f) / 60)), 2, [0, 1], 60)).toBeNull();
    const xs = Array.from({ length: 20 }, (_, f) => (f < 9 ? 0 : 0.8));
    const c = trackJumpCondition(track(xs), 2, [0, 1], 60)!;
    expect(c.code).toBe('athlete_track_jump');
    expect(c.detail).toMatch(/^the athlete's hip centre jumped 0\.80 m between frames 8 and 9 \(0\.02 s; 1 such jump; limit 0\.25 m \+ 12 m\/s\)/);
    expect(conditionsPass([c])).toBe(false);
  });
  it('frames without both hips are skipped and the allowance grows with the time between the frames compared', () => {
    const xs = Array.from({ length: 40 }, (_, f) => (f < 10 ? 0 : 0.8));
    const pts = track(xs);
    for (let f = 1; f < 10; f++) pts[f * 6] = NaN; // left hip unseen in frames 1..9: frame 0 is compared with frame 10 (1/6 s)
    const allowed = TRACK_JUMP_SLACK_M + (TRACK_MAX_SPEED_M_S * 10) / 60;
    expect(allowed).toBeGreaterThan(0.8);
    expect(trackJumpCondition(pts, 2, [0, 1], 60)).toBeNull();
  });
});
