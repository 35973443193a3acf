/**
 * Live multi-camera capture (issue 15): the serialisable shapes that travel between the capture
 * rig in `main/capture/live/` (native addon `native/capture/`) and the Capture page. Types only —
 * no runtime code — so the renderer, the contract and `main/` share them.
 *
 * Clocks and units: every timestamp is in microseconds (µs) on one monotonic clock per rig
 * (C++ `std::chrono::steady_clock`), counted from the moment the rig was opened; it never goes
 * backwards and is unrelated to wall-clock time. Sizes are pixels, frame rates frames per second.
 *
 * Counting follows FFmpeg's constant-frame-rate (`-vsync cfr`) terms: a *dropped* frame was
 * captured but not written (surplus within one slot of the synchronised timeline, or lost to a
 * full queue); a *duplicated* frame is a slot the camera had no frame for, filled by writing its
 * previous frame again so every camera's video keeps the same frame count.
 */

/** A source to open: a camera by index or device path, or a video file (same code path; only the open differs). */
export type CaptureSourceSpec =
  | {
      kind: 'device';
      /** OpenCV device index (0, 1, …) or a device path (`/dev/video2` on Linux). */
      device: number | string;
      /** Requested mode; the camera may answer with another (see {@link NegotiatedSource}). Default: the camera's own. */
      width?: number;
      height?: number;
      fps?: number;
      /** Requested pixel format as a FOURCC; default `MJPG` where the camera offers it (USB 2 bandwidth). */
      pixelFormat?: string;
      /**
       * MJPEG passthrough (default true): when the source delivers MJPEG, its own JPEG frames are
       * written into the recording unchanged (no decode + re-encode; only frames the preview or board
       * detection reads are decoded). False: decode every frame and re-encode it. Other formats are
       * always decoded and encoded. See {@link NegotiatedSource.passthrough}.
       */
      passthrough?: boolean;
      /** Camera name in the trial folder (`cam01`…); default `cam` + two-digit position. */
      name?: string;
    }
  | {
      kind: 'file';
      /** Video file (anything OpenCV's FFmpeg backend decodes: H.264, VP9, MJPEG, …). */
      path: string;
      /**
       * `realtime` (default): frames are released at the file's frame rate on the rig's clock, as a
       * camera would deliver them (nothing blocks; a slow consumer drops). `fast`: decode as fast as
       * possible, timestamps from the file's presentation times, and recording applies back-pressure
       * instead of dropping (offline import, benchmarks).
       */
      pace?: 'realtime' | 'fast';
      /** Start again at the end instead of ending (long runs from a short file). Default false. */
      loop?: boolean;
      /**
       * MJPEG passthrough (default true): when the source delivers MJPEG, its own JPEG frames are
       * written into the recording unchanged (no decode + re-encode; only frames the preview or board
       * detection reads are decoded). False: decode every frame and re-encode it. Other formats are
       * always decoded and encoded. See {@link NegotiatedSource.passthrough}.
       */
      passthrough?: boolean;
      name?: string;
    };

/** One capture mode a camera offers. */
export interface CameraMode {
  width: number;
  height: number;
  /** Frame rates offered at this size (fps), highest first; empty when the driver does not say. */
  fps: number[];
  /** FOURCC, e.g. `MJPG`, `YUYV`. */
  pixelFormat: string;
}

/** An attached camera found by {@link listCameras}. */
export interface CameraDevice {
  /** OpenCV device index to pass as `device`. */
  index: number;
  /** Device path where the platform has one (`/dev/video0`), else null. */
  path: string | null;
  /** Human-readable name from the driver (e.g. "HD Pro Webcam C920"). */
  label: string;
  /** OpenCV backend used to open it: `V4L2`, `AVFOUNDATION`, `MSMF`. */
  backend: string;
  /** Modes the driver lists (V4L2: every format × size × interval); elsewhere the default mode only. */
  modes: CameraMode[];
}

