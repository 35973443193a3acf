/**
 * Changes waiting for an owner, across devices (HQ migration 0010, issue 12): the HQ side of
 * POST /v1/proposals and the proposal bookkeeping of POST /v1/changesets.
 *
 * - {@link recordProposalEvents}: a device reports a *needs owner* proposal made on it (`propose`)
 *   or a decision not to apply one (`decline`). A proposal is stored as an `hq_proposal` row,
 *   which the shape proxy syncs to the org's staff devices (sync/http/shape-proxy.ts): an owner
 *   signed in on any of them sees it in Approvals, with who proposed it, when and from which
 *   device, and the same diff. HQ re-runs the policy for the proposer as HQ holds them: only a
 *   change that still needs an owner is kept.
 * - {@link lockProposal} / {@link settleProposal} / {@link failProposal}: an owner's approval
 *   arrives as the changeset itself, uploaded with the proposal's id as changeset id. HQ locks the
 *   proposal row in the applying transaction, so a proposal approved on two devices, or approved
 *   after it was declined, is applied at most once: the first upload applies it and marks it
 *   `applied`; a second is a replay (the same content) or a visible conflict on its device. An
 *   approved change HQ refuses (stale rows, lost permission, policy) marks it `failed` with the
 *   reason, so the proposing device sees that outcome too.
 */
import type pg from 'pg';
import type { PlannedChangeset, RowChange, RuleActor, StoredRowFacts } from '../../models/changeset';
import { authorizeChange } from '../../models/changeset';
import { uploaderCannotVouch } from '../../models/authorship';
import type { PolicyResult } from '../../models/policy';
import { hasPermission, NEEDS_OWNER_APPROVER, SELF_SCOPED_ROLES, type Role } from '../../models/roles';
import type { ChangesetOutcome, ProposalEvent, ProposalEventOutcome, RejectionReason } from '../../models/sync';
import { isTableName, TABLES } from '../../models/tables';
import { withTenant } from '../pg/db';
import type { Principal } from './principal';
import { readTargets, uploaderActor } from './targets';

/** What a proposal is judged by at HQ (sync/write/apply.ts supplies both, as for uploads). */
export interface ProposalRules {
  /** The proposal hash of `{verb, changes}` (`uploadContentHash` version 1, the device's `changesetContentHash`). */
  contentHash(cs: { verb: string; changes: RowChange[] }): string;
  /** The policy as HQ runs it for an upload (`hqPolicy`: cumulative limits from HQ's own history), in transaction `c`. */
  policy(c: pg.PoolClient, actor: RuleActor, planned: PlannedChangeset, now: Date): Promise<PolicyResult>;
}

/** An `hq_proposal` row as the write path needs it. */
export interface HqProposalRow {
  id: string;
  user_id: string;
  content_hash: string;
  status: 'needs_owner' | 'applied' | 'declined' | 'failed';
}

interface UserRow {
  id: string;
  org_id: string;
  role: string;
  active: boolean;
  linked_athlete_id: string | null;
  deleted_at: string | null;
}

type Refusal = Extract<ProposalEventOutcome, { status: 'refused' }>;
const refused = (e: ProposalEvent, code: Refusal['code'], message: string, proposalStatus?: string): Refusal => ({
  changeset_id: e.changeset_id,
  op: e.op,
  status: 'refused',
  code,
  message,
  ...(proposalStatus ? { proposal_status: proposalStatus } : {}),
});

/** The first unknown table or column of `changes`, as a message, or null. */
function unknownField(changes: readonly RowChange[]): string | null {
  for (const ch of changes) {
    if (!isTableName(ch.table)) return `unknown table "${ch.table}"`;
    const cols = TABLES[ch.table].schema.shape as Record<string, unknown>;
    const fields = ch.op === 'delete' ? [] : [...Object.keys(ch.after), ...(ch.op === 'update' ? Object.keys(ch.before) : [])];
    const bad = fields.find((f) => !(f in cols));
    if (bad) return `${ch.table} has no column "${bad}"`;
  }
  return null;
}

