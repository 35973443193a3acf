/**
 * The renderer↔main contract: every operation the UI may ask of the main process, with its zod
 * input and output. One implementation (main/ipc/handlers.ts) is typed against {@link Handlers},
 * so renaming or dropping an operation there breaks the build, not the app. Two transports carry
 * it unchanged: Electron IPC (preload/index.ts) and HTTP + SSE (main/host/web.ts).
 *
 * Runtime-agnostic: no node:*, no DOM. Every reply is a {@link CallResult}: the value, or the one
 * {@link ErrorPayload} shape used on every channel.
 */
import type { AGUIEvent } from '@ag-ui/core';
import { z } from 'zod';
import type { ErrorPayload } from './errors';
import { Id } from './records';
import type { RowChange } from './changeset';
import { ROLES } from './roles';
import type { AppliedChangesetOut, HelpPassageOut, PoseMetricOut, WriteOutput } from './outputs';
import type { VerbInput, VerbName, VerbOutput } from './verbs';
import type { JobView, RecordingView } from './capture/jobs';
import type { CameraCounts, DeviceFailure, NegotiatedSource } from './capture/live';
import type { CalibrationViewStatus, CalibrationWizardState } from './capture/rig-wizard';
import { DeclaredLayout } from './capture/obliquity';
import { CAPTURE_TESTS } from './capture/series';
import type { DeviceSyncStatus, SyncConflict } from './sync';
import { ProviderClearanceInput, type ClearanceByProvider } from './classification';

const Empty = z.object({}).strict();

/**
 * The state of one row as a form showed it: its `version` and its `updated_at` (as the verb that
 * read it returned it). Both are checked: on a device enrolled for sync a local edit HQ refused is
 * replaced by HQ's row, which can carry the very same version number with other content — its
 * `updated_at` tells the two apart.
 */
export const ShownRowState = z
  .object({
    version: z.number().int().min(0),
    updated_at: z.string().min(1).max(64).describe("The row's updated_at as the form read it."),
  })
  .strict();
/** {@link ShownRowState} as TypeScript sees it. */
export type ShownRowState = z.infer<typeof ShownRowState>;
/** Most rows one form may quote (a bulk move is at most 500 athletes). */
export const MAX_EXPECTED_ROWS = 1000;
/**
 * Row id → what the form showed: a {@link ShownRowState} (pages), or the bare version (older callers;
 * it cannot tell HQ's row from a refused local edit at the same version).
 */
export const ExpectedVersions = z
  .record(z.string().max(100), z.union([z.number().int().min(0), ShownRowState]))
  .refine((r) => Object.keys(r).length <= MAX_EXPECTED_ROWS, { message: `at most ${MAX_EXPECTED_ROWS} rows` });
/** {@link ExpectedVersions} as TypeScript sees it. */
export type ExpectedVersions = z.infer<typeof ExpectedVersions>;
/**
 * A one-time HQ sign-in code as typed (`XXXX-XXXX-XXXX`, Crockford base32; HQ ignores case,
 * dashes and spaces and judges it). Bounded here so that nothing long reaches HQ.
 */
const SignInCode = z.string().trim().min(1).max(64).describe('One-time HQ sign-in code, XXXX-XXXX-XXXX');

/**
 * A one-time HQ sign-in code as HQ issued it (`POST /v1/enrolment-codes`): shown once to whoever
 * asked for it, never stored on the device. `expires_at`: ISO 8601 (24 h after issue).
 */
export interface IssuedSignInCode {
  code: string;
  expires_at: string;
  user: { id: string; email: string; display_name: string; role: string };
}
/** A checkerboard: inner corners across and down (OpenCV's pattern size) and the square side in mm. */
const BoardInput = z.object({ cols: z.number().int().min(3).max(30), rows: z.number().int().min(3).max(30), square_mm: z.number().min(1).max(1000) }).strict();

/** A user offered on the sign-in screen (never a credential). */
export const SignInUser = z.object({
  id: Id,
  display_name: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  org_name: z.string(),
  /** False when no PIN is set: the user cannot sign in here until an admin sets one. */
  has_pin: z.boolean(),
});
export type SignInUser = z.infer<typeof SignInUser>;

/** The signed-in user of this window, as the UI needs it. */
export const Me = z.object({
  user_id: Id,
  display_name: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  org_id: Id,
  org_name: z.string(),
  linked_athlete_id: Id.nullable(),
});
export type Me = z.infer<typeof Me>;

