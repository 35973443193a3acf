/**
 * Sync: the device's sync state and every change HQ rejected (sync conflicts), never dropped
 * silently. Each conflict says why in plain words and shows this device's values next to HQ's
 * current ones; the user re-plans it (the same entry form opened on the current row with their
 * values, or the assistant asked to propose it again) or discards it (after a confirmation).
 * RTP sign-offs are never merged automatically. On an enrolled device, users who do not administer
 * it (no Settings → Sync) find their own HQ sign-in here (PIN + one-time code; SyncSettings.tsx).
 */
import { useEffect, useRef, useState } from 'react';
import type { RowChange } from '../../../models/changeset';
import type { Athlete, Injury } from '../../../models/records';
import { hasPermission } from '../../../models/roles';
import type { SyncConflict } from '../../../models/sync';
import { ask } from '../assistant/client';
import { useAssistant } from '../assistant/store';
import { CallError, call } from '../bridge';
import { useNames } from '../components/ChangeReview';
import { SavedNote } from '../components/Form';
import { RECORD_NOUN, fieldLabel, formatValue } from '../components/labels';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { formatDateTime, humanize } from '../format';
import type { AthleteTab } from '../router';
import { href, navigate } from '../router';
import { useSession } from '../store';
import { AthleteFormDialog } from '../pages/forms/AthleteForms';
import { InjuryFormDialog } from '../pages/forms/InjuryForms';
import { REASON_TEXT, useSync } from './store';
import { sinceText } from './SyncIndicator';
import { HqSignInCard, SyncSettings } from './SyncSettings';
import type { ErrorPayload } from '../../../models/errors';

/** Fields that are bookkeeping, not what the user entered. */
const HIDDEN = new Set(['id', 'org_id', 'version', 'created_at', 'updated_at', 'pin_hash', 'deleted_at']);
/** The athlete tab where a table's records are entered. */
const TAB_OF: Record<string, AthleteTab> = {
  athlete: 'overview',
  injury: 'injuries',
  rtp_entry: 'injuries',
  screening: 'screenings',
  wellness: 'wellness',
  vitals: 'wellness',
  session_load: 'workload',
  training_session: 'workload',
  pose_metric: 'pose',
};
const SIGNOFF_FIELD = /signoff/;

type Replan =
  | { kind: 'athlete'; conflict: SyncConflict; athlete: Athlete | null; initial: Partial<Athlete>; squads: { id: string; name: string }[] }
  | { kind: 'injury'; conflict: SyncConflict; athleteId: string; injury: Injury | null; initial: Partial<Injury> };

const errorOf = (e: unknown): ErrorPayload => (e instanceof CallError ? e.payload : { code: 'Internal', message: 'The request failed.' });

function oursOf(ch: SyncConflict['changes'][number]): Record<string, unknown> {
  return ch.op === 'delete' ? {} : (ch.after as Record<string, unknown>);
}

function athleteOf(c: SyncConflict): string | null {
  for (const ch of c.changes) {
    const v = oursOf(ch).athlete_id ?? c.current.find((x) => x.id === ch.id)?.row?.athlete_id;
    if (typeof v === 'string') return v;
    if (ch.table === 'athlete') return ch.id;
  }
  return null;
}

function touchesSignoff(c: SyncConflict): boolean {
  return c.changes.some((ch) => ch.table === 'rtp_entry' && Object.keys(oursOf(ch)).some((k) => SIGNOFF_FIELD.test(k)));
}

