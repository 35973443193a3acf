/**
 * The second-model cross-check (`model_disagreement`, models/capture/quality.ts) on the Pose2Sim demo
 * BalancingTrial: MoveNet Lightning (default) cross-checked by BlazePose Full on the same frames.
 */
import { describe, expect, it } from 'vitest';
import type { PoseMetricInput } from '../../models/capture/metrics';
import { MODEL_DISAGREEMENT_MAX_MM, readingModelDistances, type ModelCrossCheck } from '../../models/capture/quality';
import { CaptureInputError } from './errors';
import { hasAddon } from './native/index';
import { processTrial, type ProcessResult } from './pipeline';
import { BALANCING, DEMO_CALIB, hasBodyPix, hasDemo, NO_DEMO } from './testing/paths';

const ci = process.env.CI === 'true';
const row = (rows: PoseMetricInput[], joint: string, side: string) => rows.find((x) => x.joint === joint && x.side === side && x.statistic === 'range')!;
const worst = (r: ProcessResult, joint: string, side: 'left' | 'right') => {
  const x: ModelCrossCheck = {
    primary: '',
    secondary: '',
    primarySet: r.keypointSet,
    primaryPoints: r.filtered,
    secondarySet: r.crossCheck!.keypointSet,
    secondaryPoints: r.crossCheck!.filtered,
  };
  const o = r.outcomes.find((y) => y.series.joint === joint && y.series.side === side)!;
  return readingModelDistances(o.series.joint, side, o.perFrame, x)[0]!;
};

describe.skipIf(!hasDemo && !ci)(`cross-check input rules${hasDemo ? '' : ` (${NO_DEMO})`}`, () => {
  it('refuses a cross-check on keypoint JSON (it runs a second model on the videos)', async () => {
    const p = processTrial({ trialDir: BALANCING, calibPath: DEMO_CALIB, useTrialKeypoints: true, fps: 60, crossCheck: { kind: 'blazepose' } });
    await expect(p).rejects.toBeInstanceOf(CaptureInputError);
    await expect(p).rejects.toMatchObject({ kind: 'bad_argument', message: expect.stringMatching(/--cross-check runs a second 2D model on the videos/) });
  });
});

describe.skipIf((!hasDemo || !hasBodyPix || !hasAddon('opencv')) && !ci)(
  `MoveNet cross-checked by BlazePose on the demo video (40 frames)${hasDemo ? '' : ` (${NO_DEMO})`}`,
  () => {
    it('the left shoulder reading fails model_disagreement by a clear margin, naming joint, mm and both models; the left elbow, where the models agree, does not', async () => {
      const r = await processTrial({ trialDir: BALANCING, calibPath: DEMO_CALIB, maxFrames: 40, crossCheck: { kind: 'blazepose', variant: 'full' } });
      expect(r.crossCheck?.model).toBe('BlazePose Full');
      expect(r.cameraMode).toMatch(/2D from MoveNet Lightning \(cross-checked by BlazePose Full\)/);
      const sh = row(r.rows, 'shoulder_flexion', 'left');
      expect(sh.trustworthy).toBe(false);
      const c = sh.conditions.find((x) => x.code === 'model_disagreement')!;
      expect(c.detail).toMatch(
        new RegExp(
          `^two 2D models disagree .*: MoveNet Lightning and BlazePose Full place the [a-z ]+ \\d+ mm.* apart \\(median 3D distance .*limit ${MODEL_DISAGREEMENT_MAX_MM} mm\\)`,
        ),
      );
      // measured 81 mm (the right hip of the thorax/pelvis frame) against the 60 mm bound
      const w = worst(r, 'shoulder_flexion', 'left');
      expect(w.medianMm).toBeGreaterThan(1.25 * MODEL_DISAGREEMENT_MAX_MM);
      expect(c.detail).toContain(`${w.keypoint.replace(/_/g, ' ')} ${Math.round(w.medianMm)} mm`);
      // the left elbow angle's three points: measured 42 mm at most, no model_disagreement
      const el = row(r.rows, 'elbow_flexion', 'left');
      expect(el.conditions.map((x) => x.code)).not.toContain('model_disagreement');
      expect(worst(r, 'elbow_flexion', 'left').medianMm).toBeLessThan(0.8 * MODEL_DISAGREEMENT_MAX_MM);
      // no reading lists a condition code twice
      for (const m of r.rows) expect(new Set(m.conditions.map((x) => x.code)).size).toBe(m.conditions.length);
    }, 900_000);
  },
);
