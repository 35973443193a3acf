/**
 * Changeset proposals (kinetix.md §3): the one place where a write planned by the assistant or
 * an MCP client waits for a human, and the one path by which it is applied.
 *
 * - {@link proposeChangeset} runs the policy engine on the planned changeset and stores it
 *   (status `proposed`, or `needs_owner`), with its content hash and every policy decision;
 *   a `deny` verdict is refused with {@link PolicyDenied} and nothing is stored. No business
 *   data is written.
 * - {@link approveProposal} is called by the app on a human's click (the run's confirm dialog, or
 *   the proposals list for MCP and needs-owner changes). It re-reads the approver, binds the
 *   approval to the content hash, re-runs the policy and the row rules, and applies through the
 *   service layer's version-checked, idempotent path with the proposal id as changeset id and
 *   idempotency key. The model has no tool that reaches this function, and neither has an MCP
 *   client: approval needs a signed-in user's id, which only the app supplies.
 */
import { inTransaction } from '../data/db';
import type { PlannedChangeset, RowChange } from '../../models/changeset';
import type { ErrorPayload } from '../../models/errors';
import { AppError, Conflict, Forbidden, NotFound, toErrorPayload } from '../../models/errors';
import type { PolicyDecision, PolicyVerdict } from '../../models/policy';
import { canApprove } from '../../models/policy';
import type { Permission, Role } from '../../models/roles';
import { hasPermission, NEEDS_OWNER_APPROVER } from '../../models/roles';
import type { AppliedChangeset } from '../data/changesets';
import { changesetContentHash, checkChangeset } from '../data/changesets';
import type { Db } from '../data/db';
import { findUserById } from '../data/identity';
import * as P from '../data/proposals';
import type { ProposalSource, ProposalStatus } from '../data/proposals';
import { resolveActor } from '../services/context';
import { applyPlanned, evaluatePolicyWithHistory, PolicyDenied } from '../services/verb';
import { uuidv7 } from 'uuidv7';

export type { ProposalSource, ProposalStatus } from '../data/proposals';

/** What the model (and an MCP client) is told when a stale proposal is approved. */
export const STALE_MESSAGE =
  'The records changed since this was prepared; nothing was written. Read the current values again and propose the change afresh if it is still wanted.';

/** Input of {@link proposeChangeset}. */
export interface ProposeInput {
  /** The signed-in user on whose behalf the change was planned (re-read here). */
  userId: string;
  planned: PlannedChangeset;
  source: ProposalSource;
  /** The assistant run that planned it (activity then reads "Name via Assistant", linked to the run). */
  runId?: string | null;
  toolCallId?: string | null;
  toolName: string;
  /** The tool's title, as the confirm dialog shows it. */
  title: string;
  /** The tool's gating permission, re-checked against the proposer's role on approval. */
  permission?: Permission | null;
  /** Clock (tests); the policy's "today" is its UTC date. */
  now?: Date;
  /** An entry form's idempotency key: stored with the proposal, so a re-sent form finds it (one key → one changeset of the user). */
  idempotencyKey?: string | null;
  /** Hash of the request (verb and input) sent with the key (main/data/changesets requestHashOf). */
  requestHash?: string | null;
}

/** A proposal as the app, the harness and the MCP server see it. */
export interface ProposalView {
  id: string;
  orgId: string;
  /** The proposing user. */
  userId: string;
  source: ProposalSource;
  runId: string | null;
  toolCallId: string | null;
  toolName: string;
  title: string;
  verb: string;
  summary: string;
  /** The rows, before → after, with the versions they were planned against. */
  changes: RowChange[];
  status: ProposalStatus;
  verdict: Exclude<PolicyVerdict, 'deny'>;
  decisions: PolicyDecision[];
  /** Role that must approve (`owner` for needs-owner; null: the proposing user). */
  approverRole: Role | null;
  /** What an approval must quote. */
  contentHash: string;
  decidedBy: string | null;
  decidedAt: string | null;
  failure: ErrorPayload | null;
  /** The apply result once applied. */
  result: AppliedChangeset | null;
  createdAt: string;
  updatedAt: string;
  /** The device it was proposed on, when another device of the club (synced through HQ), else null: this device. */
  originDevice: { id: string; name: string } | null;
}

interface StoredPolicy {
  verdict: Exclude<PolicyVerdict, 'deny'>;
  decisions: PolicyDecision[];
  reasons: string[];
  approverRole: Role | null;
  permission: Permission | null;
}

