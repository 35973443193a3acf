/**
 * The verb map: every service verb by name, with its input and output schema, the permission
 * that gates it and its kind (a `read` returns its output; a `write` plans a changeset, which a
 * page or the CLI applies at once and the assistant proposes for approval first).
 *
 * Everything else is derived from this one map: the services implement it (a mapped type in
 * main/services/index.ts makes a missing or mistyped verb a compile error), the renderer's typed
 * `call()` (renderer/src/bridge.ts), the `verb.call` operation of the IPC/web contract
 * (models/contract.ts), the CLI's `call`, the assistant's tool catalogue (JSON Schema from these
 * schemas, field descriptions included) and the MCP tools.
 *
 * Runtime-agnostic: zod only, no node:*, no DOM.
 */
import type { z } from 'zod';
import { MAX_CAPTURE_SESSION_INPUT_BYTES } from './bounds';
import * as I from './inputs';
import * as O from './outputs';
import * as R from './records';
import type { Permission } from './roles';

/** One verb's definition. */
export interface VerbSpec {
  kind: 'read' | 'write';
  /** The permission that gates it (checked before anything is read or planned). */
  permission: Permission;
  /** One sentence: what it does, for pages, the CLI and tool descriptions. */
  description: string;
  /** Validated (and defaulted) before the verb runs; unknown fields are refused. */
  input: z.ZodType;
  /** What it returns; every write returns {@link O.WriteOutput} when applied. */
  output: z.ZodType;
  /**
   * Largest accepted input, canonical JSON bytes (models/bounds.ts); absent: the common 64 KiB.
   * Only a verb whose input legitimately grows with a recording declares more.
   */
  maxInputBytes?: number;
}

function read<In extends z.ZodType, Out extends z.ZodType>(permission: Permission, description: string, input: In, output: Out) {
  return { kind: 'read' as const, permission, description, input, output };
}
function write<In extends z.ZodType>(permission: Permission, description: string, input: In, opts: { maxInputBytes?: number } = {}) {
  return { kind: 'write' as const, permission, description, input, output: O.WriteOutput, ...opts };
}