/**
 * The operations. `input` is validated by the transport before the handler runs; `output` documents
 * (and types) the value. `verb.call` reaches every service verb; the services decide who may do what.
 */
export const CONTRACT = {
  /** Users of this installation for the sign-in picker (active users only). */
  'session.users': { input: Empty, output: z.object({ users: z.array(SignInUser) }) },
  /** Sign this window in as `user_id` with its PIN. Five wrong PINs lock that user for five minutes. */
  'session.signIn': { input: z.object({ user_id: Id, pin: z.string().min(1).max(32) }).strict(), output: Me },
  /**
   * Names and roles of the people in the signed-in user's organisation, to show who signed an RTP
   * entry or changed a record (the sign-in picker shows the same names; never emails or credentials).
   */
  'session.people': { input: Empty, output: z.object({ people: z.array(z.object({ id: Id, display_name: z.string(), role: z.enum(ROLES) })) }) },
  /** Sign this window out. */
  'session.signOut': { input: Empty, output: z.object({ signed_out: z.literal(true) }) },
  /** The signed-in user of this window, or null. */
  'session.me': { input: Empty, output: Me.nullable() },
  /**
   * Call a service verb as the signed-in user: reads return their result, writes apply at once and
   * return `{ changeset, reveal? }`. A retried write with the same `idempotency_key` is harmless.
   */
  'verb.call': {
    input: z
      .object({
        // A name outside the map is a NotFound (like an unknown operation), not a Validation error.
        verb: z.string().min(1).max(100).describe('A verb of models/verbs.ts (VERB_NAMES).'),
        input: z.unknown().optional().describe("The verb's input; validated by the verb's own schema."),
        idempotency_key: z.string().min(8).max(200).optional(),
      })
      .strict(),
    // Typed per verb by the map (VerbOutput); the renderer's `call()` gives each call its own type.
    output: z.unknown(),
  },
  /**
   * Ask the assistant (one turn). Returns at once; the answer streams on `assistant.events`.
   * `page` is the in-app path the user is on (context for the model).
   */
  'assistant.start': {
    input: z.object({ message: z.string().min(1).max(8000), conversation_id: Id.optional(), page: z.string().max(300).optional() }).strict(),
    output: z.object({ run_id: z.string(), conversation_id: z.string() }),
  },
  /** Approve (with the `argsHash` shown) or decline a proposed write of one of this user's runs. */
  'assistant.confirm': {
    input: z
      .object({
        tool_call_id: z.string().min(1).max(100),
        approve: z.boolean(),
        args_hash: z.string().max(200).optional(),
        content_hash: z.string().max(200).optional(),
      })
      .strict(),
    output: z.object({ status: z.literal('accepted') }),
  },
  /** Stop one of this user's runs (a pending confirmation becomes skipped). */
  'assistant.stop': { input: z.object({ run_id: z.string().min(1).max(100) }).strict(), output: z.object({ stopped: z.literal(true) }) },
  /** The audit trace of one of this user's runs (request, steps, tool calls masked, decisions, usage). */
  'assistant.trace': { input: z.object({ run_id: z.string().min(1).max(100) }).strict(), output: z.custom<RunTraceView>() },
  /**
   * Assistant settings of the signed-in user's organisation (needs settings.manage): whether a
   * model key is configured and where from (never the key), the monthly budgets with
   * month-to-date spend, and every tool the org's roles can be offered with its on/off switch.
   */
  'settings.assistant': { input: Empty, output: z.custom<AssistantSettingsView>() },
  /**
   * Change the assistant settings (needs settings.manage): set or clear the org's model key
   * (stored encrypted; never returned), the list of switched-off tools (a switch can only
   * remove a tool, never add one a role lacks), the monthly budget, and each provider's data
   * clearance (`provider_clearance`: the in-app model `anthropic`, MCP clients `mcp`), quoting the
   * `version` it read (`expected_version`; a stale page gets a Conflict and nothing is saved).
   */
  'settings.updateAssistant': {
    input: z
      .object({
        api_key: z.string().min(20).max(300).regex(/^\S+$/, 'no spaces').nullable().optional(),
        disabled_tools: z.array(z.string().max(100)).max(200).optional(),
        budget_cap_usd: z.number().finite().min(0).max(1_000_000).nullable().optional(),
        /** Classes each provider may be sent (models/classification.ts); a provider not named keeps its clearance. */
        provider_clearance: z.object({ anthropic: ProviderClearanceInput.optional(), mcp: ProviderClearanceInput.optional() }).strict().optional(),
        /** The settings' `version` the page showed: a change saved since is a Conflict, nothing saved. */
        expected_version: z.number().int().min(0),
      })
      .strict(),
    output: z.custom<AssistantSettingsView>(),
  },
  /** The signed-in user's organisation: id, name and row version (any signed-in user). */
  'settings.organisation': { input: Empty, output: z.custom<OrganisationView>() },
  /**
   * Rename the signed-in user's organisation (needs settings.manage): `name` 1–200 characters
   * after trimming (checked by the service, which names the field), `expected_version` the version
   * the form showed (a rename since then is a Conflict with the name now stored).
   */
  'settings.updateOrganisation': {
    input: z.object({ name: z.string().max(1000), expected_version: z.number().int().min(0) }).strict(),
    output: z.custom<OrganisationView>(),
  },
  /** Proposed changes visible to this user (their own; for an owner also every needs-owner change), newest first. */
  'proposals.list': {
    input: z
      .object({ status: z.enum(['proposed', 'needs_owner', 'applied', 'declined', 'failed']).optional(), limit: z.number().int().min(1).max(500).default(100) })
      .strict(),
    output: z.custom<ProposalItemView[]>(),
  },
  /** Approve and apply a proposed change, quoting the content hash that was shown. */
  'proposals.approve': {
    input: z.object({ changeset_id: Id, content_hash: z.string().min(1).max(200) }).strict(),
    output: z.custom<{ proposal: ProposalItemView; changeset: AppliedChangesetView }>(),
  },
  /** Decline a proposed change (nothing is written). */
  'proposals.decline': { input: z.object({ changeset_id: Id }).strict(), output: z.custom<ProposalItemView>() },
  /**
   * Leave rows out of a bulk proposal before approving it (own page or MCP proposals, rows all of
   * one kind): the reviewed proposal is declined and the narrowed one returned ({@link ProposalItemView}).
   */
  'proposals.narrow': {
    input: z.object({ changeset_id: Id, content_hash: z.string().min(1).max(200), drop_ids: z.array(Id).min(1).max(500) }).strict(),
    output: z.custom<ProposalItemView>(),
  },
  /**
   * Set another user's sign-in PIN (4–8 digits): `user.manage`, an account of this organisation
   * whose role the signed-in role may grant. Not a changeset (credentials never travel in diffs).
   */
  'admin.setPin': {
    input: z.object({ user_id: Id, pin: z.string().regex(/^\d{4,8}$/, 'A PIN is 4 to 8 digits.') }).strict(),
    output: z.object({ pin_set: z.literal(true) }),
  },
  /**
   * Submit an entry form: plan the write verb as the signed-in user (the same plan the assistant
   * would propose), refuse it with Conflict when a row moved on from `expected_versions` (row id →
   * `{version, updated_at}` the form showed, or the bare version from older callers; either
   * differing from the stored row is a conflict) or, with `expect_absent`, when the form showed nothing stored and the
   * change would now replace a stored row (one that appeared since), run the policy, then apply at
   * once or return it for review ({@link FormSubmitResultView}).
   */
  'forms.submit': {
    input: z
      .object({
        verb: z.string().min(1).max(100),
        input: z.unknown().optional(),
        expected_versions: ExpectedVersions.optional(),
        expect_absent: z.boolean().optional().describe('The form showed nothing stored: only new rows may be written.'),
        idempotency_key: z.string().min(8).max(200).optional(),
      })
      .strict(),
    output: z.custom<FormSubmitResultView>(),
  },
  // ---- Capture room (needs capture.run; main/ipc/capture.ts, main/capture/workspace.ts) ----
  /** Recorded trials of the signed-in user's organisation, newest first. */
  'capture.recordings': { input: Empty, output: z.custom<{ recordings: CaptureRecordingView[] }>() },
  /**
   * Copy a recorded trial folder (its `videos/`, and its `pose-associated/` 2D keypoint folders when
   * present) and its calibration TOML into the workspace as a recording of `athlete_id` doing `test`.
   */
  'capture.importTrial': {
    input: z
      .object({
        trial_dir: z.string().min(1).max(1000).describe('Folder on this computer holding videos/ (and optionally pose-associated/).'),
        calibration_path: z.string().min(1).max(1000).describe('Calibration TOML (Pose2Sim layout).'),
        athlete_id: Id,
        test: z.enum(CAPTURE_TESTS),
      })
      .strict(),
    output: z.custom<CaptureRecordingView>(),
  },
  /** Start processing a recording off the UI thread; poll `capture.job` for its stages. */
  'capture.process': {
    input: z
      .object({
        recording_id: z.string().min(8).max(64),
        input: z
          .enum(['video', 'keypoints'])
          .optional()
          .describe('2D pose from the videos (default when there are videos) or from the recording’s keypoint files.'),
        max_frames: z.number().int().min(1).max(100_000).optional().describe('Process only the first N frames (a quick check).'),
        cross_check: z
          .enum(['movenet-thunder', 'blazepose', 'movenet'])
          .optional()
          .describe(
            "Also run this second 2D model on the same frames (video only; with movenet-thunder, the app's choice and the Process step's default, about 3.6× the 2D time): each reading carries how far the two models' angles differ (model_difference), and fails model_disagreement above 8° mean. Omitted: no second model, and every reading says not_cross_checked.",
          ),
      })
      .strict(),
    output: z.custom<CaptureJobView>(),
  },
  /** A processing job: status, each stage's progress, the error with its stage, the session id when done. */
  'capture.job': { input: z.object({ job_id: z.string().min(8).max(64) }).strict(), output: z.custom<CaptureJobView>() },
  /** Cameras attached to this machine and the video files configured to stand in for cameras (ATHLETE_CAPTURE_FILE_SOURCES); `note` says why no camera could be listed. */
  'capture.sources': { input: Empty, output: z.custom<{ sources: { id: string; label: string }[]; note: string | null }>() },
  /** Open the chosen sources (ids from `capture.sources`) as one rig, each captured on its own thread; closes a rig already open. */
  'capture.openRig': {
    input: z.object({ source_ids: z.array(z.string().min(3).max(40)).min(1).max(8) }).strict(),
    output: z.custom<{ sources: NegotiatedSource[]; fps: number }>(),
  },
  /** Close the open rig (releases the cameras). */
  'capture.closeRig': { input: Empty, output: z.object({ closed: z.literal(true) }) },
  /** The newest frame of one open camera as a downscaled JPEG (base64), or null before its first frame. */
  'capture.preview': {
    input: z.object({ camera: z.number().int().min(0).max(7), max_width: z.number().int().min(64).max(1920).optional() }).strict(),
    output: z.custom<{ camera: number; name: string; width: number; height: number; frame_index: number; jpeg_base64: string } | null>(),
  },
  /** The open rig: sources, per-camera counts, the running recording, cameras that failed. */
  'capture.rigStatus': { input: Empty, output: z.custom<CaptureRigStatusView>() },
  /** Start recording the open rig for `athlete_id` doing `test`, with `rig_id`'s calibration. */
  'capture.startRecording': {
    input: z.object({ athlete_id: Id, test: z.enum(CAPTURE_TESTS), rig_id: Id }).strict(),
    output: z.custom<CaptureRecordingView>(),
  },
  /** Stop the running recording; every file is closed before it answers (what was written is kept even when a camera failed). */
  'capture.stopRecording': { input: Empty, output: z.custom<CaptureStopView>() },
  /**
   * The first frame of the recording's first camera (JPEG base64), to tap the athlete on: the frame a
   * live recording kept when it started, or (an imported trial) the first frame of that camera's
   * video, made once and kept. `width`×`height`: that camera's full-size frame (px), the space of a tap.
   * Validation for a recording with 2D keypoint files only (tap with the CLI's --tap).
   */
  'capture.tapFrame': {
    input: z.object({ recording_id: z.string().min(8).max(64) }).strict(),
    output: z.custom<{ camera: string; jpeg_base64: string; width: number; height: number }>(),
  },
  /** Mark the athlete: one tap (pixels of that camera's full-size frame). */
  'capture.tap': {
    input: z
      .object({
        recording_id: z.string().min(8).max(64),
        camera: z.string().min(1).max(40),
        x: z.number().min(0).max(10_000),
        y: z.number().min(0).max(10_000),
      })
      .strict(),
    output: z.custom<CaptureRecordingView>(),
  },
  // ---- Rig set-up and calibration wizard (capture.run; main/ipc/capture-rig.ts, main/capture/live/wizard.ts) ----
  /** Start the calibration wizard on the open cameras: live board detection on worker threads. Restarts a running one. */
  'capture.calibStart': {
    input: z.object({ intrinsic_board: BoardInput, extrinsic_board: BoardInput.optional() }).strict(),
    output: z.custom<CalibrationWizardState>(),
  },
  /** The wizard's state (detections, views, coverage, RMS, poses, layout check), or null when none runs. */
  'capture.calibState': { input: Empty, output: z.custom<CalibrationWizardState | null>() },
  /** A camera's newest analysed frame (JPEG base64) with the detected board corners (full-size px); null when none newer than `after_frame`. */
  'capture.calibFrame': {
    input: z.object({ camera: z.number().int().min(0).max(7), after_frame: z.number().int().min(-1).optional() }).strict(),
    output: z.custom<{ camera: number; frame_index: number; width: number; height: number; corners: number[] | null; jpeg_base64: string } | null>(),
  },
  /** Switch the board looked for (intrinsics: held in front; extrinsics: on the floor) and automatic capture of new views. */
  'capture.calibSet': {
    input: z.object({ phase: z.enum(['intrinsics', 'extrinsics']).optional(), auto_capture: z.boolean().optional() }).strict(),
    output: z.custom<CalibrationWizardState>(),
  },
  /** Keep the current board detection of each camera (or of `cameras`) as an intrinsic view; says why one was not kept. */
  'capture.calibCapture': {
    input: z.object({ cameras: z.array(z.number().int().min(0).max(7)).max(8).optional() }).strict(),
    output: z.custom<{ results: CalibrationViewStatus[]; state: CalibrationWizardState }>(),
  },
  /** Retake: drop one view (0-based) or all views of a camera, with its intrinsics and pose. */
  'capture.calibRetake': {
    input: z.object({ camera: z.number().int().min(0).max(7), view: z.number().int().min(0).max(500).optional() }).strict(),
    output: z.custom<CalibrationWizardState>(),
  },
  /** Intrinsics (calibrateCamera, on a worker thread) of each camera with ≥ 3 views, or of `cameras`. */
  'capture.calibIntrinsics': {
    input: z.object({ cameras: z.array(z.number().int().min(0).max(7)).max(8).optional() }).strict(),
    output: z.custom<CalibrationWizardState>(),
  },
  /** Camera poses from the board lying on the floor, as every camera sees it now (PnP on worker threads). */
  'capture.calibExtrinsics': { input: Empty, output: z.custom<CalibrationWizardState>() },
  /** Import an existing calibration (TOML, Pose2Sim layout) for the open cameras, in order. */
  'capture.calibImport': {
    input: z.object({ toml: z.string().min(1).max(1_000_000), file_name: z.string().max(200).optional() }).strict(),
    output: z.custom<CalibrationWizardState>(),
  },
  /** Check the declared layout against the calibrated poses (yaw drift per camera, degrees). */
  'capture.calibLayout': {
    input: z.object({ layout: DeclaredLayout.min(1).max(8), tolerance_deg: z.number().min(1).max(90).optional() }).strict(),
    output: z.custom<CalibrationWizardState>(),
  },
  /** Save the calibrated rig for a room (`capture.saveRig`) and its TOML (Pose2Sim layout) in the capture folder. */
  'capture.calibSave': {
    input: z.object({ name: z.string().trim().min(1).max(100), rig_id: Id.optional() }).strict(),
    output: z.custom<{ rig_id: string; toml_path: string; toml: string }>(),
  },
  /** Stop the wizard (the cameras stay open). */
  'capture.calibClose': { input: Empty, output: z.object({ closed: z.literal(true) }) },
  /** Cancel a processing job (its process is killed; the recording is kept). */
  'capture.cancel': { input: z.object({ job_id: z.string().min(8).max(64) }).strict(), output: z.custom<CaptureJobView>() },
  /**
   * Device sync (shared/design/sync.md): this device's state as the app shell shows it — enrolled,
   * HQ address, device id, online, pending uploads, conflicts, last successful sync, last error.
   * Any signed-in user (never the device token).
   */
  'sync.status': { input: Empty, output: z.custom<DeviceSyncStatus>() },
  /**
   * Enrol this device with the club's HQ server (email + PIN of an HQ account, and a one-time HQ
   * sign-in code issued for that account: the PIN alone never signs anyone in to HQ, since every
   * staff device holds the PIN hashes; the PIN and code are sent to HQ once and never stored; the
   * device token is stored encrypted and never returned). Needs `settings.manage` (an org device:
   * it receives every account of the club with PIN hashes), or an athlete account enrolling its own
   * device with its own email (it receives that athlete's rows only). Background sync starts at
   * once. Errors: Validation (bad address), Unauthenticated (wrong email, PIN or sign-in code at
   * HQ; a code used, expired or issued for another account), RateLimited, Forbidden, Unavailable
   * (HQ not reachable).
   */
  'sync.enrol': {
    input: z
      .object({
        hqUrl: z.string().trim().min(8).max(300).describe('HQ base URL, e.g. http://hq.local:5180'),
        email: z.string().trim().min(3).max(200),
        pin: z.string().min(1).max(64),
        code: SignInCode,
        deviceName: z.string().trim().min(1).max(100).optional().describe("This device's name in HQ's activity log (default: the computer's name)"),
      })
      .strict(),
    output: z.custom<DeviceSyncStatus>(),
  },
  /** Run one sync pass now (upload the outbox, pull every shape to up-to-date); returns the status after it. */
  'sync.now': { input: Empty, output: z.custom<DeviceSyncStatus>() },
  /**
   * Changesets HQ rejected, kept until re-planned or discarded, with our values and the server's.
   * A user sees the conflicts whose rows their role may read (athletes: their own).
   */
  'sync.conflicts': { input: Empty, output: z.object({ conflicts: z.array(z.custom<SyncConflict>()), hidden: z.number().int() }) },
  /** Discard a rejected changeset (its optimistic rows go; the rows show the server's values). Same visibility as `sync.conflicts`. */
  'sync.discard': { input: z.object({ changesetId: Id }).strict(), output: z.custom<DeviceSyncStatus>() },
  /**
   * Whether the signed-in user is signed in to HQ as themselves on this device (the user who
   * enrolled it always is). Only then can HQ verify an owner approval or an RTP sign-off they give
   * here; without it HQ rejects the change (`approval_unverified` / `signoff_unverified`).
   * `enrolled_here`: they enrolled this device (only then are HQ sign-in codes issued from it).
   */
  'sync.hqSignIn': { input: Empty, output: z.object({ signed_in: z.boolean(), signed_in_at: z.string().nullable(), enrolled_here: z.boolean() }) },
  /**
   * Sign the signed-in user in to HQ as themselves on this enrolled device, with their PIN and a
   * one-time HQ sign-in code issued for their account (both sent to HQ once, never stored; their
   * own device token is stored encrypted). For owners approving changes and sign-off holders
   * signing off RTP on a shared device. Errors: NotConfigured (not enrolled), Unauthenticated
   * (wrong PIN or sign-in code at HQ), RateLimited, Forbidden, Unavailable (HQ not reachable: try
   * again when online).
   */
  'sync.signInToHq': {
    input: z.object({ pin: z.string().min(1).max(64), code: SignInCode }).strict(),
    output: z.object({ signed_in: z.boolean(), signed_in_at: z.string().nullable() }),
  },
  /**
   * Issue a one-time HQ sign-in code (`XXXX-XXXX-XXXX`, single use, expires after 24 h) for
   * `userId`: the signed-in user's own (to enrol another device of theirs, or sign in to HQ on a
   * shared laptop), or another account of the club when the signed-in role holds `user.manage`
   * (HQ decides the finer rule, as for setting that account's PIN, and answers Forbidden). Issued
   * by HQ with the signed-in user's own HQ sign-in on this device; shown once, never stored here.
   * Errors: NotConfigured (this device is not enrolled), Unauthenticated (the signed-in user is not
   * signed in to HQ on this device), Forbidden, NotFound (no such account of this club), RateLimited,
   * Unavailable (HQ not reachable).
   */
  'sync.enrolmentCode': {
    input: z.object({ userId: Id }).strict(),
    output: z.custom<IssuedSignInCode>(),
  },
} as const;