/** What a source actually delivers after negotiation (may differ from what was asked). */
export interface NegotiatedSource {
  /** Position in the rig (0-based), the order the sources were given in. */
  index: number;
  /** Camera name used in the trial folder (`cam01`, …). */
  name: string;
  kind: 'device' | 'file';
  /** The device index/path or the file path, as given. */
  source: string;
  width: number;
  height: number;
  fps: number;
  /** FOURCC the source delivers (`MJPG`, `YUYV`, or the file's codec, e.g. `h264`). */
  pixelFormat: string;
  /** OpenCV backend (`V4L2`, `FFMPEG`, `AVFOUNDATION`, `MSMF`). */
  backend: string;
  /**
   * True when the source's own MJPEG frames are recorded unchanged (V4L2 with
   * `CAP_PROP_CONVERT_RGB` off, FFmpeg raw packets with `CAP_PROP_FORMAT` −1); false when frames
   * are decoded and the recording re-encodes them (other formats, `passthrough: false`, or a first
   * JPEG that did not match the negotiated size).
   */
  passthrough: boolean;
}

/** Live state of one source. */
export type SourceState = 'running' | 'ended' | 'failed' | 'closed';

/** Per-camera counters since the rig was opened (live ring) and since recording started (recording). */
export interface CameraCounts {
  index: number;
  name: string;
  state: SourceState;
  /** Frames delivered by the source since the rig opened. */
  captured: number;
  /** Frames the live consumer (preview, board detection) never saw because the bounded ring was full. */
  ringDropped: number;
  /** Last frame's capture timestamp (µs), null before the first frame. */
  lastTimestampUs: number | null;
  /** Measured delivery rate over the last second (fps). */
  measuredFps: number;
  /** Recording: frames written to this camera's video (including duplicates). */
  written: number;
  /** Recording: captured frames not written (surplus in a slot, or a full recording queue). */
  dropped: number;
  /**
   * Recording: of `dropped`, frames lost to a full recording queue — the synchroniser never saw
   * them (a slow writer, or the queue's memory bound hit while waiting on a much slower camera);
   * their slots are this camera's duplicates. 0 when the camera's duplicates are its own gaps.
   */
  queueDropped: number;
  /** Recording: this camera's recording queue (frames) — `recordQueueFrames`, more for a camera faster than the slowest. */
  recordQueueFrames: number;
  /** Recording: slots filled by repeating the previous frame. */
  duplicated: number;
  /** Frames are the source's own JPEGs, recorded without re-encoding (see {@link NegotiatedSource.passthrough}). */
  passthrough: boolean;
}

/** A downscaled JPEG of a camera's newest frame, for the preview grid. */
export interface PreviewFrame {
  camera: number;
  name: string;
  /** Capture timestamp (µs on the rig clock). */
  timestampUs: number;
  /** Index of the frame among the source's captured frames (0-based). */
  frameIndex: number;
  /** Size of the JPEG (px), at most the requested preview width. */
  width: number;
  height: number;
  /** Baseline JPEG bytes. */
  jpeg: Uint8Array;
}

/** Progress of a recording, emitted a few times per second. */
export interface RecordingProgress {
  /** Synchronised frame groups written so far (each camera's video has this many frames). */
  frames: number;
  /** Seconds of recording at the rig frame rate (`frames / fps`). */
  seconds: number;
  fps: number;
  cameras: CameraCounts[];
}

/** A camera that stopped delivering (unplugged, read failure) or a file source that ended. */
export interface DeviceFailure {
  camera: number;
  name: string;
  /** `ended`: end of a file source; `failed`: the device stopped delivering or OpenCV raised an error. */
  state: 'ended' | 'failed';
  /** What happened, e.g. "read failed: the camera stopped delivering frames (unplugged?)". */
  message: string;
  /** Capture timestamp of its last frame (µs), null when it never delivered one. */
  lastTimestampUs: number | null;
  /** True when a recording was running and was stopped because of it (what was written is kept). */
  stoppedRecording: boolean;
}

/** Where and how a recording is written. */
export interface RecordingOptions {
  /** Trial folder to create (must not exist or be empty): `videos/`, `Config.toml`, `calibration/`. */
  outDir: string;
  /** Stop by itself after this many seconds (rig clock). Default: until {@link CaptureRigApi.stopRecording}. */
  seconds?: number;
  /**
   * Calibration TOML (Pose2Sim layout) copied to `calibration/` of the trial folder. When given,
   * every source's name must match one of its cameras (the rule the pipeline applies to the trial's
   * videos: `cam_01` ↔ `cam01`, or a unique trailing number) and every calibrated camera needs a
   * source; otherwise opening / starting the recording throws `CaptureInputError` (`bad_calibration`,
   * `missing_camera`) before anything is written.
   */
  calibrationPath?: string;
  /** Free-form trial metadata written to `Config.toml` `[capture]` (athlete id, test name, …). */
  metadata?: Record<string, string | number | boolean>;
  /** JPEG quality (libjpeg, `cv::imencode`) of frames the recording encodes, 1–100; passthrough frames keep the camera's own. @default 90 (BENCHMARKS.md, "Recording: writer cost") */
  quality?: number;
}

