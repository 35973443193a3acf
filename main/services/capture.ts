/** Capture sessions and pose metrics: every reading with the conditions it was measured under. */
import * as I from '../../models/inputs';
import { ValidationError } from '../../models/errors';
import { parseAngleSeries, repetitionPeaks, type AngleSeries } from '../../models/capture/series';
import type { Camera, CaptureSession, PoseMetric, Rig } from '../../models/records';
import { listRows } from '../data/rows';
import { visibleAthlete } from './scope';
import { insertRow, updateRow } from './plan';
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

/** Input of `capture.saveRig` (models/inputs.ts). */
export const SaveRig = I.SaveRig;

/**
 * `capture.saveRig`: a rig row (the room) and one camera row per calibrated camera
 * (`calibration` = JSON { K, dist, rvec, tvec }: px, Rodrigues rad, m). With `rig_id` the rig's
 * settings are updated and its cameras matched by name get the new calibration; a stored camera
 * missing from the input, or one too many, is a Validation error (save as a new rig instead).
 */
export const saveRig = writeVerb('capture.saveRig', {
  plan(vc, i) {
    const at = vc.now.toISOString();
    const camRow = (c: (typeof i.cameras)[number]) => ({
      name: c.name,
      width: c.width,
      height: c.height,
      calibration: JSON.stringify({ K: c.K, dist: c.dist, rvec: c.rvec, tvec: c.tvec }),
      reprojection_rms_px: c.reprojection_rms_px,
      calibrated_at: at,
    });
    const rigFields = {
      name: i.name,
      declared_layout: JSON.stringify(i.declared_layout),
      drift_tolerance_deg: i.drift_tolerance_deg,
      drift_tolerance_m: i.drift_tolerance_m,
    };
    if (!i.rig_id) {
      const rig = insertRow('rig', rigFields);
      return {
        planned: {
          verb: 'capture.saveRig',
          summary: `Save rig ${i.name} (${i.cameras.length} calibrated cameras)`,
          changes: [rig, ...i.cameras.map((c) => insertRow('camera', { ...camRow(c), rig_id: rig.id }))],
        },
      };
    }
    const rig = visibleRow<Rig>(vc, 'rig', i.rig_id, 'Rig');
    const stored = listRows<Camera>(vc.db, 'camera', vc.actor.orgId, { eq: { rig_id: rig.id }, limit: 2000 });
    const names = new Set(i.cameras.map((c) => c.name));
    const missing = stored.filter((c) => !names.has(c.name)).map((c) => c.name);
    if (missing.length || stored.length !== i.cameras.length)
      throw new ValidationError(
        `Rig ${rig.name} has cameras ${stored.map((c) => c.name).join(', ')}; this calibration has ${i.cameras.map((c) => c.name).join(', ')}. Save it as a new rig instead.`,
      );
    const changes = [
      updateRow('rig', rig, rigFields),
      ...i.cameras.map((c) =>
        updateRow(
          'camera',
          stored.find((s) => s.name === c.name)!,
          camRow(c),
        ),
      ),
    ].filter((x): x is NonNullable<typeof x> => x !== null);
    return { planned: { verb: 'capture.saveRig', summary: `Recalibrate rig ${rig.name} (${i.cameras.length} cameras)`, changes } };
  },
});
