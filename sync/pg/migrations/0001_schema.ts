/**
 * HQ 0001: the synced business tables, column for column as the device's SQLite schema
 * (main/data/migrations/0001_core.ts; `sync/pg/schema.test.ts` compares the two), plus the HQ's
 * own tables (device tokens, the changeset log) and the activity log.
 *
 * Types: ids are `uuid` and must be UUID v7 (version nibble checked); calendar dates are `date`
 * (text form `YYYY-MM-DD`, as on the device); instants are `timestamptz`; 0/1 flags are `boolean`;
 * SQLite REAL is `double precision`. `version` counts writes (optimistic concurrency), as on the
 * device. Foreign keys are DEFERRABLE INITIALLY DEFERRED so one changeset may insert a row and a
 * row that points at it in any order.
 *
 * Runs as the owner role (`hq_owner`), which the admin step (sync/pg/admin.ts) created; this
 * migration creates no role and no extension. Forward-only: never edit once shipped.
 */
export const sql = `
CREATE TABLE organization (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  name text NOT NULL,
  plan text NOT NULL,
  budget_cap_usd double precision,
  assistant_model text NOT NULL
);

CREATE TABLE squad (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  name text NOT NULL,
  season text NOT NULL
);

CREATE TABLE athlete (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  name text NOT NULL,
  date_of_birth date NOT NULL,
  sex text NOT NULL,
  position text,
  squad_id uuid REFERENCES squad(id) DEFERRABLE INITIALLY DEFERRED,
  dominant_side text NOT NULL,
  status text NOT NULL DEFAULT 'active',
  notes text NOT NULL DEFAULT ''
);

CREATE TABLE app_user (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  email text NOT NULL,
  display_name text NOT NULL,
  role text NOT NULL,
  linked_athlete_id uuid REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  active boolean NOT NULL DEFAULT true,
  budget_cap_usd double precision,
  pin_hash text
);

CREATE TABLE injury (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid NOT NULL REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  body_part text NOT NULL,
  side text NOT NULL,
  mechanism text NOT NULL,
  onset_date date NOT NULL,
  severity text NOT NULL,
  status text NOT NULL,
  clinician_notes text NOT NULL DEFAULT ''
);

CREATE TABLE screening (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid NOT NULL REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  test text NOT NULL,
  side text NOT NULL,
  value double precision NOT NULL,
  unit text NOT NULL,
  date date NOT NULL,
  notes text NOT NULL DEFAULT ''
);

CREATE TABLE rtp_entry (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  injury_id uuid NOT NULL REFERENCES injury(id) DEFERRABLE INITIALLY DEFERRED,
  athlete_id uuid NOT NULL REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  stage text NOT NULL,
  criteria_met text NOT NULL DEFAULT '',
  notes text NOT NULL DEFAULT '',
  physio_signoff_by uuid REFERENCES app_user(id) DEFERRABLE INITIALLY DEFERRED,
  physio_signoff_at timestamptz,
  doctor_signoff_by uuid REFERENCES app_user(id) DEFERRABLE INITIALLY DEFERRED,
  doctor_signoff_at timestamptz,
  coach_signoff_by uuid REFERENCES app_user(id) DEFERRABLE INITIALLY DEFERRED,
  coach_signoff_at timestamptz
);

CREATE TABLE wellness (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid NOT NULL REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  date date NOT NULL,
  sleep integer NOT NULL,
  soreness integer NOT NULL,
  stress integer NOT NULL,
  mood integer NOT NULL,
  fatigue integer NOT NULL,
  notes text NOT NULL DEFAULT ''
);

CREATE TABLE vitals (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid NOT NULL REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  date date NOT NULL,
  resting_hr_bpm integer NOT NULL,
  hrv_rmssd_ms double precision NOT NULL
);

CREATE TABLE training_session (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  squad_id uuid REFERENCES squad(id) DEFERRABLE INITIALLY DEFERRED,
  date date NOT NULL,
  kind text NOT NULL,
  duration_min integer NOT NULL,
  notes text NOT NULL DEFAULT ''
);

CREATE TABLE session_load (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid NOT NULL REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  training_session_id uuid REFERENCES training_session(id) DEFERRABLE INITIALLY DEFERRED,
  date date NOT NULL,
  duration_min integer NOT NULL,
  rpe double precision NOT NULL,
  load_au double precision NOT NULL
);

CREATE TABLE rig (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  name text NOT NULL,
  declared_layout text NOT NULL DEFAULT '[]',
  drift_tolerance_deg double precision NOT NULL DEFAULT 5,
  drift_tolerance_m double precision NOT NULL DEFAULT 0.1
);

CREATE TABLE camera (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  rig_id uuid NOT NULL REFERENCES rig(id) DEFERRABLE INITIALLY DEFERRED,
  name text NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  calibration text NOT NULL,
  reprojection_rms_px double precision,
  calibrated_at timestamptz
);

CREATE TABLE capture_session (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid NOT NULL REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  rig_id uuid REFERENCES rig(id) DEFERRABLE INITIALLY DEFERRED,
  recorded_at timestamptz NOT NULL,
  trial_name text NOT NULL DEFAULT '',
  fps double precision NOT NULL,
  frame_count integer NOT NULL,
  camera_count integer NOT NULL,
  source text NOT NULL,
  trc_path text,
  status text NOT NULL,
  notes text NOT NULL DEFAULT ''
);

CREATE TABLE pose_metric (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid NOT NULL REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  capture_session_id uuid NOT NULL REFERENCES capture_session(id) DEFERRABLE INITIALLY DEFERRED,
  joint text NOT NULL,
  side text NOT NULL,
  statistic text NOT NULL,
  value_deg double precision,
  omitted_reason text,
  camera_count integer NOT NULL,
  camera_mode text NOT NULL,
  view_obliquity_deg double precision,
  obliquity_band text NOT NULL,
  view_matches_declared boolean NOT NULL,
  coverage double precision NOT NULL,
  trustworthy boolean NOT NULL,
  sagittal_ratio double precision,
  frames integer NOT NULL
);

CREATE TABLE video (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  capture_session_id uuid REFERENCES capture_session(id) DEFERRABLE INITIALLY DEFERRED,
  file_path text NOT NULL,
  duration_s double precision NOT NULL,
  size_bytes bigint NOT NULL
);

CREATE TABLE device (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  name text NOT NULL,
  kind text NOT NULL,
  athlete_id uuid REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  api_key_hash text,
  api_key_last4 text,
  key_rotated_at timestamptz
);

CREATE TABLE report (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  athlete_id uuid REFERENCES athlete(id) DEFERRABLE INITIALLY DEFERRED,
  squad_id uuid REFERENCES squad(id) DEFERRABLE INITIALLY DEFERRED,
  kind text NOT NULL,
  title text NOT NULL,
  markdown text NOT NULL,
  pdf_path text,
  generated_by uuid NOT NULL REFERENCES app_user(id) DEFERRABLE INITIALLY DEFERRED
);

CREATE TABLE rate_folder (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  name text NOT NULL
);

CREATE TABLE rate_item (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at timestamptz,
  folder_id uuid NOT NULL REFERENCES rate_folder(id) DEFERRABLE INITIALLY DEFERRED,
  code text NOT NULL,
  name text NOT NULL,
  item_type text NOT NULL,
  price_cents integer NOT NULL CHECK (price_cents > 0)
);

CREATE INDEX squad_org ON squad(org_id);
CREATE INDEX athlete_org_squad ON athlete(org_id, squad_id, name);
CREATE INDEX athlete_org_name ON athlete(org_id, name);
CREATE UNIQUE INDEX user_email ON app_user(lower(email));
CREATE INDEX user_org ON app_user(org_id);
CREATE INDEX injury_org_athlete ON injury(org_id, athlete_id);
CREATE INDEX screening_org_athlete ON screening(org_id, athlete_id, date);
CREATE INDEX rtp_org_injury ON rtp_entry(org_id, injury_id);
CREATE INDEX rtp_org_athlete ON rtp_entry(org_id, athlete_id);
CREATE INDEX wellness_org_athlete_date ON wellness(org_id, athlete_id, date);
CREATE INDEX vitals_org_athlete_date ON vitals(org_id, athlete_id, date);
CREATE INDEX training_session_org_date ON training_session(org_id, date);
CREATE INDEX session_load_org_athlete_date ON session_load(org_id, athlete_id, date);
CREATE INDEX session_load_org_date ON session_load(org_id, date);
CREATE INDEX rig_org ON rig(org_id);
CREATE INDEX camera_rig ON camera(org_id, rig_id);
CREATE INDEX capture_session_org_athlete ON capture_session(org_id, athlete_id);
CREATE INDEX pose_metric_org_athlete ON pose_metric(org_id, athlete_id, capture_session_id);
CREATE INDEX video_org_athlete ON video(org_id, athlete_id);
CREATE INDEX device_org ON device(org_id);
CREATE INDEX report_org_athlete ON report(org_id, athlete_id);
CREATE INDEX rate_folder_org ON rate_folder(org_id);
CREATE INDEX rate_item_folder ON rate_item(org_id, folder_id);

-- Device tokens issued by POST /v1/devices: only the SHA-256 of the token is stored.
CREATE TABLE hq_device (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  user_id uuid NOT NULL REFERENCES app_user(id),
  name text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  token_hint text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  revoked_by uuid REFERENCES app_user(id),
  last_used_at timestamptz
);
CREATE INDEX hq_device_org_user ON hq_device(org_id, user_id);

-- Every uploaded changeset and its first outcome (idempotency by client changeset id).
CREATE TABLE hq_changeset (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organization(id),
  user_id uuid NOT NULL REFERENCES app_user(id),
  device_id uuid REFERENCES hq_device(id),
  verb text NOT NULL,
  summary text NOT NULL,
  content_hash text NOT NULL,
  status text NOT NULL CHECK (status IN ('applied', 'rejected')),
  txid text,
  changes jsonb NOT NULL,
  outcome jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX hq_changeset_org_received ON hq_changeset(org_id, received_at);

-- Who changed what (the same row the device writes for a local change).
CREATE TABLE activity (
  id uuid PRIMARY KEY CHECK (substr(id::text, 15, 1) = '7'),
  org_id uuid NOT NULL REFERENCES organization(id),
  created_at timestamptz NOT NULL,
  actor_user_id uuid NOT NULL REFERENCES app_user(id),
  actor_name text NOT NULL,
  via_assistant boolean NOT NULL DEFAULT false,
  run_id text,
  record_table text NOT NULL,
  record_id text NOT NULL,
  summary text NOT NULL,
  changeset_id uuid REFERENCES hq_changeset(id) DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX activity_org_created ON activity(org_id, created_at);

-- One row once the installation is initialised (first start): whether the demo club was seeded.
-- Owner-only set-up state, not business data: no tenant, no grant to the app role.
CREATE TABLE hq_installation (
  id integer PRIMARY KEY CHECK (id = 1),
  initialised_at timestamptz NOT NULL,
  demo_seed integer,
  demo_today date
);
`;
