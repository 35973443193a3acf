/**
 * The table of Settings' record cards (users, devices, reports): a header row, one row per
 * record with its name as the row header, and a row of actions (link buttons that open the
 * record's dialogs). Where the card is narrower than the table needs (1024 px with the assistant
 * panel open), each row is shown as a stacked block, every cell with its column label, so nothing
 * is cut off or scrolled out of sight (CSS container query on `.record-table-wrap`, styles.css).
 *
 * Test hooks: `tr[data-<rowAttr>=value]`, cells with the column's `attr`, buttons `[data-action]`.
 */
import type { ReactNode } from 'react';

/** One column: its header label and what a row shows in it. */
export interface RecordColumn<T> {
  label: string;
  cell(row: T): ReactNode;
  /** Right-aligned figures. */
  num?: boolean;
  /** A data attribute (without `data-`) set on the cell, for tests. */
  attr?: string;
}

/** One action on a row: a link button opening the record's dialog. */
export interface RowAction {
  /** Its `data-action`. */
  id: string;
  label: string;
  /** The accessible name where the visible label alone is ambiguous ("Open" → "Open U19 workload"). */
  ariaLabel?: string;
  onClick(): void;
}

/**
 * A record table. `name` is the row-header column (the record's name); `rowAttr` names the row's
 * data attribute (`data-user`, `data-device`) and `rowId` its value; `actions` returns the row's
 * actions (none: an empty cell). @param caption the table's accessible name
 */
export function RecordTable<T>(props: {
  caption: string;
  rows: readonly T[];
  rowKey(row: T): string;
  rowAttr: string;
  rowId(row: T): string;
  name: RecordColumn<T>;
  columns: readonly RecordColumn<T>[];
  actions?(row: T): readonly RowAction[];
}) {
  const { name, columns } = props;
  return (
    <div className="record-table-wrap">
      <table className="table record-table" aria-label={props.caption}>
        <thead>
          <tr>
            <th scope="col">{name.label}</th>
            {columns.map((c) => (
              <th key={c.label} scope="col" className={c.num ? 'num' : undefined}>
                {c.label}
              </th>
            ))}
            {props.actions ? (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr key={props.rowKey(r)} {...{ [`data-${props.rowAttr}`]: props.rowId(r) }}>
              <th scope="row">{name.cell(r)}</th>
              {columns.map((c) => (
                <td key={c.label} className={c.num ? 'num' : undefined} data-label={c.label} {...(c.attr ? { [`data-${c.attr}`]: '' } : {})}>
                  {c.cell(r)}
                </td>
              ))}
              {props.actions ? <ActionsCell actions={props.actions(r)} /> : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The actions of one row (an empty cell when there are none: the stacked layout hides it). */
function ActionsCell({ actions }: { actions: readonly RowAction[] }) {
  if (actions.length === 0) return <td className="actions-cell" />;
  return (
    <td className="actions-cell">
      <div className="row-actions">
        {actions.map((a) => (
          <button key={a.id} type="button" className="link" data-action={a.id} aria-label={a.ariaLabel} onClick={a.onClick}>
            {a.label}
          </button>
        ))}
      </div>
    </td>
  );
}
