import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BLAZEPOSE33 } from '../../../models/capture/keypoints';
import { parseTrc } from '../../../models/capture/trc';
import { median } from '../../../models/capture/vec';
import { hasAddon } from '../native/index';
import { processTrial } from '../pipeline';
import { BALANCING, DEMO_CALIB, hasBodyPix, hasDemo, NO_DEMO } from '../testing/paths';
import { fromRoi, rotatedCrop, type Roi } from './blazepose';

const ci = process.env.CI === 'true';

describe('BlazePose ROI geometry', () => {
  it('a rotated crop and fromRoi are inverse: a bright spot in the frame maps back to itself at 0°, 90° and 30°', () => {
    const W = 200,
      H = 300;
    const data = new Uint8Array(W * H * 3);
    for (let y = 78; y <= 82; y++) for (let x = 118; x <= 122; x++) data.fill(255, (y * W + x) * 3, (y * W + x) * 3 + 3);
    const frame = { data, width: W, height: H, channels: 3 };
    for (const angle of [0, Math.PI / 2, Math.PI / 6]) {
      const roi: Roi = { cx: 100, cy: 110, side: 160, angle };
      const S = 64;
      const crop = rotatedCrop(frame, roi, S);
      let sx = 0,
        sy = 0,
        sw = 0;
      for (let i = 0; i < S; i++)
        for (let j = 0; j < S; j++) {
          const v = crop[(i * S + j) * 3]!;
          sx += v * (j + 0.5);
          sy += v * (i + 0.5);
          sw += v;
        }
      expect(sw).toBeGreaterThan(0);
      const [x, y] = fromRoi(roi, S, sx / sw, sy / sw);
      expect(Math.hypot(x - 120.5, y - 80.5)).toBeLessThan(1.5);
    }
    // the ROI's "up" is the frame direction (sin a, −cos a): at 90° the crop's top looks to the frame's right
    expect(fromRoi({ cx: 0, cy: 0, side: 2, angle: Math.PI / 2 }, 2, 1, 0)).toEqual([expect.closeTo(1, 9), expect.closeTo(0, 9)]);
  });
});

describe.skipIf((!hasDemo || !hasBodyPix || !hasAddon('opencv')) && !ci)(
  `BlazePose end to end on the demo videos: 33 points through association, triangulation and ankle dorsiflexion${hasDemo ? '' : ` (${NO_DEMO})`}`,
  () => {
    it('2 frames × 4 cameras: the 33-point set is kept, heels and foot tips are triangulated near Pose2Sim’s heels and big toes, dorsiflexion is measured', async () => {
      const r = await processTrial({
        trialDir: BALANCING,
        calibPath: DEMO_CALIB,
        pose: { kind: 'blazepose' },
        maxFrames: 2,
        tap: { camera: 'cam_01', x: 400, y: 800 },
      });
      expect(r.keypointSet).toEqual(BLAZEPOSE33);
      expect(r.observations.length).toBe(2 * 33 * 4 * 3);
      expect(r.cameraMode).toMatch(/2D from BlazePose Full/);
      const trc = parseTrc(readFileSync(path.join(BALANCING, 'pose-3d', 'S00_P00_T01_BalancingTrial_0-100.trc'), 'utf8'));
      const M = trc.markers.length,
        K = r.keypointSet.length;
      const dist: Record<string, number[]> = {};
      for (const [ours, theirs] of [
        ['left_heel', 'LHeel'],
        ['right_heel', 'RHeel'],
        ['left_foot_index', 'LBigToe'],
        ['right_foot_index', 'RBigToe'],
        ['left_ankle', 'LAnkle'],
      ] as const) {
        const k = r.keypointSet.indexOf(ours),
          m = trc.markers.indexOf(theirs);
        for (let f = 0; f < 2; f++) {
          const a = (f * K + k) * 3,
            b = (f * M + m) * 3;
          const d = Math.hypot(r.filled[a]! - trc.points[b]!, r.filled[a + 1]! - trc.points[b + 1]!, r.filled[a + 2]! - trc.points[b + 2]!);
          expect(Number.isFinite(d)).toBe(true);
          (dist[ours] ??= []).push(d * 1000);
        }
      }
      // a foot point from another model: centimetres from OpenPose's, not decimetres
      for (const [name, d] of Object.entries(dist)) expect(median(d), `${name} median distance (mm) to Pose2Sim's TRC`).toBeLessThan(120);
      for (const side of ['left', 'right']) {
        const m = r.rows.find((x) => x.joint === 'ankle_dorsiflexion' && x.side === side && x.statistic === 'mean')!;
        expect(m.omitted_reason).toBeNull();
        expect(Math.abs(m.value_deg!)).toBeLessThan(45);
      }
    }, 300_000);
  },
);
