/**
 * Session loads (AU = RPE × minutes) and ACWR. The figures in the cards come from the service
 * (`workload.acwr`); the chart's ACWR line uses the same pure function from models/acwr.ts.
 */
import { useEffect, useState } from 'react';
import { hasPermission } from '../../../../models/roles';
import { useSession } from '../../store';
import { LoadFormDialog } from '../forms/LoadForms';
import type { AcwrResult } from '../../../../models/acwr';
import { computeAcwr } from '../../../../models/acwr';
import { call } from '../../bridge';
import { BarLineChart } from '../../components/Charts';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { addDays, formatDate, todayIso } from '../../format';

const DAYS = 42;

export function WorkloadTab({
  athleteId,
  athleteName,
  onState,
  onSaved,
}: {
  athleteId: string;
  athleteName: string;
  onState: (s: 'loading' | 'ready' | 'error') => void;
  onSaved(s: string): void;
}) {
  const me = useSession((s) => s.me)!;
  const [logging, setLogging] = useState(false);
  const canLog = hasPermission(me.role, 'workload.write');
  const action = canLog ? (
    <div className="row-actions">
      <button type="button" className="primary" data-action="log-load" onClick={() => setLogging(true)}>
        Log session load…
      </button>
    </div>
  ) : null;
  const dialog = logging ? (
    <LoadFormDialog
      squad={null}
      athlete={{ id: athleteId, name: athleteName }}
      onClose={() => setLogging(false)}
      onSaved={(s) => {
        setLogging(false);
        onSaved(s);
      }}
    />
  ) : null;
  const data = useLoad(async () => {
    const today = todayIso();
    const [loads, acwr] = await Promise.all([
      call('workload.listLoads', { athlete_id: athleteId, from: addDays(today, -(DAYS + 60)), limit: 1000 }),
      call('workload.acwr', { athlete_id: athleteId, method: 'both' }),
    ]);
    return { loads: loads.loads, acwr, today };
  }, athleteId);
  useEffect(() => onState(data.state), [data.state, onState]);
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return dialog;
  const { loads, acwr } = data.data;
  const end = acwr.as_of;
  const dates = Array.from({ length: DAYS }, (_, i) => addDays(end, i - DAYS + 1));
  const daily = new Map<string, number>();
  for (const l of loads) daily.set(l.date, (daily.get(l.date) ?? 0) + l.load_au);
  const series = loads.map((l) => ({ date: l.date, load_au: l.load_au }));
  // Days below the coverage rule have no point on the line (null), like the cards.
  const ratio = dates.map((d) => computeAcwr(series, d, 'rolling').ratio);
  const rolling = acwr.results.find((r) => r.method === 'rolling') ?? computeAcwr(series, end, 'rolling');
  return (
    <div className="stack">
      {dialog}
      {action}
      <div className="cards">
        {acwr.results.map((r) => (
          <AcwrCard key={r.method} r={r} />
        ))}
      </div>
      <BarLineChart
        title={`Daily load and rolling ACWR, last ${DAYS} days to ${formatDate(end)}`}
        labels={dates.map((d) => d.slice(5))}
        bars={dates.map((d) => daily.get(d) ?? 0)}
        barName="Daily load (AU)"
        line={{ name: `ACWR (rolling 7/28; ${coverageText(rolling)})`, values: ratio, max: 2, bands: [0.8, 1.3] }}
      />
    </div>
  );
}

function AcwrCard({ r }: { r: AcwrResult }) {
  return (
    <section className="card acwr" data-acwr={r.method} data-status={r.status}>
      <h2>ACWR — {r.method === 'rolling' ? 'rolling averages' : 'EWMA'}</h2>
      {r.status === 'ok' ? (
        <p className="big-number">{r.ratio?.toFixed(2)}</p>
      ) : (
        <p className="big-number muted">{r.status === 'insufficient_data' ? 'Insufficient data' : 'Undefined'}</p>
      )}
      <dl className="facts inline small">
        <dt>Acute ({r.acute_window_days} d)</dt>
        <dd>{r.acute_au === null ? '—' : `${r.acute_au.toFixed(0)} AU/day`}</dd>
        <dt>Chronic ({r.chronic_window_days} d)</dt>
        <dd>{r.chronic_au === null ? '—' : `${r.chronic_au.toFixed(0)} AU/day`}</dd>
        <dt>Coverage</dt>
        <dd data-testid="acwr-coverage">{coverageText(r)}</dd>
      </dl>
      <p className="small">{r.note}</p>
    </section>
  );
}

/** "7/7 acute days, 26/28 chronic days with data": the coverage shown beside every ratio. */
function coverageText(r: AcwrResult): string {
  return `${r.acute_days_of_data}/${r.acute_window_days} acute, ${r.days_of_data}/${r.chronic_window_days} chronic days with data`;
}
