/**
 * Approvals: proposed changes waiting for a person — changes the policy marked "needs owner"
 * (an owner approves them here) and changes proposed by MCP clients (their user approves them
 * here). Changes proposed in a live assistant conversation are decided in its panel.
 */
import { useState } from 'react';
import type { ProposalItemView } from '../../../models/contract';
import type { ErrorPayload } from '../../../models/errors';
import { CallError, call } from '../bridge';
import { ChangeDiffView } from '../components/ChangeReview';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { formatDateTime, humanize } from '../format';
import { href } from '../router';
import { personName, useSession } from '../store';

export function Approvals() {
  const data = useLoad(async () => await call('proposals.list', { limit: 200 }), 'proposals');
  const pending = (data.data ?? []).filter((p) => p.status === 'proposed' || p.status === 'needs_owner');
  const decided = (data.data ?? []).filter((p) => p.status !== 'proposed' && p.status !== 'needs_owner').slice(0, 30);
  return (
    <Page page="approvals" state={data.state} title="Approvals">
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {data.state === 'ready' ? (
        <div className="stack">
          {pending.length === 0 ? (
            <p className="muted">Nothing is waiting for approval.</p>
          ) : (
            pending.map((p) => <ProposalCard key={p.id} p={p} onDone={data.reload} />)
          )}
          {decided.length ? (
            <section className="card">
              <h2>Recently decided</h2>
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Change</th>
                    <th scope="col">Status</th>
                    <th scope="col">Decided</th>
                  </tr>
                </thead>
                <tbody>
                  {decided.map((p) => (
                    <tr key={p.id} data-proposal={p.id} data-status={p.status}>
                      <th scope="row">
                        {p.summary}
                        <div className="muted small">{p.title}</div>
                      </th>
                      <td>
                        <span className="badge">{humanize(p.status)}</span>
                        {p.failure ? <div className="small warn-text">{p.failure.message}</div> : null}
                      </td>
                      <td className="small">{formatDateTime(p.decidedAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          ) : null}
        </div>
      ) : null}
    </Page>
  );
}

function ProposalCard({ p, onDone }: { p: ProposalItemView; onDone(): void }) {
  const { me, people } = useSession();
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [busy, setBusy] = useState(false);
  const inPanel = p.source === 'assistant' && p.status === 'proposed';
  const mayDecide = !inPanel && (p.status === 'needs_owner' ? me?.role === 'owner' : p.userId === me?.user_id);
  async function decide(approve: boolean) {
    setBusy(true);
    setError(null);
    try {
      if (approve) await call('proposals.approve', { changeset_id: p.id, content_hash: p.contentHash });
      else await call('proposals.decline', { changeset_id: p.id });
      onDone();
    } catch (e) {
      setError(e instanceof CallError ? e.payload : { code: 'Internal', message: 'Failed.' });
    } finally {
      setBusy(false);
    }
  }
  return (
    <section className="card" data-proposal={p.id} data-status={p.status}>
      <header className="card-head">
        {/* What changes, in the record's words ("Update fee item PRI-011"); a form's title is only the verb's description. */}
        <h2>{p.summary}</h2>
        <span className={`badge ${p.status === 'needs_owner' ? 'warn' : ''}`}>{p.status === 'needs_owner' ? 'Needs an owner' : 'Proposed'}</span>
      </header>
      {p.source === 'assistant' && p.title && p.title !== p.summary ? <p>{p.title}</p> : null}
      <p className="small muted">
        Proposed by {personName(people, p.userId)}{' '}
        {p.source === 'assistant' ? 'via Assistant' : p.source === 'mcp' ? 'via an MCP client' : 'on a form in the app'}
        {p.originDevice ? (
          <>
            , on the device <span data-origin-device={p.originDevice.id}>{p.originDevice.name}</span>
          </>
        ) : null}{' '}
        · {formatDateTime(p.createdAt)}
        {p.runId ? (
          <>
            {' '}
            · <a href={href({ page: 'trace', runId: p.runId })}>run trace</a>
          </>
        ) : null}
      </p>
      <p className="small">
        <strong>{p.changes.length}</strong> row{p.changes.length === 1 ? '' : 's'} will change.
      </p>
      <ChangeDiffView p={p} />
      {error ? <ErrorNote error={error} /> : null}
      {inPanel ? (
        <p className="small muted">Decide this in the assistant panel of the conversation that proposed it.</p>
      ) : mayDecide ? (
        <div className="confirm-actions">
          <button type="button" className="primary" disabled={busy} onClick={() => void decide(true)}>
            Approve
          </button>
          <button type="button" disabled={busy} onClick={() => void decide(false)}>
            Decline
          </button>
        </div>
      ) : (
        <p className="small muted">Waiting for an owner to approve.</p>
      )}
    </section>
  );
}
