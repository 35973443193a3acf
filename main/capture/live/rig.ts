/**
 * Live multi-camera capture for the Capture page and `npm run capture -- record` (issue 15).
 *
 * `openRig(sources)` opens N cameras or video files through the native addon (`native/capture/`,
 * one capture thread per source, OpenCV `VideoCapture`: V4L2 / AVFoundation / Media Foundation for
 * devices, FFmpeg for files — the open is the only difference). Frames carry a monotonic capture
 * timestamp; a bounded ring per camera feeds the preview (a slow consumer drops and counts);
 * a recording groups frames by timestamp onto one timeline (tolerance ± half a frame interval),
 * writes one MJPEG video per camera plus a timestamp sidecar, and finishes the trial folder the
 * pipeline reads (`videos/`, `Config.toml` with `[project] frame_rate`, `calibration/`).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify as tomlStringify } from 'smol-toml';
import type {
  CameraCounts,
  CameraDevice,
  CaptureRigApi,
  CaptureRigEvents,
  CaptureSourceSpec,
  DeviceFailure,
  NegotiatedSource,
  PreviewFrame,
  PreviewOptions,
  RecordingOptions,
  RecordingProgress,
  RecordingResult,
} from '../../../models/capture/live';
import { CalibrationError, loadTomlCalibration } from '../calibration';
import { CaptureInputError } from '../errors';
import { matchToCameras, SIZE_TOLERANCE_PX } from '../sources';
import { captureAddon, OpenCvError, type NativeCaptureSession, type NativeCounts, type NativeRecordingStatus, type NativeSourceSpec } from '../native/index';

export type * from '../../../models/capture/live';

/** Options of {@link openRig}. */
export interface OpenRigOptions {
  /** Frames held per camera for the live consumer (default 4). Memory: ringFrames × W × H × 3 bytes per camera. */
  ringFrames?: number;
  /**
   * Frames queued per camera between capture and the recording synchroniser (default 8). A realtime
   * camera faster than the slowest one gets ⌈2·I_slowest/I_own⌉ + 4 frames when that is more (the
   * frames it delivers while a slot waits for the slowest camera; README "Live capture").
   */
  recordQueueFrames?: number;
  /** Memory bound per camera: past `recordQueueFrames` frames a queue grows only while its frames total at most this many bytes (default 256 MiB); past it frames are dropped and counted. */
  recordQueueBytes?: number;
  /** Synchronised timeline rate (fps); default the lowest source rate. */
  fps?: number;
  /** Start recording before the first frame is captured (every frame of a file source is recorded). */
  record?: RecordingOptions;
  /** How often counts are polled for `progress` and `device-failure` events (ms, default 100). */
  pollMs?: number;
}

/**
 * Cameras attached to this machine with the modes their drivers list. An empty list is not an
 * error. Linux: V4L2 capture nodes (`/dev/video*`, metadata nodes left out); macOS/Windows: the
 * indices 0–9 that OpenCV's AVFoundation / Media Foundation backend opens, default mode only.
 * Throws `NativeAddonMissingError` without the addon.
 */
export function listCameras(): CameraDevice[] {
  return captureAddon().listDevices();
}

/** `NAME=SOURCE`: a camera name (letters, digits, `_`, `-`) before the first `=`. */
const NAMED_SPEC = /^([A-Za-z0-9_-]{1,64})=(.+)$/;

/**
 * Parse a CLI source SPEC: a device index (`0`), a device path (`/dev/video2`) or a video file,
 * optionally named `NAME=SOURCE` (`cam_01=/dev/video0`): the name of its video, sidecar and
 * `Config.toml` entry in the trial folder, and the calibration camera it is bound to. Unnamed
 * sources are named `cam01`, `cam02`, … by position. (A file whose own name starts with
 * `word=` is given as `./word=….mp4`.)
 * Throws `CaptureInputError`: `bad_argument` for a file that does not exist, `empty_video` for a
 * zero-length file.
 */
