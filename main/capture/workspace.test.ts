/**
 * The capture workspace with a real SQLite file, the real pipeline in a real child process and the
 * demo trial: import, process with per-stage progress, store through the service layer; a failure
 * names its stage and keeps the recording; cancel kills the process and keeps the recording; only
 * `capture.run` holders may use it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../models/errors';
import type { JobView } from '../../models/capture/jobs';
import { openDb, type Db } from '../data/db';
import { seedDemo, type SeedSummary } from '../data/seed';
import { captureHandlers, createCaptureWorkspace } from '../ipc/capture';
import { VERBS, callVerbByName } from '../services';
import type { CaptureWorkspace } from './workspace';
import { BALANCING, DEMO_CALIB, hasBodyPix, hasDemo, NO_DEMO } from './testing/paths';
import { hasAddon } from './native/index';
import { CROSS_CHECK_MODEL } from '../../models/capture/quality';
import { sqlite } from '../data/sqlite';

let dir: string, db: Db, seed: SeedSummary, ws: CaptureWorkspace;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const verb = (userId: string, name: string, input: unknown): any => callVerbByName({ db, userId }, VERBS, name as never, input as never);

async function until(ws: CaptureWorkspace, orgId: string, id: string, ok: (j: JobView) => boolean, ms = 120_000): Promise<JobView> {
  const t0 = Date.now();
  for (;;) {
    const j = ws.job(orgId, id);
    if (ok(j)) return j;
    if (Date.now() - t0 > ms) throw new Error(`job ${id} still ${j.status}: ${JSON.stringify(j.stages)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!hasDemo && process.env.CI !== 'true')(`capture workspace${hasDemo ? '' : ` (${NO_DEMO})`}`, () => {
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-capture-ws-'));
    db = openDb(path.join(dir, 'demo.sqlite'));
    seed = seedDemo(db, { seed: 1, today: '2026-11-20' });
    ws = createCaptureWorkspace(db, path.join(dir, 'captures'));
  });
  afterAll(() => {
    ws.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const base = () => ({
    org_id: seed.orgId,
    athlete_id: seed.linkedAthleteId,
    test: 'balance' as const,
    created_by: seed.userIds.physio,
    tap: null,
    rig_id: null,
  });

  it('imports the demo trial and processes it off the UI thread, every stage reported, results stored', async () => {
    const rec = ws.importTrial({ ...base(), recorded_at: '2026-11-19T10:00:00.000Z' }, BALANCING, DEMO_CALIB);
    expect(rec.videos).toEqual(['cam01.mp4', 'cam02.mp4', 'cam03.mp4', 'cam04.mp4']);
    expect(rec.has_keypoints).toBe(true);
    const started = ws.start(seed.orgId, seed.userIds.physio, rec.id, { input: 'keypoints' });
    expect(started.stages.map((s) => s.name)).toEqual(['decode', 'pose:cam_01', 'pose:cam_02', 'pose:cam_03', 'pose:cam_04', 'triangulate', 'angles']);
    const done = await until(ws, seed.orgId, started.id, (j) => j.status !== 'running');
    expect(done.error).toBeNull();
    expect(done.status).toBe('complete');
    expect(done.stages.every((s) => s.done === s.total)).toBe(true);
    const r = verb(seed.userIds.physio, 'capture.getResults', { id: done.session_id! });
    expect(r.session).toMatchObject({ test: 'balance', frame_count: 100, camera_count: 4, source: 'keypoints_json' });
    expect(r.series?.series.length).toBeGreaterThan(4);
    // The seeded demo session is the same test, recorded earlier: the comparison is there.
    expect(r.previous?.session.trial_name).toBe('S00_P00_T01_BalancingTrial');
    expect(ws.get(seed.orgId, rec.id)).toMatchObject({ status: 'processed', session_id: done.session_id });
    expect(fs.existsSync(r.session.trc_path!)).toBe(true);
  }, 180_000);

  it.skipIf((!hasBodyPix || !hasAddon('opencv')) && process.env.CI !== 'true')(
    'the app can ask for the second-model cross-check: it runs as its own stage in the child; refused on keypoint files',
    async () => {
      const h = captureHandlers<{ session: { userId: string | null } }>(db, ws, (c) => c.session.userId!);
      const as = { session: { userId: seed.userIds.physio } };
      const rec = ws.importTrial({ ...base(), recorded_at: '2026-11-19T10:30:00.000Z' }, BALANCING, DEMO_CALIB);
      expect(() => h['capture.process'](as, { recording_id: rec.id, input: 'keypoints', cross_check: 'blazepose' })).toThrow(
        /cross-check runs a 2D model on the videos/,
      );
      // the model the app's "Cross-check with a second model" option asks for (renderer JobProgress.tsx)
      const started = h['capture.process'](as, { recording_id: rec.id, input: 'video', max_frames: 2, cross_check: CROSS_CHECK_MODEL }) as JobView;
      expect(started.stages.map((s) => s.name)).toEqual([
        'decode',
        'pose:cam_01',
        'pose:cam_02',
        'pose:cam_03',
        'pose:cam_04',
        'cross-check',
        'triangulate',
        'angles',
      ]);
      // MoveNet Thunder ran on every camera's frames in the child (2 frames × 4 cameras) and the pipeline went on to the angles
      const after = await until(ws, seed.orgId, started.id, (j) => j.status !== 'running', 300_000);
      expect(after.stages.find((s) => s.name === 'cross-check')).toMatchObject({ done: 8, total: 8 });
      expect(after.stages.find((s) => s.name === 'angles')).toMatchObject({ done: 1, total: 1 });
      expect(after.status).toBe('complete');
      // stored: every reported reading carries the two models' difference (model_difference or model_disagreement) with its
      // number, or says it was not cross-checked because Thunder found none of its joints
      const r = verb(seed.userIds.physio, 'capture.getResults', { id: after.session_id! });
      const reported = (r.metrics as { value_deg: number | null; conditions: { code: string; detail: string }[] }[]).filter((m) => m.value_deg !== null);
      expect(reported.length).toBeGreaterThan(0);
      for (const m of reported) {
        const c = m.conditions.filter((x) => x.code === 'model_difference' || x.code === 'model_disagreement' || x.code === 'not_cross_checked');
        expect(c).toHaveLength(1);
        expect(c[0]!.detail).toMatch(
          /MoveNet Lightning and MoveNet Thunder differ by \d+\.\d° mean here|^2D points from one model \(MoveNet Lightning\); no second model compared: MoveNet Thunder ran/,
        );
      }
    },
    300_000,
  );

  it('a failure says which stage failed and why, and keeps the recording', async () => {
    const rec = ws.importTrial({ ...base(), recorded_at: '2026-11-19T11:00:00.000Z' }, BALANCING, DEMO_CALIB);
    const json = path.join(ws.root, rec.id, 'pose-associated', 'cam02_json', 'cam02.0000.json');
    fs.writeFileSync(json, '{ not json');
    const j = await until(ws, seed.orgId, ws.start(seed.orgId, seed.userIds.physio, rec.id, { input: 'keypoints' }).id, (x) => x.status !== 'running');
    expect(j.status).toBe('failed');
    expect(j.error?.stage).toBe('decode');
    expect(j.error?.message).toMatch(/cam02\.0000\.json/);
    const kept = ws.get(seed.orgId, rec.id);
    expect(kept).toMatchObject({ status: 'failed', last_error: j.error });
    expect(kept.videos).toHaveLength(4);
  }, 120_000);

  it('cancel kills the processing process; the recording stays, nothing is stored', async () => {
    const rec = ws.importTrial({ ...base(), recorded_at: '2026-11-19T12:00:00.000Z' }, BALANCING, DEMO_CALIB);
    const before = verb(seed.userIds.physio, 'capture.listSessions', { athlete_id: seed.linkedAthleteId }).total;
    const started = ws.start(seed.orgId, seed.userIds.physio, rec.id, { input: 'video' });
    await until(ws, seed.orgId, started.id, (j) => j.stages[0]!.done === 1);
    const c = ws.cancel(seed.orgId, started.id);
    expect(c.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 500));
    expect(ws.job(seed.orgId, started.id).status).toBe('cancelled');
    expect(ws.get(seed.orgId, rec.id)).toMatchObject({ status: 'recorded', session_id: null });
    expect(verb(seed.userIds.physio, 'capture.listSessions', { athlete_id: seed.linkedAthleteId }).total).toBe(before);
    // It can be processed again (nothing is left running for it).
    expect(() => ws.cancel(seed.orgId, started.id)).not.toThrow();
  }, 120_000);

  it('needs capture.run; another organisation sees no recording', () => {
    const h = captureHandlers<{ session: { userId: string | null } }>(db, ws, (c) => c.session.userId!);
    const as = (userId: string) => ({ session: { userId } });
    const list = (userId: string) => (h['capture.recordings'](as(userId), {}) as { recordings: unknown[] }).recordings;
    expect(list(seed.userIds.physio).length).toBeGreaterThan(0);
    for (const role of ['analyst', 'coach', 'athlete', 'admin'] as const) {
      try {
        list(seed.userIds[role]);
        throw new Error(`${role} was allowed`);
      } catch (e) {
        expect((e as AppError).code, role).toBe('Forbidden');
      }
    }
    const otherPhysio = (sqlite(db).prepare("SELECT id FROM app_user WHERE org_id = ? AND role = 'physio'").get(seed.secondOrgId) as { id: string }).id;
    expect(list(otherPhysio)).toEqual([]);
    const any = ws.list(seed.orgId)[0]!;
    expect(() => ws.get(seed.secondOrgId, any.id)).toThrow(/Recording/);
    // Importing for an athlete of another organisation is NotFound.
    try {
      h['capture.importTrial'](as(otherPhysio), { trial_dir: BALANCING, calibration_path: DEMO_CALIB, athlete_id: seed.linkedAthleteId, test: 'gait' });
      throw new Error('imported');
    } catch (e) {
      expect((e as AppError).code).toBe('NotFound');
    }
  });
});
