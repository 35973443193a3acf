/**
 * The help centre through the service layer on a real SQLite file: every role may search and
 * read help; passages carry page, version, anchor, a help link and the "Show me" path; an
 * off-topic question is *not covered*; query text is never FTS5 syntax.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../models/errors';
import { ROLES } from '../../models/roles';
import { indexHelpPages } from '../data/help';
import { shippedHelpPages } from '../help';
import type { ClinicFixture } from '../testing/clinic-fixture';
import { createClinicFixture } from '../testing/clinic-fixture';
import type { HelpPageView, HelpSearchResult } from './help';
import { MIN_TERM_COVERAGE, ensureHelpIndexed, getHelpPageVerb, listHelpPagesVerb, queryTerms, searchHelpVerb } from './help';
import { runRead } from './verb';
import { sqlite } from '../data/sqlite';

let f: ClinicFixture;
beforeAll(() => {
  f = createClinicFixture();
});
afterAll(() => f.close());

const search = (query: string, limit?: number, userId = f.a.users.physio) =>
  runRead(f.as(userId), searchHelpVerb, limit === undefined ? { query } : { query, limit }) as HelpSearchResult;
const page = (input: unknown, userId = f.a.users.coach) => runRead(f.as(userId), getHelpPageVerb, input) as HelpPageView;

describe('help.search', () => {
  it('every role may read help (kinetix.use), including an athlete account', () => {
    for (const role of ROLES) {
      const r = search('record an injury', 3, f.a.users[role]);
      expect(r.covered, role).toBe(true);
    }
  });

  it('returns passages with page, version, anchor, snippet, score, help link and Show me path', () => {
    const r = search('What does insufficient data mean for the ACWR?');
    expect(r.covered).toBe(true);
    const top = r.passages[0]!;
    expect(top).toMatchObject({
      slug: 'reading-acwr',
      version: '1.0',
      anchor: 'insufficient-data',
      title: 'Read the acute:chronic workload ratio (ACWR)',
      heading: 'Insufficient data (the coverage rule)',
      link: '/help/reading-acwr#insufficient-data',
      show_me: '/athletes/:id/workload',
    });
    expect(top.snippet).toMatch(/Insufficient data/);
    expect(top.score).toBeGreaterThan(0);
    const scores = r.passages.map((p) => p.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it.each([
    ['how do I record an injury', 'recording-an-injury'],
    ['who can give the doctor sign-off for return to play', 'return-to-play'],
    ["log yesterday's session for the U19 squad", 'logging-session-loads'],
    ['rolling vs EWMA', 'reading-acwr'],
    ['why is a knee flexion reading omitted', 'pose-metrics'],
    ['raise all insurer prices by 25%', 'fee-schedule'],
    ['undo a change in the activity log', 'activity-and-undo'],
    ['what happens if I do not confirm within 10 minutes', 'assistant-approvals'],
    ['rotate a device API key', 'devices-and-keys'],
    ['does the app work offline, how does sync work', 'working-offline'],
    ['wellness questionnaire scales', 'wellness-questionnaire'],
    ['I forgot my PIN', 'signing-in'],
    ['how many cameras must see the athlete for a valid reading', 'pose-metrics'],
    ['how many cameras does the capture room use', 'capture'],
  ])('"%s" → %s', (q, slug) => {
    const r = search(q, 5);
    expect(r.covered).toBe(true);
    expect(r.passages[0]?.slug).toBe(slug);
  });

  it.each([
    'how do I change the stadium floodlights',
    'what is the weather tomorrow',
    'how do I change the team kit colours',
    'invoice a patient',
    'the of and to',
    '???',
  ])('"%s" is not covered', (q) => {
    const r = search(q);
    expect(r).toEqual({ covered: false, query: q, passages: [], note: expect.stringMatching(/^Not covered:/) });
  });

  it('respects the limit (1–10) and validates the query (1–200 characters)', () => {
    expect(search('session load', 2).passages.length).toBeLessThanOrEqual(2);
    expect(search('session load', 10).passages.length).toBeGreaterThan(2);
    for (const bad of [{ query: '' }, { query: 'x'.repeat(201) }, { query: 'acwr', limit: 11 }, { query: 'acwr', limit: 0 }, { query: 'acwr', extra: 1 }]) {
      expect(() => runRead(f.as(f.a.users.physio), searchHelpVerb, bad)).toThrow(AppError);
    }
  });

  it('FTS5 syntax in the query never throws and is treated as words', () => {
    const nasty = [
      '"',
      '""',
      'acwr"',
      '"acwr',
      'NEAR(acwr data, 2)',
      'acwr NEAR data',
      '*',
      'acw*',
      '(',
      ')',
      '((acwr',
      'acwr)',
      'AND',
      'OR NOT',
      'text:acwr',
      'title : "x"',
      '^acwr',
      '{slug}: x',
      '-acwr',
      '+',
      'acwr; DROP TABLE help_page; --',
      "' OR 1=1 --",
      '\u0000acwr',
      '🏃‍♀️ acwr',
    ];
    for (const q of nasty) expect(() => search(q), q).not.toThrow();
    expect(search('NEAR(acwr insufficient)').passages[0]?.slug).toBe('reading-acwr');
    expect(search('"insufficient data" AND acwr*').passages[0]?.anchor).toBe('insufficient-data');
    expect((sqlite(f.db).prepare('SELECT count(*) AS n FROM help_page').get() as { n: number }).n).toBeGreaterThanOrEqual(15);
  });

  it('query terms drop stopwords and syntax, keep topic words', () => {
    expect(queryTerms('How do I sign off RTP as a "doctor"?')).toEqual(['sign', 'rtp', 'doctor']);
    expect(queryTerms('NEAR(acwr* OR "data")')).toEqual(['acwr', 'data']);
    expect(MIN_TERM_COVERAGE).toBeGreaterThan(0.5);
  });

  it('indexing the shipped pages at startup is idempotent', () => {
    const first = ensureHelpIndexed(f.db);
    expect(first.pages).toBe(shippedHelpPages().length);
    expect(first.pages).toBeGreaterThanOrEqual(15);
    expect(ensureHelpIndexed(f.db)).toBe(first);
    // A later start (no per-process memo) finds the same content and writes nothing.
    expect(indexHelpPages(f.db, shippedHelpPages())).toEqual({ ...first, changed: false });
    const n = (sql: string) => (sqlite(f.db).prepare(sql).get() as { n: number }).n;
    expect(n('SELECT count(*) AS n FROM help_page')).toBe(first.pages);
    expect(n('SELECT count(*) AS n FROM help_passage')).toBe(first.passages);
  });
});

describe('help.getPage and help.listPages', () => {
  it('returns the shipped version with body and section anchors', () => {
    const p = page({ slug: 'return-to-play' });
    expect(p).toMatchObject({
      slug: 'return-to-play',
      version: '1.1',
      title: 'Return to play (RTP) stages and sign-offs',
      app_path: '/athletes/:id/injuries',
      current: true,
    });
    expect(p.sections.map((s) => s.anchor)).toContain('signoffs');
    expect(p.body).toContain('## The three sign-offs {#signoffs}');
    expect(p.body).not.toContain('---\nslug:');
  });

  it('an unknown slug or version is NotFound; a malformed slug is a Validation error', () => {
    const code = (input: unknown) => {
      try {
        page(input);
      } catch (e) {
        return e instanceof AppError ? e.code : 'other';
      }
      return 'none';
    };
    expect(code({ slug: 'no-such-page' })).toBe('NotFound');
    expect(code({ slug: 'reading-acwr', version: '9.9' })).toBe('NotFound');
    expect(code({ slug: '../etc/passwd' })).toBe('Validation');
  });

  it('lists every shipped page', () => {
    const r = runRead(f.as(f.a.users.athlete), listHelpPagesVerb, {}) as { pages: { slug: string }[] };
    expect(r.pages.map((p) => p.slug).sort()).toEqual(
      shippedHelpPages()
        .map((p) => p.slug)
        .sort(),
    );
  });
});
