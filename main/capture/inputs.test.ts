import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ringCamera } from '../../models/capture/synthetic';
import { formatTomlCalibration, loadTomlCalibration } from './calibration';
import { CaptureInputError } from './errors';
import { processTrial } from './pipeline';
import { matchToCameras, riffTruncated } from './sources';
import { DEMO_CALIB, hasDemo, NO_DEMO, STATIC_TRIAL } from './testing/paths';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'capture-inputs-'));
const cams = ['cam_01', 'cam_02', 'cam_03'].map((n, i) => ringCamera(n, i * 90));
const code = (f: () => unknown) => {
  try {
    f();
    return null;
  } catch (e) {
    return e instanceof CaptureInputError ? e.kind : String(e);
  }
};

describe('cameras are matched to inputs by name, never by sort order', () => {
  it('matches normalised names and trailing numbers whatever the input order', () => {
    expect(matchToCameras(cams, ['/t/cam03_json', '/t/cam01_json', '/t/cam02_json'], (x) => x, 'folder')).toEqual([
      '/t/cam01_json',
      '/t/cam02_json',
      '/t/cam03_json',
    ]);
    expect(matchToCameras(cams, ['v/side_3.mp4', 'v/front_1.mp4', 'v/back_2.mp4'], (x) => x, 'video')).toEqual([
      'v/front_1.mp4',
      'v/back_2.mp4',
      'v/side_3.mp4',
    ]);
    const named = [ringCamera('front', 0), ringCamera('left', 90)];
    expect(matchToCameras(named, ['left.mp4', 'front.mp4'], (x) => x, 'video')).toEqual(['front.mp4', 'left.mp4']);
  });
  it('refuses a view folder that matches no camera, even when the counts agree (no sort-order fallback)', () => {
    const named = [ringCamera('front', 0), ringCamera('left', 90)];
    expect(code(() => matchToCameras(named, ['a.mp4', 'b.mp4'], (x) => x, 'video'))).toBe('bad_calibration');
    expect(() => matchToCameras(named, ['front.mp4', 'b.mp4'], (x) => x, 'video')).toThrow(
      /b.mp4 matches no camera in the calibration by name \(calibrated: front, left\)/,
    );
  });
  it('names the camera without an input, and refuses two inputs for one camera', () => {
    expect(() => matchToCameras(cams, ['cam01.mp4', 'cam03.mp4'], (x) => x, 'video')).toThrow(/no video for camera cam_02/);
    expect(code(() => matchToCameras(cams, ['cam01.mp4', 'cam_01.avi', 'cam02.mp4', 'cam03.mp4'], (x) => x, 'video'))).toBe('bad_argument');
  });
});

describe.skipIf(!hasDemo)(`JSON keypoints are checked against the calibration's image size${hasDemo ? '' : ` (${NO_DEMO})`}`, () => {
  it('accepts the demo static trial at its calibrated 1088×1920', async () => {
    const r = await processTrial({ trialDir: STATIC_TRIAL, calibPath: DEMO_CALIB, useTrialKeypoints: true });
    expect(r.frames).toBe(12);
  });
  it('refuses it with width and height swapped (size_mismatch, naming the camera and the size)', async () => {
    const d = tmp();
    const swapped = loadTomlCalibration(DEMO_CALIB).map((c) => ({ ...c, width: c.height, height: c.width }));
    writeFileSync(path.join(d, 'calib.toml'), formatTomlCalibration(swapped));
    const err = await processTrial({ trialDir: STATIC_TRIAL, calibPath: path.join(d, 'calib.toml'), useTrialKeypoints: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CaptureInputError);
    expect((err as CaptureInputError).kind).toBe('size_mismatch');
    expect((err as CaptureInputError).code).toBe('Validation');
    expect((err as Error).message).toMatch(/cam01_json: \d+ of \d+ keypoints .* outside camera cam_01's calibrated image of 1920×1088 px/);
  });
  it('refuses a keypoint folder whose name matches no calibrated camera', async () => {
    const d = tmp();
    for (const [from, to] of [
      ['cam01', 'cam01'],
      ['cam02', 'cam02'],
      ['cam03', 'cam03'],
      ['cam04', 'side'],
    ] as const) {
      const src = path.join(STATIC_TRIAL, 'pose', `${from}_json`);
      mkdirSync(path.join(d, `${to}_json`));
      for (const f of readdirSync(src)) copyFileSync(path.join(src, f), path.join(d, `${to}_json`, f));
    }
    const dirs = ['cam01', 'cam02', 'cam03', 'side'].map((c) => path.join(d, `${c}_json`));
    const err = await processTrial({ trialDir: d, calibPath: DEMO_CALIB, keypointDirs: dirs, fps: 60 }).catch((e: unknown) => e);
    expect((err as CaptureInputError).kind).toBe('bad_calibration');
    expect((err as Error).message).toMatch(/side_json matches no camera/);
  });
});

describe('riffTruncated (an .avi cut off after it was written)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'riff-'));
  // a RIFF chunk: 'RIFF', little-endian size, form type and `n` bytes of data (padded to even)
  const chunk = (form: string, n: number) => {
    const b = Buffer.alloc(8 + 4 + n + ((4 + n) & 1));
    b.write('RIFF', 0, 'latin1');
    b.writeUInt32LE(4 + n, 4);
    b.write(form, 8, 'latin1');
    return b;
  };
  const file = (name: string, b: Buffer) => {
    const f = path.join(dir, name);
    writeFileSync(f, b);
    return f;
  };
  it('is false for whole files, one RIFF chunk or an OpenDML chain (odd sizes padded)', () => {
    expect(riffTruncated(file('whole.avi', chunk('AVI ', 1001)))).toBe(false);
    expect(riffTruncated(file('chain.avi', Buffer.concat([chunk('AVI ', 1000), chunk('AVIX', 501), chunk('AVIX', 20)])))).toBe(false);
  });
  it('is true when the first or a later chunk runs past the end of the file', () => {
    expect(riffTruncated(file('cut.avi', chunk('AVI ', 1000).subarray(0, 600)))).toBe(true);
    expect(riffTruncated(file('cut-chain.avi', Buffer.concat([chunk('AVI ', 1000), chunk('AVIX', 500)]).subarray(0, 1300)))).toBe(true);
  });
  it('is false for what it cannot judge: not RIFF (an .mp4), a size never filled in, a missing file', () => {
    expect(riffTruncated(file('x.mp4', Buffer.from('\0\0\0\x18ftypisom0000000000000000')))).toBe(false);
    const unfilled = chunk('AVI ', 100);
    unfilled.writeUInt32LE(0, 4);
    expect(riffTruncated(file('unfilled.avi', unfilled))).toBe(false);
    expect(riffTruncated(path.join(dir, 'missing.avi'))).toBe(false);
  });
});
