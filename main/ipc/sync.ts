/**
 * The contract's `sync.*` operations (models/contract.ts) over the app's background sync
 * (main/app/sync-runner.ts): who may enrol this device, and which rejected changesets a user may
 * see and discard.
 *
 * Who may enrol (decided here, documented in README "Device sync"): enrolling makes this device
 * hold what the HQ account may read — for a staff account, every account of the club with its PIN
 * hash — so it is for roles that administer the org's settings (`settings.manage`: owner, admin,
 * super_admin). An athlete may enrol their own device with their own email; HQ then sends that
 * athlete's rows only. Anyone signed in sees the status and may ask for a sync now.
 *
 * Which conflicts a user sees: those whose every row is of a table their role may read or write
 * (athletes: rows of their own athlete only). The others are counted (`hidden`), never shown.
 * Which they may discard: their own, or one they could have made themselves ({@link discardRefusal}).
 *
 * Who may ask HQ for a one-time sign-in code (issue 12, B3: a PIN alone no longer signs anyone in
 * to HQ): anyone for their own account; for another account of this club, a role holding
 * `user.manage`. HQ applies the finer rule (the one for setting that account's PIN) with the
 * actor's own HQ token and answers Forbidden; its message is passed on.
 */
import { AppError, Forbidden, NotConfigured, NotFound } from '../../models/errors';
import type { IssuedSignInCode } from '../../models/contract';
import type { Role } from '../../models/roles';
import { hasPermission, mayReadReportKind, SELF_SCOPED_ROLES } from '../../models/roles';
import type { DeviceSyncStatus, SyncConflict } from '../../models/sync';
import { isTableName, TABLES } from '../../models/tables';
import { uploaderCannotVouch } from '../../models/authorship';
import type { RowChange } from '../../models/changeset';
import type { AppSync } from '../app/sync-runner';
import { NOT_ENROLLED } from '../app/sync-runner';
import type { Db } from '../data/db';
import { findUserById } from '../data/identity';
import { callVerb } from '../services';
import { checkSetUserPin, setUserPin, storeUserPinSetAtHq } from '../services/admin';

/** The signed-in actor as these operations need it. */
interface Actor {
  id: string;
  orgId: string;
  email: string;
  displayName: string;
  role: Role;
  linkedAthleteId: string | null;
}

function actorOf(db: Db, userId: string): Actor {
  const u = findUserById(db, userId);
  if (!u || !u.active) throw new AppError({ code: 'Unauthenticated', message: 'You are not signed in. Choose your name and enter your PIN.' });
  return { id: u.id, orgId: u.org_id, email: u.email, displayName: u.display_name, role: u.role as Role, linkedAthleteId: u.linked_athlete_id };
}

function engine(sync: AppSync | null | undefined): AppSync {
  if (!sync) throw new NotConfigured('Device sync is not available in this app host.');
  return sync;
}

/**
 * May `actor` enrol this device with the HQ account `email`?
 * @throws Forbidden with the reason
 */
export function checkMayEnrol(actor: Actor, email: string): void {
  if (hasPermission(actor.role, 'settings.manage')) return;
  if (SELF_SCOPED_ROLES.has(actor.role) && actor.linkedAthleteId) {
    if (email.trim().toLowerCase() === actor.email.toLowerCase()) return;
    throw new Forbidden("An athlete account may enrol its own device with its own email only; this device would then hold that athlete's records only.");
  }
  throw new Forbidden(
    `Enrolling this device with HQ needs settings.manage (owner or admin): the device then holds the club's accounts for offline sign-in. Your role (${actor.role}) does not have it; ask a club administrator.`,
  );
}

/**
 * May `actor` ask HQ for a one-time sign-in code for `target` (an account of this device's
 * database, or null when there is none)? Their own account always; another account of their
 * club only with `user.manage` (HQ then applies the rule for setting that account's PIN).
 * @throws Forbidden (another account without user.manage), NotFound (no such account in the actor's club)
 */
export function checkMayIssueCode(actor: Actor, target: { id: string; org_id: string } | null): void {
  if (target && target.id === actor.id) return;
  if (!hasPermission(actor.role, 'user.manage'))
    throw new Forbidden(
      `Your role (${actor.role}) may get an HQ sign-in code for your own account only. Ask a club owner or administrator for one for another account.`,
    );
  if (!target || target.org_id !== actor.orgId) throw new NotFound('That account is not one of your club’s accounts.');
}

