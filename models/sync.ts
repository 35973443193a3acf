/**
 * The HQ write API's wire format (POST /v1/changesets), shared by the device's uploader and the
 * HQ server: what a device uploads (its outbox entries: `{ changeset_id, verb, changes }`, plus
 * optional context the activity row needs) and the per-changeset outcome HQ returns.
 * Source: shared/design/sync.md "Write path".
 */
import { z } from 'zod';
import type { PolicyDecision } from './policy';
import { Id, IsoDateTime } from './records';

/** At most this many changesets per upload request. */
export const MAX_CHANGESETS_PER_UPLOAD = 100;
/** At most this many row changes in one uploaded changeset (an Undo of a 50-row change is 50). */
export const MAX_CHANGES_PER_CHANGESET = 500;

const Fields = z.record(z.string().max(64), z.unknown());
const TableField = z.string().min(1).max(64);

/** One row change as the outbox stores it (models/changeset.ts RowChange). */
export const UploadedRowChange = z.discriminatedUnion('op', [
  z.object({ op: z.literal('insert'), table: TableField, id: Id, after: Fields }).strict(),
  z.object({ op: z.literal('update'), table: TableField, id: Id, version: z.number().int().min(1), before: Fields, after: Fields }).strict(),
  z.object({ op: z.literal('delete'), table: TableField, id: Id, version: z.number().int().min(1) }).strict(),
]);

/** One outbox changeset. `changeset_id` is the client changeset id (the idempotency key). */
export const UploadedChangeset = z
  .object({
    changeset_id: Id,
    verb: z.string().min(1).max(100),
    changes: z.array(UploadedRowChange).min(1).max(MAX_CHANGES_PER_CHANGESET),
    /** The activity line ("Log 22 session loads for U19"); defaults to the verb. */
    summary: z.string().min(1).max(500).optional(),
    /** When given, must be the token's org / user (a changeset for another org is refused). */
    org_id: Id.optional(),
    user_id: Id.optional(),
    /** When the changeset was made on the device. */
    created_at: IsoDateTime.optional(),
    /** Who prepared it for the user: the activity row then reads "Name via Assistant via Device …". */
    via: z.enum(['Assistant', 'MCP client']).nullable().optional(),
    run_id: z.string().max(100).nullable().optional(),
    /** The device's activity row id, so HQ writes the same row (one activity entry on every tier). */
    activity_id: Id.optional(),
    /**
     * For a changeset the policy marks *needs owner*: the owner who approved it on a device. A
     * claim only: HQ applies it when this upload comes with that owner's own device token, or that
     * owner's own device token recorded an approval of this changeset id and content first
     * (POST /v1/approvals); otherwise the changeset is rejected `approval_unverified`.
     */
    approved_by: Id.nullable().optional(),
    /**
     * Rows whose expected `version` counts an earlier changeset of this device that HQ had not
     * confirmed when this one was made (it still held the row on the device): for each, that
     * changeset's id. HQ applies the update only when it applied that changeset and gave the row
     * exactly the expected version; otherwise the version was reached some other way (another
     * device's write) and the upload is rejected `stale`. A device's optimistic versions can
     * coincide with HQ's (issue 12). Not part of the content hash: it can only refuse more.
     */
    based_on: z
      .array(z.object({ table: TableField, id: Id, changeset_id: Id }).strict())
      .max(MAX_CHANGES_PER_CHANGESET)
      .optional(),
  })
  .strict();
export type UploadedChangeset = z.infer<typeof UploadedChangeset>;

/**
 * Version of the upload content hash HQ computes now and that POST /v1/approvals records
 * ({@link uploadHashPayload}). Version 1 (before HQ migration 0008) covered `{verb, changes}` only:
 * who authored (`user_id`) and who approved (`approved_by`) were outside it, so an approval
 * recorded for a changeset still verified when those fields were swapped afterwards. Version 2
 * covers them too. Stored hashes keep their version (`hash_version` columns of `hq_approval` and
 * `hq_changeset`), so an approval or an upload recorded under version 1 still verifies.
 */