/**
 * Record a device's proposal events, in order, for `principal` (the device token's user). Each
 * event is its own transaction under row-level security; each answers `recorded` or `refused`
 * (never thrown). `rules`: the proposal hash and HQ's policy ({@link ProposalRules}).
 * @throws Forbidden (an athlete's device: nothing is recorded; checked by the caller), database errors (the request answers 503 and the device retries, idempotently)
 */
export async function recordProposalEvents(
  pool: pg.Pool,
  principal: Principal,
  events: readonly ProposalEvent[],
  now: Date,
  rules: ProposalRules,
): Promise<ProposalEventOutcome[]> {
  const out: ProposalEventOutcome[] = [];
  for (const e of events) out.push(e.op === 'propose' ? await propose(pool, principal, e, now, rules) : await decline(pool, principal, e, now));
  return out;
}

async function readUser(c: pg.PoolClient, id: string): Promise<UserRow | undefined> {
  return (await c.query<UserRow>('SELECT id, org_id, role, active, linked_athlete_id, deleted_at FROM app_user WHERE id = $1', [id])).rows[0];
}

async function propose(
  pool: pg.Pool,
  principal: Principal,
  e: Extract<ProposalEvent, { op: 'propose' }>,
  now: Date,
  rules: ProposalRules,
): Promise<ProposalEventOutcome> {
  const changes = e.changes as RowChange[];
  const bad = unknownField(changes);
  if (bad) return refused(e, 'Validation', `This proposal names ${bad}; nothing was recorded.`);
  const hash = rules.contentHash({ verb: e.verb, changes });
  return withTenant(pool, { orgId: principal.orgId, userId: e.user_id }, async (c) => {
    const prior = (await c.query<HqProposalRow>('SELECT id, user_id, content_hash, status FROM hq_proposal WHERE id = $1', [e.changeset_id])).rows[0];
    if (prior) {
      if (prior.content_hash !== hash || prior.user_id !== e.user_id)
        return refused(e, 'Conflict', 'A proposal with this id and other content is already recorded at HQ; nothing was recorded.', prior.status);
      return { changeset_id: e.changeset_id, op: e.op, status: 'recorded' };
    }
    // The proposer as HQ holds them (row-level security: this org only). An org device (enrolled by
    // staff) signs anyone of the club in, as for changesets (sync/write/apply.ts).
    const user = await readUser(c, e.user_id);
    if (!user || user.deleted_at || !user.active)
      return refused(e, 'Forbidden', 'The proposing account is deactivated or unknown at HQ; nothing was recorded.');
    if (SELF_SCOPED_ROLES.has(user.role as Role)) return refused(e, 'Forbidden', 'Athlete accounts do not propose changes for an owner.');
    const actor: RuleActor = { userId: user.id, orgId: user.org_id, role: user.role as Role, linkedAthleteId: user.linked_athlete_id, active: true };
    // The same rules as an upload of the change (sync/write/apply.ts), in the same order (issue 12
    // re-review B2: a coach's token named the physio as proposer of a fee change the coach could not
    // make, and read fee prices from the policy's answers): each change judged against the row HQ
    // holds; a proposer other than the token's user only where the token's user could have made it
    // themselves (models/authorship.ts) — a proposal has no attestation path, so otherwise the
    // proposer proposes from a device signed in to HQ as themselves; then the proposer's own rules.
    const targets = await readTargets(c, changes, { lock: false });
    const judged = targets.map((t) => t.serverChange);
    const factsOf = new Map<RowChange, StoredRowFacts | null>(targets.map((t) => [t.serverChange, t.facts]));
    if (user.id !== principal.userId) {
      const why = uploaderCannotVouch(uploaderActor(principal), e.verb, judged, (ch) => factsOf.get(ch) ?? null);
      if (why)
        return refused(
          e,
          'Forbidden',
          `HQ cannot verify that the user this proposal names made it: it was sent under another user's device token (${principal.displayName}), who could not have made it themselves (${why.replace(/\.$/, '')}). Nothing was recorded. The proposer can propose it from a device signed in to HQ as themselves.`,
        );
    }
    for (const ch of judged) {
      const d = authorizeChange(actor, ch, factsOf.get(ch) ?? null);
      if (!d.ok) return refused(e, d.code, `${d.reason} Nothing was recorded.`);
    }
    const policy = await rules.policy(c, actor, { verb: e.verb, summary: e.summary, changes: judged }, now);
    if (policy.verdict !== 'needs_owner')
      return refused(
        e,
        'Validation',
        policy.verdict === 'deny'
          ? `HQ's policy refuses this change: ${policy.reasons.join(' ')} Nothing was recorded.`
          : 'This change does not need an owner at HQ; it is applied when its changeset is uploaded. Nothing was recorded.',
      );
    const stored = {
      verdict: policy.verdict,
      decisions: policy.decisions,
      reasons: policy.reasons,
      approverRole: policy.approverRole,
      permission: e.permission,
    };
    const createdAt = Math.min(Date.parse(e.created_at), now.getTime());
    await c.query(
      `INSERT INTO hq_proposal (id, org_id, user_id, device_id, device_name, source, tool_name, title, verb, summary, changes_json, tables, policy_json, content_hash, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $16, $12, $13, 'needs_owner', $14, $15)`,
      [
        e.changeset_id,
        principal.orgId,
        user.id,
        principal.deviceId,
        principal.deviceName,
        e.source,
        e.tool_name,
        e.title,
        e.verb,
        e.summary,
        JSON.stringify(changes),
        JSON.stringify(stored),
        hash,
        new Date(createdAt).toISOString(),
        now.toISOString(),
        `,${[...new Set(changes.map((ch) => ch.table))].sort().join(',')},`,
      ],
    );
    return { changeset_id: e.changeset_id, op: e.op, status: 'recorded' };
  });
}

