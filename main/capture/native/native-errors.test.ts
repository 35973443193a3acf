import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { triangulateBatch } from '../../../models/capture/triangulation';
import { hasAddon } from './index';
import { DEMO, hasDemo, NO_DEMO } from '../testing/paths';

const here = path.dirname(fileURLToPath(import.meta.url));
const child = path.join(here, 'testing', 'bad-input-child.ts');
const video = path.join(DEMO, 'S00_P00_SingleParticipant', 'S00_P00_T00_StaticTrial', 'videos', 'cam01.mp4');
const ci = process.env.CI === 'true';
const cvBuilt = hasAddon('opencv') && hasAddon('triangulation');

interface ChildResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  out: { ok?: unknown; error?: { name: string; code: string | null; cvCode: number | null; message: string } } | null;
}

/** Run one bad call in a child process: an abort there fails the test instead of killing vitest. */
function runCase(name: string): ChildResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', child, name, video], { encoding: 'utf8', timeout: 60_000 });
  let out: ChildResult['out'] = null;
  try {
    out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as ChildResult['out'];
  } catch {
    /* crash: no JSON */
  }
  return { status: r.status, signal: r.signal, out };
}

describe.skipIf(!cvBuilt && !ci)(`no input can kill the process (native addons${cvBuilt ? '' : ': not built'})`, () => {
  it('a 2×7 board is a RangeError, not an OpenCV abort', () => {
    const r = runCase('board2x7');
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.out?.error?.name).toBe('RangeError');
    expect(r.out?.error?.message).toMatch(/at least 3×3 inner corners \(got 2×7\)/);
  });
  it('six distortion coefficients are an OpenCvError naming the assertion', () => {
    const r = runCase('dist6');
    expect([r.status, r.signal]).toEqual([0, null]);
    expect(r.out?.error).toMatchObject({ name: 'OpenCvError', code: 'Validation', kind: 'ERR_OPENCV', cvCode: -215 });
    expect(r.out?.error?.message).toMatch(/distCoeffs/);
  });
  it('fewer than 4 points per view is an OpenCvError', () => {
    const r = runCase('calib3pts');
    expect([r.status, r.signal]).toEqual([0, null]);
    expect(r.out?.error).toMatchObject({ name: 'OpenCvError', code: 'Validation', kind: 'ERR_OPENCV' });
    expect(r.out?.error?.message).toMatch(/number of points in the view #0 is < 4/);
  });
  it('a zero output size is a RangeError', () => {
    const r = runCase('cropZero');
    expect([r.status, r.signal]).toEqual([0, null]);
    expect(r.out?.error?.name).toBe('RangeError');
  });
  it('encodeJpeg refuses image data of the wrong length and a quality outside 1..100 with a RangeError', () => {
    for (const c of ['jpegShortData', 'jpegQuality0']) {
      const r = runCase(c);
      expect([c, r.status, r.signal]).toEqual([c, 0, null]);
      expect(r.out?.error?.name).toBe('RangeError');
    }
  });
  it('an unopenable video is an error', () => {
    const r = runCase('missingVideo');
    expect([r.status, r.signal]).toEqual([0, null]);
    expect(r.out?.error?.message).toMatch(/cannot open video \/nonexistent\/video.mp4/);
  });
  it.skipIf(!hasDemo && !ci)(`use after close of a video reader is ERR_VIDEO_CLOSED, not a segfault (${hasDemo ? 'demo video' : NO_DEMO})`, () => {
    expect(existsSync(video)).toBe(true);
    for (const c of ['closedInfo', 'closedRead', 'closedSkip']) {
      const r = runCase(c);
      expect([c, r.status, r.signal]).toEqual([c, 0, null]);
      expect(r.out?.error).toMatchObject({ name: 'OpenCvError', code: 'Conflict', kind: 'ERR_VIDEO_CLOSED' });
    }
  });
  it('minViews < 2 is refused by the native triangulation (one view cannot give depth)', () => {
    const r = runCase('minViews1');
    expect([r.status, r.signal]).toEqual([0, null]);
    expect(r.out?.error?.name).toBe('RangeError');
    expect(r.out?.error?.message).toMatch(/minViews must be between 2/);
  });
});

describe('minViews < 2 is refused by the reference triangulation', () => {
  it('throws a RangeError for 1 and for more views than cameras', () => {
    const input = { cameras: 2, projections: new Float64Array(24), observations: new Float64Array(6) };
    expect(() => triangulateBatch(input, { minViews: 1 })).toThrow(/minViews must be between 2 and the number of cameras \(2\)/);
    expect(() => triangulateBatch(input, { minViews: 3 })).toThrow(RangeError);
  });
});