/** A recorded trial in the capture workspace (models/capture/jobs.ts). */
export type CaptureRecordingView = RecordingView;
/** The open rig as the Record section shows it. */
export type CaptureRigStatusView =
  | { open: false }
  | {
      open: true;
      sources: NegotiatedSource[];
      fps: number;
      counts: CameraCounts[];
      recording: { recording_id: string; seconds: number } | null;
      failures: DeviceFailure[];
    };
/** What stopping a recording returns. */
export interface CaptureStopView {
  recording: RecordingView;
  frames: number;
  seconds: number;
  reason: 'stopped' | 'source_ended';
  failure: DeviceFailure | null;
  /** Per camera, this recording only: `captured` = its own frames written (written − duplicated; preview frames before/after are not counted). */
  cameras: { name: string; captured: number; written: number; dropped: number; duplicated: number }[];
}
/** A processing job (models/capture/jobs.ts). */
export type CaptureJobView = JobView;

/** A proposed change as the Approvals page shows it (checked against main/kinetix/proposals.ts). */
export interface ProposalItemView {
  id: string;
  userId: string;
  source: 'assistant' | 'mcp' | 'page';
  runId: string | null;
  toolName: string;
  title: string;
  /** The service verb the change runs (`changesets.undo` for an Undo, which is applied whole). */
  verb: string;
  summary: string;
  changes: RowChange[];
  status: 'proposed' | 'needs_owner' | 'applied' | 'declined' | 'failed';
  decisions: { effect: string; reason: string; code: string }[];
  approverRole: string | null;
  contentHash: string;
  decidedBy: string | null;
  decidedAt: string | null;
  failure: ErrorPayload | null;
  createdAt: string;
  /** The club device it was proposed on when not this one (a change waiting for an owner, synced through HQ), else null. */
  originDevice: { id: string; name: string } | null;
}

