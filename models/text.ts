/**
 * The rules for text a person types, shared by every verb input (models/inputs.ts) and the capture
 * schemas it embeds: single-line fields are plain, trimmed, NFKC-normalised text; multi-line notes
 * keep line breaks and tabs. Runtime-agnostic: zod only.
 */
import type { z } from 'zod';

/**
 * Characters refused in every single-line field a person types (names, codes, body parts, test
 * names, positions, titles): C0/C1 controls (U+0000–U+001F, U+007F–U+009F), the soft hyphen
 * (U+00AD), the Arabic letter mark (U+061C), zero-width characters and direction marks
 * (U+200B–U+200F), the line and paragraph separators (U+2028/U+2029), bidirectional overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069), the word joiner and invisible operators (U+2060–U+2064)
 * and the byte-order mark (U+FEFF). All are invisible in a list and can make one name read as
 * another or look like a second, different record ("Trojan Source", CVE-2021-42574; Unicode
 * TR #36 §2 "Visual security issues").
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL_OR_BIDI = /[\u0000-\u001F\u007F-\u009F\u00AD\u061C\u200B-\u200F\u2028\u2029\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/;
/**
 * Characters refused in multi-line notes: the same controls less tab, line feed and carriage
 * return, and the bidirectional overrides, isolates and marks (U+061C, U+200E/U+200F,
 * U+202A–U+202E, U+2066–U+2069). Zero-width joiners stay allowed: emoji sequences and Persian or
 * Indic text need them.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const NOTE_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
const PLAIN_MESSAGE = 'Remove the control, invisible or text-direction characters: this field must be plain text.';
/** Text schemas the rules apply to: a string, or a nullable string (null passes through untouched). */
type TextSchema = z.ZodType<string | null, string | null>;

/**
 * A single-line field a person types: refuses {@link CONTROL_OR_BIDI} (checked on the raw text,
 * before anything is trimmed), trims surrounding spaces and, unless `nfkc: false` (file paths,
 * machine names), NFKC-normalises (Unicode UAX #15: full-width "Ｕ１９" becomes "U19") so that the
 * stored value and every duplicate comparison see one spelling. A field whose schema requires text
 * (a string with min length ≥ 1) must not be blank once trimmed, and a maximum length (`.max(n)`,
 * also through `.nullable()`) is checked again on the normalised value, since NFKC can lengthen
 * text ("ﷺ", U+FDFA, becomes 18 characters). Returns the same schema type, its description kept.
 */
export function plainText<T extends TextSchema>(s: T, opts: { nfkc?: boolean } = {}): T {
  const required = ((s as unknown as { minLength?: number | null }).minLength ?? 0) > 0;
  const max = maxLengthOf(s);
  let r = s
    .refine((v) => v === null || !CONTROL_OR_BIDI.test(v), { message: PLAIN_MESSAGE })
    .overwrite((v) => (v === null ? v : ((opts.nfkc === false ? v.trim() : v.trim().normalize('NFKC')) as typeof v))) as T;
  // Only spaces: blank once trimmed. An empty value already failed the schema's own minimum, and
  // one field gets one message. A custom `when` runs the check even after the value failed its
  // type (left out, null, a number): only a string is judged here, so a missing field stays the
  // schema's own "required" issue, never a crash on `undefined.length`.
  if (required)
    r = r.refine((v) => typeof v !== 'string' || v.length > 0, {
      message: 'Enter a value: it cannot be blank or only spaces.',
      when: (p) => typeof p.value === 'string' && !p.issues.some((x) => x.code === 'too_small'),
    }) as T;
  // NFKC can lengthen text (U+FDFA "ﷺ" becomes 18 characters): the limit holds for what is stored.
  if (max !== null)
    r = r.refine((v) => v === null || v.length <= max, {
      message: `Too long: at most ${max} characters once normalised (some characters, such as ligatures, expand to several).`,
    }) as T;
  return r;
}

/** The schema's maximum length (`.max(n)`), looking through `.nullable()`; null when it has none. */
function maxLengthOf(s: TextSchema): number | null {
  const direct = (s as unknown as { maxLength?: number | null }).maxLength;
  if (typeof direct === 'number') return direct;
  const inner = (s as unknown as { unwrap?: () => { maxLength?: number | null } }).unwrap?.();
  return typeof inner?.maxLength === 'number' ? inner.maxLength : null;
}
/** A multi-line note: newlines and tabs kept, {@link NOTE_FORBIDDEN} refused. Returns the same schema type. */
export function noteText<T extends TextSchema>(s: T): T {
  return s.refine((v) => v === null || !NOTE_FORBIDDEN.test(v), {
    message: 'Remove the control or text-direction characters: notes may hold line breaks and tabs, nothing invisible.',
  }) as T;
}

/** {@link CONTROL_OR_BIDI}, every occurrence. */
const CONTROL_OR_BIDI_ALL = new RegExp(CONTROL_OR_BIDI.source, 'g');

/**
 * Clean a stored one-line value the way {@link plainText} would have stored it, for data written
 * before the text rules existed (device migration 0016, HQ 0011): remove every
 * {@link CONTROL_OR_BIDI} character (a typed value with one would now be refused), trim, NFKC-normalise
 * and trim again. The migrations keep the original when the result would be blank or collide
 * with another row's unique value.
 */
export function cleanOneLine(v: string): string {
  return v.replace(CONTROL_OR_BIDI_ALL, '').trim().normalize('NFKC').trim();
}
