/** The shipped help pages and their format: every page parses, is findable and names its app page. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { shippedHelpPages } from './index';
import { HELP_GENERATED_FILE, readHelpSources, renderGenerated } from './generate';
import { HelpPageError, markdownToText, parseHelpPage } from './parse';

describe('shipped help pages', () => {
  const pages = shippedHelpPages();

  it('are at least 15, with unique slugs, a version, a title, an app path and anchored sections', () => {
    expect(pages.length).toBeGreaterThanOrEqual(15);
    expect(new Set(pages.map((p) => p.slug)).size).toBe(pages.length);
    for (const p of pages) {
      expect(p.slug).toMatch(/^[a-z0-9-]+$/);
      expect(p.version).toMatch(/^\d+\.\d+/);
      expect(p.title.length).toBeGreaterThan(3);
      expect(p.appPath).toMatch(/^\/(athletes|squads|fees|activity|settings|sync|capture|help)(\/|$)/);
      expect(p.sections.length).toBeGreaterThanOrEqual(1);
      for (const s of p.sections) {
        expect(s.anchor).toMatch(/^[a-z0-9-]+$/);
        expect(p.body).toContain(`{#${s.anchor}}`);
        expect(s.text.length).toBeGreaterThan(20);
      }
    }
  });

  it('the generated module matches the Markdown files (run `npx tsx main/help/build.ts` after editing a page)', () => {
    expect(readFileSync(HELP_GENERATED_FILE, 'utf8')).toBe(renderGenerated(readHelpSources()));
  });
});

describe('parseHelpPage', () => {
  const ok =
    '---\nslug: demo\nversion: 1.0\ntitle: Demo\npath: /fees\n---\n# Demo\n\n## First {#first}\nSome **bold** text and a [link](https://x).\n\n### Sub {#sub}\n| a | b |\n| --- | --- |\n| 1 | 2 |\n';

  it('splits sections by anchored headings and strips Markdown', () => {
    const p = parseHelpPage(ok, 'demo.md');
    expect(p).toMatchObject({ slug: 'demo', version: '1.0', title: 'Demo', appPath: '/fees' });
    expect(p.sections).toEqual([
      { anchor: 'first', heading: 'First', text: 'Some bold text and a link.' },
      { anchor: 'sub', heading: 'Sub', text: 'a · b\n1 · 2' },
    ]);
    expect(markdownToText('- `code` item')).toBe('code item');
  });

  it.each([
    ['no front matter', '## A {#a}\ntext', 'demo.md'],
    ['a heading without an anchor', ok.replace('## First {#first}', '## First'), 'demo.md'],
    ['a duplicate anchor', ok.replace('{#sub}', '{#first}'), 'demo.md'],
    ['text before the first section', ok.replace('# Demo\n', '# Demo\nIntro paragraph.\n'), 'demo.md'],
    ['a bad version', ok.replace('version: 1.0', 'version: latest'), 'demo.md'],
    ['a path that is not an app path', ok.replace('path: /fees', 'path: fees'), 'demo.md'],
    ['a slug that differs from the file name', ok, 'other.md'],
  ])('rejects %s', (_what, src, origin) => {
    expect(() => parseHelpPage(src, origin)).toThrow(HelpPageError);
  });
});