export const CONTENT_HASH_VERSION = 2;
/** A content hash version: 1 (legacy, `{verb, changes}`) or 2 ({@link CONTENT_HASH_VERSION}). */
export type ContentHashVersion = 1 | 2;

/**
 * What an uploaded changeset's content hash is taken over (SHA-256 of its canonical JSON,
 * models/changeset.ts `canonicalJson`; sync/write/apply.ts and main/data/sync.ts
 * `uploadContentHash` hash it). Version 2: `{v: 2, verb, changes, user_id, approved_by}`, the
 * last two `null` when absent (the author is then the uploading token's user); version 1:
 * `{verb, changes}`. The changes exactly as uploaded.
 */
export function uploadHashPayload(
  cs: Pick<UploadedChangeset, 'verb' | 'changes'> & { user_id?: string | null; approved_by?: string | null },
  version: ContentHashVersion = CONTENT_HASH_VERSION,
): Record<string, unknown> {
  if (version === 1) return { verb: cs.verb, changes: cs.changes };
  return { v: 2, verb: cs.verb, changes: cs.changes, user_id: cs.user_id ?? null, approved_by: cs.approved_by ?? null };
}

/** At most this many approvals per POST /v1/approvals request. */
export const MAX_APPROVALS_PER_UPLOAD = 100;

/**
 * One approval or attestation as a user's own device token records it at HQ (POST /v1/approvals):
 * an owner's approval of a changeset that needs an owner, or an author's attestation that they
 * made a changeset (an RTP sign-off uploaded from a shared device under another user's token).
 * Fields: the client changeset id and the SHA-256 (hex) of the canonical JSON of
 * {@link uploadHashPayload} (version {@link CONTENT_HASH_VERSION}: `{v, verb, changes, user_id,
 * approved_by}`) of the changeset exactly as it will be uploaded (sync/write/apply.ts and
 * main/data/sync.ts `uploadContentHash`). `approved_at`: when the
 * user approved or made it on the device (ISO-8601; clamped to HQ's clock).
 */
export const UploadedApproval = z
  .object({
    changeset_id: Id,
    content_hash: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in lower-case hex'),
    approved_at: IsoDateTime.optional(),
  })
  .strict();
export type UploadedApproval = z.infer<typeof UploadedApproval>;

/** The body of POST /v1/approvals. */
export const ApprovalUpload = z.object({ approvals: z.array(UploadedApproval).min(1).max(MAX_APPROVALS_PER_UPLOAD) }).strict();
export type ApprovalUpload = z.infer<typeof ApprovalUpload>;

/**
 * The answer of POST /v1/approvals, one per approval in request order: `recorded` (new),
 * `already_recorded` (the same approval again: idempotent). An approval of the same changeset id
 * for other content is refused for the whole request (409 Conflict).
 */
export interface ApprovalUploadResult {
  results: { changeset_id: string; status: 'recorded' | 'already_recorded' }[];
}

/** At most this many proposal events per POST /v1/proposals request. */
export const MAX_PROPOSAL_EVENTS_PER_UPLOAD = 50;

/**
 * One proposal event a device sends to HQ (POST /v1/proposals), in the order they happened there:
 * - `propose`: a change the policy marks *needs owner* was proposed on this device. HQ re-runs the
 *   policy on it for the proposer as HQ holds them (it must still need an owner), keeps it as an
 *   `hq_proposal` row (HQ migration 0010) and syncs it to the org's staff devices, so an owner
 *   signed in on any of them can review it. `permission`: the tool's gating permission, re-checked
 *   against the proposer's role when it is approved.
 * - `decline`: `decided_by` declined it (an owner) or withdrew it (the proposer). HQ accepts it
 *   from the decider's own device token, or for a withdrawal from an org device (which signs the
 *   proposer in), and only while the proposal still waits.
 * The owner's approval is not an event: it is the changeset itself, uploaded with the proposal's
 * id as changeset id (POST /v1/changesets), which HQ applies at most once.
 */
