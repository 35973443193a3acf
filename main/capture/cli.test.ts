import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseTrc } from '../../models/capture/trc';
import { openDb } from '../data/db';
import { listAllUsers } from '../data/identity';
import { seedDemo } from '../data/seed';
import { callVerb } from '../services';
import { formatTomlCalibration, loadTomlCalibration } from './calibration';
import { HELP, parseCrossCheck, runCaptureCli, tableCodes, type CaptureIo } from './cli';
import { compareWithTrc } from './compare';
import { hasAddon, openCvAddon } from './native/index';
import { processTrial } from './pipeline';
import { openCaptureStore } from './store';
import { ringCamera } from '../../models/capture/synthetic';
import { COCO17 } from '../../models/capture/keypoints';
import { INFO_CONDITIONS, modelDisagreementCondition, type ModelCrossCheck } from '../../models/capture/quality';
import { BALANCING, DEMO_CALIB, hasDemo, NO_DEMO, STATIC_TRIAL } from './testing/paths';

function io(): CaptureIo & { stdout: string; stderr: string } {
  const o = {
    stdout: '',
    stderr: '',
    isTTY: false,
    out(t: string) {
      o.stdout += t;
    },
    err(t: string) {
      o.stderr += t;
    },
  };
  return o;
}

async function run(args: string[]) {
  const i = io();
  const code = await runCaptureCli(args, i);
  return { code, ...i };
}

const tmp = () => mkdtempSync(path.join(tmpdir(), 'capture-'));