/**
 * True when `actor` may see every row of `conflict` (tables their role reads; athletes: own rows; a
 * report only of a kind their role reads, models/roles.ts `mayReadReportKind`, its kind taken from
 * the change, HQ's row or `local` — this device's row — and unknown counting as unreadable: issue 13
 * re-review, an analyst read a doctor's athlete summary in Sync conflicts).
 */
export function mayView(actor: Actor, conflict: SyncConflict, local: (table: string, id: string) => Record<string, unknown> | null = () => null): boolean {
  const selfScoped = SELF_SCOPED_ROLES.has(actor.role);
  const rows: { table: string; athlete: unknown; kind?: unknown }[] = [];
  for (const ch of conflict.changes) {
    const cur = conflict.current.find((c) => c.table === ch.table && c.id === ch.id)?.row ?? null;
    const col = isTableName(ch.table) ? TABLES[ch.table].athleteColumn : undefined;
    const after = ch.op === 'delete' ? {} : (ch.after as Record<string, unknown>);
    const kind = ch.table === 'report' ? (after.kind ?? cur?.kind ?? local(ch.table, ch.id)?.kind) : undefined;
    rows.push({ table: ch.table, athlete: col ? (after[col] ?? cur?.[col]) : undefined, kind });
  }
  for (const c of conflict.current) {
    const col = isTableName(c.table) ? TABLES[c.table].athleteColumn : undefined;
    rows.push({
      table: c.table,
      athlete: col ? c.row?.[col] : undefined,
      kind: c.table === 'report' ? (c.row?.kind ?? local(c.table, c.id)?.kind) : undefined,
    });
  }
  return rows.every(({ table, athlete, kind }) => {
    if (!isTableName(table)) return false;
    const def = TABLES[table];
    // Read, or write: an athlete writes wellness without reading it, and sees their own rejected entry.
    if (!hasPermission(actor.role, def.read) && !hasPermission(actor.role, def.write)) return false;
    if (table === 'report' && !mayReadReportKind(actor.role, kind)) return false;
    if (!selfScoped) return true;
    return Boolean(def.athleteColumn) && athlete !== undefined && athlete === actor.linkedAthleteId;
  });
}

/**
 * This device's report row of a conflict, as `userId` may read it (the `reports.get` verb: a report
 * of a kind their role may not read, or none, is null), for {@link mayView}; other tables: null.
 */
function localRow(db: Db, userId: string): (table: string, id: string) => Record<string, unknown> | null {
  return (table, id) => {
    if (table !== 'report') return null;
    try {
      return callVerb({ db, userId }, 'reports.get', { id }) as Record<string, unknown>;
    } catch {
      return null;
    }
  };
}

/** `sync.status`: the device's state (not enrolled when this host runs without sync). */
export function syncStatus(sync: AppSync | null | undefined): DeviceSyncStatus {
  return sync ? sync.status() : NOT_ENROLLED;
}

/** `sync.enrol`, after {@link checkMayEnrol}. */
export async function syncEnrol(
  db: Db,
  sync: AppSync | null | undefined,
  userId: string,
  input: { hqUrl: string; email: string; pin: string; code: string; deviceName?: string | undefined },
): Promise<DeviceSyncStatus> {
  checkMayEnrol(actorOf(db, userId), input.email);
  return engine(sync).enrol(input);
}

/** `sync.conflicts`: what this user may see, and how many others there are. */
export function syncConflicts(db: Db, sync: AppSync | null | undefined, userId: string): { conflicts: SyncConflict[]; hidden: number } {
  const actor = actorOf(db, userId);
  const all = sync ? sync.conflicts() : [];
  const conflicts = all.filter((c) => mayView(actor, c, localRow(db, actor.id)));
  return { conflicts, hidden: all.length - conflicts.length };
}

/**
 * Why `actor` may not discard `conflict`, or null when they may: its author always; another user
 * of this device only when they could have made the same change themselves (models/authorship.ts
 * `uploaderCannotVouch`: the verb's permission and every row's rules, RTP sign-offs included), so
 * a coach cannot drop a doctor's rejected clinical change (issue 12 review B2).
 */
