/**
 * Injuries with their RTP plan: each stage with its dates, criteria and the three sign-offs (who
 * signed and when), the current stage highlighted; entry forms for the injury, its stages and
 * the sign-offs for the roles that hold those verbs.
 */
import { useEffect, useState } from 'react';
import type { Injury, RtpEntry } from '../../../../models/records';
import type { Permission } from '../../../../models/roles';
import { hasPermission } from '../../../../models/roles';
import { call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { formatDate, formatDateTime, humanize } from '../../format';
import { personName, useSession } from '../../store';
import { InjuryFormDialog, nextStage, RtpFormDialog, SignoffAction, type RtpStageName } from '../forms/InjuryForms';

type TabState = (s: 'loading' | 'ready' | 'error') => void;

type SignoffVerb = 'rtp.signoffPhysio' | 'rtp.signoffDoctor' | 'rtp.signoffCoach';
const SIGNOFFS: { key: 'physio' | 'doctor' | 'coach'; label: string; perm: Permission; verb: SignoffVerb }[] = [
  { key: 'physio', label: 'Physio', perm: 'rtp.signoff_physio', verb: 'rtp.signoffPhysio' },
  { key: 'doctor', label: 'Doctor', perm: 'rtp.signoff_doctor', verb: 'rtp.signoffDoctor' },
  { key: 'coach', label: 'Coach', perm: 'rtp.signoff_coach', verb: 'rtp.signoffCoach' },
];

type Dialog =
  { kind: 'injury'; injury: Injury | null } | { kind: 'rtp'; injury: Injury; entry: RtpEntry | null; stage?: RtpStageName | null; advance?: boolean };

export function InjuriesTab({ athleteId, onState, onSaved }: { athleteId: string; onState: TabState; onSaved(s: string): void }) {
  const me = useSession((s) => s.me)!;
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const data = useLoad(async () => {
    const [inj, rtp] = await Promise.all([
      call('injuries.list', { athlete_id: athleteId, limit: 200 }),
      hasPermission(me.role, 'rtp.read')
        ? call('rtp.list', { athlete_id: athleteId, limit: 500 })
        : Promise.resolve({ total: 0, rtp_entries: [] as RtpEntry[] }),
    ]);
    return { injuries: inj.injuries, rtp: rtp.rtp_entries };
  }, athleteId);
  useEffect(() => onState(data.state), [data.state, onState]);
  const saved = (s: string) => {
    setDialog(null);
    onSaved(s);
  };
  const canInjury = hasPermission(me.role, 'injury.write');
  const canRtp = hasPermission(me.role, 'rtp.write');
  const dialogs =
    dialog?.kind === 'injury' ? (
      <InjuryFormDialog athleteId={athleteId} injury={dialog.injury} onClose={() => setDialog(null)} onSaved={saved} />
    ) : dialog?.kind === 'rtp' ? (
      <RtpFormDialog
        injury={dialog.injury}
        entry={dialog.entry}
        stage={dialog.stage ?? null}
        advance={dialog.advance ?? false}
        onClose={() => setDialog(null)}
        onSaved={saved}
      />
    ) : null;
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return dialogs;
  return (
    <div className="stack">
      {dialogs}
      {canInjury ? (
        <div className="row-actions">
          <button type="button" className="primary" data-action="add-injury" onClick={() => setDialog({ kind: 'injury', injury: null })}>
            Record injury
          </button>
        </div>
      ) : null}
      {data.data.injuries.length === 0 ? <p className="muted">No injuries recorded for this athlete.</p> : null}
      {data.data.injuries.map((i) => (
        <InjuryCard
          key={i.id}
          injury={i}
          entries={data.data.rtp.filter((r) => r.injury_id === i.id)}
          canInjury={canInjury}
          canRtp={canRtp}
          open={setDialog}
          onSaved={onSaved}
        />
      ))}
    </div>
  );
}

function InjuryCard({
  injury,
  entries,
  canInjury,
  canRtp,
  open,
  onSaved,
}: {
  injury: Injury;
  entries: RtpEntry[];
  canInjury: boolean;
  canRtp: boolean;
  open(d: Dialog): void;
  onSaved(s: string): void;
}) {
  // Oldest first: the plan reads top to bottom; the newest entry is the current stage.
  const plan = [...entries].sort((a, b) => a.created_at.localeCompare(b.created_at));
  const current = plan[plan.length - 1];
  const next = current ? nextStage(current.stage) : 'protection';
  return (
    <section className="card" data-injury={injury.id} aria-label={`${injury.body_part} injury`}>
      <header className="card-head">
        <h2>
          {injury.side === 'none' ? '' : `${humanize(injury.side)} `}
          {injury.body_part.toLowerCase()}
        </h2>
        <span className={`badge ${injury.status === 'open' ? 'warn' : 'ok'}`}>{injury.status}</span>
      </header>
      <dl className="facts inline">
        <dt>Onset</dt>
        <dd>{formatDate(injury.onset_date)}</dd>
        <dt>Severity</dt>
        <dd>{humanize(injury.severity)}</dd>
        <dt>Mechanism</dt>
        <dd>{humanize(injury.mechanism)}</dd>
        {current ? (
          <>
            <dt>Current stage</dt>
            <dd data-current-stage>{humanize(current.stage)}</dd>
          </>
        ) : null}
      </dl>
      {injury.clinician_notes ? <blockquote className="record-text">{injury.clinician_notes}</blockquote> : null}
      {canInjury ? (
        <div className="row-actions">
          <button type="button" data-action="edit-injury" onClick={() => open({ kind: 'injury', injury })}>
            Update injury
          </button>
        </div>
      ) : null}
      <h3>Return to play</h3>
      {plan.length === 0 ? (
        <p className="muted">No RTP stages yet.</p>
      ) : (
        <table className="table rtp">
          <thead>
            <tr>
              <th scope="col">Stage</th>
              <th scope="col">Criteria met</th>
              {SIGNOFFS.map((s) => (
                <th key={s.key} scope="col">
                  {s.label} sign-off
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {plan.map((e) => (
              <RtpRow
                key={e.id}
                entry={e}
                isCurrent={e === current}
                canEdit={canRtp}
                onEdit={() => open({ kind: 'rtp', injury, entry: e })}
                onSaved={onSaved}
              />
            ))}
          </tbody>
        </table>
      )}
      {canRtp ? (
        <div className="row-actions">
          {next && current ? (
            <button type="button" data-action="advance-stage" onClick={() => open({ kind: 'rtp', injury, entry: null, stage: next, advance: true })}>
              Advance to {humanize(next).toLowerCase()}…
            </button>
          ) : null}
          <button type="button" data-action="add-stage" onClick={() => open({ kind: 'rtp', injury, entry: null, stage: current ? next : 'protection' })}>
            Add RTP stage…
          </button>
        </div>
      ) : null}
    </section>
  );
}

function RtpRow({
  entry,
  isCurrent,
  canEdit,
  onEdit,
  onSaved,
}: {
  entry: RtpEntry;
  isCurrent: boolean;
  canEdit: boolean;
  onEdit(): void;
  onSaved(s: string): void;
}) {
  const { me, people } = useSession();
  return (
    <tr data-rtp={entry.id} className={isCurrent ? 'current-stage' : ''} aria-current={isCurrent ? 'step' : undefined}>
      <th scope="row">
        {humanize(entry.stage)}
        {isCurrent ? (
          <>
            {' '}
            <span className="badge warn">Current stage</span>
          </>
        ) : null}
        <div className="muted small">
          Started {formatDate(entry.created_at)}
          {entry.updated_at !== entry.created_at ? ` · updated ${formatDate(entry.updated_at)}` : ''}
        </div>
        {entry.notes ? <div className="muted small">{entry.notes}</div> : null}
        {canEdit ? (
          <button type="button" className="link small" data-action="edit-stage" onClick={onEdit}>
            Criteria &amp; notes…
          </button>
        ) : null}
      </th>
      <td>{entry.criteria_met || <span className="muted">—</span>}</td>
      {SIGNOFFS.map((s) => {
        const by = entry[`${s.key}_signoff_by`];
        const at = entry[`${s.key}_signoff_at`];
        const mine = me && hasPermission(me.role, s.perm);
        return (
          <td key={s.key} className={by ? 'signed' : 'unsigned'} data-signoff={s.key}>
            {by ? (
              <>
                <span className="badge ok">Signed</span> <span className="signer">{personName(people, by)}</span>
                <div className="muted small">{formatDateTime(at)}</div>
              </>
            ) : (
              <span className="badge muted">Not signed</span>
            )}
            {mine ? <SignoffAction entry={entry} who={s.key} label={s.label} verb={s.verb} signed={Boolean(by)} onSaved={onSaved} /> : null}
          </td>
        );
      })}
    </tr>
  );
}