describe('capture command: arguments', () => {
  it('prints help and refuses unknown commands and options clearly', async () => {
    expect((await run(['help'])).stdout).toMatch(/npm run capture -- process <trial folder> --calib <toml>/);
    const a = await run(['explode']);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/unknown command "explode"/);
    expect((await run(['process', '/x'])).stderr).toMatch(/--calib <toml> is required/);
    expect((await run(['process', '/x', '--calib', 'c.toml', '--db', 'x.db'])).stderr).toMatch(/--athlete ID is required with --db/);
    expect((await run(['process', '/x', '--calib', 'c.toml', '--tap', 'nowhere'])).stderr).toMatch(/--tap must look like/);
    expect((await run(['process', '/x', '--calib', 'c.toml', '--model', 'yolo'])).stderr).toMatch(/--model must be/);
    expect((await run(['process', '/x', '--calib', 'c.toml', '--bogus'])).code).toBe(2);
    expect((await run(['process', '/x', '--calib', 'c.toml', '--cross-check', 'yolo'])).stderr).toMatch(/--cross-check must be one of/);
    const same = await run(['process', '/x', '--calib', 'c.toml', '--cross-check', 'movenet']);
    expect([same.code, same.stderr]).toEqual([2, expect.stringMatching(/--cross-check movenet is the model already used \(--model\)/)]);
    // the hint names the README's second model (MoveNet Thunder), not BlazePose (which flags nearly every reading)
    expect(same.stderr).toMatch(/e\.g\. movenet-thunder with the default movenet/);
    expect(same.stderr).not.toMatch(/blazepose/);
    const onJson = await run(['process', '/x', '--calib', 'c.toml', '--trial-keypoints', '--cross-check', 'movenet-thunder']);
    expect([onJson.code, onJson.stderr]).toEqual([2, expect.stringMatching(/--cross-check movenet-thunder runs a second 2D model on the videos/)]);
  });

  it('the second-model cross-check is on by default for video (MoveNet Thunder, or Lightning beside Thunder), none turns it off, keypoint JSON has none', () => {
    const lightning = { kind: 'movenet', variant: 'lightning' } as const,
      thunder = { kind: 'movenet', variant: 'thunder' } as const;
    expect(parseCrossCheck(undefined, lightning, false)).toEqual(thunder);
    expect(parseCrossCheck(undefined, { kind: 'blazepose', variant: 'full' }, false)).toEqual(thunder);
    expect(parseCrossCheck(undefined, thunder, false)).toEqual(lightning);
    expect(parseCrossCheck('none', lightning, false)).toBeUndefined();
    expect(parseCrossCheck(undefined, lightning, true)).toBeUndefined();
    expect(parseCrossCheck('none', lightning, true)).toBeUndefined();
    expect(parseCrossCheck('blazepose', lightning, false)).toEqual({ kind: 'blazepose', variant: 'full' });
    expect(() => parseCrossCheck('movenet-thunder', thunder, false)).toThrow(/already used/);
    expect(HELP).toMatch(/--cross-check NAME\|none/);
  });

  it("the table lists each code once, the cross-check's with its number", () => {
    const F = 10;
    const x: ModelCrossCheck = {
      primary: 'MoveNet Lightning',
      secondary: 'MoveNet Thunder',
      primarySet: COCO17,
      primaryPoints: new Float64Array(F * COCO17.length * 3),
      secondarySet: COCO17,
      secondaryPoints: new Float64Array(F * COCO17.length * 3),
    };
    const reported = Float64Array.from({ length: F }, (_, f) => 30 + f);
    const diff = modelDisagreementCondition(
      'knee_flexion',
      'left',
      reported,
      Float64Array.from(reported, (v) => v + 5.8),
      x,
    );
    const dis = modelDisagreementCondition(
      'knee_flexion',
      'left',
      reported,
      Float64Array.from(reported, (v) => v - 13.2),
      x,
    );
    expect(tableCodes({ omitted_reason: null, conditions: [diff] })).toBe('model_difference 5.8°');
    expect(tableCodes({ omitted_reason: null, conditions: [{ code: 'two_view_keypoints', detail: 'x' }, dis] })).toBe(
      'two_view_keypoints, model_disagreement 13.2°',
    );
    // an omitted reading's reason and a condition of the same code (rows stored before the fix) are listed once
    expect(tableCodes({ omitted_reason: 'low_coverage', conditions: [{ code: 'low_coverage', detail: 'only 30 %' }] })).toBe('low_coverage');
  });
  it('explains a missing or malformed calibration', async () => {
    const d = tmp();
    const r = await run(['process', d, '--calib', path.join(d, 'none.toml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/calibration file .* does not exist; pass --calib/);
    writeFileSync(path.join(d, 'bad.toml'), '[cam_1]\nsize = [10, 10]\n');
    expect((await run(['process', d, '--calib', path.join(d, 'bad.toml')])).stderr).toMatch(/no camera tables/);
  });
});

describe.skipIf(!hasAddon('opencv'))('capture command: bad video input (synthetic MJPEG videos)', () => {
  const W = 64,
    H = 48;
  function trial(spec: { name: string; frames: number; fps: number; w?: number; h?: number }[], calibSize: [number, number] = [W, H]) {
    const d = tmp();
    mkdirSync(path.join(d, 'videos'));
    const cv = openCvAddon();
    for (const s of spec) {
      const fr = { data: new Uint8Array((s.w ?? W) * (s.h ?? H) * 3).fill(100), width: s.w ?? W, height: s.h ?? H, channels: 3 };
      cv.writeVideo(
        path.join(d, 'videos', s.name),
        'MJPG',
        s.fps,
        Array.from({ length: s.frames }, () => fr),
      );
    }
    const cams = [0, 90, 180].map((y, i) => ({ ...ringCamera(`cam_0${i + 1}`, y), width: calibSize[0], height: calibSize[1] }));
    writeFileSync(path.join(d, 'calib.toml'), formatTomlCalibration(cams));
    return d;
  }
  const ok = (n: string, frames = 5, fps = 30) => ({ name: n, frames, fps });

  it('names a missing camera', async () => {
    const d = trial([ok('cam01.avi'), ok('cam02.avi')]);
    const r = await run(['process', d, '--calib', path.join(d, 'calib.toml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no video for camera cam_03/);
  });
  it('refuses a video whose camera has no calibration section (never silently dropped)', async () => {
    const d = trial([ok('cam01.avi'), ok('cam02.avi'), ok('cam03.avi'), ok('cam04.avi')]);
    const r = await run(['process', d, '--calib', path.join(d, 'calib.toml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cam04.avi matches no camera in the calibration by name/);
  });
  it('says so when the trial folder does not exist', async () => {
    const r = await run(['process', path.join(tmp(), 'nope'), '--calib', path.join(trial([ok('cam01.avi')]), 'calib.toml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/trial folder .* does not exist/);
  });
  it('refuses mismatched frame counts', async () => {
    const d = trial([ok('cam01.avi'), ok('cam02.avi', 7), ok('cam03.avi')]);
    const r = await run(['process', d, '--calib', path.join(d, 'calib.toml')]);
    expect(r.stderr).toMatch(/different frame counts \(cam01.avi: 5, cam02.avi: 7, cam03.avi: 5\)/);
  });
  it('refuses mismatched frame rates', async () => {
    const d = trial([ok('cam01.avi'), ok('cam02.avi', 5, 25), ok('cam03.avi')]);
    const r = await run(['process', d, '--calib', path.join(d, 'calib.toml')]);
    expect(r.stderr).toMatch(/different frame rates \(cam01.avi: 30 fps, cam02.avi: 25 fps/);
  });
  it('refuses a calibration that does not match the video size', async () => {
    const d = trial([ok('cam01.avi'), ok('cam02.avi'), ok('cam03.avi')], [1080, 1920]);
    const r = await run(['process', d, '--calib', path.join(d, 'calib.toml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cam01.avi is 64×48 px but camera cam_01 was calibrated at 1080×1920 px/);
  });
  it('refuses an empty or unreadable video', async () => {
    const d = trial([ok('cam01.avi'), ok('cam02.avi')]);
    writeFileSync(path.join(d, 'videos', 'cam03.avi'), '');
    expect((await run(['process', d, '--calib', path.join(d, 'calib.toml')])).stderr).toMatch(/cam03.avi is empty \(0 bytes\)/);
    writeFileSync(path.join(d, 'videos', 'cam03.avi'), 'this is not a video '.repeat(100));
    const r = await run(['process', d, '--calib', path.join(d, 'calib.toml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cam03.avi (cannot be opened as a video|has no decodable frame)/);
  });
  it('says so when the folder has no videos', async () => {
    const d = trial([]);
    expect((await run(['process', d, '--calib', path.join(d, 'calib.toml')])).stderr).toMatch(/has no videos/);
  });
});

describe.skipIf(!hasDemo)(`Pose2Sim demo BalancingTrial regression${hasDemo ? '' : ` (${NO_DEMO})`}`, () => {
  it('our 3D from their 2D JSON matches their TRC (median ≤ 10 mm per marker)', async () => {
    const r = await processTrial({ trialDir: BALANCING, calibPath: DEMO_CALIB, useTrialKeypoints: true });
    expect(r.frames).toBe(100);
    const trc = parseTrc(readFileSync(path.join(BALANCING, 'pose-3d', 'S00_P00_T01_BalancingTrial_0-100.trc'), 'utf8'));
    const c = compareWithTrc(r.filled, r.keypointSet, trc);
    expect(c.markers).toHaveLength(21);
    for (const m of c.markers) expect(m.medianMm).toBeLessThanOrEqual(10);
    expect(c.all.n).toBeGreaterThan(2000);
    // cameras excluded for > 15 px are counted per camera (cam_03 is the noisiest view, README)
    expect(Math.max(...r.triangulation.excludedCounts)).toBe(r.triangulation.excludedCounts[2]);
    expect(r.rows).toHaveLength(72);
    const knee = r.rows.find((x) => x.joint === 'knee_flexion' && x.side === 'left' && x.statistic === 'peak')!;
    expect(knee.value_deg).not.toBeNull();
    expect(knee.camera_count).toBe(4);
    // BODY_25B has heels and toes, so dorsiflexion is measured here (not with COCO-17 video input)
    expect(r.rows.find((x) => x.joint === 'ankle_dorsiflexion')!.omitted_reason).toBeNull();
  });

  it("a --cutoff the frame rate cannot carry is the caller's input: exit 2 with what to give (issue 14 review minor)", async () => {
    const r = await run(['process', BALANCING, '--calib', DEMO_CALIB, '--trial-keypoints', '--frames', '30', '--cross-check', 'none', '--cutoff', '40']);
    // before: exit 1 ("cutoff 40 Hz must be in (0, 30) Hz"), as if the run had failed
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--cutoff 40 Hz must be above 0 and below half this trial's frame rate \(30 Hz at 60 fps\)/);
  });

  it('refuses mismatched keypoint frame counts and a missing camera folder', async () => {
    const d = tmp();
    for (const cam of ['cam01', 'cam02', 'cam03', 'cam04']) {
      mkdirSync(path.join(d, `${cam}_json`));
      const n = cam === 'cam04' ? 3 : 4;
      for (let f = 0; f < n; f++)
        copyFileSync(path.join(BALANCING, 'pose-associated', `${cam}_json`, `${cam}.000${f}.json`), path.join(d, `${cam}_json`, `${cam}.000${f}.json`));
    }
    const dirs = ['cam01', 'cam02', 'cam03', 'cam04'].map((c) => path.join(d, `${c}_json`));
    const r = await run(['process', d, '--calib', DEMO_CALIB, '--keypoints', dirs.join(','), '--fps', '60']);
    expect(r.stderr).toMatch(/keypoint folders have different frame counts \(cam01_json: 4, cam02_json: 4, cam03_json: 4, cam04_json: 3\)/);
    const r2 = await run(['process', d, '--calib', DEMO_CALIB, '--keypoints', dirs.slice(0, 3).join(','), '--fps', '60']);
    expect(r2.stderr).toMatch(/no keypoint folder for camera cam_04/);
  });

  it('refuses the static trial videos with a 4-camera calibration sized differently', async () => {
    const d = tmp();
    const cams = loadTomlCalibration(DEMO_CALIB).map((c) => ({ ...c, width: 720, height: 1280 }));
    writeFileSync(path.join(d, 'calib.toml'), formatTomlCalibration(cams));
    const r = await run(['process', STATIC_TRIAL, '--calib', path.join(d, 'calib.toml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cam01.mp4 is 1088×1920 px but camera cam_01 was calibrated at 720×1280 px/);
  });

  describe('with a database', () => {
    let dbPath = '',
      athleteId = '',
      physioEmail = '';
    beforeAll(() => {
      dbPath = path.join(tmp(), 'clinic.sqlite');
      const db = openDb(dbPath);
      seedDemo(db, { seed: 2, today: '2026-03-15' });
      const u = listAllUsers(db).find((x) => x.email.startsWith('physio@'))!;
      physioEmail = u.email;
      const res = callVerb({ db, userId: u.id }, 'athletes.list', { limit: 1 }) as { athletes?: { id: string }[]; rows?: { id: string }[] };
      athleteId = (res.athletes ?? res.rows)![0]!.id;
      db.close();
    });

    it('process stores the session and pose_metric rows, read back through pose.getMetrics with every condition', async () => {
      const out = tmp();
      const r = await run([
        'process',
        BALANCING,
        '--calib',
        DEMO_CALIB,
        '--trial-keypoints',
        // 100 frames: 40 leave the sync check < 50 usable point pairs per camera (sync_unchecked, nothing trustworthy)
        '--frames',
        '100',
        '--db',
        dbPath,
        '--athlete',
        athleteId,
        '--as',
        physioEmail,
        '--out',
        out,
        '--json',
      ]);
      expect(r.stderr).toMatch(/triangulate +\[#+\] 1\/1 100%/);
      expect(r.code).toBe(0);
      const j = JSON.parse(r.stdout) as { stored: { captureSessionId: string; metricCount: number }; trc: string };
      expect(j.stored.metricCount).toBe(72);
      const trc = parseTrc(readFileSync(j.trc, 'utf8'));
      expect(trc.frames).toBe(100);
      const store = openCaptureStore(dbPath, athleteId, physioEmail);
      const got = store.getPoseMetrics(athleteId, j.stored.captureSessionId);
      store.close();
      expect(got.metrics).toHaveLength(72);
      expect(Object.keys(got.metrics[0]!).sort()).toEqual(
        [
          'camera_count',
          'camera_mode',
          'capture_session_id',
          'conditions',
          'coverage',
          'frames',
          'id',
          'joint',
          'obliquity_band',
          'omitted_reason',
          'sagittal_ratio',
          'side',
          'statistic',
          'trustworthy',
          'value_deg',
          'view_matches_declared',
          'view_obliquity_deg',
        ].sort(),
      );
      expect(
        got.metrics.every(
          (m) => m.camera_mode === '4 of 4 calibrated cameras · 2D from keypoint JSON · athlete auto-selected (largest person)' && m.frames === 100,
        ),
      ).toBe(true);
      // conditions are stored and read back as {code, detail} objects, beside trustworthy
      const stored = got.metrics as unknown as { trustworthy: boolean; conditions: { code: string; detail: string }[] }[];
      expect(stored.every((m) => Array.isArray(m.conditions) && m.conditions.every((c) => typeof c.code === 'string' && c.detail.length > 0))).toBe(true);
      // a trustworthy reading carries no failing condition; an untrustworthy one with a value names at least one
      const notes: string[] = [...INFO_CONDITIONS];
      // keypoint files: no second model ran, and every reading with a value says so, with why
      const valued = stored.filter((m) => (m as unknown as { value_deg: number | null }).value_deg !== null);
      expect(valued.length).toBeGreaterThan(0);
      for (const m of valued)
        expect(m.conditions.filter((c) => c.code === 'not_cross_checked')).toEqual([
          {
            code: 'not_cross_checked',
            detail: expect.stringMatching(/^2D points from one model \(the keypoint files\); no second model compared: the 2D came from keypoint files/),
          },
        ]);
      expect(stored.some((m) => m.trustworthy)).toBe(true);
      expect(stored.filter((m) => m.trustworthy).every((m) => m.conditions.every((c) => notes.includes(c.code)))).toBe(true);
      expect(
        (got.metrics as unknown as { trustworthy: boolean; value_deg: number | null; conditions: { code: string }[] }[])
          .filter((m) => !m.trustworthy && m.value_deg !== null)
          .every((m) => m.conditions.some((c) => !notes.includes(c.code))),
      ).toBe(true);
    });

    it('checks who records for which athlete before processing: a coach is refused, exit 2, no TRC written', async () => {
      const out = tmp();
      const r = await run([
        'process',
        BALANCING,
        '--calib',
        DEMO_CALIB,
        '--trial-keypoints',
        '--frames',
        '5',
        '--db',
        dbPath,
        '--athlete',
        athleteId,
        '--as',
        physioEmail.replace('physio@', 'coach@'),
        '--out',
        out,
        '--json',
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/cannot record a capture.*capture\.run/);
      expect(readdirSync(out)).toEqual([]);
    });

    it('refuses a database path that does not exist (creates nothing)', async () => {
      const missing = path.join(tmp(), 'nope', 'x.sqlite');
      const r = await run([
        'process',
        BALANCING,
        '--calib',
        DEMO_CALIB,
        '--trial-keypoints',
        '--frames',
        '5',
        '--db',
        missing,
        '--athlete',
        athleteId,
        '--as',
        physioEmail,
        '--json',
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/no database at/);
      expect(existsSync(missing)).toBe(false);
    });

    it('refuses to guess who is recording: --as is required with --db', async () => {
      const r = await run([
        'process',
        BALANCING,
        '--calib',
        DEMO_CALIB,
        '--trial-keypoints',
        '--frames',
        '5',
        '--db',
        dbPath,
        '--athlete',
        athleteId,
        '--out',
        tmp(),
        '--json',
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/say who is recording: add --as EMAIL/);
    });

    it('refuses a --layout naming an unknown camera, or only one camera', async () => {
      const bad = await run([
        'process',
        BALANCING,
        '--calib',
        DEMO_CALIB,
        '--trial-keypoints',
        '--frames',
        '5',
        '--layout',
        JSON.stringify([
          { camera: 'cam_09', label: 'front', yaw_deg: 0 },
          { camera: 'cam_01', label: 'front', yaw_deg: 0 },
        ]),
        '--out',
        tmp(),
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--layout names camera\(s\) not in the calibration: cam_09/);
      const one = await run([
        'process',
        BALANCING,
        '--calib',
        DEMO_CALIB,
        '--trial-keypoints',
        '--frames',
        '5',
        '--layout',
        JSON.stringify([{ camera: 'cam_01', label: 'front', yaw_deg: 0 }]),
        '--out',
        tmp(),
      ]);
      expect(one.code).toBe(2);
      expect(one.stderr).toMatch(/at least 2 cameras/);
    });

    it('marks every reading untrustworthy when the rig drifted from its declared layout', async () => {
      const layout = JSON.stringify([
        { camera: 'cam_01', label: 'front', yaw_deg: 0 },
        { camera: 'cam_02', label: 'front', yaw_deg: 0 },
        { camera: 'cam_03', label: 'back', yaw_deg: 180 },
        { camera: 'cam_04', label: 'back', yaw_deg: 180 },
      ]);
      const r = await run(['process', BALANCING, '--calib', DEMO_CALIB, '--trial-keypoints', '--frames', '30', '--layout', layout, '--out', tmp(), '--json']);
      expect(r.code).toBe(0);
      const j = JSON.parse(r.stdout) as { drift: { drifted: boolean }; metrics: { trustworthy: boolean; view_matches_declared: boolean }[] };
      expect(j.drift.drifted).toBe(true);
      expect(j.metrics.every((m) => !m.trustworthy && !m.view_matches_declared)).toBe(true);
    });

    it('prints the table with each code once per reading, and not_cross_checked beside keypoint-JSON readings', async () => {
      const r = await run(['process', BALANCING, '--calib', DEMO_CALIB, '--trial-keypoints', '--frames', '30', '--out', tmp()]);
      expect(r.code).toBe(0);
      const lines = r.stdout.split('\n');
      const head = lines.findIndex((l) => l.startsWith('joint '));
      const rows = lines.slice(head + 1, head + 19);
      expect(rows).toHaveLength(18);
      for (const row of rows) {
        const codes = (row.split(/\s{2,}/).at(-1) ?? '').split(', ');
        expect(new Set(codes).size, row).toBe(codes.length);
        if (/ (true|false) /.test(row) && !/omitted|observability_gate|not_measurable/.test(row)) expect(row).toMatch(/not_cross_checked/);
      }
    });
  });
});
