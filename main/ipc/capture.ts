/**
 * The Capture page's operations (models/contract.ts `capture.*`): recordings, import, processing
 * jobs. Each needs `capture.run` (re-read per call); the athlete must be one the user may see; jobs
 * and recordings of another organisation are NotFound. Results are stored through the service
 * layer (`capture.recordSession`) as the user who started the job.
 */
import { NotConfigured } from '../../models/errors';
import type { Db } from '../data/db';
import { CaptureWorkspace, type StoreResults } from '../capture/workspace';
import { callVerb, requirePermission, resolveActor, type Actor } from '../services';
import type { Handlers } from '../../models/contract';

type CaptureOps = 'capture.recordings' | 'capture.importTrial' | 'capture.process' | 'capture.job' | 'capture.cancel';

/** The workspace under `dir`, storing results through `capture.recordSession` (idempotent per job). */
export function createCaptureWorkspace(db: Db, dir: string, log?: (l: string) => void): CaptureWorkspace {
  const store: StoreResults = (userId, rec, r, jobId) => {
    const out = callVerb(
      { db, userId },
      'capture.recordSession',
      {
        athlete_id: rec.athlete_id,
        rig_id: rec.rig_id,
        recorded_at: rec.recorded_at,
        trial_name: `${rec.test.replace(/_/g, ' ')} ${rec.recorded_at.slice(0, 16).replace('T', ' ')}`,
        fps: r.fps,
        frame_count: r.frames,
        camera_count: r.cameraCount,
        source: rec.origin === 'live' ? 'live' : r.source,
        trc_path: r.trcPath,
        notes: `Recording ${rec.id}${r.source === 'keypoints_json' ? ' (2D keypoints from files)' : ''}.`,
        test: rec.test,
        angle_series: r.series,
        metrics: r.rows,
      },
      { idempotencyKey: `capture-job-${jobId}` },
    );
    const s = out.changeset.changes.find((c) => c.table === 'capture_session');
    if (!s) throw new Error('capture.recordSession stored no capture_session');
    return s.id;
  };
  return new CaptureWorkspace(dir, store, log ? { log } : {});
}

/**
 * The guard every capture operation starts with: the workspace must exist (NotConfigured
 * otherwise), the caller must be signed in and hold `capture.run`. Returns the workspace, the
 * re-read actor and the user id. Shared by the capture, live-room and calibration handlers.
 * @throws NotConfigured, Unauthenticated, Forbidden
 */
export function captureRunner<Ctx>(db: Db, workspace: CaptureWorkspace | null | undefined, signedIn: (ctx: Ctx) => string) {
  return (ctx: Ctx): { ws: CaptureWorkspace; actor: Actor; userId: string } => {
    if (!workspace) throw new NotConfigured('Capture is not available in this app host.');
    const userId = signedIn(ctx);
    const actor = resolveActor({ db, userId });
    requirePermission({ db, userId }, actor, 'capture.run');
    return { ws: workspace, actor, userId };
  };
}

/** The `capture.*` handlers; without a workspace they answer NotConfigured. */
export function captureHandlers<Ctx extends { session: { userId: string | null } }>(
  db: Db,
  workspace: CaptureWorkspace | null | undefined,
  signedIn: (ctx: Ctx) => string,
): Pick<Handlers<Ctx>, CaptureOps> {
  const run = captureRunner(db, workspace, signedIn);
  return {
    'capture.recordings': (ctx) => {
      const { ws, actor } = run(ctx);
      return { recordings: ws.list(actor.orgId) };
    },
    'capture.importTrial': (ctx, i) => {
      const { ws, actor, userId } = run(ctx);
      // The athlete must be one this user may see (tenant, self-scope): NotFound otherwise.
      callVerb({ db, userId }, 'athletes.get', { id: i.athlete_id });
      return ws.importTrial(
        { org_id: actor.orgId, athlete_id: i.athlete_id, test: i.test, recorded_at: new Date().toISOString(), created_by: userId, tap: null, rig_id: null },
        i.trial_dir,
        i.calibration_path,
      );
    },
    'capture.process': (ctx, i) => {
      const { ws, actor, userId } = run(ctx);
      return ws.start(actor.orgId, userId, i.recording_id, {
        ...(i.input ? { input: i.input } : {}),
        maxFrames: i.max_frames ?? null,
        ...(i.cross_check ? { crossCheck: i.cross_check } : {}),
      });
    },
    'capture.job': (ctx, i) => {
      const { ws, actor } = run(ctx);
      return ws.job(actor.orgId, i.job_id);
    },
    'capture.cancel': (ctx, i) => {
      const { ws, actor } = run(ctx);
      return ws.cancel(actor.orgId, i.job_id);
    },
  };
}
