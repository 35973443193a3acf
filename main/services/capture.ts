/** Capture sessions and pose metrics: every reading with the conditions it was measured under. */
import * as I from '../../models/inputs';
import type { CaptureSession, PoseMetric } from '../../models/records';
import { listRows } from '../data/rows';
import { visibleAthlete } from './scope';
import { insertRow } from './plan';
import { athleteFilter, listScoped, visibleRow } from './scope';
import { readVerb, writeVerb } from './verb';

/** The fields `get_pose_metrics` returns for each reading: the value and all its conditions. */
export const POSE_METRIC_FIELDS = [
  'id',
  'capture_session_id',
  'joint',
  'side',
  'statistic',
  'value_deg',
  'omitted_reason',
  'camera_count',
  'camera_mode',
  'view_obliquity_deg',
  'obliquity_band',
  'view_matches_declared',
  'coverage',
  'trustworthy',
  'sagittal_ratio',
  'frames',
  'conditions',
] as const;

/** The `keys` of `row`, and nothing else. */
function pick<T, K extends keyof T>(row: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) out[k] = row[k];
  return out;
}

export const getPoseMetrics = readVerb('pose.getMetrics', {
  run(vc, i) {
    const id = athleteFilter(vc, i.athlete_id)!;
    const rows = listRows<PoseMetric>(vc.db, 'pose_metric', vc.actor.orgId, {
      eq: { athlete_id: id, capture_session_id: i.capture_session_id },
      orderBy: [{ column: 'created_at', desc: true }, { column: 'joint' }, { column: 'side' }],
      limit: i.limit,
      offset: i.offset,
    });
    const metrics = rows.map((r) => pick(r, POSE_METRIC_FIELDS));
    return {
      athlete_id: id,
      metrics,
      caveats: [
        'Test-retest reliability and minimum detectable change have not been measured; no "improved" threshold exists.',
        'Accuracy differs per camera configuration; readings from different configurations are not comparable as one figure.',
      ],
    };
  },
});

export const listCaptureSessions = readVerb('capture.listSessions', {
  run(vc, i) {
    const r = listScoped<CaptureSession>(vc, 'capture_session', i.athlete_id, {
      orderBy: [{ column: 'recorded_at', desc: true }],
      limit: i.limit,
      offset: i.offset,
    });
    return { total: r.total, sessions: r.rows };
  },
});

export const getCaptureSession = readVerb('capture.getSession', {
  run: (vc, i) => visibleRow<CaptureSession>(vc, 'capture_session', i.id, 'Capture session'),
});

/** Input of `capture.recordSession` (models/inputs.ts). */
export const RecordCaptureSession = I.RecordCaptureSession;

export const recordSession = writeVerb('capture.recordSession', {
  plan(vc, i) {
    const a = visibleAthlete(vc, i.athlete_id);
    const { metrics, ...session } = i;
    const s = insertRow('capture_session', { ...session, status: 'complete' });
    const rows = metrics.map((m) => insertRow('pose_metric', { ...m, athlete_id: a.id, capture_session_id: s.id }));
    return {
      planned: {
        verb: 'capture.recordSession',
        summary: `Store capture ${i.trial_name || s.id} for ${a.name} (${metrics.length} readings)`,
        changes: [s, ...rows],
      },
    };
  },
});
