/**
 * One capture session's results (`capture.getResults`): per joint, the angle time series (left and
 * right) with the conditions of each side beside the chart (trustworthy and why not, camera mode,
 * view, coverage); a refused side is shown as refused with its reason; the peak of every joint per
 * repetition; and the athlete's previous session of the same test side by side, with the reasons a
 * difference cannot be read (other camera configuration, not trustworthy, no measured MDC).
 */
import { useEffect } from 'react';
import type { CallOutput } from '../../../../models/contract';
import { POSE_JOINTS } from '../../../../models/capture/metrics';
import { call } from '../../bridge';
import { LineChart } from '../../components/Charts';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { formatDateTime, humanize } from '../../format';
import { href } from '../../router';
import { DECLARED_VS_TRUSTWORTHY, sharedConditions } from '../athlete/Pose';
import { conditionLabel, JOINT_LABEL, jointInSentence, OMITTED, TEST_LABEL } from './labels';

type Results = CallOutput<'capture.getResults'>;
type Metric = Results['metrics'][number];
const SIDES = ['left', 'right'] as const;

/** The `peak` reading of a joint and side (it carries the conditions shared by that side's statistics). */
function reading(metrics: Metric[], joint: string, side: string, statistic = 'peak'): Metric | undefined {
  return metrics.find((m) => m.joint === joint && m.side === side && m.statistic === statistic);
}

function fmt(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : `${v.toFixed(1)}°`;
}

/** What every reading of the session carries: said once above the charts, not on each side. */
interface SessionWide {
  /** Condition keys (`code|detail`) every valued reading carries. */
  conditions: ReadonlySet<string>;
  /** No reading's view matches a declared layout (none declared, or the cameras moved): said once. */
  layoutOnce: boolean;
}

