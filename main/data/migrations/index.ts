/**
 * The ordered list of migrations. Append only: a database whose applied migrations are not a
 * prefix of this list is refused at open (it was written by a different build).
 * Numbers are reserved per area: 0002 kinetix (assistant runs), 0003 help centre, 0004+ next.
 *
 * Frozen text: each entry carries the SHA-256 (hex) of its SQL exactly as applied. openDb checks
 * that every migration of this build still hashes to its recorded value, records the hash in
 * schema_migrations when it applies a migration, and refuses a database whose recorded hash
 * differs (main/data/db.ts). Each migration's SQL is one literal string in its own file: no
 * shared fragments, so no later edit elsewhere can change what an applied migration was.
 * Adding a migration: write NNNN_name.ts, append it here with the hash that openDb's error (or
 * main/data/db.test.ts) prints, and update the schema snapshot
 * (`npx vitest run main/data/db.test.ts -u`, then review main/data/schema.snapshot.sql).
 */
import { createHash } from 'node:crypto';
import { sql as core } from './0001_core';
import { sql as kinetix } from './0002_kinetix';
import { sql as help } from './0003_help';
import { sql as proposals } from './0004_proposals';
import { sql as mcp } from './0005_mcp';
import { sql as pageProposals } from './0006_page_proposals';
import { sql as kinetixLeases } from './0007_kinetix_leases';
import { sql as poseConditions } from './0008_pose_conditions';
import { sql as syncDevice } from './0009_sync_device';
import { sql as captureResults } from './0010_capture_results';
import { sql as idempotencyPerUser } from './0011_idempotency_per_user';
import { sql as syncUserTokens } from './0012_sync_user_tokens';
import { sql as freeText } from './0013_free_text';
import { sql as wellnessOnePerDay } from './0014_wellness_one_per_day';
import { sql as proposalSync } from './0015_proposal_sync';
import { sql as cleanOneLineText } from './0016_clean_one_line_text';
import { sql as mcpTokenAccountStamp } from './0017_mcp_token_account_stamp';
import { sql as discardedBy } from './0018_discarded_by';
import { sql as optimisticBase } from './0019_optimistic_base';
import { sql as rejectedHere } from './0020_rejected_here';

export interface Migration {
  id: number;
  name: string;
  sql: string;
  /** SHA-256 (lower-case hex) of `sql`, written when the migration was created; never changes. */
  sha256: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { id: 1, name: '0001_core', sql: core, sha256: 'da4c59be2599e8ac67fd4c022e882cee9f353ac3222648b4b4848a0e63430e41' },
  { id: 2, name: '0002_kinetix', sql: kinetix, sha256: '5b557cc513538b16513264baced66122ef2605f68712846a8d08a2b31e7c73ea' },
  { id: 3, name: '0003_help', sql: help, sha256: 'c25343d10a09b90de94d28c61c8e0b0a7385e536f8cbaafabc744c5d17f16840' },
  { id: 4, name: '0004_proposals', sql: proposals, sha256: '08073ae3add2ee3b8607780a1bc980dbd71f4fa0f651ff6a375fc3c9fb7f049b' },
  { id: 5, name: '0005_mcp', sql: mcp, sha256: '896ac92259025931184f891afcb41f5eac57fc8255f9486f266aca55a35f05bf' },
  { id: 6, name: '0006_page_proposals', sql: pageProposals, sha256: 'e55ab45b8f8012018e5215c14b74969871b58b57ee96cbce557a64a3c37d634c' },
  { id: 7, name: '0007_kinetix_leases', sql: kinetixLeases, sha256: '790bb7376aca1418c516b5320ebb964f9b3aa5ef9a4ba8664589a7a53c91eac1' },
  { id: 8, name: '0008_pose_conditions', sql: poseConditions, sha256: '625dc0639385b48d46222d9648c43ef7efaa3e7d9650023fa7e04e4739514f83' },
  { id: 9, name: '0009_sync_device', sql: syncDevice, sha256: 'c36484922f8b61f7df955e8a1b9a2f33d2d32c44d795fb71474e2938b2c10b3b' },
  { id: 10, name: '0010_capture_results', sql: captureResults, sha256: 'b7183873b953409c2f31c66aa9605f2ae799172ff190997ea4579444f4a706b1' },
  { id: 11, name: '0011_idempotency_per_user', sql: idempotencyPerUser, sha256: '2e0408a4b59edad8d9a841290495a7b81796e7de17e2f35c1676e7dcca9577c3' },
  { id: 12, name: '0012_sync_user_tokens', sql: syncUserTokens, sha256: '801c447329cc6126339ae0a0f58ec17337946599aebd8c98adb4f81b7b6c9899' },
  { id: 13, name: '0013_free_text', sql: freeText, sha256: 'c0a4e46e12f050dc6f75932bc7d53f019eecf5da5d5a18f227614ad547744d1e' },
  { id: 14, name: '0014_wellness_one_per_day', sql: wellnessOnePerDay, sha256: '99f0ba848c8cf014860b9a087640361683020c132eda0d57346d7241e57f11c5' },
  { id: 15, name: '0015_proposal_sync', sql: proposalSync, sha256: 'cb5ac40cdd3bf913c4c7f98e2dd84466811632aee7bd2529255e4806c5f285f4' },
  { id: 16, name: '0016_clean_one_line_text', sql: cleanOneLineText, sha256: '53a4100550993e87ac1683746fb5396ef04c8f74871b2469acbdcb94b715338b' },
  { id: 17, name: '0017_mcp_token_account_stamp', sql: mcpTokenAccountStamp, sha256: 'ebdc696d87fddc92bebc4f99cc65c5f2a0e0ff06d45eb977da54a9f017183023' },
  { id: 18, name: '0018_discarded_by', sql: discardedBy, sha256: 'f7d6bb14dde290b9c4f5e3fa04bb034e4ca5969cf35116397226b53acc53eb22' },
  { id: 19, name: '0019_optimistic_base', sql: optimisticBase, sha256: '2e64503be243e720a2d29cc0cfed9f4fba44de5d099ac3248cd7ea1e6f25606e' },
  { id: 20, name: '0020_rejected_here', sql: rejectedHere, sha256: '4b20e1e71805f0a1f14c4071d460f0e7c9d3f276684d30011448bdf755eff9b3' },
];

/** SHA-256 (lower-case hex) of a migration's SQL text, as recorded in schema_migrations.sha256. */
export function sqlSha256(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}
