/**
 * The capture workspace of one installation: recorded trials on disk and the processing jobs that
 * turn them into results, off the UI thread.
 *
 * A recording is a folder `<root>/<recording id>/` in the layout the pipeline reads: `videos/`
 * (one file per camera, `cam01.mp4` …), optional `pose-associated/camXX_json/` (2D keypoints
 * recorded elsewhere), `calibration.toml` (Pose2Sim layout) and `trial.json` ({@link RecordingMeta}).
 * Processing runs in a child process (`process-child.ts`: decode → 2D pose per camera in worker
 * threads → triangulation → angles) that reports progress per stage; cancelling kills the child.
 * The results are stored through the service layer (`capture.recordSession`) as the user who
 * started the job. A failure says which stage failed and why; the recording is never deleted.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { AngleSeries } from '../../models/capture/series';
import { RecordingMeta, type JobView, type RecordingView } from '../../models/capture/jobs';
import { PoseMetricInput } from '../../models/capture/metrics';
import { NotFound, ValidationError, Conflict } from '../../models/errors';
import { parseTomlCalibration, CalibrationError } from './calibration';
import { openCvAddon } from './native/index';
import { findKeypointFolders, findVideos, frameRateFromConfig, matchToCameras, normalizedCameraName } from './sources';

export { RecordingMeta, type RecordingView, type JobStage, type JobView } from '../../models/capture/jobs';

/** What the child sends (process-child.ts). */
export type ChildMessage =
  | { type: 'progress'; stage: string; done: number; total: number }
  | { type: 'done'; fps: number; frames: number; cameraCount: number; source: 'video' | 'keypoints_json'; rows: unknown[]; series: unknown; trcPath: string }
  | { type: 'error'; stage: string; code: string; message: string };

/** What the parent sends to start the child. */
export interface ChildJob {
  trialDir: string;
  calibPath: string;
  useKeypoints: boolean;
  maxFrames: number | null;
  tap: { camera: string; x: number; y: number } | null;
  trcPath: string;
  /** Second 2D model for the `model_disagreement` cross-check (pipeline `crossCheck`); null = off. */
  crossCheck?: 'movenet-thunder' | 'blazepose' | 'movenet' | null;
}

/** Stores the processed results (the IPC layer calls `capture.recordSession` as `userId`). */
export type StoreResults = (
  userId: string,
  rec: RecordingMeta,
  r: Extract<ChildMessage, { type: 'done' }> & { rows: PoseMetricInput[]; series: AngleSeries },
  jobId: string,
) => string;

const ID = /^[A-Za-z0-9-]{8,64}$/;

/** The workspace: recordings under `root`, jobs in memory. */
export class CaptureWorkspace {
  private readonly jobs = new Map<string, { view: JobView; child: ChildProcess | null; t0: number }>();
  /** Live recordings started by this workspace (this process) and not yet finished. */
  private readonly live = new Set<string>();

  /**
   * @param root folder holding one folder per recording (created if missing)
   * @param store stores a finished job's results and returns the capture session id
   */
  constructor(
    readonly root: string,
    private readonly store: StoreResults,
    private readonly opts: { log?: (l: string) => void; childEntry?: string } = {},
  ) {
    mkdirSync(root, { recursive: true });
  }

  private dir(id: string): string {
    if (!ID.test(id)) throw new NotFound('Recording');
    return path.join(this.root, id);
  }

  /**
   * A recording's `trial.json`. One still `recording` that no live recording of this process is
   * writing (the app was killed or crashed mid-record) is cut short: it is marked `recorded` with
   * `last_error` code `recording_cut_short` and kept as written, so Process runs on it (its
   * Config.toml still says reason `recording`, so its readings carry `recording_cut_short`).
   */
  private readMeta(id: string): RecordingMeta {
    const f = path.join(this.dir(id), 'trial.json');
    if (!existsSync(f)) throw new NotFound('Recording');
    const m = RecordingMeta.parse(JSON.parse(readFileSync(f, 'utf8')));
    if (m.status !== 'recording' || this.live.has(id)) return m;
    const cut: RecordingMeta = {
      ...m,
      status: 'recorded',
      last_error: {
        stage: 'record',
        code: 'recording_cut_short',
        message:
          'The recording stopped without finishing (the app was closed, killed or crashed while recording). What was written is kept and can be processed.',
      },
    };
    this.writeMeta(cut);
    this.opts.log?.(`capture: recording ${id} was left recording by an earlier run; marked recorded (cut short)`);
    return cut;
  }

