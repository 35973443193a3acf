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
import { CaptureInputError } from '../errors';
import { captureAddon, OpenCvError, type NativeCaptureSession, type NativeCounts, type NativeRecordingStatus, type NativeSourceSpec } from '../native/index';

export type * from '../../../models/capture/live';

/** Options of {@link openRig}. */
export interface OpenRigOptions {
  /** Frames held per camera for the live consumer (default 4). Memory: ringFrames × W × H × 3 bytes per camera. */
  ringFrames?: number;
  /** Frames queued per camera between capture and the recording synchroniser (default 8). */
  recordQueueFrames?: number;
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

/**
 * Parse a CLI source SPEC: a device index (`0`), a device path (`/dev/video2`) or a video file.
 * Throws `CaptureInputError('bad_argument')` for a file that does not exist.
 */
export function parseSourceSpec(spec: string, pace: 'realtime' | 'fast' = 'realtime'): CaptureSourceSpec {
  const s = spec.trim();
  if (/^\d+$/.test(s)) return { kind: 'device', device: Number(s) };
  if (/^\/dev\/video\d+$/.test(s)) return { kind: 'device', device: s };
  if (!existsSync(s) || !statSync(s).isFile())
    throw new CaptureInputError('bad_argument', `source "${s}" is neither a camera (index like 0, or /dev/videoN) nor an existing video file`);
  return { kind: 'file', path: path.resolve(s), pace };
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

function prepareOutDir(dir: string): string {
  const out = path.resolve(dir);
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0))
    throw new CaptureInputError('bad_argument', `${out} exists and is not an empty folder; record into a new trial folder`);
  mkdirSync(path.join(out, 'videos'), { recursive: true });
  return out;
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
    duplicated: c.duplicated,
    passthrough: c.passthrough,
  };
}

/** A running recording: its options and the promise of its result. */
interface RecState {
  opts: RecordingOptions;
  outDir: string;
  startedAt: string;
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
    const native = specs.map((s, i) => toNative(s, n[i]!));
    let outDir: string | null = null;
    if (o.record) outDir = prepareOutDir(o.record.outDir);
    const opts: ConstructorParameters<ReturnType<typeof captureAddon>['CaptureSession']>[1] = { deferOpen: true };
    if (o.ringFrames) opts.ringFrames = o.ringFrames;
    if (o.recordQueueFrames) opts.recordQueueFrames = o.recordQueueFrames;
    if (o.fps) opts.fps = o.fps;
    if (o.record && outDir)
      opts.record = {
        dir: path.join(outDir, 'videos'),
        ...(o.record.seconds ? { seconds: o.record.seconds } : {}),
        ...(o.record.quality ? { quality: o.record.quality } : {}),
      };
    const s = new (captureAddon().CaptureSession)(native, opts);
    await s.openAsync();
    return new CaptureRig(s, o, outDir);
  }

  private constructor(session: NativeCaptureSession, o: OpenRigOptions, outDir: string | null) {
    this.#s = session;
    this.sources = this.#s.sources();
    this.fps = this.#s.fps();
    if (o.record && outDir) this.#begin(o.record, outDir);
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
    const outDir = prepareOutDir(o.outDir);
    this.#s.startRecording({ dir: path.join(outDir, 'videos'), ...(o.seconds ? { seconds: o.seconds } : {}), ...(o.quality ? { quality: o.quality } : {}) });
    this.#begin(o, outDir);
  }

  #begin(opts: RecordingOptions, outDir: string): void {
    let resolve!: (r: RecordingResult) => void, reject!: (e: unknown) => void;
    const done = new Promise<RecordingResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined);
    const startedAt = new Date().toISOString();
    this.#rec = { opts, outDir, startedAt, done, resolve, reject };
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
    let calibration: string | null = null;
    if (rec.opts.calibrationPath) {
      calibration = path.join(rec.outDir, 'calibration', path.basename(rec.opts.calibrationPath));
      const dest = calibration;
      const src = rec.opts.calibrationPath;
      writeOrExplain(rec.outDir, st, () => {
        mkdirSync(path.dirname(dest), { recursive: true });
        copyFileSync(src, dest);
      });
    }
    const config = path.join(rec.outDir, 'Config.toml');
    const doc = {
      project: { frame_rate: st.fps },
      capture: {
        recorded_at: rec.startedAt,
        frames: st.frames,
        seconds: st.frames / st.fps,
        reason: st.reason === 'source_ended' || st.reason === 'write_failed' ? st.reason : 'stopped',
        ...(failure ? { failed_camera: failure.name, failure: `${failure.state}: ${failure.message}` } : {}),
        ...(st.reason === 'write_failed' ? { failed_camera: raw[st.failedCamera]?.name ?? '', write_error: st.error } : {}),
        ...(calibration ? { calibration: path.relative(rec.outDir, calibration) } : {}),
        sync: `frames grouped on a ${st.fps} fps timeline, tolerance ±half a frame interval; dropped = captured but not written, duplicated = slot filled by repeating the previous frame`,
        metadata: rec.opts.metadata ?? {},
        camera: cams.map((c, i) => {
          const s = this.sources[i]!;
          return {
            name: c.name,
            kind: s.kind,
            source: s.source,
            width: s.width,
            height: s.height,
            fps: s.fps,
            pixel_format: s.pixelFormat,
            backend: s.backend,
            video: path.relative(rec.outDir, c.video),
            timestamps: path.relative(rec.outDir, c.timestamps),
            written: c.written,
            dropped: c.dropped,
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
 * Throws `CaptureInputError` (`no_input`, `bad_argument`: bad names, an `outDir` that is not
 * empty) and `OpenCvError` (`ERR_OPENCV`: a source that cannot be opened, with the source named);
 * `NativeAddonMissingError` when the addon is not built.
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
function writeOrExplain(outDir: string, st: NativeRecordingStatus, write: () => void): void {
  try {
    write();
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const before = st.reason === 'write_failed' ? ` (the recording had already stopped: ${st.error})` : '';
    throw new OpenCvError(
      `cannot write the recording's metadata in ${outDir}: ${why}${before}; the videos and timestamp files written so far are kept (Config.toml is the one written at the start, reason "recording") — free disk space (or choose another folder) and record again`,
      'ERR_VIDEO_WRITE',
      null,
      null,
    );
  }
}
