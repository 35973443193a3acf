/** Smoke test of the benchmark machinery at small sizes (no timing assertions: speed lives in BENCHMARKS.md). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { foundationMarkdown, runFoundationBench, stats } from './foundation';
import { median, percentile, updateBenchmarksSection } from './report';

describe('foundation benchmark', () => {
  it('runs end to end through the services at small sizes', () => {
    const r = runFoundationBench({ athletes: 120, loads: 400, squadSize: 10, iterations: 5 });
    expect(r.sizes).toMatchObject({ athletes: 120, squads: 12, loads: 400 });
    expect(r.measures.map((m) => m.calls)).toEqual([5, 40, 5, 5, 5]);
    for (const m of r.measures) expect(m.p95_ms).toBeGreaterThanOrEqual(m.median_ms);
    const md = foundationMarkdown(r);
    expect(md).toMatch(/^## Foundation\n/);
    expect(md).toContain(r.machine.cpu);
  });

  it('stats: median and nearest-rank p95', () => {
    const s = stats(
      'x',
      Array.from({ length: 100 }, (_, i) => 100 - i),
    );
    expect(s).toMatchObject({ median_ms: 50.5, p95_ms: 95, min_ms: 1, max_ms: 100, calls: 100 });
  });

  it('median and nearest-rank percentile on small lists', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    const xs = Array.from({ length: 20 }, (_, i) => 20 - i);
    expect(percentile(xs, 95)).toBe(19);
    expect(percentile(xs, 100)).toBe(20);
    expect(percentile([7], 50)).toBe(7);
    expect(percentile([], 95)).toBeNaN();
  });

  it('updates only its own section of BENCHMARKS.md', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-benchmd-'));
    const file = path.join(dir, 'BENCHMARKS.md');
    try {
      updateBenchmarksSection(file, 'Foundation', '## Foundation\n\nv1\n');
      fs.appendFileSync(file, '\n## Capture\n\nkeep me\n');
      updateBenchmarksSection(file, 'Foundation', '## Foundation\n\nv2\n');
      const text = fs.readFileSync(file, 'utf8');
      expect(text).toContain('v2');
      expect(text).not.toContain('v1');
      expect(text).toContain('## Capture\n\nkeep me');
      expect(text.indexOf('## Foundation')).toBeLessThan(text.indexOf('## Capture'));
      updateBenchmarksSection(file, 'Kinetix', '## Kinetix\n\nk\n');
      expect(fs.readFileSync(file, 'utf8')).toMatch(/keep me\n\n## Kinetix\n\nk\n$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
