import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cameraCenter } from '../../models/capture/camera';
import { renderCheckerboard } from '../../models/capture/board';
import { assessRigDrift } from '../../models/capture/obliquity';
import { lookAtCamera } from '../../models/capture/synthetic';
import { CalibrationError, calibrateExtrinsics, calibrateIntrinsics, formatTomlCalibration, loadTomlCalibration, parseTomlCalibration } from './calibration';
import { hasAddon } from './native/index';
import { DEMO, DEMO_CALIB, hasDemo, NO_DEMO } from './testing/paths';

const cvBuilt = hasAddon('opencv');

describe('TOML calibration import', () => {
  it.skipIf(!hasDemo)(`loads the demo's Calib_qualisys.toml (${hasDemo ? 'present' : NO_DEMO})`, () => {
    const cams = loadTomlCalibration(DEMO_CALIB);
    expect(cams.map((c) => c.name)).toEqual(['cam_01', 'cam_02', 'cam_03', 'cam_04']);
    const c = cams[0]!;
    expect([c.width, c.height]).toEqual([1088, 1920]);
    expect(c.K[0]).toBeCloseTo(1681.244873046875, 9);
    expect(c.rvec[0]).toBeCloseTo(1.68827548, 8);
    expect(c.tvec[2]).toBeCloseTo(2.89071305, 8);
    const C = cams.map((x) => Math.hypot(...cameraCenter(x)));
    for (const d of C) {
      expect(d).toBeGreaterThan(3.0);
      expect(d).toBeLessThan(4.5);
    }
  });
  it('round-trips through formatTomlCalibration', () => {
    const cams = [lookAtCamera('cam_a', [3, 0, 1.5], [0, 0, 1]), lookAtCamera('cam_b', [0, 3, 1.5], [0, 0, 1])];
    const back = parseTomlCalibration(formatTomlCalibration(cams));
    expect(JSON.stringify(back)).toEqual(JSON.stringify(cams));
  });
  it('explains malformed files', () => {
    expect(() => parseTomlCalibration('[cam_1]\nmatrix = 3', 'x.toml')).toThrow(CalibrationError);
    expect(() =>
      parseTomlCalibration('[cam_1]\nsize=[1,2]\nmatrix=[[1,0,0],[0,1,0],[0,0,1]]\ndistortions=[0,0,0,0]\nrotation=[0,0]\ntranslation=[0,0,0]', 'x.toml'),
    ).toThrow(/cam_1.*rotation/);
    expect(() => parseTomlCalibration('not = [toml', 'x.toml')).toThrow(/not valid TOML/);
    expect(() =>
      parseTomlCalibration(
        '[cam_1]\nsize=[64,48]\nmatrix=[[500,0,32],[0,500,24],[0,0,1]]\ndistortions=[0,0,0,0,0,0]\nrotation=[0,0,0]\ntranslation=[0,0,0]',
        'x.toml',
      ),
    ).toThrow(/4, 5 or 8 coefficients/);
    expect(() => parseTomlCalibration('[metadata]\nerror = 0', 'x.toml')).toThrow(/no camera tables/);
    expect(() => loadTomlCalibration('/nonexistent/calib.toml')).toThrow(/calibration file \/nonexistent\/calib.toml does not exist/);
    expect(() =>
      parseTomlCalibration(
        '[cam_1]\nsize=[64,48]\nmatrix=[[0,0,32],[0,500,24],[0,0,1]]\ndistortions=[0,0,0,0]\nrotation=[0,0,0]\ntranslation=[0,0,0]',
        'x.toml',
      ),
    ).toThrow(/non-positive focal length/);
  });
});

