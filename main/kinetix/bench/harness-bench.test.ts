/** Smoke test of the Kinetix benchmark at small sizes (no timing assertions: figures live in BENCHMARKS.md). */
import { describe, expect, it } from 'vitest';
import { MAX_TOOL_CALLS_PER_RESPONSE } from '../harness';
import { kinetixMarkdown, runKinetixBench } from './harness-bench';

describe('kinetix bench', () => {
  it('runs quickly at small sizes and renders its section', async () => {
    const r = await runKinetixBench({ quick: true });
    // 100 calls asked, in whole batches of the per-response cap (16): 7 × 16.
    const calls = Math.ceil(100 / MAX_TOOL_CALLS_PER_RESPONSE) * MAX_TOOL_CALLS_PER_RESPONSE;
    expect(r.toolCall.map((x) => x.calls)).toEqual([calls, calls]);
    for (const b of r.bus) expect(b.fastReceived).toBe(b.events);
    expect(r.proposals.map((x) => x.rows)).toEqual([1, 10, 50]);
    expect(kinetixMarkdown(r)).toMatch(/^## Kinetix harness\n/);
  });
});
