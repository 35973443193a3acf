/**
 * Reads the entry forms need around a write, scoped to the signed-in actor's organisation:
 * the stored row a reviewer compares a change with, the version and `updated_at` a stale-form check
 * compares with what the form showed, and what a re-sent form's key already holds.
 * The entry-form adapter (main/ipc/forms.ts) calls these instead of the data layer, so data access
 * stays in the service layer (shared/design/architecture.md).
 */
import type { AppliedChangeset, KeyedChangeset } from '../data/changesets';
import { findByIdempotencyKey, IdempotencyKeyTaken, requestHashOf } from '../data/changesets';
import { getRow, rowState } from '../data/rows';
import { appliedHereAtVersion } from '../data/sync';
import type { TableName } from '../../models/tables';
import type { Actor, ServiceContext } from './context';

export type { AppliedChangeset, KeyedChangeset };
export { IdempotencyKeyTaken, requestHashOf };

/**
 * The stored RTP entry a sign-off change targets, in the actor's org; null when missing, in another
 * org, or soft-deleted. Used only to word review notes (e.g. "the doctor has not cleared this stage").
 */
export function storedRtpEntry(ctx: ServiceContext, actor: Actor, id: string): Record<string, unknown> | null {
  return getRow<Record<string, unknown>>(ctx.db, 'rtp_entry', actor.orgId, id);
}

/**
 * The version and `updated_at` (ISO-8601 text, as stored) of a row of `table` in the actor's org,
 * soft-deleted or not; null when there is no such row there. A form's stale check compares both
 * with what the form showed (main/ipc/forms.ts).
 */
export function storedRowState(ctx: ServiceContext, actor: Actor, table: TableName, id: string): { version: number; updated_at: string } | null {
  return rowState(ctx.db, table, actor.orgId, id);
}

/**
 * On a device enrolled for sync: whether HQ applied a change of this device that gave row `id`
 * version `version` (main/data/sync.ts `appliedHereAtVersion`): the row's `updated_at` then moved
 * from the device's to HQ's with no other change.
 */
export function confirmedAtVersion(ctx: ServiceContext, id: string, version: number): boolean {
  return appliedHereAtVersion(ctx.db, id, version);
}

/**
 * What the actor's idempotency key already points at in their org (a pending or decided proposal,
 * or an applied change: see main/data/changesets KeyedChangeset), or null when the key is unused.
 */
export function priorChangeset(ctx: ServiceContext, actor: Actor, key: string): KeyedChangeset | null {
  return findByIdempotencyKey(ctx.db, actor.orgId, actor.userId, key);
}
