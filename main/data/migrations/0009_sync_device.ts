/**
 * 0009: device sync state (issue 12; shared/design/sync.md). All of it is local to this device and
 * never synced or uploaded:
 * - `sync_enrolment`: the one HQ this file is a replica of (URL, device id, org, user) with the
 *   device token sealed like the provider key (AES-256-GCM under the machine key), last successful
 *   sync and last error.
 * - `sync_shape`: per synced table, the Electric shape handle and offset applied so far (written in
 *   the same transaction as the rows), whether the next batch starts from scratch (`needs_reset`),
 *   and when it was last up to date; `forbidden` when HQ refuses the table to this role.
 * - `sync_upload`: per outbox changeset, what HQ said: `applied` (with its txid and row versions),
 *   `synced` (the shape stream delivered that txid), `rejected` (reason, message, HQ's current rows)
 *   or `discarded` by the user. No row: still pending.
 * - `sync_server_row`: the server's last known row (SQLite encoding; NULL: HQ has no such row) for
 *   every row a not-yet-synced local changeset touched, so the optimistic local row can be replaced
 *   by the server's truth once its changeset is synced, rejected or discarded (never before: no
 *   flicker back). `sync_optimistic` links those rows to the changesets holding them.
 * - `sync_seen_txid`: which HQ transaction ids each table's shape has delivered (pruned).
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
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
);
CREATE INDEX sync_upload_state ON sync_upload(state);

CREATE TABLE sync_server_row (
  tbl TEXT NOT NULL,
  id TEXT NOT NULL,
  row_json TEXT,
  PRIMARY KEY (tbl, id)
) WITHOUT ROWID;

CREATE TABLE sync_optimistic (
  changeset_id TEXT NOT NULL,
  tbl TEXT NOT NULL,
  id TEXT NOT NULL,
  PRIMARY KEY (changeset_id, tbl, id)
) WITHOUT ROWID;
CREATE INDEX sync_optimistic_row ON sync_optimistic(tbl, id);

CREATE TABLE sync_seen_txid (
  txid TEXT NOT NULL,
  tbl TEXT NOT NULL,
  seen_at TEXT NOT NULL,
  PRIMARY KEY (txid, tbl)
) WITHOUT ROWID;
`;
