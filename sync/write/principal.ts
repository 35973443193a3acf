/** Who a request acts for: the device token's user and org, re-read from Postgres on every request. */
export interface Principal {
  deviceId: string;
  deviceName: string;
  orgId: string;
  userId: string;
  displayName: string;
  role: string;
  linkedAthleteId: string | null;
  active: boolean;
  /** When this device token was issued (`hq_device.created_at`, ISO-8601): bounds the device's own clock claims (sync/write/apply.ts `recordedAt`). */
  enrolledAt: string;
}
