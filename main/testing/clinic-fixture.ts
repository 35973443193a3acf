/**
 * A small two-organisation clinic built through the real service verbs, for tests: every role in
 * org A (plus an unlinked athlete account), a physio and an athlete in org B, and at least one
 * row of every record so every get/list verb has something to find.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { AppError } from '../../models/errors';
import type { Role } from '../../models/roles';
import { ROLES } from '../../models/roles';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { insertOrganization, insertUser } from '../data/identity';
import { VERBS, callVerbByName } from '../services';
import type { ServiceContext } from '../services';

export interface OrgFixture {
  orgId: string;
  users: Record<Role, string> & { athlete_unlinked: string };
  squadId: string;
  athleteId: string;
  otherAthleteId: string;
  injuryId: string;
  rtpId: string;
  screeningId: string;
  folderId: string;
  itemId: string;
  deviceId: string;
  athleteDeviceId: string;
  captureSessionId: string;
  reportId: string;
  changesetId: string;
  sessionId: string;
  /** The athlete's wellness day (yesterday). */
  wellnessId: string;
}

export interface ClinicFixture {
  db: Db;
  dir: string;
  path: string;
  a: OrgFixture;
  b: OrgFixture;
  /** Service context for a user id. */
  as(userId: string): ServiceContext;
  /** callVerb as a user (the result is read loosely by fixtures and assertions). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  call(userId: string, verb: string, input?: unknown, opts?: { idempotencyKey?: string }): any;
  close(): void;
}

/** Fixed "today" for fixtures (clinical dates must not be in the future). */
export const FIXTURE_TODAY = '2026-11-20';
export const fixtureNow = () => new Date(`${FIXTURE_TODAY}T12:00:00.000Z`);

function addDays(date: string, n: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

function buildOrg(db: Db, name: string, call: ClinicFixture['call']): OrgFixture {
  const orgId = uuidv7();
  const now = fixtureNow().toISOString();
  insertOrganization(db, {
    id: orgId,
    created_at: now,
    updated_at: now,
    version: 1,
    name,
    plan: 'club',
    budget_cap_usd: 50,
    assistant_model: 'claude-sonnet-4-6',
  });
  const users = {} as OrgFixture['users'];
  const slug = name.toLowerCase().replace(/[^a-z]/g, '');
  for (const role of [...ROLES, 'athlete_unlinked'] as const) {
    const id = uuidv7();
    const r: Role = role === 'athlete_unlinked' ? 'athlete' : role;
    insertUser(db, {
      id,
      org_id: orgId,
      email: `${role}@${slug}.test`,
      display_name: `${name} ${role}`,
      role: r,
      linked_athlete_id: null,
      active: true,
      budget_cap_usd: null,
      pin_hash: null,
    });
    users[role] = id;
  }
  const owner = users.owner;
  const physio = users.physio;
  const squadId = call(owner, 'squads.create', { name: 'U19', season: '2026/27' }).changeset.changes[0].id;
  const athleteId = call(owner, 'athletes.create', {
    name: `${name} Athlete One`,
    date_of_birth: '2008-03-01',
    sex: 'female',
    squad_id: squadId,
    position: 'Midfield',
    dominant_side: 'right',
  }).changeset.changes[0].id;
  const otherAthleteId = call(owner, 'athletes.create', {
    name: `${name} Athlete Two`,
    date_of_birth: '2007-05-01',
    sex: 'male',
    squad_id: squadId,
    position: 'Defence',
    dominant_side: 'left',
  }).changeset.changes[0].id;
  // Link the athlete user (direct SQL through the data layer's bootstrap path is not offered; use users.update).
  call(owner, 'users.update', { id: users.athlete, linked_athlete_id: athleteId });
  const injuryId = call(physio, 'injuries.create', {
    athlete_id: athleteId,
    body_part: 'hamstring',
    side: 'left',
    mechanism: 'non_contact',
    onset_date: addDays(FIXTURE_TODAY, -20),
    severity: 'moderate',
  }).changeset.changes[0].id;
  const rtpId = call(physio, 'rtp.create', { injury_id: injuryId, stage: 'rehabilitation', physio_signoff: true }).changeset.changes[0].id;
  const screeningId = call(physio, 'screenings.create', {
    athlete_id: athleteId,
    test: 'weight_bearing_lunge',
    side: 'left',
    value: 11.5,
    unit: 'cm',
    date: addDays(FIXTURE_TODAY, -3),
  }).changeset.changes[0].id;
  const wellnessId = call(physio, 'wellness.submit', {
    athlete_id: athleteId,
    date: addDays(FIXTURE_TODAY, -1),
    sleep: 4,
    soreness: 2,
    stress: 2,
    mood: 4,
    fatigue: 2,
  }).changeset.changes[0].id;
  call(physio, 'vitals.record', { athlete_id: athleteId, date: addDays(FIXTURE_TODAY, -1), resting_hr_bpm: 52, hrv_rmssd_ms: 78 });
  const sessionId = call(physio, 'sessions.create', { squad_id: squadId, date: addDays(FIXTURE_TODAY, -1), kind: 'pitch', duration_min: 75 }).changeset
    .changes[0].id;
  const logged = call(physio, 'workload.logSessionLoads', {
    squad_id: squadId,
    date: addDays(FIXTURE_TODAY, -1),
    duration_min: 75,
    rpe: 6,
    training_session_id: sessionId,
  });
  const folderId = call(owner, 'rates.createFolder', { name: 'Private' }).changeset.changes[0].id;
  const itemId = call(owner, 'rates.createItem', { folder_id: folderId, code: 'A01', name: 'Initial assessment', item_type: 'assessment', price_cents: 9000 })
    .changeset.changes[0].id;
  const deviceId = call(owner, 'devices.register', { name: 'Clinic cam 1', kind: 'camera' }).changeset.changes[0].id;
  const athleteDeviceId = call(users.athlete, 'devices.register', { name: 'My HR strap', kind: 'wearable' }).changeset.changes[0].id;
  const captureSessionId = call(physio, 'capture.recordSession', {
    athlete_id: athleteId,
    recorded_at: `${addDays(FIXTURE_TODAY, -2)}T10:00:00.000Z`,
    trial_name: 'squat',
    fps: 30,
    frame_count: 100,
    camera_count: 3,
    source: 'keypoints_json',
    metrics: [
      {
        joint: 'knee_flexion',
        side: 'left',
        statistic: 'peak',
        value_deg: 102.5,
        omitted_reason: null,
        camera_count: 3,
        camera_mode: '3 calibrated cameras + one tap',
        view_obliquity_deg: 12,
        obliquity_band: 'sagittal',
        view_matches_declared: true,
        coverage: 0.96,
        trustworthy: true,
        sagittal_ratio: 0.91,
        frames: 100,
        conditions: [],
      },
      {
        joint: 'ankle_dorsiflexion',
        side: 'left',
        statistic: 'peak',
        value_deg: null,
        omitted_reason: 'not_measurable_with_coco17',
        camera_count: 3,
        camera_mode: '3 calibrated cameras + one tap',
        view_obliquity_deg: 12,
        obliquity_band: 'sagittal',
        view_matches_declared: true,
        coverage: 0.96,
        trustworthy: false,
        sagittal_ratio: null,
        frames: 100,
        conditions: [],
      },
    ],
  }).changeset.changes[0].id;
  const reportId = call(physio, 'reports.generate', { kind: 'athlete_summary', athlete_id: athleteId }).changeset.changes[0].id;
  return {
    orgId,
    users,
    squadId,
    athleteId,
    otherAthleteId,
    injuryId,
    rtpId,
    screeningId,
    folderId,
    itemId,
    deviceId,
    athleteDeviceId,
    captureSessionId,
    reportId,
    changesetId: logged.changeset.id,
    sessionId,
    wellnessId,
  };
}

/** Create a fresh SQLite file in a temp dir and build the two-org fixture through the services. */
export function createClinicFixture(): ClinicFixture {
  const dir = mkdtempSync(join(tmpdir(), 'ai-fixture-'));
  const path = join(dir, 'clinic.sqlite');
  const db = openDb(path);
  const as = (userId: string): ServiceContext => ({ db, userId, now: fixtureNow });
  const call: ClinicFixture['call'] = (userId, verb, input = {}, opts = {}) => callVerbByName(as(userId), VERBS, verb, input, opts);
  const a = buildOrg(db, 'Northbridge', call);
  const b = buildOrg(db, 'Eastvale', call);
  return {
    db,
    dir,
    path,
    a,
    b,
    as,
    call,
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The typed error `fn` throws (an AppError); fails the test when it returns, rethrows anything else. */
export function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected an AppError, got a result');
}