export const ProposalEvent = z.discriminatedUnion('op', [
  z
    .object({
      op: z.literal('propose'),
      changeset_id: Id,
      user_id: Id,
      verb: z.string().min(1).max(100),
      summary: z.string().min(1).max(500),
      changes: z.array(UploadedRowChange).min(1).max(MAX_CHANGES_PER_CHANGESET),
      source: z.enum(['assistant', 'mcp', 'page']),
      tool_name: z.string().min(1).max(100),
      title: z.string().min(1).max(200),
      permission: z.string().max(64).nullable(),
      created_at: IsoDateTime,
    })
    .strict(),
  z.object({ op: z.literal('decline'), changeset_id: Id, decided_by: Id, decided_at: IsoDateTime }).strict(),
]);
export type ProposalEvent = z.infer<typeof ProposalEvent>;

/** The body of POST /v1/proposals. */
export const ProposalUpload = z.object({ events: z.array(ProposalEvent).min(1).max(MAX_PROPOSAL_EVENTS_PER_UPLOAD) }).strict();
export type ProposalUpload = z.infer<typeof ProposalUpload>;

/**
 * HQ's answer per proposal event, in request order: `recorded` (new, or the same event again),
 * or `refused` with a typed code (models/errors.ts) and a message: `Validation` (it does not need
 * an owner at HQ, or names unknown tables or columns), `Forbidden` (the proposer or decider may
 * not, or HQ cannot verify who declined), `NotFound` (no such proposal), `Conflict` (the same id
 * with other content, or the proposal was already decided: `status` says how).
 */
export type ProposalEventOutcome =
  | { changeset_id: string; op: 'propose' | 'decline'; status: 'recorded' }
  | {
      changeset_id: string;
      op: 'propose' | 'decline';
      status: 'refused';
      code: 'Validation' | 'Forbidden' | 'NotFound' | 'Conflict';
      message: string;
      proposal_status?: string;
    };

/** The response of POST /v1/proposals. */
export interface ProposalUploadResult {
  results: ProposalEventOutcome[];
}

/** The body of POST /v1/changesets: changesets in outbox order. */
export const ChangesetUpload = z.object({ changesets: z.array(UploadedChangeset).min(1).max(MAX_CHANGESETS_PER_UPLOAD) }).strict();
export type ChangesetUpload = z.infer<typeof ChangesetUpload>;

/** Why HQ refused a changeset (nothing of it was written). */
export type RejectionReason =
  /** A row's version moved on (or an inserted id exists): `current` holds the server's rows. */
  | 'stale'
  /** The user's role (re-read at HQ) lacks a permission, or the account is deactivated. */
  | 'forbidden'
  /** A row it changes or points at does not exist in the user's org (or their self-scope). */
  | 'not_found'
  /** A value is out of bounds, or the database refused it (constraint). */
  | 'validation'
  /** The policy engine denies it, or it needs an owner's approval it does not carry. */
  | 'policy'
  /**
   * It needs an owner's approval and names one (`approved_by`, or an owner as its author), but HQ
   * holds no proof that owner approved this content: it was not uploaded with the owner's own
   * device token, and no approval of this changeset id and content hash was recorded by the
   * owner's own device (POST /v1/approvals). Re-plan it and have an owner approve it on a device
   * signed in to HQ as that owner.
   */
  | 'approval_unverified'
  /**
   * It sets or withdraws an RTP sign-off and names as its author (`user_id`) someone other than
   * the user of the uploading device token (a shared clinic device uploads everyone's changes),
   * but that author's own device token recorded no attestation of this changeset id and content
   * hash (POST /v1/approvals). A PIN checked offline on a device is no proof. Re-plan it and have
   * the signer sign in to HQ as themselves on that device (Settings → Sync) before signing again.
   */
  | 'signoff_unverified'
  /**
   * It names as its author (`user_id`) someone other than the user of the uploading device token,
   * and the token's own user could not have made it themselves (a verb or row change their role
   * does not allow, or any account, device or settings change: models/authorship.ts), but that
   * author's own device token recorded no attestation of this changeset id and content hash
   * (POST /v1/approvals). Re-plan it with the author signed in to HQ as themselves on that device.
   */
  | 'author_unverified'
  /** This changeset id was already used for different content. */
  | 'idempotency_mismatch';