/**
 * What `forms.submit` returns: applied at once (one row, no sign-off, within policy), or stored
 * as a proposal to review as a diff and approve with `proposals.approve` (more than one row, an
 * RTP sign-off, needs an owner, or an owner's own change the policy allows only because they are
 * an owner). The same change sent again while its proposal waits returns that proposal (no
 * duplicate). `notes` are what a reviewer must read besides the diff.
 */
export type FormSubmitResultView =
  { status: 'applied'; changeset: AppliedChangesetView; reveal?: Record<string, string> } | { status: 'review'; proposal: ProposalItemView; notes: string[] };

/** What `settings.organisation` and `settings.updateOrganisation` return. */
export interface OrganisationView {
  id: string;
  name: string;
  /** Row version, quoted back as `expected_version` by a rename. */
  version: number;
  /** True on a device enrolled for sync: the name and the assistant budget are HQ's, changed there, not here. */
  set_at_hq: boolean;
}

/** What `settings.assistant` returns. */
export interface AssistantSettingsView {
  provider: { configured: boolean; source: 'settings' | 'env' | 'none'; base_url: string | null };
  model: string;
  month_start: string;
  /** `set_at_hq`: on a device enrolled for sync the cap is HQ's (shown, not changed here). */
  org: { cap_usd: number | null; spend_mtd_usd: number | null; set_at_hq: boolean };
  users: { id: string; display_name: string; role: string; cap_usd: number | null }[];
  my_spend_mtd_usd: number | null;
  /** The classes each provider may be sent, in class order (default `['internal']`; models/classification.ts). */
  clearance: ClearanceByProvider;
  /** Bumped by every saved change; quoted back as `expected_version` (optimistic concurrency). */
  version: number;
  tools: { name: string; title: string; risk: string; permission: string; disabled: boolean }[];
}

