import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PoseMetricInput } from '../../models/capture/metrics';
import { hasDistortion, projectionMatrix, undistortObservations } from '../../models/capture/camera';
import { estimateSync } from '../../models/capture/sync';
import { loadTomlCalibration } from './calibration';
import { hasAddon } from './native/index';
import { processTrial } from './pipeline';
import { DEFAULT_POSE } from './pose/types';
import { findVideos, probeVideos } from './sources';
import { cachedVideoPoses } from './testing/pose-cache';
import { addSecondPerson, inventLegs, jitterKeypoints, loseAthleteInView, misplaceHips, shiftCameraFiles, twoCameraTrial } from './testing/demo-cases';
import { BALANCING, DEMO_CALIB, hasBodyPix, hasDemo, MULTI, NO_DEMO, STATIC_TRIAL } from './testing/paths';

const ci = process.env.CI === 'true';
// keypoint-JSON input: every reading with a value also says not_cross_checked (no second model; asserted once below), left out here
// sync_unconfirmed (informational: the sync check's detection limit on this slow trial) is on every demo reading; its own test is below
const codes = (r: PoseMetricInput | undefined) => (r?.conditions ?? []).map((c) => c.code).filter((c) => c !== 'not_cross_checked' && c !== 'sync_unconfirmed');
const row = (rows: PoseMetricInput[], joint: string, side: string) => rows.find((x) => x.joint === joint && x.side === side && x.statistic === 'range');
const run = (trialDir: string, extra: Partial<Parameters<typeof processTrial>[0]> = {}) =>
  processTrial({ trialDir, calibPath: DEMO_CALIB, useTrialKeypoints: true, fps: 60, ...extra });

