/**
 * POST /v1/changesets, the HQ side: apply a device's outbox changesets in order, each in one
 * Postgres transaction as the app role under row-level security, authorised again by the same
 * pure rules the device used (models/changeset.ts `authorizeChange`, models/policy.ts
 * `evaluatePolicy`, models/tables.ts), with row version checks. HQ trusts nothing the device says
 * about the stored rows: the role and active flag are re-read, `before` values are replaced by
 * the stored ones before any rule sees them, and the org comes from the token.
 *
 * Per changeset the outcome is `applied` (with the transaction id the shape stream will carry) or
 * `rejected` with a typed reason; either is stored under the client changeset id, so a retry
 * returns the first outcome.
 *
 * Who made it: the changeset's `user_id` when given (an org device, enrolled by staff, signs anyone
 * in the club in offline and uploads each user's changesets under the one device token; each is
 * authorised as *that* user, re-read now), else the token's user. The activity row says who
 * ("Name via Device <device name>"), when (the time the change was made on the device, never later
 * than HQ's clock; `hq_changeset.received_at` keeps when HQ received it) and from which device
 * (`hq_changeset.device_id`, and the device's name in `actor_name`). A changeset under another
 * user's token needs that author's own attestation (sync/write/approvals.ts) when it sets or
 * withdraws an RTP sign-off (else rejected `signoff_unverified`) or does anything the token's own
 * user could not do themselves (models/authorship.ts; else rejected `author_unverified`). The
 * activity time is the device's `created_at` bounded by HQ's clock and the token's issue time
 * ({@link recordedAt}); the activity line is the device's summary as plain bounded text
 * ({@link uploadedSummary}).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import type { PlannedChangeset, RowChange, RuleActor, StoredRowFacts } from '../../models/changeset';
import { authorizeChange, canonicalJson, clearsPinHash, LAST_OWNER_REFUSAL, mayReadRow, NOW_PLACEHOLDER, removesOwner } from '../../models/changeset';
import { AppError, type ErrorCode } from '../../models/errors';
import type { FeeCodeHistory, NumericHistory, NumericHistoryEntry } from '../../models/policy';
import {
  buildFeeCodeHistory,
  cumulativeTargets,
  evaluatePolicy,
  feeCodeTargets,
  numericHistoryKey,
  OWNER_AUTHORITY_CODES,
  signoffFieldsSet,
  type PolicyResult,
} from '../../models/policy';
import type { Role } from '../../models/roles';
import { hasPermission, NEEDS_OWNER_APPROVER, SELF_SCOPED_ROLES } from '../../models/roles';
import type { ChangesetOutcome, ContentHashVersion, CurrentRow, RejectionReason, UploadedChangeset } from '../../models/sync';
import { CONTENT_HASH_VERSION, uploadHashPayload } from '../../models/sync';
import type { TableName } from '../../models/tables';
import { isTableName, TABLES } from '../../models/tables';
import { cleanOneLine } from '../../models/text';
import { uploaderCannotVouch } from '../../models/authorship';
import { NO_ATHLETE, withTenant } from '../pg/db';
import { verifyAuthorAttestation, verifyOwnerApproval } from './approvals';
import { failProposal, lockProposal, proposalMismatch, settleProposal } from './proposals';
import type { Principal } from './principal';
import { readTargets, uploaderActor } from './targets';

/** Clinics sit in time zones up to UTC+14: a clinical date is "in the future" only past that. */
const MAX_CLINIC_UTC_OFFSET_MS = 14 * 3_600_000;

/** Options of {@link applyUploadedChangeset}. */
export interface ApplyOptions {
  now?: () => Date;
}

/** The error code of each rejection reason (what a client would do about it; see models/errors.ts). */
const REJECTION_CODE: Readonly<Record<RejectionReason, ErrorCode>> = {
  stale: 'Conflict',
  forbidden: 'Forbidden',
  not_found: 'NotFound',
  validation: 'Validation',
  policy: 'Forbidden',
  // The owner's approval it claims is not proven by that owner's own device token: an owner must approve it.
  approval_unverified: 'Forbidden',
  // An RTP sign-off authored by someone other than the token's user, without that author's own attestation.
  signoff_unverified: 'Forbidden',
  // Authored by someone other than the token's user, beyond what the token's user may do, without that author's attestation.
  author_unverified: 'Forbidden',
  idempotency_mismatch: 'Conflict',
};

/**
 * Thrown inside a changeset's transaction to roll it back and answer `rejected` (never leaves
 * this module: {@link applyUploadedChangeset} records it as the outcome). `kind` is the
 * rejection reason; `code` its {@link ErrorCode}.
 */
