/**
 * 0007: Kinetix run leases and run starts (issue 9 §1). The app, `npm run cli -- ask` and the MCP
 * server share one SQLite file, so the per-user concurrent-run cap and the per-org / per-user
 * rate limits live here, not in one process's memory. A lease names its owning host and process
 * id and carries a heartbeat; a lease whose process is gone (same host, pid not alive) or whose
 * heartbeat is stale is reclaimed by the next start. Local state only: never synced.
 * Times are epoch milliseconds (compared arithmetically inside the write lock).
 * Forward-only: never edit once shipped; add a new numbered migration.
 */
export const sql = `
CREATE TABLE kinetix_run_lease (
  run_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  acquired_at_ms INTEGER NOT NULL,
  heartbeat_at_ms INTEGER NOT NULL
);
CREATE INDEX kinetix_run_lease_user ON kinetix_run_lease(user_id);
CREATE TABLE kinetix_run_start (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  started_at_ms INTEGER NOT NULL
);
CREATE INDEX kinetix_run_start_org ON kinetix_run_start(org_id, started_at_ms);
CREATE INDEX kinetix_run_start_user ON kinetix_run_start(user_id, started_at_ms);
`;