/** Every service verb, by dotted name (`area.verb`). */
export const VERB_SPECS = {
  // ---- athletes ----
  'athletes.list': read('athlete.read', 'List athletes (optionally one squad, a name search, a status), with the total count.', I.ListAthletes, O.AthleteList),
  'athletes.get': read('athlete.read', 'One athlete by id.', I.ById, R.Athlete),
  'athletes.create': write('athlete.write', 'Add an athlete to the club.', I.CreateAthlete),
  'athletes.update': write('athlete.write', "Change an athlete's details.", I.UpdateAthlete),
  'athletes.deactivate': write('athlete.write', 'Deactivate (soft-delete) an athlete: hidden from active lists, every record kept.', I.DeactivateAthlete),
  'squads.list': read('athlete.read', 'List squads with their active athlete counts.', I.Empty, O.SquadList),
  'squads.get': read('athlete.read', 'One squad by id.', I.ById, R.Squad),
  'squads.create': write('athlete.write', 'Create a squad.', I.CreateSquad),
  'squads.update': write('athlete.write', 'Rename a squad or change its season.', I.UpdateSquad),
  'squads.moveAthletes': write(
    'athlete.write',
    'Move athletes into a squad (or out of every squad), as one changeset; athletes already there are left as they are.',
    I.MoveAthletes,
  ),
  // ---- clinical ----
  'injuries.list': read('injury.read', 'List injuries (optionally one athlete, open/closed).', I.ListInjuries, O.InjuryList),
  'injuries.get': read('injury.read', 'One injury with its RTP entries.', I.ById, O.InjuryWithRtp),
  'injuries.create': write('injury.write', 'Record a new injury for an athlete.', I.CreateInjury),
  'injuries.update': write('injury.write', 'Update an injury (details, severity, open/closed, notes).', I.UpdateInjury),
  'screenings.list': read('screening.read', 'List screening results (optionally one athlete), newest first.', I.ListByAthlete, O.ScreeningList),
  'screenings.get': read('screening.read', 'One screening result.', I.ById, R.Screening),
  'screenings.create': write('screening.write', 'Record a screening test result (e.g. weight-bearing lunge in cm).', I.CreateScreening),
  'screenings.update': write('screening.write', 'Correct a screening result.', I.UpdateScreening),
  'rtp.list': read('rtp.read', 'List RTP entries (for one injury or athlete) with stage and the three sign-offs.', I.ListRtp, O.RtpList),
  'rtp.get': read('rtp.read', 'One RTP entry.', I.ById, R.RtpEntry),
  'rtp.create': write('rtp.write', 'Add an RTP entry to an injury; sign-off flags sign in your own name and need that sign-off permission.', I.CreateRtp),
  'rtp.update': write('rtp.write', 'Update an RTP entry (stage, criteria, notes, sign-offs). Each sign-off needs its own permission.', I.UpdateRtp),
  'rtp.signoffPhysio': write('rtp.signoff_physio', 'Give (or withdraw) the physio sign-off on an RTP entry, in your own name.', I.SignoffRtp),
  'rtp.signoffDoctor': write('rtp.signoff_doctor', 'Give (or withdraw) the doctor sign-off on an RTP entry, in your own name.', I.SignoffRtp),
  'rtp.signoffCoach': write('rtp.signoff_coach', 'Give (or withdraw) the coach sign-off on an RTP entry, in your own name.', I.SignoffRtp),
  'wellness.list': read('wellness.read', 'Daily wellness (1–5 scales) for one athlete or all, newest first.', I.ListDated, O.WellnessList),
  'wellness.get': read('wellness.read', 'One day of wellness answers by id.', I.ById, R.Wellness),
  'wellness.getDay': read(
    'wellness.write',
    "One day's stored wellness answers (null when none): what the day's form starts from, and how an athlete reads back their own answers.",
    I.GetWellnessDay,
    R.Wellness.nullable(),
  ),
  'wellness.submit': write('wellness.write', "Submit one day's wellness questionnaire (replaces that day's answers if already submitted).", I.SubmitWellness),
  'vitals.list': read('vitals.read', 'Resting heart rate (bpm) and HRV rMSSD (ms) by day, newest first.', I.ListDated, O.VitalsList),
  'vitals.record': write('vitals.write', 'Record a day of vitals (resting HR in bpm, HRV rMSSD in ms).', I.RecordVitals),
  // ---- workload ----
  'sessions.list': read('workload.read', 'List training sessions (optionally one squad, a date range), newest first.', I.ListSessions, O.SessionList),
  'sessions.get': read('workload.read', 'One training session by id.', I.ById, R.TrainingSession),
  'sessions.create': write('workload.write', 'Create a training session for a squad (or none) on a date.', I.CreateTrainingSession),
  'workload.listLoads': read(
    'workload.read',
    'Session loads (rpe × minutes = AU) for an athlete or squad over a date range, newest first.',
    I.ListLoads,
    O.LoadList,
  ),
  'workload.logSessionLoads': write(
    'workload.write',
    'Log one session-RPE load (AU = RPE × minutes) for one athlete or for every active athlete of a squad, as one changeset.',
    I.LogSessionLoads,
  ),
  'workload.acwr': read(
    'workload.read',
    'Acute:chronic workload ratio (7-day acute / 28-day chronic) as rolling averages and/or EWMA, saying which, with the coverage of each window (days with a recorded load); below the coverage rule (28-day history, 4 of 7 and 16 of 28 days with data) it is reported as insufficient.',
    I.GetAcwr,
    O.AcwrOut,
  ),
  // ---- rates ----
  'rates.schedule': read('rates.read', 'The whole fee schedule: each folder with its items (prices in USD cents).', I.Empty, O.RateSchedule),
  'rates.listFolders': read('rates.read', 'Fee-schedule folders.', I.Empty, O.RateFolderList),
  'rates.listItems': read('rates.read', 'Fee-schedule items (optionally one folder, one item type).', I.ListRateItems, O.RateItemList),
  'rates.createFolder': write('rates.write', 'Create a fee-schedule folder.', I.CreateRateFolder),
  'rates.createItem': write('rates.write', 'Add an item to a fee-schedule folder (price in USD cents, $1–$10,000).', I.CreateRateItem),
  'rates.updateItem': write('rates.write', 'Change a fee-schedule item (code, name, type, price in USD cents).', I.UpdateRateItem),
  'rates.bulkUpdate': write(
    'rates.write',
    'Raise or lower every price in a folder (optionally one item type) by a percentage (−50..50), rounded to the cent.',
    I.BulkUpdateRates,
  ),
  // ---- capture ----
  'pose.getMetrics': read(
    'pose.read',
    "An athlete's joint-angle readings (degrees) with their conditions: camera count and mode, view obliquity and band, whether the view matches the declared layout, coverage, trustworthy, and why a reading was omitted.",
    I.GetPoseMetrics,
    O.PoseMetricsOut,
  ),
  'capture.listSessions': read('pose.read', 'Capture sessions (trials) of an athlete, newest first.', I.ListByAthlete, O.CaptureSessionList),
  'capture.getSession': read('pose.read', 'One capture session (without its angle time series).', I.ById, O.CaptureSessionOut),
  'capture.getResults': read(
    'pose.read',
    "One capture session's results: its readings with their conditions, the joint-angle time series (degrees per frame), the repetitions found and each joint's peak per repetition, and the athlete's previous session of the same test for comparison.",
    I.ById,
    O.CaptureResultsOut,
  ),
  'capture.listRigs': read(
    'pose.read',
    "The club's camera rigs (rooms) with each camera's calibration (K in pixels, distortion, Rodrigues rotation, translation in metres).",
    I.Empty,
    O.RigList,
  ),
  'capture.saveRig': write(
    'capture.run',
    "Save a room's calibrated camera rig (intrinsics, distortion, poses, the declared layout and its drift tolerance); with rig_id, replace that rig's calibration.",
    I.SaveRig,
  ),
  'capture.recordSession': write(
    'capture.run',
    'Store a processed capture trial and its pose metrics (every reading with its conditions).',
    I.RecordCaptureSession,
    { maxInputBytes: MAX_CAPTURE_SESSION_INPUT_BYTES },
  ),
  // ---- admin ----
  'devices.list': read('device.manage', 'Registered capture and wearable devices (never their keys).', I.Empty, O.DeviceList),
  'devices.register': write('device.manage', 'Register a device; its API key is shown once after approval and only its hash is stored.', I.RegisterDevice),
  'devices.rotateKey': write('device.manage', "Replace a device's API key; the new key is shown once, the old one stops working.", I.RotateDeviceKey),
  'devices.revoke': write(
    'device.manage',
    "Revoke a device's API key: it stops working at once and the device keeps no key until one is issued again (Replace key).",
    I.RevokeDevice,
  ),
  'reports.list': read('report.generate', 'Generated reports your role may read, newest first.', I.ListByAthlete, O.ReportList),
  'reports.get': read('report.generate', 'One generated report with its Markdown.', I.ById, R.Report),
  'reports.generate': write(
    'report.generate',
    'Generate a report (athlete summary, RTP status, or squad workload) from stored records and save it.',
    I.GenerateReport,
  ),
  'users.list': read('user.manage', "The organisation's users with roles (never credentials).", I.Empty, O.UserList),
  'users.create': write(
    'user.manage',
    'Add a user with a role (athlete users must be linked to an athlete; only an owner may add an athlete account or set an athlete link).',
    I.CreateUser,
  ),
  'users.update': write('user.manage', "Change a user's name, role, athlete link (owner only), budget cap or active flag.", I.UpdateUser),
  'activity.list': read('activity.read', 'Who changed what, newest first ("Name via Assistant" rows link to the run).', I.ListActivity, O.ActivityList),
  'changesets.get': read('activity.read', 'One applied changeset: its rows before → after, and whether it was undone.', I.ById, O.StoredChangesetOut),
  'changesets.undo': write(
    'activity.read',
    'Undo an applied changeset by applying its stored inverse (fails with Conflict if a row changed since).',
    I.UndoChangeset,
  ),
  // ---- help ----
  'help.search': read(
    'kinetix.use',
    'Search the app\'s versioned help pages; returns passages with page, version, anchor, a help link and the app path for "Show me", or covered: false when the help centre does not cover the question.',
    I.SearchHelp,
    O.HelpSearchOut,
  ),
  'help.getPage': read(
    'kinetix.use',
    'One help page (the shipped version, or an older one by version) with its Markdown body and section anchors.',
    I.GetHelpPage,
    O.HelpPageOut,
  ),
  'help.listPages': read('kinetix.use', 'The help pages shipped with this build: slug, version, title, app path and section count.', I.Empty, O.HelpPageList),
} as const satisfies Record<string, VerbSpec>;

/** A verb's name. */
export type VerbName = keyof typeof VERB_SPECS;
/** The definition of verb `K`. */
export type VerbSpecOf<K extends VerbName> = (typeof VERB_SPECS)[K];
/** What a caller passes to verb `K` (before defaults). */
export type VerbInput<K extends VerbName> = z.input<VerbSpecOf<K>['input']>;
/** What verb `K`'s body receives (after parsing and defaults). */
export type VerbParsedInput<K extends VerbName> = z.output<VerbSpecOf<K>['input']>;
/** What verb `K` returns (a write: the applied changeset, plus any one-time reveal). */
export type VerbOutput<K extends VerbName> = z.output<VerbSpecOf<K>['output']>;
/** Names of the read verbs. */
export type ReadVerbName = { [K in VerbName]: VerbSpecOf<K>['kind'] extends 'read' ? K : never }[VerbName];
/** Names of the write verbs. */
export type WriteVerbName = Exclude<VerbName, ReadVerbName>;

/** Every verb name at runtime. */
export const VERB_NAMES = Object.keys(VERB_SPECS) as [VerbName, ...VerbName[]];

/** True when `name` is a verb of the map. */
export function isVerbName(name: unknown): name is VerbName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(VERB_SPECS, name);
}