export function SyncPage() {
  const me = useSession((s) => s.me)!;
  const status = useSync((s) => s.status);
  const refresh = useSync((s) => s.refresh);
  const data = useLoad(() => call('sync.conflicts', {}), `sync:${status?.conflicts ?? 0}:${status?.enrolled ? 1 : 0}`);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [confirm, setConfirm] = useState<SyncConflict | null>(null);
  const [replan, setReplan] = useState<Replan | null>(null);

  async function discard(c: SyncConflict, after?: string) {
    setError(null);
    try {
      useSync.getState().set(await call('sync.discard', { changesetId: c.changeset_id }));
      setNote(after ?? `Discarded: ${c.summary}. The record keeps HQ’s values.`);
    } catch (e) {
      setError(errorOf(e));
    } finally {
      setConfirm(null);
      data.reload();
      void refresh();
    }
  }

  async function openReplan(c: SyncConflict) {
    setError(null);
    setNote(null);
    const first = c.changes[0]!;
    const ours = oursOf(first);
    try {
      if (first.table === 'athlete' && first.op !== 'delete' && hasPermission(me.role, 'athlete.write')) {
        const [athlete, squads] = await Promise.all([
          first.op === 'update' ? call('athletes.get', { id: first.id }) : Promise.resolve(null),
          call('squads.list', {}).catch(() => []),
        ]);
        setReplan({ kind: 'athlete', conflict: c, athlete, initial: ours as Partial<Athlete>, squads });
        return;
      }
      if (first.table === 'injury' && first.op !== 'delete' && hasPermission(me.role, 'injury.write')) {
        const injury = first.op === 'update' ? await call('injuries.get', { id: first.id }) : null;
        const athleteId = (injury?.athlete_id ?? ours.athlete_id) as string;
        setReplan({ kind: 'injury', conflict: c, athleteId, injury, initial: ours as Partial<Injury> });
        return;
      }
    } catch (e) {
      setError(errorOf(e));
      return;
    }
    // Other records are entered on the athlete's page: open the tab where that form lives.
    const athleteId = athleteOf(c);
    const tab = TAB_OF[first.table];
    if (athleteId && tab) navigate({ page: 'athlete', id: athleteId, tab });
    else setError({ code: 'NotFound', message: 'This kind of record has no entry form to re-plan it in; ask Kinetix, or discard it.' });
  }

  async function askAssistant(c: SyncConflict) {
    // Record values and the summary (which names the athlete) stay out of the message: the model
    // reads the change (get_changeset) and the current records through its tools, where each field
    // reaches the provider only if the club cleared it for that field's class (issue 9 §12).
    const lines = c.changes.map((ch) => {
      const fields = Object.keys(oursOf(ch))
        .filter((k) => !HIDDEN.has(k))
        .map((k) => fieldLabel(ch.table, k).label);
      return `- ${RECORD_NOUN[ch.table] ?? humanize(ch.table)} ${ch.id}: ${fields.join(', ')}`;
    });
    const what = c.rejected_here
      ? `My change ${c.changeset_id} was held back on this device, unsent, because it was made on top of a change HQ rejected`
      : `HQ rejected my change ${c.changeset_id} (${REASON_TEXT[c.reason]?.title ?? c.reason})`;
    const message = `${what}. Read that change and the records as they are now, re-plan it on the current record and propose it for my approval. The records and fields it touched:\n${lines.join('\n')}`;
    useAssistant.getState().setOpen(true);
    const err = await ask(me.user_id, message.slice(0, 7900), '/sync');
    if (err) setError(err);
    else setNote('Kinetix is re-planning it in the assistant panel. Once you approve its proposal, discard this conflict.');
  }

  const list = data.state === 'ready' ? data.data.conflicts : [];
  return (
    <Page page="sync" state={data.state} title="Sync">
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {error ? <ErrorNote error={error} /> : null}
      <SavedNote text={note} />
      <SyncSummary canManage={hasPermission(me.role, 'settings.manage')} />
      {status && !status.enrolled && me.role === 'athlete' && me.linked_athlete_id ? <SyncSettings defaultEmail={me.email} /> : null}
      {/* Settings → Sync holds it for those who administer the device; everyone else signs in to HQ here. */}
      {status?.enrolled && !hasPermission(me.role, 'settings.manage') ? <HqSignInCard /> : null}
      <section className="card" aria-labelledby="conflicts-h" data-conflicts={list.length}>
        <h2 id="conflicts-h">Sync conflicts</h2>
        <p className="small muted">
          A change HQ refused, or one made here on top of it (held back, unsent), stays here until you re-plan it or discard it; nothing is dropped without you.
          The record on this device shows HQ&apos;s values meanwhile. <strong>RTP sign-offs are never merged automatically</strong>: a refused sign-off must be
          given again on the current plan.
        </p>
        {data.state === 'ready' && list.length === 0 ? <p className="muted">No conflicts: every change made here was accepted by HQ.</p> : null}
        {data.state === 'ready' && data.data.hidden > 0 ? (
          <p className="small muted" data-hidden-conflicts={data.data.hidden}>
            {data.data.hidden} more {data.data.hidden === 1 ? 'conflict involves' : 'conflicts involve'} records your role cannot see; someone who can see them
            must resolve {data.data.hidden === 1 ? 'it' : 'them'}.
          </p>
        ) : null}
        {list.map((c) => (
          <ConflictCard key={c.changeset_id} c={c} onReplan={() => void openReplan(c)} onAsk={() => void askAssistant(c)} onDiscard={() => setConfirm(c)} />
        ))}
      </section>
      {confirm ? <DiscardDialog c={confirm} onCancel={() => setConfirm(null)} onConfirm={() => void discard(confirm)} /> : null}
      {replan?.kind === 'athlete' ? (
        <AthleteFormDialog
          athlete={replan.athlete}
          squads={replan.squads}
          initial={replan.initial}
          intro={<ReplanIntro />}
          onClose={() => setReplan(null)}
          onSaved={(s) => {
            setReplan(null);
            void discard(replan.conflict, `Re-planned: ${s} The refused change was discarded.`);
          }}
        />
      ) : null}
      {replan?.kind === 'injury' ? (
        <InjuryFormDialog
          athleteId={replan.athleteId}
          injury={replan.injury}
          initial={replan.initial}
          intro={<ReplanIntro />}
          onClose={() => setReplan(null)}
          onSaved={(s) => {
            setReplan(null);
            void discard(replan.conflict, `Re-planned: ${s} The refused change was discarded.`);
          }}
        />
      ) : null}
    </Page>
  );
}