export function discardRefusal(actor: Actor, conflict: SyncConflict): string | null {
  if (conflict.author_id === actor.id) return null;
  const why = uploaderCannotVouch(
    { userId: actor.id, orgId: actor.orgId, role: actor.role, linkedAthleteId: actor.linkedAthleteId, active: true },
    conflict.verb,
    conflict.changes as RowChange[],
    (ch) => (ch.op === 'update' ? { orgId: actor.orgId, athleteId: null, row: ch.before } : null),
  );
  if (why === null) return null;
  return `This change is ${conflict.author_name ?? 'another user'}'s, and your role (${actor.role}) could not have made it (${why}), so only they, or someone who could, may discard it. Ask them to re-plan or discard it.`;
}

/**
 * `sync.discard`: a conflict this user may see and may discard ({@link discardRefusal}); the device
 * records who discarded it (`sync_upload.discarded_by`). @throws NotFound, Forbidden, NotConfigured, Conflict
 */
export function syncDiscard(db: Db, sync: AppSync | null | undefined, userId: string, changesetId: string): DeviceSyncStatus {
  const s = engine(sync);
  const actor = actorOf(db, userId);
  const c = s.conflicts().find((x) => x.changeset_id === changesetId);
  if (!c || !mayView(actor, c, localRow(db, actor.id))) throw new NotFound(`Sync conflict ${changesetId}`);
  const refusal = discardRefusal(actor, c);
  if (refusal) throw new Forbidden(refusal);
  return s.discard(changesetId, actor.id);
}

/** `sync.hqSignIn`: is the signed-in user signed in to HQ as themselves on this device? */
export function syncHqSignIn(
  db: Db,
  sync: AppSync | null | undefined,
  userId: string,
): { signed_in: boolean; signed_in_at: string | null; enrolled_here: boolean } {
  actorOf(db, userId);
  return sync ? sync.hqSignIn(userId) : { signed_in: false, signed_in_at: null, enrolled_here: false };
}

/**
 * `sync.signInToHq`: sign the signed-in user in to HQ as themselves on this device, with their
 * own email, `pin` and a one-time sign-in `code` issued for their account (any active user; it
 * gives them nothing on this device, only lets HQ verify the approvals they give here).
 * @throws NotConfigured, Unauthenticated, RateLimited, Forbidden, Unavailable
 */
export async function syncSignInToHq(
  db: Db,
  sync: AppSync | null | undefined,
  userId: string,
  input: { pin: string; code: string },
): Promise<{ signed_in: boolean; signed_in_at: string | null }> {
  const actor = actorOf(db, userId);
  return engine(sync).signInUser({ email: actor.email, pin: input.pin, code: input.code });
}

/**
 * `sync.enrolmentCode`: a one-time HQ sign-in code for `targetUserId`, after
 * {@link checkMayIssueCode}, issued by HQ with the signed-in user's own HQ sign-in on this device.
 * @throws Unauthenticated (not signed in here, or not signed in to HQ on this device), Forbidden,
 *   NotFound, NotConfigured (no device sync in this host, or not enrolled), RateLimited, Unavailable
 */
/**
 * `admin.setPin`: on a device enrolled for sync, at HQ first (the PIN hashes travel to every device
 * in the `app_user` shape, so a PIN set here alone would be replaced by HQ's at the next sync: issue
 * 12 final review B4), then stored here at once; on a device not enrolled, here
 * (main/services/admin.ts `setUserPin`). The device's own rules are checked first, with its words;
 * a change of the account made on this device and not yet uploaded is uploaded first (the engine's
 * `setPinAtHq`).
 * @throws as `setUserPin`; on an enrolled device also Forbidden (not the account that enrolled it;
 *   HQ's refusal), Unavailable (HQ not reachable: nothing changed), Unauthenticated
 */
export async function setPin(db: Db, sync: AppSync | null | undefined, userId: string, input: { user_id: string; pin: string }): Promise<{ pin_set: true }> {
  const ctx = { db, userId };
  if (!sync?.enrolled) return setUserPin(ctx, input);
  checkSetUserPin(ctx, input);
  const hq = await sync.setPinAtHq(userId, input.user_id, input.pin);
  return storeUserPinSetAtHq(ctx, input, hq);
}

export async function syncEnrolmentCode(db: Db, sync: AppSync | null | undefined, userId: string, targetUserId: string): Promise<IssuedSignInCode> {
  const actor = actorOf(db, userId);
  checkMayIssueCode(actor, findUserById(db, targetUserId));
  return engine(sync).issueEnrolmentCode(actor.id, targetUserId);
}