/**
 * Streams: a subscription yields events until it ends. `assistant.events` replays a run's
 * persisted events after `last_event_id`, then live ones (kinetix.md §8).
 */
export const STREAMS = {
  'assistant.events': { input: z.object({ run_id: z.string().min(1).max(100), last_event_id: z.string().max(20).optional() }).strict() },
  /** The device's sync status: the current one at once, then each change (the app shell's indicator). */
  'sync.events': { input: Empty },
} as const;
/** Stream names. */
export type StreamName = keyof typeof STREAMS;
/** Every stream name at runtime. */
export const STREAM_NAMES = Object.keys(STREAMS) as StreamName[];
/** Input of a stream. */
export type StreamInput<K extends StreamName> = z.input<(typeof STREAMS)[K]['input']>;
/** Event type of each stream. */
export interface StreamEvents {
  'assistant.events': RunEventEnvelope;
  'sync.events': DeviceSyncStatus;
}
/** True when `name` is a stream of the contract. */
export function isStreamName(name: unknown): name is StreamName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(STREAMS, name);
}
/** The stream implementation's shape (checked like {@link Handlers}). */
export type StreamHandlers<Ctx> = { [K in StreamName]: (ctx: Ctx, input: z.output<(typeof STREAMS)[K]['input']>) => AsyncIterable<StreamEvents[K]> };