function view(row: P.ProposalRow): ProposalView {
  const pol = JSON.parse(row.policy_json) as StoredPolicy;
  return {
    id: row.id,
    orgId: row.org_id,
    userId: row.user_id,
    source: row.source,
    runId: row.run_id,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    title: row.title,
    verb: row.verb,
    summary: row.summary,
    changes: JSON.parse(row.changes_json) as RowChange[],
    status: row.status,
    verdict: row.verdict,
    decisions: pol.decisions,
    approverRole: pol.approverRole,
    contentHash: row.content_hash,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at,
    failure: row.failure_json ? (JSON.parse(row.failure_json) as ErrorPayload) : null,
    result: row.status === 'applied' && row.result_json ? (JSON.parse(row.result_json) as AppliedChangeset) : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    originDevice: row.origin_device_id ? { id: row.origin_device_id, name: row.origin_device_name ?? '' } : null,
  };
}

function activeUser(db: Db, userId: string) {
  const u = findUserById(db, userId);
  if (!u) throw new Forbidden('Your account was not found. Sign in again.');
  if (!u.active) throw new Forbidden('Your account is deactivated. Ask a club administrator to reactivate it.');
  return u;
}

/**
 * Store a planned changeset as a proposal. Runs the policy engine (verdict `allow` → status
 * `proposed`; `needs_owner` → status `needs_owner`) and the row rules with version checks.
 * Writes the changeset row (not applied) and the proposal row only.
 * @throws PolicyDenied (verdict deny: nothing stored), Forbidden / NotFound / Validation (row
 *   rules), Conflict (already stale; IdempotencyKeyTaken: the key already holds this request),
 *   IdempotencyKeyReused (the key holds another request)
 */
export function proposeChangeset(db: Db, input: ProposeInput): ProposalView {
  const actor = resolveActor({ db, userId: input.userId });
  if (input.permission && !hasPermission(actor.role, input.permission)) throw new Forbidden(`Your role (${actor.role}) does not have ${input.permission}.`);
  if (input.planned.changes.length === 0) throw new AppError({ code: 'Validation', message: 'Nothing to change: the changeset is empty.' });
  const now = input.now ?? new Date();
  const policy = evaluatePolicyWithHistory(db, actor, input.planned, now);
  if (policy.verdict === 'deny') throw new PolicyDenied(policy);
  checkChangeset(db, actor, input.planned.changes);
  const id = uuidv7();
  const stored: StoredPolicy = {
    verdict: policy.verdict,
    decisions: policy.decisions,
    reasons: policy.reasons,
    approverRole: policy.approverRole,
    permission: input.permission ?? null,
  };
  P.insertProposal(db, {
    id,
    orgId: actor.orgId,
    userId: actor.userId,
    source: input.source,
    runId: input.runId ?? null,
    toolCallId: input.toolCallId ?? null,
    toolName: input.toolName.slice(0, 100),
    title: input.title.slice(0, 200),
    status: policy.verdict === 'needs_owner' ? 'needs_owner' : 'proposed',
    verdict: policy.verdict,
    policyJson: JSON.stringify(stored),
    contentHash: changesetContentHash(input.planned),
    planned: input.planned,
    createdAt: now.toISOString(),
    idempotencyKey: input.idempotencyKey ?? null,
    requestHash: input.requestHash ?? null,
  });
  return view(P.findProposal(db, actor.orgId, id)!);
}

/**
 * Hand the idempotency key of proposal `fromId` (an entry form's) to `toId`, the proposal that
 * replaces it (rows left out before approval). Call inside the transaction that declines
 * `fromId` and stores `toId`.
 */
export function moveProposalKey(db: Db, fromId: string, toId: string): void {
  P.moveIdempotencyKey(db, fromId, toId);
}

/** Input of {@link approveProposal}. */
export interface ApproveInput {
  /** The signed-in user clicking Approve (re-read: role, active, org). */
  approverUserId: string;
  changesetId: string;
  /** The content hash the approver was shown; an approval for other content is refused. */
  contentHash: string;
  now?: Date;
}

/**
 * Approve and apply a proposal. `proposed`: only the proposing user; `needs_owner`: only an
 * `owner` of the same org. Applied as the proposing user (their change; activity "Name via
 * Assistant" linked to the run when it came from one) with changeset id and idempotency key =
 * the proposal id; a retried approve returns the first result (`replayed: true`).
 * A stale row fails the whole changeset: Conflict ({@link STALE_MESSAGE}), nothing written,
 * proposal marked `failed` with the reason.
 * @throws NotFound (no such proposal in the approver's org), Forbidden (not allowed to approve,
 *   deactivated, or the policy now denies), Conflict (content hash mismatch, already decided,
 *   stale rows)
 */
