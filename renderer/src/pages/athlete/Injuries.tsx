/** Injuries with their RTP entries: stage, criteria, and the three sign-offs with who signed and when. */
import { useEffect, useState } from 'react';
import type { ErrorPayload } from '../../../../models/errors';
import type { Injury, RtpEntry } from '../../../../models/records';
import type { Permission } from '../../../../models/roles';
import { hasPermission } from '../../../../models/roles';
import { CallError, call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { formatDate, formatDateTime, humanize } from '../../format';
import { personName, useSession } from '../../store';

type TabState = (s: 'loading' | 'ready' | 'error') => void;

type SignoffVerb = 'rtp.signoffPhysio' | 'rtp.signoffDoctor' | 'rtp.signoffCoach';
const SIGNOFFS: { key: 'physio' | 'doctor' | 'coach'; label: string; perm: Permission; verb: SignoffVerb }[] = [
  { key: 'physio', label: 'Physio', perm: 'rtp.signoff_physio', verb: 'rtp.signoffPhysio' },
  { key: 'doctor', label: 'Doctor', perm: 'rtp.signoff_doctor', verb: 'rtp.signoffDoctor' },
  { key: 'coach', label: 'Coach', perm: 'rtp.signoff_coach', verb: 'rtp.signoffCoach' },
];

export function InjuriesTab({ athleteId, onState }: { athleteId: string; onState: TabState }) {
  const me = useSession((s) => s.me)!;
  const data = useLoad(async () => {
    const [inj, rtp] = await Promise.all([
      call('injuries.list', { athlete_id: athleteId, limit: 200 }),
      hasPermission(me.role, 'rtp.read') ? call('rtp.list', { athlete_id: athleteId, limit: 500 }) : Promise.resolve({ total: 0, rtp_entries: [] as RtpEntry[] }),
    ]);
    return { injuries: inj.injuries, rtp: rtp.rtp_entries };
  }, athleteId);
  useEffect(() => onState(data.state), [data.state, onState]);
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  if (data.data.injuries.length === 0) return <p className="muted">No injuries recorded for this athlete.</p>;
  return (
    <div className="stack">
      {data.data.injuries.map((i) => (
        <InjuryCard key={i.id} injury={i} entries={data.data.rtp.filter((r) => r.injury_id === i.id)} onChanged={data.reload} />
      ))}
    </div>
  );
}

function InjuryCard({ injury, entries, onChanged }: { injury: Injury; entries: RtpEntry[]; onChanged(): void }) {
  return (
    <section className="card" data-injury={injury.id} aria-label={`${injury.body_part} injury`}>
      <header className="card-head">
        <h2>{injury.side === 'none' ? '' : `${humanize(injury.side)} `}{injury.body_part.toLowerCase()}</h2>
        <span className={`badge ${injury.status === 'open' ? 'warn' : 'ok'}`}>{injury.status}</span>
      </header>
      <dl className="facts inline">
        <dt>Onset</dt><dd>{formatDate(injury.onset_date)}</dd>
        <dt>Severity</dt><dd>{humanize(injury.severity)}</dd>
        <dt>Mechanism</dt><dd>{humanize(injury.mechanism)}</dd>
      </dl>
      {injury.clinician_notes ? <blockquote className="record-text">{injury.clinician_notes}</blockquote> : null}
      <h3>Return to play</h3>
      {entries.length === 0 ? <p className="muted">No RTP entries yet.</p> : (
        <table className="table rtp">
          <thead>
            <tr><th scope="col">Stage</th><th scope="col">Criteria met</th>{SIGNOFFS.map((s) => <th key={s.key} scope="col">{s.label} sign-off</th>)}</tr>
          </thead>
          <tbody>
            {entries.map((e) => <RtpRow key={e.id} entry={e} onChanged={onChanged} />)}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RtpRow({ entry, onChanged }: { entry: RtpEntry; onChanged(): void }) {
  const { me, people } = useSession();
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [busy, setBusy] = useState(false);
  async function sign(verb: SignoffVerb, signed: boolean) {
    setBusy(true);
    setError(null);
    try {
      await call(verb, { id: entry.id, signed });
      onChanged();
    } catch (e) {
      setError(e instanceof CallError ? e.payload : { code: 'Internal', message: 'Failed.' });
    } finally {
      setBusy(false);
    }
  }
  return (
    <tr data-rtp={entry.id}>
      <th scope="row">{humanize(entry.stage)}{entry.notes ? <div className="muted small">{entry.notes}</div> : null}{error ? <ErrorNote error={error} /> : null}</th>
      <td>{entry.criteria_met || <span className="muted">—</span>}</td>
      {SIGNOFFS.map((s) => {
        const by = entry[`${s.key}_signoff_by`];
        const at = entry[`${s.key}_signoff_at`];
        const mine = me && hasPermission(me.role, s.perm);
        return (
          <td key={s.key} className={by ? 'signed' : 'unsigned'} data-signoff={s.key}>
            {by ? <><span className="badge ok">Signed</span> <span className="signer">{personName(people, by)}</span><div className="muted small">{formatDateTime(at)}</div></> : <span className="badge muted">Not signed</span>}
            {mine ? (
              <div>
                <button type="button" className="link" disabled={busy} onClick={() => void sign(s.verb, !by)}>{by ? 'Withdraw' : `Sign as ${s.label.toLowerCase()}`}</button>
              </div>
            ) : null}
          </td>
        );
      })}
    </tr>
  );
}
