/**
 * Tapping the athlete on an imported trial (issue 14): the demo BalancingTrial imported as the
 * Process page does (`capture.importTrial`), its first camera's first frame made on demand by
 * `capture.tapFrame` (a full-size JPEG decoded from cam01.mp4, cached in the recording folder), the
 * tap stored with `capture.tap`; a trial of 2D keypoint files only answers a Validation error that
 * says to tap with the command line; processed from its videos (5 frames), the untapped trial fails
 * athlete_not_tapped and the tapped one does not. Needs the built OpenCV addon and the shared demo data.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../../models/errors';
import { hasAddon, openCvAddon } from '../capture/native/index';
import { callVerb } from '../services';
import { BALANCING, DEMO_CALIB, hasDemo, MULTI, NO_DEMO } from '../capture/testing/paths';
import type { CaptureWorkspace } from '../capture/workspace';
import { openDb, type Db } from '../data/db';
import { seedDemo, type SeedSummary } from '../data/seed';
import { captureHandlers, createCaptureWorkspace } from './capture';
import { LiveRoom, liveHandlers } from './capture-live';

type Ctx = { session: { userId: string | null } };
const ready = hasDemo && hasAddon('opencv');
let dir: string, db: Db, seed: SeedSummary, ws: CaptureWorkspace, h: ReturnType<typeof captureHandlers<Ctx>> & ReturnType<typeof liveHandlers<Ctx>>;
const as = (userId: string): Ctx => ({ session: { userId } });

describe.skipIf(!ready && process.env.CI !== 'true')(
  `tap on an imported trial${ready ? '' : ` (skipped: ${hasDemo ? 'the OpenCV addon is not built' : NO_DEMO})`}`,
  () => {
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-capture-tap-'));
      db = openDb(path.join(dir, 'demo.sqlite'));
      seed = seedDemo(db, { seed: 1, today: '2026-11-20' });
      ws = createCaptureWorkspace(db, path.join(dir, 'captures'));
      h = { ...captureHandlers<Ctx>(db, ws, (c) => c.session.userId!), ...liveHandlers<Ctx>(db, ws, new LiveRoom(), (c) => c.session.userId!) };
    });
    afterAll(() => {
      ws.close();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('gives the first frame of cam01 of an imported video trial, full size, and stores the tap', async () => {
      const physio = as(seed.userIds.physio);
      const rec = (await h['capture.importTrial'](physio, {
        trial_dir: BALANCING,
        calibration_path: DEMO_CALIB,
        athlete_id: seed.linkedAthleteId,
        test: 'single_leg_squat',
      })) as {
        id: string;
        tap: unknown;
        cameras: string[];
      };
      expect(rec.tap).toBeNull();
      expect(rec.cameras[0]).toBe('cam_01');
      const frame = (await h['capture.tapFrame'](physio, { recording_id: rec.id })) as { camera: string; jpeg_base64: string; width: number; height: number };
      // The video is 1080×1920 (its calibration says 1088, one codec macroblock more): a tap is in the video's pixels.
      expect(frame).toMatchObject({ camera: 'cam_01', width: 1080, height: 1920 });
      const jpeg = Buffer.from(frame.jpeg_base64, 'base64');
      expect(jpeg.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
      // It is cam01.mp4's first frame: same size, and close in pixels to that frame decoded directly.
      const cv = openCvAddon();
      const img = cv.decodeImage(new Uint8Array(jpeg));
      expect([img.width, img.height]).toEqual([1080, 1920]);
      const reader = new cv.VideoReader(path.join(BALANCING, 'videos', 'cam01.mp4'));
      const first = reader.read()!;
      const second = reader.read()!;
      reader.close();
      const meanAbs = (a: Uint8Array, b: Uint8Array) => {
        let s = 0;
        for (let i = 0; i < a.length; i += 7) s += Math.abs(a[i]! - b[i]!);
        return s / Math.ceil(a.length / 7);
      };
      expect(meanAbs(img.data, first.data)).toBeLessThan(3);
      expect(meanAbs(img.data, first.data)).toBeLessThan(meanAbs(img.data, second.data) + 3);
      // Made once and kept in the recording folder: the second call reads the same bytes.
      expect(fs.existsSync(path.join(ws.root, rec.id, 'first-frame.jpg'))).toBe(true);
      const again = (await h['capture.tapFrame'](physio, { recording_id: rec.id })) as { jpeg_base64: string };
      expect(again.jpeg_base64).toBe(frame.jpeg_base64);
      // The athlete stands at about (418, 745) px in cam_01; the partly visible person is at the left edge.
      const tapped = (await h['capture.tap'](physio, { recording_id: rec.id, camera: 'cam_01', x: 418, y: 745 })) as { tap: unknown };
      expect(tapped.tap).toEqual({ camera: 'cam_01', x: 418, y: 745 });
      const list = (await h['capture.recordings'](physio, {})) as { recordings: { id: string; tap: unknown }[] };
      expect(list.recordings.find((r) => r.id === rec.id)?.tap).toEqual({ camera: 'cam_01', x: 418, y: 745 });
      await expect(Promise.resolve().then(() => h['capture.tapFrame'](physio, { recording_id: '00000000-0000-4000-8000-000000000000' }))).rejects.toMatchObject(
        {
          code: 'NotFound',
        },
      );
    });

    it('refuses a keypoint-only trial with a Validation error naming the command-line tap', async () => {
      const physio = as(seed.userIds.physio);
      const rec = (await h['capture.importTrial'](physio, {
        trial_dir: MULTI,
        calibration_path: DEMO_CALIB,
        athlete_id: seed.linkedAthleteId,
        test: 'single_leg_squat',
      })) as {
        id: string;
        videos: string[];
        has_keypoints: boolean;
      };
      expect(rec.videos).toEqual([]);
      expect(rec.has_keypoints).toBe(true);
      let err: AppError | null = null;
      try {
        await h['capture.tapFrame'](physio, { recording_id: rec.id });
      } catch (e) {
        err = e as AppError;
      }
      expect(err?.code).toBe('Validation');
      expect(err?.message).toMatch(/npm run capture -- process .*--tap cam_01:X,Y/);
    });

    it("processed from its videos, the untapped trial fails athlete_not_tapped (a second person at cam_01's edge) and the tapped one does not", async () => {
      const physio = as(seed.userIds.physio);
      const rec = (await h['capture.importTrial'](physio, {
        trial_dir: BALANCING,
        calibration_path: DEMO_CALIB,
        athlete_id: seed.linkedAthleteId,
        test: 'balance',
      })) as {
        id: string;
      };
      const codesAfterProcessing = async (): Promise<string[][]> => {
        let view = (await h['capture.process'](physio, { recording_id: rec.id, input: 'video', max_frames: 5 })) as {
          id: string;
          status: string;
          error: unknown;
          session_id: string | null;
        };
        for (const t0 = Date.now(); view.status === 'running' && Date.now() - t0 < 240_000;) {
          await new Promise((r) => setTimeout(r, 200));
          view = (await h['capture.job'](physio, { job_id: view.id })) as typeof view;
        }
        expect(view.error).toBeNull();
        expect(view.status).toBe('complete');
        const res = callVerb({ db, userId: seed.userIds.physio }, 'capture.getResults', { id: view.session_id! }) as {
          metrics: { conditions: { code: string }[] }[];
        };
        expect(res.metrics.length).toBeGreaterThan(0);
        return res.metrics.map((m) => m.conditions.map((c) => c.code));
      };
      for (const codes of await codesAfterProcessing()) expect(codes).toContain('athlete_not_tapped');
      await h['capture.tap'](physio, { recording_id: rec.id, camera: 'cam_01', x: 418, y: 745 });
      for (const codes of await codesAfterProcessing()) expect(codes).not.toContain('athlete_not_tapped');
    }, 600_000);
  },
);
