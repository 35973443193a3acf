/**
 * Help search quality on the labelled query set (main/help/queries.ts, issue 9 §12): precision and
 * recall over ≥ 30 clinician questions with the page that answers each, and off-topic questions
 * that must come back "not covered", against the documented floor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELP_QUERIES, HELP_SEARCH_FLOOR } from '../help/queries';
import { shippedHelpPages } from '../help';
import type { ClinicFixture } from '../testing/clinic-fixture';
import { createClinicFixture } from '../testing/clinic-fixture';
import type { HelpSearchResult } from './help';
import { searchHelpVerb } from './help';
import { runRead } from './verb';

let f: ClinicFixture;
beforeAll(() => {
  f = createClinicFixture();
});
afterAll(() => f.close());

describe('help search quality (labelled query set)', () => {
  it('the set has at least 30 answerable questions, every label is a shipped page, and some questions are not covered', () => {
    const slugs = new Set(shippedHelpPages().map((p) => p.slug));
    const answerable = HELP_QUERIES.filter((q) => q.page !== null);
    expect(answerable.length).toBeGreaterThanOrEqual(30);
    for (const q of answerable) expect(slugs.has(q.page!), `${q.q} → ${q.page}`).toBe(true);
    expect(HELP_QUERIES.some((q) => q.page === null)).toBe(true);
    expect(new Set(HELP_QUERIES.map((q) => q.q)).size).toBe(HELP_QUERIES.length);
  });

  it(`precision ≥ ${HELP_SEARCH_FLOOR.precision} and recall ≥ ${HELP_SEARCH_FLOOR.recall} through help.search`, () => {
    let answerable = 0;
    let found = 0;
    let covered = 0;
    let topRight = 0;
    const misses: string[] = [];
    for (const { q, page } of HELP_QUERIES) {
      const r = runRead(f.as(f.a.users.physio), searchHelpVerb, { query: q, limit: 5 }) as HelpSearchResult;
      const pages = r.passages.map((p) => p.slug);
      if (page !== null) {
        answerable++;
        if (pages.includes(page)) found++;
        else misses.push(`${q} → expected ${page}, got ${r.covered ? pages.join(', ') : 'not covered'}`);
      }
      if (r.covered) {
        covered++;
        if (pages[0] === page) topRight++;
        else if (page === null) misses.push(`${q} → expected not covered, got ${pages[0]}`);
      }
    }
    const recall = found / answerable;
    const precision = topRight / covered;
    const report = `precision ${precision.toFixed(3)} (${topRight}/${covered}), recall ${recall.toFixed(3)} (${found}/${answerable})\n${misses.join('\n')}`;
    expect(recall, report).toBeGreaterThanOrEqual(HELP_SEARCH_FLOOR.recall);
    expect(precision, report).toBeGreaterThanOrEqual(HELP_SEARCH_FLOOR.precision);
  });
});
