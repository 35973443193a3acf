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
}
