/**
 * Acute:chronic workload ratio (ACWR). Acute window 7 days, chronic window 28 days, computed
 * either as coupled rolling averages of daily load (Hulin et al. 2016; the acute week is part of
 * the chronic month) or as exponentially weighted moving averages (Williams et al. 2017,
 * λ = 2 / (N + 1): λa = 0.25, λc = 2/29 ≈ 0.0690). Loads are session-RPE arbitrary units (AU);
 * days without a session count as 0 AU once the athlete has any recorded load.
 *
 * How much data a ratio stands on. A day with no recorded load is either a rest day (0 AU, real)
 * or a session nobody logged (missing); the two cannot be told apart, and missing sessions bias
 * both windows, the acute one most (Impellizzeri FM, Woodcock S, Coutts AJ, et al. "What role do
 * chronic workloads play in the acute to chronic workload ratio? Time to dismiss ACWR and its
 * underlying theory", Sports Med 2021;51:581–592, and "Acute:chronic workload ratio: conceptual
 * issues and fundamental pitfalls", IJSPP 2020;15:907–913; on missing monitoring data: Benson LC,
 * et al., "Evaluating methods for imputing missing data from longitudinal monitoring of athlete
 * workload", J Sports Sci Med 2021;20:188–196). So every result reports the days *with a recorded
 * load* in each window and that coverage (days with data / window days) beside the ratio, and
 * refuses ("insufficient_data") when:
 * - the history is shorter than the chronic window (first load fewer than 28 days before as_of:
 *   the empty days before it would read as rest), or
 * - fewer than MIN_ACUTE_DAYS_WITH_DATA of the 7 acute days, or fewer than
 *   MIN_CHRONIC_DAYS_WITH_DATA of the 28 chronic days, have a recorded load.
 * The thresholds (4 of 7, 16 of 28: at least four days a week with a load, about 57 % coverage)
 * are this product's rule, not a published cut-off: an in-season team-sport athlete trains or
 * plays on five or six days a week (the demo clubs do), so below four a week logging gaps are the
 * likelier explanation than rest. Change them here; the help page "Read the ACWR" states them.
 */

export type AcwrMethod = 'rolling' | 'ewma';

export const ACUTE_DAYS = 7;
export const CHRONIC_DAYS = 28;
/** Fewest days with a recorded load in the 7-day acute window for a ratio to be computed. */
export const MIN_ACUTE_DAYS_WITH_DATA = 4;
/** Fewest days with a recorded load in the 28-day chronic window for a ratio to be computed. */
export const MIN_CHRONIC_DAYS_WITH_DATA = 16;

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
  /** Days in the 28-day chronic window with at least one recorded load (0..28). */
  days_of_data: number;
  /** Days in the 7-day acute window with at least one recorded load (0..7). */
  acute_days_of_data: number;
  /** Share of the acute window's days with a recorded load (0..1). */
  acute_coverage: number;
  /** Share of the chronic window's days with a recorded load (0..1). */
  chronic_coverage: number;
  /** Calendar days from the first recorded load to as_of, inclusive (0 without any load). */
  history_days: number;
  /** The coverage rule applied, in words (the thresholds above). */
  coverage_rule: string;
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

const COVERAGE_RULE = `A ratio needs a ${CHRONIC_DAYS}-day history and a recorded load on at least ${MIN_ACUTE_DAYS_WITH_DATA} of the last ${ACUTE_DAYS} days and ${MIN_CHRONIC_DAYS_WITH_DATA} of the last ${CHRONIC_DAYS} days.`;

/**
 * Compute ACWR as of `asOf` (inclusive) from the athlete's loads (any order, several per day
 * allowed). Reports the days with a recorded load and the coverage of both windows; refuses
 * (`insufficient_data`, no ratio) under the coverage rule above. A chronic load of 0 →
 * `zero_chronic` (ratio undefined).
 */
export function computeAcwr(loads: readonly DailyLoad[], asOf: string, method: AcwrMethod): AcwrResult {
  const asIdx = dayIndex(asOf);
  const relevant = loads.filter((l) => dayIndex(l.date) <= asIdx);
  const daysWithData = new Set(relevant.map((l) => dayIndex(l.date)));
  let acuteDays = 0;
  let chronicDays = 0;
  for (const d of daysWithData) {
    if (d > asIdx - CHRONIC_DAYS) chronicDays++;
    if (d > asIdx - ACUTE_DAYS) acuteDays++;
  }
  const firstIdx = relevant.length ? Math.min(...daysWithData) : asIdx + 1;
  const historyDays = relevant.length ? asIdx - firstIdx + 1 : 0;
  const base = {
    method,
    as_of: asOf,
    acute_window_days: ACUTE_DAYS,
    chronic_window_days: CHRONIC_DAYS,
    days_of_data: chronicDays,
    acute_days_of_data: acuteDays,
    acute_coverage: acuteDays / ACUTE_DAYS,
    chronic_coverage: chronicDays / CHRONIC_DAYS,
    history_days: historyDays,
    coverage_rule: COVERAGE_RULE,
  } as const;
  const refuse = (note: string): AcwrResult => ({ ...base, status: 'insufficient_data', acute_au: null, chronic_au: null, ratio: null, note });
  const counts = `${chronicDays} of the last ${CHRONIC_DAYS} days and ${acuteDays} of the last ${ACUTE_DAYS} have a recorded load`;
  if (relevant.length === 0) return refuse(`No session loads recorded up to this date. ${COVERAGE_RULE} Not computed.`);
  if (historyDays < CHRONIC_DAYS)
    return refuse(`Only ${chronicDays} day(s) with a recorded load, over a ${historyDays}-day history. ${COVERAGE_RULE} Not computed.`);
  if (chronicDays < MIN_CHRONIC_DAYS_WITH_DATA || acuteDays < MIN_ACUTE_DAYS_WITH_DATA) {
    return refuse(`Only ${counts} (unlogged sessions cannot be told from rest days). ${COVERAGE_RULE} Not computed.`);
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
    return {
      ...base,
      status: 'zero_chronic',
      acute_au: acute,
      chronic_au: 0,
      ratio: null,
      note: `Chronic load is 0 AU/day (${label}); the ratio is undefined.`,
    };
  }
  return { ...base, status: 'ok', acute_au: acute, chronic_au: chronic, ratio: acute / chronic, note: `ACWR from ${label}; ${counts}.` };
}