function ReplanIntro() {
  return (
    <p className="small muted" data-replan="true">
      Re-planning a change HQ refused: your values are filled in on the record as HQ holds it now. Check them against HQ&apos;s, then save; the refused change
      is then discarded.
    </p>
  );
}

function SyncSummary({ canManage }: { canManage: boolean }) {
  const s = useSync((x) => x.status);
  if (!s) return null;
  return (
    <section className="card" aria-label="Sync status" data-sync-summary={s.enrolled ? (s.online ? 'online' : 'offline') : 'local'}>
      {s.enrolled ? (
        <dl className="facts inline">
          <dt>HQ</dt>
          <dd>{s.hq_url}</dd>
          <dt>Connection</dt>
          <dd>{s.online ? 'Online' : 'Offline'}</dd>
          <dt>Waiting to upload</dt>
          <dd>{s.pending_uploads}</dd>
          <dt>Last successful sync</dt>
          <dd title={s.last_synced_at ? formatDateTime(s.last_synced_at) : undefined}>{sinceText(s.last_synced_at)}</dd>
          {s.last_error ? (
            <>
              <dt>Last problem</dt>
              <dd>{s.last_error.message}</dd>
            </>
          ) : null}
        </dl>
      ) : (
        <p className="muted">
          This device is not enrolled with an HQ server: its records stay here.{' '}
          {canManage ? <a href={href({ page: 'settings' })}>Enrol it in Settings → Sync.</a> : 'A club administrator can enrol it in Settings → Sync.'}
        </p>
      )}
    </section>
  );
}

