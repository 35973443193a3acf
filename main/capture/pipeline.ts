/**
 * The measurement pipeline for one trial: inputs → athlete's 2D keypoints per view →
 * native triangulation (libuv worker thread) → gap filling + zero-lag Butterworth → joint
 * angles, gates and conditions → `pose_metric` rows and a TRC file.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { associateAthlete, defaultTap, peopleInView, type Tap } from '../../models/capture/association';
import { type CameraCalibration, hasDistortion, projectionMatrix, undistortObservations } from '../../models/capture/camera';
import { BODY25B, type KeypointSet } from '../../models/capture/keypoints';
import type { PoseMetricInput } from '../../models/capture/metrics';
import { assessRigDrift, athleteHeading, viewMatchesDeclared, viewObliquity, type DeclaredLayout, type RigDriftReport } from '../../models/capture/obliquity';
import { buildPoseMetrics, postProcess, type JointOutcome } from '../../models/capture/summary';
import { makeAngleSeries, type AngleSeries } from '../../models/capture/series';
import { DEFAULT_TRIANGULATION, triangulateBatch, type TriangulationOptions, type TriangulationResult } from '../../models/capture/triangulation';
import { formatTrc } from '../../models/capture/trc';
import { filterPad } from '../../models/capture/filters';
import {
  cameraConditions,
  dropOutOfImage,
  keypointConfidenceSpread,
  maxKeypointDisplacement,
  meanKeypointConfidence,
  STATIC_MAX_DISPLACEMENT_M,
  STATIC_TRIAL_SECONDS,
  athleteNotTappedCondition,
  trackJumpCondition,
  type ReadingCondition,
} from '../../models/capture/quality';
import { applySyncOffsets, estimateSync, SYNC_AMBIGUITY, SYNC_CONFIRM_MAX_FRAMES, type SyncReport } from '../../models/capture/sync';
import { median } from '../../models/capture/vec';
import { loadTomlCalibration, CalibrationError } from './calibration';
import { CaptureInputError } from './errors';
import { hasAddon, triangulationAddon } from './native/index';
import { syncEvidenceCondition, timestampSkew } from './sync-timestamps';
import {
  countReadableFrames,
  riffTruncated,
  findKeypointFolders,
  findVideos,
  frameRateFromConfig,
  loadKeypointFolders,
  probeVideos,
  type VideoSource,
} from './sources';
import { DEFAULT_POSE, poseKeypointSet, type PoseEstimatorSpec } from './pose/types';
import { estimateVideoPoses } from './pose/run';
import {
  confirmedFrames,
  duplicatedFramesCondition,
  maskDuplicatedViews,
  readDuplicatedFrames,
  readRecordingEnd,
  recordingCutShortCondition,
  recordingLooksCutShort,
  trialDuplicatedFrames,
  type RecordingEnd,
} from './live/sidecar';
import type { Keypoints2D } from '../../models/capture/openpose';

/** Progress callback: stage name, units done, units total. */
export type Progress = (stage: string, done: number, total: number) => void;

