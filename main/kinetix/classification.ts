/**
 * Data classification, fail-closed (kinetix.md §9; frozen contract "tagged data must never reach
 * a provider not cleared for it"). Fields are tagged here per table; before any tool result
 * reaches a model provider, every field tagged `clinical-restricted` is replaced by a
 * "withheld" marker unless that provider is cleared for the class; a column with no tag at all is
 * withheld from every provider. Unknown tables, an unknown clearance or a failure reading it all
 * count as *not cleared*. Record text (free text people typed) is also listed here: listings omit
 * it, and only the untrusted `read_<table>_notes` tool returns it (issue 9 §6).
 */
import type { TableName } from '../../models/tables';
import { TABLES } from '../../models/tables';

const ALL_TABLES = Object.keys(TABLES) as TableName[];

/** Sensitivity classes, least to most restricted. */
export type Classification = 'internal' | 'personal' | 'clinical' | 'clinical-restricted';

/** The org setting listing the classes the configured provider is cleared for (JSON array). */
export const CLEARANCE_SETTING_KEY = 'kinetix.provider_cleared_for';

/** Columns every synced table carries (ids, org, timestamps, version): bookkeeping, `internal`. */
const BOOKKEEPING: Readonly<Record<string, Classification>> = {
  id: 'internal',
  org_id: 'internal',
  created_at: 'internal',
  updated_at: 'internal',
  version: 'internal',
  deleted_at: 'internal',
};

/**
 * Field tags: every column of every table a tool can return carries one (a test walks them all;
 * an untagged column is withheld from every provider, see {@link withholdRestricted}). Free-text
 * clinical narrative (clinician notes, RTP and screening notes, wellness notes) is
 * `clinical-restricted`: it is the text most likely to hold diagnoses and third-party health
 * details, and it never leaves the device unless an administrator cleared the provider.
 * Structured clinical values (body part, stage, scores) are `clinical` and may be sent. Names,
 * dates of birth and e-mail addresses are `personal`; ids, labels and bookkeeping `internal`.
 */
export const FIELD_CLASSIFICATION: Readonly<Record<TableName, Readonly<Record<string, Classification>>>> = {
  squad: { ...BOOKKEEPING, name: 'internal', season: 'internal' },
  athlete: {
    ...BOOKKEEPING,
    name: 'personal',
    date_of_birth: 'personal',
    sex: 'personal',
    position: 'internal',
    squad_id: 'internal',
    dominant_side: 'internal',
    status: 'internal',
    notes: 'personal',
  },
  injury: {
    ...BOOKKEEPING,
    athlete_id: 'internal',
    body_part: 'clinical',
    side: 'clinical',
    mechanism: 'clinical',
    onset_date: 'clinical',
    severity: 'clinical',
    status: 'clinical',
    clinician_notes: 'clinical-restricted',
  },
  screening: {
    ...BOOKKEEPING,
    athlete_id: 'internal',
    test: 'clinical',
    side: 'clinical',
    value: 'clinical',
    unit: 'internal',
    date: 'clinical',
    notes: 'clinical-restricted',
  },
  rtp_entry: {
    ...BOOKKEEPING,
    injury_id: 'internal',
    athlete_id: 'internal',
    stage: 'clinical',
    criteria_met: 'clinical',
    notes: 'clinical-restricted',
    physio_signoff_by: 'internal',
    physio_signoff_at: 'internal',
    doctor_signoff_by: 'internal',
    doctor_signoff_at: 'internal',
    coach_signoff_by: 'internal',
    coach_signoff_at: 'internal',
  },
  wellness: {
    ...BOOKKEEPING,
    athlete_id: 'internal',
    date: 'internal',
    sleep: 'clinical',
    soreness: 'clinical',
    stress: 'clinical',
    mood: 'clinical',
    fatigue: 'clinical',
    notes: 'clinical-restricted',
  },
  vitals: { ...BOOKKEEPING, athlete_id: 'internal', date: 'internal', resting_hr_bpm: 'clinical', hrv_rmssd_ms: 'clinical' },
  training_session: { ...BOOKKEEPING, squad_id: 'internal', date: 'internal', kind: 'internal', duration_min: 'internal', notes: 'personal' },
  session_load: {
    ...BOOKKEEPING,
    athlete_id: 'internal',
    training_session_id: 'internal',
    date: 'internal',
    duration_min: 'internal',
    rpe: 'internal',
    load_au: 'internal',
  },
  rig: { ...BOOKKEEPING, name: 'internal', declared_layout: 'internal', drift_tolerance_deg: 'internal', drift_tolerance_m: 'internal' },
  camera: {
    ...BOOKKEEPING,
    rig_id: 'internal',
    name: 'internal',
    width: 'internal',
    height: 'internal',
    calibration: 'internal',
    reprojection_rms_px: 'internal',
    calibrated_at: 'internal',
  },
  capture_session: {
    ...BOOKKEEPING,
    athlete_id: 'internal',
    rig_id: 'internal',
    recorded_at: 'internal',
    trial_name: 'internal',
    fps: 'internal',
    frame_count: 'internal',
    camera_count: 'internal',
    source: 'internal',
    trc_path: 'internal',
    status: 'internal',
    notes: 'clinical',
    /** The test performed (single-leg squat, drop jump, gait). */
    test: 'internal',
    /** Per-joint angle time series (degrees) with their conditions: a clinical measurement. */
    angle_series: 'clinical',
  },
  pose_metric: {
    ...BOOKKEEPING,
    athlete_id: 'internal',
    capture_session_id: 'internal',
    joint: 'clinical',
    side: 'clinical',
    statistic: 'clinical',
    value_deg: 'clinical',
    omitted_reason: 'internal',
    camera_count: 'internal',
    camera_mode: 'internal',
    view_obliquity_deg: 'internal',
    obliquity_band: 'internal',
    view_matches_declared: 'internal',
    coverage: 'internal',
    trustworthy: 'internal',
    sagittal_ratio: 'internal',
    frames: 'internal',
    conditions: 'internal',
  },
  video: { ...BOOKKEEPING, athlete_id: 'internal', capture_session_id: 'internal', file_path: 'internal', duration_s: 'internal', size_bytes: 'internal' },
  device: {
    ...BOOKKEEPING,
    name: 'internal',
    kind: 'internal',
    athlete_id: 'internal',
    api_key_hash: 'clinical-restricted',
    api_key_last4: 'internal',
    key_rotated_at: 'internal',
  },
  report: {
    ...BOOKKEEPING,
    athlete_id: 'internal',
    squad_id: 'internal',
    kind: 'internal',
    title: 'internal',
    markdown: 'clinical',
    pdf_path: 'internal',
    generated_by: 'internal',
  },
  rate_folder: { ...BOOKKEEPING, name: 'internal' },
  rate_item: { ...BOOKKEEPING, folder_id: 'internal', code: 'internal', name: 'internal', item_type: 'internal', price_cents: 'internal' },
  app_user: {
    ...BOOKKEEPING,
    email: 'personal',
    display_name: 'personal',
    role: 'internal',
    linked_athlete_id: 'internal',
    active: 'internal',
    budget_cap_usd: 'internal',
    pin_hash: 'clinical-restricted',
  },
};

