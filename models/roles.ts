/**
 * The role map: the single answer to "who can do what" for pages, the assistant, MCP clients
 * and the HQ sync server. Source: shared/design/domain.md ("Roles and permissions").
 */

import { withArticle } from './format';

/** Every permission in the product. */
export const PERMISSIONS = [
  'athlete.read',
  'athlete.write',
  'injury.read',
  'injury.write',
  'screening.read',
  'screening.write',
  'rtp.read',
  'rtp.write',
  'rtp.signoff_physio',
  'rtp.signoff_doctor',
  'rtp.signoff_coach',
  'wellness.read',
  'wellness.write',
  'vitals.read',
  'vitals.write',
  'workload.read',
  'workload.write',
  'pose.read',
  'capture.run',
  'video.read',
  'video.delete',
  'device.manage',
  'report.generate',
  'rates.read',
  'rates.write',
  'user.manage',
  'settings.manage',
  'system.admin',
  'activity.read',
  'kinetix.use',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The ten roles. `super_admin` is the installation's system role. */
export const ROLES = ['owner', 'admin', 'doctor', 'physio', 'sports_scientist', 'strength_coach', 'coach', 'analyst', 'athlete', 'super_admin'] as const;
export type Role = (typeof ROLES)[number];

type RoleMap = Record<Role, readonly Permission[]>;

/**
 * Permissions per role, before `kinetix.use` is added to all (see {@link ROLE_PERMISSIONS}).
 * Clinical writes sit with clinicians; each RTP sign-off with the one role that may give it;
 * `admin` runs the org (users, settings, fees) without clinical reads. `activity.read` (the
 * activity log and changeset diffs) is for staff, not athletes; what a row reveals is still
 * filtered by its table's read permission.
 */
const BASE_ROLE_MAP: RoleMap = {
  owner: [
    'athlete.read',
    'athlete.write',
    'injury.read',
    'screening.read',
    'rtp.read',
    'wellness.read',
    'vitals.read',
    'workload.read',
    'pose.read',
    'video.read',
    'video.delete',
    'device.manage',
    'report.generate',
    'rates.read',
    'rates.write',
    'user.manage',
    'settings.manage',
    'activity.read',
  ],
  admin: ['athlete.read', 'athlete.write', 'workload.read', 'device.manage', 'rates.read', 'rates.write', 'user.manage', 'settings.manage', 'activity.read'],
  doctor: [
    'athlete.read',
    'athlete.write',
    'injury.read',
    'injury.write',
    'screening.read',
    'screening.write',
    'rtp.read',
    'rtp.write',
    'rtp.signoff_doctor',
    'wellness.read',
    'wellness.write',
    'vitals.read',
    'vitals.write',
    'workload.read',
    'pose.read',
    'capture.run',
    'video.read',
    'report.generate',
    'rates.read',
    'activity.read',
  ],
  physio: [
    'athlete.read',
    'athlete.write',
    'injury.read',
    'injury.write',
    'screening.read',
    'screening.write',
    'rtp.read',
    'rtp.write',
    'rtp.signoff_physio',
    'wellness.read',
    'wellness.write',
    'vitals.read',
    'vitals.write',
    'workload.read',
    'workload.write',
    'pose.read',
    'capture.run',
    'video.read',
    'report.generate',
    'rates.read',
    'rates.write',
    'activity.read',
  ],
  sports_scientist: [
    'athlete.read',
    'injury.read',
    'screening.read',
    'screening.write',
    'rtp.read',
    'wellness.read',
    'wellness.write',
    'vitals.read',
    'vitals.write',
    'workload.read',
    'workload.write',
    'pose.read',
    'capture.run',
    'video.read',
    'report.generate',
    'activity.read',
  ],
  strength_coach: [
    'athlete.read',
    'injury.read',
    'screening.read',
    'screening.write',
    'rtp.read',
    'wellness.read',
    'workload.read',
    'workload.write',
    'pose.read',
    'video.read',
    'activity.read',
  ],
  coach: ['athlete.read', 'injury.read', 'rtp.read', 'rtp.signoff_coach', 'wellness.read', 'workload.read', 'workload.write', 'video.read', 'activity.read'],
  analyst: ['athlete.read', 'screening.read', 'wellness.read', 'workload.read', 'pose.read', 'video.read', 'report.generate', 'activity.read'],
  athlete: ['athlete.read', 'wellness.write', 'vitals.read', 'device.manage'],
  super_admin: ['system.admin', 'settings.manage', 'user.manage'],
};

/** Granted to every role here, in one place, so a future role gets it too. Adds no authority. */
const GRANTED_TO_ALL: readonly Permission[] = ['kinetix.use'];

/** The effective role map (base map plus permissions granted to all roles). */
export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = (() => {
  const out = {} as Record<Role, ReadonlySet<Permission>>;
  for (const r of ROLES) out[r] = new Set<Permission>([...BASE_ROLE_MAP[r], ...GRANTED_TO_ALL]);
  return Object.freeze(out);
})();

/** True when `role` holds `permission`. Unknown roles hold nothing. */
export function hasPermission(role: Role | string, permission: Permission): boolean {
  const set = (ROLE_PERMISSIONS as Record<string, ReadonlySet<Permission> | undefined>)[role];
  return set !== undefined && set.has(permission);
}

/**
 * May `role` read a report of `kind`? A squad workload report needs `workload.read`; an athlete
 * summary or RTP status report (any other kind) carries injury and RTP detail and needs
 * `injury.read` and `rtp.read` — `report.generate`, the report table's own permission, is not
 * enough (issue 13 re-reviews: an analyst read doctors' athlete summaries on the device and at HQ).
 */
export function mayReadReportKind(role: Role | string, kind: unknown): boolean {
  return kind === 'squad_workload' ? hasPermission(role, 'workload.read') : hasPermission(role, 'injury.read') && hasPermission(role, 'rtp.read');
}

/**
 * Permissions `to` holds that `from` does not (empty when `to` is within `from`). Unknown roles
 * hold nothing, so a change to an unknown role gains nothing and one from it gains all of `to`.
 */
export function roleGains(from: Role | string, to: Role | string): Permission[] {
  const a = (ROLE_PERMISSIONS as Record<string, ReadonlySet<Permission> | undefined>)[from];
  const b = (ROLE_PERMISSIONS as Record<string, ReadonlySet<Permission> | undefined>)[to];
  return b ? [...b].filter((p) => !a?.has(p)) : [];
}

/** The role that must approve a changeset the policy engine marks *needs owner*. */
export const NEEDS_OWNER_APPROVER: Role = 'owner';

/** Roles whose every athlete query is narrowed to the linked athlete. */
export const SELF_SCOPED_ROLES: ReadonlySet<Role> = new Set<Role>(['athlete']);

/**
 * Which roles each role may grant (and whose accounts it may change). Clinical access is granted
 * by an owner, not by an administrator: an admin manages admin and athlete accounts only, so
 * an admin cannot give themselves (or an account they control) clinical access or a doctor's
 * sign-off. Only super_admin grants super_admin.
 */
export const GRANTABLE_ROLES: Readonly<Record<Role, readonly Role[]>> = {
  super_admin: ROLES,
  owner: ROLES.filter((r) => r !== 'super_admin'),
  admin: ['admin', 'athlete'],
  doctor: [],
  physio: [],
  sports_scientist: [],
  strength_coach: [],
  coach: [],
  analyst: [],
  athlete: [],
};

/** True when `actor` may grant `role` (and manage accounts holding it). Unknown roles: false. */
export function canManageRole(actor: Role | string, role: Role | string): boolean {
  const allowed = (GRANTABLE_ROLES as Record<string, readonly Role[] | undefined>)[actor];
  return allowed !== undefined && (allowed as readonly string[]).includes(role);
}

/**
 * What whoever holds an athlete account can read about the athlete it is linked to: the athlete
 * record (`athlete.read`), their wellness answers (an athlete reads back their own, which a
 * staff member reads with `wellness.read`) and their vitals (`vitals.read`).
 */
export const ATHLETE_ACCOUNT_READS: readonly Permission[] = ['athlete.read', 'wellness.read', 'vitals.read'];

/**
 * True when `actor` may put an account in reach of an athlete's record: create an athlete
 * account, change any account's `linked_athlete_id` (or make a linked account an athlete one), or
 * set / reset an athlete account's PIN. Whoever does so can sign in as that account, so only a
 * role that may itself read everything the account reads ({@link ATHLETE_ACCOUNT_READS}) may:
 * the owner, not an admin (no clinical reads) or the super admin. Unknown roles: false.
 */
export function canLinkAthleteAccount(actor: Role | string): boolean {
  return ATHLETE_ACCOUNT_READS.every((p) => hasPermission(actor, p));
}

/**
 * The refusal for {@link canLinkAthleteAccount}, in words: what was refused, why, and what to do.
 * `what` completes "Your role (admin) cannot …" (e.g. "create an athlete account").
 */
export function athleteAccountRefusal(actor: Role | string, what: string): string {
  return `Your role (${actor}) cannot ${what}: whoever holds an athlete account reads that athlete's wellness and vitals, which your role may not read. Ask an owner to do it.`;
}

/**
 * Why `actor` may not set or reset the sign-in PIN of an account holding `target.role` (linked to
 * `target.linked_athlete_id`), or null when it may. Whoever sets a PIN can sign in as that
 * account, so: an owner's PIN only by that owner (never here); an athlete account, or any account
 * linked to an athlete's record, only by a role that reads what it reads
 * ({@link canLinkAthleteAccount}); otherwise the account's permissions must be a subset of the
 * actor's own ({@link ROLE_PERMISSIONS}), except that an owner may set any non-owner PIN. So a
 * super admin (no clinical reads) sets no clinician's PIN: the owner or the user sets it.
 * Whether the actor may manage the account at all is {@link canManageRole}, checked separately.
 * `verb` words the refusal ("set" a first PIN, "reset" a stored one).
 */
export function pinRefusal(
  actor: Role | string,
  target: { role: Role | string; linked_athlete_id: string | null },
  verb: 'set' | 'reset' = 'set',
): string | null {
  if (target.role === 'owner') return "An owner's PIN is set only by that owner, when signed in as themselves.";
  if ((SELF_SCOPED_ROLES.has(target.role as Role) || target.linked_athlete_id !== null) && !canLinkAthleteAccount(actor))
    return athleteAccountRefusal(actor, `${verb} the PIN of ${target.role === 'athlete' ? 'an athlete account' : "an account linked to an athlete's record"}`);
  if (actor === 'owner') return null;
  const mine = (ROLE_PERMISSIONS as Record<string, ReadonlySet<Permission> | undefined>)[actor];
  const theirs = (ROLE_PERMISSIONS as Record<string, ReadonlySet<Permission> | undefined>)[target.role];
  if (!mine || !theirs) return `Your role (${actor}) cannot ${verb} the PIN of ${withArticle(String(target.role))} account. Ask an owner to do it.`;
  const extra = [...theirs].filter((p) => !mine.has(p));
  if (extra.length === 0) return null;
  return `Your role (${actor}) cannot ${verb} the PIN of ${withArticle(String(target.role))} account: whoever sets a PIN can sign in as that account, and it holds permissions your role does not (${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ', …' : ''}). Ask an owner to do it, or the user sets it.`;
}
