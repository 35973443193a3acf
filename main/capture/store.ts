/**
 * The one place the capture command writes to and reads from the database: through the
 * service layer (`capture.recordSession`, `pose.getMetrics`) as a real user, never by SQL.
 */
import type { PoseMetricInput } from '../../models/capture/metrics';
import { hasPermission } from '../../models/roles';
import { openDb, type Db } from '../data/db';
import { findUserByEmail, listAllUsers } from '../data/identity';
import { getRow } from '../data/rows';
import { callVerb, VERBS } from '../services';
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
  /** Store the trial and its readings; returns the new capture_session id. */
  recordSession(session: SessionRecord, metrics: PoseMetricInput[]): { captureSessionId: string; metricCount: number };
  /** `pose.getMetrics` for the athlete (optionally one session). */
  getPoseMetrics(athleteId: string, captureSessionId?: string): { metrics: Record<string, unknown>[] };
  close(): void;
}

/**
 * Open the database at `dbPath` acting as `asEmail`; without it, as the first active user (by
 * email) of the athlete's organisation whose role may run captures.
 */
export function openCaptureStore(dbPath: string, athleteId: string, asEmail?: string): CaptureStore {
  let db: Db;
  try {
    db = openDb(dbPath);
  } catch (e) {
    throw new CaptureInputError('bad_argument', `cannot open database ${dbPath}: ${(e as Error).message}`);
  }
  let user = asEmail ? findUserByEmail(db, asEmail) : null;
  if (asEmail && !user) { db.close(); throw new CaptureInputError('bad_argument', `no user ${asEmail} in ${dbPath}`); }
  if (!user) {
    const users = listAllUsers(db);
    const orgId = [...new Set(users.map((u) => u.org_id))].find((org) => getRow(db, 'athlete', org, athleteId) !== null);
    if (!orgId) { db.close(); throw new CaptureInputError('bad_argument', `no athlete ${athleteId} in ${dbPath}`); }
    user = users.filter((u) => u.org_id === orgId && u.active && hasPermission(u.role, 'capture.run')).sort((a, b) => a.email.localeCompare(b.email))[0] ?? null;
    if (!user) { db.close(); throw new CaptureInputError('bad_argument', `nobody in athlete ${athleteId}'s organisation may run captures; pass --as EMAIL`); }
  }
  const ctx = { db, userId: user.id };
  return {
    actorEmail: user.email,
    recordSession(s, metrics) {
      const res = callVerb(ctx, VERBS, 'capture.recordSession', {
        athlete_id: s.athleteId, rig_id: s.rigId ?? null, recorded_at: s.recordedAt, trial_name: s.trialName, fps: s.fps,
        frame_count: s.frameCount, camera_count: s.cameraCount, source: s.source, trc_path: s.trcPath, notes: s.notes, metrics,
      }) as { changeset: { changes: { op: string; table: string; id: string }[] } };
      const session = res.changeset.changes.find((c) => c.op === 'insert' && c.table === 'capture_session');
      if (!session) throw new Error('capture.recordSession stored no capture_session');
      return { captureSessionId: session.id, metricCount: res.changeset.changes.filter((c) => c.table === 'pose_metric').length };
    },
    getPoseMetrics(athleteId, captureSessionId) {
      return callVerb(ctx, VERBS, 'pose.getMetrics', { athlete_id: athleteId, ...(captureSessionId ? { capture_session_id: captureSessionId } : {}), limit: 500 }) as { metrics: Record<string, unknown>[] };
    },
    close: () => db.close(),
  };
}
