/**
 * The help centre's verbs: search the versioned help pages shipped with the app (SQLite FTS5)
 * and read one page. Every role may read help (`kinetix.use`, granted to all). How-to answers
 * of the assistant come only from here (kinetix.md §6): each passage carries page, version and
 * anchor for a numbered citation, a link into the help page and the app path for "Show me";
 * when nothing relevant is found the answer is `covered: false`, said plainly.
 */
import type { HelpPassageView } from '../../models/contract';
import * as I from '../../models/inputs';
import { NotFound } from '../../models/errors';
import type { Db } from '../data/db';
import type { HelpIndexResult } from '../data/help';
import { getHelpPageRow, indexHelpPages, listIndexedHelpPages, searchHelpIndex } from '../data/help';
import { shippedHelpPages } from '../help';
import { parseHelpPage } from '../help/parse';
import { readVerb } from './verb';

const indexed = new WeakMap<Db, HelpIndexResult>();

/**
 * Bring the help index of `db` in line with the pages shipped in this build (idempotent; writes
 * only when they differ). Call at startup; the help verbs also call it once per open database.
 */
export function ensureHelpIndexed(db: Db): HelpIndexResult {
  const done = indexed.get(db);
  if (done) return done;
  const r = indexHelpPages(db, shippedHelpPages());
  indexed.set(db, r);
  return r;
}

/** Words that carry no topic: question words, pronouns, auxiliaries, filler. */
const STOPWORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have having how i if in into is it its ' +
    'me my of on or our please should so some than that the their them then there these this those to too us was we were what when ' +
    'where which who whom why will with would you your yours about after again also any before both each few further here just more ' +
    'most no nor not now off once only other out over own same such under until up very am get got tell show explain help want ' +
    'need know way something thing things let lets whats hi hello thanks thank kinetix app vs versus many much does mean means meaning work works use using used anyone someone near ' +
    'go goes going nobody everyone every happens happen one percent per cent'
  ).split(/\s+/),
);

/**
 * Everyday words for what the help pages name otherwise (a clinician says "GPS vest", the pages say
 * "device"). Each query word listed here is searched as the help centre's word.
 */
const SYNONYMS: Readonly<Record<string, string>> = {
  gps: 'device',
  vest: 'device',
  vests: 'device',
  tracker: 'device',
  trackers: 'device',
  wearable: 'device',
  wearables: 'device',
  internet: 'offline',
  wifi: 'offline',
  network: 'offline',
  connection: 'offline',
};

/** Minimum share of the query's topic weight (idf) a passage must contain to count as relevant. */
export const MIN_TERM_COVERAGE = 0.6;
/** Minimum bm25 relevance (negated FTS5 rank) for a passage to count as relevant. */
export const MIN_SCORE = 1.0;

/** Topic words of a query: lowercase letter/digit runs; stopwords, bare numbers and 1-letter words dropped; everyday words mapped to the help centre's ({@link SYNONYMS}); deduplicated, at most 12. */
export function queryTerms(query: string): string[] {
  const out: string[] = [];
  for (const w of query
    .toLowerCase()
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}]+/u)) {
    // Bare numbers ("1.6", "10 percent") match figures on unrelated pages: they carry no topic.
    if (!w || /^\d+$/.test(w) || STOPWORDS.has(w)) continue;
    const term = SYNONYMS[w] ?? w;
    if (term.length < 2 || out.includes(term)) continue;
    out.push(term);
    if (out.length === 12) break;
  }
  return out;
}

export const SearchHelpInput = I.SearchHelp;

/** One relevant passage of a help page (the contract's `HelpPassageView`: one definition for main and renderer). */
export type HelpPassage = HelpPassageView;

/** Result of `help.search`. */
export type HelpSearchResult = { covered: true; query: string; passages: HelpPassage[] } | { covered: false; query: string; passages: []; note: string };

function notCovered(query: string): HelpSearchResult {
  return {
    covered: false,
    query,
    passages: [],
    note: `Not covered: the help centre has no page about "${query}". Say so rather than guessing, and suggest asking a club administrator.`,
  };
}

/**
 * Search the help index. A passage is relevant when its bm25 score reaches {@link MIN_SCORE} and
 * it contains at least {@link MIN_TERM_COVERAGE} of the query's topic words, each word weighted by
 * its rarity in the help centre (a word no page uses weighs most), so a question that shares only
 * a common word with the help pages ("change") is *not covered*.
 */
export function searchHelp(db: Db, query: string, limit = 5): HelpSearchResult {
  ensureHelpIndexed(db);
  const terms = queryTerms(query);
  if (terms.length === 0) return notCovered(query);
  const raw = searchHelpIndex(db, terms, 50);
  const idf = (t: string) => Math.log(1 + (raw.total + 1) / ((raw.docFreq[t] ?? 0) + 0.5));
  const totalWeight = terms.reduce((s, t) => s + idf(t), 0);
  const passages: HelpPassage[] = [];
  for (const c of raw.candidates) {
    const coverage = c.matched.reduce((s, t) => s + idf(t), 0) / totalWeight;
    const bm = -c.bm25;
    if (coverage < MIN_TERM_COVERAGE || bm < MIN_SCORE) continue;
    passages.push({
      slug: c.slug,
      version: c.version,
      anchor: c.anchor,
      title: c.title,
      heading: c.heading,
      snippet: c.snippet,
      score: Math.round(bm * coverage * 1000) / 1000,
      link: `/help/${c.slug}#${c.anchor}`,
      show_me: c.app_path,
    });
  }
  passages.sort((a, b) => b.score - a.score);
  const top = passages.slice(0, limit);
  return top.length ? { covered: true, query, passages: top } : notCovered(query);
}

export const searchHelpVerb = readVerb('help.search', {
  run: (vc, i) => searchHelp(vc.db, i.query, i.limit),
});

export const GetHelpPageInput = I.GetHelpPage;

/** A help page with its Markdown body and sections. */
export interface HelpPageView {
  slug: string;
  version: string;
  title: string;
  /** App path for "Show me". */
  app_path: string;
  /** Markdown (headings carry `{#anchor}`). */
  body: string;
  sections: { anchor: string; heading: string }[];
  /** False when an older version was asked for. */
  current: boolean;
}

export const getHelpPageVerb = readVerb('help.getPage', {
  run(vc, i): HelpPageView {
    ensureHelpIndexed(vc.db);
    const row = getHelpPageRow(vc.db, i.slug, i.version);
    if (!row) throw new NotFound(i.version ? `Help page ${i.slug} version ${i.version}` : `Help page ${i.slug}`);
    const p = parseHelpPage(row.body, `help_page ${row.slug}@${row.version}`);
    const current = getHelpPageRow(vc.db, i.slug)?.version === row.version;
    return {
      slug: p.slug,
      version: p.version,
      title: p.title,
      app_path: p.appPath,
      body: p.body,
      sections: p.sections.map((s) => ({ anchor: s.anchor, heading: s.heading })),
      current,
    };
  },
});

export const listHelpPagesVerb = readVerb('help.listPages', {
  run(vc) {
    ensureHelpIndexed(vc.db);
    return { pages: listIndexedHelpPages(vc.db) };
  },
});
