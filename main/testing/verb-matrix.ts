/**
 * The role × verb expectations and a valid input per verb, shared by the matrix and the
 * tenant-isolation tests. Written by hand from domain.md's role map; never derived from code.
 * (The fixture report is an athlete summary: it holds injury and RTP detail, which an analyst
 * cannot read, so reports.get is N for analyst. Admins grant only admin and athlete accounts.)
 */
import type { Role } from '../../models/roles';
import type { OrgFixture } from './clinic-fixture';
import { FIXTURE_TODAY } from './clinic-fixture';

// Column order of every row below.
export const ROLE_ORDER: Role[] = ['owner', 'admin', 'doctor', 'physio', 'sports_scientist', 'strength_coach', 'coach', 'analyst', 'athlete', 'super_admin'];

//                                   own adm doc phy ssc str coa ana ath sup
export const EXPECTED: Record<string, string> = {
  'athletes.list': 'Y   Y   Y   Y   Y   Y   Y   Y   Y   N',
  'athletes.get': 'Y   Y   Y   Y   Y   Y   Y   Y   Y   N',
  'athletes.create': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'athletes.update': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'athletes.deactivate': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'squads.list': 'Y   Y   Y   Y   Y   Y   Y   Y   Y   N',
  'squads.get': 'Y   Y   Y   Y   Y   Y   Y   Y   Y   N',
  'squads.create': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'squads.update': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'squads.moveAthletes': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'injuries.list': 'Y   N   Y   Y   Y   Y   Y   N   N   N',
  'injuries.get': 'Y   N   Y   Y   Y   Y   Y   N   N   N',
  'injuries.create': 'N   N   Y   Y   N   N   N   N   N   N',
  'injuries.update': 'N   N   Y   Y   N   N   N   N   N   N',
  'screenings.list': 'Y   N   Y   Y   Y   Y   N   Y   N   N',
  'screenings.get': 'Y   N   Y   Y   Y   Y   N   Y   N   N',
  'screenings.create': 'N   N   Y   Y   Y   Y   N   N   N   N',
  'screenings.update': 'N   N   Y   Y   Y   Y   N   N   N   N',
  'rtp.list': 'Y   N   Y   Y   Y   Y   Y   N   N   N',
  'rtp.get': 'Y   N   Y   Y   Y   Y   Y   N   N   N',
  'rtp.create': 'N   N   Y   Y   N   N   N   N   N   N',
  'rtp.update': 'N   N   Y   Y   N   N   N   N   N   N',
  'rtp.signoffPhysio': 'N   N   N   Y   N   N   N   N   N   N',
  'rtp.signoffDoctor': 'N   N   Y   N   N   N   N   N   N   N',
  'rtp.signoffCoach': 'N   N   N   N   N   N   Y   N   N   N',
  'wellness.list': 'Y   N   Y   Y   Y   Y   Y   Y   N   N',
  'wellness.get': 'Y   N   Y   Y   Y   Y   Y   Y   N   N',
  'wellness.getDay': 'N   N   Y   Y   Y   N   N   N   Y   N',
  'wellness.submit': 'N   N   Y   Y   Y   N   N   N   Y   N',
  'vitals.list': 'Y   N   Y   Y   Y   N   N   N   Y   N',
  'vitals.record': 'N   N   Y   Y   Y   N   N   N   N   N',
  'sessions.list': 'Y   Y   Y   Y   Y   Y   Y   Y   N   N',
  'sessions.get': 'Y   Y   Y   Y   Y   Y   Y   Y   N   N',
  'sessions.create': 'N   N   N   Y   Y   Y   Y   N   N   N',
  'workload.listLoads': 'Y   Y   Y   Y   Y   Y   Y   Y   N   N',
  'workload.logSessionLoads': 'N   N   N   Y   Y   Y   Y   N   N   N',
  'workload.acwr': 'Y   Y   Y   Y   Y   Y   Y   Y   N   N',
  'rates.schedule': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'rates.listFolders': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'rates.listItems': 'Y   Y   Y   Y   N   N   N   N   N   N',
  'rates.createFolder': 'Y   Y   N   Y   N   N   N   N   N   N',
  'rates.createItem': 'Y   Y   N   Y   N   N   N   N   N   N',
  'rates.updateItem': 'Y   Y   N   Y   N   N   N   N   N   N',
  'rates.bulkUpdate': 'Y   Y   N   Y   N   N   N   N   N   N',
  'pose.getMetrics': 'Y   N   Y   Y   Y   Y   N   Y   N   N',
  'capture.listSessions': 'Y   N   Y   Y   Y   Y   N   Y   N   N',
  'capture.getSession': 'Y   N   Y   Y   Y   Y   N   Y   N   N',
  'capture.getResults': 'Y   N   Y   Y   Y   Y   N   Y   N   N',
  'capture.listRigs': 'Y   N   Y   Y   Y   Y   N   Y   N   N',
  'capture.recordSession': 'N   N   Y   Y   Y   N   N   N   N   N',
  'capture.saveRig': 'N   N   Y   Y   Y   N   N   N   N   N',
  'devices.list': 'Y   Y   N   N   N   N   N   N   Y   N',
  'devices.register': 'Y   Y   N   N   N   N   N   N   Y   N',
  'devices.rotateKey': 'Y   Y   N   N   N   N   N   N   Y   N',
  'devices.revoke': 'Y   Y   N   N   N   N   N   N   Y   N',
  'reports.list': 'Y   N   Y   Y   Y   N   N   Y   N   N',
  'reports.get': 'Y   N   Y   Y   Y   N   N   N   N   N',
  'reports.generate': 'Y   N   Y   Y   Y   N   N   N   N   N',
  'users.list': 'Y   Y   N   N   N   N   N   N   N   Y',
  'users.create': 'Y   Y   N   N   N   N   N   N   N   Y',
  'users.update': 'Y   Y   N   N   N   N   N   N   N   Y',
  'activity.list': 'Y   Y   Y   Y   Y   Y   Y   Y   N   N',
  'changesets.get': 'Y   Y   Y   Y   Y   Y   Y   Y   N   N',
  'changesets.undo': 'N   N   N   Y   Y   Y   Y   N   N   N',
  'help.search': 'Y   Y   Y   Y   Y   Y   Y   Y   Y   Y',
  'help.getPage': 'Y   Y   Y   Y   Y   Y   Y   Y   Y   Y',
  'help.listPages': 'Y   Y   Y   Y   Y   Y   Y   Y   Y   Y',
};