  private writeMeta(m: RecordingMeta): void {
    const f = path.join(this.dir(m.id), 'trial.json');
    writeFileSync(`${f}.tmp`, JSON.stringify(m, null, 2));
    renameSync(`${f}.tmp`, f);
  }

  private view(m: RecordingMeta): RecordingView {
    const d = this.dir(m.id);
    return { ...m, videos: findVideos(d).map((v) => path.basename(v)), has_keypoints: findKeypointFolders(d).length > 0 };
  }

  /** Recordings of one organisation, newest first. */
  list(orgId: string): RecordingView[] {
    const out: RecordingView[] = [];
    for (const name of readdirSync(this.root)) {
      if (!ID.test(name) || !existsSync(path.join(this.root, name, 'trial.json'))) continue;
      try {
        const m = this.readMeta(name);
        if (m.org_id === orgId) out.push(this.view(m));
      } catch {
        this.opts.log?.(`capture: skipped unreadable recording ${name}`);
      }
    }
    return out.sort((a, b) => b.recorded_at.localeCompare(a.recorded_at));
  }

  /** One recording of the organisation. @throws NotFound */
  get(orgId: string, id: string): RecordingView {
    const m = this.readMeta(id);
    if (m.org_id !== orgId) throw new NotFound('Recording');
    return this.view(m);
  }

  /**
   * A new, empty recording folder (the recorder writes `videos/` into it) with its metadata and
   * calibration. @throws ValidationError when the calibration TOML does not parse or lacks a camera.
   */
  create(meta: Omit<RecordingMeta, 'id' | 'status' | 'session_id' | 'last_error'>, calibrationToml: string): RecordingView {
    let cams;
    try {
      cams = parseTomlCalibration(calibrationToml, 'the rig calibration');
    } catch (e) {
      if (e instanceof CalibrationError) throw new ValidationError(e.message);
      throw e;
    }
    const missing = meta.cameras.filter((c) => !cams.some((k) => k.name === c || k.name.replace(/_/g, '') === c.replace(/_/g, '')));
    if (missing.length) throw new ValidationError(`The calibration has no camera named ${missing.join(', ')} (it has ${cams.map((c) => c.name).join(', ')}).`);
    const id = randomUUID();
    const d = path.join(this.root, id);
    mkdirSync(path.join(d, 'videos'), { recursive: true });
    writeFileSync(path.join(d, 'calibration.toml'), calibrationToml);
    const m: RecordingMeta = { ...meta, id, status: 'recorded', session_id: null, last_error: null };
    this.writeMeta(m);
    return this.view(m);
  }

  /**
   * A live recording: `start(outDir)` starts the recorder on a new, empty recording folder (the
   * recorder writes `videos/`, `Config.toml`, `calibration/`), then the metadata and calibration
   * are written beside it. @throws ValidationError (calibration) or what `start` throws
   */
  createLive(
    meta: Omit<RecordingMeta, 'id' | 'status' | 'session_id' | 'last_error' | 'origin'>,
    calibrationToml: string,
    start: (outDir: string) => void,
  ): RecordingView {
    try {
      parseTomlCalibration(calibrationToml, 'the rig calibration');
    } catch (e) {
      if (e instanceof CalibrationError) throw new ValidationError(e.message);
      throw e;
    }
    const id = randomUUID();
    const d = path.join(this.root, id);
    start(d);
    mkdirSync(d, { recursive: true });
    writeFileSync(path.join(d, 'calibration.toml'), calibrationToml);
    const m: RecordingMeta = { ...meta, origin: 'live', id, status: 'recording', session_id: null, last_error: null };
    this.live.add(id);
    this.writeMeta(m);
    return this.view(m);
  }

  /** Mark a live recording finished (`failure`: a camera that stopped it; what was written is kept). */
  finishLive(orgId: string, id: string, failure: RecordingMeta['last_error']): RecordingView {
    const m = this.readMeta(id);
    if (m.org_id !== orgId) throw new NotFound('Recording');
    this.live.delete(id);
    this.writeMeta({ ...m, status: 'recorded', last_error: failure });
    return this.get(orgId, id);
  }

