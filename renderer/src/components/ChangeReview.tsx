/**
 * A change a person reviews before it is applied: each row names its record (the athlete, the fee
 * item's code and name), fields by their labels with units, money as money, dates as dates,
 * people by name; the policy's reason once for the whole change; a bulk change (many rows of one
 * kind) as a compact table in a wide dialog where rows can be left out before approving.
 * The confirm button says what will happen ("Confirm: Sign doctor RTP sign-off …").
 */
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import type { ProposalItemView } from '../../../models/contract';
import type { RowChange } from '../../../models/changeset';
import { call } from '../bridge';
import { useSession } from '../store';
import type { EntryForm } from './Form';
import type { NameBook } from './labels';
import { RECORD_NOUN, fieldLabel, formatValue, labelWithUnit } from './labels';
import { humanize } from '../format';

const BULK_ROWS = 4;
/** Verbs whose single-row get reveals the athlete of an updated row. */
const GET_VERB: Record<string, 'injuries.get' | 'screenings.get' | 'rtp.get'> = { injury: 'injuries.get', screening: 'screenings.get', rtp_entry: 'rtp.get' };
/** Fields never shown in a diff (internal links, bookkeeping). */
const HIDDEN = new Set(['id', 'org_id', 'version', 'created_at', 'updated_at', 'api_key_hash', 'pin_hash', 'injury_id', 'training_session_id', 'folder_id']);

/**
 * The athlete and a short description of one updated clinical row (`{ athleteId, what }`), read
 * with its typed get verb; null for a table without one.
 */
async function recordOf(table: string, id: string): Promise<{ athleteId: string; what: string } | null> {
  if (table === 'injury') {
    const r = await call('injuries.get', { id });
    return { athleteId: r.athlete_id, what: `${r.side === 'none' ? '' : `${r.side} `}${r.body_part} injury` };
  }
  if (table === 'rtp_entry') {
    const r = await call('rtp.get', { id });
    return { athleteId: r.athlete_id, what: `RTP stage “${humanize(r.stage)}”` };
  }
  if (table === 'screening') {
    const r = await call('screenings.get', { id });
    return { athleteId: r.athlete_id, what: `${r.test.replace(/_/g, ' ')} screening` };
  }
  return null;
}

interface Names extends NameBook {
  /** row id → what the row is ("Ellery Hart — Left hamstring injury"). */
  records: ReadonlyMap<string, string>;
}

