/**
 * 0001: the clinical records, org/user tables, changesets, activity, outbox and settings.
 * Frozen: this text is applied as written and its SHA-256 is recorded in schema_migrations and
 * checked at every open (main/data/db.ts). Never edit it, and never build it from shared
 * fragments (an edit to a fragment would silently change an applied migration); add a new
 * numbered migration instead.
 */
export const sql = `
CREATE TABLE organization (
  id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  deleted_at TEXT,
  org_id TEXT GENERATED ALWAYS AS (id) VIRTUAL,
  name TEXT NOT NULL,
  plan TEXT NOT NULL,
  budget_cap_usd REAL,
  assistant_model TEXT NOT NULL
);

CREATE TABLE squad (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  name TEXT NOT NULL,
  season TEXT NOT NULL
);
CREATE INDEX squad_org ON squad(org_id);

CREATE TABLE athlete (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  name TEXT NOT NULL,
  date_of_birth TEXT NOT NULL,
  sex TEXT NOT NULL,
  position TEXT,
  squad_id TEXT REFERENCES squad(id),
  dominant_side TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  notes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX athlete_org_squad ON athlete(org_id, squad_id, name);
CREATE INDEX athlete_org_name ON athlete(org_id, name);

CREATE TABLE app_user (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  email TEXT NOT NULL,
  display_name TEXT NOT NULL,
  role TEXT NOT NULL,
  linked_athlete_id TEXT REFERENCES athlete(id),
  active INTEGER NOT NULL DEFAULT 1,
  budget_cap_usd REAL,
  pin_hash TEXT
);
CREATE UNIQUE INDEX user_email ON app_user(lower(email));
CREATE INDEX user_org ON app_user(org_id);

CREATE TABLE injury (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT NOT NULL REFERENCES athlete(id),
  body_part TEXT NOT NULL,
  side TEXT NOT NULL,
  mechanism TEXT NOT NULL,
  onset_date TEXT NOT NULL,
  severity TEXT NOT NULL,
  status TEXT NOT NULL,
  clinician_notes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX injury_org_athlete ON injury(org_id, athlete_id);

CREATE TABLE screening (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT NOT NULL REFERENCES athlete(id),
  test TEXT NOT NULL,
  side TEXT NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  date TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX screening_org_athlete ON screening(org_id, athlete_id, date);

CREATE TABLE rtp_entry (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  injury_id TEXT NOT NULL REFERENCES injury(id),
  athlete_id TEXT NOT NULL REFERENCES athlete(id),
  stage TEXT NOT NULL,
  criteria_met TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  physio_signoff_by TEXT REFERENCES app_user(id),
  physio_signoff_at TEXT,
  doctor_signoff_by TEXT REFERENCES app_user(id),
  doctor_signoff_at TEXT,
  coach_signoff_by TEXT REFERENCES app_user(id),
  coach_signoff_at TEXT
);
CREATE INDEX rtp_org_injury ON rtp_entry(org_id, injury_id);

CREATE TABLE wellness (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT NOT NULL REFERENCES athlete(id),
  date TEXT NOT NULL,
  sleep INTEGER NOT NULL,
  soreness INTEGER NOT NULL,
  stress INTEGER NOT NULL,
  mood INTEGER NOT NULL,
  fatigue INTEGER NOT NULL,
  notes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX wellness_org_athlete_date ON wellness(org_id, athlete_id, date);

CREATE TABLE vitals (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT NOT NULL REFERENCES athlete(id),
  date TEXT NOT NULL,
  resting_hr_bpm INTEGER NOT NULL,
  hrv_rmssd_ms REAL NOT NULL
);
CREATE INDEX vitals_org_athlete_date ON vitals(org_id, athlete_id, date);

CREATE TABLE training_session (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  squad_id TEXT REFERENCES squad(id),
  date TEXT NOT NULL,
  kind TEXT NOT NULL,
  duration_min INTEGER NOT NULL,
  notes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX training_session_org_date ON training_session(org_id, date);

CREATE TABLE session_load (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT NOT NULL REFERENCES athlete(id),
  training_session_id TEXT REFERENCES training_session(id),
  date TEXT NOT NULL,
  duration_min INTEGER NOT NULL,
  rpe REAL NOT NULL,
  load_au REAL NOT NULL
);
CREATE INDEX session_load_org_athlete_date ON session_load(org_id, athlete_id, date);
CREATE INDEX session_load_org_date ON session_load(org_id, date);

CREATE TABLE rig (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  name TEXT NOT NULL,
  declared_layout TEXT NOT NULL DEFAULT '[]',
  drift_tolerance_deg REAL NOT NULL DEFAULT 5,
  drift_tolerance_m REAL NOT NULL DEFAULT 0.1
);

CREATE TABLE camera (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  rig_id TEXT NOT NULL REFERENCES rig(id),
  name TEXT NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  calibration TEXT NOT NULL,
  reprojection_rms_px REAL,
  calibrated_at TEXT
);
CREATE INDEX camera_rig ON camera(org_id, rig_id);

CREATE TABLE capture_session (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT NOT NULL REFERENCES athlete(id),
  rig_id TEXT REFERENCES rig(id),
  recorded_at TEXT NOT NULL,
  trial_name TEXT NOT NULL DEFAULT '',
  fps REAL NOT NULL,
  frame_count INTEGER NOT NULL,
  camera_count INTEGER NOT NULL,
  source TEXT NOT NULL,
  trc_path TEXT,
  status TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX capture_session_org_athlete ON capture_session(org_id, athlete_id);

CREATE TABLE pose_metric (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT NOT NULL REFERENCES athlete(id),
  capture_session_id TEXT NOT NULL REFERENCES capture_session(id),
  joint TEXT NOT NULL,
  side TEXT NOT NULL,
  statistic TEXT NOT NULL,
  value_deg REAL,
  omitted_reason TEXT,
  camera_count INTEGER NOT NULL,
  camera_mode TEXT NOT NULL,
  view_obliquity_deg REAL,
  obliquity_band TEXT NOT NULL,
  view_matches_declared INTEGER NOT NULL,
  coverage REAL NOT NULL,
  trustworthy INTEGER NOT NULL,
  sagittal_ratio REAL,
  frames INTEGER NOT NULL
);
CREATE INDEX pose_metric_org_athlete ON pose_metric(org_id, athlete_id, capture_session_id);

CREATE TABLE video (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT REFERENCES athlete(id),
  capture_session_id TEXT REFERENCES capture_session(id),
  file_path TEXT NOT NULL,
  duration_s REAL NOT NULL,
  size_bytes INTEGER NOT NULL
);

CREATE TABLE device (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  athlete_id TEXT REFERENCES athlete(id),
  api_key_hash TEXT,
  api_key_last4 TEXT,
  key_rotated_at TEXT
);

CREATE TABLE report (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  athlete_id TEXT REFERENCES athlete(id),
  squad_id TEXT REFERENCES squad(id),
  kind TEXT NOT NULL,
  title TEXT NOT NULL,
  markdown TEXT NOT NULL,
  pdf_path TEXT,
  generated_by TEXT NOT NULL REFERENCES app_user(id)
);

CREATE TABLE rate_folder (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  name TEXT NOT NULL
);

CREATE TABLE rate_item (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  folder_id TEXT NOT NULL REFERENCES rate_folder(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  item_type TEXT NOT NULL,
  price_cents INTEGER NOT NULL CHECK (price_cents > 0)
);
CREATE INDEX rate_item_folder ON rate_item(org_id, folder_id);

CREATE TABLE help_page (
  id TEXT PRIMARY KEY,
  slug TEXT NOT NULL,
  version TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  UNIQUE (slug, version)
);

CREATE TABLE changeset (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  verb TEXT NOT NULL,
  summary TEXT NOT NULL,
  changes_json TEXT NOT NULL,
  inverse_json TEXT,
  content_hash TEXT NOT NULL,
  idempotency_key TEXT,
  status TEXT NOT NULL,
  run_id TEXT,
  via_assistant INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  applied_at TEXT,
  undo_of TEXT REFERENCES changeset(id),
  undone_by TEXT REFERENCES changeset(id),
  result_json TEXT
);
CREATE UNIQUE INDEX changeset_idem ON changeset(org_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX changeset_org_created ON changeset(org_id, created_at);

CREATE TABLE activity (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  actor_user_id TEXT NOT NULL REFERENCES app_user(id),
  actor_name TEXT NOT NULL,
  via_assistant INTEGER NOT NULL DEFAULT 0,
  run_id TEXT,
  record_table TEXT NOT NULL,
  record_id TEXT NOT NULL,
  summary TEXT NOT NULL,
  changeset_id TEXT REFERENCES changeset(id)
);
CREATE INDEX activity_org_created ON activity(org_id, created_at);

CREATE TABLE outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  changeset_id TEXT NOT NULL REFERENCES changeset(id),
  org_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT
);

CREATE TABLE org_setting (
  org_id TEXT NOT NULL REFERENCES organization(id),
  key TEXT NOT NULL,
  value_json TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (org_id, key)
);
`;