async function decline(pool: pg.Pool, principal: Principal, e: Extract<ProposalEvent, { op: 'decline' }>, now: Date): Promise<ProposalEventOutcome> {
  return withTenant(pool, { orgId: principal.orgId, userId: e.decided_by }, async (c) => {
    const p = (
      await c.query<HqProposalRow & { tables: string }>('SELECT id, user_id, content_hash, status, tables FROM hq_proposal WHERE id = $1 FOR UPDATE', [
        e.changeset_id,
      ])
    ).rows[0];
    if (!p) return refused(e, 'NotFound', 'HQ holds no such proposal of this organisation.');
    const decider = await readUser(c, e.decided_by);
    if (!decider || decider.deleted_at || !decider.active) return refused(e, 'Forbidden', 'The declining account is deactivated or unknown at HQ.');
    const withdraw = decider.id === p.user_id;
    if (!withdraw && decider.role !== NEEDS_OWNER_APPROVER)
      return refused(e, 'Forbidden', 'Only an owner, or the person who proposed it, can decline this change.');
    // An owner's decline needs the owner's own token (as an approval does); the proposer's
    // withdrawal may come from an org device, which signs the proposer in.
    // A withdrawal from another user's token counts only where that token's user could write every
    // table the proposal changes (issue 12 re-review minor: a coach's token withdrew the physio's fee proposal).
    const uploaderMayWrite = p.tables
      .split(',')
      .filter(Boolean)
      .every((t) => isTableName(t) && hasPermission(principal.role as Role, TABLES[t].write));
    const verified = principal.userId === decider.id || (withdraw && !SELF_SCOPED_ROLES.has(principal.role as Role) && uploaderMayWrite);
    if (!verified)
      return refused(
        e,
        'Forbidden',
        withdraw
          ? `HQ cannot verify that the proposer withdrew this change: it was sent under another user's device token (${principal.displayName}), whose role could not make the change. The proposal still waits at HQ; the proposer can withdraw it on a device signed in to HQ as themselves.`
          : "HQ cannot verify that the owner declined this change: the decision was not sent with the owner's own device token. The proposal still waits at HQ; the owner can decline it on a device signed in to HQ as themselves.",
      );
    if (p.status !== 'needs_owner') {
      if (p.status === 'declined') return { changeset_id: e.changeset_id, op: e.op, status: 'recorded' };
      return refused(e, 'Conflict', `This proposal was already ${p.status} at HQ.`, p.status);
    }
    const at = Math.min(Date.parse(e.decided_at), now.getTime());
    await c.query(
      `UPDATE hq_proposal SET status = 'declined', decided_by = $2, decided_at = $3, decided_device_name = $4, updated_at = $5, version = version + 1 WHERE id = $1`,
      [p.id, decider.id, new Date(at).toISOString(), principal.deviceName, now.toISOString()],
    );
    return { changeset_id: e.changeset_id, op: e.op, status: 'recorded' };
  });
}