describe.skipIf(!hasDemo && !ci)(`trustworthy is earned per reading on real data (Pose2Sim demo${hasDemo ? '' : `: ${NO_DEMO}`})`, () => {
  it('the demo BalancingTrial as recorded: in sync, every flexion reading trustworthy with no failing condition', async () => {
    const r = await run(BALANCING);
    expect(r.sync?.offsets).toEqual([0, 0, 0, 0]);
    expect(r.trialConditions.map((c) => c.code)).toEqual(['sync_unconfirmed']);
    for (const m of r.rows.filter((x) => x.joint.endsWith('flexion') || x.joint === 'ankle_dorsiflexion'))
      expect([m.joint, m.side, m.trustworthy, codes(m)]).toEqual([m.joint, m.side, true, []]);
    // the OpenPose hip points tilt the hip line by up to ±20° in this trial: pelvic obliquity is flagged, not reported as trustworthy
    expect(codes(row(r.rows, 'pelvic_obliquity', 'left'))).toEqual(['implausible_range']);
    // every reading's points were cross-checked by ≥ 3 cameras in ≥ 86 % of its frames (worst: right ankle dorsiflexion)
    for (const m of r.rows) expect(codes(m)).not.toContain('two_view_keypoints');
    // no second 2D model looked at keypoint files: each reading with a value says so, informationally (still trustworthy)
    for (const m of r.rows.filter((x) => x.value_deg !== null))
      expect(m.conditions.filter((c) => c.code === 'not_cross_checked').map((c) => c.detail)).toEqual([
        expect.stringMatching(/^2D points from one model \(the keypoint files\); no second model compared: the 2D came from keypoint files/),
      ]);
  });

  it('the athlete lost in one camera for 50 frames: leg readings resting on two-camera points fail two_view_keypoints; the sync check still runs on the other 50 frames', async () => {
    const [clean, lost] = [await run(BALANCING), await run(loseAthleteInView(BALANCING, 'cam01_json', 20, 69))];
    // the camera checks do not notice a camera that simply sees nobody; with cam_01 blind for half the trial the sync check still has
    // ≥ 50 usable point pairs for it in the other half (with the noise-following agreement bound; with the fixed 10 px it had fewer: sync_unchecked)
    expect(lost.sync?.estimable).toBe(true);
    expect(lost.sync?.offsets).toEqual([0, 0, 0, 0]);
    expect(lost.trialConditions.map((c) => c.code)).toEqual(['sync_unconfirmed']);
    for (const joint of ['hip_flexion', 'knee_flexion']) {
      const m = row(lost.rows, joint, 'left')!;
      expect([joint, m.trustworthy, codes(m)]).toEqual([joint, false, ['two_view_keypoints']]);
      expect(m.conditions.find((c) => c.code === 'two_view_keypoints')!.detail).toMatch(
        /^in \d+ % of frames a point this angle uses was placed from only two cameras \(limit 20 %; left knee \d+ %.*most often cam_01, which did not see it confidently/,
      );
    }
    // the left arm's points kept three views: no failing condition
    for (const joint of ['shoulder_flexion', 'elbow_flexion'])
      expect([joint, row(lost.rows, joint, 'left')!.trustworthy, codes(row(lost.rows, joint, 'left'))]).toEqual([joint, true, []]);
    // and the flag is earned: left hip flexion moved by several degrees from the clean trial's in those frames
    const a = lost.outcomes.find((o) => o.series.joint === 'hip_flexion' && o.series.side === 'left')!,
      b = clean.outcomes.find((o) => o.series.joint === 'hip_flexion' && o.series.side === 'left')!;
    const d = Array.from(a.perFrame, (x, f) => Math.abs(x - b.perFrame[f]!)).filter(Number.isFinite);
    expect(Math.max(...d)).toBeGreaterThan(15);
  });

  it('one camera whose JSON files are shifted by 5 frames: its offset is found, every reading is flagged camera_offset', async () => {
    const r = await run(shiftCameraFiles(BALANCING, 'cam02_json', 5));
    expect(r.frames).toBe(100);
    expect(r.sync?.offsets).toEqual([0, -5, 0, 0]);
    expect(r.sync?.applied).toBe(false);
    for (const m of r.rows) {
      expect(m.trustworthy).toBe(false);
      expect(codes(m)).toContain('camera_offset');
    }
    expect(r.trialConditions[0]!.detail).toMatch(/cam_02 by 5 frames/);
  });

  it('with --sync auto the offset is corrected as Pose2Sim does: frames shifted and trimmed, readings back to the in-sync trial', async () => {
    const [clean, fixed] = [await run(BALANCING), await run(shiftCameraFiles(BALANCING, 'cam02_json', 5), { sync: 'auto' })];
    expect(fixed.sync).toMatchObject({ offsets: [0, -5, 0, 0], applied: true, firstFrame: 5 });
    expect(fixed.frames).toBe(95);
    // cam_02 is excluded as rarely as in the clean trial (49 of its views there), not 400+ times
    expect(fixed.triangulation.excludedCounts[1]).toBeLessThan(60);
    for (const m of fixed.rows) expect(codes(m)).toContain('camera_offset_corrected');
    for (const m of fixed.rows.filter((x) => x.joint.endsWith('flexion')))
      expect([m.joint, m.side, m.trustworthy, codes(m)]).toEqual([m.joint, m.side, true, ['camera_offset_corrected']]);
    // mean angles agree with the clean trial's within 3° (range and peak differ: 5 frames trimmed)
    for (const m of fixed.rows.filter((x) => x.statistic === 'mean' && x.value_deg !== null)) {
      const c = clean.rows.find((x) => x.joint === m.joint && x.side === m.side && x.statistic === 'mean')!;
      expect(Math.abs(m.value_deg! - c.value_deg!)).toBeLessThan(3);
    }
  });

  it('--sync auto on a 2-frame shift (cam_03 2 frames ahead): found within ±1 frame (3), corrected and confirmed; readings as in the in-step trial', async () => {
    // before issue 14's second review the estimator "corrected" this by 5 (every point compared, the curve flat): now only fast, smooth, agreed points are
    const [clean, r] = [await run(BALANCING), await run(shiftCameraFiles(BALANCING, 'cam03_json', -2), { sync: 'auto' })];
    expect(r.sync).toMatchObject({ offsets: [0, 0, 3, 0], applied: true });
    expect(r.trialConditions.map((c) => c.code)).toEqual(['camera_offset_corrected', 'sync_unconfirmed']);
    const trusted = (x: typeof r) => x.rows.filter((m) => m.trustworthy).length;
    expect(trusted(r)).toBe(trusted(clean));
  });

  it('a check with too few usable point pairs did not run (issue 14 re-review B1): cam_03 5 frames out, trimmed to the common span, first 30 frames → sync_unchecked, none trustworthy (was 18/18)', async () => {
    const r = await run(shiftCameraFiles(BALANCING, 'cam03_json', 5, true), { maxFrames: 30 });
    expect(r.sync?.estimable).toBe(false);
    expect(r.trialConditions.map((c) => c.code)).toContain('sync_unchecked');
    expect(r.trialConditions.find((c) => c.code === 'sync_unchecked')!.detail).toMatch(
      /≥ 50 moving, confidently detected point-frames per camera .* had fewer in this 30-frame trial/,
    );
    for (const m of r.rows) expect([m.joint, m.side, m.trustworthy, codes(m)]).toEqual([m.joint, m.side, false, expect.arrayContaining(['sync_unchecked'])]);
    // the in-step 100-frame trial is still checked: 15 of 18 readings trustworthy
    const clean = await run(BALANCING);
    expect(clean.sync?.estimable).toBe(true);
    expect(new Set(clean.rows.filter((m) => m.trustworthy).map((m) => `${m.joint}/${m.side}`)).size).toBe(15);
  });

  it('--sync auto whose corrected camera cannot be re-checked is not confirmed (issue 14 re-review B2): cam_01 10 frames out, trimmed, first 45 frames → camera_offset, none trustworthy (the 100-frame trial is now corrected by −11 and confirmed)', async () => {
    const r = await run(shiftCameraFiles(BALANCING, 'cam01_json', 10, true), { sync: 'auto', maxFrames: 45 });
    expect(r.sync?.applied).toBe(true);
    expect(r.sync?.ambiguousLags[0]).toBeNull();
    expect(r.trialConditions.map((c) => c.code)).toContain('camera_offset');
    expect(r.trialConditions.find((c) => c.code === 'camera_offset')!.detail).toMatch(
      /cam_01's correction not confirmed: after shifting it by -?\d+, the check could not pin its timing/,
    );
    for (const m of r.rows) expect([m.joint, m.side, m.trustworthy, codes(m)]).toEqual([m.joint, m.side, false, expect.arrayContaining(['camera_offset'])]);
  });

  it("the check's detection limit on the in-step demo (±1 frame resolution; cam_03's curve the flattest): stated on every reading (sync_unconfirmed, informational); 2- and 5-frame shifts are found", async () => {
    const clean = await run(BALANCING);
    const limit = clean.trialConditions.find((c) => c.code === 'sync_unconfirmed')!;
    // in step: the recording's own timing puts cam_01's best fit 1 frame early and cam_03's 1–2 frames late (under the ±1-frame resolution for cam_01; cam_03 within its limit)
    // (with the fixed 10-px agreement bound: 2, 2, 4, 2; the noise-following bound admits more of cam_02's points: 1)
    expect(clean.sync?.detectableFrames).toEqual([2, 1, 4, 2]);
    expect(limit.detail).toMatch(/cam_03: offsets under 4 frames \(67 ms\) would not be found; its best fit is 1 to 2 frames off/);
    for (const m of clean.rows) expect(m.conditions.map((x) => x.code)).toContain('sync_unconfirmed');
    // before issue 14's second review neither of these was found (both [0, 0, 0, 0])
    for (const [cam, shift, found] of [
      ['cam03_json', 5, [0, 0, -4, 0]],
      ['cam02_json', 2, [0, -2, 0, 0]],
    ] as const) {
      const r = await run(shiftCameraFiles(BALANCING, cam, shift));
      expect(r.sync?.offsets).toEqual(found);
      for (const m of r.rows) expect([m.trustworthy, codes(m)]).toEqual([false, expect.arrayContaining(['camera_offset'])]);
    }
  });

  it('the sync check is symmetric and camera-independent (issue 14 review): any one camera 3, 5 or 8 frames early or late is found within ±1 frame', async () => {
    // the in-step trial's 2D once; camera c's frames shifted in memory exactly as shiftCameraFiles shifts its files (frame f holds f + s, nobody beyond the ends)
    const r = await run(BALANCING, { sync: 'off' });
    const C = r.cameras.length,
      K = r.keypointSet.length,
      F = r.frames;
    const ideal = r.cameras.some(hasDistortion) ? undistortObservations(r.observations, r.cameras) : r.observations;
    const P = new Float64Array(C * 12);
    r.cameras.forEach((c, i) => P.set(projectionMatrix(c), i * 12));
    const shifted = (cam: number, s: number) => {
      const o = Float64Array.from(ideal);
      for (let f = 0; f < F; f++)
        for (let k = 0; k < K; k++) {
          const d = ((f * K + k) * C + cam) * 3,
            g = f + s;
          const src = ((g * K + k) * C + cam) * 3;
          const inside = g >= 0 && g < F;
          o[d] = inside ? ideal[src]! : NaN;
          o[d + 1] = inside ? ideal[src + 1]! : NaN;
          o[d + 2] = inside ? ideal[src + 2]! : 0;
        }
      return o;
    };
    expect(estimateSync(ideal, P, K, C).offsets).toEqual([0, 0, 0, 0]);
    const missed: string[] = [];
    for (let c = 0; c < C; c++)
      for (const s of [-8, -5, -3, 3, 5, 8]) {
        const off = estimateSync(shifted(c, s), P, K, C).offsets;
        // file i holding frame i + s: the camera's frame f + (−s) shows what the others show at f
        if (!(Math.abs(off[c]! + s) <= 1 && off.every((x, i) => i === c || x === 0))) missed.push(`${r.cameras[c]!.name} ${s}: ${off.join('/')}`);
      }
    // before the fix (every point compared, any best lag ≠ 0 taken): 11 of 24 missed or mislocated (cam_01 −3/−5/−8, cam_03 all six, cam_04 ±3)
    expect(missed).toEqual([]);
  });

  it('invented legs (a person whose legs the 2D model guesses): leg readings fail with the segment, range and confidence conditions; arms fail only sync_unchecked', async () => {
    const r = await run(inventLegs(BALANCING));
    for (const side of ['left', 'right']) {
      const knee = row(r.rows, 'knee_flexion', side)!;
      expect(knee.trustworthy).toBe(false);
      expect(codes(knee)).toEqual(expect.arrayContaining(['segment_length_unstable', 'low_2d_confidence', 'implausible_range']));
      expect(codes(row(r.rows, 'hip_flexion', side))).toEqual(expect.arrayContaining(['segment_asymmetry', 'low_2d_confidence']));
      // the invented legs leave cam_01 and cam_02 < 50 usable sync pairs: timing unchecked (issue 14 re-review B1), the arms' only condition
      expect(codes(row(r.rows, 'elbow_flexion', side))).toEqual(['sync_unchecked']);
      expect(codes(row(r.rows, 'shoulder_flexion', side))).toEqual(['sync_unchecked']);
    }
    expect(row(r.rows, 'knee_flexion', 'left')!.conditions.find((c) => c.code === 'low_2d_confidence')!.detail).toMatch(/left knee \(0\.35\)/);
  });

  it('hip points misplaced the way a second 2D model placed them (hip line turned ≤ 40° against the shoulders): hip-based readings flagged hip_centres_implausible, arms not', async () => {
    const [clean, moved] = [await run(BALANCING), await run(misplaceHips(BALANCING, DEMO_CALIB, 40))];
    // triangulation accepts the moved hips (they are consistent between views): nothing else notices
    expect(moved.trialConditions.map((c) => c.code)).toEqual(['sync_unconfirmed']);
    expect(moved.triangulation.excludedCounts[1]).toBeLessThan(clean.triangulation.excludedCounts[1]! + 20);
    for (const side of ['left', 'right']) {
      for (const joint of ['hip_flexion', 'knee_flexion', 'hip_abduction', 'knee_frontal_projection_angle']) {
        expect(codes(row(clean.rows, joint, side))).not.toContain('hip_centres_implausible');
        const m = row(moved.rows, joint, side)!;
        expect([joint, side, m.trustworthy, codes(m)]).toEqual([joint, side, false, expect.arrayContaining(['hip_centres_implausible'])]);
      }
      for (const joint of ['shoulder_flexion', 'elbow_flexion']) {
        expect(codes(row(moved.rows, joint, side))).not.toContain('hip_centres_implausible');
        expect(row(moved.rows, joint, side)!.trustworthy).toBe(true);
      }
    }
    expect(row(moved.rows, 'hip_flexion', 'left')!.conditions.find((c) => c.code === 'hip_centres_implausible')!.detail).toMatch(
      /hip line turned \d+° against the shoulder line \(95th percentile; max \d+°; limit 30°\)/,
    );
  });

  it('the multi-person trial without a tap (issue 14): points outside the image are unseen, and the frozen person found is not trustworthy (frozen_keypoints)', async () => {
    const r = await run(MULTI);
    // the auto-selected person reaches x = −47 px in cam_01 with confidence 1.00: 300 points beyond the 16-px margin, none elsewhere
    expect(r.outOfImage).toEqual([300, 0, 0, 0]);
    const K = r.keypointSet.length;
    const lhip = r.keypointSet.indexOf('left_hip');
    expect(r.observations[((0 * K + lhip) * 4 + 0) * 3 + 2]).toBe(0);
    // before issue 14's review: hip flexion 81.5° and knee flexion 146.1° (range 0.0) trustworthy
    for (const side of ['left', 'right'])
      for (const joint of ['hip_flexion', 'knee_flexion', 'elbow_flexion', 'hip_abduction', 'knee_frontal_projection_angle']) {
        const m = row(r.rows, joint, side)!;
        expect([joint, side, m.trustworthy, codes(m)]).toEqual([joint, side, false, expect.arrayContaining(['frozen_keypoints'])]);
      }
    expect(row(r.rows, 'knee_flexion', 'left')!.conditions.find((c) => c.code === 'frozen_keypoints')!.detail).toMatch(
      /^the left thigh and shank lengths varied by only 0\.0\d % and 0\.0\d % over 100 frames before filtering/,
    );
    // the in-sync BalancingTrial's raw segments vary 3.8–10 %: nothing frozen there (first test); invented legs (jittered ±60 px) are not rigid,
    // but their made-up confidence (0.35 in every frame and view) is flat: their leg readings are frozen_keypoints, the arms are not
    const invented = await run(inventLegs(BALANCING));
    for (const m of invented.rows.filter((x) => x.joint === 'elbow_flexion')) expect(codes(m)).not.toContain('frozen_keypoints');
    expect(row(invented.rows, 'knee_flexion', 'left')!.conditions.find((c) => c.code === 'frozen_keypoints')!.detail).toMatch(
      /^the 2D confidence of left knee \(0\.35 ± 0\.000\), left ankle \(0\.35 ± 0\.000\) was the same/,
    );
  });

  it('the frozen figure given 0.7 px Gaussian jitter (issue 14 review): its legs still fail frozen_keypoints, by their constant 2D confidence; the genuine trial passes', async () => {
    const r = await run(jitterKeypoints(MULTI, 0.7));
    for (const side of ['left', 'right'])
      for (const joint of ['hip_flexion', 'knee_flexion']) {
        const m = row(r.rows, joint, side)!;
        expect([joint, side, m.trustworthy, codes(m)]).toEqual([joint, side, false, expect.arrayContaining(['frozen_keypoints'])]);
      }
    // the jitter lifts the raw thigh CV above the segment bound (0.5 %): only the confidence pattern gives it away
    expect(row(r.rows, 'knee_flexion', 'left')!.conditions.find((c) => c.code === 'frozen_keypoints')!.detail).toMatch(
      /^the 2D confidence of left hip \(1\.00 ± 0\.000\), left knee \(1\.00 ± 0\.000\), left ankle \(1\.00 ± 0\.000\) was the same in every frame and view/,
    );
    for (const m of (await run(BALANCING)).rows) expect(codes(m)).not.toContain('frozen_keypoints');
  });

  it('no tap with more than one person in view (issue 14 re-review B3): every reading fails athlete_not_tapped, even when the frozen figure is given pixel and confidence noise; a tap clears it', async () => {
    // the frozen figure with 0.7 px position noise and 0.05 confidence noise: both frozen_keypoints tests are defeated
    const r = await run(jitterKeypoints(MULTI, 0.7, 3, 0.05));
    const c = r.trialConditions.find((x) => x.code === 'athlete_not_tapped');
    expect(c?.detail).toMatch(/^more than one person is in view \(most in one frame: cam_01 2, cam_02 2, cam_03 2, cam_04 2\) and nobody tapped the athlete/);
    for (const m of r.rows)
      expect([m.joint, m.side, m.trustworthy, codes(m)]).toEqual([m.joint, m.side, false, expect.arrayContaining(['athlete_not_tapped'])]);
    expect(codes(row(r.rows, 'knee_flexion', 'left'))).not.toContain('frozen_keypoints');
    // the same person tapped (cam_01, the figure's box centre): no athlete_not_tapped; the figure as recorded is still frozen_keypoints
    const tapped = await run(MULTI, { tap: { camera: 'cam_01', x: 60, y: 628 } });
    expect(tapped.trialConditions.map((x) => x.code)).not.toContain('athlete_not_tapped');
    expect(codes(row(tapped.rows, 'knee_flexion', 'left'))).toContain('frozen_keypoints');
    // one person in every view (the BalancingTrial's associated points): nothing to confirm
    expect((await run(BALANCING)).trialConditions.map((x) => x.code)).not.toContain('athlete_not_tapped');
  });

  it('a second person 0.9 m from the tapped athlete (issue 14 re-review B1): when the track switches to them, every reading fails athlete_track_jump', async () => {
    const trial = addSecondPerson(BALANCING, DEMO_CALIB, [-0.9, 0, 0]);
    const r = await run(trial, { tap: { camera: 'cam_01', x: 418, y: 744 } });
    // measured: the track leaves the athlete at frame 9 (a stray cam_01 nose point at x = 0 moved the athlete's box) — before, all 15 flexion readings trustworthy
    const c = r.trialConditions.find((x) => x.code === 'athlete_track_jump');
    expect(c?.detail).toMatch(/^the athlete's hip centre jumped 0\.\d\d m between frames 8 and 9 \(0\.02 s; 1 such jump; limit 0\.25 m \+ 12 m\/s\)/);
    for (const m of r.rows) expect([m.joint, m.side, m.trustworthy]).toEqual([m.joint, m.side, false]);
    // the athlete alone: no jump (frame-to-frame hip-centre moves stay under the bound)
    expect((await run(BALANCING)).trialConditions.map((x) => x.code)).not.toContain('athlete_track_jump');
  });

  it('a 2-camera rig (the geometric sync check needs 3) without timestamps: every reading fails sync_unchecked, in step or 5 frames out', async () => {
    const runTwo = (shift: number) => {
      const t = twoCameraTrial(BALANCING, DEMO_CALIB, shift);
      return processTrial({ trialDir: t.trialDir, calibPath: t.calibPath, useTrialKeypoints: true, fps: 60 });
    };
    const [inStep, out] = [await runTwo(0), await runTwo(5)];
    for (const r of [inStep, out]) {
      expect(r.sync?.estimable).toBe(false);
      expect(r.trialConditions.map((c) => c.code)).toContain('sync_unchecked');
      for (const m of r.rows) expect([m.joint, m.side, m.trustworthy, codes(m)]).toEqual([m.joint, m.side, false, expect.arrayContaining(['sync_unchecked'])]);
    }
    expect(out.trialConditions.find((c) => c.code === 'sync_unchecked')!.detail).toMatch(
      /needs ≥ 3 calibrated cameras .* this rig has 2, and the recording has no timestamp files/,
    );
    // what it hides: right hip flexion's range moves by > 10° with cam_02 5 frames out (measured 49.6° → 63.8°)
    expect(Math.abs(row(out.rows, 'hip_flexion', 'right')!.value_deg! - row(inStep.rows, 'hip_flexion', 'right')!.value_deg!)).toBeGreaterThan(10);
  });

  it('static is measured, not inferred from a short clip (issue 14 review): short clips that move are not exempt from frozen_keypoints or sync_unchecked', async () => {
    // the multi-person trial's frozen figure over 20 frames at 60 fps, and all 100 frames at 240 fps (both < 0.5 s): it translates 3–5 cm
    for (const extra of [{ maxFrames: 20 }, { fps: 240 }]) {
      const r = await run(MULTI, extra);
      expect(r.trialConditions.map((c) => c.code)).not.toContain('static_trial');
      for (const side of ['left', 'right'])
        for (const joint of ['hip_flexion', 'knee_flexion']) {
          const m = row(r.rows, joint, side)!;
          expect([joint, side, m.trustworthy, codes(m)]).toEqual([joint, side, false, expect.arrayContaining(['frozen_keypoints'])]);
        }
    }
    // the BalancingTrial's first 29 frames with the sync check off: the athlete moves (right foot 0.6 m), timing is unchecked
    const bal = await run(BALANCING, { maxFrames: 29, sync: 'off' });
    expect(bal.trialConditions.map((c) => c.code)).toEqual(['sync_unchecked']);
    for (const m of bal.rows) expect([m.joint, m.side, m.trustworthy, codes(m)]).toEqual([m.joint, m.side, false, expect.arrayContaining(['sync_unchecked'])]);
    // a 2-camera rig with cam_02 8 frames out, 25 frames: sync_unchecked, not a static trial
    const t = twoCameraTrial(BALANCING, DEMO_CALIB, 8);
    const two = await processTrial({ trialDir: t.trialDir, calibPath: t.calibPath, useTrialKeypoints: true, fps: 60, maxFrames: 25 });
    expect(two.trialConditions.map((c) => c.code)).toContain('sync_unchecked');
    expect(two.trialConditions.map((c) => c.code)).not.toContain('static_trial');
    for (const m of two.rows) expect(m.trustworthy).toBe(false);
  });

  it('a moving trial too short to filter (≤ 9 frames) says so (short_trial_unfiltered); one frame is never a static trial (issue 15 review minors)', async () => {
    // the BalancingTrial's first 8 frames: the athlete moves, and nothing said the values were unfiltered
    const short = await run(BALANCING, { maxFrames: 8, sync: 'off' });
    const c = short.trialConditions.find((x) => x.code === 'short_trial_unfiltered');
    expect(c?.detail).toMatch(
      /^a trial of 8 frames \(0\.13 s\) that is not a held posture \(a keypoint moved up to \d+\.\d cm .*needs more than 9 frames, so values are unfiltered/,
    );
    expect(short.trialConditions.map((x) => x.code)).not.toContain('static_trial');
    for (const m of short.rows.filter((x) => x.value_deg !== null)) expect(m.conditions.map((x) => x.code)).toContain('short_trial_unfiltered');
    // one frame: neither static nor filtered
    const one = await run(STATIC_TRIAL, { maxFrames: 1 });
    expect(one.trialConditions.map((x) => x.code)).not.toContain('static_trial');
    expect(one.trialConditions.find((x) => x.code === 'short_trial_unfiltered')?.detail).toMatch(
      /^a trial of 1 frame \(0\.02 s\) \(one frame shows a pose, not whether it was held\)/,
    );
    // a 10-frame trial is filtered: nothing to say
    expect((await run(BALANCING, { maxFrames: 10, sync: 'off' })).trialConditions.map((x) => x.code)).not.toContain('short_trial_unfiltered');
  });

  it('the static trial (12 frames) is reported as static and unfiltered', async () => {
    const r = await processTrial({ trialDir: STATIC_TRIAL, calibPath: DEMO_CALIB, useTrialKeypoints: true });
    expect(r.frames).toBe(12);
    expect(r.trialConditions.map((c) => c.code)).toEqual(['static_trial']);
    expect(r.trialConditions[0]!.detail).toMatch(
      /12 frames \(0\.20 s\) in which every keypoint stayed within 0\.0 cm of its median position \(limit 2 cm\): too short for the zero-lag filter, so values are unfiltered/,
    );
    expect(r.rows.every((m) => codes(m).includes('static_trial'))).toBe(true);
  });
});

// The default 2D model's poses of the demo videos (MoveNet Lightning, 100 frames × 4 cameras): computed on the first run (≈ 45 s on 2 idle
// cores) and kept in the temp dir for later runs (testing/pose-cache.ts: recomputed when the videos differ).
const VIDEO_2D_CACHE = process.env.CAPTURE_2D_CACHE ?? path.join(tmpdir(), 'athlete-capture-2d');

describe.skipIf((!hasDemo || !hasBodyPix || !hasAddon('opencv')) && !ci)(
  `the sync check from video (Pose2Sim demo videos, default 2D model${hasDemo ? '' : `: ${NO_DEMO}`})`,
  () => {
    it('runs on the default 2D model (issue 14 re-review): in step → estimable, no offset; cam_02 5 frames ahead → camera_offset found within ±1, and --sync auto corrects it (before: estimable false, every reading sync_unchecked, the shift not found)', async () => {
      const videos = probeVideos(loadTomlCalibration(DEMO_CALIB), findVideos(BALANCING));
      const { people } = await cachedVideoPoses(videos, 100, 'movenet', DEFAULT_POSE, VIDEO_2D_CACHE);
      const proc = (primary: typeof people, sync: 'check' | 'auto' = 'check') =>
        processTrial({
          trialDir: BALANCING,
          calibPath: DEMO_CALIB,
          pose: DEFAULT_POSE,
          maxFrames: 100,
          precomputed: { primary },
          tap: { camera: 'cam_01', x: 418, y: 744 },
          sync,
        });
      const clean = await proc(people);
      expect(clean.sync?.estimable).toBe(true);
      expect(clean.sync?.offsets).toEqual([0, 0, 0, 0]);
      const cleanCodes = clean.trialConditions.map((c) => c.code);
      expect(cleanCodes).not.toContain('sync_unchecked');
      expect(cleanCodes).not.toContain('camera_offset');
      // cam_02's frame i holds frame i + 5 (a camera that started 5 frames late; nobody in its last 5 frames), as shiftCameraFiles shifts files
      const shifted = people.map((cam, c) => (c === 1 ? cam.map((_, f) => cam[f + 5] ?? []) : cam));
      const r = await proc(shifted);
      expect(r.sync?.estimable).toBe(true);
      const off = r.sync!.offsets;
      expect([Math.abs(off[1]! + 5) <= 1, off[0], off[2], off[3]]).toEqual([true, 0, 0, 0]);
      expect(r.trialConditions.map((c) => c.code)).toContain('camera_offset');
      for (const m of r.rows.filter((x) => x.value_deg !== null))
        expect([m.joint, m.side, m.trustworthy, m.conditions.map((c) => c.code)]).toEqual([m.joint, m.side, false, expect.arrayContaining(['camera_offset'])]);
      // --sync auto corrects it and the corrected trial checks out: the readings trustworthy in step are trustworthy again
      const fixed = await proc(shifted, 'auto');
      expect(fixed.trialConditions.map((c) => c.code)).toContain('camera_offset_corrected');
      expect(fixed.trialConditions.map((c) => c.code)).not.toContain('camera_offset');
      const trusted = (x: typeof clean) => x.rows.filter((m) => m.trustworthy).map((m) => `${m.joint}/${m.side}/${m.statistic}`);
      expect(trusted(clean).length).toBeGreaterThan(0);
      expect(trusted(fixed)).toEqual(trusted(clean));
    }, 600_000);
  },
);
