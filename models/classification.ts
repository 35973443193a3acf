/**
 * Data classes and provider clearance (kinetix.md §9; issue 9 §12): the runtime-agnostic part,
 * shared by the harness (main/kinetix/classification.ts withholds fields), the MCP server, the
 * Settings page and the contract.
 *
 * The classes are ordered, least to most sensitive:
 *
 * | class | what it holds | examples |
 * | --- | --- | --- |
 * | `internal` | ids, labels, bookkeeping, workload figures | ids, versions, squad names, session loads, fee items |
 * | `personal` | who a person is | athlete and user names, dates of birth, e-mail addresses |
 * | `clinical` | health data about a person | injuries, screening values, wellness scores, vitals, pose readings |
 * | `clinical-restricted` | free text people type, and secrets' hashes | clinician, screening, RTP, wellness, athlete, session and capture notes, RTP criteria, deactivation reasons, PIN and key hashes |
 *
 * A provider's clearance is an **ordered set** ({@link ProviderClearance}): the classes it may be
 * sent, always a prefix of {@link CLASSIFICATIONS} (being cleared for a class means being cleared
 * for every less sensitive one: health data about a named athlete is not cleared for without
 * their name). `internal` is always in it: without ids nothing can be looked up.
 *
 * **Default: `['internal']`** ({@link DEFAULT_CLEARANCE}). Names and health data are personal and
 * special-category data (GDPR Art. 9; PHI under HIPAA); sending them to a third-party model
 * provider (or to an MCP client's model) needs the data controller's decision (a processing
 * agreement with that provider). So nothing above `internal` leaves the device until an
 * administrator (`settings.manage`) records that decision under Settings → Assistant. An unknown,
 * malformed or unreadable clearance reads as the default (fail closed).
 */
import { z } from 'zod';

/** Every data class, least to most sensitive (the clearance order). */
export const CLASSIFICATIONS = ['internal', 'personal', 'clinical', 'clinical-restricted'] as const;
/** A data class. */
export type Classification = (typeof CLASSIFICATIONS)[number];

/** The providers a clearance is kept for: the in-app model (`anthropic`) and MCP clients' models (`mcp`). */
export const CLEARANCE_PROVIDERS = ['anthropic', 'mcp'] as const;
/** A provider a clearance is kept for. */
export type ClearanceProvider = (typeof CLEARANCE_PROVIDERS)[number];

/** A provider's clearance: a prefix of {@link CLASSIFICATIONS}, at least `['internal']`, in class order. */
export type ProviderClearance = readonly Classification[];

/** The clearance of a provider nobody cleared (see the module comment for why). */
export const DEFAULT_CLEARANCE: ProviderClearance = ['internal'];

/** What each class means, for the Settings page and the help centre. */
export const CLASSIFICATION_LABELS: Readonly<Record<Classification, string>> = {
  internal: 'Internal: ids, labels, workload figures, fees',
  personal: 'Personal: names, dates of birth, e-mail addresses',
  clinical: 'Clinical: injuries, screenings, wellness, vitals, pose readings',
  'clinical-restricted': 'Free text: clinician, screening, RTP, wellness, athlete, session and capture notes; RTP criteria; deactivation reasons',
};

/** Rank of a class in {@link CLASSIFICATIONS} (0 = internal). */
export function classRank(c: Classification): number {
  return CLASSIFICATIONS.indexOf(c);
}

/** The most sensitive of `classes` (`internal` for none). */
export function mostSensitive(classes: Iterable<Classification>): Classification {
  let top = 0;
  for (const c of classes) top = Math.max(top, classRank(c));
  return CLASSIFICATIONS[top]!;
}

/** The clearance up to and including `top`: `clearanceUpTo('clinical')` = `['internal', 'personal', 'clinical']`. */
export function clearanceUpTo(top: Classification): ProviderClearance {
  return CLASSIFICATIONS.slice(0, classRank(top) + 1);
}

/**
 * A clearance as the settings verb accepts it: classes, each once, and if a class is in it so is
 * every less sensitive one (`['internal', 'clinical']` is refused: clinical without personal).
 * Order in the input does not matter; the output is in class order.
 */
export const ProviderClearanceInput = z
  .array(z.enum(CLASSIFICATIONS))
  .min(1)
  .max(CLASSIFICATIONS.length)
  .superRefine((v, ctx) => {
    const have = new Set(v);
    if (have.size !== v.length) ctx.addIssue({ code: 'custom', message: 'each class at most once' });
    const top = mostSensitive(have);
    const missing = clearanceUpTo(top).filter((c) => !have.has(c));
    if (missing.length) ctx.addIssue({ code: 'custom', message: `clearing "${top}" needs every less sensitive class too (missing: ${missing.join(', ')})` });
  })
  .transform((v): ProviderClearance => clearanceUpTo(mostSensitive(v)));

/**
 * Read a stored clearance, fail closed: the longest prefix of {@link CLASSIFICATIONS} whose every
 * class is in `value`, never less than {@link DEFAULT_CLEARANCE}. Anything that is not an array
 * of known classes is the default; `['internal', 'clinical']` is `['internal']` (no personal, so
 * no clinical either).
 */
export function parseClearance(value: unknown): ProviderClearance {
  if (!Array.isArray(value)) return DEFAULT_CLEARANCE;
  const have = new Set(value.filter((v): v is string => typeof v === 'string'));
  let n = 1;
  while (n < CLASSIFICATIONS.length && have.has(CLASSIFICATIONS[n]!)) n++;
  return CLASSIFICATIONS.slice(0, n);
}

/** The clearances of every provider, as the settings view carries them. */
export type ClearanceByProvider = Readonly<Record<ClearanceProvider, ProviderClearance>>;
