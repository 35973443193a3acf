/**
 * The assistant side panel, on every page: the streamed answer, a timeline of tool calls (masked
 * arguments and results), the confirm dialog for a proposed changeset (title, rows before → after,
 * Approve / Decline, the countdown), Stop, and one-time reveals. It renders the run state folded
 * from AG-UI events (./events.ts).
 *
 * Not wired yet: sending a message, approve/decline and Stop need the harness operations in the
 * contract (see `ASSISTANT_CONNECTED`).
 */
import { useEffect, useRef, useState } from 'react';
import type { ChangeRow, ConfirmRequest, ToolCallView } from './events';
import { useAssistant } from './store';

/** False until the contract carries the harness's operations (start run, subscribe, confirm, stop). */
export const ASSISTANT_CONNECTED = false;

function fmt(v: unknown): string {
  if (v === null || v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function Countdown({ until }: { until: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const left = Math.max(0, Math.floor((Date.parse(until) - now) / 1000));
  const mm = Math.floor(left / 60);
  const ss = String(left % 60).padStart(2, '0');
  return <span className="countdown" aria-live="off">{left > 0 ? `${mm}:${ss} left to decide` : 'Expired'}</span>;
}

function RowDiff({ row }: { row: ChangeRow }) {
  const keys = [...new Set([...Object.keys(row.before ?? {}), ...Object.keys(row.after ?? {})])].filter((k) => k !== 'id');
  return (
    <li className="diff-row">
      <div className="small"><span className="badge">{row.op}</span> {row.table}</div>
      <table className="diff">
        <tbody>
          {keys.map((k) => (
            <tr key={k}><th scope="row">{k}</th>{row.op === 'update' ? <><td className="before">{fmt(row.before?.[k])}</td><td aria-hidden="true">→</td></> : null}<td className="after">{fmt(row.after?.[k])}</td></tr>
          ))}
        </tbody>
      </table>
    </li>
  );
}

/** The confirm dialog of a proposed write. */
export function ConfirmDialog({ c, onDecide }: { c: ConfirmRequest; onDecide(approve: boolean): void }) {
  const approveRef = useRef<HTMLButtonElement>(null);
  useEffect(() => approveRef.current?.focus(), [c.toolCallId]);
  return (
    <div className="confirm" role="dialog" aria-modal="false" aria-labelledby="confirm-title" data-confirm={c.toolCallId} onKeyDown={(e) => e.key === 'Escape' && onDecide(false)}>
      <h3 id="confirm-title">{c.title}</h3>
      <p>{c.summary}</p>
      <p className="small"><strong data-testid="confirm-rows">{c.rows.length}</strong> row{c.rows.length === 1 ? '' : 's'} will change. <Countdown until={c.expiresAt} /></p>
      <ol className="diff-list">{c.rows.slice(0, 50).map((r) => <RowDiff key={r.id} row={r} />)}</ol>
      <div className="confirm-actions">
        <button ref={approveRef} type="button" className="primary" onClick={() => onDecide(true)} disabled={!ASSISTANT_CONNECTED}>Approve</button>
        <button type="button" onClick={() => onDecide(false)} disabled={!ASSISTANT_CONNECTED}>Decline</button>
      </div>
    </div>
  );
}

function ToolCall({ t }: { t: ToolCallView }) {
  return (
    <li className={`tool-call status-${t.status}`} data-tool={t.name} data-status={t.status}>
      <div><span className={`badge ${t.status === 'executed' ? 'ok' : t.status === 'failed' || t.status === 'rejected' ? 'warn' : ''}`}>{t.status}</span> <strong>{t.title || t.name}</strong></div>
      {t.args ? <details><summary>Arguments</summary><pre>{t.args}</pre></details> : null}
      {t.result ? <details><summary>Result</summary><pre>{t.result.length > 2000 ? `${t.result.slice(0, 2000)}…` : t.result}</pre></details> : null}
      {t.error ? <p className="small warn-text">{t.error}</p> : null}
    </li>
  );
}

export function AssistantPanel() {
  const { open, run, setOpen } = useAssistant();
  const [text, setText] = useState('');
  if (!open) {
    return (
      <aside className="assistant collapsed" aria-label="Assistant">
        <button type="button" onClick={() => setOpen(true)} aria-expanded="false">Assistant</button>
      </aside>
    );
  }
  const running = run.status === 'running' || run.status === 'waiting_confirm';
  return (
    <aside className="assistant" aria-label="Assistant" data-run-status={run.status}>
      <header className="assistant-head">
        <h2>Kinetix assistant</h2>
        <button type="button" className="link" onClick={() => setOpen(false)} aria-expanded="true">Hide</button>
      </header>
      <div className="assistant-body" aria-live="polite">
        {run.messages.length === 0 && run.toolCalls.length === 0 ? (
          <p className="muted small">Ask about an athlete, a squad's workload or how to do something. The assistant can only do what you can do, and every change waits for your approval.</p>
        ) : null}
        {run.messages.map((m) => <div key={m.id} className={`msg ${m.role}`}>{m.text}</div>)}
        {run.toolCalls.length ? <ol className="timeline" aria-label="Tool calls">{run.toolCalls.map((t) => <ToolCall key={t.id} t={t} />)}</ol> : null}
        {run.confirm ? <ConfirmDialog c={run.confirm} onDecide={() => {}} /> : null}
        {run.reveal ? <div className="reveal" role="alert"><strong>Shown once — copy it now:</strong>{Object.entries(run.reveal).map(([k, v]) => <div key={k}><code>{k}: {v}</code></div>)}</div> : null}
        {run.error ? <p className="warn-text" role="alert">{run.error}</p> : null}
      </div>
      <form className="assistant-input" onSubmit={(e) => e.preventDefault()}>
        {!ASSISTANT_CONNECTED ? <p className="muted small" data-testid="assistant-offline">The assistant is not connected in this build yet.</p> : null}
        <label htmlFor="assistant-text" className="sr-only">Message the assistant</label>
        <textarea id="assistant-text" rows={3} value={text} onChange={(e) => setText(e.target.value)} placeholder="e.g. Log yesterday's session for the U19 squad" disabled={!ASSISTANT_CONNECTED} />
        <div className="assistant-actions">
          {running ? <button type="button" disabled={!ASSISTANT_CONNECTED}>Stop</button> : null}
          <button type="submit" className="primary" disabled={!ASSISTANT_CONNECTED || !text.trim()}>Send</button>
        </div>
      </form>
    </aside>
  );
}
