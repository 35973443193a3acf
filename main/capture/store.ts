/**
 * The one place the capture command writes to and reads from the database: through the
 * service layer (`capture.recordSession`, `pose.getMetrics`) as a real user, never by SQL.
 */
import { existsSync } from 'node:fs';
import { AppError } from '../../models/errors';
import { planWrite } from '../services/verb';
import type { PoseMetricInput } from '../../models/capture/metrics';
import { openDb, type Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { callVerb, VERB_IMPLS } from '../services';
import { CaptureInputError } from './errors';

/** Session fields recorded with the metrics (see `capture.recordSession`). */
export interface SessionRecord {
  athleteId: string;
  rigId?: string | null;
  recordedAt: string;
  trialName: string;
  fps: number;
  frameCount: number;
  cameraCount: number;
  source: 'video' | 'keypoints_json' | 'live';
  trcPath: string | null;
  notes: string;
}

export interface CaptureStore {
  /** Email of the user the readings are recorded as. */
  readonly actorEmail: string;
  /**
   * Check, without writing anything, that this user may record a capture for this athlete
   * (permission, tenant, athlete exists). @throws CaptureInputError ('bad_argument')
   */
  preflight(athleteId: string): void;
  /** Store the trial and its readings; returns the new capture_session id. */
  recordSession(session: SessionRecord, metrics: PoseMetricInput[]): { captureSessionId: string; metricCount: number };
  /** `pose.getMetrics` for the athlete (optionally one session). */
  getPoseMetrics(athleteId: string, captureSessionId?: string): { metrics: Record<string, unknown>[] };
  close(): void;
}

/**
 * Open the database at `dbPath` acting as `asEmail`. The recording user is never guessed: a
 * missing or unknown email is refused, and the service layer then checks that this user may run
 * captures for this athlete (`capture.run`, tenant).
 * @throws CaptureInputError ('bad_argument')
 */
export function openCaptureStore(dbPath: string, athleteId: string, asEmail?: string): CaptureStore {
  if (!asEmail)
    throw new CaptureInputError(
      'bad_argument',
      `say who is recording: add --as EMAIL (a user of athlete ${athleteId}'s organisation whose role may run captures; list users with \`npm run cli -- users --db ${dbPath}\`)`,
    );
  if (!existsSync(dbPath))
    throw new CaptureInputError('bad_argument', `no database at ${dbPath}; create one with \`npm run cli -- seed --db ${dbPath}\` or check the path`);
  let db: Db;
  try {
    db = openDb(dbPath);
  } catch (e) {
    throw new CaptureInputError('bad_argument', `cannot open database ${dbPath}: ${(e as Error).message}`);
  }
  const user = findUserByEmail(db, asEmail);
  if (!user) {
    db.close();
    throw new CaptureInputError('bad_argument', `no user ${asEmail} in ${dbPath}`);
  }
  const ctx = { db, userId: user.id };
  return {
    actorEmail: user.email,
    preflight(id) {
      try {
        planWrite(ctx, VERB_IMPLS['capture.recordSession'], {
          athlete_id: id,
          recorded_at: new Date().toISOString(),
          fps: 30,
          frame_count: 1,
          camera_count: 2,
          source: 'video',
          metrics: [],
        });
      } catch (e) {
        if (e instanceof AppError) throw new CaptureInputError('bad_argument', `${asEmail} cannot record a capture for athlete ${id}: ${e.message}`);
        throw e;
      }
    },
    recordSession(s, metrics) {
      const res = callVerb(ctx, 'capture.recordSession', {
        athlete_id: s.athleteId,
        rig_id: s.rigId ?? null,
        recorded_at: s.recordedAt,
        trial_name: s.trialName,
        fps: s.fps,
        frame_count: s.frameCount,
        camera_count: s.cameraCount,
        source: s.source,
        trc_path: s.trcPath,
        notes: s.notes,
        metrics,
      });
      const session = res.changeset.changes.find((c) => c.op === 'insert' && c.table === 'capture_session');
      if (!session) throw new Error('capture.recordSession stored no capture_session');
      return { captureSessionId: session.id, metricCount: res.changeset.changes.filter((c) => c.table === 'pose_metric').length };
    },
    getPoseMetrics(athleteId, captureSessionId) {
      return callVerb(ctx, 'pose.getMetrics', {
        athlete_id: athleteId,
        ...(captureSessionId ? { capture_session_id: captureSessionId } : {}),
        limit: 500,
      });
    },
    close: () => db.close(),
  };
}
