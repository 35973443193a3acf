-- The schema of a fresh database after every migration, written by main/data/db.test.ts.
-- A new migration changes it: run `npx vitest run main/data/db.test.ts -u` and review the diff.

-- index activity_org_created
CREATE INDEX activity_org_created ON activity(org_id, created_at);

-- index athlete_org_name
CREATE INDEX athlete_org_name ON athlete(org_id, name);

-- index athlete_org_squad
CREATE INDEX athlete_org_squad ON athlete(org_id, squad_id, name);

-- index camera_rig
CREATE INDEX camera_rig ON camera(org_id, rig_id);

-- index capture_session_org_athlete
CREATE INDEX capture_session_org_athlete ON capture_session(org_id, athlete_id);

-- index changeset_idem
CREATE UNIQUE INDEX changeset_idem ON changeset(org_id, user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- index changeset_org_created
CREATE INDEX changeset_org_created ON changeset(org_id, created_at);

-- index changeset_proposal_org_status
CREATE INDEX changeset_proposal_org_status ON changeset_proposal(org_id, status, created_at);

-- index changeset_proposal_user_status
CREATE INDEX changeset_proposal_user_status ON changeset_proposal(user_id, status, created_at);

-- index injury_org_athlete
CREATE INDEX injury_org_athlete ON injury(org_id, athlete_id);

-- index kinetix_conversation_user
CREATE INDEX kinetix_conversation_user ON kinetix_conversation(org_id, user_id, updated_at);

-- index kinetix_message_conversation
CREATE INDEX kinetix_message_conversation ON kinetix_message(conversation_id, seq);

-- index kinetix_run_conversation
CREATE INDEX kinetix_run_conversation ON kinetix_run(conversation_id, started_at);

-- index kinetix_run_lease_user
CREATE INDEX kinetix_run_lease_user ON kinetix_run_lease(user_id);

-- index kinetix_run_start_org
CREATE INDEX kinetix_run_start_org ON kinetix_run_start(org_id, started_at_ms);

-- index kinetix_run_start_user
CREATE INDEX kinetix_run_start_user ON kinetix_run_start(user_id, started_at_ms);

-- index kinetix_run_status
CREATE INDEX kinetix_run_status ON kinetix_run(status);

-- index kinetix_tool_call_conversation
CREATE INDEX kinetix_tool_call_conversation ON kinetix_tool_call(conversation_id, status, created_at);

-- index kinetix_tool_call_run
CREATE INDEX kinetix_tool_call_run ON kinetix_tool_call(run_id, created_at);

-- index kinetix_usage_org_created
CREATE INDEX kinetix_usage_org_created ON kinetix_usage(org_id, created_at);

-- index kinetix_usage_user_created
CREATE INDEX kinetix_usage_user_created ON kinetix_usage(user_id, created_at);

-- index mcp_token_hash
CREATE UNIQUE INDEX mcp_token_hash ON mcp_token(token_hash);

-- index mcp_token_user
CREATE INDEX mcp_token_user ON mcp_token(org_id, user_id);

-- index pose_metric_org_athlete
CREATE INDEX pose_metric_org_athlete ON pose_metric(org_id, athlete_id, capture_session_id);

-- index rate_item_folder
CREATE INDEX rate_item_folder ON rate_item(org_id, folder_id);

-- index rtp_org_injury
CREATE INDEX rtp_org_injury ON rtp_entry(org_id, injury_id);

-- index screening_org_athlete
CREATE INDEX screening_org_athlete ON screening(org_id, athlete_id, date);

-- index session_load_org_athlete_date
CREATE INDEX session_load_org_athlete_date ON session_load(org_id, athlete_id, date);

-- index session_load_org_date
CREATE INDEX session_load_org_date ON session_load(org_id, date);

-- index squad_org
CREATE INDEX squad_org ON squad(org_id);

-- index sync_optimistic_row
CREATE INDEX sync_optimistic_row ON sync_optimistic(tbl, id);

-- index sync_proposal_event_pending
CREATE INDEX sync_proposal_event_pending ON sync_proposal_event(status, seq);

-- index sync_upload_state
CREATE INDEX sync_upload_state ON sync_upload(state);

-- index training_session_org_date
CREATE INDEX training_session_org_date ON training_session(org_id, date);

-- index user_email
CREATE UNIQUE INDEX user_email ON app_user(lower(email));

-- index user_org
CREATE INDEX user_org ON app_user(org_id);

-- index vitals_org_athlete_date
CREATE INDEX vitals_org_athlete_date ON vitals(org_id, athlete_id, date);

-- index wellness_one_per_day
CREATE UNIQUE INDEX wellness_one_per_day ON wellness(org_id, athlete_id, date) WHERE deleted_at IS NULL;

-- index wellness_org_athlete_date
CREATE INDEX wellness_org_athlete_date ON wellness(org_id, athlete_id, date);

-- table activity
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

-- table app_user
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

-- table athlete
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
, deactivation_reason TEXT NOT NULL DEFAULT '');