/** Load the names a set of row changes needs (athletes, squads, fee items, the athlete of updated rows). */
export function useNames(changes: readonly RowChange[]): Names {
  const people = useSession((s) => s.people);
  const [book, setBook] = useState<{ athletes: Map<string, string>; squads: Map<string, string>; records: Map<string, string> }>({
    athletes: new Map(),
    squads: new Map(),
    records: new Map(),
  });
  const key = changes.map((c) => c.id).join(',');
  useEffect(() => {
    let live = true;
    void (async () => {
      const athletes = new Map<string, string>();
      const squads = new Map<string, string>();
      const records = new Map<string, string>();
      const wantsAthletes = changes.some(
        (c) =>
          c.table === 'athlete' ||
          (c.op !== 'delete' && Object.keys({ ...c.after, ...(c.op === 'update' ? c.before : {}) }).some((k) => k.endsWith('athlete_id'))) ||
          c.table in GET_VERB,
      );
      const [a, s] = await Promise.all([
        wantsAthletes ? call('athletes.list', { limit: 5000, status: 'all' }).catch(() => null) : null,
        changes.some((c) => c.table === 'squad' || (c.op !== 'delete' && 'squad_id' in c.after)) ? call('squads.list', {}).catch(() => null) : null,
      ]);
      for (const x of a?.athletes ?? []) athletes.set(x.id, x.name);
      for (const x of s ?? []) squads.set(x.id, x.name);
      if (changes.some((c) => c.table === 'rate_item')) {
        const sched = await call('rates.schedule', {}).catch(() => null);
        for (const f of sched?.folders ?? []) for (const i of f.items) records.set(i.id, `${i.code} ${i.name} (${f.name})`);
      }
      // Updated clinical rows: whose record is it?
      await Promise.all(
        changes
          .filter((c) => c.op === 'update' && GET_VERB[c.table])
          .slice(0, 20)
          .map(async (c) => {
            const rec = await recordOf(c.table, c.id).catch(() => null);
            if (!rec) return;
            const who = athletes.get(rec.athleteId);
            const what = rec.what;
            records.set(c.id, who ? `${who} — ${what}` : what);
          }),
      );
      if (live) setBook({ athletes, squads, records });
    })();
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  return { people, ...book };
}

/** What a row is, by name. */
export function recordName(c: RowChange, names: Names): string {
  const noun = RECORD_NOUN[c.table] ?? c.table;
  const known = names.records.get(c.id);
  if (known) return known;
  const after = c.op === 'delete' ? {} : c.after;
  if (c.table === 'athlete') return names.athletes.get(c.id) ?? (typeof after.name === 'string' ? after.name : noun);
  if (c.table === 'squad') return names.squads.get(c.id) ?? (typeof after.name === 'string' ? after.name : noun);
  if (c.table === 'rate_item' && typeof after.code === 'string') return `${after.code} ${String(after.name ?? '')}`.trim();
  const athlete = typeof after.athlete_id === 'string' ? names.athletes.get(after.athlete_id) : undefined;
  return athlete ? `${athlete} — ${noun.charAt(0) + noun.slice(1).replace(/^[A-Z][a-z]/, (x) => x.toLowerCase())}` : noun;
}

/** The visible fields of a row change. */
function fieldsOf(c: RowChange): string[] {
  if (c.op === 'delete') return [];
  const keys = c.op === 'update' ? [...new Set([...Object.keys(c.before), ...Object.keys(c.after)])] : Object.keys(c.after);
  return keys.filter(
    (k) => !HIDDEN.has(k) && !(c.op === 'insert' && (c.after[k] === null || c.after[k] === '')) && !(c.op === 'insert' && k.endsWith('athlete_id')),
  );
}

/** True when every row is the same kind of change to the same table (rows can be left out). */
function isBulk(changes: readonly RowChange[]): boolean {
  return changes.length >= BULK_ROWS && new Set(changes.map((c) => `${c.op}:${c.table}`)).size === 1;
}

/** One row, field by field: label, before → after. */
function RowDiffView({ c, names }: { c: RowChange; names: Names }) {
  const verb = c.op === 'insert' ? 'New' : c.op === 'update' ? 'Change' : 'Remove';
  return (
    <li className="diff-row" data-row={c.id}>
      <div>
        <span className="badge">{verb}</span> <strong>{RECORD_NOUN[c.table] ?? c.table}:</strong> <span data-record-name>{recordName(c, names)}</span>
      </div>
      {c.op === 'delete' ? null : (
        <table className="diff">
          <tbody>
            {fieldsOf(c).map((k) => (
              <tr key={k} data-diff-field={k}>
                <th scope="row">{labelWithUnit(c.table, k)}</th>
                {c.op === 'update' ? (
                  <>
                    <td className="before">{formatValue(c.table, k, c.before[k], names)}</td>
                    <td aria-hidden="true">→</td>
                  </>
                ) : null}
                <td className="after">{formatValue(c.table, k, c.after[k], names)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </li>
  );
}

/** Many rows of one kind: a compact table; `onToggle` (when given) lets rows be left out. */
function BulkTable({
  changes,
  names,
  dropped,
  onToggle,
}: {
  changes: readonly RowChange[];
  names: Names;
  dropped: ReadonlySet<string>;
  onToggle?: (id: string) => void;
}) {
  const first = changes[0]!;
  // Rows of athletes' records (a squad load): the athlete names the row.
  const byAthlete = changes.every((c) => c.op !== 'delete' && typeof c.after.athlete_id === 'string');
  const nameOf = (c: RowChange) =>
    byAthlete && c.op !== 'delete' ? (names.athletes.get(c.after.athlete_id as string) ?? recordName(c, names)) : recordName(c, names);
  const cols = [...new Set(changes.flatMap(fieldsOf))].filter(
    (k) => !(first.table === 'session_load' && k === 'date' && new Set(changes.map((c) => (c.op === 'delete' ? '' : c.after.date))).size === 1),
  );
  return (
    <table className="table bulk" data-bulk-rows={changes.length}>
      <thead>
        <tr>
          {onToggle ? <th scope="col">Include</th> : null}
          <th scope="col">{byAthlete ? 'Athlete' : (RECORD_NOUN[first.table] ?? first.table)}</th>
          {cols.map((k) => (
            <th key={k} scope="col" className={fieldLabel(first.table, k).kind === 'number' || fieldLabel(first.table, k).kind === 'cents' ? 'num' : ''}>
              {labelWithUnit(first.table, k)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => {
          const name = nameOf(c);
          const out = dropped.has(c.id);
          return (
            <tr key={c.id} data-row={c.id} data-record={name} className={out ? 'dropped' : ''}>
              {onToggle ? (
                <td>
                  <input type="checkbox" checked={!out} onChange={() => onToggle(c.id)} aria-label={`Include ${name}`} />
                </td>
              ) : null}
              <th scope="row">{name}</th>
              {cols.map((k) => {
                const kind = fieldLabel(c.table, k).kind;
                const num = kind === 'number' || kind === 'cents';
                return (
                  <td key={k} className={num ? 'num' : ''}>
                    {c.op === 'update' && k in c.before ? (
                      <>
                        <span className="before">{formatValue(c.table, k, c.before[k], names)}</span> →{' '}
                      </>
                    ) : null}
                    {c.op === 'delete' ? '' : formatValue(c.table, k, c.after[k], names)}
                  </td>
                );
              })}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The diff of a proposal, with the policy's reasons once (used by review dialogs and Approvals). */
export function ChangeDiffView({
  p,
  dropped = new Set(),
  onToggle,
}: {
  p: Pick<ProposalItemView, 'changes' | 'decisions'>;
  dropped?: ReadonlySet<string>;
  onToggle?: (id: string) => void;
}) {
  const names = useNames(p.changes);
  const reasons = [...new Map(p.decisions.filter((d) => d.effect !== 'allow').map((d) => [d.code, d])).values()];
  return (
    <div className="change-diff">
      {reasons.map((d) => {
        const n = p.decisions.filter((x) => x.code === d.code).length;
        return (
          <p key={d.code} className="policy-reason" data-policy={d.effect}>
            {d.effect === 'needs_owner' ? 'Needs an owner: ' : ''}
            {d.reason}
            {n > 1 ? ` (applies to ${n} rows)` : ''}
          </p>
        );
      })}
      {isBulk(p.changes) ? (
        <BulkTable changes={p.changes} names={names} dropped={dropped} {...(onToggle ? { onToggle } : {})} />
      ) : (
        <ol className="diff-list">
          {p.changes.map((c) => (
            <RowDiffView key={c.id} c={c} names={names} />
          ))}
        </ol>
      )}
    </div>
  );
}

/** The review step of a form: what will change, then one confirmation. */
export function ReviewDialog({ form }: { form: EntryForm }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const review = form.review!;
  const p = review.proposal;
  const [dropped, setDropped] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  const bulk = isBulk(p.changes);
  // An Undo is applied whole (main/ipc/forms.ts narrowProposal refuses to narrow one).
  const canDrop = bulk && p.status === 'proposed' && p.source !== 'assistant' && p.verb !== 'changesets.undo';
  const kept = p.changes.length - dropped.size;
  const toggle = (id: string) =>
    setDropped((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  const needsOwner = p.status === 'needs_owner';
  const summary = useMemo(() => (dropped.size ? `${p.summary} (${dropped.size} left out)` : p.summary), [p.summary, dropped.size]);
  async function act(f: () => Promise<void>) {
    setBusy(true);
    try {
      await f();
    } finally {
      setBusy(false);
    }
  }
  return (
    <dialog
      ref={ref}
      className={`review-dialog${bulk ? ' wide' : ''}`}
      aria-labelledby={titleId}
      data-review={p.id}
      data-status={p.status}
      onCancel={(e) => {
        // Escape: change nothing. A plain review is cancelled; a change already waiting for an
        // owner is left waiting (withdrawing it is the Withdraw button, never a key press).
        // The review sits inside the form's dialog: the key closes this one only, back to the form.
        e.preventDefault();
        e.stopPropagation();
        void act(() => (needsOwner ? form.approve() : form.cancelReview()));
      }}
    >
      <h2 id={titleId}>{needsOwner ? 'This change needs an owner' : 'Check what will change'}</h2>
      <p className="review-summary">{summary}</p>
      {review.notes.map((n, i) => (
        <p key={i} className="review-note warn-text" data-review-note>
          {n}
        </p>
      ))}
      <p className="small muted">
        {kept} row{kept === 1 ? '' : 's'} will change{canDrop ? '; untick a row to leave it out' : ''}.
      </p>
      <ChangeDiffView p={p} dropped={dropped} {...(canDrop ? { onToggle: toggle } : {})} />
      {needsOwner ? (
        <p className="small">Nothing is written until an owner approves it in Approvals. You can leave it there for them, or withdraw it.</p>
      ) : null}
      <div className="form-actions">
        {needsOwner ? (
          <button type="button" className="primary" disabled={busy} onClick={() => void act(() => form.approve())}>
            Leave it for an owner
          </button>
        ) : (
          <button type="button" className="primary" disabled={busy || kept === 0} data-confirm onClick={() => void act(() => form.approve([...dropped]))}>
            Confirm: {summary}
          </button>
        )}
        <button type="button" disabled={busy} onClick={() => void act(() => form.cancelReview())}>
          {needsOwner ? 'Withdraw' : 'Cancel — change nothing'}
        </button>
      </div>
    </dialog>
  );
}