export function parseSourceSpec(spec: string, pace: 'realtime' | 'fast' = 'realtime'): CaptureSourceSpec {
  const m = NAMED_SPEC.exec(spec.trim());
  const s = (m ? m[2]! : spec).trim();
  const named = m ? { name: m[1]! } : {};
  if (/^\d+$/.test(s)) return { kind: 'device', device: Number(s), ...named };
  if (/^\/dev\/video\d+$/.test(s)) return { kind: 'device', device: s, ...named };
  checkFileSource(s, m?.[1] ?? null);
  return { kind: 'file', path: path.resolve(s), pace, ...named };
}

/**
 * A file source exists, is a file and is not empty (FFmpeg's own error for an empty or non-video
 * file does not say which source it was). Throws `CaptureInputError` (`bad_argument`, `empty_video`).
 */
function checkFileSource(file: string, name: string | null): void {
  const label = `source "${file}"${name ? ` (${name})` : ''}`;
  if (!existsSync(file) || !statSync(file).isFile())
    throw new CaptureInputError('bad_argument', `${label} is neither a camera (index like 0, or /dev/videoN) nor an existing video file`);
  if (statSync(file).size === 0)
    throw new CaptureInputError('empty_video', `${label} is an empty file (0 bytes), not a video; give a video file (mp4, avi, …) or a camera`);
}

/**
 * Bind every source to a camera of the calibration by its name, with the rule the pipeline
 * applies to a trial's videos ({@link matchToCameras}: `cam_01` ↔ `cam01`, else a unique trailing
 * number). Returns the calibration camera's name per source.
 * @throws CaptureInputError `bad_calibration` (unreadable TOML, or a source matching no calibrated
 *   camera), `missing_camera` (a calibrated camera without a source), `bad_argument` (two sources
 *   for one camera) — each naming the sources and cameras
 */
export function bindToCalibration(calibrationPath: string, sourceNames: readonly string[]): string[] {
  let cams;
  try {
    cams = loadTomlCalibration(calibrationPath);
  } catch (e) {
    if (e instanceof CalibrationError) throw new CaptureInputError('bad_calibration', e.message);
    throw e;
  }
  const idx = sourceNames.map((_, i) => i);
  let ordered: number[];
  try {
    ordered = matchToCameras(cams, idx, (i) => sourceNames[i]!, 'source');
  } catch (e) {
    if (!(e instanceof CaptureInputError)) throw e;
    throw new CaptureInputError(
      e.kind,
      `sources vs calibration ${calibrationPath}: ${e.message}. Name each source after its calibrated camera with NAME=SOURCE (e.g. --source ${cams
        .slice(0, 2)
        .map((c, k) => `${c.name}=${k === 0 ? '/dev/video0' : 'FILE.mp4'}`)
        .join(',')})`,
    );
  }
  const out = new Array<string>(sourceNames.length);
  ordered.forEach((src, c) => (out[src] = cams[c]!.name));
  return out;
}

/** Per source, the image size its bound calibration camera (`calib[i]`) was calibrated at, for the addon's record-time check (`record.sizes`). */
function calibratedSizes(calibrationPath: string, calib: readonly string[]): { width: number; height: number; camera: string }[] {
  const cams = loadTomlCalibration(calibrationPath);
  return calib.map((name) => {
    const c = cams.find((x) => x.name === name)!;
    return { width: c.width, height: c.height, camera: c.name };
  });
}

/** The addon's ERR_SIZE_MISMATCH (a camera delivering another size than it was calibrated at) as `size_mismatch`; other errors unchanged. */
function sizeMismatchError(e: unknown, calibrationPath: string | undefined): unknown {
  if (!(e instanceof Error) || (e as { code?: unknown }).code !== 'ERR_SIZE_MISMATCH') return e;
  return new CaptureInputError(
    'size_mismatch',
    `sources vs calibration ${calibrationPath ?? ''}: ${e.message} (tolerance ${SIZE_TOLERANCE_PX} px); nothing was recorded — ask the cameras for their calibrated size (--width/--height), or recalibrate at this size`,
  );
}

/** `cam01`, `cam02`, … unless named; names must be unique and file-name safe. */
function names(specs: CaptureSourceSpec[]): string[] {
  const out = specs.map((s, i) => s.name ?? `cam${String(i + 1).padStart(2, '0')}`);
  for (const n of out)
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(n)) throw new CaptureInputError('bad_argument', `camera name "${n}" must be 1–64 letters, digits, _ or -`);
  if (new Set(out).size !== out.length) throw new CaptureInputError('bad_argument', `camera names must be unique (got ${out.join(', ')})`);
  return out;
}