describe.skipIf(!cvBuilt)('checkerboard calibration on synthetic board images (OpenCV addon)', () => {
  const board = { cols: 6, rows: 5, squareM: 0.04 };
  const centre: [number, number, number] = [0.1, 0.08, 0];

  it('recovers known intrinsics with sub-pixel RMS', () => {
    const f = 620;
    const views = [
      [0.1, -0.3, 0.6],
      [0.4, 0.1, 0.55],
      [-0.2, 0.2, 0.6],
      [0.1, 0.5, 0.5],
      [0.5, -0.2, 0.65],
      [-0.25, -0.2, 0.55],
      [0.1, 0.08, 0.7],
      [0.3, 0.35, 0.5],
    ].map((C, i) => lookAtCamera(`v${i}`, C as [number, number, number], centre, { f, width: 640, height: 480, up: [0, 1, 0], rollDeg: i * 9 - 30 }));
    const imgs = views.map((v) => renderCheckerboard(v, board, 2));
    const r = calibrateIntrinsics(imgs, board);
    expect(r.used).toBe(views.length);
    expect(r.rmsPx).toBeLessThan(0.5);
    expect(Math.abs(r.K[0]! - f) / f).toBeLessThan(0.01);
    expect(Math.abs(r.K[4]! - f) / f).toBeLessThan(0.01);
    // the principal point is the weakest-determined intrinsic with 8 views: within 5 px (< 1 % of the image)
    expect(Math.abs(r.K[2]! - 319.5)).toBeLessThan(5);
    expect(Math.abs(r.K[5]! - 239.5)).toBeLessThan(5);
  });

  it('recovers camera poses from a floor board (same origin in every camera) and flags layout drift', () => {
    const f = 700;
    const truth = [0, 90, -45].map((yaw, i) => {
      const a = (yaw * Math.PI) / 180;
      return lookAtCamera(`cam_${i}`, [centre[0] + 0.7 * Math.cos(a), centre[1] + 0.7 * Math.sin(a), 0.55], centre, { f, width: 640, height: 480 });
    });
    const found = truth.map((t) =>
      calibrateExtrinsics(t.name, renderCheckerboard(t, board), board, { K: t.K, dist: [0, 0, 0, 0, 0], width: t.width, height: t.height }),
    );
    found.forEach((r, i) => {
      expect(r.rmsPx).toBeLessThan(0.5);
      const a = cameraCenter(r.camera),
        b = cameraCenter(truth[i]!);
      expect(Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2])).toBeLessThan(0.01);
    });
    const layout = [
      { camera: 'cam_0', label: 'front', yaw_deg: 0 },
      { camera: 'cam_1', label: 'left 90°', yaw_deg: 90 },
      { camera: 'cam_2', label: 'right 45°', yaw_deg: -45 },
    ];
    const cams = found.map((r) => r.camera);
    expect(assessRigDrift(cams, layout).drifted).toBe(false);
    const wrong = [...layout.slice(0, 2), { camera: 'cam_2', label: 'right 90°', yaw_deg: -90 }];
    const d = assessRigDrift(cams, wrong, { tolDeg: 15 });
    expect(d.drifted).toBe(true);
    expect(d.reasons.join(' ')).toMatch(/yaw drift/);
  });

  it('refuses a board without a unique origin for extrinsics', () => {
    const t = lookAtCamera('c', [0.5, 0, 0.5], centre, { f: 700, width: 640, height: 480 });
    expect(() =>
      calibrateExtrinsics(
        'c',
        renderCheckerboard(t, { cols: 5, rows: 5, squareM: 0.04 }),
        { cols: 5, rows: 5, squareM: 0.04 },
        { K: t.K, dist: [0, 0, 0, 0], width: 640, height: 480 },
      ),
    ).toThrow(/half turn/);
  });
});

describe.skipIf(!cvBuilt || !hasDemo)(`checkerboard intrinsics on the demo photos vs Calib_qualisys.toml${hasDemo ? '' : ` (${NO_DEMO})`}`, () => {
  it('agrees within 2 % in focal length with sub-0.5 px RMS (cam01, cam04)', () => {
    const toml = loadTomlCalibration(DEMO_CALIB);
    for (const cam of ['01', '04']) {
      const imgs = [1, 2, 3, 5, 6, 7].map((i) => path.join(DEMO, 'S00_Calibration', 'intrinsics', `int_cam${cam}_img`, `cam${cam}_0${i}_int.jpg`));
      const r = calibrateIntrinsics(imgs, { cols: 4, rows: 7, squareM: 0.06 });
      const ref = toml[Number(cam) - 1]!;
      expect([r.width, r.height]).toEqual([ref.width, ref.height]);
      expect(r.rmsPx).toBeLessThan(0.5);
      expect(Math.abs(r.K[0]! - ref.K[0]!) / ref.K[0]!).toBeLessThan(0.02);
      expect(Math.abs(r.K[4]! - ref.K[4]!) / ref.K[4]!).toBeLessThan(0.02);
    }
  });
});
