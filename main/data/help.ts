/**
 * The help centre's storage: `help_page` rows (one per slug and version, kept when a page moves
 * on, so a citation of an older version still resolves) and the FTS5 passage index
 * (`help_passage`, migration 0003) over the sections of the current version of each page.
 * Product content, not business data: not org-scoped, never in a changeset or the outbox.
 */
import { createHash } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import type { Db } from './db';
import { sqlite } from './sqlite';

/**
 * A help page as the index stores it (the parsed form of a page in main/help/pages/; the data
 * layer does not parse Markdown). `body` is the Markdown without front matter.
 */
export interface HelpPageInput {
  slug: string;
  version: string;
  title: string;
  /** App path for "Show me". */
  appPath: string;
  body: string;
  sections: readonly { anchor: string; heading: string; text: string }[];
}

/** Result of {@link indexHelpPages}. */
export interface HelpIndexResult {
  /** False when the index already held exactly these pages (nothing was written). */
  changed: boolean;
  pages: number;
  passages: number;
  contentHash: string;
}

/** SHA-256 over the pages as indexed (slug, version, title, path, body, sections), order-independent. */
export function helpContentHash(pages: readonly HelpPageInput[]): string {
  const sorted = [...pages].sort((a, b) => a.slug.localeCompare(b.slug));
  const h = createHash('sha256');
  for (const p of sorted) h.update(JSON.stringify([p.slug, p.version, p.title, p.appPath, p.body, p.sections])).update('\n');
  return h.digest('hex');
}

/**
 * Make the stored help pages and the passage index match `pages` (the shipped set). Idempotent:
 * when the stored content hash equals this set's, nothing is written. Otherwise, in one immediate
 * transaction: insert each (slug, version) not yet stored (a changed body under the same version
 * replaces the stored one), rebuild the passage index from these pages only, record the hash.
 */
export function indexHelpPages(db: Db, pages: readonly HelpPageInput[], now: Date = new Date()): HelpIndexResult {
  const contentHash = helpContentHash(pages);
  const passages = pages.reduce((n, p) => n + p.sections.length, 0);
  const current = () => sqlite(db).prepare('SELECT content_hash FROM help_index_state WHERE id = 1').get() as { content_hash: string } | undefined;
  if (current()?.content_hash === contentHash) return { changed: false, pages: pages.length, passages, contentHash };

  let changed = false;
  const run = sqlite(db).transaction(() => {
    if (current()?.content_hash === contentHash) return; // another process got there first
    changed = true;
    const find = sqlite(db).prepare('SELECT id, title, body FROM help_page WHERE slug = ? AND version = ?');
    const insert = sqlite(db).prepare('INSERT INTO help_page (id, slug, version, title, body) VALUES (?, ?, ?, ?, ?)');
    const update = sqlite(db).prepare('UPDATE help_page SET title = ?, body = ? WHERE id = ?');
    const addPassage = sqlite(db).prepare('INSERT INTO help_passage (slug, version, anchor, app_path, title, heading, text) VALUES (?, ?, ?, ?, ?, ?, ?)');
    sqlite(db).prepare('DELETE FROM help_passage').run();
    for (const p of pages) {
      const body = serialise(p);
      const row = find.get(p.slug, p.version) as { id: string; title: string; body: string } | undefined;
      if (!row) insert.run(uuidv7(), p.slug, p.version, p.title, body);
      else if (row.title !== p.title || row.body !== body) update.run(p.title, body, row.id);
      for (const s of p.sections) addPassage.run(p.slug, p.version, s.anchor, p.appPath, p.title, s.heading, s.text);
    }
    sqlite(db)
      .prepare(
        `INSERT INTO help_index_state (id, content_hash, page_count, passage_count, indexed_at) VALUES (1, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET content_hash = excluded.content_hash, page_count = excluded.page_count, passage_count = excluded.passage_count, indexed_at = excluded.indexed_at`,
      )
      .run(contentHash, pages.length, passages, now.toISOString());
  });
  run.immediate();
  return { changed, pages: pages.length, passages, contentHash };
}

/** The stored body keeps the page's app path in a front-matter line, so a stored row is self-describing. */
function serialise(p: HelpPageInput): string {
  return `---\nslug: ${p.slug}\nversion: ${p.version}\ntitle: ${p.title}\npath: ${p.appPath}\n---\n${p.body}\n`;
}

