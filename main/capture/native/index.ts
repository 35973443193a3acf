/**
 * The one place native addons (`native/`) are loaded (lint rule `native-addons-loaded-in-one-place`).
 * Addons are built by `npm run build:native` (run from `postinstall`).
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { AppError } from '../../../models/errors';
import type { TriangulationAddon } from '../../../native/triangulation/types';
import type { OpenCvAddon, VideoReaderInstance } from '../../../native/opencv/types';
import type { CaptureAddon, NativeCaptureSession, NativeSessionOptions, NativeSourceSpec } from '../../../native/capture/types';

export type { TriangulationAddon, NativeTriangulationResult, NativeTriangulationOptions } from '../../../native/triangulation/types';
export type {
  CaptureAddon,
  NativeCaptureSession,
  NativeSessionOptions,
  NativeSourceSpec,
  NativeRecordConfig,
  NativeCounts,
  NativeNegotiated,
  NativeRecordingStatus,
  NativeCameraDevice,
} from '../../../native/capture/types';
export type { OpenCvAddon, ChessboardCalibration, DecodedFrame, VideoInfo, RawImage, VideoReaderInstance } from '../../../native/opencv/types';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

/** Repository root (main/capture/native → ../../..); overridable for packaged builds. */
function nativeRoot(): string {
  return process.env.ATHLETE_NATIVE_DIR ?? path.resolve(here, '../../../native');
}

function addonPath(name: string): string {
  return path.join(nativeRoot(), name, 'build', 'Release', `${name}.node`);
}

/** Error thrown when an addon has not been compiled. */
export class NativeAddonMissingError extends AppError {
  constructor(name: string, file: string) {
    super({ code: 'NotConfigured', message: `native addon "${name}" is not built (${file} missing): run \`npm run build:native\`` });
    this.name = 'NativeAddonMissingError';
  }
}

const cache = new Map<string, unknown>();
function load<T>(name: string): T {
  const hit = cache.get(name);
  if (hit) return hit as T;
  const file = addonPath(name);
  if (!existsSync(file)) throw new NativeAddonMissingError(name, file);
  const mod = require(file) as T;
  cache.set(name, mod);
  return mod;
}

/** True when the addon's binary exists. */
export function hasAddon(name: 'triangulation' | 'opencv' | 'capture'): boolean {
  return existsSync(addonPath(name));
}

/** Triangulation addon (confidence-weighted DLT). */
export function triangulationAddon(): TriangulationAddon {
  return load<TriangulationAddon>('triangulation');
}

/**
 * An OpenCV failure inside the addon (a `cv::Exception`, e.g. an assertion on a 2×7 board, six
 * distortion coefficients or fewer than 4 points per view), or use of a closed video reader.
 * The addon catches every native exception so none can abort the process; this is the typed
 * form callers see, an {@link AppError}. `kind`: `ERR_OPENCV` (OpenCV refused the input; `cvCode` is OpenCV's error
 * code, e.g. -215 for a failed assertion, and `cvFunction` the function that raised it) or
 * `ERR_VIDEO_CLOSED` (a reader used after `close()`), `ERR_CAPTURE_STATE` (a capture session
 * used after `close()`, or a recording started while one runs), or `ERR_VIDEO_WRITE` (a recording
 * file could not be created or written: libavformat's or OpenCV's message with the file named;
 * AppError code `Unavailable`, e.g. a full or read-only disk).
 */
export class OpenCvError extends AppError {
  constructor(
    message: string,
    /** Which failure (the addon's code); the {@link AppError} `code` is `Validation` for ERR_OPENCV, `Unavailable` for ERR_VIDEO_WRITE, `Conflict` for a closed reader or session. */
    readonly kind: 'ERR_OPENCV' | 'ERR_VIDEO_CLOSED' | 'ERR_CAPTURE_STATE' | 'ERR_VIDEO_WRITE',
    readonly cvCode: number | null,
    readonly cvFunction: string | null,
  ) {
    super({ code: kind === 'ERR_OPENCV' ? 'Validation' : kind === 'ERR_VIDEO_WRITE' ? 'Unavailable' : 'Conflict', message, kind });
    this.name = 'OpenCvError';
  }
}

