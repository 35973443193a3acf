/**
 * When a changeset uploaded under one user's device token, but naming another user as its author,
 * needs that author's own attestation (shared/design/sync.md "HQ trusts nothing the device says").
 *
 * A shared clinic laptop uploads everyone's changes under the one token it was enrolled with, so
 * `user_id` may name another active user of the club. That name is a claim: whoever holds the
 * token could write it. HQ therefore applies such a changeset without the author's own
 * attestation (POST /v1/approvals under the author's own HQ device token, sync/write/approvals.ts)
 * only when the token's own user could have made every part of it themselves:
 * - the verb's gating permission (models/verbs.ts) is one the token user's role holds;
 * - no change manages users, devices or settings (tables written with {@link MANAGEMENT_PERMISSIONS}):
 *   those always need the author's own act, whatever the token user may do;
 * - every row change passes the same rules (models/changeset.ts `authorizeChange`) for the token's
 *   user as for the author.
 * So a physio-enrolled laptop uploads a doctor's ordinary clinical writes that a physio could also
 * make, but a doctor-only verb, any account/device/settings change, or anything the token user's
 * role could not do is rejected `author_unverified` until the author attests it.
 * Runtime-agnostic (used by HQ and by the device, which attests when this says it is needed).
 */
import type { RowChange, RuleActor, StoredRowFacts } from './changeset';
import { authorizeChange } from './changeset';
import { hasPermission, type Permission } from './roles';
import { isTableName, TABLES } from './tables';
import { VERB_SPECS } from './verbs';

/** Permissions whose writes (accounts, devices, club settings, the installation) always need the author's own act. */
export const MANAGEMENT_PERMISSIONS: ReadonlySet<Permission> = new Set<Permission>(['user.manage', 'device.manage', 'settings.manage', 'system.admin']);

/**
 * Why `uploader` (the token's user, as HQ holds them now) could not have made changeset
 * `{verb, changes}` themselves, or null when they could (then the author's attestation is not
 * needed). `facts(change)`: the stored row a change targets (null for an insert or a missing row),
 * as `authorizeChange` takes it. Unknown verbs are judged by their row changes only.
 */
export function uploaderCannotVouch(
  uploader: RuleActor,
  verb: string,
  changes: readonly RowChange[],
  facts: (change: RowChange) => StoredRowFacts | null,
): string | null {
  const spec = (VERB_SPECS as Record<string, { permission: Permission } | undefined>)[verb];
  if (spec) {
    if (MANAGEMENT_PERMISSIONS.has(spec.permission)) return `${verb} manages accounts, devices or settings (${spec.permission}).`;
    if (!hasPermission(uploader.role, spec.permission))
      return `${verb} needs ${spec.permission}, which the signed-in device user's role (${uploader.role}) lacks.`;
  }
  for (const ch of changes) {
    if (!isTableName(ch.table)) return `it changes an unknown table (${String(ch.table)}).`;
    const write = TABLES[ch.table].write;
    if (MANAGEMENT_PERMISSIONS.has(write)) return `it changes ${ch.table} (${write}).`;
    const d = authorizeChange(uploader, ch, facts(ch));
    if (!d.ok) return `the signed-in device user could not make it: ${d.reason}`;
  }
  return null;
}
