/**
 * Per-table rules shared by the device and the HQ server: which permission reads and writes a
 * table, which fields need a permission of their own, whether the table is clinical (never
 * deleted), and the column through which an athlete-role user is self-scoped.
 */
import type { z } from 'zod';
import type { Permission } from './roles';
import * as R from './records';

/** Static description of one synced business table. */
export interface TableDef {
  /** SQL table name. */
  name: TableName;
  /** Full-row schema (bounds live here). */
  schema: z.ZodObject;
  /** Permission to read rows of this table. */
  read: Permission;
  /** Permission to insert/update rows (field rules may demand more, or something else). */
  write: Permission;
  /**
   * Fields governed by their own permission instead of `write`: a change to any of them needs
   * that permission (on insert when non-null, and on update), e.g. `doctor_signoff_by` needs
   * `rtp.signoff_doctor`.
   */
  fieldPermissions?: Readonly<Record<string, Permission>>;
  /** Clinical records are never deleted (domain.md). */
  clinical: boolean;
  /** Column holding the athlete id for self-scoping, or `id` for the athlete table itself. */
  athleteColumn?: string;
  /** Fields a write may never set directly (server-managed). */
  immutable?: readonly string[];
  /**
   * Columns that reference another table's row. A write may only point them at a live row of
   * the actor's own org (checked by the data layer against the stored rows).
   */
  references?: Readonly<Record<string, TableName>>;
}

export const TABLE_NAMES = [
  'squad',
  'athlete',
  'injury',
  'screening',
  'rtp_entry',
  'wellness',
  'vitals',
  'training_session',
  'session_load',
  'rig',
  'camera',
  'capture_session',
  'pose_metric',
  'video',
  'device',
  'report',
  'rate_folder',
  'rate_item',
  'app_user',
] as const;
export type TableName = (typeof TABLE_NAMES)[number];

const SIGNOFF_FIELDS: Record<string, Permission> = {
  physio_signoff_by: 'rtp.signoff_physio',
  physio_signoff_at: 'rtp.signoff_physio',
  doctor_signoff_by: 'rtp.signoff_doctor',
  doctor_signoff_at: 'rtp.signoff_doctor',
  coach_signoff_by: 'rtp.signoff_coach',
  coach_signoff_at: 'rtp.signoff_coach',
};

/** The table map. Every write path (service, assistant, Undo, HQ upload) is authorised against it. */
export const TABLES: Readonly<Record<TableName, TableDef>> = {
  squad: { name: 'squad', schema: R.Squad, read: 'athlete.read', write: 'athlete.write', clinical: false },
  athlete: {
    name: 'athlete',
    schema: R.Athlete,
    read: 'athlete.read',
    write: 'athlete.write',
    clinical: false,
    athleteColumn: 'id',
    references: { squad_id: 'squad' },
  },
  injury: {
    name: 'injury',
    schema: R.Injury,
    read: 'injury.read',
    write: 'injury.write',
    clinical: true,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete' },
  },
  screening: {
    name: 'screening',
    schema: R.Screening,
    read: 'screening.read',
    write: 'screening.write',
    clinical: true,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete' },
  },
  rtp_entry: {
    name: 'rtp_entry',
    schema: R.RtpEntry,
    read: 'rtp.read',
    write: 'rtp.write',
    clinical: true,
    athleteColumn: 'athlete_id',
    fieldPermissions: SIGNOFF_FIELDS,
    references: { injury_id: 'injury', athlete_id: 'athlete', physio_signoff_by: 'app_user', doctor_signoff_by: 'app_user', coach_signoff_by: 'app_user' },
  },
  wellness: {
    name: 'wellness',
    schema: R.Wellness,
    read: 'wellness.read',
    write: 'wellness.write',
    clinical: true,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete' },
  },
  vitals: {
    name: 'vitals',
    schema: R.Vitals,
    read: 'vitals.read',
    write: 'vitals.write',
    clinical: true,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete' },
  },
  training_session: {
    name: 'training_session',
    schema: R.TrainingSession,
    read: 'workload.read',
    write: 'workload.write',
    clinical: false,
    references: { squad_id: 'squad' },
  },
  session_load: {
    name: 'session_load',
    schema: R.SessionLoad,
    read: 'workload.read',
    write: 'workload.write',
    clinical: false,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete', training_session_id: 'training_session' },
  },
  rig: { name: 'rig', schema: R.Rig, read: 'pose.read', write: 'capture.run', clinical: false },
  camera: { name: 'camera', schema: R.Camera, read: 'pose.read', write: 'capture.run', clinical: false, references: { rig_id: 'rig' } },
  capture_session: {
    name: 'capture_session',
    schema: R.CaptureSession,
    read: 'pose.read',
    write: 'capture.run',
    clinical: false,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete', rig_id: 'rig' },
  },
  pose_metric: {
    name: 'pose_metric',
    schema: R.PoseMetric,
    read: 'pose.read',
    write: 'capture.run',
    clinical: true,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete', capture_session_id: 'capture_session' },
  },
  video: {
    name: 'video',
    schema: R.Video,
    read: 'video.read',
    write: 'capture.run',
    clinical: false,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete', capture_session_id: 'capture_session' },
  },
  device: {
    name: 'device',
    schema: R.Device,
    read: 'device.manage',
    write: 'device.manage',
    clinical: false,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete' },
  },
  report: {
    name: 'report',
    schema: R.Report,
    read: 'report.generate',
    write: 'report.generate',
    clinical: false,
    athleteColumn: 'athlete_id',
    references: { athlete_id: 'athlete', squad_id: 'squad', generated_by: 'app_user' },
  },
  rate_folder: { name: 'rate_folder', schema: R.RateFolder, read: 'rates.read', write: 'rates.write', clinical: false },
  rate_item: { name: 'rate_item', schema: R.RateItem, read: 'rates.read', write: 'rates.write', clinical: false, references: { folder_id: 'rate_folder' } },
  app_user: {
    name: 'app_user',
    schema: R.User,
    read: 'user.manage',
    write: 'user.manage',
    clinical: false,
    immutable: ['pin_hash'],
    references: { linked_athlete_id: 'athlete' },
  },
};

/** True for a known table name. */
export function isTableName(s: string): s is TableName {
  return (TABLE_NAMES as readonly string[]).includes(s);
}