/** A server row returned with a `stale` rejection (null: the row is gone or not visible). */
export interface CurrentRow {
  table: string;
  id: string;
  expected_version: number;
  actual_version: number | null;
  row: Record<string, unknown> | null;
}

/** The outcome of one uploaded changeset. `replayed` is true when a retry returns the first outcome. */
export type ChangesetOutcome =
  | {
      changeset_id: string;
      status: 'applied';
      /** `pg_current_xact_id()::xid` of the applying transaction: the shape stream's `txids` carry it. */
      txid: string;
      /** Row versions after apply, by row id. */
      versions: Record<string, number>;
      activity_id: string;
      applied_at: string;
      replayed: boolean;
    }
  | {
      changeset_id: string;
      status: 'rejected';
      reason: RejectionReason;
      message: string;
      table?: string;
      row_id?: string;
      field?: string;
      current?: CurrentRow[];
      policy?: PolicyDecision[];
      replayed: boolean;
    };

/**
 * Why a changeset is rejected unapplied because an earlier one of the same device changed one of
 * its rows and was rejected (`stale`): its expected versions count that change, so applying it
 * would overwrite whatever HQ holds at that version. HQ says it for a batch, the device for its
 * outbox (main/data/sync.ts `recordUploadOutcome`).
 */
export function dependentRejection(rejectedChangesetId: string): string {
  return `Made on top of an earlier change of this record from this device (changeset ${rejectedChangesetId}) that HQ rejected, so nothing of it was written. Re-plan it on the record as HQ holds it now, or discard it.`;
}

/** The response of POST /v1/changesets, one outcome per changeset in request order. */
export interface ChangesetUploadResult {
  results: ChangesetOutcome[];
}

/**
 * Shape values arrive in Postgres's text form (Electric's protocol). The HQ stores instants as
 * `timestamptz`, which arrive as `2026-11-29 10:00:00+00`; the device keeps ISO-8601 UTC
 * (`2026-11-29T10:00:00.000Z`). Give this to ShapeStream's `parser` option so rows reach SQLite
 * in the device's form. Dates (`YYYY-MM-DD`) and numbers need nothing.
 */
export function timestamptzToIso(value: string): string {
  // Fast path for what Postgres sends with TimeZone=UTC: `YYYY-MM-DD HH:MM:SS[.f{1,6}]+00`.
  if (value.length >= 22 && value.length <= 29 && value.endsWith('+00') && value.charCodeAt(10) === 32 && value.charCodeAt(4) === 45) {
    const frac = value.slice(19, -3);
    if (frac === '' || (frac.charCodeAt(0) === 46 && /^\.\d{1,6}$/.test(frac))) {
      const iso = `${value.slice(0, 10)}T${value.slice(11, 19)}${(frac || '.000').slice(0, 4).padEnd(4, '0')}Z`;
      if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(iso)) return iso;
    }
  }
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}(?::?\d{2})?)$/.exec(value);
  if (!m) return value;
  const zone = m[4] === 'Z' ? 'Z' : m[4]!.length === 3 ? `${m[4]}:00` : m[4]!.includes(':') ? m[4]! : `${m[4]!.slice(0, 3)}:${m[4]!.slice(3)}`;
  const ms = (m[3] ?? '.000').slice(0, 4).padEnd(4, '0');
  const t = Date.parse(`${m[1]}T${m[2]}${ms}${zone}`);
  return Number.isNaN(t) ? value : new Date(t).toISOString();
}