/**
 * Record text: columns whose value is free text a person typed (clinical and screening notes, RTP
 * notes and criteria, athlete notes, wellness notes, session and capture notes). It may have been
 * written by anyone, so it is untrusted content (issue 9 §6): listings and summaries return it
 * only as {@link RECORD_TEXT_OMITTED}, and the one tool that returns it (`read_<table>_notes`) is
 * marked untrusted, so reading it closes the untrusted-content gate of the run.
 */
export const RECORD_TEXT_FIELDS: Readonly<Partial<Record<TableName, readonly string[]>>> = {
  athlete: ['notes'],
  injury: ['clinician_notes'],
  screening: ['notes'],
  rtp_entry: ['notes', 'criteria_met'],
  wellness: ['notes'],
  training_session: ['notes'],
  capture_session: ['notes'],
};

/** What a non-empty record-text field reads as in a listing or summary. */
export const RECORD_TEXT_OMITTED = '[free text not shown in listings; read it by id with the matching read_*_notes tool (untrusted content)]';

/** Every column of `table` (from its zod row schema in models/tables.ts). */
export function tableColumns(table: TableName): string[] {
  return Object.keys(TABLES[table].schema.shape);
}

/**
 * Columns of `tables` with no classification tag in `tags` (default: {@link FIELD_CLASSIFICATION}),
 * as `table.column`. Empty when every column is tagged.
 */
export function untaggedColumns(tables: readonly TableName[] | 'unknown', tags: FieldTags = FIELD_CLASSIFICATION): string[] {
  const out: string[] = [];
  for (const t of tables === 'unknown' ? ALL_TABLES : tables) for (const c of tableColumns(t)) if (!tags[t]?.[c]) out.push(`${t}.${c}`);
  return out;
}

/** Record-text field names of `tables` (`'unknown'`: of every table). */
export function recordTextFields(tables: readonly TableName[] | 'unknown'): ReadonlySet<string> {
  const out = new Set<string>();
  for (const t of tables === 'unknown' ? ALL_TABLES : tables) for (const f of RECORD_TEXT_FIELDS[t] ?? []) out.add(f);
  return out;
}

