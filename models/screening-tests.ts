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
}

/** The known screening tests (weight-bearing lunge: knee-to-wall distance; nordic: peak eccentric force). */
export const SCREENING_TESTS: readonly ScreeningTestSpec[] = [
  { test: 'weight_bearing_lunge', unit: 'cm', hint: 'knee-to-wall distance', min: 0 },
  { test: 'single_leg_hop', unit: 'cm', hint: 'hop distance', min: 0 },
  { test: 'nordic_hamstring', unit: 'N', hint: 'peak eccentric force', min: 0 },
  { test: 'countermovement_jump', unit: 'cm', hint: 'jump height', min: 0 },
];

/** The spec of `test`, or undefined for a test not in {@link SCREENING_TESTS}. */
export function screeningTest(test: string): ScreeningTestSpec | undefined {
  return SCREENING_TESTS.find((t) => t.test === test);
}
