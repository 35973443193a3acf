/**
 * Data classification, fail-closed (kinetix.md §9; frozen contract "tagged data must never reach
 * a provider not cleared for it"). Fields are tagged here per table; before any tool result
 * reaches a model provider, every field tagged `clinical-restricted` is replaced by a
 * "withheld" marker unless that provider is cleared for the class. Unknown tables, an unknown
 * clearance or a failure reading it all count as *not cleared*.
 */
import type { TableName } from '../../models/tables';
import { TABLES } from '../../models/tables';

/** Sensitivity classes, least to most restricted. */
export type Classification = 'internal' | 'personal' | 'clinical' | 'clinical-restricted';

/** The org setting listing the classes the configured provider is cleared for (JSON array). */
export const CLEARANCE_SETTING_KEY = 'kinetix.provider_cleared_for';

/**
 * Field tags. Free-text clinical narrative (clinician notes, RTP and screening notes, wellness
 * notes) is `clinical-restricted`: it is the text most likely to hold diagnoses and third-party
 * health details, and it never leaves the device unless an administrator cleared the provider.
 * Structured clinical values (body part, stage, scores) are `clinical` and may be sent.
 */
export const FIELD_CLASSIFICATION: Readonly<Partial<Record<TableName, Readonly<Record<string, Classification>>>>> = {
  injury: { clinician_notes: 'clinical-restricted', body_part: 'clinical', severity: 'clinical', mechanism: 'clinical' },
  rtp_entry: { notes: 'clinical-restricted', criteria_met: 'clinical', stage: 'clinical' },
  screening: { notes: 'clinical-restricted', value: 'clinical' },
  wellness: { notes: 'clinical-restricted' },
  vitals: { resting_hr_bpm: 'clinical', hrv_rmssd_ms: 'clinical' },
  athlete: { date_of_birth: 'personal', notes: 'personal' },
  app_user: { email: 'personal', pin_hash: 'clinical-restricted' },
  device: { api_key_hash: 'clinical-restricted' },
};

/** What a withheld field reads as to the model. */
export const WITHHELD = '[withheld: clinical-restricted field; the configured model provider is not cleared for it. The user can read it in the app.]';

const ALL_TABLES = Object.keys(TABLES) as TableName[];

/** Field names tagged `clinical-restricted` in any of `tables`. */
export function restrictedFields(tables: readonly TableName[] | 'unknown'): ReadonlySet<string> {
  const out = new Set<string>();
  for (const t of tables === 'unknown' ? ALL_TABLES : tables) {
    for (const [f, c] of Object.entries(FIELD_CLASSIFICATION[t] ?? {})) if (c === 'clinical-restricted') out.add(f);
  }
  return out;
}

/**
 * Parse a stored clearance value. Anything that is not an array of known classes yields the
 * empty set (fail closed).
 */
export function parseClearance(value: unknown): ReadonlySet<Classification> {
  if (!Array.isArray(value)) return new Set();
  const known: Classification[] = ['internal', 'personal', 'clinical', 'clinical-restricted'];
  return new Set(value.filter((v): v is Classification => typeof v === 'string' && (known as string[]).includes(v)));
}

/**
 * A copy of `value` with every restricted field of `tables` replaced by {@link WITHHELD}, at
 * any depth, unless `cleared` holds `clinical-restricted`. `tables: 'unknown'` applies the tags
 * of every table (fail closed). Returns the number of fields withheld.
 */
export function withholdRestricted<T>(
  value: T,
  tables: readonly TableName[] | 'unknown',
  cleared: ReadonlySet<Classification>,
): { value: T; withheld: number } {
  if (cleared.has('clinical-restricted')) return { value, withheld: 0 };
  const fields = restrictedFields(tables);
  if (fields.size === 0) return { value, withheld: 0 };
  let withheld = 0;
  const walk = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object' || depth > 64) return depth > 64 ? WITHHELD : v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (fields.has(k) && x !== null && x !== undefined && x !== '') {
        out[k] = WITHHELD;
        withheld++;
      } else out[k] = walk(x, depth + 1);
    }
    return out;
  };
  return { value: walk(value, 0) as T, withheld };
}