/**
 * Names of the CUSTOM AG-UI events the renderer folds; each must exist with this value in
 * main/kinetix/events.ts KINETIX_EVENTS (main/ipc/verb-results.ts checks it at compile time).
 * The renderer also shows `kinetix.policy`, `kinetix.needs_owner` and `kinetix.tools_narrowed`
 * when the harness emits them.
 */
export interface AssistantEventNames {
  toolCall: 'kinetix.tool_call';
  confirmRequired: 'kinetix.confirm_required';
  usage: 'kinetix.usage';
  openPage: 'kinetix.open_page';
  reveal: 'kinetix.reveal';
}

/** Operation names. */
export type OpName = keyof typeof CONTRACT;
/** Every operation name at runtime (preload and hosts refuse anything else). */
export const OP_NAMES = Object.keys(CONTRACT) as OpName[];
/** What a caller passes (before defaults). */
export type OpInput<K extends OpName> = z.input<(typeof CONTRACT)[K]['input']>;
/** What a handler receives (after parsing and defaults). */
export type OpParsedInput<K extends OpName> = z.output<(typeof CONTRACT)[K]['input']>;
/** What a handler returns and a caller receives. */
export type OpOutput<K extends OpName> = z.output<(typeof CONTRACT)[K]['output']>;

/** Every reply on every transport: the value or the typed error. */
export type CallResult<T> = { ok: true; value: T } | { ok: false; error: ErrorPayload };

