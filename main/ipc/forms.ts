/**
 * Entry forms: the app's pages as a second door to the same service verbs the assistant uses.
 *
 * A form submit runs the one planning path (`planWrite`: permission, tenant, self-scope, the
 * verb's zod schema, the row rules with version checks), then the policy engine
 * (models/policy.ts), then either
 * - applies the change at once with the row versions it was planned against (`applyPlanned`,
 *   idempotent under the form's key; activity reads the user's own name), when it is one row
 *   that touches no RTP sign-off and the policy allows it; or
 * - stores it as a proposal (`proposeChangeset`, source `page`) for the user to review as a
 *   diff and approve through `proposals.approve` — the same approval path as an assistant's
 *   proposal (main/kinetix/proposals.ts) — when it changes more than one row, touches a
 *   sign-off, or the policy says it needs an owner (it then waits in Approvals), or the user is
 *   an owner whose change the policy allows only because they are one (a price moved more than
 *   20 %, a fee code changed or reused: shown as a diff first, applied on Confirm).
 * The same change (same verb and planned rows) sent again while its first proposal still waits
 * returns that proposal, with a note saying so: Approvals never lists duplicates.
 *
 * A form also sends the version and `updated_at` of each row it showed (`expected_versions`; a
 * bare version from older callers), or, when it showed
 * nothing stored, `expect_absent`: when a row moved on since (or appeared since), the submit is
 * refused with `Conflict` (nothing written) and the page shows the current values, never
 * overwriting silently.
 */
import type { PlannedChangeset, RowChange } from '../../models/changeset';
import type { ExpectedVersions, ProposalItemView } from '../../models/contract';
import { AppError, Conflict, Forbidden, IdempotencyKeyReused, NotFound, ValidationError } from '../../models/errors';
import type { Db } from '../data/db';
import { inTransaction } from '../data/db';
import type { ProposalView } from '../kinetix/proposals';
import { declineProposal, findOpenDuplicate, getProposal, moveProposalKey, proposeChangeset } from '../kinetix/proposals';
import type { PolicyDecision } from '../../models/policy';
import { OWNER_AUTHORITY_CODES } from '../../models/policy';
import { VERBS, applyPlanned, evaluatePolicyWithHistory, planWrite, PolicyDenied, requirePermission, resolveActor } from '../services';
import type { Actor, ServiceContext } from '../services';
import type { AppliedChangeset, KeyedChangeset } from '../services/review';
import { confirmedAtVersion, IdempotencyKeyTaken, priorChangeset, requestHashOf, storedRowState, storedRtpEntry } from '../services/review';

/** What a form submit returns. */
export type FormSubmitResult =
  { status: 'applied'; changeset: AppliedChangeset; reveal?: Record<string, string> } | { status: 'review'; proposal: ProposalItemView; notes: string[] };

/** Sign-off columns of an RTP entry. */
const SIGNOFF_FIELDS = ['physio_signoff_by', 'doctor_signoff_by', 'coach_signoff_by'];

/** True when the change must be reviewed as a diff before it is applied (more than one row, or an RTP sign-off). */
export function needsReview(changes: readonly RowChange[]): boolean {
  if (changes.length > 1) return true;
  // An insert carries every sign-off column (null when unsigned); only a real signature counts.
  return changes.some(
    (c) =>
      c.table === 'rtp_entry' &&
      (c.op === 'insert' ? SIGNOFF_FIELDS.some((f) => c.after[f] != null) : c.op === 'update' && SIGNOFF_FIELDS.some((f) => f in c.after)),
  );
}

/** The proposal as the pages see it (models/contract ProposalItemView). */
export function proposalItem(p: ProposalView): ProposalItemView {
  return {
    id: p.id,
    userId: p.userId,
    source: p.source,
    runId: p.runId,
    toolName: p.toolName,
    title: p.title,
    verb: p.verb,
    summary: p.summary,
    changes: p.changes,
    status: p.status,
    decisions: p.decisions.map((d) => ({ effect: d.effect, reason: d.reason, code: d.code })),
    approverRole: p.approverRole,
    contentHash: p.contentHash,
    decidedBy: p.decidedBy,
    decidedAt: p.decidedAt,
    failure: p.failure,
    createdAt: p.createdAt,
    originDevice: p.originDevice,
  };
}

/**
 * Plain-language notes a reviewer must see besides the diff (e.g. a coach signing a stage the
 * doctor has not cleared). Reads the stored rows the changes target.
 */
