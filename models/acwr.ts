/**
 * Acute:chronic workload ratio (ACWR). Acute window 7 days, chronic window 28 days, computed
 * either as coupled rolling averages of daily load (Hulin et al. 2016; the acute week is part of
 * the chronic month) or as exponentially weighted moving averages (Williams et al. 2017,
 * λ = 2 / (N + 1): λa = 0.25, λc = 2/29 ≈ 0.0690). Loads are session-RPE arbitrary units (AU);
 * days without a session count as 0 AU once the athlete has any recorded load.
 */

export type AcwrMethod = 'rolling' | 'ewma';

export const ACUTE_DAYS = 7;
export const CHRONIC_DAYS = 28;

/** One day's summed load. `date` is YYYY-MM-DD. */
export interface DailyLoad {
  date: string;
  load_au: number;
}

/** The result of one ACWR computation, always saying which method and windows were used. */
export interface AcwrResult {
  method: AcwrMethod;
  as_of: string;
  acute_window_days: number;
  chronic_window_days: number;
  /** Days in the chronic window on or after the first recorded load (0..28). */
  days_of_data: number;
  status: 'ok' | 'insufficient_data' | 'zero_chronic';
  /** AU/day; null unless status is ok or zero_chronic. */
  acute_au: number | null;
  chronic_au: number | null;
  ratio: number | null;
  /** Plain-language explanation shown beside the number. */
  note: string;
}

const DAY_MS = 86_400_000;
function dayIndex(date: string): number {
  return Math.round(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}

/** Sum loads per day and return a dense series of daily totals from `fromIdx` to `toIdx` (inclusive). */
function denseSeries(loads: readonly DailyLoad[], fromIdx: number, toIdx: number): number[] {
  const out = new Array<number>(Math.max(0, toIdx - fromIdx + 1)).fill(0);
  for (const l of loads) {
    const i = dayIndex(l.date) - fromIdx;
    if (i >= 0 && i < out.length) out[i] = (out[i] ?? 0) + l.load_au;
  }
  return out;
}

/**
 * Compute ACWR as of `asOf` (inclusive) from the athlete's loads (any order, several per day
 * allowed). Fewer than 28 days between the first recorded load and `asOf` → `insufficient_data`,
 * with no ratio computed. A chronic load of 0 → `zero_chronic` (ratio undefined).
 */
export function computeAcwr(loads: readonly DailyLoad[], asOf: string, method: AcwrMethod): AcwrResult {
  const asIdx = dayIndex(asOf);
  const base = { method, as_of: asOf, acute_window_days: ACUTE_DAYS, chronic_window_days: CHRONIC_DAYS } as const;
  const relevant = loads.filter((l) => dayIndex(l.date) <= asIdx);
  if (relevant.length === 0) {
    return { ...base, days_of_data: 0, status: 'insufficient_data', acute_au: null, chronic_au: null, ratio: null, note: 'No session loads recorded up to this date; ACWR needs 28 days of data.' };
  }
  const firstIdx = Math.min(...relevant.map((l) => dayIndex(l.date)));
  const span = asIdx - firstIdx + 1;
  const daysOfData = Math.min(CHRONIC_DAYS, span);
  if (span < CHRONIC_DAYS) {
    return { ...base, days_of_data: daysOfData, status: 'insufficient_data', acute_au: null, chronic_au: null, ratio: null, note: `Only ${span} day(s) of data; ACWR needs ${CHRONIC_DAYS}. Not computed.` };
  }
  let acute: number;
  let chronic: number;
  if (method === 'rolling') {
    const series = denseSeries(relevant, asIdx - CHRONIC_DAYS + 1, asIdx);
    chronic = series.reduce((a, b) => a + b, 0) / CHRONIC_DAYS;
    acute = series.slice(CHRONIC_DAYS - ACUTE_DAYS).reduce((a, b) => a + b, 0) / ACUTE_DAYS;
  } else {
    const series = denseSeries(relevant, firstIdx, asIdx);
    const la = 2 / (ACUTE_DAYS + 1);
    const lc = 2 / (CHRONIC_DAYS + 1);
    // Seeded with the first day's load (EWMA_0 = load_0), then EWMA_t = λ·load_t + (1 − λ)·EWMA_{t−1}.
    acute = series[0] ?? 0;
    chronic = series[0] ?? 0;
    for (let i = 1; i < series.length; i++) {
      const x = series[i] ?? 0;
      acute = la * x + (1 - la) * acute;
      chronic = lc * x + (1 - lc) * chronic;
    }
  }
  const label = method === 'rolling' ? 'coupled 7-day / 28-day rolling averages' : 'EWMA (Williams et al. 2017), λa = 0.25, λc = 2/29';
  if (chronic === 0) {
    return { ...base, days_of_data: daysOfData, status: 'zero_chronic', acute_au: acute, chronic_au: 0, ratio: null, note: `Chronic load is 0 AU/day (${label}); the ratio is undefined.` };
  }
  return { ...base, days_of_data: daysOfData, status: 'ok', acute_au: acute, chronic_au: chronic, ratio: acute / chronic, note: `ACWR from ${label}.` };
}
