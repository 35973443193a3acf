/** The clinic's fee schedule: folders and their items (prices in USD). */
import { call } from '../bridge';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { formatCents, humanize } from '../format';

export function Fees() {
  const data = useLoad(() => call('rates.schedule', {}), 'fees');
  return (
    <Page page="fees" state={data.state} title="Fee schedule">
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {data.state === 'ready' ? (
        <div className="stack">
          {data.data.folders.length === 0 ? <p className="muted">No fee folders yet.</p> : null}
          {data.data.folders.map((f) => (
            <section key={f.id} className="card" aria-labelledby={`fee-${f.id}`}>
              <h2 id={`fee-${f.id}`}>{f.name}</h2>
              <table className="table">
                <thead><tr><th scope="col">Code</th><th scope="col">Item</th><th scope="col">Type</th><th scope="col" className="num">Price</th></tr></thead>
                <tbody>
                  {f.items.map((i) => (
                    <tr key={i.id}><td><code>{i.code}</code></td><th scope="row">{i.name}</th><td>{humanize(i.item_type)}</td><td className="num">{formatCents(i.price_cents)}</td></tr>
                  ))}
                </tbody>
              </table>
            </section>
          ))}
        </div>
      ) : null}
    </Page>
  );
}
