/**
 * Field labels and value formats for people, not column names: what a form field and a diff row
 * call each stored field, with its unit, and how its value reads (money as money, dates as
 * dates, people and athletes by name). Pure; the names come from the caller.
 */
import { formatCents, formatDate, formatDateTime, humanize } from '../format';

/** How a field's value is shown. */
type Kind = 'text' | 'date' | 'datetime' | 'cents' | 'person' | 'athlete' | 'squad' | 'enum' | 'number' | 'bool';

interface FieldLabel {
  label: string;
  unit?: string;
  kind?: Kind;
}

const COMMON: Record<string, FieldLabel> = {
  athlete_id: { label: 'Athlete', kind: 'athlete' },
  squad_id: { label: 'Squad', kind: 'squad' },
  date: { label: 'Date', kind: 'date' },
  notes: { label: 'Notes' },
  side: { label: 'Side', kind: 'enum' },
  status: { label: 'Status', kind: 'enum' },
  deleted_at: { label: 'Removed', kind: 'datetime' },
  name: { label: 'Name' },
};

/** Labels by table, then field (falls back to {@link COMMON}, then a humanised column name). */
const LABELS: Record<string, Record<string, FieldLabel>> = {
  athlete: {
    name: { label: 'Full name' },
    date_of_birth: { label: 'Date of birth', kind: 'date' },
    sex: { label: 'Sex', kind: 'enum' },
    position: { label: 'Position' },
    dominant_side: { label: 'Dominant side', kind: 'enum' },
  },
  squad: { name: { label: 'Squad name' }, season: { label: 'Season' } },
  injury: {
    body_part: { label: 'Body part' },
    mechanism: { label: 'Mechanism', kind: 'enum' },
    onset_date: { label: 'Onset date', kind: 'date' },
    severity: { label: 'Severity', kind: 'enum' },
    clinician_notes: { label: 'Clinician notes' },
  },
  screening: { test: { label: 'Test', kind: 'enum' }, value: { label: 'Result', kind: 'number' }, unit: { label: 'Unit' } },
  rtp_entry: {
    injury_id: { label: 'Injury' },
    stage: { label: 'RTP stage', kind: 'enum' },
    criteria_met: { label: 'Criteria met' },
    physio_signoff_by: { label: 'Physio sign-off', kind: 'person' },
    physio_signoff_at: { label: 'Physio signed at', kind: 'datetime' },
    doctor_signoff_by: { label: 'Doctor sign-off', kind: 'person' },
    doctor_signoff_at: { label: 'Doctor signed at', kind: 'datetime' },
    coach_signoff_by: { label: 'Coach sign-off', kind: 'person' },
    coach_signoff_at: { label: 'Coach signed at', kind: 'datetime' },
  },
  wellness: {
    sleep: { label: 'Sleep', unit: '1–5', kind: 'number' },
    soreness: { label: 'Soreness', unit: '1–5', kind: 'number' },
    stress: { label: 'Stress', unit: '1–5', kind: 'number' },
    mood: { label: 'Mood', unit: '1–5', kind: 'number' },
    fatigue: { label: 'Fatigue', unit: '1–5', kind: 'number' },
  },
  vitals: { resting_hr_bpm: { label: 'Resting heart rate', unit: 'bpm', kind: 'number' }, hrv_rmssd_ms: { label: 'HRV (rMSSD)', unit: 'ms', kind: 'number' } },
  training_session: { kind: { label: 'Session type', kind: 'enum' }, duration_min: { label: 'Duration', unit: 'min', kind: 'number' } },
  session_load: {
    training_session_id: { label: 'Training session' },
    duration_min: { label: 'Minutes', unit: 'min', kind: 'number' },
    rpe: { label: 'Session RPE', unit: 'CR-10', kind: 'number' },
    load_au: { label: 'Load', unit: 'AU', kind: 'number' },
  },
  rate_item: {
    code: { label: 'Code' },
    name: { label: 'Item' },
    item_type: { label: 'Item type', kind: 'enum' },
    price_cents: { label: 'Price', kind: 'cents' },
    folder_id: { label: 'Folder' },
  },
  app_user: {
    display_name: { label: 'Display name' },
    email: { label: 'Email' },
    role: { label: 'Role', kind: 'enum' },
    active: { label: 'Active', kind: 'bool' },
    budget_cap_usd: { label: 'Monthly assistant budget', unit: 'USD', kind: 'number' },
    linked_athlete_id: { label: 'Linked athlete', kind: 'athlete' },
  },
  device: { kind: { label: 'Device type', kind: 'enum' }, api_key_hash: { label: 'API key' } },
};

/** What a table's record is called in a sentence. */
export const RECORD_NOUN: Record<string, string> = {
  athlete: 'Athlete',
  squad: 'Squad',
  injury: 'Injury',
  screening: 'Screening',
  rtp_entry: 'RTP stage',
  wellness: 'Wellness',
  vitals: 'Vitals',
  training_session: 'Training session',
  session_load: 'Session load',
  rate_item: 'Fee item',
  rate_folder: 'Fee folder',
  app_user: 'User',
  device: 'Device',
  report: 'Report',
};

/** Label (and unit) of a stored field. */
export function fieldLabel(table: string, field: string): FieldLabel {
  return LABELS[table]?.[field] ?? COMMON[field] ?? { label: humanize(field) };
}

/** Label with its unit: "Resting heart rate (bpm)". */
export function labelWithUnit(table: string, field: string): string {
  const l = fieldLabel(table, field);
  return l.unit ? `${l.label} (${l.unit})` : l.label;
}

/** Names a diff needs: people (user id → name), athletes, squads. */
export interface NameBook {
  people: Readonly<Record<string, { display_name: string }>>;
  athletes: ReadonlyMap<string, string>;
  squads: ReadonlyMap<string, string>;
}

/** A stored value as a person reads it. */
export function formatValue(table: string, field: string, v: unknown, names: NameBook): string {
  if (v === null || v === undefined || v === '') return '—';
  if (v === '__NOW__') return 'now';
  const kind = fieldLabel(table, field).kind ?? 'text';
  switch (kind) {
    case 'date':
      return typeof v === 'string' ? formatDate(v) : String(v);
    case 'datetime':
      return typeof v === 'string' ? formatDateTime(v) : String(v);
    case 'cents':
      return typeof v === 'number' ? formatCents(v) : String(v);
    case 'person':
      return typeof v === 'string' ? (names.people[v]?.display_name ?? 'Unknown user') : String(v);
    case 'athlete':
      return typeof v === 'string' ? (names.athletes.get(v) ?? 'An athlete') : String(v);
    case 'squad':
      return typeof v === 'string' ? (names.squads.get(v) ?? 'A squad') : String(v);
    case 'enum':
      return typeof v === 'string' ? humanize(v) : String(v);
    case 'bool':
      return v ? 'Yes' : 'No';
    case 'number':
      return typeof v === 'number' ? v.toLocaleString('en-GB', { maximumFractionDigits: 2 }) : String(v);
    default:
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
}