/** Re-type an error thrown by the addon; argument TypeErrors/RangeErrors pass through unchanged. */
function typed(e: unknown): unknown {
  if (!(e instanceof Error)) return e;
  const x = e as Error & { code?: unknown; cvCode?: unknown; cvFunction?: unknown };
  if (x.code === 'ERR_OPENCV' || x.code === 'ERR_VIDEO_CLOSED' || x.code === 'ERR_CAPTURE_STATE' || x.code === 'ERR_VIDEO_WRITE') {
    return new OpenCvError(
      x.message,
      x.code,
      typeof x.cvCode === 'number' ? x.cvCode : null,
      typeof x.cvFunction === 'string' && x.cvFunction ? x.cvFunction : null,
    );
  }
  return e;
}

function guard<A extends unknown[], R>(fn: (...a: A) => R): (...a: A) => R {
  return (...a: A) => {
    try {
      return fn(...a);
    } catch (e) {
      throw typed(e);
    }
  };
}

let openCv: OpenCvAddon | null = null;

/**
 * OpenCV addon (checkerboard calibration, PnP, video decoding). Every function throws
 * `OpenCvError` (never aborts the process) when OpenCV refuses its input, and TypeError /
 * RangeError for malformed arguments.
 */
export function openCvAddon(): OpenCvAddon {
  if (openCv) return openCv;
  const raw = load<OpenCvAddon>('opencv');
  class VideoReader implements VideoReaderInstance {
    readonly #r: VideoReaderInstance;
    constructor(file: string) {
      this.#r = guard(() => new raw.VideoReader(file))();
    }
    info() {
      return guard(() => this.#r.info())();
    }
    read() {
      return guard(() => this.#r.read())();
    }
    skip(n: number) {
      return guard(() => this.#r.skip(n))();
    }
    close() {
      guard(() => this.#r.close())();
    }
  }
  openCv = {
    version: raw.version,
    findChessboard: guard(raw.findChessboard),
    calibrateCamera: guard(raw.calibrateCamera),
    solvePnP: guard(raw.solvePnP),
    readImage: guard(raw.readImage),
    decodeImage: guard(raw.decodeImage),
    encodeJpeg: guard(raw.encodeJpeg),
    cropResize: guard(raw.cropResize),
    writeVideo: guard(raw.writeVideo),
    VideoReader,
  };
  return openCv;
}

let capture: CaptureAddon | null = null;

/**
 * Multi-camera capture addon (`native/capture/`): device enumeration and `CaptureSession` (one
 * capture thread per source, bounded rings, timestamp synchronisation, MJPEG recording with
 * passthrough of MJPEG sources). Every method throws `OpenCvError` (`ERR_OPENCV` when OpenCV
 * refuses, e.g. a source that cannot be opened; `ERR_VIDEO_WRITE` when a recording file cannot be
 * created; `ERR_CAPTURE_STATE` on a closed session) and TypeError/RangeError for malformed arguments.
 * Throws `NativeAddonMissingError` when the addon is not built (no libopencv-dev).
 */
export function captureAddon(): CaptureAddon {
  if (capture) return capture;
  const raw = load<CaptureAddon>('capture');
  class CaptureSession implements NativeCaptureSession {
    readonly #s: NativeCaptureSession;
    constructor(sources: NativeSourceSpec[], options?: NativeSessionOptions) {
      this.#s = guard(() => new raw.CaptureSession(sources, options))();
    }
    sources() {
      return guard(() => this.#s.sources())();
    }
    fps() {
      return guard(() => this.#s.fps())();
    }
    counts() {
      return guard(() => this.#s.counts())();
    }
    read(camera: number, maxWidth?: number) {
      return guard(() => this.#s.read(camera, maxWidth))();
    }
    latestJpeg(camera: number, maxWidth: number, quality: number) {
      return guard(() => this.#s.latestJpeg(camera, maxWidth, quality))();
    }
    startRecording(cfg: Parameters<NativeCaptureSession['startRecording']>[0]) {
      guard(() => this.#s.startRecording(cfg))();
    }
    stopRecording() {
      guard(() => this.#s.stopRecording())();
    }
    recording() {
      return guard(() => this.#s.recording())();
    }
    close() {
      guard(() => this.#s.close())();
    }
    async openAsync() {
      try {
        await guard(() => this.#s.openAsync())();
      } catch (e) {
        throw typed(e);
      }
    }
  }
  capture = { listDevices: guard(raw.listDevices), readPackets: guard(raw.readPackets), CaptureSession };
  return capture;
}
