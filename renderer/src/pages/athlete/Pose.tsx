/**
 * Pose metrics: every joint-angle reading with the conditions it was measured under beside the
 * number (camera count and mode, view obliquity band, coverage, trustworthy, view vs declared
 * layout, and each failed quality check with what to do), and every omitted reading with its
 * reason. The service's caveats come first.
 */
import { useEffect } from 'react';
import type { PoseMetricView } from '../../../../models/contract';
import { call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { href } from '../../router';
import { formatDateTime, humanize } from '../../format';
import { CONDITION, OMITTED } from '../capture/labels';

export function PoseTab({ athleteId, onState }: { athleteId: string; onState: (s: 'loading' | 'ready' | 'error') => void }) {
  const data = useLoad(async () => {
    const [m, s] = await Promise.all([
      call('pose.getMetrics', { athlete_id: athleteId, limit: 500 }),
      call('capture.listSessions', { athlete_id: athleteId, limit: 100 }),
    ]);
    return { metrics: m.metrics as unknown as PoseMetricView[], caveats: m.caveats, sessions: s.sessions };
  }, athleteId);
  useEffect(() => onState(data.state), [data.state, onState]);
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const { metrics, caveats, sessions } = data.data;
  return (
    <div className="stack">
      <aside className="caveats" aria-label="Caveats">
        <strong>Read these first</strong>
        <ul>
          {caveats.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      </aside>
      {sessions.length === 0 ? <p className="muted">No capture sessions for this athlete yet.</p> : null}
      {sessions.map((s) => {
        const rows = metrics.filter((m) => m.capture_session_id === s.id);
        return (
          <section key={s.id} className="card" data-capture={s.id}>
            <header className="card-head">
              <h2>
                <a href={href({ page: 'capture', tab: 'results', id: s.id })}>{s.trial_name || 'Capture'}</a> — {formatDateTime(s.recorded_at)}
              </h2>
              <span className="muted small">
                {s.camera_count} camera{s.camera_count === 1 ? '' : 's'} · {s.fps} fps · {s.frame_count} frames · {humanize(s.source)}
              </span>
            </header>
            {/* Value and its conditions side by side in one row: nothing the reader needs scrolls out of view at 1280×800. */}
            <table className="table pose">
              <thead>
                <tr>
                  <th scope="col">Joint</th>
                  <th scope="col" className="num">
                    Value
                  </th>
                  <th scope="col">Measured under</th>
                  <th scope="col" className="num">
                    Coverage
                  </th>
                  <th scope="col">Trustworthy</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((m) => (
                  <tr key={m.id} data-metric={`${m.joint}-${m.side}-${m.statistic}`} data-omitted={m.value_deg === null ? 'true' : 'false'}>
                    <th scope="row">
                      {humanize(m.joint)}
                      <div className="muted small">
                        {humanize(m.side)} · {humanize(m.statistic)}
                      </div>
                    </th>
                    <td className="num">
                      {m.value_deg === null ? (
                        <span className="omitted" title={OMITTED[m.omitted_reason ?? '']?.long}>
                          Omitted: {OMITTED[m.omitted_reason ?? '']?.short ?? m.omitted_reason ?? 'no reason recorded'}
                        </span>
                      ) : (
                        <strong>{m.value_deg.toFixed(1)}°</strong>
                      )}
                    </td>
                    <td>
                      <div>
                        {m.camera_count} camera{m.camera_count === 1 ? '' : 's'} · <span className="small">{m.camera_mode}</span>
                      </div>
                      <div className="small">
                        View {humanize(m.obliquity_band)}
                        {m.view_obliquity_deg === null ? '' : ` (${m.view_obliquity_deg.toFixed(0)}°)`}
                        {m.sagittal_ratio === null ? '' : ` · sagittal ratio ${m.sagittal_ratio.toFixed(2)}`}
                      </div>
                      {m.view_matches_declared ? null : <div className="badge warn small">View differs from declared layout</div>}
                    </td>
                    <td className="num">{Math.round(m.coverage * 100)}%</td>
                    <td>
                      {m.trustworthy ? <span className="badge ok">Trustworthy</span> : <span className="badge warn">Not trustworthy</span>}
                      {(m.conditions ?? []).map((c) => (
                        <div key={c.code} className="small" data-condition={c.code} title={c.detail}>
                          {CONDITION[c.code] ?? humanize(c.code)}
                        </div>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {rows.some((m) => (m.conditions ?? []).length > 0) ? (
              <ul className="small reading-conditions" aria-label="Conditions of these readings">
                {[...new Map(rows.flatMap((m) => m.conditions ?? []).map((c) => [`${c.code}|${c.detail}`, c])).values()].map((c) => (
                  <li key={`${c.code}|${c.detail}`}>
                    <strong>{CONDITION[c.code] ?? humanize(c.code)}:</strong> {c.detail}
                  </li>
                ))}
              </ul>
            ) : null}
            {rows.some((m) => m.value_deg === null) ? (
              <ul className="small omitted-reasons" aria-label="Why readings were omitted">
                {[...new Set(rows.filter((m) => m.value_deg === null).map((m) => m.omitted_reason ?? ''))].map((r) => (
                  <li key={r}>
                    <strong>Omitted — {OMITTED[r]?.short ?? r}:</strong> {OMITTED[r]?.long ?? 'No reason recorded.'}
                  </li>
                ))}
              </ul>
            ) : null}
          </section>
        );
      })}
    </div>
  );
}