function toNative(s: CaptureSourceSpec, name: string): NativeSourceSpec {
  if (s.kind === 'file') return { kind: 'file', path: s.path, pace: s.pace ?? 'realtime', loop: s.loop ?? false, passthrough: s.passthrough ?? true, name };
  const base: NativeSourceSpec = { kind: 'device', name, pixelFormat: s.pixelFormat ?? 'MJPG', passthrough: s.passthrough ?? true };
  if (typeof s.device === 'number') base.device = s.device;
  else base.path = s.device;
  if (s.width) base.width = s.width;
  if (s.height) base.height = s.height;
  if (s.fps) base.fps = s.fps;
  return base;
}

/** Bytes held in the trial folder while recording (`RESERVE_FILE`) so the final Config.toml (a few KiB) can be written after the disk filled up. */
const RESERVE_BYTES = 64 * 1024;
const RESERVE_FILE = '.capture-reserve';

/** Copy the calibration TOML to `<outDir>/calibration/<its name>`. Throws the fs error. */
function copyCalibration(src: string, outDir: string): void {
  const dest = path.join(outDir, 'calibration', path.basename(src));
  mkdirSync(path.dirname(dest), { recursive: true });
  copyFileSync(src, dest);
}

/** A trial folder made ready for a recording, and how to take back what this run created. */
interface PreparedOut {
  dir: string;
  /** Remove what this run created (never anything that was there before): the folders it made, or, in a folder that existed, `videos/` (unless it existed, empty), `calibration/` and `Config.toml`. */
  undo(): void;
}

/**
 * `mkdir -p` one level at a time, so a failure reports its real errno (Node's recursive mkdir says
 * ENOENT for a read-only file system). Returns the first folder it created, or undefined.
 */
function mkdirs(dir: string): string | undefined {
  const missing: string[] = [];
  let d = dir;
  while (!existsSync(d)) {
    missing.unshift(d);
    const up = path.dirname(d);
    if (up === d) break;
    d = up;
  }
  let first: string | undefined;
  try {
    for (const m of missing) {
      mkdirSync(m);
      first ??= m;
    }
  } catch (e) {
    if (first) rmSync(first, { recursive: true, force: true });
    throw e;
  }
  return first;
}

/** An empty `videos/` folder (what a failed open of an older version left behind) does not make a trial folder non-empty. */
function isEmptyTrialFolder(dir: string): boolean {
  const entries = readdirSync(dir);
  if (entries.length === 0) return true;
  if (entries.length !== 1 || entries[0] !== 'videos') return false;
  const v = path.join(dir, 'videos');
  return statSync(v).isDirectory() && readdirSync(v).length === 0;
}

/**
 * Create the trial folder and its `videos/`. Throws `CaptureInputError`: `bad_argument` when the
 * folder exists and holds anything (never recorded over), `unwritable_output` when it cannot be
 * created (permissions, a read-only disk, a file in the way) — naming the path and what to do.
 */
function prepareOutDir(dir: string): PreparedOut {
  const out = path.resolve(dir);
  const videos = path.join(out, 'videos');
  const existed = existsSync(out);
  if (existed && (!statSync(out).isDirectory() || !isEmptyTrialFolder(out)))
    throw new CaptureInputError('bad_argument', `${out} exists and is not an empty folder; record into a new trial folder`);
  const videosExisted = existed && existsSync(videos);
  let first: string | undefined;
  try {
    first = mkdirs(out);
    if (!videosExisted) mkdirSync(videos);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (first) rmSync(first, { recursive: true, force: true });
    else if (existed && !videosExisted) rmSync(videos, { recursive: true, force: true });
    const hint =
      err.code === 'ENOSPC'
        ? 'free disk space or choose a folder on another disk'
        : err.code === 'ENOTDIR' || err.code === 'EEXIST'
          ? 'a file is in the way: choose a folder path whose parents are folders'
          : 'choose a folder you can write to (e.g. under your home folder), or give your user write permission on its parent';
    throw new CaptureInputError(
      'unwritable_output',
      `cannot create the trial folder ${out}${err.code ? ` (${err.code}${err.syscall ? ` on ${err.syscall} ${err.path ?? ''}`.trimEnd() : ''})` : `: ${err.message}`}; ${hint}`,
    );
  }
  return {
    dir: out,
    undo() {
      if (first) {
        rmSync(first, { recursive: true, force: true });
        return;
      }
      if (!videosExisted) rmSync(videos, { recursive: true, force: true });
      else for (const f of readdirSync(videos)) rmSync(path.join(videos, f), { recursive: true, force: true });
      rmSync(path.join(out, 'calibration'), { recursive: true, force: true });
      rmSync(path.join(out, 'Config.toml'), { force: true });
      rmSync(path.join(out, RESERVE_FILE), { force: true });
    },
  };
}

