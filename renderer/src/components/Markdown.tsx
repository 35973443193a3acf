/**
 * A small, safe Markdown renderer for help pages and assistant answers: headings with `{#anchor}`,
 * paragraphs, `-`/`1.` lists, **bold**, `code` and links. It builds React elements (never HTML
 * strings); in-app links (`/athletes/…`, `/help/…`) become app navigation, anything else plain text.
 */
import type { ReactNode } from 'react';
import { hashForAppPath } from '../router';

/** Inline formatting: **bold**, `code`, [text](/in-app/path). */
export function inline(text: string, athleteId?: string | null): ReactNode[] {
  const out: ReactNode[] = [];
  const re = /(\*\*[^*]+\*\*|`[^`]+`|\[[^\]]+\]\([^)\s]+\))/g;
  let last = 0;
  let m: RegExpExecArray | null;
  let k = 0;
  while ((m = re.exec(text))) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const t = m[0];
    if (t.startsWith('**')) out.push(<strong key={k++}>{t.slice(2, -2)}</strong>);
    else if (t.startsWith('`')) out.push(<code key={k++}>{t.slice(1, -1)}</code>);
    else {
      const lm = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(t);
      const label = lm?.[1] ?? t;
      const href = lm?.[2] ?? '';
      out.push(href.startsWith('/') && !href.startsWith('//') ? <a key={k++} href={hashForAppPath(href, athleteId)}>{label}</a> : <span key={k++}>{label}</span>);
    }
    last = m.index + t.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Render a Markdown body. Headings get ids `help-<anchor>` so a link can scroll to them. */
export function Markdown({ body, athleteId, skipTitle }: { body: string; athleteId?: string | null; skipTitle?: boolean }) {
  const blocks: ReactNode[] = [];
  const lines = body.replace(/^---[\s\S]*?---\n/, '').split('\n');
  let para: string[] = [];
  let list: { ordered: boolean; items: string[] } | null = null;
  let table: string[][] = [];
  let k = 0;
  const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
  const flush = () => {
    if (para.length) blocks.push(<p key={k++}>{inline(para.join(' '), athleteId)}</p>);
    para = [];
    if (table.length) {
      const [head, ...rows] = table.filter((r) => !r.every((c) => /^:?-{3,}:?$/.test(c)));
      blocks.push(
        <table key={k++} className="table">
          <thead><tr>{(head ?? []).map((c, i) => <th key={i} scope="col">{inline(c, athleteId)}</th>)}</tr></thead>
          <tbody>{rows.map((r, j) => <tr key={j}>{r.map((c, i) => <td key={i}>{inline(c, athleteId)}</td>)}</tr>)}</tbody>
        </table>,
      );
      table = [];
    }
    if (list) {
      const items = list.items.map((it, i) => <li key={i}>{inline(it, athleteId)}</li>);
      blocks.push(list.ordered ? <ol key={k++}>{items}</ol> : <ul key={k++}>{items}</ul>);
    }
    list = null;
  };
  for (const line of lines) {
    const h = /^(#{1,4})\s+(.*?)(?:\s*\{#([a-z0-9-]+)\})?\s*$/.exec(line);
    const li = /^\s*(-|\*|\d+\.)\s+(.*)$/.exec(line);
    if (/^\s*\|.*\|\s*$/.test(line)) {
      if (para.length || list) flush();
      table.push(cells(line));
      continue;
    }
    if (table.length) flush();
    if (h) {
      flush();
      const level = (h[1] ?? '#').length;
      if (level === 1 && skipTitle) continue;
      const id = h[3] ? `help-${h[3]}` : undefined;
      const text = inline(h[2] ?? '', athleteId);
      blocks.push(level <= 2 ? <h2 key={k++} id={id} tabIndex={-1}>{text}</h2> : <h3 key={k++} id={id} tabIndex={-1}>{text}</h3>);
    } else if (li) {
      if (para.length) flush();
      const ordered = /\d/.test(li[1] ?? '');
      if (!list || list.ordered !== ordered) {
        flush();
        list = { ordered, items: [] };
      }
      list.items.push(li[2] ?? '');
    } else if (line.trim() === '') flush();
    else {
      if (list) flush();
      para.push(line.trim());
    }
  }
  flush();
  return <div className="markdown">{blocks}</div>;
}