/**
 * In the applying transaction `c` of changeset `changesetId`: lock its proposal row, if it is one.
 * Returns the row, or null when the changeset is no synced proposal.
 */
export async function lockProposal(c: pg.PoolClient, changesetId: string): Promise<HqProposalRow | null> {
  return (await c.query<HqProposalRow>('SELECT id, user_id, content_hash, status FROM hq_proposal WHERE id = $1 FOR UPDATE', [changesetId])).rows[0] ?? null;
}

/**
 * Why an uploaded changeset may not apply proposal `p` (locked by {@link lockProposal}), or null:
 * the proposal must still wait, and the upload must be the proposer's change with the reviewed
 * content (`proposalHash`: the upload's `{verb, changes}` hash).
 */
export function proposalMismatch(p: HqProposalRow, actorId: string, proposalHash: string): { reason: RejectionReason; message: string } | null {
  if (p.status !== 'needs_owner')
    return {
      reason: 'stale',
      message: `This change was already ${p.status === 'applied' ? 'approved and applied' : p.status} at HQ (decided on another device); nothing was written. Discard it here.`,
    };
  if (p.user_id !== actorId || p.content_hash !== proposalHash)
    return { reason: 'validation', message: 'This upload differs from the proposal the owner reviewed (author or content); nothing was written.' };
  return null;
}

/** Mark proposal `id` applied in the applying transaction `c` (approved by `approverId`, from `deviceName`). */
export async function settleProposal(c: pg.PoolClient, id: string, approverId: string | null, deviceName: string, at: string): Promise<void> {
  await c.query(
    `UPDATE hq_proposal SET status = 'applied', decided_by = $2, decided_at = $3, decided_device_name = $4, outcome_json = NULL, updated_at = $3, version = version + 1
      WHERE id = $1 AND status = 'needs_owner'`,
    [id, approverId, at, deviceName],
  );
}

/** The error code a device shows for a final rejection (models/errors.ts). */
const REJECTION_CODE: Readonly<Partial<Record<RejectionReason, string>>> = {
  stale: 'Conflict',
  forbidden: 'Forbidden',
  not_found: 'NotFound',
  validation: 'Validation',
  policy: 'Forbidden',
};

/** Rejection reasons after which a waiting proposal has failed (another approval cannot help: the change itself was refused). */
const FINAL_REASONS: ReadonlySet<RejectionReason> = new Set(['stale', 'forbidden', 'not_found', 'validation', 'policy']);

/**
 * After HQ rejected the approved changeset of a waiting proposal: mark it `failed` with the reason
 * (when final: a stale row, a lost permission, the policy), so every device sees the outcome. An
 * unverified approval leaves it waiting: an owner can still approve it from a device signed in to
 * HQ as themselves. Own transaction; best effort like the rejection record.
 */
export async function failProposal(
  pool: pg.Pool,
  principal: Principal,
  outcome: Extract<ChangesetOutcome, { status: 'rejected' }>,
  approverId: string | null,
  at: string,
): Promise<void> {
  if (!FINAL_REASONS.has(outcome.reason)) return;
  await withTenant(pool, { orgId: principal.orgId, userId: principal.userId }, async (c) => {
    await c.query(
      `UPDATE hq_proposal SET status = 'failed', decided_by = $2, decided_at = $3, decided_device_name = $4, outcome_json = $5, updated_at = $3, version = version + 1
        WHERE id = $1 AND status = 'needs_owner'`,
      [
        outcome.changeset_id,
        approverId,
        at,
        principal.deviceName,
        JSON.stringify({ code: REJECTION_CODE[outcome.reason], message: outcome.message, kind: outcome.reason }),
      ],
    );
  });
}