class Rejection extends AppError {
  readonly kind: RejectionReason;
  /**
   * False when the outcome must not be stored under the changeset id: the id is a waiting
   * proposal's and the upload is not that proposal (another author or content). Storing it would
   * make the owner's later approval of the real proposal an "id already used" (idempotency_mismatch).
   */
  recorded = true;
  constructor(readonly outcome: Omit<Extract<ChangesetOutcome, { status: 'rejected' }>, 'changeset_id' | 'replayed'>) {
    super({ code: REJECTION_CODE[outcome.reason], message: outcome.message, kind: outcome.reason });
    this.name = 'Rejection';
    this.kind = outcome.reason;
  }
}

function reject(
  reason: RejectionReason,
  message: string,
  extra: Partial<Omit<Extract<ChangesetOutcome, { status: 'rejected' }>, 'status' | 'reason' | 'message'>> = {},
): Rejection {
  return new Rejection({ status: 'rejected', reason, message, ...extra });
}

/**
 * SHA-256 (hex) of the canonical JSON of models/sync.ts `uploadHashPayload` of `cs` as uploaded:
 * version 2 (default) covers the verb, the row changes, the author (`user_id`) and the approver
 * (`approved_by`); version 1 (hashes stored before HQ migration 0008) the verb and changes only.
 */
export function uploadContentHash(
  cs: Pick<UploadedChangeset, 'verb' | 'changes'> & { user_id?: string | null; approved_by?: string | null },
  version: ContentHashVersion = CONTENT_HASH_VERSION,
): string {
  return createHash('sha256')
    .update(canonicalJson(uploadHashPayload(cs, version)))
    .digest('hex');
}

/** Both versions of an upload's content hash: a stored hash is compared with the one of its own version. */
export type ContentHashes = Readonly<Record<ContentHashVersion, string>>;
function contentHashes(cs: UploadedChangeset): ContentHashes {
  return { 1: uploadContentHash(cs, 1), 2: uploadContentHash(cs, 2) };
}

const q = (ident: string): string => `"${ident.replace(/"/g, '""')}"`;

/** Record value → Postgres parameter (objects as JSON text, as on the device). */
function encode(v: unknown): unknown {
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  return v ?? null;
}

/** The stored row as a device may see it (an account's PIN hash never leaves HQ in a response). */
function deviceView(table: string, row: Record<string, unknown>): Record<string, unknown> {
  if (table !== 'app_user') return row;
  const { pin_hash: _hidden, ...rest } = row;
  return rest;
}

/**
 * HQ's row for a refusal's `current`, or null when the account whose token uploaded (`principal`,
 * never the changeset's claimed author) may not read its table: a conflict reply must not show rows
 * the uploader's role cannot read (issue 12 re-review: an admin naming a doctor as author got an
 * injury's clinician notes back in a `stale` reply). Rows were read under the uploader's tenant.
 */
function currentRowFor(principal: Principal, table: string, row: Record<string, unknown>): Record<string, unknown> | null {
  return mayReadRow(principal.role, table, row) ? deviceView(table, row) : null;
}

interface UserRow {
  id: string;
  org_id: string;
  display_name: string;
  role: string;
  active: boolean;
  linked_athlete_id: string | null;
  deleted_at: string | null;
}

/**
 * Apply one uploaded changeset for `principal`. Never throws for a rule or data problem (those
 * become a `rejected` outcome); throws only when the database itself fails (the request then
 * answers 503 and the device retries, idempotently).
 */
export async function applyUploadedChangeset(pool: pg.Pool, principal: Principal, cs: UploadedChangeset, opts: ApplyOptions = {}): Promise<ChangesetOutcome> {
  return outcomeForUploader(principal, cs, await applyForOutcome(pool, principal, cs, opts));
}

/** The tables a changeset writes that `principal`'s role may not read (unknown table names count as unreadable). */
function unreadableTables(principal: Principal, cs: UploadedChangeset): string[] {
  return [...new Set(cs.changes.map((ch) => ch.table))].filter((t) => !isTableName(t) || !hasPermission(principal.role, TABLES[t].read));
}

/**
 * `outcome` as the account whose token uploaded (`principal`) may see it, fresh or replayed from
 * the stored first outcome: HQ's rows in `current` only for tables that account may read, and,
 * when the changeset names another author and writes a table the uploader may not read, a
 * `forbidden`, `validation` or `policy` refusal in general words without the policy detail (those
 * are worded by the author's rules and may quote the author's records: an RTP sign-off's stage, a
 * fee's billed price). The stored outcome keeps the full wording for the author's own token.
 */
