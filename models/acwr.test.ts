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
    const r = computeAcwr(
      days('2026-03-31', 28, (i) => (i < 21 ? 100 : 200)),
      '2026-03-31',
      'rolling',
    );
    expect(r).toMatchObject({ method: 'rolling', status: 'ok', acute_window_days: 7, chronic_window_days: 28 });
    expect(r.acute_au).toBeCloseTo(200, 10);
    expect(r.chronic_au).toBeCloseTo(125, 10);
    expect(r.ratio).toBeCloseTo(1.6, 10);
  });

  it('EWMA: 27 days of 100 then one day of 200 → acute 125, chronic 106.8966, ratio 1.16935', () => {
    // acute = 0.25·200 + 0.75·100 = 125; chronic = (2/29)·200 + (27/29)·100 = 106.896551…
    const r = computeAcwr(
      days('2026-03-31', 28, (i) => (i < 27 ? 100 : 200)),
      '2026-03-31',
      'ewma',
    );
    expect(r.acute_au).toBeCloseTo(125, 8);
    expect(r.chronic_au).toBeCloseTo(106.896551724, 8);
    expect(r.ratio).toBeCloseTo(1.169354839, 8);
  });

  it('sums several sessions on one day and counts missing days as 0 AU', () => {
    // 28 days of data: day 1 has two sessions (300 + 300), days 2..27 have 10 AU each except five
    // missing days (6, 10, 14, 18, 21 — 0 AU, not counted as days with data), day 28 has 700.
    const missing = new Set([5, 9, 13, 17, 20]);
    const loads: DailyLoad[] = days('2026-03-31', 28, (i) => (i === 0 ? 300 : i === 27 ? 700 : 10)).filter((_, i) => !missing.has(i));
    loads.push({ date: '2026-03-04', load_au: 300 });
    const r = computeAcwr(loads, '2026-03-31', 'rolling');
    const chronicSum = 600 + 10 * (26 - 5) + 700;
    const acuteSum = 10 * 6 + 700; // days 22..28: none missing
    expect(r).toMatchObject({ status: 'ok', days_of_data: 23, acute_days_of_data: 7, history_days: 28 });
    expect(r.chronic_au).toBeCloseTo(chronicSum / 28, 10);
    expect(r.acute_au).toBeCloseTo(acuteSum / 7, 10);
    expect(r.ratio).toBeCloseTo(acuteSum / 7 / (chronicSum / 28), 10);
    expect(r.chronic_coverage).toBeCloseTo(23 / 28, 10);
    expect(r.acute_coverage).toBe(1);
  });

  it('under a 28-day history is insufficient: no ratio is computed', () => {
    const r = computeAcwr(
      days('2026-03-31', 27, () => 100),
      '2026-03-31',
      'rolling',
    );
    expect(r).toMatchObject({
      status: 'insufficient_data',
      days_of_data: 27,
      acute_days_of_data: 7,
      history_days: 27,
      ratio: null,
      acute_au: null,
      chronic_au: null,
    });
    expect(r.note).toMatch(/Only 27 day\(s\) with a recorded load, over a 27-day history/);
    expect(computeAcwr([], '2026-03-31', 'ewma')).toMatchObject({
      status: 'insufficient_data',
      days_of_data: 0,
      acute_days_of_data: 0,
      history_days: 0,
      ratio: null,
    });
  });

  it('counts days with data, not calendar days since the first load: a long history with gaps is refused', () => {
    // First load 58 days ago, then only every third day: 10 of the last 28 days, 3 of the last 7.
    const sparse = days('2026-03-31', 60, () => 100).filter((_, i) => (59 - i) % 3 === 0);
    for (const m of ['rolling', 'ewma'] as const) {
      const r = computeAcwr(sparse, '2026-03-31', m);
      expect(r).toMatchObject({ status: 'insufficient_data', ratio: null, days_of_data: 10, acute_days_of_data: 3, history_days: 58 });
      expect(r.chronic_coverage).toBeCloseTo(10 / 28, 10);
      expect(r.acute_coverage).toBeCloseTo(3 / 7, 10);
      expect(r.note).toMatch(/Only 10 of the last 28 days and 3 of the last 7 have a recorded load/);
      expect(r.coverage_rule).toBe('A ratio needs a 28-day history and a recorded load on at least 4 of the last 7 days and 16 of the last 28 days.');
    }
  });

  it('the coverage thresholds are inclusive: 16 of 28 and 4 of 7 days with data is enough, one fewer is not', () => {
    // Days with data: the last 4 days and 12 more spread earlier in the chronic window; history 40 days.
    const keep = (i: number, n: number) => i >= n - 4 || [0, 15, 14, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25].includes(i);
    const base = days('2026-03-31', 40, () => 100);
    const enough = base.filter((_, i) => keep(i, 40));
    const r = computeAcwr(enough, '2026-03-31', 'rolling');
    expect(r).toMatchObject({ status: 'ok', days_of_data: 16, acute_days_of_data: 4 });
    const oneFewerChronic = enough.filter((l) => l.date !== '2026-03-10');
    expect(computeAcwr(oneFewerChronic, '2026-03-31', 'rolling')).toMatchObject({ status: 'insufficient_data', days_of_data: 15 });
    const oneFewerAcute = enough.filter((l) => l.date !== '2026-03-31');
    expect(computeAcwr(oneFewerAcute, '2026-03-31', 'rolling')).toMatchObject({ status: 'insufficient_data', acute_days_of_data: 3 });
  });

  it('ignores loads after as_of', () => {
    const loads = [...days('2026-03-31', 28, () => 100), { date: '2026-04-01', load_au: 5000 }];
    expect(computeAcwr(loads, '2026-03-31', 'rolling').ratio).toBeCloseTo(1, 10);
  });

  it('zero chronic load → ratio undefined, said so', () => {
    const r = computeAcwr(
      days('2026-03-31', 28, () => 0),
      '2026-03-31',
      'rolling',
    );
    expect(r).toMatchObject({ status: 'zero_chronic', ratio: null });
  });
});
