/**
 * 0002: the Kinetix assistant's tables (shared/design/kinetix.md §2–8).
 * - kinetix_conversation: one user in one org; another user's conversation is "not found".
 * - kinetix_message: replayable user/assistant text (tool rounds are never replayed).
 * - kinetix_run: one turn; carries the tool snapshot and the copy of the user it runs as.
 * - kinetix_tool_call: the audit row of every tool call, written before it runs (args masked).
 * - kinetix_run_event: every AG-UI event of a run with its sequence number (replay source).
 * - kinetix_usage: one row per model response, UNIQUE(run_id, request_index).
 * - kinetix_run_trace: request, model steps, tool calls, decisions, approver, writes.
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
CREATE TABLE kinetix_conversation (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organization(id),
  user_id TEXT NOT NULL REFERENCES app_user(id),
  title TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX kinetix_conversation_user ON kinetix_conversation(org_id, user_id, updated_at);

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
);
CREATE INDEX kinetix_run_conversation ON kinetix_run(conversation_id, started_at);
CREATE INDEX kinetix_run_status ON kinetix_run(status);

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
CREATE INDEX kinetix_message_conversation ON kinetix_message(conversation_id, seq);

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
CREATE INDEX kinetix_tool_call_run ON kinetix_tool_call(run_id, created_at);
CREATE INDEX kinetix_tool_call_conversation ON kinetix_tool_call(conversation_id, status, created_at);

CREATE TABLE kinetix_run_event (
  run_id TEXT NOT NULL REFERENCES kinetix_run(id),
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  event_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

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
CREATE INDEX kinetix_usage_org_created ON kinetix_usage(org_id, created_at);
CREATE INDEX kinetix_usage_user_created ON kinetix_usage(user_id, created_at);

CREATE TABLE kinetix_run_trace (
  run_id TEXT NOT NULL REFERENCES kinetix_run(id),
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  data_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
`;