-- table camera
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

-- table capture_session
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
, test TEXT NOT NULL DEFAULT '', angle_series TEXT NOT NULL DEFAULT '');

-- table changeset
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
, request_hash TEXT);

-- table changeset_proposal
CREATE TABLE "changeset_proposal" (
  id TEXT PRIMARY KEY REFERENCES changeset(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  source TEXT NOT NULL CHECK (source IN ('assistant', 'mcp', 'page')),
  run_id TEXT,
  tool_call_id TEXT,
  tool_name TEXT NOT NULL,
  title TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('proposed', 'needs_owner', 'applied', 'declined', 'failed')),
  verdict TEXT NOT NULL CHECK (verdict IN ('allow', 'needs_owner')),
  policy_json TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  decided_by TEXT REFERENCES app_user(id),
  decided_at TEXT,
  failure_json TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
, origin_device_id TEXT, origin_device_name TEXT);

-- table device
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

-- table help_index_state
CREATE TABLE help_index_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  content_hash TEXT NOT NULL,
  page_count INTEGER NOT NULL,
  passage_count INTEGER NOT NULL,
  indexed_at TEXT NOT NULL
);

-- table help_page
CREATE TABLE help_page (
  id TEXT PRIMARY KEY,
  slug TEXT NOT NULL,
  version TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  UNIQUE (slug, version)
);

-- table help_passage
CREATE VIRTUAL TABLE help_passage USING fts5(
  slug UNINDEXED,
  version UNINDEXED,
  anchor UNINDEXED,
  app_path UNINDEXED,
  title,
  heading,
  text,
  tokenize = 'porter unicode61 remove_diacritics 2'
);

-- table help_passage_config
CREATE TABLE 'help_passage_config'(k PRIMARY KEY, v) WITHOUT ROWID;

-- table help_passage_content
CREATE TABLE 'help_passage_content'(id INTEGER PRIMARY KEY, c0, c1, c2, c3, c4, c5, c6);

-- table help_passage_data
CREATE TABLE 'help_passage_data'(id INTEGER PRIMARY KEY, block BLOB);

-- table help_passage_docsize
CREATE TABLE 'help_passage_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

-- table help_passage_idx
CREATE TABLE 'help_passage_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

-- table hq_proposal
CREATE TABLE hq_proposal (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  device_id TEXT NOT NULL,
  device_name TEXT NOT NULL,
  source TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  title TEXT NOT NULL,
  verb TEXT NOT NULL,
  summary TEXT NOT NULL,
  changes_json TEXT NOT NULL,
  tables TEXT NOT NULL,
  policy_json TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  decided_by TEXT,
  decided_at TEXT,
  decided_device_name TEXT,
  outcome_json TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1
);

-- table injury
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

