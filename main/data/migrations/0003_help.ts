/**
 * 0003: the help centre's search index (kinetix.md §6, issue 4).
 * - help_passage: an FTS5 index with one row per section of each shipped help page (the page's
 *   current version only). slug/version/anchor/app_path are stored but not searched; title,
 *   heading and text are searched with the Porter stemmer over unicode61 (diacritics folded).
 * - help_index_state: a single row with the content hash of the indexed pages, so startup
 *   re-indexes only when the shipped pages differ.
 * The pages themselves are rows of help_page (0001), one per (slug, version).
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
CREATE VIRTUAL TABLE help_passage USING fts5(
  slug UNINDEXED,
  version UNINDEXED,
  anchor UNINDEXED,
  app_path UNINDEXED,
  title,
  heading,
  text,
  tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE help_index_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  content_hash TEXT NOT NULL,
  page_count INTEGER NOT NULL,
  passage_count INTEGER NOT NULL,
  indexed_at TEXT NOT NULL
);
`;
