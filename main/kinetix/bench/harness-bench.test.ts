/** Smoke test of the Kinetix benchmark at small sizes (no timing assertions: figures live in BENCHMARKS.md). */
import { describe, expect, it } from 'vitest';
import { kinetixMarkdown, runKinetixBench } from './harness-bench';

describe('kinetix bench', () => {
  it('runs quickly at small sizes and renders its section', async () => {
    const r = await runKinetixBench({ quick: true });
    expect(r.toolCall.map((x) => x.calls)).toEqual([100, 100]);
    for (const b of r.bus) expect(b.fastReceived).toBe(b.events);
    expect(r.proposals.map((x) => x.rows)).toEqual([1, 10, 50]);
    expect(kinetixMarkdown(r)).toMatch(/^## Kinetix harness\n/);
  });
});
