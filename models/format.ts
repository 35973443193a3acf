/**
 * How stored codes and days read in text a person sees (changeset summaries, activity, error
 * messages written by the services), the same words and date format as the pages
 * (renderer/src/format.ts: `humanize`, `formatDate`). Pure.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A stored code in words, lower case: `weight_bearing_lunge` → "weight bearing lunge". */
export function codeWords(code: string): string {
  return code.replace(/_/g, ' ');
}

/**
 * `word` after the indefinite article English gives it by its first letter: "an owner", "a coach"
 * ("an" before a, e, i, o, u). Role and code words only: no exceptions for spoken sounds (user, hour).
 */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}

/**
 * A day (YYYY-MM-DD) as the app shows it: "12 Nov 2026" (UTC calendar day, no time zone shift).
 * Anything that is not such a day is returned unchanged.
 */
export function formatDay(day: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12) return day;
  return `${Number(m[3])} ${MONTHS[Number(m[2]) - 1]} ${m[1]}`;
}

/** Field labels for stored columns named in a service's message ("its criteria met cannot change"). */
export const FIELD_WORDS: Readonly<Record<string, string>> = {
  stage: 'RTP stage',
  criteria_met: 'criteria met',
  injury_id: 'injury',
  athlete_id: 'athlete',
};