/**
 * A copy of `value` with every non-empty record-text field of `tables` (at any depth, by field
 * name) replaced by {@link RECORD_TEXT_OMITTED}. Iterative (no recursion that input depth controls);
 * deeper than 64 levels reads as omitted. Returns the number of fields omitted.
 */
export function omitRecordText<T>(value: T, tables: readonly TableName[] | 'unknown'): { value: T; omitted: number } {
  const fields = recordTextFields(tables);
  if (fields.size === 0) return { value, omitted: 0 };
  let omitted = 0;
  const out = replaceFields(value, (k, x) => {
    if (!fields.has(k) || typeof x !== 'string' || x === '') return undefined;
    omitted++;
    return RECORD_TEXT_OMITTED;
  });
  return { value: out as T, omitted };
}

/**
 * Copy `value`, replacing the value of each object key for which `replace(key, value)` returns
 * something other than `undefined`. Arrays and plain objects are copied; anything nested deeper
 * than 64 levels becomes {@link WITHHELD}.
 */
function replaceFields(value: unknown, replace: (key: string, v: unknown) => unknown): unknown {
  const walk = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (depth > 64) return WITHHELD;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const r = replace(k, x);
      out[k] = r === undefined ? walk(x, depth + 1) : r;
    }
    return out;
  };
  return walk(value, 0);
}

/** What a withheld field reads as to the model. */
export const WITHHELD = '[withheld: clinical-restricted field; the configured model provider is not cleared for it. The user can read it in the app.]';

/** What a column without a classification tag reads as to the model (fail closed). */
export const WITHHELD_UNTAGGED = '[withheld: this field has no data classification, so it is sent to no model provider. The user can read it in the app.]';

/** Field tags per table (the shape of {@link FIELD_CLASSIFICATION}). */
export type FieldTags = Readonly<Partial<Record<TableName, Readonly<Record<string, Classification>>>>>;

/** Field names tagged `clinical-restricted` in any of `tables`. */
export function restrictedFields(tables: readonly TableName[] | 'unknown', tags: FieldTags = FIELD_CLASSIFICATION): ReadonlySet<string> {
  const out = new Set<string>();
  for (const t of tables === 'unknown' ? ALL_TABLES : tables) {
    for (const [f, c] of Object.entries(tags[t] ?? {})) if (c === 'clinical-restricted') out.add(f);
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

const EMPTY: ReadonlySet<string> = new Set();
const fieldSetCache = new Map<string, { untagged: ReadonlySet<string>; restricted: ReadonlySet<string> }>();

/** Untagged and restricted field names of `tables` (cached for the shipped tags). */
function fieldSets(tables: readonly TableName[] | 'unknown', tags: FieldTags) {
  const key = tables === 'unknown' ? '*' : tables.join(',');
  const hit = tags === FIELD_CLASSIFICATION ? fieldSetCache.get(key) : undefined;
  if (hit) return hit;
  const sets = {
    untagged: new Set(untaggedColumns(tables, tags).map((c) => c.slice(c.indexOf('.') + 1))) as ReadonlySet<string>,
    restricted: restrictedFields(tables, tags),
  };
  if (tags === FIELD_CLASSIFICATION) fieldSetCache.set(key, sets);
  return sets;
}

/**
 * A copy of `value` for a model provider, fail closed: every field (at any depth, by name) that
 * is a column of one of `tables` without a classification tag in `tags` is replaced by
 * {@link WITHHELD_UNTAGGED}, always; every field tagged `clinical-restricted` by {@link WITHHELD},
 * unless `cleared` holds `clinical-restricted`. `tables: 'unknown'` applies the tags of every
 * table. Returns the number of fields withheld (both kinds).
 */
export function withholdRestricted<T>(
  value: T,
  tables: readonly TableName[] | 'unknown',
  cleared: ReadonlySet<Classification>,
  tags: FieldTags = FIELD_CLASSIFICATION,
): { value: T; withheld: number } {
  const f = fieldSets(tables, tags);
  const untagged = f.untagged;
  const restricted = cleared.has('clinical-restricted') ? EMPTY : f.restricted;
  if (untagged.size === 0 && restricted.size === 0) return { value, withheld: 0 };
  let withheld = 0;
  const out = replaceFields(value, (k, x) => {
    if (x === null || x === undefined || x === '') return undefined;
    if (untagged.has(k)) {
      withheld++;
      return WITHHELD_UNTAGGED;
    }
    if (restricted.has(k)) {
      withheld++;
      return WITHHELD;
    }
    return undefined;
  });
  return { value: out as T, withheld };
}