/** Conditions of one side's reading, beside its chart (less what the whole session carries). */
function SideConditions({ m, side, wide }: { m: Metric | undefined; side: string; wide: SessionWide }) {
  if (!m) return <div className="muted small">{humanize(side)}: no reading.</div>;
  if (m.value_deg === null) {
    const why = OMITTED[m.omitted_reason ?? ''];
    return (
      <div className="side-cond" data-side={side} data-refused="true">
        <strong>{humanize(side)}</strong> <span className="badge muted">Refused</span>
        <p className="small" data-omitted-reason={m.omitted_reason ?? ''}>
          {why?.long ?? m.omitted_reason ?? 'No reason recorded.'}
        </p>
      </div>
    );
  }
  return (
    <div className="side-cond" data-side={side} data-trustworthy={m.trustworthy ? 'true' : 'false'}>
      <strong>{humanize(side)}</strong> {m.trustworthy ? <span className="badge ok">Trustworthy</span> : <span className="badge warn">Not trustworthy</span>}
      <dl className="facts small">
        <dt>Cameras</dt>
        <dd>{m.camera_mode}</dd>
        <dt>View</dt>
        <dd>
          {humanize(m.obliquity_band)}
          {m.view_obliquity_deg === null ? '' : ` (${m.view_obliquity_deg.toFixed(0)}° from side-on)`}
          {m.view_matches_declared || wide.layoutOnce ? '' : ' · differs from the declared layout (see above)'}
        </dd>
        <dt>Coverage</dt>
        <dd>{Math.round(m.coverage * 100)} % of frames</dd>
      </dl>
      {(m.conditions ?? []).some((c) => !wide.conditions.has(`${c.code}|${c.detail}`)) ? (
        <ul className="small conditions">
          {(m.conditions ?? [])
            .filter((c) => !wide.conditions.has(`${c.code}|${c.detail}`))
            .map((c) => (
              <li key={c.code} data-condition={c.code}>
                <strong>{conditionLabel(c)}:</strong> {c.detail}
              </li>
            ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A joint: its chart (left and right over time) and the conditions of each side. */
function JointCard({ r, joint, wide }: { r: Results; joint: string; wide: SessionWide }) {
  const series = r.series?.series.filter((s) => s.joint === joint) ?? [];
  const fps = r.series?.fps ?? r.session.fps;
  const n = Math.max(0, ...series.map((s) => s.values.length));
  const values = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const lo = values.length ? Math.floor(Math.min(...values) / 10) * 10 : 0;
  const hi = values.length ? Math.ceil(Math.max(...values) / 10) * 10 : 10;
  const labels = Array.from({ length: n }, (_, i) => `${(i / fps).toFixed(1)} s`);
  return (
    <section className="card joint-card" data-joint={joint}>
      <h3>{JOINT_LABEL[joint] ?? humanize(joint)}</h3>
      <div className="joint-body">
        <div className="joint-chart">
          {series.length > 0 ? (
            <LineChart
              title={`${JOINT_LABEL[joint] ?? humanize(joint)} (degrees) over time`}
              labels={labels}
              series={series.map((s) => ({ name: humanize(s.side), tone: s.side === 'left' ? 's1' : 's2', values: s.values }))}
              min={lo}
              max={hi === lo ? lo + 10 : hi}
              unit="°"
              compact
            />
          ) : (
            <p className="muted small">No time series: both sides were refused.</p>
          )}
        </div>
        <div className="joint-conditions">
          {SIDES.map((side) => (
            <SideConditions key={side} side={side} m={reading(r.metrics, joint, side)} wide={wide} />
          ))}
        </div>
      </div>
    </section>
  );
}

function Repetitions({ r }: { r: Results }) {
  const reps = r.repetitions.repetitions;
  const basis = r.repetitions.basis;
  if (!r.series) return <p className="muted">This session stored no time series, so repetitions cannot be found.</p>;
  if (reps.length === 0)
    return (
      <p className="muted" data-repetitions="0">
        No repetitions found in {basis ? `${humanize(basis.side).toLowerCase()} ${jointInSentence(basis.joint)}` : 'the series'} (no peak rising 20° or more
        above its surroundings): a held posture or a single movement. The whole trial&apos;s peak is in the readings above.
      </p>
    );
  const rows = r.series.series;
  return (
    <div className="table-scroll">
      <table className="table" data-repetitions={reps.length}>
        <caption className="small muted">
          Repetitions found in {basis ? `${basis.side} ${jointInSentence(basis.joint)}` : ''}; peak of each joint within each (degrees).
        </caption>
        <thead>
          <tr>
            <th scope="col">Joint</th>
            {reps.map((x) => (
              <th key={x.index} scope="col" className="num">
                Rep {x.index}
                <div className="muted small">
                  {(x.start_frame / r.series!.fps).toFixed(1)}–{(x.end_frame / r.series!.fps).toFixed(1)} s
                </div>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={`${s.joint}-${s.side}`}>
              <th scope="row">
                {JOINT_LABEL[s.joint] ?? s.joint} <span className="muted small">{s.side}</span>
              </th>
              {reps.map((x) => (
                <td key={x.index} className="num">
                  {fmt(x.peaks.find((p) => p.joint === s.joint && p.side === s.side)?.peak_deg)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Comparison({ r }: { r: Results }) {
  const prev = r.previous;
  if (!r.session.test) return <p className="muted">This session does not say which test it recorded, so there is nothing to compare it with.</p>;
  if (!prev)
    return (
      <p className="muted" data-comparison="none">
        No earlier {TEST_LABEL[r.session.test]?.toLowerCase()} session for this athlete.
      </p>
    );
  const keys = [...new Map(r.metrics.map((m) => [`${m.joint}|${m.side}`, m])).values()];
  return (
    <div className="table-scroll">
      <table className="table" data-comparison={prev.session.id}>
        <caption className="small muted">
          Peak values against the previous {TEST_LABEL[r.session.test]?.toLowerCase()} session,{' '}
          <a href={href({ page: 'capture', tab: 'results', id: prev.session.id })}>{formatDateTime(prev.session.recorded_at)}</a>.
        </caption>
        <thead>
          <tr>
            <th scope="col">Joint</th>
            <th scope="col" className="num">
              This session
            </th>
            <th scope="col" className="num">
              Previous
            </th>
            <th scope="col" className="num">
              Difference
            </th>
            <th scope="col">Can it be read?</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => {
            const now = reading(r.metrics, k.joint, k.side);
            const before = reading(prev.metrics, k.joint, k.side);
            const why: string[] = [];
            if (!now || now.value_deg === null || !before || before.value_deg === null) why.push('refused in one session');
            else {
              if (now.camera_mode !== before.camera_mode) why.push('different camera configuration');
              if (!now.trustworthy || !before.trustworthy) why.push('not trustworthy in one session');
            }
            const diff = now?.value_deg != null && before?.value_deg != null ? now.value_deg - before.value_deg : null;
            return (
              <tr key={`${k.joint}-${k.side}`} data-compare={`${k.joint}-${k.side}`}>
                <th scope="row">
                  {JOINT_LABEL[k.joint] ?? k.joint} <span className="muted small">{k.side}</span>
                </th>
                <td className="num">{fmt(now?.value_deg)}</td>
                <td className="num">{fmt(before?.value_deg)}</td>
                <td className={`num${why.length ? ' muted' : ''}`}>{diff === null ? '—' : `${diff > 0 ? '+' : ''}${diff.toFixed(1)}°`}</td>
                <td className="small">
                  {why.length ? why.join('; ') : 'same configuration, both trustworthy (no measured MDC: not an improvement or a decline)'}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The results of one session; reports its load state to the page frame. */
export function ResultsView({ id, onState, onTitle }: { id: string; onState: (s: 'loading' | 'ready' | 'error') => void; onTitle: (t: string) => void }) {
  const data = useLoad(async () => {
    const r = await call('capture.getResults', { id });
    const a = await call('athletes.get', { id: r.session.athlete_id }).catch(() => null);
    return { r, athlete: a?.name ?? 'Athlete' };
  }, id);
  useEffect(() => onState(data.state), [data.state, onState]);
  useEffect(() => {
    if (data.state === 'ready') onTitle(`${data.data.athlete} — ${TEST_LABEL[data.data.r.session.test] ?? data.data.r.session.test}`);
  }, [data, onTitle]);
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const { r, athlete } = data.data;
  // Clinical order (knee, hip, shoulder, elbow, ankle, then the frontal-plane angles), not alphabetical.
  const joints = [...new Set(r.metrics.map((m) => m.joint))].sort((a, b) => POSE_JOINTS.indexOf(a) - POSE_JOINTS.indexOf(b));
  const valued = r.metrics.filter((m) => m.value_deg !== null);
  const shared = sharedConditions(valued);
  const wide: SessionWide = { conditions: new Set(shared.keys()), layoutOnce: valued.length > 0 && valued.every((m) => !m.view_matches_declared) };
  return (
    <div className="stack results" data-session={r.session.id}>
      <p className="muted small">
        <a href={href({ page: 'athlete', id: r.session.athlete_id, tab: 'pose' })}>{athlete}</a> · {r.session.trial_name || 'Capture'} ·{' '}
        {formatDateTime(r.session.recorded_at)} · {r.session.camera_count} camera{r.session.camera_count === 1 ? '' : 's'} · {r.session.fps} fps ·{' '}
        {r.session.frame_count} frames · from {humanize(r.session.source).toLowerCase()}
      </p>
      <aside className="caveats" aria-label="Caveats">
        <strong>Read these first</strong>
        <ul>
          {r.caveats.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      </aside>
      {shared.size > 0 || wide.layoutOnce ? (
        <section className="card" aria-label="Conditions of every reading" data-session-conditions>
          <strong>Every reading of this session</strong>
          <ul className="small conditions">
            {[...shared.values()].map((c) => (
              <li key={c.code} data-condition={c.code}>
                <strong>{conditionLabel(c)}:</strong> {c.detail}
              </li>
            ))}
            {wide.layoutOnce ? (
              <li data-condition="view_differs_from_declared">
                <strong>View differs from the declared layout.</strong> {DECLARED_VS_TRUSTWORTHY}
              </li>
            ) : null}
          </ul>
        </section>
      ) : null}
      <h2>Angles over time</h2>
      {joints.map((j) => (
        <JointCard key={j} r={r} joint={j} wide={wide} />
      ))}
      <h2>Peak per repetition</h2>
      <Repetitions r={r} />
      <h2>Against the previous session</h2>
      <Comparison r={r} />
    </div>
  );
}
