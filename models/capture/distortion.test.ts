import { describe, expect, it } from 'vitest';
import { type CameraCalibration, projectionMatrix, projectPoint, undistortObservations, undistortPixel } from './camera';
import { butterworthFiltfilt, filterPad } from './filters';
import { projectFrames, ringCamera, syntheticMotion, syntheticPose } from './synthetic';
import { triangulateBatch } from './triangulation';

/** A wide-angle USB webcam's distortion (barrel, k1 = −0.32), as OpenCV calibrates it. */
const WIDE = [-0.32, 0.12, 0.0015, -0.001, -0.02];

describe('lens distortion (OpenCV model)', () => {
  it('undistortPixel inverts projectPoint to 1e-6 px for the 5- and 8-coefficient models', () => {
    for (const dist of [WIDE, [-0.32, 0.12, 0.0015, -0.001, -0.02, 0.05, 0.01, 0.002]]) {
      const cam: CameraCalibration = { ...ringCamera('c', 30, { f: 900 }), dist };
      for (const X of [
        [0.6, 0.5, 1.9],
        [-0.5, -0.4, 0.1],
        [0.3, -0.6, 1.5],
      ] as const) {
        const d = projectPoint(cam, X, true)!,
          ideal = projectPoint(cam, X, false)!;
        expect(Math.hypot(d[0] - ideal[0], d[1] - ideal[1])).toBeGreaterThan(1); // the lens moves it
        const u = undistortPixel(cam, d[0], d[1]);
        expect(Math.hypot(u[0] - ideal[0], u[1] - ideal[1])).toBeLessThan(1e-6);
      }
    }
  });

  it('refuses a pixel the iteration cannot invert (issue 14 review): a strong wide-angle lens at the image corners gives NaN and the view is marked unseen', () => {
    const cam: CameraCalibration = { ...ringCamera('c', 0, { f: 600 }), K: [600, 0, 640, 0, 600, 360, 0, 0, 1], dist: [-0.35, 0.12, 0, 0, 0] };
    const roundTrip = (u: number, v: number) => {
      const [x, y] = undistortPixel(cam, u, v);
      if (!Number.isFinite(x)) return NaN;
      // distort back with the forward model
      const xn = (x - 640) / 600,
        yn = (y - 360) / 600,
        r2 = xn * xn + yn * yn,
        rad = 1 - 0.35 * r2 + 0.12 * r2 * r2;
      return Math.hypot(xn * rad * 600 + 640 - u, yn * rad * 600 + 360 - v);
    };
    // before: the corners came back 78 px from where they were observed, silently
    for (const [u, v] of [
      [0, 0],
      [1280, 0],
      [0, 720],
      [1280, 720],
    ] as const)
      expect(roundTrip(u, v)).toBeNaN();
    // nearer the centre it converges
    for (const [u, v] of [
      [640, 360],
      [900, 500],
      [300, 200],
    ] as const)
      expect(roundTrip(u, v)).toBeLessThan(0.01);
    const obs = Float64Array.from([0, 0, 0.9, 640, 360, 0.9]);
    const out = undistortObservations(obs, [cam]);
    expect([out[2], out[5]]).toEqual([0, 0.9]);
  });

  it('triangulation error on a distorted synthetic rig drops to ~0 with undistortion', () => {
    const cams = [0, 70, 140].map((y, i) => ({ ...ringCamera(`cam_0${i + 1}`, y, { distance: 3, f: 800 }), dist: WIDE }));
    const frames = syntheticMotion(20).map((a) => syntheticPose(a));
    const obs = projectFrames(cams, frames, 0, 1, true);
    const P = Float64Array.from(cams.flatMap(projectionMatrix));
    const truth = frames.flat();
    const err = (points: Float64Array) => {
      let worst = 0,
        n = 0;
      truth.forEach((X, i) => {
        const e = Math.hypot((points[i * 3] ?? NaN) - X[0], (points[i * 3 + 1] ?? NaN) - X[1], (points[i * 3 + 2] ?? NaN) - X[2]);
        if (Number.isFinite(e)) {
          worst = Math.max(worst, e);
          n++;
        }
      });
      return { worst, n };
    };
    const raw = err(triangulateBatch({ cameras: 3, projections: P, observations: obs }, { maxReprojectionPx: 1e9 }).points);
    const fixed = err(triangulateBatch({ cameras: 3, projections: P, observations: undistortObservations(obs, cams) }).points);
    expect(raw.worst).toBeGreaterThan(0.01); // > 1 cm without undistortion
    expect(fixed.n).toBe(truth.length);
    expect(fixed.worst).toBeLessThan(1e-6);
  });

  it('cameras without distortion are passed through unchanged', () => {
    const cams = [ringCamera('a', 0), ringCamera('b', 90)];
    const obs = Float64Array.of(10, 20, 1, 30, 40, 0.5, NaN, NaN, 0, 5, 6, 1);
    expect(Array.from(undistortObservations(obs, cams))).toEqual(Array.from(obs));
  });
});

describe('zero-lag Butterworth: effective order matches the documented order', () => {
  it('order 4 attenuates a sine at twice the cut-off as |H|² of a 2nd-order design (1/17), not 8th (1/257)', () => {
    const fs = 1000,
      fc = 10,
      f = 20;
    const x = Array.from({ length: 4000 }, (_, i) => Math.sin((2 * Math.PI * f * i) / fs));
    const y = butterworthFiltfilt(x, fs, fc, 4);
    let peak = 0;
    for (let i = 1000; i < 3000; i++) peak = Math.max(peak, Math.abs(y[i]!));
    // bilinear pre-warping moves it by < 1 % at fs = 1000 Hz
    expect(peak).toBeGreaterThan(0.95 / 17);
    expect(peak).toBeLessThan(1.05 / 17);
    // and exactly half power at the design cut-off
    const xc = Array.from({ length: 4000 }, (_, i) => Math.sin((2 * Math.PI * fc * i) / fs));
    const yc = butterworthFiltfilt(xc, fs, fc, 4);
    let pc = 0;
    for (let i = 1000; i < 3000; i++) pc = Math.max(pc, Math.abs(yc[i]!));
    expect(pc).toBeCloseTo(0.5, 2);
  });
  it('refuses an odd order and states its pad', () => {
    expect(() => butterworthFiltfilt([1, 2, 3], 60, 6, 3)).toThrow(/even integer/);
    expect(filterPad(4)).toBe(9);
  });
});