/** ShapeStream `parser` map for HQ shapes (see {@link timestamptzToIso}). */
export const HQ_SHAPE_PARSER = { timestamptz: timestamptzToIso } as const;

/** ShapeStream `parser` for `int8` columns (e.g. `video.size_bytes`): a JS number, as SQLite stores it. */
export function int8ToNumber(value: string): number {
  return Number(value);
}

/**
 * HQ's answer to `POST /v1/users/:id/pin` (sync/auth/account-pins.ts): the account's row `version`
 * and `updated_at` (ISO-8601 UTC, as {@link timestamptzToIso} gives the shape's copy) after the
 * PIN was written. The device stores them with the hash, so its next change of that account
 * expects HQ's version. Non-strict: a later HQ may say more.
 */
export const PinSetAtHq = z.object({
  user_id: z.string(),
  pin_set: z.literal(true),
  version: z.number().int().positive(),
  updated_at: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
});
export type PinSetAtHq = z.infer<typeof PinSetAtHq>;

// ---------------------------------------------------------------------------------------------
// Device side (main/sync/): what the engine reports to the app shell, the Sync page and the CLI.

/**
 * The device's sync state, for the app shell and Settings → Sync.
 * `pending_uploads`: outbox changesets not yet accepted by HQ; `conflicts`: changesets HQ rejected
 * that the user has not discarded; `last_synced_at`: ISO-8601 UTC of the last pass that uploaded
 * and pulled every shape to up-to-date; `last_error`: the last failure (typed code of
 * models/errors.ts, e.g. `Unavailable` when HQ is unreachable, `Unauthenticated` when the device
 * token was revoked), cleared by the next successful pass.
 */
export interface DeviceSyncStatus {
  enrolled: boolean;
  hq_url: string | null;
  device_id: string | null;
  online: boolean;
  syncing: boolean;
  pending_uploads: number;
  conflicts: number;
  last_synced_at: string | null;
  last_error: { code: string; message: string } | null;
}

/**
 * A changeset HQ rejected, kept until the user re-plans or discards it (never dropped silently).
 * `changes` are the device's row changes as uploaded (its values); `current` the server's rows
 * (for `stale`: HQ's row and version; for other reasons the rows this device last received from
 * HQ, which the local tables now show). Times are ISO-8601 UTC.
 */
export interface SyncConflict {
  changeset_id: string;
  verb: string;
  summary: string;
  /** Who made the change on this device (the outbox's author), and their name as this device holds it (null: not held). */
  author_id: string;
  author_name: string | null;
  reason: RejectionReason;
  message: string;
  created_at: string;
  rejected_at: string;
  /**
   * True when this device rejected it itself, unsent: it was made on top of a change HQ rejected
   * (`message` names that one). False: HQ's answer.
   */
  rejected_here: boolean;
  changes: UploadedRowChange[];
  current: CurrentRow[];
}
export type UploadedRowChange = z.infer<typeof UploadedRowChange>;

/** What one sync pass moved (the CLI prints it; the engine's `syncOnce` returns it). */
export interface SyncReport {
  /** Changesets HQ applied in this pass. */
  uploaded: number;
  /** Changesets HQ rejected in this pass (now conflicts). */
  rejected: number;
  /** Outbox changesets still waiting (HQ unreachable, or made by another user of this device). */
  pending: number;
  /** Rows written to (or deleted from) the local tables, by table. */
  pulled: Record<string, number>;
  /** Shapes that started over (`must-refetch`, or first sync). */
  refetched: string[];
  /** Tables HQ refuses to this device's role (not synced). */
  forbidden: string[];
  /**
   * Changesets HQ applied whose change the shapes had not delivered when the pass ended (it waits,
   * bounded, for them): their rows stay optimistic, showing the device's values, until a later pass
   * or live mode delivers them. 0 normally.
   */
  unsettled: number;
  /** Wall time of the pass, ms. */
  ms: number;
}