/** A file source FFmpeg could not open (not a video, corrupt, unsupported codec) as a typed input error naming it; other errors unchanged. */
function sourceOpenError(e: unknown, specs: CaptureSourceSpec[], n: string[]): unknown {
  if (!(e instanceof OpenCvError) || e.kind !== 'ERR_OPENCV') return e;
  const i = specs.findIndex((s) => s.kind === 'file' && e.message.includes(`video ${s.path}`));
  if (i < 0) return e;
  const file = (specs[i] as { path: string }).path;
  return new CaptureInputError(
    'unreadable_video',
    `source "${file}" (${n[i]}) cannot be opened as a video (not a video file, corrupt, or a codec FFmpeg does not decode); give a video file (mp4, avi, …) or a camera`,
  );
}

function counts(c: NativeCounts): CameraCounts {
  return {
    index: c.index,
    name: c.name,
    state: c.state,
    captured: c.captured,
    ringDropped: c.ringDropped,
    lastTimestampUs: c.lastTimestampUs < 0 ? null : c.lastTimestampUs,
    measuredFps: c.measuredFps,
    written: c.written,
    dropped: c.dropped,
    queueDropped: c.queueDropped,
    recordQueueFrames: c.recordQueueFrames,
    duplicated: c.duplicated,
    passthrough: c.passthrough,
  };
}

/** A running recording: its options and the promise of its result. */
interface RecState {
  opts: RecordingOptions;
  outDir: string;
  startedAt: string;
  /** Calibration camera per source (`calibrationPath` given), else null. */
  calib: string[] | null;
  /** The calibration was copied into the trial folder when the recording started. */
  calibCopied?: boolean;
  done: Promise<RecordingResult>;
  resolve: (r: RecordingResult) => void;
  reject: (e: unknown) => void;
}

type Listeners = { [E in keyof CaptureRigEvents]: Set<CaptureRigEvents[E]> };

class CaptureRig implements CaptureRigApi {
  readonly sources: readonly NegotiatedSource[];
  readonly fps: number;
  readonly #s: NativeCaptureSession;
  readonly #listeners: Listeners = { preview: new Set(), progress: new Set(), 'device-failure': new Set(), 'recording-finished': new Set() };
  readonly #reported = new Set<number>();
  #closed = false;
  #poll: ReturnType<typeof setInterval> | null = null;
  #preview: ReturnType<typeof setInterval> | null = null;
  #lastProgress = 0;
  #rec: RecState | null = null;
  /** The last recording's result once the poll has ended it (a caller may ask after that). */
  #lastDone: Promise<RecordingResult> | null = null;

