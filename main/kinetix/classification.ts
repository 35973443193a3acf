/**
 * Data classification, fail-closed (kinetix.md §9; issue 9 §12; frozen contract "tagged data must
 * never reach a provider not cleared for it"). Every column of every table carries a class
 * ({@link FIELD_CLASSIFICATION}), and so does every non-column field a tool returns
 * ({@link RESULT_FIELD_CLASSIFICATION}). Before anything reaches a model provider (tool results,
 * the memory digest, the identity block of the system prompt, MCP results), every field whose class
 * the provider is not cleared for is replaced by a marker the model and the user can read
 * ({@link withheldMarker}: "[withheld: clinical — provider not cleared; …]"); a column with no
 * tag is withheld from every provider. The classes, their order, the clearance type and its
 * default (`['internal']`: names and health data are sent nowhere until an administrator clears
 * the provider in Settings → Assistant) are in models/classification.ts. Record text (free text
 * people typed) is also listed here: listings omit it, and only the untrusted
 * `read_<table>_notes` tool returns it (issue 9 §6).
 */
import {
  CLASSIFICATIONS,
  DEFAULT_CLEARANCE,
  classRank,
  mostSensitive,
  parseClearance,
  type Classification,
  type ClearanceProvider,
  type ProviderClearance,
} from '../../models/classification';
import type { ErrorPayload } from '../../models/errors';
import type { TableName } from '../../models/tables';
import { shippedHelpPages } from '../help';
import { TABLES } from '../../models/tables';

export { CLASSIFICATIONS, DEFAULT_CLEARANCE, parseClearance, type Classification, type ClearanceProvider, type ProviderClearance };

const ALL_TABLES = Object.keys(TABLES) as TableName[];

