/**
 * Approvals and sign-off attestations HQ can verify (HQ migration 0005, shared/design/sync.md "HQ
 * trusts nothing the device says"). A row of `hq_approval` says: user X, with their own HQ-issued
 * device token, vouched for changeset id C with content hash H. It counts in two ways:
 *
 * - **Owner approval.** A changeset the policy marks *needs owner* names its approver
 *   (`approved_by`, or its author when that author is an owner); HQ accepts that claim only with
 *   proof the owner acted ({@link verifyOwnerApproval}): the upload came with the approver's own
 *   device token, or the approver's own token recorded C + H first.
 * - **Author attestation.** A changeset that names as its author (`user_id`) someone other than
 *   the uploading token's user (a shared clinic laptop uploads everyone's changes under one token)
 *   and either sets or withdraws an RTP sign-off, or does something the token's own user could
 *   not do (models/authorship.ts: a verb or row change beyond their role, any account, device or
 *   settings change) is applied only when that author's own token recorded C + H first
 *   ({@link verifyAuthorAttestation}): otherwise anyone holding the shared token could sign off in
 *   a doctor's name, or promote themselves in an owner's.
 *
 * Either is recorded with `POST /v1/approvals` ({@link recordApprovals}) by a device where that
 * user is signed in to HQ (their own, or a shared one they signed in to HQ on), possibly offline
 * at the time of the act. A device token is issued only for the user's email + PIN checked at HQ
 * (rate-limited, locked after wrong PINs), so a device that merely holds a user's PIN hash cannot
 * produce one. A row by a non-owner never counts as an owner approval, and a row by X counts as an
 * attestation only for a changeset whose author is X.
 */
import type pg from 'pg';
import { Conflict, Forbidden } from '../../models/errors';
import type { ContentHashVersion, UploadedApproval } from '../../models/sync';
import { CONTENT_HASH_VERSION } from '../../models/sync';
import { NEEDS_OWNER_APPROVER, SELF_SCOPED_ROLES, type Role } from '../../models/roles';
import { withTenant } from '../pg/db';
import type { Principal } from './principal';

/**
 * Record the approvals and attestations `principal` (the token's user: an active staff account,
 * not an athlete's) made on its device: each vouches for one changeset id with one content hash.
 * Whether a row counts is decided when the changeset is uploaded ({@link verifyOwnerApproval},
 * {@link verifyAuthorAttestation}). Idempotent: the same one again answers `already_recorded`.
 * All or nothing. `approved_at` is the device's time of the act, never later than `now`.
 * @throws Forbidden (an athlete's or a deactivated account's token), Conflict (this user already
 *   vouched for that changeset id with other content; nothing of the request is recorded)
 */
export async function recordApprovals(
  pool: pg.Pool,
  principal: Principal,
  approvals: readonly UploadedApproval[],
  now: Date,
): Promise<{ changeset_id: string; status: 'recorded' | 'already_recorded' }[]> {
  if (SELF_SCOPED_ROLES.has(principal.role as Role) || !principal.active)
    throw new Forbidden(
      `Only the device token of an active staff account can record an approval or a sign-off attestation; this device is signed in to HQ as ${principal.active ? `an account with the role ${principal.role}` : 'a deactivated account'}.`,
    );
  return withTenant(pool, { orgId: principal.orgId, userId: principal.userId }, async (c) => {
    const out: { changeset_id: string; status: 'recorded' | 'already_recorded' }[] = [];
    for (const a of approvals) {
      const t = a.approved_at ? Date.parse(a.approved_at) : Number.NaN;
      const at = Number.isNaN(t) || t > now.getTime() ? now.toISOString() : new Date(t).toISOString();
      const ins = await c.query(
        `INSERT INTO hq_approval (changeset_id, approver_id, org_id, content_hash, hash_version, device_id, approved_at, received_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (changeset_id, approver_id) DO NOTHING`,
        [a.changeset_id, principal.userId, principal.orgId, a.content_hash, CONTENT_HASH_VERSION, principal.deviceId, at, now.toISOString()],
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
          `You already approved or attested change ${a.changeset_id} with other content; an approval is bound to the content it was given for. Nothing of this request was recorded.`,
        );
      out.push({ changeset_id: a.changeset_id, status: 'already_recorded' });
    }
    return out;
  });
}

/** The hash `userId` recorded for `changesetId` and its version (HQ 0008: version 1 rows were recorded before it), or undefined. */
async function recordedHash(
  c: pg.PoolClient,
  changesetId: string,
  userId: string,
): Promise<{ content_hash: string; hash_version: ContentHashVersion } | undefined> {
  return (
    await c.query<{ content_hash: string; hash_version: ContentHashVersion }>(
      'SELECT content_hash, hash_version FROM hq_approval WHERE changeset_id = $1 AND approver_id = $2',
      [changesetId, userId],
    )
  ).rows[0];
}