function ConflictCard({ c, onReplan, onAsk, onDiscard }: { c: SyncConflict; onReplan(): void; onAsk(): void; onDiscard(): void }) {
  const names = useNames(c.changes as RowChange[]);
  const reason = REASON_TEXT[c.reason] ?? { title: humanize(c.reason), help: '' };
  const signoff = touchesSignoff(c);
  return (
    <article className="conflict" data-conflict={c.changeset_id} data-reason={c.reason} aria-labelledby={`c-${c.changeset_id}`}>
      <header className="card-head">
        <h3 id={`c-${c.changeset_id}`}>{c.summary}</h3>
        <span className="badge warn" data-field="reason">
          {reason.title}
        </span>
      </header>
      <p className="small">
        {reason.help} <span className="muted">{c.rejected_here ? c.message : `HQ said: ${c.message}`}</span>
      </p>
      <p className="small muted" data-field="decided">
        Made on this device by <span data-field="author">{c.author_name ?? 'a user no longer on this device'}</span> {formatDateTime(c.created_at)};{' '}
        {c.rejected_here
          ? `held back on this device, unsent, ${formatDateTime(c.rejected_at)}: HQ never received it.`
          : `refused by HQ ${formatDateTime(c.rejected_at)}.`}
      </p>
      {signoff ? (
        <p className="small warn-note" data-signoff="true">
          This includes an RTP sign-off. Sign-offs are never merged automatically: open the plan as it is now and sign off again if it still holds.
        </p>
      ) : null}
      {c.changes.map((ch) => {
        const cur = c.current.find((x) => x.table === ch.table && x.id === ch.id) ?? null;
        const ours = oursOf(ch);
        const fields = [...new Set([...Object.keys(ours), ...(ch.op === 'update' ? Object.keys(ch.before as Record<string, unknown>) : [])])].filter(
          (k) => !HIDDEN.has(k),
        );
        const record = ch.table === 'athlete' ? names.athletes.get(ch.id) : names.records.get(ch.id);
        return (
          <table className="table compare" key={`${ch.table}:${ch.id}`} data-row={ch.id}>
            <caption>
              {humanize(ch.op)} {RECORD_NOUN[ch.table] ?? humanize(ch.table)}
              {record ? ` — ${record}` : ''}
              {cur?.actual_version ? <span className="small muted"> (HQ version {cur.actual_version})</span> : null}
            </caption>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Your value (this device)</th>
                <th scope="col">HQ now</th>
              </tr>
            </thead>
            <tbody>
              {fields.map((k) => {
                const mine = formatValue(ch.table, k, ours[k], names);
                const theirs = cur?.row ? formatValue(ch.table, k, cur.row[k], names) : cur ? 'removed' : '—';
                return (
                  <tr key={k} data-field={k} className={cur?.row && mine !== theirs ? 'differs' : undefined}>
                    <th scope="row">{fieldLabel(ch.table, k).label}</th>
                    <td data-side="ours">{mine}</td>
                    <td data-side="hq">{theirs}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        );
      })}
      <div className="row-actions">
        <button type="button" className="primary" data-action="replan" onClick={onReplan}>
          Re-plan…
        </button>
        <button type="button" data-action="ask-replan" onClick={onAsk}>
          Ask Kinetix to re-plan
        </button>
        <button type="button" className="danger" data-action="discard" onClick={onDiscard}>
          Discard…
        </button>
      </div>
    </article>
  );
}

function DiscardDialog({ c, onCancel, onConfirm }: { c: SyncConflict; onCancel(): void; onConfirm(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      className="form-dialog"
      aria-labelledby="discard-h"
      data-dialog="discard"
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id="discard-h">Discard this change?</h2>
      <p>
        <strong>{c.summary}</strong> will be dropped from this device and never uploaded. The record keeps HQ&apos;s values. This cannot be undone.
      </p>
      <div className="form-actions">
        <button type="button" className="danger" data-action="confirm-discard" onClick={onConfirm}>
          Discard change
        </button>
        <button type="button" onClick={onCancel} autoFocus>
          Keep it
        </button>
      </div>
    </dialog>
  );
}