let emailSeq = 0;
/** A valid input for each verb, as `role` in org `o` (athlete-scoped inputs use the linked athlete). */
export function inputFor(verb: string, o: OrgFixture, role: Role): unknown {
  const day = '2026-11-19';
  switch (verb) {
    case 'athletes.list':
    case 'squads.list':
    case 'rates.schedule':
    case 'rates.listFolders':
    case 'devices.list':
    case 'users.list':
    case 'activity.list':
    case 'sessions.list':
    case 'workload.listLoads':
    case 'injuries.list':
    case 'screenings.list':
    case 'rtp.list':
    case 'wellness.list':
    case 'vitals.list':
    case 'rates.listItems':
    case 'capture.listSessions':
    case 'reports.list':
      return {};
    case 'athletes.get':
      return { id: o.athleteId };
    case 'athletes.create':
      return { name: 'New Signing', date_of_birth: '2009-01-01', sex: 'male' };
    case 'athletes.update':
      return { id: o.athleteId, position: 'Winger' };
    case 'athletes.deactivate':
      return { id: o.otherAthleteId };
    case 'squads.get':
      return { id: o.squadId };
    case 'squads.create':
      return { name: 'U17', season: '2026/27' };
    case 'squads.update':
      return { id: o.squadId, season: '2027/28' };
    case 'squads.moveAthletes':
      return { athlete_ids: [o.athleteId], squad_id: null };
    case 'injuries.get':
      return { id: o.injuryId };
    case 'injuries.create':
      return { athlete_id: o.athleteId, body_part: 'ankle', side: 'right', onset_date: day, severity: 'mild' };
    case 'injuries.update':
      return { id: o.injuryId, severity: 'severe' };
    case 'screenings.get':
      return { id: o.screeningId };
    case 'screenings.create':
      return { athlete_id: o.athleteId, test: 'single_leg_hop', side: 'right', value: 140, unit: 'cm', date: day };
    case 'screenings.update':
      return { id: o.screeningId, value: 12 };
    case 'rtp.get':
      return { id: o.rtpId };
    case 'wellness.get':
      return { id: o.wellnessId };
    case 'sessions.get':
      return { id: o.sessionId };
    case 'rtp.create':
      return { injury_id: o.injuryId, stage: 'return_to_running' };
    case 'rtp.update':
      return { id: o.rtpId, notes: 'progressing' };
    case 'rtp.signoffPhysio':
    case 'rtp.signoffDoctor':
    case 'rtp.signoffCoach':
      return { id: o.rtpId, signed: verb !== 'rtp.signoffPhysio' };
    case 'wellness.getDay':
      return { athlete_id: o.athleteId, date: '2026-11-19' };
    case 'wellness.submit':
      return { athlete_id: o.athleteId, date: FIXTURE_TODAY, sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 };
    case 'vitals.record':
      return { athlete_id: o.athleteId, date: FIXTURE_TODAY, resting_hr_bpm: 50, hrv_rmssd_ms: 80 };
    case 'sessions.create':
      return { squad_id: o.squadId, date: day, kind: 'gym', duration_min: 45 };
    case 'workload.logSessionLoads':
      // Every role logs onto the same day of the same fixture: the matrix tests permissions, so each
      // call acknowledges the earlier roles' loads (the same-day check has its own tests).
      return { squad_id: o.squadId, date: day, duration_min: 60, rpe: 5, second_session_same_day: true };
    case 'workload.acwr':
      return { athlete_id: o.athleteId };
    case 'rates.createFolder':
      return { name: 'Insurer' };
    case 'rates.createItem':
      return { folder_id: o.folderId, code: 'T01', name: 'Treatment', item_type: 'treatment', price_cents: 6000 };
    case 'rates.updateItem':
      return { id: o.itemId, price_cents: 9500 };
    case 'rates.bulkUpdate':
      return { folder_id: o.folderId, pct: 5 };
    case 'capture.listRigs':
      return {};
    case 'pose.getMetrics':
      return { athlete_id: o.athleteId };
    case 'capture.getSession':
    case 'capture.getResults':
      return { id: o.captureSessionId };
    case 'capture.recordSession':
      return { athlete_id: o.athleteId, recorded_at: `${day}T09:00:00.000Z`, fps: 30, frame_count: 10, camera_count: 2, source: 'video', metrics: [] };
    case 'capture.saveRig':
      return {
        name: 'Room 2',
        cameras: [{ name: 'cam01', width: 1280, height: 720, K: [900, 0, 640, 0, 900, 360, 0, 0, 1], dist: [0, 0, 0, 0], rvec: [0, 0, 0], tvec: [0, 0, 3] }],
      };
    case 'devices.register':
      return { name: 'Strap', kind: 'wearable' };
    case 'devices.rotateKey':
    case 'devices.revoke':
      return { id: role === 'athlete' ? o.athleteDeviceId : o.deviceId };
    case 'reports.get':
      return { id: o.reportId };
    case 'reports.generate':
      return { kind: 'athlete_summary', athlete_id: o.athleteId };
    case 'users.create':
      return { email: `new${++emailSeq}@example.test`, display_name: 'New Person', role: 'admin' };
    case 'users.update':
      return { id: o.users.athlete_unlinked, display_name: 'Renamed Account' };
    case 'changesets.get':
    case 'changesets.undo':
      return verb === 'changesets.get' ? { id: o.changesetId } : { changeset_id: o.changesetId };
    case 'help.search':
      return { query: 'log a session load for a squad' };
    case 'help.getPage':
      return { slug: 'reading-acwr' };
    case 'help.listPages':
      return {};
    default:
      throw new Error(`no input for ${verb}`);
  }
}