  /** Set the one tap that marks the athlete (camera name, pixels of its first frame). @throws NotFound, ValidationError */
  setTap(orgId: string, id: string, tap: { camera: string; x: number; y: number }): RecordingView {
    const m = this.readMeta(id);
    if (m.org_id !== orgId) throw new NotFound('Recording');
    if (!m.cameras.includes(tap.camera)) throw new ValidationError(`Camera ${tap.camera} is not one of this recording's cameras (${m.cameras.join(', ')}).`);
    this.writeMeta({ ...m, tap });
    return this.get(orgId, id);
  }

  /**
   * The first frame of a recording's first camera, to tap the athlete on: `tap-frame.jpg` in the
   * recording folder (a live recording writes it, downscaled, when it starts; `width`×`height` is
   * then the camera's calibrated size), else `first-frame.jpg`, made once from the first decoded
   * frame of that camera's video (full size, JPEG quality 90, OpenCV) and kept there (`width`×
   * `height` is the video's frame). A tap is in pixels of `width`×`height` whatever the JPEG's size.
   * @throws NotFound (recording; a live recording still recording), ValidationError when the
   *   recording has no video (2D keypoint files only: tap with the CLI's --tap) or its first frame
   *   does not decode, CaptureInputError when its videos match no camera, OpenCvError when OpenCV
   *   refuses the video
   */
  tapFrame(orgId: string, id: string): { camera: string; jpeg: Buffer; width: number; height: number } {
    const rec = this.get(orgId, id);
    const d = this.dir(id);
    const cams = parseTomlCalibration(readFileSync(path.join(d, 'calibration.toml'), 'utf8'), 'the recording calibration');
    const camera = rec.cameras[0]!;
    const cal = cams.find((c) => c.name === camera) ?? cams.find((c) => normalizedCameraName(c.name) === normalizedCameraName(camera)) ?? cams[0]!;
    const live = path.join(d, 'tap-frame.jpg');
    if (existsSync(live)) return { camera, jpeg: readFileSync(live), width: cal.width, height: cal.height };
    const cv = openCvAddon();
    const made = path.join(d, 'first-frame.jpg');
    if (existsSync(made)) {
      const jpeg = readFileSync(made);
      const img = cv.decodeImage(new Uint8Array(jpeg));
      return { camera, jpeg, width: img.width, height: img.height };
    }
    if (rec.status === 'recording') throw new NotFound('Preview frame of this recording');
    const videos = findVideos(d);
    if (videos.length === 0)
      throw new ValidationError(
        `This recording has 2D keypoint files but no videos, so there is no frame to tap on here. Tap the athlete with the command line: npm run capture -- process <trial folder> --calib <toml> --trial-keypoints --tap ${camera}:X,Y (pixels of ${camera}'s first frame).`,
      );
    const file = matchToCameras(cams, videos, (f) => f, 'video')[cams.indexOf(cal)]!;
    const reader = new cv.VideoReader(file);
    let first;
    try {
      first = reader.read();
    } finally {
      reader.close();
    }
    if (!first) throw new ValidationError(`${path.basename(file)} has no decodable first frame to tap the athlete on.`);
    const jpeg = Buffer.from(cv.encodeJpeg(first, 90));
    writeFileSync(`${made}.tmp`, jpeg);
    renameSync(`${made}.tmp`, made);
    return { camera, jpeg, width: first.width, height: first.height };
  }

  /** The folder the recorder writes a recording's videos to. */
  videosDir(orgId: string, id: string): string {
    this.get(orgId, id);
    return path.join(this.dir(id), 'videos');
  }

