/**
 * Reads the entry forms need around a write, scoped to the signed-in actor's organisation:
 * the stored row a reviewer compares a change with, and the first result of a re-sent form.
 * The entry-form adapter (main/ipc/forms.ts) calls these instead of the data layer, so data access
 * stays in the service layer (shared/design/architecture.md).
 */
import type { AppliedChangeset } from '../data/changesets';
import { findByIdempotencyKey } from '../data/changesets';
import { getRow } from '../data/rows';
import type { Actor, ServiceContext } from './context';

export type { AppliedChangeset };

/**
 * The stored RTP entry a sign-off change targets, in the actor's org; null when missing, in another
 * org, or soft-deleted. Used only to word review notes (e.g. "the doctor has not cleared this stage").
 */
export function storedRtpEntry(ctx: ServiceContext, actor: Actor, id: string): Record<string, unknown> | null {
  return getRow<Record<string, unknown>>(ctx.db, 'rtp_entry', actor.orgId, id);
}

/**
 * The changeset already applied in the actor's org with this idempotency key (verb, user, stored
 * result), or null. Callers check that verb and user match before replaying the result.
 */
export function priorChangeset(ctx: ServiceContext, actor: Actor, key: string): { verb: string; userId: string; result: AppliedChangeset } | null {
  return findByIdempotencyKey(ctx.db, actor.orgId, key);
}
