/**
 * The trace of one assistant run (linked from "via Assistant" activity rows): the request, each
 * tool call with masked arguments, its status and approver, the policy decisions and writes in
 * order, and the usage per model response. The run's own user opens it, and so does anyone in the
 * organisation who may read the activity log and every record the run read (an owner also while a
 * change of the run waits for their approval): main/kinetix/trace-access.ts.
 */
import { call } from '../bridge';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { formatDateTime } from '../format';
import { personName, useSession } from '../store';

export function RunTrace({ runId }: { runId: string }) {
  const people = useSession((s) => s.people);
  const data = useLoad(async () => await call('assistant.trace', { run_id: runId }), runId);
  return (
    <Page page="trace" state={data.state} title="Assistant run">
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {data.state === 'ready' ? (
        <div className="stack">
          <section className="card">
            <h2>Request</h2>
            <p className="small muted" data-run-user>
              Asked by {personName(people, data.data.run.user_id)}
            </p>
            <blockquote className="record-text">{data.data.run.request_text}</blockquote>
            <dl className="facts inline small">
              <dt>Status</dt>
              <dd>{data.data.run.status}</dd>
              <dt>Model</dt>
              <dd>{data.data.run.model}</dd>
              <dt>Page</dt>
              <dd>{data.data.run.page ?? '—'}</dd>
              <dt>Started</dt>
              <dd>{formatDateTime(data.data.run.started_at)}</dd>
              <dt>Steps</dt>
              <dd>{data.data.run.iterations}</dd>
              <dt>Cost</dt>
              <dd>${data.data.run.cost_usd.toFixed(4)}</dd>
            </dl>
            {data.data.run.error_message ? <p className="warn-text">{data.data.run.error_message}</p> : null}
          </section>
          <section className="card">
            <h2>Tool calls</h2>
            {data.data.toolCalls.length === 0 ? (
              <p className="muted">No tool calls.</p>
            ) : (
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Tool</th>
                    <th scope="col">Status</th>
                    <th scope="col">Arguments (masked)</th>
                    <th scope="col">Approver</th>
                  </tr>
                </thead>
                <tbody>
                  {data.data.toolCalls.map((t) => (
                    <tr key={t.id} data-tool-call={t.tool_name} data-status={t.status}>
                      <th scope="row">
                        {t.title}
                        <div className="muted small">
                          <code>{t.tool_name}</code>
                          {t.risk ? ` · ${t.risk}` : ''}
                        </div>
                      </th>
                      <td>
                        <span className="badge">{t.status}</span>
                      </td>
                      <td>
                        <pre className="small wrap">{t.args_json}</pre>
                      </td>
                      <td>{t.approver_user_id ? `${personName(people, t.approver_user_id)}, ${formatDateTime(t.decided_at)}` : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section className="card">
            <h2>Trace</h2>
            <ol className="trace">
              {data.data.trace.map((t) => (
                <li key={t.seq}>
                  <span className="badge">{t.kind}</span> <span className="muted small">{formatDateTime(t.at)}</span>
                  <pre className="small wrap">{JSON.stringify(t.data, null, 1).slice(0, 1500)}</pre>
                </li>
              ))}
            </ol>
          </section>
          <section className="card">
            <h2>Usage</h2>
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Model</th>
                  <th scope="col" className="num">
                    Input
                  </th>
                  <th scope="col" className="num">
                    Output
                  </th>
                  <th scope="col" className="num">
                    Cache read/write
                  </th>
                  <th scope="col" className="num">
                    Cost (USD)
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.data.usage.map((u) => (
                  <tr key={u.request_index}>
                    <td>{u.request_index}</td>
                    <td>
                      {u.model}
                      {u.partial ? ' (partial)' : ''}
                    </td>
                    <td className="num">{u.input_tokens}</td>
                    <td className="num">{u.output_tokens}</td>
                    <td className="num">
                      {u.cache_read_tokens}/{u.cache_write_tokens}
                    </td>
                    <td className="num">{u.cost_usd === null ? 'unknown' : u.cost_usd.toFixed(5)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </div>
      ) : null}
    </Page>
  );
}
