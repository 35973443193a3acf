/** Daily wellness (1–5 scales) and vitals (resting HR, HRV) over the last six weeks. */
import { useEffect, useState } from 'react';
import type { ErrorPayload } from '../../../../models/errors';
import type { Vitals, Wellness } from '../../../../models/records';
import { hasPermission } from '../../../../models/roles';
import { CallError, call } from '../../bridge';
import { LineChart } from '../../components/Charts';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { addDays, formatDate, todayIso } from '../../format';
import { useSession } from '../../store';

const DAYS = 42;

/** Dates from the latest record back DAYS days, oldest first. */
function window42(latest: string): string[] {
  return Array.from({ length: DAYS }, (_, i) => addDays(latest, i - DAYS + 1));
}

export function WellnessTab({ athleteId, onState }: { athleteId: string; onState: (s: 'loading' | 'ready' | 'error') => void }) {
  const me = useSession((s) => s.me)!;
  const data = useLoad(async () => {
    const [w, v] = await Promise.all([
      hasPermission(me.role, 'wellness.read') ? call('wellness.list', { athlete_id: athleteId, limit: DAYS }) : Promise.resolve({ total: 0, wellness: [] as Wellness[] }),
      hasPermission(me.role, 'vitals.read') ? call('vitals.list', { athlete_id: athleteId, limit: DAYS }) : Promise.resolve(null),
    ]);
    return { wellness: w.wellness, vitals: v?.vitals ?? null };
  }, athleteId);
  useEffect(() => onState(data.state), [data.state, onState]);
  // The form stays mounted while the charts reload after a submit (same place in the tree).
  const form = hasPermission(me.role, 'wellness.write') ? <WellnessForm athleteId={athleteId} onSaved={data.reload} /> : null;
  return <div className="stack">{form}<WellnessBody data={data} /></div>;
}

function WellnessBody({ data }: { data: ReturnType<typeof useLoad<{ wellness: Wellness[]; vitals: Vitals[] | null }>> }) {
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const { wellness, vitals } = data.data;
  const latest = [wellness[0]?.date, vitals?.[0]?.date].filter(Boolean).sort().pop();
  if (!latest) return <p className="muted">No wellness or vitals recorded.</p>;
  const dates = window42(latest);
  const byDate = new Map<string, Wellness>(wellness.map((w) => [w.date, w]));
  const vByDate = new Map<string, Vitals>((vitals ?? []).map((v) => [v.date, v]));
  const labels = dates.map((d) => d.slice(5));
  const pick = (k: 'sleep' | 'soreness' | 'stress' | 'mood' | 'fatigue') => dates.map((d) => byDate.get(d)?.[k] ?? null);
  return (
    <>
      {wellness.length ? <LineChart
        title={`Wellness, last ${DAYS} days (1–5; higher is better for sleep and mood, worse for soreness, stress and fatigue)`}
        labels={labels}
        min={1}
        max={5}
        ticks={[1, 2, 3, 4, 5]}
        series={[
          { name: 'Sleep', tone: 's1', values: pick('sleep') },
          { name: 'Mood', tone: 's2', values: pick('mood') },
          { name: 'Soreness', tone: 's3', values: pick('soreness') },
          { name: 'Stress', tone: 's4', values: pick('stress') },
          { name: 'Fatigue', tone: 's5', values: pick('fatigue') },
        ]}
      /> : null}
      {vitals ? (
        <LineChart
          title="Resting heart rate (bpm) and HRV rMSSD (ms)"
          labels={labels}
          min={0}
          max={Math.max(120, ...vitals.map((v) => v.hrv_rmssd_ms))}
          series={[
            { name: 'Resting HR (bpm)', tone: 's3', values: dates.map((d) => vByDate.get(d)?.resting_hr_bpm ?? null) },
            { name: 'HRV rMSSD (ms)', tone: 's1', values: dates.map((d) => vByDate.get(d)?.hrv_rmssd_ms ?? null) },
          ]}
        />
      ) : null}
      {wellness.length ? <h2>Latest entries</h2> : null}
      {wellness.length ? <table className="table">
        <thead><tr><th scope="col">Date</th><th scope="col" className="num">Sleep</th><th scope="col" className="num">Soreness</th><th scope="col" className="num">Stress</th><th scope="col" className="num">Mood</th><th scope="col" className="num">Fatigue</th><th scope="col">Notes</th></tr></thead>
        <tbody>
          {wellness.slice(0, 7).map((w) => (
            <tr key={w.id}><td>{formatDate(w.date)}</td><td className="num">{w.sleep}</td><td className="num">{w.soreness}</td><td className="num">{w.stress}</td><td className="num">{w.mood}</td><td className="num">{w.fatigue}</td><td>{w.notes || <span className="muted">—</span>}</td></tr>
          ))}
        </tbody>
      </table> : null}
    </>
  );
}

const SCALES = [
  { key: 'sleep', label: 'Sleep', hint: '1 poor – 5 great' },
  { key: 'soreness', label: 'Soreness', hint: '1 none – 5 very sore' },
  { key: 'stress', label: 'Stress', hint: '1 none – 5 very high' },
  { key: 'mood', label: 'Mood', hint: '1 low – 5 great' },
  { key: 'fatigue', label: 'Fatigue', hint: '1 fresh – 5 exhausted' },
] as const;

/** Today's wellness questionnaire (replaces today's answers if already submitted). */
function WellnessForm({ athleteId, onSaved }: { athleteId: string; onSaved(): void }) {
  const [values, setValues] = useState<Record<(typeof SCALES)[number]['key'], number>>({ sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 });
  const [notes, setNotes] = useState('');
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [saved, setSaved] = useState(false);
  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setError(null);
    setSaved(false);
    try {
      await call('wellness.submit', { athlete_id: athleteId, date: todayIso(), ...values, notes });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err instanceof CallError ? err.payload : { code: 'Internal', message: 'Saving failed.' });
    }
  }
  return (
    <form className="card wellness-form" onSubmit={(e) => void submit(e)} aria-labelledby="wellness-form-h">
      <h2 id="wellness-form-h">Today's wellness ({formatDate(todayIso())})</h2>
      <div className="filters">
        {SCALES.map((sc) => (
          <label key={sc.key}>
            {sc.label} <span className="small">({sc.hint})</span>
            <select value={values[sc.key]} onChange={(e) => setValues((v) => ({ ...v, [sc.key]: Number(e.target.value) }))}>
              {[1, 2, 3, 4, 5].map((n) => <option key={n} value={n}>{n}</option>)}
            </select>
          </label>
        ))}
        <label>
          Notes
          <input type="text" maxLength={2000} value={notes} onChange={(e) => setNotes(e.target.value)} />
        </label>
        <button type="submit" className="primary">Submit</button>
      </div>
      {saved ? <p className="ok-note" role="status">Saved for today.</p> : null}
      {error ? <ErrorNote error={error} /> : null}
    </form>
  );
}
