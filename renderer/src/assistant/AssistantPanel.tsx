/**
 * The assistant side panel, on every page: the streamed answer, a timeline of tool calls (masked
 * arguments and results), the confirm dialog for a proposed changeset (title, rows before → after,
 * Approve / Decline, the countdown), Stop, and one-time reveals. It renders the run state folded
 * from AG-UI events (./events.ts).
 *
 * Actions go through ./client.ts (the contract's assistant operations and event stream).
 */
import { useEffect, useRef, useState } from 'react';
import type { ErrorPayload } from '../../../models/errors';
import { CallError, call } from '../bridge';
import { Markdown } from '../components/Markdown';
import { ErrorNote } from '../components/Page';
import { DATA_CHANGED } from '../components/useLoad';
import { hashForAppPath } from '../router';
import { useSession } from '../store';
import { ask, decide, forget, stopRun } from './client';
import type { ChatMessage, ConfirmRequest, ToolCallView } from './events';
import { RowDiff, useAthleteNames } from '../components/ChangeDiff';
import { useAssistant } from './store';

function Countdown({ until }: { until: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const left = Math.max(0, Math.floor((Date.parse(until) - now) / 1000));
  const mm = Math.floor(left / 60);
  const ss = String(left % 60).padStart(2, '0');
  return (
    <span className="countdown" aria-live="off">
      {left > 0 ? `${mm}:${ss} left to decide` : 'Expired'}
    </span>
  );
}

/** The confirm dialog of a proposed write. */
export function ConfirmDialog({ c, onDecide, busy }: { c: ConfirmRequest; onDecide(approve: boolean): void; busy: boolean }) {
  // Focus moves to the dialog (not to Approve): a stray Enter must never approve a change.
  const dialogRef = useRef<HTMLDivElement>(null);
  useEffect(() => dialogRef.current?.focus(), [c.toolCallId]);
  const names = useAthleteNames(c.rows);
  return (
    <div
      ref={dialogRef}
      tabIndex={-1}
      className="confirm"
      role="dialog"
      aria-modal="false"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-summary"
      data-confirm={c.toolCallId}
      data-tool={c.tool}
      onKeyDown={(e) => e.key === 'Escape' && onDecide(false)}
    >
      <h3 id="confirm-title">{c.title}</h3>
      <p id="confirm-summary">{c.summary}</p>
      {c.policy
        .filter((d) => d.effect !== 'allow')
        .map((d, i) => (
          <p key={i} className="small warn-text" data-policy={d.effect}>
            {d.reason}
          </p>
        ))}
      <p className="small">
        <strong data-testid="confirm-rows">{c.rows.length}</strong> row{c.rows.length === 1 ? '' : 's'} will change. <Countdown until={c.expiresAt} />
      </p>
      <ol className="diff-list">
        {c.rows.slice(0, 50).map((r) => (
          <RowDiff key={r.id} row={r} names={names} />
        ))}
      </ol>
      <div className="confirm-actions">
        <button type="button" className="primary" onClick={() => onDecide(true)} disabled={busy}>
          Approve
        </button>
        <button type="button" onClick={() => onDecide(false)} disabled={busy}>
          Decline
        </button>
      </div>
    </div>
  );
}

function showMePath(t: ToolCallView): string | null {
  if (t.name !== 'open_page') return null;
  try {
    const p = (JSON.parse(t.args) as { path?: unknown }).path;
    return typeof p === 'string' && p.startsWith('/') && !p.startsWith('//') ? p : null;
  } catch {
    return null;
  }
}

function ToolCall({ t }: { t: ToolCallView }) {
  const [undo, setUndo] = useState<'idle' | 'busy' | 'done'>('idle');
  const [error, setError] = useState<ErrorPayload | null>(null);
  const showMe = showMePath(t);
  async function onUndo(id: string) {
    setUndo('busy');
    setError(null);
    try {
      await call('changesets.undo', { changeset_id: id });
      setUndo('done');
      window.dispatchEvent(new CustomEvent(DATA_CHANGED));
    } catch (e) {
      setUndo('idle');
      setError(e instanceof CallError ? e.payload : { code: 'Internal', message: 'Undo failed.' });
    }
  }
  return (
    <li className={`tool-call status-${t.status}`} data-tool={t.name} data-status={t.status}>
      <div>
        <span className={`badge ${t.status === 'executed' ? 'ok' : t.status === 'failed' || t.status === 'rejected' ? 'warn' : ''}`}>{t.status}</span>{' '}
        <strong>{t.title || t.name}</strong>
      </div>
      {showMe ? (
        <a href={hashForAppPath(showMe)} className="small">
          Show me
        </a>
      ) : null}
      {t.changesetId && t.status === 'executed' ? (
        undo === 'done' ? (
          <span className="small" role="status">
            Undone.
          </span>
        ) : (
          <button type="button" className="link small" disabled={undo === 'busy'} onClick={() => void onUndo(t.changesetId!)}>
            Undo this change
          </button>
        )
      ) : null}
      {t.needsOwner ? (
        <p className="small warn-text" data-needs-owner="true">
          Waiting in the app for an owner to approve this change; nothing has been written.
        </p>
      ) : null}
      {t.policy
        .filter((d) => d.effect !== 'allow')
        .map((d, i) => (
          <p key={i} className="small warn-text" data-policy={d.effect}>
            {d.reason}
          </p>
        ))}
      {error ? <ErrorNote error={error} /> : null}
      {t.args ? (
        <details>
          <summary>Arguments</summary>
          <pre>{t.args}</pre>
        </details>
      ) : null}
      {t.result ? (
        <details>
          <summary>Result</summary>
          <pre>{t.result.length > 2000 ? `${t.result.slice(0, 2000)}…` : t.result}</pre>
        </details>
      ) : null}
      {t.error ? <p className="small warn-text">{t.error}</p> : null}
    </li>
  );
}

export function AssistantPanel() {
  const { open, run, setOpen, clearOpenPage } = useAssistant();
  const me = useSession((s) => s.me);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorPayload | null>(null);

  // An approved change was applied: pages showing records load them again (once per change).
  const announced = useRef(new Set<string>());
  useEffect(() => {
    for (const t of run.toolCalls) {
      if (t.status === 'executed' && t.changesetId && !announced.current.has(t.changesetId)) {
        announced.current.add(t.changesetId);
        window.dispatchEvent(new CustomEvent(DATA_CHANGED));
      }
    }
  }, [run.toolCalls]);

  // "Show me": the assistant asked the app to open a page.
  useEffect(() => {
    if (run.openPage && run.openPage.startsWith('/') && !run.openPage.startsWith('//')) window.location.hash = hashForAppPath(run.openPage);
    if (run.openPage) clearOpenPage();
  }, [run.openPage, clearOpenPage]);

  async function act(fn: () => Promise<ErrorPayload | null>) {
    setBusy(true);
    setError(null);
    const err = await fn();
    setBusy(false);
    if (err) setError(err);
  }

  async function onSend(e: React.FormEvent) {
    e.preventDefault();
    const message = text.trim();
    if (!message || !me) return;
    await act(async () => {
      const err = await ask(me.user_id, message, window.location.hash.replace(/^#/, '') || '/athletes');
      if (!err) setText('');
      return err;
    });
  }

  if (!open) {
    return (
      <aside className="assistant collapsed" aria-label="Assistant">
        <button type="button" onClick={() => setOpen(true)} aria-expanded="false">
          Assistant
        </button>
      </aside>
    );
  }
  const running = run.status === 'running' || run.status === 'waiting_confirm';
  return (
    <aside className="assistant" aria-label="Assistant" data-run-status={run.status}>
      <header className="assistant-head">
        <h2>Kinetix assistant</h2>
        <button type="button" className="link" onClick={() => setOpen(false)} aria-expanded="true">
          Hide
        </button>
      </header>
      <div className="assistant-body" aria-live="polite">
        {run.request ? <div className="msg user">{run.request}</div> : null}
        {run.messages.length === 0 && run.toolCalls.length === 0 && !run.request ? (
          <p className="muted small">
            Ask about an athlete, a squad's workload or how to do something. The assistant can only do what you can do, and every change waits for your
            approval.
          </p>
        ) : null}
        {/* Messages and tool calls in the order they happened; consecutive tool calls form one timeline list. */}
        {groupInOrder(run.messages, run.toolCalls).map((g) =>
          g.kind === 'message' ? (
            <div key={g.m.id} className={`msg ${g.m.role}`}>
              {g.m.role === 'assistant' ? <Markdown body={g.m.text} /> : g.m.text}
            </div>
          ) : (
            <ol key={g.tools[0]!.id} className="timeline" aria-label="Tool calls">
              {g.tools.map((t) => (
                <ToolCall key={t.id} t={t} />
              ))}
            </ol>
          ),
        )}
        {run.confirm ? <ConfirmDialog c={run.confirm} busy={busy} onDecide={(approve) => void act(() => decide(approve))} /> : null}
        {run.reveal ? (
          <div className="reveal" role="alert">
            <strong>Shown once — copy it now:</strong>
            {Object.entries(run.reveal).map(([k, v]) => (
              <div key={k}>
                <code>
                  {k}: {v}
                </code>
              </div>
            ))}
          </div>
        ) : null}
        {run.narrowed ? (
          <p className="small muted" role="status">
            {run.narrowed}
          </p>
        ) : null}
        {run.stopped ? (
          <p className="small warn-text" role="status" data-testid="run-stopped">
            Stopped: {run.stopped}
          </p>
        ) : null}
        {run.error ? (
          <p className="warn-text" role="alert">
            {run.error}
          </p>
        ) : null}
        {error ? <ErrorNote error={error} /> : null}
      </div>
      <form className="assistant-input" onSubmit={(e) => void onSend(e)}>
        <label htmlFor="assistant-text" className="sr-only">
          Message the assistant
        </label>
        <textarea
          id="assistant-text"
          rows={3}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void onSend(e);
          }}
          placeholder="e.g. Log yesterday's session for the U19 squad"
          disabled={running}
        />
        <div className="assistant-actions">
          {run.runId && !running ? (
            <button type="button" className="link small" onClick={forget}>
              New conversation
            </button>
          ) : null}
          {running ? (
            <button type="button" onClick={() => void act(stopRun)}>
              Stop
            </button>
          ) : null}
          <button type="submit" className="primary" disabled={running || busy || !text.trim()}>
            Send
          </button>
        </div>
      </form>
    </aside>
  );
}

type PanelItem = { kind: 'message'; m: ChatMessage } | { kind: 'tools'; tools: ToolCallView[] };

/** Messages and tool calls merged by creation order, with runs of tool calls grouped. */
function groupInOrder(messages: ChatMessage[], tools: ToolCallView[]): PanelItem[] {
  const all = [...messages.map((m) => ({ order: m.order, m })), ...tools.map((t) => ({ order: t.order, t }))].sort((a, b) => a.order - b.order);
  const out: PanelItem[] = [];
  for (const x of all) {
    if ('m' in x) out.push({ kind: 'message', m: x.m });
    else {
      const last = out[out.length - 1];
      if (last && last.kind === 'tools') last.tools.push(x.t);
      else out.push({ kind: 'tools', tools: [x.t] });
    }
  }
  return out;
}
