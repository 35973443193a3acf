/**
 * A keyboard-usable virtualised list with fixed row height, on @tanstack/react-virtual: only the
 * rows in view (plus a small overscan) are in the DOM, so 5,000 rows scroll as smoothly as 50.
 *
 * Keyboard and ARIA (WAI-ARIA APG listbox pattern, "aria-activedescendant" focus): the scroller
 * is the focusable `listbox`; Arrow keys, Page Up/Down and Home/End move the active `option`
 * (scrolled into view, so the element `aria-activedescendant` names is always rendered); Enter
 * or a click opens it. Each option carries `aria-posinset`/`aria-setsize`, because most of the
 * set is not in the DOM. Row ids are prefixed with a per-list `useId()`, so two lists on one page
 * never share an id.
 */
import type { KeyboardEvent, ReactNode } from 'react';
import { useId, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';

export interface VirtualListProps<T> {
  items: readonly T[];
  /** Height of every row in CSS pixels. */
  rowHeight: number;
  /** Accessible name of the list. */
  label: string;
  keyOf(item: T): string;
  renderRow(item: T, index: number, active: boolean): ReactNode;
  onOpen(item: T): void;
  /** Rows rendered beyond each edge of the viewport. @default 8 */
  overscan?: number;
  /** Optional header row (column titles), rendered above the scroller. */
  header?: ReactNode;
}

export function VirtualList<T>(p: VirtualListProps<T>) {
  const scroller = useRef<HTMLDivElement>(null);
  const listId = useId();
  const [activeRaw, setActive] = useState(0);
  const n = p.items.length;
  // The list can shrink under the active row (a filter): clamp instead of storing a new index.
  const active = Math.max(0, Math.min(activeRaw, n - 1));
  const rowId = (i: number) => `${listId}-row-${i}`;

  // The virtualizer's functions are called during this render only; nothing memoises them.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: n,
    getScrollElement: () => scroller.current,
    estimateSize: () => p.rowHeight,
    overscan: p.overscan ?? 8,
    initialRect: { width: 0, height: 480 },
  });

  function moveTo(i: number) {
    setActive(i);
    virtualizer.scrollToIndex(i, { align: 'auto' });
  }

  function onKeyDown(e: KeyboardEvent) {
    if (n === 0) return;
    const height = scroller.current?.clientHeight ?? 480;
    const page = Math.max(1, Math.floor(height / p.rowHeight) - 1);
    switch (e.key) {
      case 'ArrowDown':
        moveTo(Math.min(n - 1, active + 1));
        break;
      case 'ArrowUp':
        moveTo(Math.max(0, active - 1));
        break;
      case 'PageDown':
        moveTo(Math.min(n - 1, active + page));
        break;
      case 'PageUp':
        moveTo(Math.max(0, active - page));
        break;
      case 'Home':
        moveTo(0);
        break;
      case 'End':
        moveTo(n - 1);
        break;
      case 'Enter': {
        const item = p.items[active];
        if (item !== undefined) p.onOpen(item);
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  }

  return (
    <div className="vlist">
      {p.header}
      <div
        ref={scroller}
        className="vlist-scroller"
        role="listbox"
        aria-label={p.label}
        tabIndex={0}
        aria-activedescendant={n ? rowId(active) : undefined}
        onKeyDown={onKeyDown}
      >
        <div className="vlist-inner" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((v) => {
            const item = p.items[v.index] as T;
            const isActive = v.index === active;
            return (
              <div
                key={p.keyOf(item)}
                id={rowId(v.index)}
                role="option"
                aria-selected={isActive}
                aria-posinset={v.index + 1}
                aria-setsize={n}
                className={`vrow${isActive ? ' active' : ''}`}
                style={{ top: v.start, height: p.rowHeight }}
                onClick={() => {
                  setActive(v.index);
                  p.onOpen(item);
                }}
              >
                {p.renderRow(item, v.index, isActive)}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