function reviewNotes(ctx: ServiceContext, actor: Actor, changes: readonly RowChange[]): string[] {
  const notes: string[] = [];
  for (const c of changes) {
    if (c.table !== 'rtp_entry' || c.op === 'delete') continue;
    const stored = c.op === 'update' ? storedRtpEntry(ctx, actor, c.id) : null;
    const value = (f: string) => (f in c.after ? c.after[f] : stored?.[f]);
    if (c.after.coach_signoff_by && !value('doctor_signoff_by')) {
      notes.push('The doctor has not cleared this stage yet: a coach sign-off records that the coach agrees, not that the athlete is medically cleared.');
    }
    for (const who of ['physio', 'doctor', 'coach']) {
      if (`${who}_signoff_by` in c.after && c.after[`${who}_signoff_by`] === null && stored?.[`${who}_signoff_by`])
        notes.push(`This withdraws the ${who} sign-off; the stage then no longer counts as signed off by the ${who}.`);
    }
  }
  return notes;
}

/**
 * Notes for an owner's change that the policy allows only because they are an owner
 * (models/policy.ts `OWNER_AUTHORITY_CODES`): one per kind, so the form shows it as a diff to
 * confirm instead of applying it at once. Empty when there is none. A limit removed (a budget cap
 * emptied) is left out: an owner empties the field on purpose, and a typed magnitude is the slip
 * this catches.
 */
export function ownerCheckNotes(decisions: readonly PolicyDecision[]): string[] {
  // A limit emptied on purpose (no cap) is not a typing slip: it applies as before.
  const typed = decisions.filter(
    (d) => d.effect === 'allow' && OWNER_AUTHORITY_CODES.has(d.code) && !(d.code === 'numeric_change_by_owner' && d.detail?.after === null),
  );
  const codes = new Set(typed.map((d) => d.code));
  const notes: string[] = [];
  if (codes.has('numeric_change_by_owner'))
    notes.push('A change of more than 20 % — check it before it is applied. Anyone but an owner would need an owner’s approval for it.');
  if (codes.has('fee_code_change_by_owner'))
    notes.push('A fee code change — check it before it is applied: bills are looked up by code, and the old code becomes free for another item.');
  if (codes.has('fee_code_reuse_by_owner')) notes.push('This fee code was used before at a price more than 20 % away — check it before it is applied.');
  return notes;
}

/** True when two `updated_at` texts name the same row state: the same text, or the same instant written differently. */
function sameStamp(shown: string, stored: string | null | undefined): boolean {
  if (stored == null) return false;
  if (shown === stored) return true;
  const a = Date.parse(shown);
  const b = Date.parse(stored);
  return Number.isFinite(a) && a === b;
}

/**
 * Refuse when a row the form showed has moved on since (`expected`: row id → `{version,
 * updated_at}` shown, or the bare version from older callers), or when the form showed nothing
 * stored (`expectAbsent`) and the change would now update a stored row that appeared meanwhile
 * (reported with expected version 0). A row is stale when its version or, when given, its
 * `updated_at` differs from the stored row's: on a device enrolled for sync, HQ's row that
 * replaced a refused local edit can carry the same version number as that edit (issue 12 B3).
 * Reads the stored rows through the service layer (`storedRowState`). Nothing is written.
 * @throws Conflict (with `conflicts` naming each row and its current version)
 */
function checkExpected(
  ctx: ServiceContext,
  actor: Actor,
  planned: PlannedChangeset,
  expected: Readonly<ExpectedVersions> | undefined,
  expectAbsent: boolean,
): void {
  const stale = planned.changes.flatMap((c) => {
    if (c.op !== 'update') return [];
    const shown = expected?.[c.id];
    if (shown !== undefined) {
      const version = typeof shown === 'number' ? shown : shown.version;
      // The same version with another updated_at is another state of the row (HQ's row that replaced
      // a refused local edit), unless HQ applied this device's own change to that version (the form
      // showed that change before HQ's copy of it, with HQ's updated_at, arrived).
      const moved =
        version !== c.version ||
        (typeof shown !== 'number' &&
          !sameStamp(shown.updated_at, storedRowState(ctx, actor, c.table, c.id)?.updated_at) &&
          !confirmedAtVersion(ctx, c.id, version));
      return moved ? [{ table: c.table, id: c.id, expectedVersion: version, actualVersion: c.version }] : [];
    }
    if (expectAbsent) return [{ table: c.table, id: c.id, expectedVersion: 0, actualVersion: c.version }];
    return [];
  });
  if (stale.length > 0) {
    const appeared = stale.every((x) => x.expectedVersion === 0);
    throw new Conflict(
      appeared
        ? 'Someone saved this record after you opened the form, which showed nothing stored. Nothing was written. The stored values are now shown: check them, then replace them if yours are right.'
        : 'Someone changed this record after you opened the form. Nothing was written. The current values are shown next to yours: check them, then save again.',
      stale,
    );
  }
}

