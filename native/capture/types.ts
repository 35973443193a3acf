/**
 * Typings of the multi-camera capture addon (`build/Release/capture.node`, Debian libopencv-dev 4.x).
 * Loaded only through `main/capture/native/index.ts` (`captureAddon()`), which re-types its errors.
 * Timestamps: µs on `std::chrono::steady_clock`, counted from the session's creation.
 */

/** A source as the addon takes it (the TypeScript layer fills in names and defaults). */
export interface NativeSourceSpec {
  kind: 'device' | 'file';
  /** Device index (kind device, when `path` is absent). */
  device?: number;
  /** Device path (`/dev/video0`) or video file. */
  path?: string;
  width?: number;
  height?: number;
  fps?: number;
  /** FOURCC to ask a device for (default "MJPG"). */
  pixelFormat?: string;
  /** Files only: "realtime" (default) or "fast". */
  pace?: 'realtime' | 'fast';
  /** Files only: start again at the end. */
  loop?: boolean;
  /** Keep an MJPEG source's own JPEG frames for the recording (default true); false decodes and re-encodes. */
  passthrough?: boolean;
  name: string;
}

/** Recording set-up: the addon writes `<dir>/<name>.avi` (MJPEG) and `<dir>/<name>.timestamps.csv` per camera. */
export interface NativeRecordConfig {
  dir: string;
  /** Stop after this many seconds of the synchronised timeline (0 or absent: until stopRecording). */
  seconds?: number;
  /** JPEG quality 1–100 of frames the writer encodes (default 90); passthrough frames are written as the source's bytes. */
  quality?: number;
  /** Per source, the size its camera was calibrated at: a source whose negotiated size differs by more than `sizeTolerance` px (default 16) is refused before any file is created (error code ERR_SIZE_MISMATCH naming each). */
  sizes?: { width: number; height: number; camera?: string }[];
  sizeTolerance?: number;
}

export interface NativeSessionOptions {
  /** Frames held per camera for the live consumer (default 4, 1–256). */
  ringFrames?: number;
  /** Frames queued per camera between capture and the synchroniser while recording (default 8, 1–256); a realtime camera faster than the slowest gets ⌈2·I_slowest/I_own⌉ + 4 when that is more (README "Live capture"). */
  recordQueueFrames?: number;
  /** Memory bound of a realtime camera's recording queue: past `recordQueueFrames` frames it grows only while its frames total at most this many bytes (default 256 MiB); a full queue drops (counted) the oldest frame after its front. */
  recordQueueBytes?: number;
  /** Synchronised timeline rate (fps); default the lowest source rate. */
  fps?: number;
  /** Start recording before the first frame is captured (nothing is missed, e.g. from files). */
  record?: NativeRecordConfig;
  /** Do not open the sources in the constructor: `openAsync()` opens them on worker threads. */
  deferOpen?: boolean;
}

export interface NativeNegotiated {
  index: number;
  name: string;
  kind: 'device' | 'file';
  source: string;
  width: number;
  height: number;
  fps: number;
  pixelFormat: string;
  backend: string;
  /** Frames are kept as the source's own JPEGs (MJPEG source in raw mode). */
  passthrough: boolean;
}

export interface NativeCounts {
  index: number;
  name: string;
  state: 'running' | 'ended' | 'failed' | 'closed';
  /** Why it ended or failed ("" while running). */
  message: string;
  captured: number;
  ringDropped: number;
  /** −1 before the first frame. */
  lastTimestampUs: number;
  measuredFps: number;
  written: number;
  dropped: number;
  /** Of `dropped`: frames lost to a full recording queue (realtime sources). */
  queueDropped: number;
  /** The camera's recording queue size now (frames): recordQueueFrames, or more while it waits on a slower camera. */
  recordQueueFrames: number;
  duplicated: number;
  passthrough: boolean;
}

export interface NativeFrame {
  /** RGB (channels 3), row-major. */
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
  timestampUs: number;
  frameIndex: number;
}

export interface NativeJpeg {
  jpeg: Uint8Array;
  width: number;
  height: number;
  timestampUs: number;
  frameIndex: number;
}

export interface NativeRecordingStatus {
  state: 'idle' | 'recording' | 'finished';
  frames: number;
  fps: number;
  /** "stopped", "seconds", "source_ended" or "write_failed" once finished; "" before. */
  reason: string;
  /** The camera whose end (or whose writer's failure) stopped it, −1 when none. */
  failedCamera: number;
  /** reason "write_failed": the file and libavformat's/OpenCV's message; "" otherwise. */
  error: string;
  /** Timestamp of the first synchronised slot (µs), −1 before it. */
  startUs: number;
  cameras: { video: string; timestamps: string; written: number; passedThrough: number; encoded: number; dropped: number; duplicated: number }[];
}

export interface NativeCaptureSession {
  sources(): NativeNegotiated[];
  fps(): number;
  counts(): NativeCounts[];
  /** Oldest frame in the camera's ring (removed), RGB, downscaled to at most maxWidth when given; null when empty. */
  read(camera: number, maxWidth?: number): NativeFrame | null;
  /** Newest frame as JPEG (older ring frames are skipped and counted in ringDropped); null when empty. */
  latestJpeg(camera: number, maxWidth: number, quality: number): NativeJpeg | null;
  startRecording(cfg: NativeRecordConfig): void;
  /** Ask the recording to stop; poll `recording()` until "finished". */
  stopRecording(): void;
  recording(): NativeRecordingStatus;
  /** Stop all threads (joins them); finishes a running recording first. Idempotent. Throws ERR_CAPTURE_STATE while `openAsync()` is in flight. */
  close(): void;
  /**
   * Sessions created with `deferOpen`: open every source on libuv worker threads (in parallel; a USB
   * camera's open can take about a second), then start capturing. Rejects with ERR_OPENCV naming
   * the source that could not be opened (the others are released); ERR_CAPTURE_STATE when called twice.
   */
  openAsync(): Promise<void>;
}

export interface NativeCameraMode {
  width: number;
  height: number;
  fps: number[];
  pixelFormat: string;
}

export interface NativeCameraDevice {
  index: number;
  path: string | null;
  label: string;
  backend: string;
  modes: NativeCameraMode[];
}

export interface CaptureAddon {
  /** Attached cameras (Linux: V4L2 ioctls on /dev/video*; macOS/Windows: OpenCV probe of indices 0–9). */
  listDevices(): NativeCameraDevice[];
  /**
   * A video file's encoded frames as stored (OpenCV FFmpeg backend, raw mode `CAP_PROP_FORMAT` −1): for an
   * MJPEG .avi each frame's JPEG bytes. `maxFrames` 0 or absent: all. Throws ERR_OPENCV for a file it cannot open.
   */
  readPackets(path: string, maxFrames?: number): Uint8Array[];
  /** Opens every source (throws when one cannot be opened), then starts one capture thread per source. */
  CaptureSession: new (sources: NativeSourceSpec[], options?: NativeSessionOptions) => NativeCaptureSession;
}
