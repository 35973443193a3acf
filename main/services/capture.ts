/** Capture sessions and pose metrics: every reading with the conditions it was measured under. */
import * as I from '../../models/inputs';
import { ValidationError } from '../../models/errors';
import { parseAngleSeries, repetitionPeaks, type AngleSeries } from '../../models/capture/series';
import type { Camera, CaptureSession, PoseMetric, Rig } from '../../models/records';
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

/** A session without its time series (lists and the assistant read the summary; the results page reads the series). */
function withoutSeries(s: CaptureSession): Omit<CaptureSession, 'angle_series'> {
  const { angle_series: _series, ...rest } = s;
  return rest;
}

export const listCaptureSessions = readVerb('capture.listSessions', {
  run(vc, i) {
    const r = listScoped<CaptureSession>(vc, 'capture_session', i.athlete_id, {
      orderBy: [{ column: 'recorded_at', desc: true }],
      limit: i.limit,
      offset: i.offset,
    });
    return { total: r.total, sessions: r.rows.map(withoutSeries) };
  },
});

export const getCaptureSession = readVerb('capture.getSession', {
  run: (vc, i) => withoutSeries(visibleRow<CaptureSession>(vc, 'capture_session', i.id, 'Capture session')),
});

/** The stored series of a session, or null; a malformed stored value is a Validation error naming the session. */
function seriesOf(s: CaptureSession): AngleSeries | null {
  try {
    return parseAngleSeries(s.angle_series);
  } catch {
    throw new ValidationError(`Capture session ${s.id} has a malformed angle_series; re-process the trial.`);
  }
}

function metricsOf(vc: Parameters<typeof visibleAthlete>[0], s: CaptureSession) {
  return listRows<PoseMetric>(vc.db, 'pose_metric', vc.actor.orgId, {
    eq: { athlete_id: s.athlete_id, capture_session_id: s.id },
    orderBy: [{ column: 'joint' }, { column: 'side' }, { column: 'statistic' }],
    limit: 500,
  }).map((r) => pick(r, POSE_METRIC_FIELDS));
}

/**
 * One session's results: the session, its readings with their conditions, its angle time series,
 * the repetitions found in them with every joint's peak per repetition, and the athlete's previous
 * session of the same test (recorded earlier) with its readings, for comparison. Self-scoped like
 * every athlete read: another athlete's session is NotFound.
 */
export const getCaptureResults = readVerb('capture.getResults', {
  run(vc, i) {
    const s = visibleRow<CaptureSession>(vc, 'capture_session', i.id, 'Capture session');
    const series = seriesOf(s);
    let previous: { session: Omit<CaptureSession, 'angle_series'>; metrics: ReturnType<typeof metricsOf> } | null = null;
    if (s.test) {
      const earlier = listRows<CaptureSession>(vc.db, 'capture_session', vc.actor.orgId, {
        eq: { athlete_id: s.athlete_id, test: s.test, status: 'complete' },
        orderBy: [{ column: 'recorded_at', desc: true }],
        limit: 500,
      }).find((x) => x.id !== s.id && (x.recorded_at < s.recorded_at || (x.recorded_at === s.recorded_at && x.id < s.id)));
      if (earlier) previous = { session: withoutSeries(earlier), metrics: metricsOf(vc, earlier) };
    }
    return {
      session: withoutSeries(s),
      metrics: metricsOf(vc, s),
      series,
      repetitions: series ? repetitionPeaks(series, s.test) : { basis: null, repetitions: [] },
      previous,
      caveats: [
        'Test-retest reliability and minimum detectable change have not been measured; a difference from the previous session is not an improvement or a decline until they are.',
        'Readings from different camera configurations are not comparable as one figure.',
      ],
    };
  },
});

export const listRigs = readVerb('capture.listRigs', {
  run(vc) {
    const rigs = listRows<Rig>(vc.db, 'rig', vc.actor.orgId, { orderBy: [{ column: 'name' }], limit: 200 });
    const cams = listRows<Camera>(vc.db, 'camera', vc.actor.orgId, { orderBy: [{ column: 'name' }], limit: 2000 });
    return { rigs: rigs.map((r) => ({ ...r, cameras: cams.filter((c) => c.rig_id === r.id) })) };
  },
});

/** Input of `capture.recordSession` (models/inputs.ts). */
export const RecordCaptureSession = I.RecordCaptureSession;

export const recordSession = writeVerb('capture.recordSession', {
  plan(vc, i) {
    const a = visibleAthlete(vc, i.athlete_id);
    const { metrics, angle_series, ...session } = i;
    const s = insertRow('capture_session', { ...session, angle_series: angle_series ? JSON.stringify(angle_series) : '', status: 'complete' });
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
