/**
 * Owner approvals HQ can verify (HQ migration 0005, shared/design/sync.md "HQ trusts nothing the
 * device says"). A changeset the policy marks *needs owner* names its approver (`approved_by`, or
 * its author when that author is an owner); HQ accepts that claim only with proof the owner acted:
 *
 * 1. the upload came with the approver's own device token (the owner approved on their own
 *    device, or made the change there themselves), or
 * 2. the approver's own device token recorded an approval of this changeset id with this content
 *    hash first (`POST /v1/approvals`, {@link recordApprovals}): the owner approved on a device
 *    where they are signed in to HQ (their own, or a shared one they signed in to HQ on), possibly
 *    a different device from the one that uploads the changeset, possibly offline at the time.
 *
 * A device token is issued only for the user's email + PIN checked at HQ (rate-limited, locked
 * after wrong PINs), so a device that merely holds an owner's PIN hash cannot produce either.
 */
import type pg from 'pg';
import { Conflict, Forbidden } from '../../models/errors';
import type { UploadedApproval } from '../../models/sync';
import { NEEDS_OWNER_APPROVER } from '../../models/roles';
import { withTenant } from '../pg/db';
import type { Principal } from './principal';

/**
 * Record the approvals `principal` (the token's user, who must be an active owner) made on its
 * device. Idempotent: the same approval again answers `already_recorded`. All or nothing.
 * `approved_at` is the device's time of approval, never later than `now`.
 * @throws Forbidden (the token's user is not an owner), Conflict (this owner already approved
 *   that changeset id for other content; nothing of the request is recorded)
 */
export async function recordApprovals(
  pool: pg.Pool,
  principal: Principal,
  approvals: readonly UploadedApproval[],
  now: Date,
): Promise<{ changeset_id: string; status: 'recorded' | 'already_recorded' }[]> {
  if (principal.role !== NEEDS_OWNER_APPROVER || !principal.active)
    throw new Forbidden(`Only an ${NEEDS_OWNER_APPROVER}'s own device can record an approval; this device is signed in to HQ as a ${principal.role}.`);
  return withTenant(pool, { orgId: principal.orgId, userId: principal.userId }, async (c) => {
    const out: { changeset_id: string; status: 'recorded' | 'already_recorded' }[] = [];
    for (const a of approvals) {
      const t = a.approved_at ? Date.parse(a.approved_at) : Number.NaN;
      const at = Number.isNaN(t) || t > now.getTime() ? now.toISOString() : new Date(t).toISOString();
      const ins = await c.query(
        `INSERT INTO hq_approval (changeset_id, approver_id, org_id, content_hash, device_id, approved_at, received_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (changeset_id, approver_id) DO NOTHING`,
        [a.changeset_id, principal.userId, principal.orgId, a.content_hash, principal.deviceId, at, now.toISOString()],
      );
      if (ins.rowCount === 1) {
        out.push({ changeset_id: a.changeset_id, status: 'recorded' });
        continue;
      }
      const prior = (
        await c.query<{ content_hash: string }>('SELECT content_hash FROM hq_approval WHERE changeset_id = $1 AND approver_id = $2', [
          a.changeset_id,
          principal.userId,
        ])
      ).rows[0];
      if (prior?.content_hash !== a.content_hash)
        throw new Conflict(
          `You already approved change ${a.changeset_id} with other content; an approval is bound to the content it was given for. Nothing of this request was recorded.`,
        );
      out.push({ changeset_id: a.changeset_id, status: 'already_recorded' });
    }
    return out;
  });
}

/** Why an owner approval is or is not proven (see {@link verifyOwnerApproval}). */
export type ApprovalCheck =
  | { ok: true; approverId: string; proof: 'token' | 'record' }
  /** `policy`: no approver named, or the one named is not an active owner. `approval_unverified`: an owner is named, without proof. */
  | { ok: false; reason: 'policy' | 'approval_unverified'; message: string };

/**
 * Is there proof that owner `approverId` approved changeset `changesetId` with content hash
 * `contentHash`? Runs in the caller's tenant transaction `c` (row-level security: this org).
 * Proof: `principal` (the uploading token's user) is the approver, or the approver's own device
 * recorded an approval of that id and hash ({@link recordApprovals}).
 */
export async function verifyOwnerApproval(
  c: pg.PoolClient,
  principal: Principal,
  approverId: string | null,
  changesetId: string,
  contentHash: string,
): Promise<ApprovalCheck> {
  if (!approverId) return { ok: false, reason: 'policy', message: 'This upload carries no approval by an active owner of the club.' };
  const approver = (await c.query<{ role: string; active: boolean }>('SELECT role, active FROM app_user WHERE id = $1 AND deleted_at IS NULL', [approverId]))
    .rows[0];
  if (!approver || approver.role !== NEEDS_OWNER_APPROVER || !approver.active)
    return { ok: false, reason: 'policy', message: 'This upload carries no approval by an active owner of the club.' };
  if (principal.userId === approverId) return { ok: true, approverId, proof: 'token' };
  const rec = (
    await c.query<{ content_hash: string }>('SELECT content_hash FROM hq_approval WHERE changeset_id = $1 AND approver_id = $2', [changesetId, approverId])
  ).rows[0];
  if (rec && rec.content_hash === contentHash) return { ok: true, approverId, proof: 'record' };
  return {
    ok: false,
    reason: 'approval_unverified',
    message: rec
      ? "The owner's recorded approval is for different content than this change; nothing was written. Re-plan it and have the owner approve it again."
      : `HQ cannot verify the owner's approval this change names: it was not uploaded from the owner's own device, and no approval of it was recorded by a device signed in to HQ as that owner. Nothing was written. Re-plan it and have the owner approve it on a device signed in to HQ as themselves (Settings → Sync).`,
  };
}
