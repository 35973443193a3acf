/**
 * The HQ Postgres migrations, in order. Append only: a database whose applied migrations are not a
 * prefix of this list is refused (it was written by a different build), as on the device.
 */
import { sql as schema } from './0001_schema';
import { sql as tenancy } from './0002_tenancy';
import { sql as poseConditions } from './0003_pose_conditions';
import { sql as captureResults } from './0004_capture_results';
import { sql as approvals } from './0005_approvals';
import { sql as freeText } from './0006_free_text';
import { sql as wellnessOnePerDay } from './0007_wellness_one_per_day';
import { sql as contentHashV2 } from './0008_content_hash_v2';
import { sql as ownerApprovedChanges } from './0009_owner_approved_changes';
import { sql as proposals } from './0010_proposals';
import { sql as cleanOneLineText } from './0011_clean_one_line_text';
import { sql as deviceAccountStamp } from './0012_device_account_stamp';
import { sql as enrolmentCodes } from './0013_enrolment_codes';
import { sql as enrolmentCodeStamp } from './0014_enrolment_code_stamp';
import { sql as issuerChangeRevokesCodes } from './0015_issuer_change_revokes_codes';
import { sql as codeIssuingDevice } from './0016_code_issuing_device';

export interface HqMigration {
  id: number;
  name: string;
  sql: string;
}

export const HQ_MIGRATIONS: readonly HqMigration[] = [
  { id: 1, name: '0001_schema', sql: schema },
  { id: 2, name: '0002_tenancy', sql: tenancy },
  { id: 3, name: '0003_pose_conditions', sql: poseConditions },
  { id: 4, name: '0004_capture_results', sql: captureResults },
  { id: 5, name: '0005_approvals', sql: approvals },
  { id: 6, name: '0006_free_text', sql: freeText },
  { id: 7, name: '0007_wellness_one_per_day', sql: wellnessOnePerDay },
  { id: 8, name: '0008_content_hash_v2', sql: contentHashV2 },
  { id: 9, name: '0009_owner_approved_changes', sql: ownerApprovedChanges },
  { id: 10, name: '0010_proposals', sql: proposals },
  { id: 11, name: '0011_clean_one_line_text', sql: cleanOneLineText },
  { id: 12, name: '0012_device_account_stamp', sql: deviceAccountStamp },
  { id: 13, name: '0013_enrolment_codes', sql: enrolmentCodes },
  { id: 14, name: '0014_enrolment_code_stamp', sql: enrolmentCodeStamp },
  { id: 15, name: '0015_issuer_change_revokes_codes', sql: issuerChangeRevokesCodes },
  { id: 16, name: '0016_code_issuing_device', sql: codeIssuingDevice },
];