export function outcomeForUploader(principal: Principal, cs: UploadedChangeset, outcome: ChangesetOutcome): ChangesetOutcome {
  if (outcome.status !== 'rejected') return outcome;
  const out = { ...outcome };
  if (out.current) out.current = out.current.map((r) => (r.row && mayReadRow(principal.role, r.table, r.row) ? r : { ...r, row: null }));
  const hidden = unreadableTables(principal, cs);
  if (cs.user_id && cs.user_id !== principal.userId && hidden.length > 0 && ['forbidden', 'validation', 'policy'].includes(out.reason)) {
    delete out.policy;
    out.message = `HQ refused this change for the user it names as its author. The reason concerns records (${hidden.join(', ')}) that this device's HQ account (${principal.displayName}, ${principal.role}) may not read, so it is not given here. Nothing was written. The author can see the current record and re-plan the change when signed in to HQ as themselves.`;
  }
  return out;
}

async function applyForOutcome(pool: pg.Pool, principal: Principal, cs: UploadedChangeset, opts: ApplyOptions): Promise<ChangesetOutcome> {
  const hashes = contentHashes(cs);
  if (cs.user_id && cs.user_id !== principal.userId && SELF_SCOPED_ROLES.has(principal.role as Role)) {
    // An athlete's device carries that athlete's account only (app.ts refuses this for the whole request too).
    return {
      changeset_id: cs.changeset_id,
      status: 'rejected',
      reason: 'forbidden',
      message: "An athlete's device uploads that athlete's changes only.",
      replayed: false,
    };
  }
  for (let attempt = 0; ; attempt++) {
    const proposal: ProposalContext = { matched: false, approverId: null };
    try {
      return await applyOnce(pool, principal, cs, hashes, opts, proposal);
    } catch (e) {
      if (e instanceof Rejection) {
        const outcome = e.recorded
          ? await recordRejection(pool, principal, cs, hashes, e)
          : ({ changeset_id: cs.changeset_id, ...e.outcome, replayed: false } satisfies ChangesetOutcome);
        // The owner-approved change of a proposal synced through HQ was refused: every device sees it failed.
        if (proposal.matched && outcome.status === 'rejected')
          await failProposal(pool, principal, outcome, proposal.approverId, (opts.now ?? (() => new Date()))().toISOString()).catch(() => undefined);
        return outcome;
      }
      const code = (e as { code?: string }).code;
      if ((code === '40001' || code === '40P01') && attempt < 2) continue; // serialization failure / deadlock: retry
      if (code === '23505' && (e as { constraint?: string }).constraint === 'wellness_one_per_day') {
        // HQ 0007: another device stored this athlete's wellness for the day first.
        return recordRejection(
          pool,
          principal,
          cs,
          hashes,
          reject(
            'validation',
            'Wellness for this athlete and day was already recorded on another device. Nothing was written; reload the day to see the stored answers and submit again to replace them.',
          ),
        );
      }
      if (code === '23505') {
        // A unique value already taken at HQ. An id (activity_id, or a row id another org's row
        // holds, which RLS hides from the version check) says nothing of where: the raw Postgres
        // message would name the key and value and confirm the other row exists.
        const constraint = (e as { constraint?: string }).constraint ?? '';
        const what = /_pkey$/.test(constraint)
          ? constraint === 'activity_pkey'
            ? 'its activity_id'
            : `the id of a ${constraint.replace(/_pkey$/, '')} row it inserts`
          : `a value that must be unique (${constraint || 'a unique constraint'})`;
        return recordRejection(
          pool,
          principal,
          cs,
          hashes,
          reject('validation', `HQ cannot use ${what} for this change. Nothing was written; re-plan the change so it gets new ids, or change that value.`),
        );
      }
      if (code && /^(22|23)/.test(code)) {
        // Data exception or integrity violation the rules did not foresee: the database refused it.
        return recordRejection(
          pool,
          principal,
          cs,
          hashes,
          reject('validation', `The database refused this change: ${(e as Error).message}. Nothing was written.`),
        );
      }
      throw e;
    }
  }
}

async function priorOutcome(c: pg.PoolClient, cs: UploadedChangeset, hashes: ContentHashes, userId: string): Promise<ChangesetOutcome | null> {
  const prior = await c.query<{ content_hash: string; hash_version: ContentHashVersion; outcome: ChangesetOutcome; user_id: string }>(
    'SELECT content_hash, hash_version, outcome, user_id FROM hq_changeset WHERE id = $1',
    [cs.changeset_id],
  );
  const p = prior.rows[0];
  if (!p) return null;
  // Only the uploader's own first outcome is replayed; another user's id is simply "in use".
  // The stored hash is compared with this upload's hash of the same version (HQ 0008).
  if (p.content_hash !== hashes[p.hash_version] || p.user_id !== userId) {
    return {
      changeset_id: cs.changeset_id,
      status: 'rejected',
      reason: 'idempotency_mismatch',
      message: 'This changeset id was already used for a different change. Give a new change a new id.',
      replayed: false,
    };
  }
  return { ...p.outcome, replayed: true };
}