  /** Open the sources off the JS thread (see {@link openRig}), then wrap the running session. */
  static async open(specs: CaptureSourceSpec[], o: OpenRigOptions): Promise<CaptureRig> {
    if (specs.length === 0) throw new CaptureInputError('no_input', 'give at least one source (a camera index/path or a video file)');
    const n = names(specs);
    for (let i = 0; i < specs.length; i++) {
      const s = specs[i]!;
      if (s.kind === 'file') checkFileSource(s.path, n[i]!);
    }
    // Before anything is written: the sources' names against the calibration's cameras.
    const calib = o.record?.calibrationPath ? bindToCalibration(o.record.calibrationPath, n) : null;
    const native = specs.map((s, i) => toNative(s, n[i]!));
    const prepared = o.record ? prepareOutDir(o.record.outDir) : null;
    const outDir = prepared?.dir ?? null;
    const opts: ConstructorParameters<ReturnType<typeof captureAddon>['CaptureSession']>[1] = { deferOpen: true };
    if (o.ringFrames) opts.ringFrames = o.ringFrames;
    if (o.recordQueueFrames) opts.recordQueueFrames = o.recordQueueFrames;
    if (o.recordQueueBytes !== undefined) opts.recordQueueBytes = o.recordQueueBytes;
    if (o.fps) opts.fps = o.fps;
    if (o.record && outDir)
      opts.record = {
        dir: path.join(outDir, 'videos'),
        ...(o.record.seconds ? { seconds: o.record.seconds } : {}),
        ...(o.record.quality ? { quality: o.record.quality } : {}),
        ...(calib && o.record.calibrationPath ? { sizes: calibratedSizes(o.record.calibrationPath, calib), sizeTolerance: SIZE_TOLERANCE_PX } : {}),
      };
    // A source that cannot be opened (or a recording file that cannot be created): nothing this run
    // created is left behind, so the same --out can be used again.
    let s: NativeCaptureSession | null = null;
    try {
      s = new (captureAddon().CaptureSession)(native, opts);
      await s.openAsync();
    } catch (e) {
      try {
        s?.close();
      } catch {
        /* already released */
      }
      prepared?.undo();
      throw sizeMismatchError(sourceOpenError(e, specs, n), o.record?.calibrationPath);
    }
    // FFmpeg's tty demuxer opens a text file (.txt, .nfo, …) as "ANSI art" video: not a camera's picture.
    const text = s.sources().findIndex((x, i) => specs[i]!.kind === 'file' && x.pixelFormat.toLowerCase() === 'ansi');
    if (text >= 0) {
      s.close();
      prepared?.undo();
      throw new CaptureInputError(
        'unreadable_video',
        `source "${(specs[text] as { path: string }).path}" (${n[text]}) is a text file (FFmpeg would render its characters as a picture), not a video; give a video file (mp4, avi, …) or a camera`,
      );
    }
    return new CaptureRig(s, o, outDir, calib);
  }

  private constructor(session: NativeCaptureSession, o: OpenRigOptions, outDir: string | null, calib: string[] | null) {
    this.#s = session;
    this.sources = this.#s.sources();
    this.fps = this.#s.fps();
    if (o.record && outDir) this.#begin(o.record, outDir, calib);
    this.#poll = setInterval(() => this.#tick(), o.pollMs ?? 100);
    this.#poll.unref?.();
  }

  counts(): CameraCounts[] {
    return this.#s.counts().map(counts);
  }

  snapshot(camera: number, maxWidth = 480, quality = 70): PreviewFrame | null {
    const j = this.#s.latestJpeg(camera, maxWidth, quality);
    if (!j) return null;
    return { camera, name: this.sources[camera]!.name, timestampUs: j.timestampUs, frameIndex: j.frameIndex, width: j.width, height: j.height, jpeg: j.jpeg };
  }

