/**
 * The sign-in picker's scope: which organisations' people an installation lists on **Who are
 * you?** and lets sign in. A clinic laptop usually serves one club; a database can hold more (the
 * demo seeds two, HQ sync brings only the device's own). Configured with `ATHLETE_SIGNIN_ORGS`
 * (comma-separated organisation ids or names, case-insensitive); unset or empty: every
 * organisation in the database. Users of other organisations are neither listed nor accepted by
 * `session.signIn` (the same "PIN is not right" answer as an unknown user).
 */

/** Parse `ATHLETE_SIGNIN_ORGS`: comma-separated entries, trimmed; empty → null (no restriction). */
export function parseSignInOrgs(raw: string | undefined): string[] | null {
  const list = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length ? list : null;
}

/** A scope test built from the configured entries (null or empty: every organisation). */
export function signInScope(entries: readonly string[] | null): { includes(org: { id: string; name: string }): boolean; restricted: boolean } {
  if (!entries || entries.length === 0) return { includes: () => true, restricted: false };
  const wanted = new Set(entries.map((e) => e.trim().toLowerCase()));
  return { includes: (org) => wanted.has(org.id.toLowerCase()) || wanted.has(org.name.trim().toLowerCase()), restricted: true };
}