/**
 * The org setting holding each provider's clearance: `{ anthropic: Classification[], mcp:
 * Classification[] }` (a missing provider has {@link DEFAULT_CLEARANCE}). Written only by
 * `updateAssistantSettings` (settings.manage).
 */
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
 * an untagged column is withheld from every provider, see {@link withholdForProvider}). Every
 * free-text field a person types ({@link RECORD_TEXT_FIELDS}: clinician, screening, RTP, wellness,
 * athlete, session and capture notes, RTP criteria, the deactivation reason) is
 * `clinical-restricted`, whoever wrote it and whatever it is meant for: free text is where
 * diagnoses and third-party health details end up, and no tag can tell an athlete note about
 * kit from one about a scan (a test checks every record-text field is restricted). Structured clinical values (body part, stage, scores) are `clinical`. Names, dates of
 * birth and e-mail addresses are `personal`; ids and bookkeeping `internal`; typed labels the class of
 * what they may name ({@link TYPED_LABELS}: an athlete's trial name or device name is `personal`). Each class
 * reaches only a provider cleared for it (models/classification.ts).
 */
export const FIELD_CLASSIFICATION: Readonly<Record<TableName, Readonly<Record<string, Classification>>>> = {
  /** A squad's name is a team label ("U19"), not a person or a health value. */
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
    /** Free text staff type about the athlete: may hold health details, so restricted like clinician notes. */
    notes: 'clinical-restricted',
    /** Why the athlete was deactivated, as typed: may name an illness or injury. */
    deactivation_reason: 'clinical-restricted',
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
    /** Free text ("pain-free hop test, full ROM"): clinical narrative. */
    criteria_met: 'clinical-restricted',
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
  training_session: { ...BOOKKEEPING, squad_id: 'internal', date: 'internal', kind: 'internal', duration_min: 'internal', notes: 'clinical-restricted' },
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
    /** Typed by a person, often after the athlete ("Jonah_SLS_left"): may name them, so personal ({@link TYPED_LABELS}). */
    trial_name: 'personal',
    fps: 'internal',
    frame_count: 'internal',
    camera_count: 'internal',
    source: 'internal',
    /** A file path built from the trial name or typed: may name the athlete. */
    trc_path: 'personal',
    status: 'internal',
    notes: 'clinical-restricted',
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
    /** Why a reading is or is not trustworthy: `{ code, detail }[]`, where the detail quotes the readings ("values reach -48° to -5°…"). */
    conditions: 'clinical',
  },
  /** `file_path`: the recording's file name, chosen by whoever filmed it: may name the athlete. */
  video: { ...BOOKKEEPING, athlete_id: 'internal', capture_session_id: 'internal', file_path: 'personal', duration_s: 'internal', size_bytes: 'internal' },
  device: {
    ...BOOKKEEPING,
    /** An athlete's own wearable, named by a person ("Jonah's watch"): may name the athlete. */
    name: 'personal',
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
    /** "Athlete summary: <name> (<date>)": carries the athlete's name. */
    title: 'personal',
    /** The report body: names and clinical figures together. */
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
 * Labels a person types that are not record text, and the class each takes: the class of what it
 * may name. A label of a thing the club owns (squad, rig, camera, fee folder and item, the
 * organisation's own name in the system prompt) is `internal`; a label or file name of one
 * athlete's recording or device (capture trial name and TRC path, video file path, device name) is
 * typed about that athlete and often names them, so it is `personal`. No label is clinical: a
 * label that carries a diagnosis is misuse the app cannot detect, which is why notes (not labels)
 * are where clinical free text belongs. A test checks these tags against {@link FIELD_CLASSIFICATION}.
 */
export const TYPED_LABELS: Readonly<Partial<Record<TableName, Readonly<Record<string, Classification>>>>> = {
  squad: { name: 'internal' },
  rig: { name: 'internal' },
  camera: { name: 'internal' },
  rate_folder: { name: 'internal' },
  rate_item: { name: 'internal' },
  capture_session: { trial_name: 'personal', trc_path: 'personal' },
  video: { file_path: 'personal' },
  device: { name: 'personal' },
};

/**
 * Record text: columns whose value is free text a person typed (clinical and screening notes, RTP
 * notes and criteria, athlete notes and deactivation reason, wellness notes, session and capture
 * notes). Every one is tagged `clinical-restricted`, and none is ever copied into generated text
 * (changeset and activity summaries are built from structured fields only). It may have been
 * written by anyone, so it is untrusted content (issue 9 §6): listings and summaries return it
 * only as {@link RECORD_TEXT_OMITTED}, and the one tool that returns it (`read_<table>_notes`) is
 * marked untrusted, so reading it closes the untrusted-content gate of the run.
 */
export const RECORD_TEXT_FIELDS: Readonly<Partial<Record<TableName, readonly string[]>>> = {
  athlete: ['notes', 'deactivation_reason'],
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

/**
 * Fields tools return that are not columns of the tool's tables (derived or joined values, the
 * apply result, activity and changeset rows, help passages), each with its class. Text that the
 * app composes from record values takes the class of the most sensitive value it can hold:
 * changeset and activity summaries name athletes and injuries ("Record left hamstring injury for
 * …"), so `summary` is `clinical`. A test walks every tool's output schema and fails on a field
 * that is neither a tagged column of its tables nor listed here.
 */
export const RESULT_FIELD_CLASSIFICATION: Readonly<Record<string, Classification>> = {
  // Joined or derived from records
  athlete_name: 'personal',
  actor_name: 'personal',
  summary: 'clinical',
  // Write results and changesets (ids, counts, row values under before/after keyed by column)
  changeset_id: 'internal',
  rows_changed: 'internal',
  versions: 'internal',
  undo: 'internal',
  tool: 'internal',
  verb: 'internal',
  table: 'internal',
  before: 'internal',
  after: 'internal',
  op: 'internal',
  applied_at: 'internal',
  undo_of: 'internal',
  undone_by: 'internal',
  run_id: 'internal',
  via_assistant: 'internal',
  actor_user_id: 'internal',
  record_table: 'internal',
  record_id: 'internal',
  record: 'internal',
  total: 'internal',
  /** A non-object result wrapped for MCP's structured content. */
  result: 'internal',
  status: 'internal',
  version: 'internal',
  title: 'internal',
  // ACWR and pose caveats: computed by the app, no record values
  as_of: 'internal',
  method: 'internal',
  coverage_rule: 'internal',
  note: 'internal',
  code: 'internal',
  /** A condition's or caveat's detail: the app's words, but with readings in them ("values reach -48° to -5°"). */
  detail: 'clinical',
  /** Fixed caveats the app attaches to readings (no record values). */
  caveats: 'internal',
  /** ACWR windows and figures: training load, `internal` like `session_load.load_au` and `rpe`. */
  acute_window_days: 'internal',
  chronic_window_days: 'internal',
  days_of_data: 'internal',
  acute_days_of_data: 'internal',
  acute_coverage: 'internal',
  chronic_coverage: 'internal',
  history_days: 'internal',
  acute_au: 'internal',
  chronic_au: 'internal',
  ratio: 'internal',
  // Capture results: the angle series and the repetitions' peaks are joint-angle readings
  /** `{ fps, first_frame, series: [{ joint, side, values }] }`: angles per frame, a clinical measurement as a whole. */
  series: 'clinical',
  /** Angle per frame (degrees). */
  values: 'clinical',
  /** `{ basis, repetitions: [{ index, start_frame, peak_frame, end_frame, peaks }] }`: peak angles per repetition. */
  repetitions: 'clinical',
  peaks: 'clinical',
  peak_deg: 'clinical',
  first_frame: 'internal',
  index: 'internal',
  start_frame: 'internal',
  peak_frame: 'internal',
  end_frame: 'internal',
  // Counts and flags the app derives (no person, no health value)
  athlete_count: 'internal',
  /** Whether a user has set a PIN (never the PIN or its hash). */
  has_pin: 'internal',
  /** A changeset's rows: op, table, id, and row values under before/after (walked by column). */
  changes: 'internal',
  // Capture rigs (configuration, no person)
  declared_layout: 'internal',
  calibration: 'internal',
  calibrated_at: 'internal',
  // Help centre passages (the shipped help pages)
  query: 'internal',
  slug: 'internal',
  anchor: 'internal',
  heading: 'internal',
  snippet: 'internal',
  link: 'internal',
  show_me: 'internal',
  app_path: 'internal',
  body: 'internal',
  opened: 'internal',
  covered: 'internal',
  score: 'internal',
  passages: 'internal',
  current: 'internal',
  sections: 'internal',
};

/**
 * Result fields whose value as a whole has the field's class and is not walked field by field:
 * maps keyed by record ids (`versions`: id → version), configuration blobs, the app's fixed caveat
 * texts. Every other object or array is walked, and each key in it must have a class of its own.
 */
export const WHOLE_VALUE_FIELDS: ReadonlySet<string> = new Set(['versions', 'calibration', 'declared_layout', 'caveats']);

/**
 * What a field withheld for its class reads as, to the model and (in the trace) to the user:
 * `[withheld: personal — provider not cleared; the user can see it in the app]`.
 */
export function withheldMarker(c: Classification): string {
  return `[withheld: ${c} — provider not cleared; the user can see it in the app]`;
}

/** What a `clinical-restricted` field reads as to a provider not cleared for it. */
export const WITHHELD = withheldMarker('clinical-restricted');

/** What a column without a classification tag reads as to the model (fail closed). */
export const WITHHELD_UNTAGGED =
  '[withheld: unclassified — this field has no data classification, so it is sent to no model provider; the user can see it in the app]';

/** What a result field with no class at all (neither a column of the tool's tables nor a result field) reads as to the model (fail closed). */
export const WITHHELD_UNCLASSIFIED =
  '[withheld: unclassified — this result field has no data classification, so it is sent to no model provider; the user can see it in the app]';

/** Field tags per table (the shape of {@link FIELD_CLASSIFICATION}). */
export type FieldTags = Readonly<Partial<Record<TableName, Readonly<Record<string, Classification>>>>>;

/** Field names tagged `clinical-restricted` in any of `tables`. */
export function restrictedFields(tables: readonly TableName[] | 'unknown', tags: FieldTags = FIELD_CLASSIFICATION): ReadonlySet<string> {
  const out = new Set<string>();
  for (const [f, c] of fieldClasses(tables, tags).classes) if (c === 'clinical-restricted') out.add(f);
  return out;
}

/** Per field name of `tables`: its class (the most sensitive of its column tags and its result tag), and the untagged columns. */
interface FieldClasses {
  classes: ReadonlyMap<string, Classification>;
  untagged: ReadonlySet<string>;
}

const fieldClassCache = new Map<string, FieldClasses>();

function fieldClasses(tables: readonly TableName[] | 'unknown', tags: FieldTags): FieldClasses {
  const key = tables === 'unknown' ? '*' : tables.join(',');
  const hit = tags === FIELD_CLASSIFICATION ? fieldClassCache.get(key) : undefined;
  if (hit) return hit;
  const classes = new Map<string, Classification>(Object.entries(RESULT_FIELD_CLASSIFICATION));
  for (const t of tables === 'unknown' ? ALL_TABLES : tables)
    for (const [f, c] of Object.entries(tags[t] ?? {})) {
      const prior = classes.get(f);
      classes.set(f, prior ? mostSensitive([prior, c]) : c);
    }
  const out: FieldClasses = { classes, untagged: new Set(untaggedColumns(tables, tags).map((c) => c.slice(c.indexOf('.') + 1))) };
  if (tags === FIELD_CLASSIFICATION) fieldClassCache.set(key, out);
  return out;
}

/**
 * The class of field `name` in a result of `tables`: the most sensitive of its column tags in those
 * tables and its {@link RESULT_FIELD_CLASSIFICATION} tag; `null` when it has none (an untagged
 * column, or a field no tag names).
 */
export function fieldClass(name: string, tables: readonly TableName[] | 'unknown', tags: FieldTags = FIELD_CLASSIFICATION): Classification | null {
  const f = fieldClasses(tables, tags);
  return f.untagged.has(name) ? null : (f.classes.get(name) ?? null);
}

/** Whether `name` is a column of `tables` without a classification tag (withheld from every provider). */
export function isUntaggedField(name: string, tables: readonly TableName[] | 'unknown', tags: FieldTags = FIELD_CLASSIFICATION): boolean {
  return fieldClasses(tables, tags).untagged.has(name);
}

/** What {@link withholdForProvider} returns: the copy to send, and what it withheld (counts, never values). */
export interface Withheld<T> {
  value: T;
  /** Fields withheld, all classes together (untagged included). */
  withheld: number;
  /** Fields withheld per class (`unclassified`: untagged columns). */
  byClass: Partial<Record<Classification | 'unclassified', number>>;
}

/**
 * A copy of `value` for a provider with `clearance`, fail closed: every field (at any depth, by
 * name) whose class ({@link fieldClass} over `tables`) the provider is not cleared for is replaced
 * by {@link withheldMarker} of that class; a column of `tables` without a tag by
 * {@link WITHHELD_UNTAGGED}, and any other key with no class (a number, a flag or a list of numbers
 * included: a joint angle per frame is a reading) by {@link WITHHELD_UNCLASSIFIED}, whatever the
 * clearance; only a container of fields (an object, an array of objects) is walked without a class
 * of its own. A cleared {@link WHOLE_VALUE_FIELDS} field passes whole. `own`: the tool's own
 * result classes (`Tool.outputClasses`, an integration's fields), used where no tag names the field. Empty values (null, '') are left as they are
 * (nothing to withhold). `tables: 'unknown'` applies the tags of every table. `clearance` is read
 * with {@link parseClearance} (a set that is not a prefix of the class order counts only up to its
 * first gap). Iterative depth is bounded (deeper than 64 levels reads as withheld).
 */
export function withholdForProvider<T>(
  value: T,
  tables: readonly TableName[] | 'unknown',
  clearance: ProviderClearance | ReadonlySet<Classification>,
  tags: FieldTags = FIELD_CLASSIFICATION,
  own: Readonly<Record<string, Classification>> = {},
): Withheld<T> {
  const cleared = parseClearance([...clearance]);
  const top = cleared.length - 1;
  const f = fieldClasses(tables, tags);
  const byClass: Withheld<T>['byClass'] = {};
  let withheld = 0;
  const count = (k: Classification | 'unclassified') => {
    withheld++;
    byClass[k] = (byClass[k] ?? 0) + 1;
  };
  const out = replaceFields(value, (k, x) => {
    if (x === null || x === undefined || x === '') return undefined;
    if (f.untagged.has(k)) {
      count('unclassified');
      return WITHHELD_UNTAGGED;
    }
    const c = f.classes.get(k) ?? (Object.hasOwn(own, k) ? own[k] : undefined);
    if (c === undefined) {
      // No class (not a column of the tool's tables, not a result field): a container of fields is
      // walked (its keys are checked one by one); any value is withheld, fail closed (issue 9 §12).
      if (isFieldContainer(x)) return undefined;
      count('unclassified');
      return WITHHELD_UNCLASSIFIED;
    }
    if (classRank(c) > top) {
      count(c);
      return withheldMarker(c);
    }
    return WHOLE_VALUE_FIELDS.has(k) ? x : undefined;
  });
  return withheld === 0 ? { value, withheld: 0, byClass } : { value: out as T, withheld, byClass };
}

/** An object, or an array whose every item is an object or such an array: its keys carry the classes, not it. */
function isFieldContainer(x: unknown): boolean {
  if (x === null || typeof x !== 'object') return false;
  if (!Array.isArray(x)) return true;
  return x.every((i) => i !== null && typeof i === 'object' && isFieldContainer(i));
}

/** Whether `clearance` holds class `c` (read fail closed, as {@link withholdForProvider} does). */
export function isCleared(clearance: ProviderClearance | ReadonlySet<Classification>, c: Classification): boolean {
  return classRank(c) < parseClearance([...clearance]).length;
}

/**
 * The page the user is on, as sent to a provider: an app route made only of route words, record
 * ids and the slug of a shipped help page (main/help/pages.generated.ts) passes (it is
 * `internal`), with a `#fragment` only when it is an anchor of that help page. Anything else (free
 * text, a query string, a slug or anchor no shipped page has: each could spell out a name or a
 * diagnosis) is withheld as a whole.
 */
export function pageContextFor(page: string | null): string | null {
  if (!page) return null;
  const hash = page.indexOf('#');
  const path = hash < 0 ? page : page.slice(0, hash);
  const fragment = hash < 0 ? null : page.slice(hash + 1);
  const segments = path.split('/').slice(1);
  const help = segments[0] === 'help' && segments.length === 2 ? helpAnchors().get(segments[1]!) : undefined;
  const ok =
    /^\/[A-Za-z0-9\-_/]*$/.test(path) &&
    segments.length <= 4 &&
    segments.every((s, i) => ROUTE_WORDS.has(s) || /^[0-9a-f]{8}-[0-9a-f-]{8,60}$/i.test(s) || (i === 1 && help !== undefined)) &&
    (fragment === null || (help !== undefined && help.has(fragment)));
  return ok ? page : PAGE_WITHHELD;
}

/** What a page context that is not an app route reads as to a provider. */
export const PAGE_WITHHELD = '[withheld: unclassified — page context that is not an app route]';

let helpAnchorCache: ReadonlyMap<string, ReadonlySet<string>> | null = null;

/** Slug → section anchors of every shipped help page. */
function helpAnchors(): ReadonlyMap<string, ReadonlySet<string>> {
  helpAnchorCache ??= new Map(shippedHelpPages().map((p) => [p.slug, new Set(p.sections.map((s) => s.anchor))]));
  return helpAnchorCache;
}

const ROUTE_WORDS = new Set([
  '',
  'athletes',
  'injuries',
  'screenings',
  'wellness',
  'workload',
  'pose',
  'overview',
  'squads',
  'fees',
  'activity',
  'approvals',
  'settings',
  'sync',
  'capture',
  'sessions',
  'record',
  'process',
  'rig',
  'results',
  'help',
  'trace',
]);

/**
 * Read one provider's clearance from the stored org setting value ({@link CLEARANCE_SETTING_KEY}):
 * missing, malformed or partial reads fail closed to {@link DEFAULT_CLEARANCE}.
 */
export function clearanceFromSetting(setting: unknown, provider: ClearanceProvider): ProviderClearance {
  if (!setting || typeof setting !== 'object' || Array.isArray(setting)) return DEFAULT_CLEARANCE;
  return parseClearance((setting as Record<string, unknown>)[provider]);
}

/**
 * Tool input fields that are not columns of the tool's tables, each with its class, or
 * `{ as: column }`: the class of the column it searches or ranges over (a name search carries and
 * reveals a name; a date range a date). Input fields named like a column of the tool's tables (a
 * `status` filter, a `body_part` value) take that column's class, and nested fields likewise.
 * A test walks every tool's input schema and fails on a field with no class here or there.
 * Two uses: a read tool's filter on a field above the provider's clearance is refused before the
 * query runs ({@link filtersNotCleared}: the answer would confirm the withheld value), and the
 * model's own earlier arguments are re-masked under the current clearance when they are replayed
 * ({@link withholdToolInput}).
 */
export const INPUT_FIELD_CLASSIFICATION: Readonly<Record<string, Classification | { as: string }>> = {
  /** Case-insensitive part of an athlete's name (athletes.list). */
  search: { as: 'name' },
  from: { as: 'date' },
  to: { as: 'date' },
  /** Why an athlete is deactivated: stored in `athlete.deactivation_reason`. */
  reason: { as: 'deactivation_reason' },
  limit: 'internal',
  offset: 'internal',
  athlete_ids: 'internal',
  exclude_athlete_ids: 'internal',
  per_athlete: 'internal',
  physio_signoff: 'internal',
  doctor_signoff: 'internal',
  coach_signoff: 'internal',
  signed: 'internal',
  /** vitals.record: the acknowledgement that a second set the same day is a new measurement. */
  second_set_same_day: 'internal',
  /** workload.logSessionLoads: the acknowledgement that a load on a day with one already is a second session. */
  second_session_same_day: 'internal',
  pct: 'internal',
  folder_id: 'internal',
  item_type: 'internal',
  rig_id: 'internal',
  cameras: 'internal',
  metrics: 'internal',
  video_id: 'internal',
  path: 'internal',
  changeset_id: 'internal',
  capture_session_id: 'internal',
  active: 'internal',
  /** Ids on tools whose tables do not hold that column (open_page, move_athletes_to_squad). */
  athlete_id: 'internal',
  squad_id: 'internal',
  /** Camera calibration (save_capture_rig): configuration, no person. */
  camera: 'internal',
  label: 'internal',
  yaw_deg: 'internal',
  K: 'internal',
  dist: 'internal',
  rvec: 'internal',
  tvec: 'internal',
  /** Inside a capture's joint-angle series (record_capture_session): the angles are clinical readings. */
  first_frame: 'internal',
  series: 'clinical',
  values: 'clinical',
};

/**
 * The class of tool input field `name` for a tool over `tables`: its
 * own tag (`own`: the tool's `inputClasses`), else its {@link INPUT_FIELD_CLASSIFICATION} tag, else
 * its column or result tag ({@link fieldClass}); `null` when it has none (treated as above every
 * clearance).
 */
export function inputFieldClass(
  name: string,
  tables: readonly TableName[] | 'unknown',
  own: Readonly<Record<string, Classification>> = {},
): Classification | null {
  if (Object.hasOwn(own, name)) return own[name]!;
  const tag = Object.hasOwn(INPUT_FIELD_CLASSIFICATION, name) ? INPUT_FIELD_CLASSIFICATION[name] : undefined;
  if (typeof tag === 'string') return tag;
  if (tag) return fieldClass(tag.as, tables);
  return fieldClass(name, tables);
}

/** What a refused filter reads as to the model: the field, its class (`unclassified` for none) and what to do. */
export function filterNotClearedMessage(tool: string, refused: readonly { field: string; class: Classification | 'unclassified' }[]): string {
  const names = refused.map((r) => `"${r.field}" (${r.class})`).join(', ');
  return (
    `[withheld: ${tool} was not run — this model provider is not cleared to search or filter on ${names}: the answer would reveal the withheld values. ` +
    `Call ${tool} again without ${refused.length === 1 ? 'that filter' : 'those filters'}, or tell the user to filter in the app; an administrator can change what the assistant may see under Settings → Assistant.]`
  );
}

/**
 * The filters of a read tool's `input` on a field whose class `clearance` does not hold (or that
 * has no class): each top-level field with a non-empty value other than its schema default
 * (`defaults`: field → default, from the tool's input JSON Schema). Empty when the call may run.
 */
export function filtersNotCleared(
  input: unknown,
  tables: readonly TableName[] | 'unknown',
  clearance: ProviderClearance | ReadonlySet<Classification>,
  defaults: Readonly<Record<string, unknown>> = {},
  own: Readonly<Record<string, Classification>> = {},
): { field: string; class: Classification | 'unclassified' }[] {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return [];
  const out: { field: string; class: Classification | 'unclassified' }[] = [];
  for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
    if (v === undefined || v === null || v === '' || (k in defaults && JSON.stringify(defaults[k]) === JSON.stringify(v))) continue;
    const c = inputFieldClass(k, tables, own);
    if (c === null) out.push({ field: k, class: 'unclassified' });
    else if (!isCleared(clearance, c)) out.push({ field: k, class: c });
  }
  return out;
}

/**
 * The fields of a write tool's `input` (at any depth, by name) whose input class
 * ({@link inputFieldClass}) `clearance` does not hold, or that have no class (a container of
 * fields with no class of its own is walked): each as `{ field, class }`, `field` a dotted path.
 * A write carrying such a value is refused before it is planned (issue 9 §12): the model may
 * only have guessed it (the provider never saw it), and the planned change — "nothing to change",
 * or a diff listing only the fields that differ — would confirm the guess. Empty when it may plan.
 */
export function writeFieldsNotCleared(
  input: unknown,
  tables: readonly TableName[] | 'unknown',
  clearance: ProviderClearance | ReadonlySet<Classification>,
  own: Readonly<Record<string, Classification>> = {},
): { field: string; class: Classification | 'unclassified' }[] {
  const out: { field: string; class: Classification | 'unclassified' }[] = [];
  const seen = new Set<string>();
  const push = (field: string, c: Classification | 'unclassified') => {
    if (!seen.has(field)) out.push({ field, class: c });
    seen.add(field);
  };
  const walk = (v: unknown, path: string, depth: number) => {
    if (v === null || typeof v !== 'object') return;
    if (depth > 64) return push(path || '(input)', 'unclassified');
    if (Array.isArray(v)) return v.forEach((x) => walk(x, path, depth + 1));
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (x === undefined || x === null || x === '') continue;
      const at = path ? `${path}.${k}` : k;
      const c = inputFieldClass(k, tables, own);
      if (c === null) {
        if (isFieldContainer(x)) walk(x, at, depth + 1);
        else push(at, 'unclassified');
      } else if (!isCleared(clearance, c)) push(at, c);
      else walk(x, at, depth + 1);
    }
  };
  walk(input, '', 0);
  return out;
}

/** What a write refused by {@link writeFieldsNotCleared} reads as to the model: the fields, their classes, and that the user can make the change in the app. */
export function writeNotClearedMessage(tool: string, refused: readonly { field: string; class: Classification | 'unclassified' }[]): string {
  const names = refused.map((r) => `"${r.field}" (${r.class})`).join(', ');
  return (
    `[withheld: ${tool} was not run and nothing was proposed — this model provider is not cleared for ${names}, so it may not set ${refused.length === 1 ? 'that field' : 'those fields'}: ` +
    `the planned change would reveal the withheld values. Tell the user they can make this change in the app; ` +
    `an administrator can change what the assistant may see under Settings → Assistant.]`
  );
}

/**
 * A copy of a tool's input (the model's own arguments, as replayed in the memory digest) for a
 * provider with `clearance`: every field (at any depth, by name) whose input class
 * ({@link inputFieldClass}) the provider is not cleared for reads as {@link withheldMarker};
 * a scalar field with no class as {@link WITHHELD_UNTAGGED} (fail closed). Containers with no
 * class of their own are walked. Depth-bounded like {@link withholdForProvider}.
 */
export function withholdToolInput<T>(
  value: T,
  tables: readonly TableName[] | 'unknown',
  clearance: ProviderClearance | ReadonlySet<Classification>,
  own: Readonly<Record<string, Classification>> = {},
): T {
  const top = parseClearance([...clearance]).length - 1;
  return replaceFields(value, (k, x) => {
    if (x === null || x === undefined || x === '') return undefined;
    const c = inputFieldClass(k, tables, own);
    if (c === null) return typeof x === 'object' ? undefined : WITHHELD_UNTAGGED;
    return classRank(c) > top ? withheldMarker(c) : undefined;
  }) as T;
}

/**
 * What an earlier assistant answer reads as when it is replayed to a provider no longer cleared for
 * `lost` (classes the run that wrote it was sent): the answer may quote them, and prose cannot be
 * re-masked field by field, so it is left out whole.
 */
export function earlierAnswerWithheld(lost: readonly Classification[]): string {
  return `[withheld: an earlier answer of this conversation, written when this model provider was cleared for ${lost.join(', ')} data; it is no longer cleared for that, so the answer is not sent again — the user can see it in the app]`;
}

/** What a provider reads in place of an error's text it is not cleared for. */
export const WITHHELD_ERROR_TEXT =
  '[withheld: the reason may quote stored records (a name, a date of birth, a device name) that this model provider is not cleared for; the user sees it in the app]';

/**
 * A service's error (raised while reading, planning, proposing or applying: code that reads
 * records) as a model provider may see it. Its message, its field issues' messages and its policy
 * reasons can quote stored values ("… is before <name>'s date of birth (<date>)"), so they reach
 * only a provider cleared for every class; otherwise the provider gets the code, the fields the
 * issues name, the rows in conflict (ids and versions), the policy decision codes and
 * {@link WITHHELD_ERROR_TEXT}. The stored audit row and the user's view keep the full error.
 * Errors the harness words itself (bounds, unknown tool, clearance refusals) are not passed here.
 */
export function errorForProvider(payload: ErrorPayload, clearance: ProviderClearance): ErrorPayload {
  if (isCleared(clearance, 'clinical-restricted')) return payload;
  const out: ErrorPayload = { code: payload.code, message: `${payload.code}: the change or read was refused. ${WITHHELD_ERROR_TEXT}` };
  if (payload.issues?.length) out.issues = payload.issues.map((i) => ({ path: i.path, message: '[withheld]' }));
  if (payload.conflicts?.length) out.conflicts = payload.conflicts;
  if (payload.retryAfterSeconds !== undefined) out.retryAfterSeconds = payload.retryAfterSeconds;
  if (payload.kind !== undefined) out.kind = payload.kind;
  if (payload.decisions?.length) out.decisions = payload.decisions.map(({ detail: _detail, ...d }) => ({ ...d, reason: '[withheld]' }));
  return out;
}
