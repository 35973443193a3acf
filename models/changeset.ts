/**
 * Changesets: the one unit of change everywhere (a page's edit, an approved assistant proposal,
 * an Undo, a sync upload). Row-level diffs, each carrying the version it was planned against,
 * plus the pure rules that authorise every row change. Source: domain.md "The service layer",
 * kinetix.md §3, sync.md "Write path".
 */
import { FIELD_WORDS, codeWords, withArticle } from './format';
import type { Role } from './roles';
import { athleteAccountRefusal, canLinkAthleteAccount, canManageRole, hasPermission, mayReadReportKind, roleGains, SELF_SCOPED_ROLES } from './roles';
import { META_COLUMNS } from './records';
import type { TableName } from './tables';
import { TABLES, isTableName } from './tables';

/** A row to insert. `after` holds every business column (no meta columns except `id`). */
export interface InsertChange {
  op: 'insert';
  table: TableName;
  id: string;
  after: Record<string, unknown>;
}

/** A row to update: only the changed fields, with their values before and after. */
export interface UpdateChange {
  op: 'update';
  table: TableName;
  id: string;
  /** The row version read when planning; apply fails with Conflict if it moved on. */
  version: number;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

/**
 * A hard delete. No table allows it (clinical records are never deleted; others soft-delete by
 * setting `deleted_at`); it exists so that a forged upload is refused by rule, not by accident.
 */
export interface DeleteChange {
  op: 'delete';
  table: TableName;
  id: string;
  version: number;
}

export type RowChange = InsertChange | UpdateChange | DeleteChange;

/** A planned, not yet applied changeset. */
export interface PlannedChangeset {
  /** Service verb that planned it (e.g. `workload.logSessionLoads`). */
  verb: string;
  /** One line for the activity log and the confirm dialog ("Log 22 session loads for U19"). */
  summary: string;
  changes: RowChange[];
  /** For an Undo: the id of the changeset this one reverses (marked undone on apply). */
  undoOf?: string;
}

/** Who is acting, as seen by the pure rules (copied from the re-read user row). */
export interface RuleActor {
  userId: string;
  orgId: string;
  role: Role;
  linkedAthleteId: string | null;
  active: boolean;
}

/** Facts about the stored row an update/delete targets, read by the data layer. */
export interface StoredRowFacts {
  orgId: string;
  /** Athlete id of the stored row (for self-scope), if the table has one. */
  athleteId: string | null;
  /** The stored row's values (for rules that depend on current state: RTP sign-offs, user roles). */
  row?: Readonly<Record<string, unknown>>;
}

export type RuleDecision = { ok: true } | { ok: false; code: 'Forbidden' | 'Validation' | 'NotFound'; reason: string; field?: string };

const META = new Set<string>(META_COLUMNS);

/**
 * May `role` read this stored row of `table`: the table's read permission, and for a report its
 * kind ({@link mayReadReportKind}). What refusals and conflict replies may show back.
 */
export function mayReadRow(role: Role | string, table: string, row: Readonly<Record<string, unknown>> | null | undefined): boolean {
  if (!isTableName(table) || !hasPermission(role, TABLES[table].read)) return false;
  return table !== 'report' || mayReadReportKind(role, row?.kind);
}

/**
 * Authorise one row change for `actor` (pure). Checks, in order: active actor; known table;
 * no hard delete; tenant (the stored row's org, and `org_id` never set by the caller);
 * permission by table, operation and field (sign-off fields need their own permission, on
 * insert when set and on update); athlete self-scope; no meta/immutable columns in the diff;
 * bounds (the record schema). `stored` is required for update/delete (null = row missing).
 */
export function authorizeChange(actor: RuleActor, change: RowChange, stored: StoredRowFacts | null): RuleDecision {
  if (!actor.active) return { ok: false, code: 'Forbidden', reason: 'This account is deactivated.' };
  if (!isTableName(change.table)) return { ok: false, code: 'Forbidden', reason: `Unknown table "${String(change.table)}".` };
  const def = TABLES[change.table];

  if (change.op === 'delete') {
    return {
      ok: false,
      code: 'Forbidden',
      reason: def.clinical
        ? `${def.name} is a clinical record and is never deleted.`
        : `${def.name} rows are never hard-deleted; deactivate or soft-delete instead.`,
    };
  }

  if (change.op === 'update') {
    if (!stored || stored.orgId !== actor.orgId) return { ok: false, code: 'NotFound', reason: `${def.name} ${change.id} was not found.` };
  }

  const fields = Object.keys(change.after);
  for (const f of fields) {
    if (META.has(f) && !(change.op === 'update' && f === 'deleted_at')) {
      return { ok: false, code: 'Forbidden', reason: `Field "${f}" is managed by the system and cannot be written.`, field: f };
    }
    if (def.immutable?.includes(f)) return { ok: false, code: 'Forbidden', reason: `Field "${f}" cannot be written through a changeset.`, field: f };
  }

  // Permission by table, operation and field.
  const fieldPerms = def.fieldPermissions ?? {};
  const ordinaryFields = fields.filter((f) => !(f in fieldPerms));
  const needsWrite = change.op === 'insert' || ordinaryFields.length > 0;
  if (needsWrite && !hasPermission(actor.role, def.write)) {
    return { ok: false, code: 'Forbidden', reason: `Your role (${actor.role}) lacks ${def.write}, needed to ${change.op} ${def.name}.` };
  }
  // An update that names no field, or only sign-off fields at their stored values, changes nothing
  // yet bumps the row's version and writes an activity row, and its refusal or conflict answer tells
  // whether the entry is signed and by whom: it still needs a write permission of the row (issue 12
  // re-review: an admin, with no RTP access, probed sign-offs and bumped RTP and injury rows).
  if (change.op === 'update' && !needsWrite) {
    if (fields.length === 0) return { ok: false, code: 'Validation', reason: `This update of ${def.name} changes no field; nothing to write.` };
    const canAny = hasPermission(actor.role, def.write) || fields.some((f) => hasPermission(actor.role, fieldPerms[f]!));
    if (!canAny)
      return {
        ok: false,
        code: 'Forbidden',
        reason: `Your role (${actor.role}) lacks ${[def.write, ...fields.map((f) => fieldPerms[f]!)].join(' or ')}, needed to update ${def.name}.`,
      };
  }
  for (const f of fields) {
    const p = fieldPerms[f];
    if (!p) continue;
    const value = change.after[f];
    const beforeValue = change.op === 'update' ? change.before[f] : null;
    const touches = change.op === 'insert' ? value !== null && value !== undefined : value !== beforeValue;
    if (touches && !hasPermission(actor.role, p)) {
      return { ok: false, code: 'Forbidden', reason: `Changing ${f} needs ${p}; your role (${actor.role}) does not have it.`, field: f };
    }
    // A sign-off is given in one's own name only.
    if (touches && f.endsWith('_signoff_by') && value !== null && value !== actor.userId) {
      return { ok: false, code: 'Forbidden', reason: `${f} must be the signing user; a sign-off cannot be given on someone else's behalf.`, field: f };
    }
  }

  // A report is read and written by its kind, not only by the table's permission (an athlete
  // summary carries injury and RTP detail): one may write only a report one may read, before and
  // after, and a report's kind never changes (issue 13 re-review: an analyst overwrote and forged
  // doctors' athlete summaries through HQ).
  if (change.table === 'report') {
    const storedKind = change.op === 'update' ? stored?.row?.kind : undefined;
    if (change.op === 'update' && 'kind' in change.after && stored?.row && change.after.kind !== storedKind)
      return { ok: false, code: 'Forbidden', reason: "A report's kind cannot change; generate a new report instead.", field: 'kind' };
    // A report is generated in one's own name (as a sign-off is given), and keeps its author.
    if (change.op === 'insert' && change.after.generated_by !== actor.userId)
      return {
        ok: false,
        code: 'Forbidden',
        reason: 'A report is generated in your own name: generated_by must be the signed-in user.',
        field: 'generated_by',
      };
    if (change.op === 'update' && 'generated_by' in change.after && stored?.row && change.after.generated_by !== stored.row.generated_by)
      return { ok: false, code: 'Forbidden', reason: "A report's author cannot change.", field: 'generated_by' };
    const kinds = [change.op === 'insert' ? change.after.kind : storedKind].filter((k) => k !== undefined);
    if (kinds.some((k) => !mayReadReportKind(actor.role, k)))
      return { ok: false, code: 'Forbidden', reason: `This report includes injury and RTP records, which your role (${actor.role}) cannot read.` };
  }

  // A signed RTP entry is an attestation of its stage: the stage, criteria, injury and athlete are
  // locked while any sign-off stands, and removing the entry (soft delete, e.g. by Undo) needs
  // the permission of every sign-off on it.
  if (change.table === 'rtp_entry' && change.op === 'update' && stored?.row) {
    const signs = (['physio', 'doctor', 'coach'] as const).filter((r) => {
      const f = `${r}_signoff_by`;
      const v = f in change.after ? change.after[f] : stored.row?.[f];
      return v !== null && v !== undefined;
    });
    const locked = ['stage', 'criteria_met', 'injury_id', 'athlete_id'].find((f) => f in change.after && change.after[f] !== stored.row?.[f]);
    if (signs.length > 0 && locked) {
      return {
        ok: false,
        code: 'Forbidden',
        reason: `This RTP entry is signed off (${signs.join(', ')}); its ${FIELD_WORDS[locked] ?? codeWords(locked)} cannot change. Add a new RTP entry for the next stage, or have the sign-offs withdrawn first.`,
        field: locked,
      };
    }
    if ('deleted_at' in change.after && change.after.deleted_at !== null) {
      for (const r of ['physio', 'doctor', 'coach'] as const) {
        const p = fieldPerms[`${r}_signoff_by`];
        if (stored.row[`${r}_signoff_by`] && p && !hasPermission(actor.role, p)) {
          return { ok: false, code: 'Forbidden', reason: `This RTP entry carries a ${r} sign-off; removing it needs ${p}.`, field: 'deleted_at' };
        }
      }
    }
  }

  // User accounts: an actor may only manage accounts whose current and new role it may grant.
  if (change.table === 'app_user') {
    const current = change.op === 'update' ? (stored?.row?.role as string | undefined) : undefined;
    const next = change.after.role as string | undefined;
    if (current !== undefined && !canManageRole(actor.role, current)) {
      return { ok: false, code: 'Forbidden', reason: `Your role (${actor.role}) cannot change ${withArticle(String(current))} account.` };
    }
    if (next !== undefined && !canManageRole(actor.role, next)) {
      return { ok: false, code: 'Forbidden', reason: `Your role (${actor.role}) cannot grant the ${next} role.`, field: 'role' };
    }
    if (change.op === 'update' && change.id === actor.userId && ('role' in change.after || change.after.active === false)) {
      return { ok: false, code: 'Forbidden', reason: 'You cannot change your own role or deactivate yourself; ask another administrator.' };
    }
    // Reach into an athlete's record: whoever creates or links an athlete account can sign in as it
    // (they choose its PIN), so only a role that reads what the account reads may (models/roles.ts).
    const link = athleteLinkChange(change, stored);
    if (link && !canLinkAthleteAccount(actor.role)) {
      return { ok: false, code: 'Forbidden', reason: athleteAccountRefusal(actor.role, link.what), field: link.field };
    }
  }

  // Athlete self-scope.
  if (SELF_SCOPED_ROLES.has(actor.role)) {
    if (!actor.linkedAthleteId)
      return { ok: false, code: 'Forbidden', reason: 'This athlete account is not linked to an athlete record; ask a club administrator to link it.' };
    if (!def.athleteColumn) return { ok: false, code: 'Forbidden', reason: `Athlete accounts cannot change ${def.name}.` };
    const target = change.op === 'insert' ? (def.athleteColumn === 'id' ? change.id : change.after[def.athleteColumn]) : stored?.athleteId;
    const newTarget = change.op === 'update' && def.athleteColumn !== 'id' && def.athleteColumn in change.after ? change.after[def.athleteColumn] : target;
    if (target !== actor.linkedAthleteId || newTarget !== actor.linkedAthleteId) {
      return { ok: false, code: 'NotFound', reason: `${def.name} ${change.id} was not found.` };
    }
  }

  // Bounds: validate the written fields against the record schema.
  const shape = def.schema.shape as Record<string, import('zod').ZodType>;
  for (const f of fields) {
    const fieldSchema = shape[f];
    if (!fieldSchema) return { ok: false, code: 'Validation', reason: `${def.name} has no field "${f}".`, field: f };
    const r = fieldSchema.safeParse(change.after[f]);
    if (!r.success) return { ok: false, code: 'Validation', reason: `${def.name}.${f}: ${r.error.issues[0]?.message ?? 'invalid value'}`, field: f };
  }
  if (change.op === 'insert') {
    for (const [f, s] of Object.entries(shape)) {
      if (META.has(f) || f in change.after) continue;
      if (!s.safeParse(undefined).success && !s.safeParse(null).success) {
        return { ok: false, code: 'Validation', reason: `${def.name}.${f} is required.`, field: f };
      }
    }
  }
  return { ok: true };
}

/**
 * What an `app_user` change does that puts an account in reach of an athlete's record (`what`
 * completes "Your role cannot …"; `field` is the field to name), or null when it does none of it:
 * an insert of an athlete account or of any account with `linked_athlete_id` set; an update that
 * changes `linked_athlete_id`, or that makes an account an athlete account.
 */
function athleteLinkChange(change: InsertChange | UpdateChange, stored: StoredRowFacts | null): { what: string; field: string } | null {
  const a = change.after;
  if (change.op === 'insert') {
    if (a.role === 'athlete') return { what: 'create an athlete account', field: 'role' };
    return a.linked_athlete_id !== null && a.linked_athlete_id !== undefined
      ? { what: "link an account to an athlete's record", field: 'linked_athlete_id' }
      : null;
  }
  const row = stored?.row ?? {};
  if ('linked_athlete_id' in a && (a.linked_athlete_id ?? null) !== (row.linked_athlete_id ?? null))
    return { what: "change which athlete's record an account is linked to", field: 'linked_athlete_id' };
  if ('role' in a && a.role === 'athlete' && row.role !== 'athlete') return { what: 'make an account an athlete account', field: 'role' };
  // Changing the role of an athlete account, or of any account linked to an athlete's record,
  // is an owner's too: otherwise an admin could make it an admin account, set its PIN, and have
  // the role changed back (by Undo, say) with the PIN still known.
  if ('role' in a && a.role !== row.role && (row.role === 'athlete' || (row.linked_athlete_id ?? null) !== null))
    return {
      what: row.role === 'athlete' ? 'change the role of an athlete account' : "change the role of an account linked to an athlete's record",
      field: 'role',
    };
  return null;
}

/**
 * True when applying `change` must clear the account's stored PIN (`pin_hash`): an `app_user`
 * update that makes an account an athlete account, changes its `linked_athlete_id`, or changes
 * its role to one holding a permission the old role did not (models/roles.ts `roleGains`; every
 * change to owner). Whoever knew the old PIN — often whoever set it, who may set PINs only for
 * accounts within their own reach (`pinRefusal`) — must not sign in to what the account newly
 * reaches: a super admin setting a super admin's PIN and then making that account an owner or a
 * doctor (issue 13 re-review B1), an owner setting a coach's PIN and making it an owner. Whoever
 * may set the new role's PIN then sets it. A role lowered keeps its PIN. `storedRow` is the row as
 * stored before the change. Both apply paths (main/data/changesets.ts, sync/write/apply.ts) call it.
 */
export function clearsPinHash(change: RowChange, storedRow: Readonly<Record<string, unknown>> | null | undefined): boolean {
  if (change.table !== 'app_user' || change.op !== 'update') return false;
  const a = change.after;
  const row = storedRow ?? change.before;
  if ('role' in a && a.role !== row.role) {
    if (a.role === 'athlete' || a.role === 'owner') return true;
    if (roleGains(String(row.role), String(a.role)).length > 0) return true;
  }
  return 'linked_athlete_id' in a && (a.linked_athlete_id ?? null) !== (row.linked_athlete_id ?? null);
}

/**
 * True when `change` takes an active owner account out of being one: an `app_user` update that
 * changes an owner's role, deactivates it (`active` false) or soft-deletes it. `storedRow` is the
 * row as stored before the change. The apply paths refuse a changeset that would leave the club
 * with no active owner ({@link LAST_OWNER_REFUSAL}): only an owner approves *needs owner* changes.
 */
export function removesOwner(change: RowChange, storedRow: Readonly<Record<string, unknown>> | null | undefined): boolean {
  if (change.table !== 'app_user' || change.op !== 'update' || !storedRow) return false;
  const wasOwner = storedRow.role === 'owner' && storedRow.active !== false && storedRow.active !== 0 && !storedRow.deleted_at;
  if (!wasOwner) return false;
  const a = change.after;
  return ('role' in a && a.role !== 'owner') || ('active' in a && (a.active === false || a.active === 0)) || ('deleted_at' in a && a.deleted_at !== null);
}

/** The refusal when a changeset would leave the club with no active owner (see {@link removesOwner}). */
export const LAST_OWNER_REFUSAL =
  "This is the club's last active owner: changing its role or deactivating it would leave nobody to approve the changes that need an owner. Make another account an owner first.";

/**
 * The inverse of an applied change, for Undo. An insert is undone by soft-deleting the row
 * (clinical rows are kept, marked deleted); an update by writing the `before` values back.
 * `appliedVersion` is the row version after apply, which Undo must still find.
 */
export function inverseOf(change: InsertChange | UpdateChange, appliedVersion: number): UpdateChange {
  if (change.op === 'insert') {
    return { op: 'update', table: change.table, id: change.id, version: appliedVersion, before: { deleted_at: null }, after: { deleted_at: '__NOW__' } };
  }
  return { op: 'update', table: change.table, id: change.id, version: appliedVersion, before: { ...change.after }, after: { ...change.before } };
}

/** Placeholder in an inverse change replaced by the apply time. */
export const NOW_PLACEHOLDER = '__NOW__';

/** Deterministic JSON (sorted keys) for hashing a changeset's content. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}
