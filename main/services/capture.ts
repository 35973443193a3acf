/** Capture sessions and pose metrics: every reading with the conditions it was measured under. */
import { z } from 'zod';
import { PoseMetricInput } from '../../models/capture/metrics';
import * as I from '../../models/inputs';
import type { CaptureSession, PoseMetric } from '../../models/records';
import { Id, IsoDateTime } from '../../models/records';
import { listRows } from '../data/rows';
import { visibleAthlete } from './athletes';
import { insertRow } from './plan';
import { athleteFilter, listScoped, visibleRow } from './scope';
import { readVerb, writeVerb } from './verb';

/** The fields `get_pose_metrics` returns for each reading: the value and all its conditions. */
export const POSE_METRIC_FIELDS = [
  'id', 'capture_session_id', 'joint', 'side', 'statistic', 'value_deg', 'omitted_reason', 'camera_count', 'camera_mode',
  'view_obliquity_deg', 'obliquity_band', 'view_matches_declared', 'coverage', 'trustworthy', 'sagittal_ratio', 'frames',
] as const;

export const getPoseMetrics = readVerb({
  name: 'pose.getMetrics',
  description: "An athlete's joint-angle readings (degrees) with their conditions: camera count and mode, view obliquity and band, whether the view matches the declared layout, coverage, trustworthy, and why a reading was omitted.",
  permission: 'pose.read',
  input: I.GetPoseMetrics,
  run(vc, i) {
    const id = athleteFilter(vc, i.athlete_id)!;
    const rows = listRows<PoseMetric>(vc.db, 'pose_metric', vc.actor.orgId, { eq: { athlete_id: id, capture_session_id: i.capture_session_id }, orderBy: [{ column: 'created_at', desc: true }, { column: 'joint' }, { column: 'side' }], limit: i.limit, offset: i.offset });
    const metrics = rows.map((r) => Object.fromEntries(POSE_METRIC_FIELDS.map((f) => [f, r[f]])));
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

export const listCaptureSessions = readVerb({
  name: 'capture.listSessions',
  description: 'Capture sessions (trials) of an athlete, newest first.',
  permission: 'pose.read',
  input: I.ListByAthlete,
  run(vc, i) {
    const r = listScoped<CaptureSession>(vc, 'capture_session', i.athlete_id, { orderBy: [{ column: 'recorded_at', desc: true }], limit: i.limit, offset: i.offset });
    return { total: r.total, sessions: r.rows };
  },
});

export const getCaptureSession = readVerb({
  name: 'capture.getSession',
  description: 'One capture session.',
  permission: 'pose.read',
  input: I.ById,
  run: (vc, i) => visibleRow<CaptureSession>(vc, 'capture_session', i.id, 'Capture session'),
});

/** Input of `capture.recordSession`: one processed trial and its pose metrics. */
export const RecordCaptureSession = z.object({
  athlete_id: Id,
  rig_id: Id.nullable().default(null),
  recorded_at: IsoDateTime,
  trial_name: z.string().max(200).default(''),
  fps: z.number().min(0).max(1000),
  frame_count: z.number().int().min(0),
  camera_count: z.number().int().min(0).max(32),
  source: z.enum(['video', 'keypoints_json', 'live']),
  trc_path: z.string().nullable().default(null),
  notes: z.string().max(5000).default(''),
  metrics: z.array(PoseMetricInput).max(500),
}).strict();

export const recordSession = writeVerb({
  name: 'capture.recordSession',
  description: 'Store a processed capture trial and its pose metrics (every reading with its conditions).',
  permission: 'capture.run',
  input: RecordCaptureSession,
  plan(vc, i) {
    const a = visibleAthlete(vc, i.athlete_id);
    const { metrics, ...session } = i;
    const s = insertRow('capture_session', { ...session, status: 'complete' });
    const rows = metrics.map((m) => insertRow('pose_metric', { ...m, athlete_id: a.id, capture_session_id: s.id }));
    return { planned: { verb: 'capture.recordSession', summary: `Store capture ${i.trial_name || s.id} for ${a.name} (${metrics.length} readings)`, changes: [s, ...rows] } };
  },
});
