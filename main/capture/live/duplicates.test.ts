/**
 * `process` on a live recording with duplicated frames (issue 15): the timestamp sidecars' rows
 * marked `duplicated` are left out of triangulation (that camera's view of those frames is stale)
 * and carried as a trial condition — `duplicated_frames` (fails) above DUPLICATED_FRAMES_MAX per
 * camera, `duplicated_frames_masked` (informational) at or under it.
 *
 * The recording: the demo trial's four videos recorded at 60 fps, cam_04's source being a 30 fps
 * MJPEG file of every other demo frame, so the synchroniser fills every other cam_04 slot with a
 * duplicate — deterministic (`pace: fast` stamps frames with their presentation times), where a
 * `--pace realtime` recording's share depends on the machine (90–93 % here, README).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INFO_CONDITIONS } from '../../../models/capture/quality';
import type { Keypoints2D } from '../../../models/capture/openpose';
import { loadTomlCalibration } from '../calibration';
import { CaptureInputError } from '../errors';
import { hasAddon, openCvAddon, type RawImage } from '../native/index';
import { processTrial, type ProcessResult } from '../pipeline';
import { estimateVideoPoses } from '../pose/run';
import { DEFAULT_POSE } from '../pose/types';
import { findVideos, probeVideos } from '../sources';
import { BALANCING, DEMO_CALIB, hasDemo, NO_DEMO } from '../testing/paths';
import { openRig } from './rig';
import { DUPLICATED_FRAMES_MAX, readDuplicatedFrames, sidecarPath } from './sidecar';

const ci = process.env.CI === 'true';
const built = hasAddon('capture') && hasAddon('opencv');
const FRAMES = 20;

function statuses(file: string): string[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((r) => r.split(',')[4]!);
}
/** Rewrite a sidecar's status column: `dup` = the frames to mark duplicated. */
function markSidecar(file: string, dup: Set<number>): void {
  const [head, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  writeFileSync(file, `${[head, ...rows.map((r, i) => `${r.split(',').slice(0, 4).join(',')},${dup.has(i) ? 'duplicated' : 'captured'}`)].join('\n')}\n`);
}

describe.skipIf((!built || !hasDemo) && !ci)(
  `process: a live recording's duplicated frames${built ? '' : ' (skipped: native capture addon not built; needs libopencv-dev and npm run build:native)'}${hasDemo ? '' : ` (${NO_DEMO})`}`,
  () => {
    let dir: string, trial: string;
    let twoD: Keypoints2D[][][];
    const proc = (trialDir: string): Promise<ProcessResult> =>
      processTrial({ trialDir, calibPath: DEMO_CALIB, maxFrames: FRAMES, precomputed: { primary: twoD }, sync: 'off' });

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'capture-duplicates-'));
      // cam_04's source: demo frames 0, 2, 4, … as a 30 fps MJPEG file
      const cv = openCvAddon();
      const r = new cv.VideoReader(path.join(BALANCING, 'videos', 'cam04.mp4'));
      const half: RawImage[] = [];
      // (a few past the recording's end: its last slot is decided once every camera has a later frame)
      for (let k = 0; k < FRAMES + 4; k++) {
        const f = r.read()!;
        if (k % 2 === 0) half.push(f);
      }
      r.close();
      const cam04 = path.join(dir, 'cam04-30fps.avi');
      cv.writeVideo(cam04, 'MJPG', 30, half);
      trial = path.join(dir, 'trial');
      const rig = await openRig(
        [
          ...[1, 2, 3].map((i) => ({ kind: 'file' as const, path: path.join(BALANCING, 'videos', `cam0${i}.mp4`), pace: 'fast' as const, name: `cam_0${i}` })),
          { kind: 'file' as const, path: cam04, pace: 'fast' as const, name: 'cam_04' },
        ],
        { fps: 60, record: { outDir: trial, seconds: FRAMES / 60, calibrationPath: DEMO_CALIB } },
      );
      const rec = await rig.recordingDone();
      await rig.close();
      expect(rec.cameras.map((c) => [c.name, c.written, c.duplicated])).toEqual([
        ['cam_01', FRAMES, 0],
        ['cam_02', FRAMES, 0],
        ['cam_03', FRAMES, 0],
        ['cam_04', FRAMES, FRAMES / 2],
      ]);
      // the real 2D model on the recorded videos, once; every processing below reuses it
      twoD = await estimateVideoPoses(probeVideos(loadTomlCalibration(DEMO_CALIB), findVideos(trial)), FRAMES, DEFAULT_POSE, undefined, 2);
    }, 300_000);
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it(`over ${100 * DUPLICATED_FRAMES_MAX} % of a camera's frames duplicated: those views are left out of the 3D and every reading fails duplicated_frames`, async () => {
      const r = await proc(trial);
      expect(r.duplicatedFrames?.map(({ camera, count, share }) => ({ camera, count, share }))).toEqual([
        { camera: 'cam_01', count: 0, share: 0 },
        { camera: 'cam_02', count: 0, share: 0 },
        { camera: 'cam_03', count: 0, share: 0 },
        { camera: 'cam_04', count: FRAMES / 2, share: 0.5 },
      ]);
      const cond = r.trialConditions.find((c) => c.code === 'duplicated_frames');
      expect(cond?.detail).toMatch(
        /cam_04 10 of 20 \(50\.0 %\); above 10 % a camera did not deliver the recording's frame rate\. Those views were left out of the 3D/,
      );
      expect(cond?.detail).not.toMatch(/cam_01/);
      expect(INFO_CONDITIONS).not.toContain('duplicated_frames');
      expect(r.rows.length).toBeGreaterThan(0);
      for (const row of r.rows) {
        expect(row.conditions.map((c) => c.code)).toContain('duplicated_frames');
        expect(row.trustworthy).toBe(false);
      }
      // cam_04 (camera 3) is in no point's view set on a duplicated frame, and in some on the others
      const dup = statuses(sidecarPath(path.join(trial, 'videos', 'cam_04.avi'))).map((s) => s === 'duplicated');
      const K = r.keypointSet.length,
        C = 4;
      let seenOnDup = 0,
        seenOnCaptured = 0;
      for (let f = 0; f < FRAMES; f++)
        for (let k = 0; k < K; k++) {
          const used = (r.triangulation.viewMask[f * K + k]! & (1 << 3)) !== 0;
          if (dup[f]) {
            seenOnDup += used ? 1 : 0;
            expect(r.observations[((f * K + k) * C + 3) * 3 + 2]).toBe(0);
          } else seenOnCaptured += used ? 1 : 0;
        }
      expect(seenOnDup).toBe(0);
      expect(seenOnCaptured).toBeGreaterThan(0);
    }, 120_000);

    it('the same videos without sidecars (not recorded by this app): no condition, every view used', async () => {
      const bare = path.join(dir, 'bare');
      cpSync(trial, bare, { recursive: true });
      for (const n of ['cam_01', 'cam_02', 'cam_03', 'cam_04']) rmSync(path.join(bare, 'videos', `${n}.timestamps.csv`));
      const r = await proc(bare);
      expect(r.duplicatedFrames).toBeNull();
      expect(r.trialConditions.map((c) => c.code)).not.toContain('duplicated_frames');
      expect(r.trialConditions.map((c) => c.code)).not.toContain('duplicated_frames_masked');
      const K = r.keypointSet.length;
      let cam04Used = 0;
      for (let f = 0; f < FRAMES; f++) for (let k = 0; k < K; k++) cam04Used += r.triangulation.viewMask[f * K + k]! & (1 << 3) ? 1 : 0;
      expect(cam04Used).toBeGreaterThan(0);
    }, 120_000);

    it(`at most ${100 * DUPLICATED_FRAMES_MAX} % per camera: the views are still left out, and the share is said beside the readings without failing them`, async () => {
      const few = path.join(dir, 'few');
      cpSync(trial, few, { recursive: true });
      markSidecar(path.join(few, 'videos', 'cam_04.timestamps.csv'), new Set());
      markSidecar(path.join(few, 'videos', 'cam_02.timestamps.csv'), new Set([7, 8]));
      const r = await proc(few);
      expect(r.duplicatedFrames?.map((d) => d.count)).toEqual([0, 2, 0, 0]);
      const codes = r.trialConditions.map((c) => c.code);
      expect(codes).not.toContain('duplicated_frames');
      const cond = r.trialConditions.find((c) => c.code === 'duplicated_frames_masked');
      expect(cond?.detail).toMatch(/cam_02 2 of 20 \(10\.0 %\); those views were left out of the 3D \(limit 10 % per camera\)/);
      expect(INFO_CONDITIONS).toContain('duplicated_frames_masked');
      for (const row of r.rows) expect(row.conditions.map((c) => c.code)).toContain('duplicated_frames_masked');
      const K = r.keypointSet.length;
      for (const f of [7, 8]) for (let k = 0; k < K; k++) expect(r.triangulation.viewMask[f * K + k]! & (1 << 1)).toBe(0);
    }, 120_000);

    it("a recording cut short by a write failure: only the frames every camera's sidecar confirms are processed", async () => {
      const cut = path.join(dir, 'cut');
      cpSync(trial, cut, { recursive: true });
      const f = path.join(cut, 'videos', 'cam_02.timestamps.csv');
      writeFileSync(f, `${readFileSync(f, 'utf8').trim().split('\n').slice(0, 16).join('\n')}\n`); // header + 15 rows
      const r = await proc(cut);
      expect(r.frames).toBe(15);
      expect(r.duplicatedFrames?.map((d) => d.rows)).toEqual([FRAMES, 15, FRAMES, FRAMES]);
      writeFileSync(f, 'frame,timestamp_us,slot_us,source_frame,status\n');
      await expect(proc(cut)).rejects.toMatchObject({ name: 'CaptureInputError', kind: 'empty_video' });
    }, 60_000);

    it('a broken sidecar is a typed error naming the file and line', async () => {
      const broken = path.join(dir, 'broken');
      cpSync(trial, broken, { recursive: true });
      const f = path.join(broken, 'videos', 'cam_03.timestamps.csv');
      const lines = readFileSync(f, 'utf8').split('\n');
      lines[4] = 'garbage';
      writeFileSync(f, lines.join('\n'));
      expect(() => readDuplicatedFrames(path.join(broken, 'videos', 'cam_03.avi'), FRAMES)).toThrow(CaptureInputError);
      await expect(proc(broken)).rejects.toMatchObject({
        name: 'CaptureInputError',
        message: expect.stringMatching(/cam_03\.timestamps\.csv line 5 is not a sidecar row for frame 3/),
      });
      writeFileSync(f, 'frame,t\n0,1\n');
      await expect(proc(broken)).rejects.toThrow(/cam_03\.timestamps\.csv is not a capture timestamp sidecar/);
    }, 60_000);
  },
);
