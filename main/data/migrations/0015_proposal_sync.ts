/**
 * 0015: changes waiting for an owner travel between devices (issue 12; HQ migration 0010).
 * - `hq_proposal`: the replica of HQ's table of the same name (the `hq_proposal` shape), column
 *   for column: every *needs owner* proposal of the org that HQ recorded, with who proposed it, when,
 *   from which device, the diff, and HQ's outcome (waiting, applied, declined, failed). The sync
 *   engine copies each into this device's own proposal tables (`changeset` + `changeset_proposal`),
 *   so the Approvals page and the approval path are the same for a proposal made here or elsewhere.
 * - `changeset_proposal.origin_device_id` / `origin_device_name`: the device a proposal came from
 *   (null: made on this device).
 * - `sync_proposal_event`: this device's proposal events not yet reported to HQ (a *needs owner*
 *   proposal made here, a decline made here), written in the same transaction as the proposal or
 *   the decision, and sent in order (POST /v1/proposals).
 * Forward-only: never edit once shipped.
 */
export const sql = `
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
ALTER TABLE changeset_proposal ADD COLUMN origin_device_id TEXT;
ALTER TABLE changeset_proposal ADD COLUMN origin_device_name TEXT;
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
CREATE INDEX sync_proposal_event_pending ON sync_proposal_event(status, seq);
`;