export interface ProcessOptions {
  trialDir: string;
  calibPath: string;
  /** OpenPose JSON folders (one per camera); when set, videos are not used. */
  keypointDirs?: string[];
  /** Use the trial's own keypoint folders (pose-associated/ or pose/) instead of videos. */
  useTrialKeypoints?: boolean;
  /** Tap selecting the athlete; camera is an index or a calibration name. */
  tap?: { camera: number | string; x: number; y: number };
  /** Frames per second (JSON input); videos carry their own. */
  fps?: number;
  cutoffHz?: number;
  maxGapFrames?: number;
  triangulation?: Partial<TriangulationOptions>;
  /** Rig's declared layout and drift tolerances. */
  layout?: DeclaredLayout | null;
  driftToleranceDeg?: number;
  driftToleranceM?: number;
  /** 2D pose model for video input. @default DEFAULT_POSE (pose/types.ts) */
  pose?: PoseEstimatorSpec;
  /** Process only the first N frames. */
  maxFrames?: number;
  onProgress?: Progress;
  /** Per-camera 2D pose progress (video input): camera name, frames done, frames total. */
  onCameraProgress?: (camera: string, done: number, total: number) => void;
  /** Use the TypeScript reference triangulation instead of the native addon. */
  referenceTriangulation?: boolean;
  /**
   * Triangulate the observed (distorted) pixels as they are, skipping lens undistortion — only for
   * comparisons with tools that do not undistort (Pose2Sim's `undistort_points = false`). @default false
   */
  skipUndistort?: boolean;
  /**
   * Camera synchronisation: `check` (default) estimates each camera's frame offset and flags the
   * readings (`camera_offset`); `auto` also shifts that camera's frames by it and trims the trial
   * to the frames all cameras cover, as Pose2Sim's synchronisation step does; `off` skips it.
   */
  sync?: 'check' | 'auto' | 'off';
  /**
   * A second 2D model run on the same frames (video input only), triangulated, filtered and turned
   * into angles the same way: readings whose two angles differ by more than
   * `MODEL_DISAGREEMENT_MAX_DEG` mean fail `model_disagreement`, the others carry the difference as
   * `model_difference` (quality.ts). Costs a second 2D pass
   * (BENCHMARKS.md, "Second-model cross-check"). Off when omitted here (every reading then says
   * `not_cross_checked`); the CLI and the Process step turn it on by default for video.
   */
  crossCheck?: PoseEstimatorSpec;
  /**
   * 2D people already estimated on these videos (people[camera][frame], in the keypoint set of
   * `pose` and `crossCheck`), e.g. from an earlier run of the same models: the 2D pass is skipped.
   * Only for validation and tests that process one trial several ways; the caller vouches they came
   * from these videos and models.
   */
  precomputed?: { primary?: Keypoints2D[][][]; crossCheck?: Keypoints2D[][][] };
}

/** The second model's run (`crossCheck`): its label, keypoint set, filtered 3D (F×K×3, m, frames as the primary's) and excluded views per camera. */
export interface CrossCheckResult {
  model: string;
  primaryModel: string;
  keypointSet: KeypointSet;
  filtered: Float64Array;
  excludedCounts: number[];
}

export interface ProcessResult {
  cameras: CameraCalibration[];
  source: 'video' | 'keypoints_json';
  videos: VideoSource[] | null;
  keypointSet: KeypointSet;
  fps: number;
  frames: number;
  tap: Tap;
  /** The athlete's 2D keypoints per frame, keypoint and camera: F×K×C×3 (x px, y px, confidence), as observed (distorted). */
  observations: Float64Array;
  /** Per camera: the athlete's 2D keypoints outside the image (beyond `OUT_OF_IMAGE_MARGIN_PX`), treated as unseen (confidence 0 in `observations`). */
  outOfImage: number[];
  /** True when the observations were undistorted with the calibration's coefficients before triangulation. */
  undistorted: boolean;
  /** Synchronisation estimate (null with `sync: 'off'`), and whether offsets were applied (`sync: 'auto'`); applied offsets trim `frames`. */
  sync: (SyncReport & { applied: boolean; firstFrame: number }) | null;
  /** Trial-level conditions given to every reading (camera synchronisation and imbalance, static trial, a live recording's duplicated frames). */
  trialConditions: ReadingCondition[];
  /** Per camera, frames its live recording's sidecar marks duplicated (left out of triangulation: confidence 0 in `observations`) and its sidecar's rows; null without sidecars. */
  duplicatedFrames: { camera: string; count: number; share: number; rows: number | null }[] | null;
  /** Raw triangulation (F×K×3, m) and its diagnostics. */
  triangulation: TriangulationResult;
  /** Gap-filled (no filter) and gap-filled + filtered points (F×K×3, m). */
  filled: Float64Array;
  filtered: Float64Array;
  interpolated: number;
  rows: PoseMetricInput[];
  outcomes: JointOutcome[];
  drift: RigDriftReport;
  obliquity: { yawsDeg: number[]; obliquityDeg: number | null };
  cameraMode: string;
  trcText: string;
  timings: Record<string, number>;
  /** The second 2D model's run when `crossCheck` was given, else null. */
  crossCheck: CrossCheckResult | null;
}