/**
 * Submit an entry form: plan `verb` with `input` as the signed-in user, check the versions the
 * form was opened with, run the policy, and apply or store for review (see the module doc).
 * Idempotency: one `idempotency_key` → at most one changeset of the user, pending or applied
 * (enforced in the data layer by the unique index on org, user and key). The same key with the
 * same verb and input returns the first outcome (the applied result, or the proposal waiting for
 * review); with another verb or other input it is refused with IdempotencyKeyReused.
 * @throws NotFound (unknown verb or record), Forbidden (permission, policy deny), Validation,
 *   Conflict (stale form; the key's proposal was declined), IdempotencyKeyReused
 */
export function submitForm(
  db: Db,
  userId: string,
  req: {
    verb: string;
    input?: unknown;
    expected_versions?: ExpectedVersions | undefined;
    expect_absent?: boolean | undefined;
    idempotency_key?: string | undefined;
  },
  now: Date = new Date(),
): FormSubmitResult {
  const verb = VERBS.get(req.verb);
  if (!verb) throw new NotFound(`Verb "${req.verb}"`);
  if (verb.kind !== 'write') throw new ValidationError(`"${req.verb}" reads records; a form submits a write.`, [{ path: 'verb', message: 'not a write verb' }]);
  const ctx: ServiceContext = { db, userId, now: () => now };
  const key = req.idempotency_key;
  const requestHash = requestHashOf(verb.name, req.input);
  if (key) {
    // A re-sent form (double click, retry after a lost reply) gets the first outcome.
    const actor = resolveActor(ctx);
    requirePermission(ctx, actor, verb.permission);
    const prior = priorChangeset(ctx, actor, key);
    if (prior) return replayed(ctx, actor, prior, verb.name, requestHash);
  }
  const { planned, reveal, actor } = planWrite(ctx, verb, req.input ?? {});
  checkExpected(ctx, actor, planned, req.expected_versions, req.expect_absent === true);
  const policy = evaluatePolicyWithHistory(db, actor, planned, now);
  if (policy.verdict === 'deny') throw new PolicyDenied(policy);
  // An owner's own change that would need an owner from anyone else (a price moved more than
  // 20 %, a fee code changed or reused): allowed, but shown as a diff first (a 100× slip is seen
  // before it is applied).
  const ownerNotes = ownerCheckNotes(policy.decisions);
  try {
    // Undo always asks first: the confirmation says what will be reverted.
    if (policy.verdict === 'needs_owner' || needsReview(planned.changes) || verb.name === 'changesets.undo' || ownerNotes.length > 0) {
      if (reveal) throw new AppError({ code: 'Internal', message: 'A change that reveals a secret cannot wait for review. Nothing was written.' });
      // The same change sent again (another click, a new form) while its first copy still waits:
      // that copy, not a duplicate in Approvals.
      const open = findOpenDuplicate(db, userId, 'page', planned);
      if (open) {
        return {
          status: 'review',
          proposal: proposalItem(open),
          notes: [
            `You already sent this same change on ${open.createdAt.slice(0, 10)}; it is still ${open.status === 'needs_owner' ? 'waiting for an owner in Approvals' : 'waiting for your review'}, so it was not added again.`,
            ...ownerNotes,
            ...reviewNotes(ctx, actor, planned.changes),
          ],
        };
      }
      const p = proposeChangeset(db, {
        userId,
        planned,
        source: 'page',
        toolName: verb.name,
        title: verb.description,
        permission: verb.permission,
        now,
        idempotencyKey: key ?? null,
        requestHash,
      });
      return { status: 'review', proposal: proposalItem(p), notes: [...ownerNotes, ...reviewNotes(ctx, actor, planned.changes)] };
    }
    const changeset = applyPlanned(ctx, planned, key ? { idempotencyKey: key, requestHash } : {});
    return reveal ? { status: 'applied', changeset, reveal } : { status: 'applied', changeset };
  } catch (e) {
    // The same form sent by a concurrent submit that stored it a moment earlier: its outcome.
    const prior = key && e instanceof IdempotencyKeyTaken ? priorChangeset(ctx, actor, key) : null;
    if (prior) return replayed(ctx, actor, prior, verb.name, requestHash);
    throw e;
  }
}