-- table kinetix_conversation
CREATE TABLE kinetix_conversation (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  title TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- table kinetix_message
CREATE TABLE kinetix_message (
  id TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES kinetix_conversation(id),
  run_id TEXT REFERENCES kinetix_run(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  content TEXT NOT NULL,
  created_at TEXT NOT NULL,
  seq INTEGER NOT NULL
);

-- table kinetix_run
CREATE TABLE kinetix_run (
  id TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES kinetix_conversation(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  status TEXT NOT NULL CHECK (status IN ('running', 'waiting_confirm', 'completed', 'failed', 'cancelled', 'interrupted')),
  model TEXT NOT NULL,
  page TEXT,
  host_pid INTEGER NOT NULL,
  user_snapshot_json TEXT NOT NULL,
  tools_json TEXT NOT NULL,
  request_text TEXT NOT NULL,
  iterations INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  error_code TEXT,
  error_message TEXT,
  started_at TEXT NOT NULL,
  finished_at TEXT
, cleared_for_json TEXT);

-- table kinetix_run_event
CREATE TABLE kinetix_run_event (
  run_id TEXT NOT NULL REFERENCES kinetix_run(id),
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  event_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- table kinetix_run_lease
CREATE TABLE kinetix_run_lease (
  run_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  acquired_at_ms INTEGER NOT NULL,
  heartbeat_at_ms INTEGER NOT NULL
);

-- table kinetix_run_start
CREATE TABLE kinetix_run_start (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  started_at_ms INTEGER NOT NULL
);

-- table kinetix_run_trace
CREATE TABLE kinetix_run_trace (
  run_id TEXT NOT NULL REFERENCES kinetix_run(id),
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  data_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- table kinetix_tool_call
CREATE TABLE kinetix_tool_call (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES kinetix_run(id),
  conversation_id TEXT NOT NULL REFERENCES kinetix_conversation(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  model_tool_use_id TEXT,
  iteration INTEGER NOT NULL,
  tool_name TEXT NOT NULL,
  title TEXT NOT NULL,
  risk TEXT,
  args_json TEXT NOT NULL,
  args_hash TEXT NOT NULL,
  requires_confirm INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('proposed', 'confirmed', 'executed', 'rejected', 'skipped', 'failed')),
  proposal_json TEXT,
  changeset_id TEXT,
  result_json TEXT,
  error_json TEXT,
  approver_user_id TEXT REFERENCES app_user(id),
  decided_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- table kinetix_usage
CREATE TABLE kinetix_usage (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES kinetix_run(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  request_index INTEGER NOT NULL,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  provider_response_id TEXT,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL,
  price_source TEXT NOT NULL,
  price_version TEXT NOT NULL,
  price_snapshot_json TEXT,
  partial INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  UNIQUE (run_id, request_index)
);

-- table mcp_token
CREATE TABLE mcp_token (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  label TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  token_hint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL REFERENCES app_user(id),
  expires_at TEXT,
  revoked_at TEXT,
  revoked_by TEXT REFERENCES app_user(id),
  last_used_at TEXT
, account_stamp TEXT);

-- table org_setting
CREATE TABLE org_setting (
  org_id TEXT NOT NULL REFERENCES organization(id),
  key TEXT NOT NULL,
  value_json TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (org_id, key)
);

-- table organization
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

-- table outbox
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

-- table pose_metric
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
, conditions TEXT NOT NULL DEFAULT '[]');

-- table rate_folder
CREATE TABLE rate_folder (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  name TEXT NOT NULL
);

-- table rate_item
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

-- table report
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

-- table rig
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

-- table rtp_entry
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

-- table schema_migrations
CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL, sha256 TEXT);

-- table screening
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

-- table session_load
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

-- table squad
CREATE TABLE squad (id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  deleted_at TEXT,
  name TEXT NOT NULL,
  season TEXT NOT NULL
);

-- table sync_enrolment
CREATE TABLE sync_enrolment (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  hq_url TEXT NOT NULL,
  device_id TEXT NOT NULL,
  device_name TEXT NOT NULL,
  org_id TEXT NOT NULL,
  org_name TEXT NOT NULL,
  user_id TEXT NOT NULL,
  user_email TEXT NOT NULL,
  user_role TEXT NOT NULL,
  token_sealed TEXT NOT NULL,
  token_hint TEXT NOT NULL,
  token_expires_at TEXT,
  enrolled_at TEXT NOT NULL,
  last_synced_at TEXT,
  last_error_code TEXT,
  last_error_message TEXT,
  last_error_at TEXT
);

-- table sync_optimistic
CREATE TABLE sync_optimistic (
  changeset_id TEXT NOT NULL,
  tbl TEXT NOT NULL,
  id TEXT NOT NULL, base_changeset_id TEXT,
  PRIMARY KEY (changeset_id, tbl, id)
) WITHOUT ROWID;

-- table sync_proposal_event
CREATE TABLE sync_proposal_event (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  proposal_id TEXT NOT NULL,
  op TEXT NOT NULL CHECK (op IN ('propose', 'decline')),
  user_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'recorded', 'refused')),
  code TEXT,
  message TEXT,
  UNIQUE (proposal_id, op)
);

-- table sync_seen_txid
CREATE TABLE sync_seen_txid (
  txid TEXT NOT NULL,
  tbl TEXT NOT NULL,
  seen_at TEXT NOT NULL,
  PRIMARY KEY (txid, tbl)
) WITHOUT ROWID;

-- table sync_server_row
CREATE TABLE sync_server_row (
  tbl TEXT NOT NULL,
  id TEXT NOT NULL,
  row_json TEXT,
  PRIMARY KEY (tbl, id)
) WITHOUT ROWID;

-- table sync_shape
CREATE TABLE sync_shape (
  tbl TEXT PRIMARY KEY,
  handle TEXT,
  shape_offset TEXT NOT NULL DEFAULT '-1',
  needs_reset INTEGER NOT NULL DEFAULT 1,
  forbidden INTEGER NOT NULL DEFAULT 0,
  rows_applied INTEGER NOT NULL DEFAULT 0,
  up_to_date_at TEXT,
  updated_at TEXT NOT NULL
);

-- table sync_upload
CREATE TABLE sync_upload (
  changeset_id TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('applied', 'synced', 'rejected', 'discarded')),
  txid TEXT,
  versions_json TEXT,
  hq_applied_at TEXT,
  reason TEXT,
  message TEXT,
  current_json TEXT,
  decided_at TEXT NOT NULL
, discarded_by TEXT, rejected_here INTEGER NOT NULL DEFAULT 0 CHECK (rejected_here IN (0, 1)));

-- table sync_user_token
CREATE TABLE sync_user_token (
  user_id TEXT PRIMARY KEY,
  hq_device_id TEXT NOT NULL,
  token_sealed TEXT NOT NULL,
  token_hint TEXT NOT NULL,
  token_expires_at TEXT,
  signed_in_at TEXT NOT NULL
);

-- table text_cleanup_kept
CREATE TABLE text_cleanup_kept (
  table_name TEXT NOT NULL,
  row_id TEXT NOT NULL,
  column_name TEXT NOT NULL,
  reason TEXT NOT NULL CHECK (reason IN ('blank', 'collision')),
  original TEXT NOT NULL,
  cleaned TEXT NOT NULL,
  PRIMARY KEY (table_name, row_id, column_name)
);

-- table training_session
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

-- table video
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

-- table vitals
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

-- table wellness
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

-- table wellness_duplicate_retired
CREATE TABLE wellness_duplicate_retired (
  retired_id TEXT PRIMARY KEY REFERENCES wellness(id),
  kept_id TEXT NOT NULL REFERENCES wellness(id),
  org_id TEXT NOT NULL REFERENCES organization(id),
  retired_at TEXT NOT NULL
);