  /**
   * Copy a recorded trial folder in (its `videos/`, and its `pose-associated/` or `pose/` keypoint
   * folders when present) with the calibration TOML at `calibPath`.
   * @throws ValidationError when the folder has neither videos nor keypoints, or the calibration is unreadable
   */
  importTrial(
    meta: Omit<RecordingMeta, 'id' | 'status' | 'session_id' | 'last_error' | 'cameras' | 'origin'>,
    trialDir: string,
    calibPath: string,
  ): RecordingView {
    if (!existsSync(trialDir) || !statSync(trialDir).isDirectory()) throw new ValidationError(`${trialDir} is not a folder.`);
    if (!existsSync(calibPath)) throw new ValidationError(`The calibration file ${calibPath} does not exist.`);
    const toml = readFileSync(calibPath, 'utf8');
    const videos = findVideos(trialDir);
    const kp = findKeypointFolders(trialDir);
    if (videos.length === 0 && kp.length === 0) throw new ValidationError(`${trialDir} has no videos (videos/*.mp4) and no 2D keypoint folders.`);
    let cams;
    try {
      cams = parseTomlCalibration(toml, calibPath);
    } catch (e) {
      if (e instanceof CalibrationError) throw new ValidationError(e.message);
      throw e;
    }
    const rec = this.create({ ...meta, origin: 'import', cameras: cams.map((c) => c.name) }, toml);
    const d = this.dir(rec.id);
    for (const v of videos) copyFileSync(v, path.join(d, 'videos', path.basename(v)));
    for (const k of kp) cpSync(k, path.join(d, 'pose-associated', path.basename(k)), { recursive: true });
    // The frame rate of keypoint files lives in a Pose2Sim Config.toml (trial, participant or session level): keep it with the recording.
    const fps = frameRateFromConfig(trialDir);
    if (fps) writeFileSync(path.join(d, 'Config.toml'), `[project]\nframe_rate = ${fps}\n`);
    return this.view(this.readMeta(rec.id));
  }

  /** A job of the organisation. @throws NotFound */
  job(orgId: string, jobId: string): JobView {
    const j = this.jobs.get(jobId);
    if (!j) throw new NotFound('Processing job');
    this.get(orgId, j.view.recording_id);
    return structuredClone(j.view);
  }