/** The user a changeset is applied for: its `user_id` (checked in {@link applyUploadedChangeset}), else the token's. */
function actingUserId(principal: Principal, cs: UploadedChangeset): string {
  return cs.user_id ?? principal.userId;
}

/**
 * How long before its device token was issued a device may date a change (`created_at`): a
 * laptop used before it was enrolled, or a clock a little behind. 7 days, in ms.
 */
export const CREATED_AT_BEFORE_ENROLMENT_MS = 7 * 86_400_000;

/**
 * When the activity row says the change was made: the device's `created_at`, clamped into
 * [`enrolledAt` − {@link CREATED_AT_BEFORE_ENROLMENT_MS}, `now`] (a device clock ahead of HQ
 * cannot date a change into the future, and no device can back-date one to before it was
 * enrolled, e.g. "2019-01-01"); absent or unparseable: HQ's now. Clamped, never rejected: the
 * change itself is kept, only its time is bounded (`hq_changeset.received_at` keeps the arrival).
 * `enrolledAt` absent: only the upper bound applies.
 */
export function recordedAt(deviceCreatedAt: string | undefined, now: Date, enrolledAt?: string): string {
  const t = deviceCreatedAt ? Date.parse(deviceCreatedAt) : Number.NaN;
  if (Number.isNaN(t) || t > now.getTime()) return now.toISOString();
  const enrolled = enrolledAt ? Date.parse(enrolledAt) : Number.NaN;
  const floor = Number.isNaN(enrolled) ? Number.NEGATIVE_INFINITY : Math.min(enrolled - CREATED_AT_BEFORE_ENROLMENT_MS, now.getTime());
  return new Date(Math.max(t, floor)).toISOString();
}

/** Longest activity summary HQ stores from a device, characters (longer ones end in "…"). */
export const MAX_UPLOADED_SUMMARY = 200;

/**
 * The activity line HQ stores for an upload: the device's `summary` as plain one-line text
 * (control, invisible and text-direction characters removed, whitespace runs collapsed, NFKC;
 * models/text.ts `cleanOneLine`), at most {@link MAX_UPLOADED_SUMMARY} characters; the verb when
 * absent or blank after cleaning. It stays the device's words: the activity row also names the
 * verb's author, device and the changeset id whose row changes are the record.
 */
export function uploadedSummary(summary: string | undefined, verb: string): string {
  const clean = cleanOneLine((summary ?? '').replace(/\s+/g, ' '));
  if (!clean) return cleanOneLine(verb).slice(0, MAX_UPLOADED_SUMMARY) || 'change';
  return clean.length > MAX_UPLOADED_SUMMARY ? `${clean.slice(0, MAX_UPLOADED_SUMMARY - 1)}…` : clean;
}

/**
 * Whether the device's expected version of update `change` is the one HQ gave the row: when the
 * upload names the changeset of the device that version counts (`based_on`, models/sync.ts), HQ
 * must have applied that changeset and given this row exactly `change.version`. A version the
 * device reached through its own change HQ never applied can coincide with one HQ reached through
 * another device's write (issue 12); the version check alone would then apply over that write.
 * True when no base is named. Reads `hq_changeset` in the applying transaction `c` (the author's tenant).
 */
async function baseHolds(c: pg.PoolClient, cs: UploadedChangeset, change: Extract<RowChange, { op: 'update' }>): Promise<boolean> {
  const base = cs.based_on?.find((b) => b.table === change.table && b.id === change.id);
  if (!base) return true;
  const r = await c.query<{ v: string | null }>(`SELECT outcome->'versions'->>$2 AS v FROM hq_changeset WHERE id = $1 AND status = 'applied'`, [
    base.changeset_id,
    change.id,
  ]);
  return r.rows.length === 1 && r.rows[0]!.v !== null && Number(r.rows[0]!.v) === change.version;
}

/** What the apply learnt about the proposal a changeset approves (HQ 0010), for the rejection path. */
interface ProposalContext {
  /** The changeset is the approved change of a waiting `hq_proposal`, by its proposer with its content. */
  matched: boolean;
  approverId: string | null;
}