  startPreview(o: PreviewOptions = {}): void {
    this.stopPreview();
    const fps = Math.min(Math.max(o.fps ?? 10, 0.5), 60);
    this.#preview = setInterval(() => {
      for (let c = 0; c < this.sources.length; c++) {
        const f = this.snapshot(c, o.maxWidth ?? 480, o.quality ?? 70);
        if (f) for (const l of this.#listeners.preview) l(f);
      }
    }, 1000 / fps);
    this.#preview.unref?.();
  }

  stopPreview(): void {
    if (this.#preview) clearInterval(this.#preview);
    this.#preview = null;
  }

  startRecording(o: RecordingOptions): void {
    if (this.#rec) throw new CaptureInputError('bad_argument', `a recording into ${this.#rec.outDir} is running; stop it first`);
    const calib = o.calibrationPath
      ? bindToCalibration(
          o.calibrationPath,
          this.sources.map((s) => s.name),
        )
      : null;
    const prepared = prepareOutDir(o.outDir);
    try {
      this.#s.startRecording({
        dir: path.join(prepared.dir, 'videos'),
        ...(o.seconds ? { seconds: o.seconds } : {}),
        ...(o.quality ? { quality: o.quality } : {}),
        ...(calib && o.calibrationPath ? { sizes: calibratedSizes(o.calibrationPath, calib), sizeTolerance: SIZE_TOLERANCE_PX } : {}),
      });
    } catch (e) {
      prepared.undo();
      throw sizeMismatchError(e, o.calibrationPath);
    }
    this.#begin(o, prepared.dir, calib);
  }

  #begin(opts: RecordingOptions, outDir: string, calib: string[] | null): void {
    let resolve!: (r: RecordingResult) => void, reject!: (e: unknown) => void;
    const done = new Promise<RecordingResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined);
    const startedAt = new Date().toISOString();
    this.#rec = { opts, outDir, startedAt, done, resolve, reject, calib };
    // A minimal Config.toml now, while the disk has room: if it fills up during the recording and
    // the full one cannot be written, the trial folder still says its frame rate and that it was
    // cut short. Best effort: when even this fails, #finish reports the write error (typed).
    try {
      writeFileSync(
        path.join(outDir, 'Config.toml'),
        `# Written by Athlete Intelligence capture (issue 15) when the recording started; replaced when it ends.\n${tomlStringify({ project: { frame_rate: this.fps }, capture: { recorded_at: startedAt, reason: 'recording' } })}`,
      );
    } catch {
      /* reported by #finish */
    }
    // Room for the final Config.toml on a disk that fills up: released just before it is written.
    try {
      writeFileSync(path.join(outDir, RESERVE_FILE), Buffer.alloc(RESERVE_BYTES));
    } catch {
      /* best effort */
    }
    // The calibration now too, while there is room (again at the end when this fails).
    if (opts.calibrationPath) {
      try {
        copyCalibration(opts.calibrationPath, outDir);
        this.#rec.calibCopied = true;
      } catch {
        /* copied (or reported) by #finish */
      }
    }
  }

  async stopRecording(): Promise<RecordingResult> {
    const rec = this.#rec;
    if (!rec) throw new CaptureInputError('bad_argument', 'no recording is running');
    this.#s.stopRecording();
    return this.recordingDone();
  }

  /**
   * The running recording's result, or the last one's when the poll has already ended it (a
   * recording with `seconds` or a source that ended can finish before the caller asks).
   * @throws CaptureInputError (bad_argument) when no recording was ever started
   * @throws OpenCvError (ERR_VIDEO_WRITE) when a video or sidecar could not be written (e.g. a full
   *   disk): the recording stopped there, every file is closed and kept, Config.toml says `write_failed`
   */
  recordingDone(): Promise<RecordingResult> {
    if (!this.#rec) return this.#lastDone ?? Promise.reject(new CaptureInputError('bad_argument', 'no recording is running'));
    const p = this.#rec.done;
    // Poll faster than the event tick while someone waits.
    const fast = setInterval(() => this.#tick(), 10);
    return p.finally(() => clearInterval(fast));
  }

  on<E extends keyof CaptureRigEvents>(event: E, listener: CaptureRigEvents[E]): () => void {
    (this.#listeners[event] as Set<CaptureRigEvents[E]>).add(listener);
    return () => (this.#listeners[event] as Set<CaptureRigEvents[E]>).delete(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.stopPreview();
    if (this.#rec) await this.stopRecording().catch(() => undefined);
    this.#closed = true;
    if (this.#poll) clearInterval(this.#poll);
    this.#s.close();
  }

  #emit<E extends keyof CaptureRigEvents>(event: E, ...args: Parameters<CaptureRigEvents[E]>): void {
    for (const l of this.#listeners[event]) (l as (...a: Parameters<CaptureRigEvents[E]>) => void)(...args);
  }

  /** One poll: device failures, progress, and the end of a recording. */
  #tick(): void {
    if (this.#closed) return;
    let raw: NativeCounts[], status: NativeRecordingStatus;
    try {
      raw = this.#s.counts();
      status = this.#s.recording();
    } catch (e) {
      if (this.#rec) {
        rmSync(path.join(this.#rec.outDir, RESERVE_FILE), { force: true });
        this.#lastDone = this.#rec.done;
        this.#rec.reject(e);
      }
      this.#rec = null;
      return;
    }
    for (const c of raw) {
      if ((c.state === 'ended' || c.state === 'failed') && !this.#reported.has(c.index)) {
        this.#reported.add(c.index);
        this.#emit('device-failure', this.#failure(c, this.#rec !== null && (status.state === 'recording' || status.failedCamera === c.index)));
      }
    }
    if (!this.#rec) return;
    const now = Date.now();
    if (status.state === 'recording' && now - this.#lastProgress >= 250) {
      this.#lastProgress = now;
      const p: RecordingProgress = { frames: status.frames, seconds: status.frames / status.fps, fps: status.fps, cameras: raw.map(counts) };
      this.#emit('progress', p);
    }
    if (status.state === 'finished') {
      const rec = this.#rec;
      this.#rec = null;
      this.#lastDone = rec.done;
      try {
        const r = this.#finish(rec, status, raw);
        rec.resolve(r);
        this.#emit('recording-finished', r);
      } catch (e) {
        rec.reject(e);
      }
    }
  }

  #failure(c: NativeCounts, stoppedRecording: boolean): DeviceFailure {
    return {
      camera: c.index,
      name: c.name,
      state: c.state === 'failed' ? 'failed' : 'ended',
      message: c.message || (c.state === 'failed' ? 'the source stopped delivering frames' : 'end of file'),
      lastTimestampUs: c.lastTimestampUs < 0 ? null : c.lastTimestampUs,
      stoppedRecording,
    };
  }

  /** Write `Config.toml` (and copy the calibration) next to the videos the addon closed. */
  #finish(rec: RecState, st: NativeRecordingStatus, raw: NativeCounts[]): RecordingResult {
    // The status was read after the writers closed: its per-camera numbers are final.
    const cams = raw.map((c, i) => {
      const w = st.cameras[i]!;
      return {
        ...counts(c),
        // this recording's own frames: not the preview's before it started or after it stopped
        captured: w.written - w.duplicated,
        calibrationCamera: rec.calib?.[i] ?? null,
        written: w.written,
        passedThrough: w.passedThrough,
        encoded: w.encoded,
        dropped: w.dropped,
        duplicated: w.duplicated,
        video: w.video,
        timestamps: w.timestamps,
      };
    });
    const failedRaw = st.failedCamera >= 0 ? raw[st.failedCamera] : undefined;
    const failure = st.reason === 'source_ended' && failedRaw ? this.#failure(failedRaw, true) : null;
    const calibration = rec.opts.calibrationPath ? path.join(rec.outDir, 'calibration', path.basename(rec.opts.calibrationPath)) : null;
    // The space held since the start is what the final Config.toml is written into on a full disk.
    rmSync(path.join(rec.outDir, RESERVE_FILE), { force: true });
    const config = path.join(rec.outDir, 'Config.toml');
    const complete = st.reason === 'write_failed' ? Math.min(st.frames, ...cams.map((c) => c.written)) : st.frames;
    const doc = {
      project: { frame_rate: st.fps },
      capture: {
        recorded_at: rec.startedAt,
        // a write failure: the slots every camera's writer confirmed (its sidecar rows), not the slots handed out
        frames: complete,
        seconds: complete / st.fps,
        reason: st.reason === 'source_ended' || st.reason === 'write_failed' ? st.reason : 'stopped',
        ...(failure ? { failed_camera: failure.name, failure: `${failure.state}: ${failure.message}` } : {}),
        ...(st.reason === 'write_failed' ? { failed_camera: raw[st.failedCamera]?.name ?? '', write_error: st.error } : {}),
        ...(calibration ? { calibration: path.relative(rec.outDir, calibration) } : {}),
        sync: `frames grouped on a ${st.fps} fps timeline, tolerance ±half a frame interval; captured = the camera's own frames written, dropped = captured but not written (queue_dropped: of those, lost to a full record queue), duplicated = slot filled by repeating the previous frame (written = captured + duplicated)`,
        metadata: rec.opts.metadata ?? {},
        camera: cams.map((c, i) => {
          const s = this.sources[i]!;
          return {
            name: c.name,
            ...(c.calibrationCamera ? { calibration_camera: c.calibrationCamera } : {}),
            kind: s.kind,
            source: s.source,
            width: s.width,
            height: s.height,
            fps: s.fps,
            pixel_format: s.pixelFormat,
            backend: s.backend,
            video: path.relative(rec.outDir, c.video),
            timestamps: path.relative(rec.outDir, c.timestamps),
            captured: c.captured,
            written: c.written,
            dropped: c.dropped,
            queue_dropped: c.queueDropped,
            duplicated: c.duplicated,
            // passthrough: the camera's own JPEG frames, not re-encoded
            recording: c.encoded === 0 && c.passedThrough > 0 ? 'passthrough' : c.passedThrough === 0 ? 'encoded' : 'mixed',
            passed_through: c.passedThrough,
            encoded: c.encoded,
          };
        }),
      },
    };
    // Written next to it, then renamed over the minimal one: a full disk never leaves it truncated.
    writeOrExplain(rec.outDir, st, () => {
      const tmp = `${config}.partial`;
      try {
        writeFileSync(tmp, `# Written by Athlete Intelligence capture (issue 15); [project] frame_rate is what the pipeline reads.\n${tomlStringify(doc)}`);
        renameSync(tmp, config);
      } catch (e) {
        rmSync(tmp, { force: true });
        throw e;
      }
    });
    const calibSrc = rec.opts.calibrationPath;
    if (calibSrc && !rec.calibCopied) writeOrExplain(rec.outDir, st, () => copyCalibration(calibSrc, rec.outDir), true);
    // A file that could not be written: what was written before is closed and kept (Config.toml says so).
    if (st.reason === 'write_failed') throw new OpenCvError(`recording stopped: ${st.error}`, 'ERR_VIDEO_WRITE', null, null);
    return {
      outDir: rec.outDir,
      frames: st.frames,
      fps: st.fps,
      seconds: st.frames / st.fps,
      cameras: cams,
      reason: st.reason === 'source_ended' ? 'source_ended' : 'stopped',
      failure,
      config,
      calibration,
    };
  }
}

/**
 * Open N sources at once (cameras and/or video files), each captured on its own native thread. The
 * sources are opened on libuv worker threads, in parallel (a USB camera's open and mode
 * negotiation can take about a second each), so the calling thread — the Electron main process or
 * the web host — is not blocked.
 * Throws `CaptureInputError` (`no_input`; `bad_argument`: bad names, a missing file, an `outDir`
 * that is not empty; `empty_video` / `unreadable_video`: a file source that is empty or not a video,
 * named; `unwritable_output`: an `outDir` that cannot be created; `bad_calibration` /
 * `missing_camera`: with `record.calibrationPath`, a source name matching no calibrated camera or a
 * calibrated camera without a source) and `OpenCvError` (`ERR_OPENCV`: a camera that cannot be
 * opened, named; `ERR_VIDEO_WRITE`: a recording file that cannot be created);
 * `NativeAddonMissingError` when the addon is not built. When the open fails, whatever this call
 * created in `outDir` is removed again (a folder that existed is kept), so it can be used again.
 */
export async function openRig(sources: CaptureSourceSpec[], o: OpenRigOptions = {}): Promise<CaptureRigApi> {
  return CaptureRig.open(sources, o);
}

/**
 * Run one write of the recording's metadata (Config.toml, the calibration copy); a failing
 * file-system call (e.g. ENOSPC on a full disk) becomes a typed error naming the folder.
 * @throws OpenCvError (ERR_VIDEO_WRITE, AppError code `Unavailable`) naming `outDir`, the fs
 *   error, the recording's own write error if it had one, and what to do (free space, record again).
 */
function writeOrExplain(outDir: string, st: NativeRecordingStatus, write: () => void, configWritten = false): void {
  try {
    write();
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const before = st.reason === 'write_failed' ? ` (the recording had already stopped: ${st.error})` : '';
    throw new OpenCvError(
      `cannot write the recording's metadata in ${outDir}: ${why}${before}; the videos and timestamp files written so far are kept (${configWritten ? 'Config.toml is complete; copy the calibration into calibration/ yourself' : 'Config.toml is the one written at the start, reason "recording"'}) — free disk space (or choose another folder) and record again`,
      'ERR_VIDEO_WRITE',
      null,
      null,
    );
  }
}