/** A stored help page row. `body` is the page's Markdown with its front matter. */
export interface HelpPageRow {
  id: string;
  slug: string;
  version: string;
  title: string;
  body: string;
}

/** The version of `slug` that is currently indexed (the shipped one), or null. */
export function currentHelpVersion(db: Db, slug: string): string | null {
  const r = sqlite(db).prepare('SELECT version FROM help_passage WHERE slug = ? LIMIT 1').get(slug) as { version: string } | undefined;
  return r?.version ?? null;
}

/** One stored page by slug and version; without a version, the currently indexed one. Null when absent. */
export function getHelpPageRow(db: Db, slug: string, version?: string): HelpPageRow | null {
  const v = version ?? currentHelpVersion(db, slug);
  if (!v) return null;
  return (
    (sqlite(db).prepare('SELECT id, slug, version, title, body FROM help_page WHERE slug = ? AND version = ?').get(slug, v) as HelpPageRow | undefined) ?? null
  );
}

/** The currently indexed pages (slug, version, title, app path, sections), by title. */
export function listIndexedHelpPages(db: Db): { slug: string; version: string; title: string; app_path: string; sections: number }[] {
  return sqlite(db)
    .prepare('SELECT slug, version, title, app_path, count(*) AS sections FROM help_passage GROUP BY slug, version, title, app_path ORDER BY title')
    .all() as { slug: string; version: string; title: string; app_path: string; sections: number }[];
}

/** A passage that matched at least one search term. `bm25` is FTS5's rank (lower is better). */
export interface HelpCandidate {
  slug: string;
  version: string;
  anchor: string;
  app_path: string;
  title: string;
  heading: string;
  snippet: string;
  bm25: number;
  /** The search terms that occur in this passage (title, heading or text). */
  matched: string[];
}

/** What {@link searchHelpIndex} found: candidates plus the statistics a relevance rule needs. */
export interface HelpSearchRaw {
  /** Passages in the index. */
  total: number;
  /** Per term, how many passages contain it (0 = not in the help centre at all). */
  docFreq: Record<string, number>;
  candidates: HelpCandidate[];
}

/** An FTS5 string literal: the term in double quotes (embedded quotes doubled), so no query syntax survives. */
function ftsLiteral(term: string): string {
  return `"${term.replace(/"/g, '""')}"`;
}

/**
 * Search the passage index for any of `terms` (plain words; each is matched as a quoted FTS5
 * string, so operators such as NEAR, *, ^, column filters or parentheses in user input are
 * inert). Returns up to `limit` candidates ranked by bm25 (heading 4×, title 2×, text 1×) with the
 * terms each contains, and each term's passage count.
 */
export function searchHelpIndex(db: Db, terms: readonly string[], limit = 50): HelpSearchRaw {
  const total = (sqlite(db).prepare('SELECT count(*) AS n FROM help_passage').get() as { n: number }).n;
  const docFreq: Record<string, number> = {};
  const rowsByTerm = new Map<string, Set<number>>();
  const byTerm = sqlite(db).prepare('SELECT rowid AS id FROM help_passage WHERE help_passage MATCH ?');
  for (const t of terms) {
    const ids = new Set((byTerm.all(ftsLiteral(t)) as { id: number }[]).map((r) => r.id));
    rowsByTerm.set(t, ids);
    docFreq[t] = ids.size;
  }
  const present = terms.filter((t) => (docFreq[t] ?? 0) > 0);
  if (present.length === 0) return { total, docFreq, candidates: [] };
  const rows = sqlite(db)
    .prepare(
      `SELECT rowid AS id, slug, version, anchor, app_path, title, heading,
        snippet(help_passage, 6, '', '', '…', 24) AS snippet,
        bm25(help_passage, 0, 0, 0, 0, 2.0, 4.0, 1.0) AS bm25
      FROM help_passage WHERE help_passage MATCH ? ORDER BY bm25 LIMIT ?`,
    )
    .all(present.map(ftsLiteral).join(' OR '), Math.max(1, Math.min(limit, 200))) as (Omit<HelpCandidate, 'matched'> & { id: number })[];
  return {
    total,
    docFreq,
    candidates: rows.map(({ id, ...r }) => ({ ...r, matched: present.filter((t) => rowsByTerm.get(t)?.has(id)) })),
  };
}
