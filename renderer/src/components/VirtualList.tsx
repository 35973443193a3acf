/**
 * A keyboard-usable virtualised list with fixed row height: only the rows in view (plus a small
 * overscan) are in the DOM, so 5,000 rows scroll as smoothly as 50. Arrow keys, Page Up/Down,
 * Home/End move the active row; Enter opens it.
 */
import type { ReactNode } from 'react';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';

export interface VirtualListProps<T> {
  items: readonly T[];
  rowHeight: number;
  /** Accessible name of the list. */
  label: string;
  keyOf(item: T): string;
  renderRow(item: T, index: number, active: boolean): ReactNode;
  onOpen(item: T): void;
  overscan?: number;
  /** Optional header row (column titles), rendered above the scroller. */
  header?: ReactNode;
}

export function VirtualList<T>(p: VirtualListProps<T>) {
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(480);
  const [active, setActive] = useState(0);
  const overscan = p.overscan ?? 8;

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    setHeight(el.clientHeight);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    if (active >= p.items.length) setActive(Math.max(0, p.items.length - 1));
  }, [p.items.length, active]);

  const ensureVisible = useCallback((i: number) => {
    const el = scroller.current;
    if (!el) return;
    const top = i * p.rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + p.rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + p.rowHeight - el.clientHeight;
  }, [p.rowHeight]);

  function onKeyDown(e: React.KeyboardEvent) {
    const n = p.items.length;
    if (n === 0) return;
    const page = Math.max(1, Math.floor(height / p.rowHeight) - 1);
    let next = active;
    switch (e.key) {
      case 'ArrowDown': next = Math.min(n - 1, active + 1); break;
      case 'ArrowUp': next = Math.max(0, active - 1); break;
      case 'PageDown': next = Math.min(n - 1, active + page); break;
      case 'PageUp': next = Math.max(0, active - page); break;
      case 'Home': next = 0; break;
      case 'End': next = n - 1; break;
      case 'Enter': {
        const item = p.items[active];
        if (item !== undefined) p.onOpen(item);
        e.preventDefault();
        return;
      }
      default: return;
    }
    e.preventDefault();
    setActive(next);
    ensureVisible(next);
  }

  const first = Math.max(0, Math.floor(scrollTop / p.rowHeight) - overscan);
  const last = Math.min(p.items.length, Math.ceil((scrollTop + height) / p.rowHeight) + overscan);
  const rows: ReactNode[] = [];
  for (let i = first; i < last; i++) {
    const item = p.items[i] as T;
    rows.push(
      <div
        key={p.keyOf(item)}
        id={`vrow-${i}`}
        role="option"
        aria-selected={i === active}
        aria-posinset={i + 1}
        aria-setsize={p.items.length}
        className={`vrow${i === active ? ' active' : ''}`}
        style={{ top: i * p.rowHeight, height: p.rowHeight }}
        onClick={() => {
          setActive(i);
          p.onOpen(item);
        }}
      >
        {p.renderRow(item, i, i === active)}
      </div>,
    );
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
        aria-activedescendant={p.items.length ? `vrow-${active}` : undefined}
        onKeyDown={onKeyDown}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
      >
        <div className="vlist-inner" style={{ height: p.items.length * p.rowHeight }}>{rows}</div>
      </div>
    </div>
  );
}