/**
 * The outcome of the form first sent under this key: the applied change (`replayed: true`), or
 * the proposal still waiting for review. @throws IdempotencyKeyReused (the key was sent with
 * another verb or other input: nothing written), IdempotencyKeyTaken (a Conflict: the proposal
 * it made was declined or failed)
 */
function replayed(ctx: ServiceContext, actor: Actor, prior: KeyedChangeset, verbName: string, requestHash: string): FormSubmitResult {
  if (prior.verb !== verbName || prior.requestHash !== requestHash)
    throw new IdempotencyKeyReused(
      'This form was already sent with other values under the same request key, and that first change stands. Nothing was written now: open the form again (or reload the page) and send your change as a new one.',
    );
  if (prior.result && (prior.status === 'applied' || prior.status === 'undone')) return { status: 'applied', changeset: prior.result };
  if (prior.status === 'proposed' || prior.status === 'needs_owner') {
    const p = getProposal(ctx.db, actor.userId, prior.id);
    return { status: 'review', proposal: proposalItem(p), notes: reviewNotes(ctx, actor, p.changes) };
  }
  throw new IdempotencyKeyTaken(prior.id, prior.status);
}

/**
 * Leave rows out of a proposal before approving it (a bulk change: e.g. one athlete of a squad
 * load who did not train). Only the proposing user, only while it waits for their own approval,
 * only for proposals made on a page or by an MCP client (an assistant run's dialog holds its own),
 * and only when every row is the same kind of change to the same table (independent rows). The
 * old proposal is declined and a new one, re-checked by the policy and the row rules, replaces it.
 * @throws NotFound, Forbidden, Conflict (content changed, already decided), Validation
 */
export function narrowProposal(
  db: Db,
  userId: string,
  req: { changeset_id: string; content_hash: string; drop_ids: string[] },
  now: Date = new Date(),
): ProposalItemView {
  const p = getProposal(db, userId, req.changeset_id);
  if (p.userId !== userId) throw new Forbidden('Only the person who prepared this change can leave rows out of it.');
  if (p.source === 'assistant') throw new Forbidden('A change proposed in an assistant conversation is approved or declined whole in its panel.');
  if (p.status !== 'proposed')
    throw new Conflict(
      p.status === 'needs_owner'
        ? 'This change is waiting for an owner; decline it and prepare it again instead.'
        : `This change was already ${p.status}; nothing was changed.`,
    );
  if (p.contentHash !== req.content_hash) throw new Conflict('This change is not the one you reviewed. Review it again.');
  // An Undo restores one earlier change: a part of it would leave that change marked as still
  // applied, with an Undo that then always conflicts (issue 13 re-review minor).
  if (p.verb === 'changesets.undo' && req.drop_ids.length > 0)
    throw new ValidationError('An Undo is applied whole. To keep some of the rows it would restore, decline the Undo and change the other records directly.', [
      { path: 'drop_ids', message: 'an Undo is applied whole' },
    ]);
  const drop = new Set(req.drop_ids);
  const unknown = req.drop_ids.filter((id) => !p.changes.some((c) => c.id === id));
  if (unknown.length)
    throw new ValidationError('Some rows to leave out are not part of this change.', [{ path: 'drop_ids', message: `not in this change: ${unknown.length}` }]);
  const kinds = new Set(p.changes.map((c) => `${c.op}:${c.table}`));
  if (kinds.size !== 1)
    throw new ValidationError('Rows can only be left out of a change whose rows are independent (all the same kind of change to the same records).', [
      { path: 'drop_ids', message: 'rows depend on each other' },
    ]);
  const kept = p.changes.filter((c) => !drop.has(c.id));
  if (kept.length === 0) throw new ValidationError('Every row would be left out; decline the change instead.', [{ path: 'drop_ids', message: 'nothing left' }]);
  if (drop.size === 0) return proposalItem(p);
  const verb = VERBS.get(p.verb);
  const planned: PlannedChangeset = {
    verb: p.verb,
    summary: `${p.summary} — ${drop.size} of ${p.changes.length} row${p.changes.length === 1 ? '' : 's'} left out`,
    changes: kept,
  };
  // Both or neither: the narrowed change replaces the reviewed one (and takes over its form key,
  // so a re-sent form finds the narrowed change).
  return inTransaction(db, () => {
    declineProposal(db, { userId, changesetId: p.id, now });
    const narrowed = proposeChangeset(db, {
      userId,
      planned,
      source: p.source,
      toolName: p.toolName,
      title: p.title,
      permission: verb?.permission ?? null,
      now,
    });
    moveProposalKey(db, p.id, narrowed.id);
    return proposalItem(getProposal(db, userId, narrowed.id));
  });
}