  /**
   * Start processing a recording as `userId`. One job per recording at a time.
   * @param input `video` runs 2D pose on the videos; `keypoints` reads the recording's 2D keypoint files
   * @param crossCheck a second 2D model run on the same frames (video only; `model_disagreement`, models/capture/quality.ts)
   * @throws NotFound, Conflict (already processing), ValidationError (nothing to process, or a cross-check on keypoint files)
   */
  start(
    orgId: string,
    userId: string,
    recordingId: string,
    o: { input?: 'video' | 'keypoints'; maxFrames?: number | null; crossCheck?: 'movenet-thunder' | 'blazepose' | 'movenet' | null } = {},
  ): JobView {
    const rec = this.get(orgId, recordingId);
    if (rec.status === 'recording') throw new Conflict('This recording is still being recorded: stop it first.');
    for (const j of this.jobs.values())
      if (j.view.recording_id === recordingId && j.view.status === 'running') throw new Conflict('This recording is already being processed.');
    const useKeypoints = o.input ? o.input === 'keypoints' : rec.videos.length === 0;
    if (useKeypoints && !rec.has_keypoints) throw new ValidationError('This recording has no 2D keypoint files; process its videos.');
    if (!useKeypoints && rec.videos.length === 0) throw new ValidationError('This recording has no videos yet.');
    if (useKeypoints && o.crossCheck) throw new ValidationError('The second-model cross-check runs a 2D model on the videos: process the videos to use it.');
    const d = this.dir(recordingId);
    const id = randomUUID();
    const view: JobView = {
      id,
      recording_id: recordingId,
      status: 'running',
      stages: [
        { name: 'decode', label: useKeypoints ? 'Read the keypoint files' : 'Open the videos', done: 0, total: 1 },
        ...rec.cameras.map((c) => ({ name: `pose:${c}`, label: `2D pose · ${c}${useKeypoints ? ' (from file)' : ''}`, done: 0, total: 1 })),
        ...(o.crossCheck ? [{ name: 'cross-check', label: `Second 2D model (${o.crossCheck}) · all cameras`, done: 0, total: 1 }] : []),
        { name: 'triangulate', label: 'Synchronise and triangulate', done: 0, total: 1 },
        { name: 'angles', label: 'Joint angles and conditions', done: 0, total: 1 },
      ],
      error: null,
      session_id: null,
      started_at: new Date().toISOString(),
      seconds: null,
    };
    mkdirSync(path.join(d, 'results'), { recursive: true });
    const job: ChildJob = {
      trialDir: d,
      calibPath: path.join(d, 'calibration.toml'),
      useKeypoints,
      maxFrames: o.maxFrames ?? null,
      tap: rec.tap,
      trcPath: path.join(d, 'results', `${id}.trc`),
      crossCheck: o.crossCheck ?? null,
    };
    const entry = this.opts.childEntry ?? new URL('./process-child.mjs', import.meta.url).pathname;
    const child = fork(entry, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
    const slot = { view, child: child as ChildProcess | null, t0: performance.now() };
    this.jobs.set(id, slot);
    this.setStatus(rec, 'processing', null);
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
    const stage = (name: string) => view.stages.find((s) => s.name === name);
    const current = () => view.stages.find((s) => s.done < s.total)?.name ?? 'angles';
    const finish = (status: JobView['status'], error: JobView['error']) => {
      if (view.status !== 'running') return;
      view.status = status;
      view.error = error;
      view.seconds = (performance.now() - slot.t0) / 1000;
      slot.child = null;
      const m = this.readMeta(recordingId);
      this.setStatus(m, status === 'complete' ? 'processed' : status === 'failed' ? 'failed' : m.session_id ? 'processed' : 'recorded', error, view.session_id);
    };
    child.on('message', (msg: ChildMessage) => {
      if (view.status !== 'running') return;
      if (msg.type === 'progress') {
        const name = msg.stage === 'synchronise' ? 'triangulate' : msg.stage;
        const s = stage(name);
        if (s && !(name === 'triangulate' && msg.stage === 'synchronise' && msg.done === msg.total)) {
          s.done = msg.done;
          s.total = Math.max(1, msg.total);
        }
        // 2D keypoints read from files: the per-camera stages are done when the files are.
        if (useKeypoints && name === 'decode' && msg.done === msg.total) for (const x of view.stages) if (x.name.startsWith('pose:')) x.done = x.total;
      } else if (msg.type === 'error') {
        finish('failed', { stage: msg.stage, code: msg.code, message: msg.message });
      } else if (msg.type === 'done') {
        try {
          const rows = z.array(PoseMetricInput).parse(msg.rows);
          const series = AngleSeries.parse(msg.series);
          view.session_id = this.store(userId, this.readMeta(recordingId), { ...msg, rows, series }, id);
          for (const s of view.stages) s.done = s.total;
          finish('complete', null);
        } catch (e) {
          finish('failed', {
            stage: 'store',
            code: e instanceof Error ? e.name : 'Error',
            message: `The results could not be stored: ${e instanceof Error ? e.message : String(e)}`,
          });
        }
      }
    });
    child.on('exit', (code, signal) => {
      if (view.status === 'running')
        finish('failed', {
          stage: current(),
          code: signal ?? `exit_${code}`,
          message: `The processing process stopped unexpectedly (${signal ?? `exit code ${code}`})${stderr ? `: ${stderr.trim().split('\n').slice(-3).join(' ')}` : ''}.`,
        });
    });
    child.send(job);
    this.opts.log?.(`capture: job ${id} started for recording ${recordingId}`);
    return structuredClone(view);
  }

  /** Cancel a running job (kills its process; the recording stays as it was). @throws NotFound */
  cancel(orgId: string, jobId: string): JobView {
    const j = this.jobs.get(jobId);
    if (!j) throw new NotFound('Processing job');
    this.get(orgId, j.view.recording_id);
    if (j.view.status === 'running') {
      const child = j.child;
      j.view.status = 'cancelled';
      j.view.seconds = (performance.now() - j.t0) / 1000;
      j.child = null;
      child?.kill('SIGKILL');
      const m = this.readMeta(j.view.recording_id);
      this.setStatus(m, m.session_id ? 'processed' : 'recorded', null);
    }
    return structuredClone(j.view);
  }

  /** Kill every running job (host shutdown). */
  close(): void {
    for (const j of this.jobs.values()) if (j.view.status === 'running') j.child?.kill('SIGKILL');
  }

  private setStatus(m: RecordingMeta, status: RecordingMeta['status'], error: RecordingMeta['last_error'], sessionId?: string | null): void {
    this.writeMeta({ ...m, status, last_error: error, session_id: sessionId ?? m.session_id });
  }
}
