/** Screening results, newest first. */
import { useEffect } from 'react';
import { call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { formatDate, humanize } from '../../format';

export function ScreeningsTab({ athleteId, onState }: { athleteId: string; onState: (s: 'loading' | 'ready' | 'error') => void }) {
  const data = useLoad(() => call('screenings.list', { athlete_id: athleteId, limit: 500 }), athleteId);
  useEffect(() => onState(data.state), [data.state, onState]);
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  if (data.data.screenings.length === 0) return <p className="muted">No screenings recorded.</p>;
  return (
    <table className="table">
      <thead><tr><th scope="col">Date</th><th scope="col">Test</th><th scope="col">Side</th><th scope="col" className="num">Value</th><th scope="col">Notes</th></tr></thead>
      <tbody>
        {data.data.screenings.map((s) => (
          <tr key={s.id}>
            <td>{formatDate(s.date)}</td>
            <th scope="row">{humanize(s.test)}</th>
            <td>{humanize(s.side)}</td>
            <td className="num">{s.value} {s.unit}</td>
            <td>{s.notes || <span className="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