export function approveProposal(db: Db, input: ApproveInput): { proposal: ProposalView; changeset: AppliedChangeset } {
  const approver = activeUser(db, input.approverUserId);
  const row = P.findProposal(db, approver.org_id, input.changesetId);
  if (!row) throw new NotFound('Proposed change');
  const visible = row.user_id === approver.id || (row.status === 'needs_owner' && approver.role === NEEDS_OWNER_APPROVER);
  if (!visible && row.status !== 'applied') throw new NotFound('Proposed change');
  const planned = P.plannedOf(row);
  if (input.contentHash !== row.content_hash || changesetContentHash(planned) !== row.content_hash) {
    throw new Conflict('This approval is for different content than the stored change; nothing was written. Review the change again.');
  }
  const pol = JSON.parse(row.policy_json) as StoredPolicy;
  const now = input.now ?? new Date();
  const nowIso = now.toISOString();

  // The approver's authority (stored verdict, and the policy re-run now as the proposer).
  const mayApprove = (verdict: PolicyVerdict): void => {
    if (!canApprove(approver.role, verdict))
      throw new Forbidden(`Only an ${NEEDS_OWNER_APPROVER} can approve this change (${pol.reasons.join(' ') || 'it needs an owner'}).`);
    if (verdict === 'allow' && approver.id !== row.user_id) throw new Forbidden('Only the person who asked for this change can approve it.');
  };

  if (row.status === 'applied') {
    mayApprove(row.verdict);
    if (!row.result_json) throw new Conflict('This change was already applied.');
    return { proposal: view(row), changeset: { ...(JSON.parse(row.result_json) as AppliedChangeset), replayed: true } };
  }
  if (row.status !== 'proposed' && row.status !== 'needs_owner') throw new Conflict(`This change was already ${row.status}; nothing was written.`);
  mayApprove(row.verdict);

  const fail = (e: unknown): never => {
    const payload = toErrorPayload(e);
    P.closeProposal(db, row.id, { status: 'failed', decidedBy: approver.id, decidedAt: nowIso, failureJson: JSON.stringify(payload) });
    throw e;
  };

  // Defence in depth: the proposer is re-read, still holds the tool's permission, and the policy still holds.
  let verdict: PolicyVerdict = row.verdict;
  try {
    // Worded about the proposer, not the approver (issue 13 re-review minor: an owner approving a
    // deactivated physio's proposal read "Your account is deactivated").
    const who = findUserById(db, row.user_id);
    if (!who || who.org_id !== approver.org_id) throw new NotFound('Proposed change');
    if (!who.active)
      throw new Forbidden(`${who.display_name}, who asked for this change, is deactivated; nothing was written. Decline it, or reactivate the account first.`);
    const proposer = resolveActor({ db, userId: row.user_id });
    if (pol.permission && !hasPermission(proposer.role, pol.permission))
      throw new Forbidden(`${proposer.displayName}'s role (${proposer.role}) no longer has ${pol.permission}; nothing was written.`);
    const now2 = evaluatePolicyWithHistory(db, proposer, planned, new Date(nowIso));
    if (now2.verdict === 'deny') throw new PolicyDenied(now2);
    if (now2.verdict === 'needs_owner') verdict = 'needs_owner';
  } catch (e) {
    return fail(e);
  }
  mayApprove(verdict);

  try {
    const applied = inTransaction(db, () => {
      // Applied as the proposer: "Name via Assistant" (linked to the run) or "Name via MCP client".
      const via =
        row.source === 'mcp' ? { via: { runId: row.run_id ?? `mcp:${row.id}`, source: 'mcp' as const } } : row.run_id ? { via: { runId: row.run_id } } : {};
      const a = applyPlanned({ db, userId: row.user_id, ...via, now: () => now }, planned, { idempotencyKey: row.id, changesetId: row.id });
      if (!P.closeProposal(db, row.id, { status: 'applied', decidedBy: approver.id, decidedAt: nowIso }))
        throw new Conflict('This change was decided by someone else a moment ago; nothing was written.');
      return a;
    });
    return { proposal: view(P.findProposal(db, approver.org_id, row.id)!), changeset: applied };
  } catch (e) {
    if (e instanceof AppError && e.code === 'Conflict' && e.conflicts) return fail(new Conflict(STALE_MESSAGE, e.conflicts));
    if (e instanceof AppError && e.code === 'Conflict' && /changed while/.test(e.message)) return fail(new Conflict(STALE_MESSAGE));
    if (e instanceof AppError && e.message.startsWith('This change was decided')) throw e;
    return fail(e);
  }
}

