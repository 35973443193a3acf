import { describe, expect, it } from 'vitest';
import type { DailyLoad } from './acwr';
import { computeAcwr } from './acwr';

/** `n` consecutive days ending on `end`, each with `load` AU. */
function days(end: string, n: number, load: (i: number) => number): DailyLoad[] {
  const endMs = Date.parse(`${end}T00:00:00Z`);
  return Array.from({ length: n }, (_, i) => ({ date: new Date(endMs - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10), load_au: load(i) }));
}

describe('ACWR (hand-computed)', () => {
  it('constant 100 AU/day for 28 days → 1.00 for both methods', () => {
    const loads = days('2026-03-31', 28, () => 100);
    for (const m of ['rolling', 'ewma'] as const) {
      const r = computeAcwr(loads, '2026-03-31', m);
      expect(r.status).toBe('ok');
      expect(r.ratio).toBeCloseTo(1, 10);
    }
  });

  it('rolling: 21 days of 100 then 7 days of 200 → acute 200, chronic 125, ratio 1.6', () => {
    const r = computeAcwr(days('2026-03-31', 28, (i) => (i < 21 ? 100 : 200)), '2026-03-31', 'rolling');
    expect(r).toMatchObject({ method: 'rolling', status: 'ok', acute_window_days: 7, chronic_window_days: 28 });
    expect(r.acute_au).toBeCloseTo(200, 10);
    expect(r.chronic_au).toBeCloseTo(125, 10);
    expect(r.ratio).toBeCloseTo(1.6, 10);
  });

  it('EWMA: 27 days of 100 then one day of 200 → acute 125, chronic 106.8966, ratio 1.16935', () => {
    // acute = 0.25·200 + 0.75·100 = 125; chronic = (2/29)·200 + (27/29)·100 = 106.896551…
    const r = computeAcwr(days('2026-03-31', 28, (i) => (i < 27 ? 100 : 200)), '2026-03-31', 'ewma');
    expect(r.acute_au).toBeCloseTo(125, 8);
    expect(r.chronic_au).toBeCloseTo(106.896551724, 8);
    expect(r.ratio).toBeCloseTo(1.169354839, 8);
  });

  it('sums several sessions on one day and counts missing days as 0 AU', () => {
    // Day 1: 300 + 300; days 2..28: nothing except day 28: 700. Rolling chronic = 1300/28, acute = 700/7.
    const loads: DailyLoad[] = [
      { date: '2026-03-04', load_au: 300 },
      { date: '2026-03-04', load_au: 300 },
      { date: '2026-03-31', load_au: 700 },
    ];
    const r = computeAcwr(loads, '2026-03-31', 'rolling');
    expect(r.chronic_au).toBeCloseTo(1300 / 28, 10);
    expect(r.acute_au).toBeCloseTo(100, 10);
    expect(r.ratio).toBeCloseTo(100 / (1300 / 28), 10);
  });

  it('under 28 days of data is insufficient: no ratio is computed', () => {
    const r = computeAcwr(days('2026-03-31', 27, () => 100), '2026-03-31', 'rolling');
    expect(r).toMatchObject({ status: 'insufficient_data', days_of_data: 27, ratio: null, acute_au: null, chronic_au: null });
    expect(r.note).toMatch(/27 day/);
    expect(computeAcwr([], '2026-03-31', 'ewma')).toMatchObject({ status: 'insufficient_data', days_of_data: 0, ratio: null });
  });

  it('ignores loads after as_of', () => {
    const loads = [...days('2026-03-31', 28, () => 100), { date: '2026-04-01', load_au: 5000 }];
    expect(computeAcwr(loads, '2026-03-31', 'rolling').ratio).toBeCloseTo(1, 10);
  });

  it('zero chronic load → ratio undefined, said so', () => {
    const r = computeAcwr(days('2026-03-31', 28, () => 0), '2026-03-31', 'rolling');
    expect(r).toMatchObject({ status: 'zero_chronic', ratio: null });
  });
});
