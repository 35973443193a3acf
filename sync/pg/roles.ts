/**
 * The three database roles of the HQ server (created by the admin step, sync/pg/admin.ts; the app
 * migrations refer to them by these names):
 * - owner: owns the schema and runs the migrations; bound by row-level security too (FORCE);
 * - app: what every request's queries run as: NOSUPERUSER, NOBYPASSRLS, not the owner, no DELETE;
 * - replication: REPLICATION + SELECT only, for the shape service (embedded or Electric).
 */
export const HQ_ROLES = Object.freeze({ owner: 'hq_owner', app: 'hq_app', replication: 'hq_replication' });

/** Name of the publication listing the synced tables (created by migration 0002). */
export const HQ_PUBLICATION = 'hq_sync';

/** Passwords of the three login roles (the admin step sets them; the server connects with them). */
export interface HqRolePasswords {
  owner: string;
  app: string;
  replication: string;
}