async function applyOnce(
  pool: pg.Pool,
  principal: Principal,
  cs: UploadedChangeset,
  hashes: ContentHashes,
  opts: ApplyOptions,
  proposalCtx: ProposalContext,
): Promise<ChangesetOutcome> {
  const userId = actingUserId(principal, cs);
  return withTenant(pool, { orgId: principal.orgId, userId }, async (c) => {
    // A proposal synced through HQ (sync/write/proposals.ts) is applied at most once: its row is
    // locked first, so a second approval (another device) waits here and then finds it decided.
    const proposal = await lockProposal(c, cs.changeset_id);
    const prior = await priorOutcome(c, cs, hashes, userId);
    if (prior) return prior;
    if (proposal) {
      const mismatch = proposalMismatch(proposal, userId, hashes[1]);
      if (mismatch) {
        const r = reject(mismatch.reason, mismatch.message);
        r.recorded = false; // the id stays the proposal's (see Rejection.recorded)
        throw r;
      }
      proposalCtx.matched = true;
      proposalCtx.approverId = cs.approved_by ?? null;
    }

    // 1. Re-read the user: role, active flag and self-scope come from HQ's row, not the device.
    //    Row-level security shows only this org's accounts, so another org's user is "not found".
    const user = (await c.query<UserRow>('SELECT id, org_id, display_name, role, active, linked_athlete_id, deleted_at FROM app_user WHERE id = $1', [userId]))
      .rows[0];
    if (!user || user.deleted_at || !user.active)
      throw reject('forbidden', 'This account is deactivated or no longer exists at HQ; nothing was written. Ask a club administrator.');
    const actor: RuleActor = { userId: user.id, orgId: user.org_id, role: user.role as Role, linkedAthleteId: user.linked_athlete_id, active: user.active };
    if (SELF_SCOPED_ROLES.has(actor.role)) {
      await c.query("SELECT set_config('hq.athlete_id', $1, true)", [actor.linkedAthleteId ?? NO_ATHLETE]);
    }

    const now = (opts.now ?? (() => new Date()))();
    const nowIso = now.toISOString();

    // 2. Read every target row (locked) and rebuild each update's `before` from it: the rules judge
    //    what the change does to the row HQ holds, not what the device says it held.
    const changes: RowChange[] = cs.changes.map((ch) =>
      ch.op === 'delete'
        ? (ch as RowChange)
        : ({ ...ch, after: Object.fromEntries(Object.entries(ch.after).map(([k, v]) => [k, v === NOW_PLACEHOLDER ? nowIso : v])) } as RowChange),
    );
    const insertedHere = new Set(changes.filter((ch) => ch.op === 'insert').map((ch) => `${ch.table}:${ch.id}`));
    const targets = await readTargets(c, changes, { lock: true });
    /** The stored row each server change was judged against (for the uploader's check, step 2b). */
    const factsOf = new Map<RowChange, StoredRowFacts | null>(targets.map((t) => [t.serverChange, t.facts]));

    // 2b. Who made it, before any rule or policy runs as the claimed author: a changeset naming as
    // its author someone other than the token's user (a shared device uploads everyone's changes)
    // is the author's claim only, and a refusal worded by the author's rules would show the
    // uploader what only the author may read (issue 12 review: an RTP sign-off lock or a fee's
    // billed price). It needs that author's own attestation (sync/write/approvals.ts) when it sets
    // or withdraws an RTP sign-off (the signer's own act), or when the token's own user could not
    // have made it themselves (models/authorship.ts: a verb or row change beyond their role, any
    // account, device or settings change). A PIN checked offline on the device proves nothing.
    if (actor.userId !== principal.userId) {
      const judged = targets.map((t) => t.serverChange);
      const signoffFields = judged.flatMap((ch) => signoffFieldsSet(ch).map((f) => ({ ch, f })));
      const why = signoffFields.length > 0 ? null : uploaderCannotVouch(uploaderActor(principal), cs.verb, judged, (ch) => factsOf.get(ch) ?? null);
      if (signoffFields.length > 0 || why) {
        const check = await verifyAuthorAttestation(c, principal, actor.userId, cs.changeset_id, hashes, why ? 'author' : 'signoff', why ?? '');
        if (!check.ok) {
          const first = signoffFields[0];
          throw reject(check.reason, check.message, first ? { table: first.ch.table, row_id: first.ch.id, field: first.f } : {});
        }
      }
    }

    // 2c. Authorise each change as its author, check references and versions.
    const stale: CurrentRow[] = [];
    const serverChanges: RowChange[] = [];
    for (const { change, serverChange, def, stored } of targets) {
      if (change.op === 'insert' && stored) {
        stale.push({
          table: def.name,
          id: change.id,
          expected_version: 0,
          actual_version: stored.version as number,
          row: currentRowFor(principal, def.name, stored),
        });
        serverChanges.push(change);
        continue;
      }
      const decision = authorizeChange(actor, serverChange, factsOf.get(serverChange) ?? null);
      if (!decision.ok) {
        const reason: RejectionReason = decision.code === 'Forbidden' ? 'forbidden' : decision.code === 'NotFound' ? 'not_found' : 'validation';
        // HQ's row goes with the refusal when the uploader may still read it (the row was read under
        // their tenant and self-scope), so the conflict shows "HQ now" next to their value.
        const row = change.op === 'update' && stored && mayReadRow(actor.role, def.name, stored) ? currentRowFor(principal, def.name, stored) : null;
        const current: CurrentRow[] =
          row && stored && change.op === 'update'
            ? [{ table: def.name, id: change.id, expected_version: change.version, actual_version: stored.version as number, row }]
            : [];
        throw reject(reason, decision.reason, {
          table: def.name,
          row_id: change.id,
          ...(decision.field ? { field: decision.field } : {}),
          ...(current.length ? { current } : {}),
        });
      }
      if (change.op !== 'delete') {
        for (const [col, refTable] of Object.entries(def.references ?? {})) {
          const v = change.after[col];
          if (typeof v !== 'string' || insertedHere.has(`${refTable}:${v}`)) continue;
          const ref = await c.query(`SELECT 1 FROM ${q(refTable)} WHERE id = $1 AND deleted_at IS NULL`, [v]);
          if (ref.rowCount === 0)
            throw reject('not_found', `${refTable} ${v} (referenced by ${def.name}.${col}) was not found.`, { table: def.name, row_id: change.id, field: col });
        }
      }
      if (change.op === 'update' && stored && (stored.version !== change.version || !(await baseHolds(c, cs, change)))) {
        stale.push({
          table: def.name,
          id: change.id,
          expected_version: change.version,
          actual_version: stored.version as number,
          row: currentRowFor(principal, def.name, stored),
        });
      }
      serverChanges.push(serverChange);
    }
    if (stale.length > 0) {
      throw reject(
        'stale',
        `${stale.length} record(s) changed at HQ since this change was prepared. Nothing was written; the current rows are attached — re-plan the change or discard it.`,
        { current: stale },
      );
    }

    // The club keeps an active owner (as on the device, main/data/changesets.ts checkChangeset). The owner
    // rows are locked, so two uploads each demoting a different owner cannot both see the other still there.
    const ownersOut = serverChanges.filter((ch) => removesOwner(ch, factsOf.get(ch)?.row)).map((ch) => ch.id);
    if (ownersOut.length > 0) {
      const owners = await c.query<{ id: string }>(
        "SELECT id FROM app_user WHERE org_id = $1 AND role = 'owner' AND active AND deleted_at IS NULL FOR UPDATE",
        [actor.orgId],
      );
      if (owners.rows.every((r) => ownersOut.includes(r.id))) throw reject('forbidden', LAST_OWNER_REFUSAL, { table: 'app_user', row_id: ownersOut[0]! });
    }

    // 3. Policy limits, as at proposal time on the device.
    const planned: PlannedChangeset = { verb: cs.verb, summary: uploadedSummary(cs.summary, cs.verb), changes: serverChanges };
    const policy = await hqPolicy(c, actor, planned, now);
    if (policy.verdict === 'deny') throw reject('policy', policy.reasons.join(' '), { policy: policy.decisions });
    // An owner as the author stands in for the approval only under the same proof: an org device
    // can name any user as a changeset's author.
    const ownerAuthority = actor.role === NEEDS_OWNER_APPROVER && policy.decisions.some((d) => OWNER_AUTHORITY_CODES.has(d.code));
    // The owner whose approval (or own act) HQ verified: it re-bases the cumulative price rule.
    let ownerApprovedBy: string | null = null;
    if (policy.verdict === 'needs_owner' || ownerAuthority) {
      // The approval must be an act HQ can verify (sync/write/approvals.ts): the named owner's own
      // device token uploaded this, or recorded an approval of this id and content first.
      const approverId = cs.approved_by ?? (actor.role === NEEDS_OWNER_APPROVER ? actor.userId : null);
      const check = await verifyOwnerApproval(c, principal, approverId, cs.changeset_id, hashes);
      if (!check.ok) {
        const why = policy.reasons.length ? policy.reasons : policy.decisions.filter((d) => OWNER_AUTHORITY_CODES.has(d.code)).map((d) => d.reason);
        throw reject(check.reason, `${why.join(' ')} ${check.message}`, { policy: policy.decisions });
      }
      ownerApprovedBy = check.approverId;
    } else if (actor.role === NEEDS_OWNER_APPROVER && principal.userId === actor.userId) {
      ownerApprovedBy = actor.userId;
    } else if (cs.approved_by) {
      const check = await verifyOwnerApproval(c, principal, cs.approved_by, cs.changeset_id, hashes);
      if (check.ok) ownerApprovedBy = check.approverId;
    }

    // 4. Write, bumping versions.
    const versions: Record<string, number> = {};
    for (const change of serverChanges) {
      const table = q(change.table);
      if (change.op === 'delete') throw reject('forbidden', 'Hard delete is not supported.');
      if (change.op === 'insert') {
        const values: Record<string, unknown> = { id: change.id, org_id: actor.orgId, created_at: nowIso, updated_at: nowIso, version: 1, ...change.after };
        const cols = Object.keys(values);
        await c.query(
          `INSERT INTO ${table} (${cols.map(q).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
          cols.map((k) => encode(values[k])),
        );
        versions[change.id] = 1;
      } else {
        const cols = Object.keys(change.after);
        // An account newly linked to an athlete's record (or made an athlete account) loses its PIN
        // (serverChange's `before` is the row HQ holds, read above).
        const sets = [...cols.map((k, i) => `${q(k)} = $${i + 1}`), ...(clearsPinHash(change, change.before) ? ['pin_hash = NULL'] : [])];
        const n = cols.length;
        const res = await c.query(
          `UPDATE ${table} SET ${[...sets, 'version = version + 1', `updated_at = $${n + 1}`].join(', ')} WHERE id = $${n + 2} AND version = $${n + 3}`,
          [...cols.map((k) => encode(change.after[k])), nowIso, change.id, change.version],
        );
        if (res.rowCount !== 1) throw reject('stale', `${change.table} ${change.id} changed while this change was being applied. Nothing was written.`);
        versions[change.id] = change.version + 1;
      }
    }

    if (proposal)
      await settleProposal(c, proposal.id, cs.approved_by ?? (actor.role === NEEDS_OWNER_APPROVER ? actor.userId : null), principal.deviceName, nowIso);

    // 5. The changeset log (idempotency) and the activity row, in the same transaction.
    const txid = (await c.query<{ txid: string }>('SELECT pg_current_xact_id()::xid::text AS txid')).rows[0]!.txid;
    const activityId = cs.activity_id ?? uuidv7();
    const outcome: ChangesetOutcome = {
      changeset_id: cs.changeset_id,
      status: 'applied',
      txid,
      versions,
      activity_id: activityId,
      applied_at: nowIso,
      replayed: false,
    };
    await c.query(
      `INSERT INTO hq_changeset (id, org_id, user_id, device_id, verb, summary, content_hash, hash_version, status, txid, changes, outcome, owner_approved_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $11, 'applied', $8, $9, $10, $12)`,
      [
        cs.changeset_id,
        actor.orgId,
        actor.userId,
        principal.deviceId,
        cs.verb,
        planned.summary,
        hashes[CONTENT_HASH_VERSION],
        txid,
        // As applied: each \`before\` is HQ's own row (the cumulative price rule reads it back).
        JSON.stringify(serverChanges),
        JSON.stringify(outcome),
        CONTENT_HASH_VERSION,
        ownerApprovedBy,
      ],
    );
    const first = serverChanges[0]!;
    await c.query(
      `INSERT INTO activity (id, org_id, created_at, actor_user_id, actor_name, via_assistant, run_id, record_table, record_id, summary, changeset_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        activityId,
        actor.orgId,
        recordedAt(cs.created_at, now, principal.enrolledAt),
        actor.userId,
        activityActorName(user.display_name, cs.via ?? null, principal.deviceName),
        Boolean(cs.via),
        cs.run_id ?? null,
        first.table,
        first.id,
        planned.summary,
        cs.changeset_id,
      ],
    );
    return outcome;
  });
}

/**
 * The policy engine (models/policy.ts `evaluatePolicy`) as HQ runs it for `actor` on `planned` at
 * `now`: "today" as the furthest clinic time zone has it, and the cumulative 20 % rule fed HQ's
 * own applied history ({@link hqNumericHistory}), and a reused fee code judged from HQ's own rate
 * items and log ({@link hqFeeCodeHistory}). Runs in the caller's tenant transaction `c`.
 */
export async function hqPolicy(c: pg.PoolClient, actor: RuleActor, planned: PlannedChangeset, now: Date): Promise<PolicyResult> {
  const today = new Date(now.getTime() + MAX_CLINIC_UTC_OFFSET_MS).toISOString().slice(0, 10);
  const targets = cumulativeTargets(planned.changes);
  const codes = feeCodeTargets(planned.changes);
  return evaluatePolicy(actor, planned, {
    today,
    now: now.toISOString(),
    ...(targets.length ? { history: await hqNumericHistory(c, targets) } : {}),
    ...(codes.codes.length ? { feeCodes: await hqFeeCodeHistory(c, codes.codes, codes.renamedIds) } : {}),
  });
}

/**
 * HQ's own record of who held fee codes `codes` before (models/policy.ts `buildFeeCodeHistory`):
 * the organisation's rate items as HQ holds them (live or deleted) and the rate item changes of its
 * applied `hq_changeset` rows, in apply order (never the uploading device's claim). Runs in the
 * caller's tenant transaction (row level security scopes both to the organisation).
 */
async function hqFeeCodeHistory(c: pg.PoolClient, codes: readonly string[], renamedIds: readonly string[]): Promise<FeeCodeHistory> {
  const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());
  const items = (
    await c.query<{ id: string; code: string; name: string; price_cents: number; updated_at: unknown; deleted_at: unknown }>(
      'SELECT id::text AS id, code, name, price_cents, updated_at, deleted_at FROM rate_item',
    )
  ).rows.map((r) => ({ ...r, updated_at: iso(r.updated_at), deleted_at: r.deleted_at === null ? null : iso(r.deleted_at) }));
  const log = (
    await c.query<{ changes: RowChange[]; at: string | null }>(
      `SELECT changes, outcome->>'applied_at' AS at FROM hq_changeset
        WHERE status = 'applied' AND changes @> '[{"table": "rate_item"}]'::jsonb ORDER BY received_at, outcome->>'applied_at', id`,
    )
  ).rows.map((r) => ({ at: r.at ?? new Date(0).toISOString(), changes: r.changes }));
  return buildFeeCodeHistory(codes, renamedIds, items, log);
}

/**
 * HQ's own applied history of each value `targets` names (models/policy.ts
 * `CUMULATIVE_NUMERIC_FIELDS`), oldest first, for the cumulative 20% rule: from applied
 * `hq_changeset` rows (never the uploading device's claim). Each entry's `before` is the previous
 * entry's `after` (what HQ wrote); the first one's is the `before` stored with it (HQ's row at the
 * time since HQ 0009; a device's claim for older rows). `ownerApproved`: HQ verified an owner's
 * approval or own act (`owner_approved_by`, HQ 0009). Runs in the caller's tenant transaction.
 */
async function hqNumericHistory(c: pg.PoolClient, targets: readonly { table: TableName; id: string; field: string }[]): Promise<NumericHistory> {
  const out = new Map<string, NumericHistoryEntry[]>();
  for (const t of targets) {
    const key = numericHistoryKey(t.table, t.id, t.field);
    if (out.has(key)) continue;
    const rows = (
      await c.query<{ changes: RowChange[]; at: string | null; owner_approved_by: string | null }>(
        `SELECT changes, outcome->>'applied_at' AS at, owner_approved_by FROM hq_changeset
          WHERE status = 'applied' AND changes @> $1::jsonb ORDER BY received_at, outcome->>'applied_at', id`,
        [JSON.stringify([{ table: t.table, id: t.id }])],
      )
    ).rows;
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    const entries: NumericHistoryEntry[] = [];
    for (const r of rows) {
      for (const ch of r.changes) {
        if (ch.op !== 'update' || ch.table !== t.table || ch.id !== t.id || !(t.field in ch.after)) continue;
        const prev = entries[entries.length - 1];
        entries.push({
          at: r.at ?? new Date(0).toISOString(),
          before: prev ? prev.after : num(ch.before[t.field]),
          after: num(ch.after[t.field]),
          ownerApproved: r.owner_approved_by !== null,
        });
      }
    }
    out.set(key, entries);
  }
  return out;
}

/**
 * The activity line's actor: "Lowri Pendry via Device Physio laptop", or, for a change the
 * assistant (or an MCP client) prepared and the user approved on the device, "Lowri Pendry via
 * Assistant via Device Physio laptop".
 */
export function activityActorName(displayName: string, via: string | null, deviceName: string): string {
  return `${displayName}${via ? ` via ${via}` : ''} via Device ${deviceName}`;
}

async function recordRejection(pool: pg.Pool, principal: Principal, cs: UploadedChangeset, hashes: ContentHashes, r: Rejection): Promise<ChangesetOutcome> {
  const outcome: ChangesetOutcome = { changeset_id: cs.changeset_id, ...r.outcome, replayed: false };
  const userId = actingUserId(principal, cs);
  await withTenant(pool, { orgId: principal.orgId, userId }, async (c) => {
    await c.query(
      `INSERT INTO hq_changeset (id, org_id, user_id, device_id, verb, summary, content_hash, hash_version, status, txid, changes, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7, $10, 'rejected', NULL, $8, $9) ON CONFLICT (id) DO NOTHING`,
      [
        cs.changeset_id,
        principal.orgId,
        userId,
        principal.deviceId,
        cs.verb,
        uploadedSummary(cs.summary, cs.verb),
        hashes[CONTENT_HASH_VERSION],
        JSON.stringify(cs.changes),
        JSON.stringify(outcome),
        CONTENT_HASH_VERSION,
      ],
    );
  }).catch(() => undefined); // storing the first outcome is best effort; the rejection itself stands
  return outcome;
}
