/**
 * Pose metrics: every joint-angle reading with the conditions it was measured under beside the
 * number (camera count and mode, view obliquity band, coverage, trustworthy, view vs declared
 * layout, and each failed quality check with what to do), and every omitted reading with its
 * reason. The service's caveats come first.
 *
 * A condition that holds for every reading of a session (the rig moved, the cameras were out of
 * step, a static trial) is said once, above that session's table, not on each of its rows; a row
 * lists only what applies to it alone. "View differs from declared layout" next to
 * "Trustworthy" always comes with the sentence that says why both can hold.
 */
import { useEffect } from 'react';
import type { PoseMetricView } from '../../../../models/contract';
import { call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { href } from '../../router';
import { formatDateTime, humanize } from '../../format';
import { CONDITION, conditionLabel, JOINT_LABEL, OMITTED } from '../capture/labels';

type Condition = NonNullable<PoseMetricView['conditions']>[number];
const conditionKey = (c: Condition) => `${c.code}|${c.detail}`;

/** Conditions every reading of `rows` carries (said once per session), by key. */
export function sharedConditions(rows: readonly PoseMetricView[]): Map<string, Condition> {
  const shared = new Map<string, Condition>();
  if (rows.length < 2) return shared;
  for (const c of rows[0]!.conditions ?? [])
    if (rows.every((m) => (m.conditions ?? []).some((x) => conditionKey(x) === conditionKey(c)))) shared.set(conditionKey(c), c);
  return shared;
}

/** Why a reading can be trustworthy while its view differs from the declared layout. */
export const DECLARED_VS_TRUSTWORTHY =
  'Trustworthy is judged from the view the cameras actually had (their calibrated positions: obliquity, coverage, quality checks). The declared layout is the room set-up written down for the rig; it does not match those positions (or none was declared), so check or update the layout — the reading itself is not in doubt.';

export function PoseTab({ athleteId, onState }: { athleteId: string; onState: (s: 'loading' | 'ready' | 'error') => void }) {
  const data = useLoad(async () => {
    const [m, s] = await Promise.all([
      call('pose.getMetrics', { athlete_id: athleteId, limit: 500 }),
      call('capture.listSessions', { athlete_id: athleteId, limit: 100 }),
    ]);
    return { metrics: m.metrics, caveats: m.caveats, sessions: s.sessions };
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
        const shared = sharedConditions(rows);
        const allDiffer = rows.length > 0 && rows.every((m) => !m.view_matches_declared);
        const own = (m: PoseMetricView) => (m.conditions ?? []).filter((c) => !shared.has(conditionKey(c)));
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
            {shared.size > 0 || allDiffer ? (
              <div className="session-conditions" data-session-conditions>
                <strong>For every reading of this session:</strong>
                <ul className="small">
                  {allDiffer ? (
                    <li data-session-condition="view_differs_from_declared">
                      <strong>View differs from declared layout.</strong>
                      {rows.some((m) => m.trustworthy) ? ` ${DECLARED_VS_TRUSTWORTHY}` : ''}
                    </li>
                  ) : null}
                  {[...shared.values()].map((c) => (
                    <li key={conditionKey(c)} data-session-condition={c.code}>
                      <strong>{CONDITION[c.code] ?? humanize(c.code)}:</strong> {c.detail}
                    </li>
                  ))}
                </ul>
              </div>
            ) : null}
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
                      {JOINT_LABEL[m.joint] ?? humanize(m.joint)}
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
                      {m.view_matches_declared || allDiffer ? null : (
                        <div className="small" data-declared-differs>
                          <span className="badge warn">View differs from declared layout</span>
                          {m.trustworthy ? <div className="muted">{DECLARED_VS_TRUSTWORTHY}</div> : null}
                        </div>
                      )}
                    </td>
                    <td className="num">{Math.round(m.coverage * 100)}%</td>
                    <td>
                      {m.trustworthy ? <span className="badge ok">Trustworthy</span> : <span className="badge warn">Not trustworthy</span>}
                      {own(m).map((c) => (
                        <div key={c.code} className="small" data-condition={c.code} title={c.detail}>
                          {conditionLabel(c)}
                        </div>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {rows.some((m) => own(m).length > 0) ? (
              <ul className="small reading-conditions" aria-label="Conditions of some readings">
                {[...new Map(rows.flatMap(own).map((c) => [conditionKey(c), c])).values()].map((c) => (
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
