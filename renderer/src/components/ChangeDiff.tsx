/** A proposed or applied change, row by row: inserted values, or updated fields before → after. */
import { useEffect, useState } from 'react';
import { call } from '../bridge';

/** One row change (models/changeset.ts RowChange, loosely: events arrive as JSON). */
export interface ChangeRowView {
  op: string;
  table: string;
  id: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

function fmt(v: unknown): string {
  if (v === null || v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Athlete names for the athlete ids in `rows`, so a clinician can read them (ids stay in the data). */
export function useAthleteNames(rows: readonly ChangeRowView[]): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const needed = rows.some((r) => Object.keys({ ...r.before, ...r.after }).some((k) => k.endsWith('athlete_id')));
  useEffect(() => {
    if (!needed) return;
    let live = true;
    call('athletes.list', { limit: 5000, status: 'all' }).then(
      (r) => live && setNames(new Map(r.athletes.map((a) => [a.id, a.name]))),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [needed]);
  return names;
}

/** One row of a change. */
export function RowDiff({ row, names }: { row: ChangeRowView; names: ReadonlyMap<string, string> }) {
  const show = (k: string, v: unknown) => (k.endsWith('athlete_id') && typeof v === 'string' && names.has(v) ? names.get(v)! : fmt(v));
  const keys = [...new Set([...Object.keys(row.before ?? {}), ...Object.keys(row.after ?? {})])].filter((k) => k !== 'id');
  return (
    <li className="diff-row">
      <div className="small">
        <span className="badge">{row.op}</span> {row.table}
      </div>
      <table className="diff">
        <tbody>
          {keys.map((k) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              {row.op === 'update' ? (
                <>
                  <td className="before">{show(k, row.before?.[k])}</td>
                  <td aria-hidden="true">→</td>
                </>
              ) : null}
              <td className="after">{show(k, row.after?.[k])}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </li>
  );
}
