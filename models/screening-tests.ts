/**
 * The club's screening tests: the unit each is measured in and the smallest value it can take.
 * One copy for the form (renderer Screenings tab), the service's checks (main/services/clinical.ts,
 * so every door — form, CLI, assistant — gets them) and the help page. A test not listed here is
 * accepted with the unit given (free-text tests from older data or other protocols).
 */
export interface ScreeningTestSpec {
  test: string;
  /** Declared unit: a screening of this test must be recorded in it. */
  unit: string;
  /** What is measured, in the clinic's words (shown as the field's hint). */
  hint: string;
  /** Smallest possible value in `unit` (a distance, force or height cannot be negative). */
  min: number;
  /**
   * Largest plausible value in `unit`: above it the entry is almost surely a slip (mm typed as cm,
   * both legs summed) and is refused rather than stored. Rationale per test in {@link SCREENING_TESTS}.
   */
  max: number;
}

/**
 * The known screening tests (weight-bearing lunge: knee-to-wall distance; nordic: peak eccentric force).
 * Upper bounds are rationale, not norms: about twice the best values reported, so that only slips
 * (millimetres typed as centimetres, two legs summed) are refused, never a strong athlete.
 * - weight-bearing lunge ≤ 30 cm: healthy adults average 12 ± 2.8 cm knee-to-wall (Hoch & McKeon
 *   2011, Manual Therapy 16(5):516–519; the test's method: Bennell et al. 1998, Aust J Physiother 44(3)).
 * - single-leg hop ≤ 400 cm: well above any single-leg hop for distance; the two-footed standing
 *   long-jump record is 3.73 m.
 * - nordic hamstring ≤ 1500 N per leg: professional Australian footballers produce a few hundred
 *   newtons on the NordBord (Opar et al. 2015, Med Sci Sports Exerc 47(4)); 1500 N is several times that.
 * - countermovement jump ≤ 120 cm: a rationale, not a cited norm: elite jumpers reach well under
 *   a metre in a standing countermovement jump, so 120 cm only catches unit slips.
 */
export const SCREENING_TESTS: readonly ScreeningTestSpec[] = [
  { test: 'weight_bearing_lunge', unit: 'cm', hint: 'knee-to-wall distance', min: 0, max: 30 },
  { test: 'single_leg_hop', unit: 'cm', hint: 'hop distance', min: 0, max: 400 },
  { test: 'nordic_hamstring', unit: 'N', hint: 'peak eccentric force', min: 0, max: 1500 },
  { test: 'countermovement_jump', unit: 'cm', hint: 'jump height', min: 0, max: 120 },
];

/**
 * The lookup key of a test name: trimmed, lower case, runs of spaces and hyphens as one `_`
 * ("Weight-bearing lunge " → "weight_bearing_lunge").
 */
export function screeningTestKey(test: string): string {
  return test
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/**
 * The spec of `test` however it is spelled (see {@link screeningTestKey}), or undefined for a test
 * not in {@link SCREENING_TESTS}.
 */
export function screeningTest(test: string): ScreeningTestSpec | undefined {
  const key = screeningTestKey(test);
  return SCREENING_TESTS.find((t) => t.test === key);
}