/** Why an owner approval is or is not proven (see {@link verifyOwnerApproval}). */
export type ApprovalCheck =
  | { ok: true; approverId: string; proof: 'token' | 'record' }
  /** `policy`: no approver named, or the one named is not an active owner. `approval_unverified`: an owner is named, without proof. */
  | { ok: false; reason: 'policy' | 'approval_unverified'; message: string };

/**
 * Is there proof that owner `approverId` approved changeset `changesetId` with content hash
 * `hashes`? Runs in the caller's tenant transaction `c` (row-level security: this org).
 * Proof: `principal` (the uploading token's user) is the approver, or the approver's own device
 * recorded an approval of that id and hash ({@link recordApprovals}). `hashes`: the upload's
 * content hash in each version (sync/write/apply.ts); a recorded hash is compared with the one of
 * its own version (version 2 covers `user_id` and `approved_by`, so a recorded approval does not
 * verify once either was changed).
 */
export async function verifyOwnerApproval(
  c: pg.PoolClient,
  principal: Principal,
  approverId: string | null,
  changesetId: string,
  hashes: Readonly<Record<ContentHashVersion, string>>,
): Promise<ApprovalCheck> {
  if (!approverId) return { ok: false, reason: 'policy', message: 'This upload carries no approval by an active owner of the club.' };
  const approver = (await c.query<{ role: string; active: boolean }>('SELECT role, active FROM app_user WHERE id = $1 AND deleted_at IS NULL', [approverId]))
    .rows[0];
  if (!approver || approver.role !== NEEDS_OWNER_APPROVER || !approver.active)
    return { ok: false, reason: 'policy', message: 'This upload carries no approval by an active owner of the club.' };
  if (principal.userId === approverId) return { ok: true, approverId, proof: 'token' };
  const rec = await recordedHash(c, changesetId, approverId);
  if (rec && rec.content_hash === hashes[rec.hash_version]) return { ok: true, approverId, proof: 'record' };
  return {
    ok: false,
    reason: 'approval_unverified',
    message: rec
      ? "The owner's recorded approval is for different content than this change; nothing was written. Re-plan it and have the owner approve it again."
      : `HQ cannot verify the owner's approval this change names: it was not uploaded from the owner's own device, and no approval of it was recorded by a device signed in to HQ as that owner. Nothing was written. Re-plan it and have the owner approve it on a device signed in to HQ as themselves (Settings → Sync).`,
  };
}

/** Why an author's attestation is or is not proven (see {@link verifyAuthorAttestation}). */
export type AttestationCheck = { ok: true; proof: 'token' | 'record' } | { ok: false; reason: 'signoff_unverified' | 'author_unverified'; message: string };

/**
 * Is there proof that `authorId` (the changeset's author, already re-read at HQ as an active user
 * of this org) made changeset `changesetId` with content hash `hashes`? Runs in the caller's
 * tenant transaction `c`. Proof: `principal` (the uploading token's user) is the author, or the
 * author's own device token recorded an attestation of that id and hash ({@link recordApprovals}).
 * `kind`: what needs it (sync/write/apply.ts): `signoff` (it sets or withdraws an RTP sign-off),
 * or `author` (the token's user could not have made it themselves, models/authorship.ts; `why`
 * says what); the rejection reason is `signoff_unverified` / `author_unverified`.
 */
export async function verifyAuthorAttestation(
  c: pg.PoolClient,
  principal: Principal,
  authorId: string,
  changesetId: string,
  hashes: Readonly<Record<ContentHashVersion, string>>,
  kind: 'signoff' | 'author' = 'signoff',
  why = '',
): Promise<AttestationCheck> {
  if (principal.userId === authorId) return { ok: true, proof: 'token' };
  const rec = await recordedHash(c, changesetId, authorId);
  if (rec && rec.content_hash === hashes[rec.hash_version]) return { ok: true, proof: 'record' };
  if (kind === 'author')
    return {
      ok: false,
      reason: 'author_unverified',
      message: rec
        ? "The author's recorded attestation is for different content than this change; nothing was written. Re-plan it with the author signed in to HQ as themselves on this device."
        : `HQ cannot verify that the user this change names as its author made it: it was uploaded under another user's device token (${principal.displayName}), who could not have made it themselves (${why.replace(/\.$/, '')}), and no attestation of it was recorded by a device signed in to HQ as the author (a PIN checked on the device is no proof). Nothing was written. Re-plan it: the author signs in to HQ as themselves on this device (Settings → Sync) and makes the change again.`,
    };
  return {
    ok: false,
    reason: 'signoff_unverified',
    message: rec
      ? "The signer's recorded attestation is for different content than this change; nothing was written. Re-plan it and have the signer sign off again."
      : `HQ cannot verify that the user this RTP sign-off names as its author made it: it was uploaded under another user's device token, and no attestation of it was recorded by a device signed in to HQ as that user (a PIN checked on the device is no proof). Nothing was written. Re-plan it: the signer signs in to HQ as themselves on this device (Settings → Sync) and signs off again.`,
  };
}