/** The one implementation's shape: a function per operation. `Ctx` is the transport's session. */
export type Handlers<Ctx> = { [K in OpName]: (ctx: Ctx, input: OpParsedInput<K>) => OpOutput<K> | Promise<OpOutput<K>> };

/** True when `name` is an operation of the contract. */
export function isOpName(name: unknown): name is OpName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(CONTRACT, name);
}

/** One event of an assistant run as it travels to views (AG-UI event + its per-run id). */
export interface RunEventEnvelope {
  /** Sent back as the last event id when a view reconnects (`String(seq)`). */
  id: string;
  runId: string;
  seq: number;
  event: AGUIEvent;
  /** Live-only (never persisted, never replayed), e.g. a one-time reveal. */
  ephemeral?: boolean;
}

/**
 * What the preload exposes as `window.athleteIntelligence` and what the browser transport
 * implements: exactly the contract.
 */
export interface ContractBridge {
  call<K extends OpName>(op: K, input: OpInput<K>): Promise<CallResult<OpOutput<K>>>;
  /**
   * Subscribe to a stream. `onEnd` runs once: with no argument when the stream ended normally,
   * with the error when it failed or was refused. Returns a function that cancels it.
   */
  subscribe<K extends StreamName>(stream: K, input: StreamInput<K>, onEvent: (e: StreamEvents[K]) => void, onEnd: (error?: ErrorPayload) => void): () => void;
}

