/** The help index on real SQLite files: idempotent indexing, versions kept, FTS5 syntax inert. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from './db';
import { openDb } from './db';
import type { HelpPageInput } from './help';
import { getHelpPageRow, indexHelpPages, listIndexedHelpPages, searchHelpIndex } from './help';
import { sqlite } from './sqlite';

const dirs: string[] = [];
const dbs: Db[] = [];
function tempDb(): Db {
  const d = mkdtempSync(join(tmpdir(), 'ai-help-'));
  dirs.push(d);
  const db = openDb(join(d, 'app.sqlite'));
  dbs.push(db);
  return db;
}
afterEach(() => {
  dbs.splice(0).forEach((db) => db.close());
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const count = (db: Db, sql: string) => (sqlite(db).prepare(sql).get() as { n: number }).n;

function page(slug: string, version: string, sections: [string, string, string][], appPath = '/athletes'): HelpPageInput {
  return {
    slug,
    version,
    title: `Title of ${slug}`,
    appPath,
    body: sections.map(([a, h, t]) => `## ${h} {#${a}}\n${t}`).join('\n\n'),
    sections: sections.map(([anchor, heading, text]) => ({ anchor, heading, text })),
  };
}

const PAGES: HelpPageInput[] = [
  page(
    'reading-acwr',
    '1.0',
    [
      ['what', 'What the ACWR is', 'The acute:chronic workload ratio compares 7 days with 28 days.'],
      ['insufficient-data', 'Insufficient data', 'Under 28 days of data the ratio is not computed.'],
    ],
    '/athletes/:id/workload',
  ),
  page('fee-schedule', '1.0', [['bulk-change', 'Raise a folder', 'Raise every price in a folder by a percentage.']], '/fees'),
  page('signing-in', '1.2', [['sign-in', 'Sign in', 'Choose your name and type your PIN.']]),
];

describe('indexHelpPages', () => {
  it('indexes every page and section, and a second run writes nothing', () => {
    const db = tempDb();
    const first = indexHelpPages(db, PAGES, new Date('2026-11-29T10:00:00Z'));
    expect(first).toMatchObject({ changed: true, pages: 3, passages: 4 });
    expect(count(db, 'SELECT count(*) AS n FROM help_page')).toBe(3);
    expect(count(db, 'SELECT count(*) AS n FROM help_passage')).toBe(4);
    const rows = sqlite(db).prepare('SELECT * FROM help_page ORDER BY slug').all();

    const second = indexHelpPages(db, [...PAGES].reverse(), new Date('2026-11-30T10:00:00Z'));
    expect(second).toEqual({ ...first, changed: false });
    expect(sqlite(db).prepare('SELECT * FROM help_page ORDER BY slug').all()).toEqual(rows);
    expect(count(db, 'SELECT count(*) AS n FROM help_passage')).toBe(4);
    expect(sqlite(db).prepare('SELECT indexed_at, page_count, passage_count FROM help_index_state').get()).toEqual({
      indexed_at: '2026-11-29T10:00:00.000Z',
      page_count: 3,
      passage_count: 4,
    });
    expect(listIndexedHelpPages(db)).toEqual([
      { slug: 'fee-schedule', version: '1.0', title: 'Title of fee-schedule', app_path: '/fees', sections: 1 },
      { slug: 'reading-acwr', version: '1.0', title: 'Title of reading-acwr', app_path: '/athletes/:id/workload', sections: 2 },
      { slug: 'signing-in', version: '1.2', title: 'Title of signing-in', app_path: '/athletes', sections: 1 },
    ]);
  });

  it('survives reopening the file: the index is still current and nothing is rewritten', () => {
    const db = tempDb();
    indexHelpPages(db, PAGES);
    const path = db.path;
    db.close();
    dbs.splice(dbs.indexOf(db), 1);
    const again = openDb(path);
    dbs.push(again);
    expect(indexHelpPages(again, PAGES).changed).toBe(false);
    expect(searchHelpIndex(again, ['pin']).candidates.map((c) => c.slug)).toEqual(['signing-in']);
  });

  it('a new version adds a row, keeps the old one readable, and indexes only the new one', () => {
    const db = tempDb();
    indexHelpPages(db, PAGES);
    const bumped = page('reading-acwr', '1.1', [['what', 'What the ACWR is', 'Zebracorn guidance added in 1.1.']], '/athletes/:id/workload');
    const r = indexHelpPages(db, [bumped, PAGES[1]!, PAGES[2]!]);
    expect(r.changed).toBe(true);
    expect(count(db, 'SELECT count(*) AS n FROM help_page')).toBe(4);
    expect(getHelpPageRow(db, 'reading-acwr')?.version).toBe('1.1');
    expect(getHelpPageRow(db, 'reading-acwr', '1.0')?.body).toContain('## Insufficient data {#insufficient-data}');
    expect(getHelpPageRow(db, 'reading-acwr', '1.0')?.body).toMatch(/^---\nslug: reading-acwr\nversion: 1.0\n/);
    expect(getHelpPageRow(db, 'reading-acwr', '2.0')).toBeNull();
    expect(getHelpPageRow(db, 'no-such-page')).toBeNull();
    expect(count(db, "SELECT count(*) AS n FROM help_passage WHERE slug = 'reading-acwr' AND version = '1.0'")).toBe(0);
    expect(searchHelpIndex(db, ['zebracorn']).candidates.map((c) => [c.slug, c.version, c.anchor])).toEqual([['reading-acwr', '1.1', 'what']]);
    expect(searchHelpIndex(db, ['insufficient']).candidates).toEqual([]);
  });

  it('an edited body under the same version replaces the stored body (same row id)', () => {
    const db = tempDb();
    indexHelpPages(db, PAGES);
    const id = getHelpPageRow(db, 'fee-schedule')!.id;
    const edited = page('fee-schedule', '1.0', [['bulk-change', 'Raise a folder', 'Lower or raise every price.']], '/fees');
    expect(indexHelpPages(db, [PAGES[0]!, edited, PAGES[2]!]).changed).toBe(true);
    expect(getHelpPageRow(db, 'fee-schedule')).toMatchObject({ id, version: '1.0' });
    expect(getHelpPageRow(db, 'fee-schedule')!.body).toContain('Lower or raise every price.');
  });
});

describe('searchHelpIndex', () => {
  it('ranks by bm25, reports the matched terms and per-term passage counts', () => {
    const db = tempDb();
    indexHelpPages(db, PAGES);
    const r = searchHelpIndex(db, ['insufficient', 'acwr', 'floodlights']);
    expect(r.total).toBe(4);
    expect(r.docFreq).toEqual({ insufficient: 1, acwr: 2, floodlights: 0 });
    expect(r.candidates.map((c) => [c.slug, c.anchor, c.matched])).toEqual([
      ['reading-acwr', 'insufficient-data', ['insufficient', 'acwr']],
      ['reading-acwr', 'what', ['acwr']],
    ]);
    expect(r.candidates[0]).toMatchObject({ version: '1.0', app_path: '/athletes/:id/workload', heading: 'Insufficient data', title: 'Title of reading-acwr' });
    expect(r.candidates[0]!.bm25).toBeLessThan(r.candidates[1]!.bm25);
    expect(searchHelpIndex(db, ['floodlights'])).toEqual({ total: 4, docFreq: { floodlights: 0 }, candidates: [] });
  });

  it('treats FTS5 syntax inside a term as plain text', () => {
    const db = tempDb();
    indexHelpPages(db, PAGES);
    for (const t of ['"', '""', 'NEAR', 'NEAR(acwr', '*', 'acw*', '(', ')', 'a"b', 'text:acwr', '^acwr', 'AND', 'OR', 'NOT', '-', '{title}', '']) {
      expect(() => searchHelpIndex(db, [t]), t).not.toThrow();
    }
    expect(searchHelpIndex(db, ['acw*']).candidates).toEqual([]);
  });
});
