/**
 * The "already recorded that day" warning the entry forms share (session load, vitals): what is
 * stored, why a duplicate matters, and a box the user must tick to record a second one (a quick
 * second Enter cannot skip it: the form keeps its submit disabled until it is ticked). Test hooks:
 * `[data-duplicate-warning]` on the warning, `[data-action=ACTION]` on the box. The check itself is
 * the service's (Conflict `SameDayExists`); the forms show its answer here.
 */
import type { ReactNode } from 'react';

/** The warning with its tick box. `items`: one line per stored record (at most `limit` shown, then "and N more"). */
export function SameDayWarning(props: {
  title: ReactNode;
  items: readonly ReactNode[];
  advice: ReactNode;
  confirmLabel: string;
  action: string;
  checked: boolean;
  onChange(checked: boolean): void;
  limit?: number;
}) {
  const limit = props.limit ?? 8;
  return (
    <div className="replace-confirm field wide" role="alert" data-duplicate-warning>
      <strong>{props.title}</strong>
      {props.items.length ? (
        <ul className="small">
          {props.items.slice(0, limit).map((it, i) => (
            <li key={i}>{it}</li>
          ))}
          {props.items.length > limit ? <li>and {props.items.length - limit} more</li> : null}
        </ul>
      ) : null}
      <p className="small">{props.advice}</p>
      <label className="check">
        <input type="checkbox" data-action={props.action} checked={props.checked} onChange={(e) => props.onChange(e.target.checked)} /> {props.confirmLabel}
      </label>
    </div>
  );
}
