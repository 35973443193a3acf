/**
 * The organisation's own settings at HQ: its name and its monthly assistant budget, on the
 * `organization` row every device of the club receives in its organisation shape. On a device
 * enrolled for sync they are HQ's (main/services/admin.ts `refuseOrgChangeOnSyncedDevice`): the
 * operator changes them here (`npm run hq -- organisation --of EMAIL …`), and each device shows the
 * change after its next sync. The row's version is bumped, as every write of a synced row does.
 */
import type pg from 'pg';
import { NotFound, ValidationError } from '../../models/errors';
import { checkOrganisationName, Organization } from '../../models/records';
import { withLookup, withTenant } from '../pg/db';

/** What the operator changes: a new `name` (1–200 characters after trimming) and/or the budget (USD; null: no cap). */
export interface OrganisationChange {
  name?: string;
  budgetCapUsd?: number | null;
}

/** The organisation row after {@link setOrganisationAsOperator}. */
export interface OrganisationAtHq {
  id: string;
  name: string;
  /** USD per calendar month (UTC); null: no cap. */
  budget_cap_usd: number | null;
  version: number;
  /** ISO-8601 UTC. */
  updated_at: string;
}

/**
 * Check an operator's change before anything is read or written: at least one field; the name as
 * the device checks it (models/records `checkOrganisationName`), the budget an amount in USD (rounded to cents) or null, both as the
 * organisation record allows them (models/records `Organization`).
 * @throws ValidationError naming the field
 */
export function checkOrganisationChange(change: OrganisationChange): OrganisationChange {
  const out: OrganisationChange = {};
  if (change.name === undefined && change.budgetCapUsd === undefined)
    throw new ValidationError('Say what to change: --name NAME and/or --budget-cap USD (or none).', [{ path: 'name', message: 'nothing to change' }]);
  if (change.name !== undefined) {
    out.name = checkOrganisationName(change.name);
  }
  if (change.budgetCapUsd !== undefined) {
    const cap = change.budgetCapUsd === null ? null : Math.round(change.budgetCapUsd * 100) / 100;
    if (!Organization.shape.budget_cap_usd.safeParse(cap).success || (cap !== null && !Number.isFinite(cap)))
      throw new ValidationError('The monthly budget must be an amount in USD between 0 and 100,000, or none.', [
        { path: 'budget_cap_usd', message: 'out of range' },
      ]);
    if (cap === 0 && change.budgetCapUsd !== 0)
      throw new ValidationError(
        'The monthly budget is less than a cent, which would stop every assistant run: give 0 for that, or an amount of at least 0.01.',
        [{ path: 'budget_cap_usd', message: 'less than a cent' }],
      );
    out.budgetCapUsd = cap;
  }
  return out;
}

/**
 * Change the name and/or monthly budget of the organisation the account `ofEmail` belongs to, as
 * HQ's operator (who holds the database; no device, role or owner rule applies), in one transaction
 * under that organisation's tenant: the row's version goes up by one and `updated_at` is now.
 * @throws ValidationError (see {@link checkOrganisationChange}), NotFound (no account with that
 *   email, or its organisation is deleted)
 */
export async function setOrganisationAsOperator(
  pool: pg.Pool,
  ofEmail: string,
  change: OrganisationChange,
  now: number = Date.now(),
): Promise<OrganisationAtHq> {
  const checked = checkOrganisationChange(change);
  const login = ofEmail.trim().toLowerCase();
  const orgId = await withLookup(
    pool,
    'hq.login_email',
    login,
    async (c) => (await c.query<{ org_id: string }>('SELECT org_id FROM app_user WHERE lower(email) = $1', [login])).rows[0]?.org_id,
  );
  if (!orgId) throw new NotFound(`An account with the email ${ofEmail.trim()}`);
  return withTenant(pool, { orgId }, async (c) => {
    const sets = ['version = version + 1', 'updated_at = $2'];
    const params: unknown[] = [orgId, new Date(now).toISOString()];
    if (checked.name !== undefined) sets.push(`name = $${params.push(checked.name)}`);
    if (checked.budgetCapUsd !== undefined) sets.push(`budget_cap_usd = $${params.push(checked.budgetCapUsd)}`);
    const r = await c.query<{ id: string; name: string; budget_cap_usd: number | null; version: string | number; updated_at: Date }>(
      `UPDATE organization SET ${sets.join(', ')} WHERE id = $1 AND deleted_at IS NULL RETURNING id, name, budget_cap_usd, version, updated_at`,
      params,
    );
    const row = r.rows[0];
    if (!row) throw new NotFound('The organisation');
    return { id: row.id, name: row.name, budget_cap_usd: row.budget_cap_usd, version: Number(row.version), updated_at: new Date(row.updated_at).toISOString() };
  });
}
