/**
 * Who is calling a service, re-read on every call. The actor comes from the context (a signed-in
 * session, the assistant run's copy of that user, an MCP token bound to a user), never from
 * arguments. Assistant tool calls also carry a short-lived capability narrowed to the tool's
 * scopes, which is checked here, below the assistant.
 */
import type { RuleActor } from '../../models/changeset';
import { Forbidden, NotFound } from '../../models/errors';
import type { Permission, Role } from '../../models/roles';
import { hasPermission, SELF_SCOPED_ROLES } from '../../models/roles';
import type { Db } from '../data/db';
import { findUserById } from '../data/identity';

/**
 * A per-tool-call capability: valid for one user in one org, for the listed scopes only, until
 * `expiresAt` (ms since epoch; five minutes after issue). Scopes are permissions written
 * `area:verb` (`rates:write` for `rates.write`).
 */
export interface Capability {
  id: string;
  userId: string;
  orgId: string;
  scopes: readonly string[];
  expiresAt: number;
}

/** Everything a service call needs besides its input. */
export interface ServiceContext {
  db: Db;
  /** The signed-in user (the only identity a service accepts). */
  userId: string;
  /**
   * Set when the call is made by the assistant (or an MCP client) on the user's behalf. `source`
   * says which (default the in-app assistant); it labels the activity row.
   */
  via?: { runId: string; capability?: Capability; source?: 'assistant' | 'mcp' };
  /** Clock, injectable for tests. */
  now?: () => Date;
}

/** The re-read actor for one call. */
export interface Actor extends RuleActor {
  displayName: string;
  email: string;
}

/** Scope string for a permission (`rates.write` → `rates:write`). */
export function scopeOf(p: Permission): string {
  return p.replace('.', ':');
}

/**
 * Re-read the user row and build the actor. A missing, soft-deleted or deactivated user is
 * refused (fail closed), so a deactivation takes effect at the very next call.
 * @throws Forbidden
 */
export function resolveActor(ctx: ServiceContext): Actor {
  const u = findUserById(ctx.db, ctx.userId);
  if (!u) throw new Forbidden('Your account was not found. Sign in again.');
  if (!u.active) throw new Forbidden('Your account is deactivated. Ask a club administrator to reactivate it.');
  return {
    userId: u.id,
    orgId: u.org_id,
    role: u.role as Role,
    linkedAthleteId: u.linked_athlete_id,
    active: u.active,
    displayName: u.display_name,
    email: u.email,
  };
}

/**
 * Check the role holds `p` and, for assistant calls, that the capability is this user's, not
 * expired and includes the scope.
 * @throws Forbidden
 */
export function requirePermission(ctx: ServiceContext, actor: Actor, p: Permission): void {
  if (!hasPermission(actor.role, p)) throw new Forbidden(`Your role (${actor.role}) does not have ${p}.`);
  const cap = ctx.via?.capability;
  if (ctx.via && !cap) throw new Forbidden('Assistant calls need a capability for this tool call.');
  if (cap) {
    const now = (ctx.now?.() ?? new Date()).getTime();
    if (cap.userId !== actor.userId || cap.orgId !== actor.orgId) throw new Forbidden('This capability was issued to a different user.');
    if (now >= cap.expiresAt) throw new Forbidden('This tool call capability has expired (5 minutes). Ask again.');
    if (!cap.scopes.includes(scopeOf(p))) throw new Forbidden(`This tool call is not allowed ${scopeOf(p)}.`);
  }
}

/**
 * Athlete self-scope. For athlete-role users: an unlinked account is refused; a different
 * athlete id is reported as not found; otherwise the linked id is returned. Other roles get
 * `requested` back unchanged.
 * @throws Forbidden (unlinked account), NotFound (another athlete)
 */
export function scopeAthleteId(actor: Actor, requested: string | undefined | null): string | undefined {
  if (!SELF_SCOPED_ROLES.has(actor.role)) return requested ?? undefined;
  if (!actor.linkedAthleteId) throw new Forbidden('This athlete account is not linked to an athlete record; ask a club administrator to link it.');
  if (requested && requested !== actor.linkedAthleteId) throw new NotFound('Athlete');
  return actor.linkedAthleteId;
}

/** True for self-scoped (athlete) actors. */
export function isSelfScoped(actor: Actor): boolean {
  return SELF_SCOPED_ROLES.has(actor.role);
}