/** What a finished recording left on disk. */
export interface RecordingResult {
  /** The trial folder (the capture pipeline reads it: `npm run capture -- process DIR --calib …`). */
  outDir: string;
  /** Synchronised frames per camera video (all equal). */
  frames: number;
  fps: number;
  seconds: number;
  /**
   * Per camera: its video, its timestamp sidecar and its counts — of this recording only:
   * `captured` is the number of this camera's own frames written to its video (`written` −
   * `duplicated`); frames the rig captured before the recording started or after it stopped (the
   * preview) are not counted.
   */
  cameras: (CameraCounts & {
    /** Calibration camera this source was bound to (`calibrationPath` given), else null. */
    calibrationCamera: string | null;
    video: string;
    timestamps: string;
    /** Written frames that are the source's own JPEG bytes (passthrough). */
    passedThrough: number;
    /** Written frames JPEG-encoded by the recorder (decoded sources; black frames before a camera's first). */
    encoded: number;
  })[];
  /** `stopped` (asked to stop, or `seconds` reached) or `source_ended` (a camera failed or a file ended: see `failure`). */
  reason: 'stopped' | 'source_ended';
  /** The camera whose end stopped the recording, when `reason` is `source_ended`. */
  failure: DeviceFailure | null;
  /** `Config.toml` path. */
  config: string;
  /** Calibration file copied into the trial, or null. */
  calibration: string | null;
}

/** Events of a rig (`rig.on(name, listener)`). */
export interface CaptureRigEvents {
  /** A downscaled frame per camera at the preview rate. */
  preview: (frame: PreviewFrame) => void;
  /** Recording progress, a few times per second while recording. */
  progress: (p: RecordingProgress) => void;
  /** A source ended or failed (once per source). */
  'device-failure': (f: DeviceFailure) => void;
  /** A recording finished (stopped, `seconds` reached, or a source ended). */
  'recording-finished': (r: RecordingResult) => void;
}

/** Live preview settings. */
export interface PreviewOptions {
  /** Preview frames per second per camera (default 10). */
  fps?: number;
  /** Largest JPEG width (px); height follows the aspect ratio (default 480). */
  maxWidth?: number;
  /** JPEG quality 1–100 (default 70). */
  quality?: number;
}

/**
 * An open capture rig: N sources, each captured on its own native thread into a bounded ring
 * (a slow consumer drops frames and they are counted; capture never blocks). Implemented by
 * `openRig` in `main/capture/live/rig.ts`; the Capture page reaches it through main.
 */
export interface CaptureRigApi {
  /** What each source delivers after negotiation, in the order given. */
  readonly sources: readonly NegotiatedSource[];
  /** Frame rate of the synchronised timeline (fps): the lowest source rate unless set at open. */
  readonly fps: number;
  /** Counters per camera, now. */
  counts(): CameraCounts[];
  /** Newest frame of one camera as a downscaled JPEG (null before its first frame). Throws `OpenCvError` on a closed rig. */
  snapshot(camera: number, maxWidth?: number, quality?: number): PreviewFrame | null;
  /** Start emitting `preview` events (newest frame per camera at `fps`); calling again changes the settings. */
  startPreview(o?: PreviewOptions): void;
  /** Stop emitting `preview` events. */
  stopPreview(): void;
  /**
   * Start recording into a new trial folder. Throws `CaptureInputError` (`bad_argument`) when a
   * recording runs or `outDir` is not empty, `OpenCvError` when a video file cannot be opened for writing.
   */
  startRecording(o: RecordingOptions): void;
  /** Stop the running recording; resolves when every file is closed and `Config.toml` is written. */
  stopRecording(): Promise<RecordingResult>;
  /** Resolves when the running recording finishes by itself (`seconds` reached, or a source ended). */
  recordingDone(): Promise<RecordingResult>;
  /** Subscribe to an event; returns a function that unsubscribes. */
  on<E extends keyof CaptureRigEvents>(event: E, listener: CaptureRigEvents[E]): () => void;
  /** Stop every thread and release the cameras; a running recording is finished first. Idempotent. */
  close(): Promise<void>;
}