/** Run the pipeline (see module comment). Throws `CaptureInputError` on bad input. */
export async function processTrial(o: ProcessOptions): Promise<ProcessResult> {
  const timings: Record<string, number> = {};
  const t0 = performance.now();
  let cams: CameraCalibration[];
  try {
    cams = loadTomlCalibration(o.calibPath);
  } catch (e) {
    if (e instanceof CalibrationError) throw new CaptureInputError('bad_calibration', e.message);
    throw e;
  }
  if (cams.length < 2) throw new CaptureInputError('bad_calibration', `${o.calibPath} has ${cams.length} camera; triangulation needs at least 2`);
  if (o.layout) {
    const unknown = o.layout.filter((d) => !cams.some((c) => c.name === d.camera)).map((d) => d.camera);
    if (unknown.length)
      throw new CaptureInputError(
        'bad_argument',
        `--layout names camera(s) not in the calibration: ${unknown.join(', ')} (calibrated: ${cams.map((c) => c.name).join(', ')})`,
      );
    // Drift is judged between cameras (a common rotation is absorbed), so one camera can never drift.
    if (o.layout.length < 2) throw new CaptureInputError('bad_argument', '--layout must declare at least 2 cameras: drift is measured between cameras');
  }
  const C = cams.length;
  const P = Float64Array.from(cams.flatMap(projectionMatrix));
  const tapCam = o.tap === undefined ? 0 : typeof o.tap.camera === 'number' ? o.tap.camera : cams.findIndex((c) => c.name === o.tap!.camera);
  if (tapCam < 0 || tapCam >= C)
    throw new CaptureInputError('bad_argument', `tap camera ${String(o.tap?.camera)} is not one of ${cams.map((c) => c.name).join(', ')}`);

  let observations: Float64Array, set: KeypointSet, frames: number, fps: number, tap: Tap;
  // people each camera sees (most in one frame): more than one and no tap → athlete_not_tapped
  let firstFramePeople: number[];
  // video input: the frames every camera can supply (before --frames)
  let available = 0;
  let sidecarRows: (number | null)[] = [];
  let readable: (number | null)[] | null = null;
  let truncated: boolean[] = [];
  let recordingEnd: RecordingEnd | null = null;
  let videos: VideoSource[] | null = null;
  let crossObs: Float64Array | null = null;
  let crossSet: KeypointSet | null = null;
  const keypointDirs = o.keypointDirs?.length ? o.keypointDirs : o.useTrialKeypoints ? findKeypointFolders(o.trialDir) : null;
  o.onProgress?.('decode', 0, 1);
  if (keypointDirs && o.crossCheck)
    throw new CaptureInputError('bad_argument', '--cross-check runs a second 2D model on the videos: process the videos (not keypoint JSON) to use it');
  if (keypointDirs) {
    if (keypointDirs.length === 0) throw new CaptureInputError('no_input', `${o.trialDir} has no pose-associated/ or pose/ keypoint folders`);
    set = BODY25B;
    const kp = loadKeypointFolders(cams, keypointDirs, set.length);
    const fpsGuess = o.fps ?? frameRateFromConfig(o.trialDir);
    if (!fpsGuess)
      throw new CaptureInputError('bad_argument', "keypoint JSON carries no frame rate: pass --fps (or put [project] frame_rate in the trial's Config.toml)");
    fps = fpsGuess;
    const people = o.maxFrames ? kp.people.map((c) => c.slice(0, o.maxFrames)) : kp.people;
    frames = people[0]!.length;
    const tp = o.tap ? { camera: tapCam, x: o.tap.x, y: o.tap.y } : defaultTap(people);
    if (!tp) throw new CaptureInputError('no_athlete', 'nobody is detected in the first frame; pass --tap camera:x,y on the athlete');
    tap = tp;
    firstFramePeople = peopleInView(people, o.triangulation?.minConfidence ?? 0.3);
    observations = associateAthlete(people, P, set.length, tap, { minConfidence: o.triangulation?.minConfidence ?? 0.3 }).observations;
    timings.load_s = (performance.now() - t0) / 1000;
    o.onProgress?.('decode', 1, 1);
  } else {
    if (!existsSync(o.trialDir)) throw new CaptureInputError('bad_argument', `trial folder ${o.trialDir} does not exist; check the path`);
    const files = findVideos(o.trialDir);
    if (files.length === 0)
      throw new CaptureInputError('no_input', `${o.trialDir} has no videos (videos/*.mp4, …); pass --keypoints <folders> for 2D keypoint JSON`);
    videos = probeVideos(cams, files);
    timings.probe_s = (performance.now() - t0) / 1000;
    o.onProgress?.('decode', 1, 1);
    fps = videos[0]!.fps;
    // A live recording cut short (a full disk, a killed recorder): only the frames every sidecar
    // confirmed and every video holds (probeVideos lets the counts differ when every video has a sidecar).
    sidecarRows = videos.map((v) => readDuplicatedFrames(v.path, 0)?.rows ?? null);
    available = Math.min(...videos.map((v) => v.frames), confirmedFrames(videos) ?? Infinity);
    recordingEnd = readRecordingEnd(o.trialDir);
    // a live recording's .avi cut off afterwards (its RIFF size runs past the end of the file) keeps its header's count
    const live = sidecarRows.every((r) => r !== null);
    truncated = live ? videos.map((v) => riffTruncated(v.path)) : [];
    if (live && (recordingLooksCutShort(recordingEnd, videos, sidecarRows) || truncated.some(Boolean))) {
      // count what each video really holds (up to N); a count that reaches N says only "at least N"
      const limit = available;
      // a file cut off mid-frame decodes its last, partial frame from the previous one's data (issue 15 review):
      // when a cut-off file runs out before the limit, its last decoded frame is not used
      const counted = videos.map((v, i) => {
        const n = countReadableFrames(v.path, limit);
        return truncated[i] && n < limit ? Math.max(0, n - 1) : n;
      });
      available = Math.min(available, ...counted);
      readable = counted.map((n) => (n < limit ? n : null));
    }
    frames = Math.min(available, o.maxFrames ?? Infinity);
    if (frames < 1)
      throw new CaptureInputError('empty_video', `${o.trialDir}: no frame was written by every camera (timestamp sidecars in videos/); record again`);
    const spec = o.pose ?? DEFAULT_POSE;
    set = poseKeypointSet(spec);
    const t1 = performance.now();
    const vs = videos;
    const est =
      o.precomputed?.primary?.map((c) => c.slice(0, frames)) ??
      (await estimateVideoPoses(
        videos,
        frames,
        spec,
        o.onProgress,
        undefined,
        o.onCameraProgress ? (c, d, n) => o.onCameraProgress?.(vs[c]!.camera, d, n) : undefined,
      ));
    timings.pose_s = (performance.now() - t1) / 1000;
    const tp = o.tap ? { camera: tapCam, x: o.tap.x, y: o.tap.y } : defaultTap(est);
    if (!tp) throw new CaptureInputError('no_athlete', 'nobody is detected in the first frame; pass --tap camera:x,y on the athlete');
    tap = tp;
    firstFramePeople = peopleInView(est, o.triangulation?.minConfidence ?? 0.3);
    observations = associateAthlete(est, P, set.length, tap, { minConfidence: o.triangulation?.minConfidence ?? 0.3 }).observations;
    if (o.crossCheck) {
      // the same frames through the second model; the athlete is the one the same tap selects
      const t3 = performance.now();
      crossSet = poseKeypointSet(o.crossCheck);
      const est2 =
        o.precomputed?.crossCheck?.map((c) => c.slice(0, frames)) ??
        (await estimateVideoPoses(videos, frames, o.crossCheck, (_s, d, n) => o.onProgress?.('cross-check', d, n)));
      crossObs = associateAthlete(est2, P, crossSet.length, tap, { minConfidence: o.triangulation?.minConfidence ?? 0.3 }).observations;
      timings.cross_check_pose_s = (performance.now() - t3) / 1000;
    }
  }

  // A point outside its camera's image was not seen there, whatever confidence the 2D model gave it.
  const outOfImage = dropOutOfImage(observations, set.length, cams);
  if (crossObs && crossSet) dropOutOfImage(crossObs, crossSet.length, cams);
  // A live recording's duplicated frames (its timestamp sidecars): those views are stale, left out.
  const duplicated = videos ? trialDuplicatedFrames(videos, frames) : null;
  if (duplicated) {
    maskDuplicatedViews(observations, set.length, duplicated);
    if (crossObs && crossSet) maskDuplicatedViews(crossObs, crossSet.length, duplicated);
  }

  const t2 = performance.now();
  const topt = { ...DEFAULT_TRIANGULATION, ...o.triangulation };
  o.onProgress?.('triangulate', 0, 1);
  // P = K·[R | t] is an ideal pinhole: undistort the observed pixels first (OpenCV's model).
  const undistorted = !o.skipUndistort && cams.some(hasDistortion);
  let ideal = undistorted ? undistortObservations(observations, cams) : observations;
  const K = set.length;
  const trialConditions: ReadingCondition[] = [];
  const notTapped = athleteNotTappedCondition(
    o.tap !== undefined,
    firstFramePeople,
    cams.map((c) => c.name),
  );
  if (notTapped) trialConditions.push(notTapped);
  const dupCondition = duplicated ? duplicatedFramesCondition(duplicated, frames) : null;
  if (dupCondition) trialConditions.push(dupCondition);
  const cutShort = videos ? recordingCutShortCondition(recordingEnd, videos, sidecarRows, readable, available, truncated) : null;
  if (cutShort) trialConditions.push(cutShort);
  let sync: ProcessResult['sync'] = null;
  if ((o.sync ?? 'check') !== 'off') {
    o.onProgress?.('synchronise', 0, 1);
    const rep = estimateSync(ideal, P, K, C, { minConfidence: o.triangulation?.minConfidence ?? 0.3 });
    const shifted = rep.offsets.some((x) => x !== 0);
    const describe = rep.offsets
      .map((x, c) =>
        x === 0
          ? null
          : `${cams[c]!.name} by ${Math.abs(x)} frame${Math.abs(x) === 1 ? '' : 's'} (${x > 0 ? 'behind' : 'ahead of'} the others; reprojection ${rep.residualAtZeroPx[c]?.toFixed(1)} px in step vs ${rep.residualAtBestPx[c]?.toFixed(1)} px re-timed)`,
      )
      .filter((x) => x !== null)
      .join('; ');
    if (shifted && o.sync === 'auto') {
      const a = applySyncOffsets(ideal, K, C, rep.offsets);
      ideal = a.observations;
      observations = applySyncOffsets(observations, K, C, rep.offsets).observations;
      frames = a.frames;
      sync = { ...rep, applied: true, firstFrame: a.firstFrame };
      trialConditions.push({
        code: 'camera_offset_corrected',
        detail: `camera frame offsets found and corrected (--sync auto): ${describe}; the trial was trimmed to the ${a.frames} frames all cameras cover`,
      });
      // A correction restores trust only when the corrected trial checks out: re-run the check on it, and the
      // corrected camera's best fit must be pinned to within ±SYNC_CONFIRM_MAX_FRAMES (not a flat curve).
      const again = estimateSync(ideal, P, K, C, { minConfidence: o.triangulation?.minConfidence ?? 0.3 });
      const doubts: string[] = [];
      again.offsets.forEach((x, c) => {
        if (x !== 0) doubts.push(`after the correction the check still finds ${cams[c]!.name} ${Math.abs(x)} frame${Math.abs(x) === 1 ? '' : 's'} out of step`);
      });
      rep.offsets.forEach((x, c) => {
        const amb = rep.ambiguousLags[c];
        if (x !== 0 && (!amb || rep.detectableFrames[c] === null))
          doubts.push(
            `${cams[c]!.name}'s correction not confirmed: after shifting it by ${x}, the check could not pin its timing (${!amb ? 'too few usable point pairs' : 'the residual changes too little with the lag'})`,
          );
        else if (x !== 0 && amb && (amb[0] < -SYNC_CONFIRM_MAX_FRAMES || amb[1] > SYNC_CONFIRM_MAX_FRAMES))
          doubts.push(
            `${cams[c]!.name}'s offset is uncertain: after shifting it by ${x}, lags from ${amb[0]} to ${amb[1]} frames fit within ${100 * SYNC_AMBIGUITY} % of the best (a correction is confirmed only within ±${SYNC_CONFIRM_MAX_FRAMES})`,
          );
      });
      if (doubts.length)
        trialConditions.push({
          code: 'camera_offset',
          detail: `the automatic correction is not confirmed: ${doubts.join('; ')}. Re-record with synchronised cameras`,
        });
    } else {
      sync = { ...rep, applied: false, firstFrame: 0 };
      if (shifted)
        trialConditions.push({
          code: 'camera_offset',
          detail: `cameras out of step: ${describe}. Re-record with synchronised cameras, or process with --sync auto to shift that camera's frames`,
        });
    }
    // The check's power: cameras it cannot confirm in step (an offset of a few frames would not show, or the best fit is not at 0).
    if (rep.estimable) {
      const ms = (d: number) => `${Math.round((1000 * d) / fps)} ms`;
      const weak = rep.detectableFrames
        .map((d, c) => {
          const amb = rep.ambiguousLags[c];
          const off0 = !!amb && (amb[0] > 0 || amb[1] < 0);
          if (d !== null && d <= SYNC_CONFIRM_MAX_FRAMES && !off0) return null;
          const limit =
            d === null
              ? `an offset of up to ${rep.maxLag} frames in one direction would not be found`
              : `offsets under ${d} frames (${ms(d)}) would not be found`;
          return `${cams[c]!.name}: ${limit}${off0 ? `; its best fit is ${amb?.[0]} to ${amb?.[1]} frames off, below the detection bound` : ''}`;
        })
        .filter((x) => x !== null);
      if (weak.length)
        trialConditions.push({
          code: 'sync_unconfirmed',
          detail: `the synchronisation check cannot confirm every camera in step (its reprojection residual changes too little with the lag): ${weak.join('; ')}. Fast movements magnify a small offset; record with this app's capture (timestamps) or synchronised cameras for fast movements`,
        });
    }
    o.onProgress?.('synchronise', 1, 1);
  }
  const syncEvidenceAt = trialConditions.length;
  const tri: TriangulationResult =
    o.referenceTriangulation || !hasAddon('triangulation')
      ? triangulateBatch({ cameras: C, projections: P, observations: ideal }, topt)
      : await triangulationAddon().triangulateAsync(P, ideal, C, topt);
  o.onProgress?.('triangulate', 1, 1);
  timings.triangulate_s = (performance.now() - t2) / 1000;

  // Per-camera exclusion and reprojection residuals (the imbalance checks); per point, the views
  // confident enough to be used (the two_view_keypoints check tells hidden from excluded views).
  const validViews = new Array<number>(C).fill(0),
    residuals: number[][] = Array.from({ length: C }, () => []);
  const minConf = topt.minConfidence;
  const confidentMask = new Uint32Array(tri.viewMask.length);
  for (let i = 0; i < tri.viewMask.length; i++) {
    const x = tri.points[i * 3] ?? NaN,
      y = tri.points[i * 3 + 1] ?? NaN,
      z = tri.points[i * 3 + 2] ?? NaN;
    for (let c = 0; c < C; c++) {
      const ob = (i * C + c) * 3;
      if ((ideal[ob + 2] ?? 0) >= minConf && Number.isFinite(ideal[ob])) {
        validViews[c]!++;
        confidentMask[i] = (confidentMask[i] ?? 0) | (1 << c);
      }
      if (!((tri.viewMask[i] ?? 0) & (1 << c)) || !Number.isFinite(x)) continue;
      const p = P.subarray(c * 12, c * 12 + 12);
      const w = p[8]! * x + p[9]! * y + p[10]! * z + p[11]!;
      residuals[c]!.push(
        Math.hypot((p[0]! * x + p[1]! * y + p[2]! * z + p[3]!) / w - ideal[ob]!, (p[4]! * x + p[5]! * y + p[6]! * z + p[7]!) / w - ideal[ob + 1]!),
      );
    }
  }
  {
    const hips = [set.indexOf('left_hip'), set.indexOf('right_hip')] as const;
    const jump = hips[0] >= 0 && hips[1] >= 0 ? trackJumpCondition(tri.points, K, [hips[0], hips[1]], fps) : null;
    if (jump) trialConditions.push(jump);
  }
  trialConditions.push(
    ...cameraConditions({ names: cams.map((c) => c.name), excluded: tri.excludedCounts, valid: validViews, residualPx: residuals.map((r) => median(r)) }),
  );
  // Static is measured, not inferred from the clip's length: a short trial counts as a held posture only when
  // every keypoint stayed within STATIC_MAX_DISPLACEMENT_M of its median position (raw triangulated points).
  const shortTrial = frames <= filterPad(4) || frames < STATIC_TRIAL_SECONDS * fps;
  const displacementM = shortTrial ? maxKeypointDisplacement(tri.points, K) : Infinity;
  // one frame shows a pose, not whether it was held: never measured static
  const isStatic = shortTrial && frames >= 2 && displacementM <= STATIC_MAX_DISPLACEMENT_M;
  // What vouches for synchronisation when the geometric check cannot: the recording's timestamps, or nothing (sync_timestamps / camera_offset / sync_unchecked).
  {
    const mode = o.sync ?? 'check';
    const why =
      mode === 'off'
        ? 'it was turned off (--sync off)'
        : C < 3
          ? `it needs ≥ 3 calibrated cameras (the others triangulate what each camera is compared with) and this rig has ${C}`
          : frames < 20
            ? `it needs ≥ 20 frames and this trial has ${frames}`
            : `it needs ≥ 50 moving, confidently detected point-frames per camera that agree with the other cameras, and ${
                (sync?.ambiguousLags ?? [])
                  .map((a, c) => (a === null ? c : -1))
                  .filter((c) => c >= 0)
                  .map((c) => cams[c]!.name)
                  .join(', ') || 'some camera'
              } had fewer in this ${frames}-frame trial`;
    // a held posture (measured static trial) does not depend on timing: nothing moves between frames
    const ev = syncEvidenceCondition(videos ? timestampSkew(videos, frames) : null, fps, sync?.estimable === true || isStatic, why);
    if (ev) trialConditions.splice(syncEvidenceAt, 0, ev);
  }
  if (!isStatic && frames <= filterPad(4)) {
    trialConditions.push({
      code: 'short_trial_unfiltered',
      detail: `a trial of ${frames} frame${frames === 1 ? '' : 's'} (${(frames / fps).toFixed(2)} s) ${frames < 2 ? '(one frame shows a pose, not whether it was held)' : `that is not a held posture (a keypoint moved up to ${Number.isFinite(displacementM) ? (100 * displacementM).toFixed(1) : '?'} cm from its median position)`}: the zero-lag filter needs more than ${filterPad(4)} frames, so values are unfiltered and the 2D noise of each frame is in the peak and range. Record the whole movement`,
    });
  }
  if (isStatic) {
    trialConditions.push({
      code: 'static_trial',
      detail: `a static trial of ${frames} frames (${(frames / fps).toFixed(2)} s) in which every keypoint stayed within ${(100 * displacementM).toFixed(1)} cm of its median position (limit ${100 * STATIC_MAX_DISPLACEMENT_M} cm): too short for the zero-lag filter, so values are unfiltered, and peak, minimum and range describe a held posture, not a movement`,
    });
  }
  const confidence = (name: string) => {
    const k = set.indexOf(name);
    return k < 0 ? NaN : meanKeypointConfidence(observations, K, C, k);
  };
  // A cut-off the trial's frame rate cannot carry is the caller's input, not a failure of the run (exit 2 on the CLI).
  if (o.cutoffHz !== undefined && !(o.cutoffHz > 0 && o.cutoffHz < fps / 2))
    throw new CaptureInputError(
      'bad_argument',
      `--cutoff ${o.cutoffHz} Hz must be above 0 and below half this trial's frame rate (${fps / 2} Hz at ${fps} fps); the default is 6 Hz`,
    );
  const filled = postProcess(tri.points, K, { fps, maxGapFrames: o.maxGapFrames, noFilter: true });
  const filtered = postProcess(tri.points, K, { fps, maxGapFrames: o.maxGapFrames, cutoffHz: o.cutoffHz });

  let crossCheck: CrossCheckResult | null = null;
  if (crossObs && crossSet && o.crossCheck) {
    const K2 = crossSet.length;
    let ideal2 = undistorted ? undistortObservations(crossObs, cams) : crossObs;
    if (sync?.applied) ideal2 = applySyncOffsets(ideal2, K2, C, sync.offsets).observations;
    const tri2: TriangulationResult =
      o.referenceTriangulation || !hasAddon('triangulation')
        ? triangulateBatch({ cameras: C, projections: P, observations: ideal2 }, topt)
        : await triangulationAddon().triangulateAsync(P, ideal2, C, topt);
    crossCheck = {
      model: poseModelLabel(o.crossCheck),
      primaryModel: poseModelLabel(o.pose ?? DEFAULT_POSE),
      keypointSet: crossSet,
      filtered: postProcess(tri2.points, K2, { fps, maxGapFrames: o.maxGapFrames, cutoffHz: o.cutoffHz }).points,
      excludedCounts: Array.from(tri2.excludedCounts),
    };
  }

  const heading = athleteHeading(filtered.points, set);
  const ob = viewObliquity(cams, heading);
  const drift = assessRigDrift(cams, o.layout ?? null, { tolDeg: o.driftToleranceDeg, tolM: o.driftToleranceM });
  const usedCams = new Set<number>();
  for (const m of tri.viewMask) for (let c = 0; c < C; c++) if (m & (1 << c)) usedCams.add(c);
  // Say how it was measured: cameras that contributed, where the 2D came from, how the athlete was chosen.
  const poseLabel = keypointDirs ? 'keypoint JSON' : poseModelLabel(o.pose ?? DEFAULT_POSE);
  const cameraMode = `${usedCams.size} of ${C} calibrated cameras · 2D from ${poseLabel}${crossCheck ? ` (cross-checked by ${crossCheck.model})` : ''} · athlete ${o.tap ? 'tapped' : 'auto-selected (largest person)'}`;
  o.onProgress?.('angles', 0, 1);
  const { rows, outcomes } = buildPoseMetrics(filtered.points, set, {
    cameraCount: Math.max(1, usedCams.size),
    cameraMode,
    viewObliquityDeg: ob.obliquityDeg,
    obliquityBand: ob.band,
    viewMatchesDeclared: viewMatchesDeclared(cams, ob.yawsDeg, o.layout ?? null),
    rigTrustworthy: !drift.drifted,
    trialConditions,
    confidence,
    rawPoints: isStatic ? undefined : tri.points,
    confidenceSpread: isStatic
      ? undefined
      : (name: string) => {
          const k = set.indexOf(name);
          return k < 0 ? NaN : keypointConfidenceSpread(observations, K, C, k);
        },
    // a camera's angle from facing the athlete's front or back (yaw 0 or 180)
    frontalObliquityDeg: ob.obliquityDeg === null ? null : Math.min(...ob.yawsDeg.map((y) => Math.min(Math.abs(y), 180 - Math.abs(y)))),
    views: { cameras: cams.map((c) => c.name), keypoints: set, viewMask: tri.viewMask, confidentMask },
    models: crossCheck
      ? {
          primary: crossCheck.primaryModel,
          secondary: crossCheck.model,
          primarySet: set,
          primaryPoints: filtered.points,
          secondarySet: crossCheck.keypointSet,
          secondaryPoints: crossCheck.filtered,
        }
      : undefined,
    notCrossChecked: crossCheck
      ? undefined
      : {
          primary: poseLabel === 'keypoint JSON' ? 'the keypoint files' : poseLabel,
          why: keypointDirs
            ? 'the 2D came from keypoint files, and the second-model cross-check runs a second model on the videos'
            : "the second-model cross-check was turned off (--cross-check none, or the Process step's option unticked)",
        },
  });
  const trcText = formatTrc(`${path.basename(o.trialDir)}.trc`, set, fps, filtered.points);
  o.onProgress?.('angles', 1, 1);
  timings.total_s = (performance.now() - t0) / 1000;
  return {
    cameras: cams,
    source: keypointDirs ? 'keypoints_json' : 'video',
    videos,
    keypointSet: set,
    fps,
    frames,
    tap,
    observations,
    outOfImage,
    undistorted,
    sync,
    trialConditions,
    duplicatedFrames: duplicated?.map((d) => ({ camera: d.camera, count: d.count, share: d.share, rows: d.rows })) ?? null,
    triangulation: tri,
    filled: filled.points,
    filtered: filtered.points,
    interpolated: filtered.interpolated,
    rows,
    outcomes,
    drift,
    obliquity: { yawsDeg: ob.yawsDeg, obliquityDeg: ob.obliquityDeg },
    cameraMode,
    trcText,
    timings,
    crossCheck,
  };
}

/** A short human label for the 2D pose model used on video. */
export function poseModelLabel(spec: PoseEstimatorSpec): string {
  switch (spec.kind) {
    case 'blazepose':
      return `BlazePose ${spec.variant === 'lite' ? 'Lite' : 'Full'}`;
    case 'movenet':
      return `MoveNet ${spec.variant === 'thunder' ? 'Thunder' : 'Lightning'}`;
    case 'bodypix':
      return 'BodyPix';
    case 'onnx-simcc':
      return `ONNX model ${path.basename(spec.modelPath)}`;
    default:
      return 'a 2D pose model';
  }
}

/**
 * The session's joint-angle time series (models/capture/series.ts) from a processed trial: one
 * series per reported (not omitted) joint and side, degrees per frame (null where missing or
 * gated), the values the statistics were computed from.
 */
export function angleSeriesOf(r: ProcessResult): AngleSeries {
  return makeAngleSeries(
    r.fps,
    r.sync?.firstFrame ?? 0,
    r.outcomes.filter((o) => o.omitted === null).map((o) => ({ joint: o.series.joint, side: o.series.side, values: o.perFrame })),
  );
}