// ------------------------------------------------------------------------------------------------
// Verbs as the renderer calls them: one name space with the operations above, typed by the verb
// map (models/verbs.ts). `verb.call` is the envelope that carries them; callers never name it.

/** Everything a client calls by name: the contract's operations (except the `verb.call` envelope) and every verb. */
export type CallName = Exclude<OpName, 'verb.call'> | VerbName;
/** What a caller passes to `K` (before defaults). */
export type CallInput<K extends CallName> = K extends VerbName ? VerbInput<K> : K extends OpName ? OpInput<K> : never;
/** What a call of `K` returns. */
export type CallOutput<K extends CallName> = K extends VerbName ? VerbOutput<K> : K extends OpName ? OpOutput<K> : never;

/** An applied changeset as pages see it (models/outputs.ts `AppliedChangesetOut`). */
export type AppliedChangesetView = AppliedChangesetOut;
/** A stored changeset (activity view, Undo). */
export type StoredChangesetView = VerbOutput<'changesets.get'>;
/** A pose reading with its conditions (the fields `pose.getMetrics` returns). */
export type PoseMetricView = PoseMetricOut;
/** One relevant help passage (help.search). */
export type HelpPassageView = HelpPassageOut;
/** The result of a write verb called through `verb.call`. */
export type WriteVerbResult = WriteOutput;

/** What `assistant.trace` returns (checked against the harness in main/ipc/verb-results.ts). */
export interface RunTraceView {
  run: {
    id: string;
    /** Whose run it is (the trace may be opened by others in the org; see main/kinetix/trace-access.ts). */
    user_id: string;
    status: string;
    model: string;
    page: string | null;
    request_text: string;
    iterations: number;
    cost_usd: number;
    error_code: string | null;
    error_message: string | null;
    started_at: string;
    finished_at: string | null;
  };
  toolCalls: {
    id: string;
    tool_name: string;
    title: string;
    risk: string | null;
    args_json: string;
    status: string;
    changeset_id: string | null;
    result_json: string | null;
    error_json: string | null;
    approver_user_id: string | null;
    decided_at: string | null;
    created_at: string;
  }[];
  trace: { seq: number; kind: string; data: unknown; at: string }[];
  usage: {
    request_index: number;
    model: string;
    input_tokens: number;
    output_tokens: number;
    cache_read_tokens: number;
    cache_write_tokens: number;
    cost_usd: number | null;
    partial: number;
  }[];
}
