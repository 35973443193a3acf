/** Squads with their active athlete counts. */
import { call } from '../bridge';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';

export function Squads() {
  const data = useLoad(() => call('squads.list', {}), 'squads');
  return (
    <Page page="squads" state={data.state} title="Squads">
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {data.state === 'ready' ? (
        data.data.length === 0 ? <p className="muted">No squads yet.</p> : (
          <table className="table">
            <thead><tr><th scope="col">Squad</th><th scope="col">Season</th><th scope="col" className="num">Active athletes</th></tr></thead>
            <tbody>
              {data.data.map((s) => (
                <tr key={s.id} data-squad={s.name}><th scope="row">{s.name}</th><td>{s.season}</td><td className="num">{s.athlete_count}</td></tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </Page>
  );
}
