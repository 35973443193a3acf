/** The one Markdown pipeline (react-markdown + remark-gfm): help pages and assistant answers, links kept safe. */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Markdown } from './Markdown';

const html = (body: string, props: { athleteId?: string | null; skipTitle?: boolean } = {}) =>
  renderToStaticMarkup(createElement(Markdown, { body, ...props }));

describe('Markdown', () => {
  it('renders help-page headings with their anchors, lists, tables and emphasis', () => {
    const out = html(
      '# Reading ACWR\n\n## What it means {#what-it-means}\n\nThe **ratio** of `acute` to chronic.\n\n- one\n- two\n\n1. first\n\n| Band | Ratio |\n|---|---|\n| low | < 0.8 |\n',
      { skipTitle: true },
    );
    expect(out).not.toContain('Reading ACWR');
    expect(out).toContain('<h2 id="help-what-it-means" tabindex="-1">What it means</h2>');
    expect(out).toContain('<strong>ratio</strong>');
    expect(out).toContain('<code>acute</code>');
    expect(out).toContain('<ul>\n<li>one</li>\n<li>two</li>\n</ul>');
    expect(out).toContain('<ol>\n<li>first</li>\n</ol>');
    expect(out).toContain('<table class="table">');
    expect(out).toContain('<th scope="col">Band</th>');
    expect(out).toContain('<td>&lt; 0.8</td>');
  });

  it('turns in-app links (and "Show me" paths with :id) into app navigation', () => {
    expect(html('[Open workload](/athletes/:id/workload)', { athleteId: 'a-1' })).toContain('<a href="#/athletes/a-1/workload">Open workload</a>');
    expect(html('See [ACWR](/help/reading-acwr#what-it-means).')).toContain('<a href="#/help/reading-acwr/what-it-means">ACWR</a>');
  });

  it('never renders an unsafe or external link, raw HTML or an image', () => {
    const out = html(
      '[click](javascript:alert(1)) [x](JAVASCRIPT:alert(1)) [d](data:text/html,hi) [ext](https://evil.example/) [pr](//evil.example) www.evil.example\n\n<script>alert(1)</script><b onclick="x()">hi</b>\n\n![pixel](https://evil.example/p.png)',
    );
    expect(out).not.toMatch(/<a[\s>]/);
    expect(out).not.toMatch(/javascript:|data:text|evil\.example\/p\.png/i);
    expect(out).not.toContain('<script');
    expect(out).not.toContain('<b ');
    expect(out).not.toContain('<img');
    expect(out).toContain('<span>click</span>');
    expect(out).toContain('<span>ext</span>');
  });

  it('renders an assistant answer with paragraphs and a list', () => {
    const out = html('Two athletes:\n\n- Jane Doe\n- Sam Lee');
    expect(out).toBe('<div class="markdown"><p>Two athletes:</p>\n<ul>\n<li>Jane Doe</li>\n<li>Sam Lee</li>\n</ul></div>');
  });
});