/**
 * Close an open proposal as `failed` without applying it (its run timed out, was stopped, or the
 * permission re-check failed). Returns false when it was no longer open.
 */
export function expireProposal(db: Db, changesetId: string, reason: ErrorPayload | { code: string; message: string }, atIso: string): boolean {
  return P.closeProposal(db, changesetId, { status: 'failed', decidedBy: null, decidedAt: atIso, failureJson: JSON.stringify(reason) });
}

/** What the model and the user are told when a change waits for an owner (the run does not block). */
export function needsOwnerMessage(p: Pick<ProposalView, 'id' | 'summary' | 'decisions'>): string {
  const why = p.decisions
    .filter((d) => d.effect === 'needs_owner')
    .map((d) => d.reason)
    .join(' ');
  return `Nothing has been written yet. This change ("${p.summary}") needs an owner's approval: ${why} It is waiting in the app for an owner to approve or decline it (proposal ${p.id}). Tell the user that an owner must approve it in the app; do not retry it or try another way to make the same change.`;
}

/**
 * Decline a proposal: the proposing user (withdraw), or an owner for a needs-owner change.
 * Nothing is written but the decision. @throws NotFound, Forbidden, Conflict (already decided)
 */
export function declineProposal(db: Db, input: { userId: string; changesetId: string; now?: Date }): ProposalView {
  const u = activeUser(db, input.userId);
  const row = P.findProposal(db, u.org_id, input.changesetId);
  const mine = row && row.user_id === u.id;
  const ownerOf = row && row.status === 'needs_owner' && u.role === NEEDS_OWNER_APPROVER;
  if (!row || (!mine && !ownerOf)) throw new NotFound('Proposed change');
  const nowIso = (input.now ?? new Date()).toISOString();
  if (!P.closeProposal(db, row.id, { status: 'declined', decidedBy: u.id, decidedAt: nowIso }))
    throw new Conflict(`This change was already ${P.findProposal(db, u.org_id, row.id)?.status ?? 'decided'}.`);
  return view(P.findProposal(db, u.org_id, row.id)!);
}

/**
 * Proposals visible to `userId`: their own, and for an owner every proposal of the org that
 * needed an owner (waiting or decided). Newest first. @throws Forbidden (deactivated)
 */
export function listProposals(db: Db, userId: string, opts: { status?: ProposalStatus; limit?: number; offset?: number } = {}): ProposalView[] {
  const u = activeUser(db, userId);
  return P.listProposalRows(db, u.org_id, u.id, { ...opts, limit: Math.min(opts.limit ?? 100, 500), includeNeedsOwner: u.role === NEEDS_OWNER_APPROVER }).map(
    view,
  );
}

/**
 * `userId`'s own open proposal (`proposed` / `needs_owner`) from `source` that plans exactly
 * `planned` (same verb, same content hash), or null: a form sent again while its first copy
 * still waits finds that copy instead of adding a duplicate to Approvals. @throws Forbidden (deactivated)
 */
export function findOpenDuplicate(db: Db, userId: string, source: P.ProposalSource, planned: PlannedChangeset): ProposalView | null {
  const u = activeUser(db, userId);
  const id = P.findOpenProposalByContent(db, u.org_id, u.id, source, planned.verb, changesetContentHash(planned));
  const row = id ? P.findProposal(db, u.org_id, id) : null;
  return row ? view(row) : null;
}

/** One proposal visible to `userId` (see {@link listProposals}). @throws NotFound, Forbidden */
export function getProposal(db: Db, userId: string, changesetId: string): ProposalView {
  const u = activeUser(db, userId);
  const row = P.findProposal(db, u.org_id, changesetId);
  if (!row) throw new NotFound('Proposed change');
  const pol = JSON.parse(row.policy_json) as StoredPolicy;
  const ownerView =
    u.role === NEEDS_OWNER_APPROVER && (row.status === 'needs_owner' || row.verdict === 'needs_owner' || pol.approverRole === NEEDS_OWNER_APPROVER);
  if (row.user_id !== u.id && !ownerView) throw new NotFound('Proposed change');
  return view(row);
}
