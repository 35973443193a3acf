/**
 * 0012: personal HQ sign-ins on a shared device (issue 12; shared/design/sync.md). A device is
 * enrolled by one user (`sync_enrolment`); another user of the club, typically an owner who
 * approves changes on a shared clinic laptop, can sign in to HQ on it as themselves (email + PIN,
 * checked by HQ while online). Their own device token is kept here, sealed like the enrolment's
 * (AES-256-GCM under the machine key), and is used only to record *their* approvals at HQ
 * (POST /v1/approvals), so HQ can verify an owner approval made on this device, even offline.
 * Local to this device; never synced or uploaded. Forward-only: never edit once shipped.
 */
export const sql = `
CREATE TABLE sync_user_token (
  user_id TEXT PRIMARY KEY,
  hq_device_id TEXT NOT NULL,
  token_sealed TEXT NOT NULL,
  token_hint TEXT NOT NULL,
  token_expires_at TEXT,
  signed_in_at TEXT NOT NULL
);
`;
