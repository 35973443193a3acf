/**
 * A recording's timestamp sidecars (`videos/<name>.timestamps.csv`, written by the native recorder
 * next to each video, one row per video frame: `frame,timestamp_us,slot_us,source_frame,status`),
 * read back by `process`: a row with status `duplicated` is a slot the camera had no new frame
 * for, filled by repeating its previous frame (FFmpeg `-vsync cfr` terms). Its image shows the
 * athlete one or more frame intervals earlier than the other cameras' frames of that slot, so the
 * pipeline leaves that camera's view of those frames out of triangulation (as a view the camera did
 * not have) and says how many there were (`duplicated_frames` / `duplicated_frames_masked`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { type ReadingCondition } from '../../../models/capture/quality';
import { CaptureInputError } from '../errors';

/** Header of a sidecar, as `native/capture/src/capture.cc` writes it. */
export const SIDECAR_HEADER = 'frame,timestamp_us,slot_us,source_frame,status';

/**
 * A camera that repeated more than this share of a recording's frames (over the frames processed)
 * fails every reading of the trial (`duplicated_frames`): it delivered under 90 % of the recording's
 * frame rate (USB bandwidth, an exposure-limited rate in dim light, a decoder that could not keep up),
 * and more than one frame in ten of its views is missing from the 3D. A quality-control bound of
 * ours, not a validated one: at or under it the frames are left out and the share is said beside
 * the readings (`duplicated_frames_masked`, informational). A `--pace realtime` recording of the
 * compressed demo videos on this 2-core machine repeats 90–95 % (main/capture/README.md).
 */
export const DUPLICATED_FRAMES_MAX = 0.1;

/** The sidecar of a recorded video: `videos/cam01.avi` → `videos/cam01.timestamps.csv`. */
export function sidecarPath(video: string): string {
  return path.join(path.dirname(video), `${path.basename(video, path.extname(video))}.timestamps.csv`);
}

/**
 * Which of the first `frames` frames of a video the recorder marked duplicated, and how many rows
 * the sidecar has (the frames the recorder confirmed written: a recording stopped by a full disk
 * can leave a last, partly written frame in the video without a row). Null when the video has no
 * sidecar (a video not recorded by this app).
 * @throws CaptureInputError (`bad_argument`) for a sidecar without the recorder's header or with a
 *   row that is not `frame,…,captured|duplicated` in order, naming the file and line
 */
export function readDuplicatedFrames(video: string, frames: number): { duplicated: boolean[]; rows: number } | null {
  const file = sidecarPath(video);
  if (!existsSync(file)) return null;
  const lines = readFileSync(file, 'utf8').split('\n');
  if (lines[0]?.trim() !== SIDECAR_HEADER)
    throw new CaptureInputError(
      'bad_argument',
      `${file} is not a capture timestamp sidecar (first line must be "${SIDECAR_HEADER}"); restore it, or remove it to process ${path.basename(video)} without it`,
    );
  const dup = new Array<boolean>(frames).fill(false);
  let rows = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    rows++;
    if (i - 1 >= frames) continue;
    const cells = line.split(',');
    if (cells.length !== 5 || Number(cells[0]) !== i - 1 || (cells[4] !== 'captured' && cells[4] !== 'duplicated'))
      throw new CaptureInputError(
        'bad_argument',
        `${file} line ${i + 1} is not a sidecar row for frame ${i - 1} ("${line.slice(0, 80)}"); restore it, or remove it to process ${path.basename(video)} without it`,
      );
    dup[i - 1] = cells[4] === 'duplicated';
  }
  return { duplicated: dup, rows };
}

/** Per camera, the duplicated frames of a trial's videos (see {@link readDuplicatedFrames}). */
export interface DuplicatedFrames {
  camera: string;
  /** Rows of its sidecar (frames the recorder confirmed written); null without a sidecar. */
  rows: number | null;
  /** Per processed frame: true when the recorder repeated the camera's previous frame there. */
  duplicated: boolean[];
  count: number;
  /** count / frames processed. */
  share: number;
}

/**
 * The frames of a recording every camera's writer confirmed (the fewest sidecar rows; the videos
 * may hold one more, partly written frame after a write failure), or null without sidecars.
 */
export function confirmedFrames(videos: readonly { camera: string; path: string }[]): number | null {
  let min: number | null = null;
  for (const v of videos) {
    const d = readDuplicatedFrames(v.path, 0);
    if (d) min = min === null ? d.rows : Math.min(min, d.rows);
  }
  return min;
}

/** Read every video's sidecar; null when none has one (not recorded by this app). */
export function trialDuplicatedFrames(videos: readonly { camera: string; path: string }[], frames: number): DuplicatedFrames[] | null {
  const per = videos.map((v) => ({ camera: v.camera, dup: readDuplicatedFrames(v.path, frames) }));
  if (per.every((p) => p.dup === null)) return null;
  return per.map((p) => {
    const duplicated = p.dup?.duplicated ?? new Array<boolean>(frames).fill(false);
    const count = duplicated.filter(Boolean).length;
    return { camera: p.camera, rows: p.dup?.rows ?? null, duplicated, count, share: frames > 0 ? count / frames : 0 };
  });
}

/**
 * Leave duplicated frames out: their views get confidence 0 (the pipeline's "not seen"), in place.
 * `obs` is F×K×C×3 (x px, y px, confidence), cameras in the order of `dup`. Returns the number of
 * (frame, camera) views masked.
 */
export function maskDuplicatedViews(obs: Float64Array, K: number, dup: readonly DuplicatedFrames[]): number {
  const C = dup.length;
  const F = obs.length / (K * C * 3);
  let n = 0;
  for (let c = 0; c < C; c++) {
    const d = dup[c]!.duplicated;
    for (let f = 0; f < F; f++) {
      if (!d[f]) continue;
      n++;
      for (let k = 0; k < K; k++) obs[((f * K + k) * C + c) * 3 + 2] = 0;
    }
  }
  return n;
}

/**
 * The trial condition for duplicated frames: `duplicated_frames` (fails every reading) when a
 * camera's share exceeds {@link DUPLICATED_FRAMES_MAX}, else `duplicated_frames_masked`
 * (informational); null when no camera repeated a frame.
 */
export function duplicatedFramesCondition(dup: readonly DuplicatedFrames[], frames: number): ReadingCondition | null {
  const some = dup.filter((d) => d.count > 0);
  if (!some.length) return null;
  const each = some.map((d) => `${d.camera} ${d.count} of ${frames} (${(100 * d.share).toFixed(1)} %)`).join(', ');
  const worst = Math.max(...some.map((d) => d.share));
  if (worst > DUPLICATED_FRAMES_MAX)
    return {
      code: 'duplicated_frames',
      detail: `the recording repeated frames (the camera delivered no new frame for the slot): ${each}; above ${100 * DUPLICATED_FRAMES_MAX} % a camera did not deliver the recording's frame rate. Those views were left out of the 3D. Re-record: fewer cameras per USB bus, more light (a shorter exposure), or a lower frame rate; from video files, record with --pace fast`,
    };
  return {
    code: 'duplicated_frames_masked',
    detail: `the recording repeated a few frames (no new frame from the camera for that slot): ${each}; those views were left out of the 3D (limit ${100 * DUPLICATED_FRAMES_MAX} % per camera)`,
  };
}

/** Every video has a timestamp sidecar: a recording of this app, whose frames the sidecars confirm (so differing frame counts are a recording cut short, not unsynchronised videos). */
export function allHaveSidecars(videos: readonly string[]): boolean {
  return videos.length > 0 && videos.every((v) => existsSync(sidecarPath(v)));
}

/** Why a recording ended, from its Config.toml `[capture]` (main/capture/live/rig.ts writes it); null without one. */
export interface RecordingEnd {
  /** `recording` (the recorder never finished: killed, crashed, or still running), `write_failed`, `source_ended`, `stopped`, or what the file says. */
  reason: string;
  failedCamera: string | null;
  writeError: string | null;
}

/** Read `[capture] reason` (and `failed_camera`, `write_error`) from `trialDir/Config.toml`; null when the file or its `[capture]` table is absent or unreadable. */
export function readRecordingEnd(trialDir: string): RecordingEnd | null {
  const f = path.join(trialDir, 'Config.toml');
  if (!existsSync(f)) return null;
  try {
    const doc = parseToml(readFileSync(f, 'utf8')) as { capture?: { reason?: unknown; failed_camera?: unknown; write_error?: unknown } };
    const c = doc.capture;
    if (!c || typeof c.reason !== 'string') return null;
    return {
      reason: c.reason,
      failedCamera: typeof c.failed_camera === 'string' && c.failed_camera ? c.failed_camera : null,
      writeError: typeof c.write_error === 'string' && c.write_error ? c.write_error : null,
    };
  } catch {
    return null;
  }
}

/** Reasons in Config.toml that mean the recording ended before it was meant to. */
const CUT_SHORT_REASONS = new Set(['recording', 'write_failed', 'source_ended']);

/**
 * Whether a recording with sidecars ended before it was meant to: its Config.toml says so
 * (`recording`, `write_failed`, `source_ended`), or its videos' container counts and sidecar rows
 * differ. `process` then counts what each video really holds (a truncated .avi keeps its header's count).
 */
export function recordingLooksCutShort(end: RecordingEnd | null, videos: readonly { frames: number }[], sidecarRows: readonly (number | null)[]): boolean {
  return (end !== null && CUT_SHORT_REASONS.has(end.reason)) || countsDiffer(videos, sidecarRows);
}

/** Whether the videos' container frame counts and the sidecars' rows are not all the same number. */
function countsDiffer(videos: readonly { frames: number }[], sidecarRows: readonly (number | null)[]): boolean {
  return new Set([...videos.map((v) => v.frames), ...sidecarRows.filter((r): r is number => r !== null)]).size > 1;
}

/**
 * The trial condition for a live recording cut short (`recording_cut_short`, informational): its
 * Config.toml says it ended on a write failure (a full disk), a source that ended or failed, or
 * still says `recording` (the recorder was killed or crashed before it finished), or its cameras'
 * sidecars / videos hold different numbers of frames. `process` then takes the first `frames`
 * frames — the fewest that every sidecar and every video can supply — and the detail says why and
 * gives every camera's sidecar rows and video frames (container count, and the frames it really
 * holds when `readable` was counted and is fewer). Also when a video file is shorter than its own
 * RIFF header says (`truncated`, `riffTruncated` in main/capture/sources.ts: cut off after a
 * recording that ended as asked). Null for a recording that ended as asked with every file whole
 * (or a trial without sidecars).
 * @param readable frames each video really holds when counted; null for a camera whose count reached
 *   the limit it was counted to (it holds at least that many), or for all when nothing was counted
 * @param truncated per video, whether its file is shorter than its RIFF header says
 */
export function recordingCutShortCondition(
  end: RecordingEnd | null,
  videos: readonly { camera: string; frames: number }[],
  sidecarRows: readonly (number | null)[],
  readable: readonly (number | null)[] | null,
  frames: number,
  truncated: readonly boolean[] = [],
): ReadingCondition | null {
  if (sidecarRows.length === 0 || sidecarRows.every((r) => r === null)) return null;
  const short = (i: number) => {
    const r = readable?.[i];
    return r !== undefined && r !== null && r < Math.min(videos[i]!.frames, sidecarRows[i] ?? Infinity);
  };
  if (!recordingLooksCutShort(end, videos, sidecarRows) && !truncated.some(Boolean) && !videos.some((_v, i) => short(i))) return null;
  const cut = videos.filter((_v, i) => truncated[i]).map((v) => v.camera);
  const why =
    end?.reason === 'write_failed'
      ? `a file could not be written${end.failedCamera ? ` (camera ${end.failedCamera})` : ''}${end.writeError ? `: ${end.writeError.slice(-200)}` : ''}`
      : end?.reason === 'source_ended'
        ? `a source stopped delivering frames${end.failedCamera ? ` (${end.failedCamera})` : ''}`
        : end?.reason === 'recording'
          ? 'the recorder stopped without finishing (killed or crashed; Config.toml still says reason "recording")'
          : [
              cut.length
                ? `the video file${cut.length > 1 ? 's' : ''} of ${cut.join(', ')} ${cut.length > 1 ? 'are' : 'is'} shorter than ${cut.length > 1 ? 'their' : 'its'} own header says (cut off after the recording was written)`
                : null,
              countsDiffer(videos, sidecarRows) || !cut.length ? 'its cameras hold different numbers of frames' : null,
            ]
              .filter((x) => x !== null)
              .join('; ');
  const each = videos
    .map((v, i) => {
      const video = short(i) ? `${v.frames} (${readable![i]} readable)` : `${v.frames}`;
      return `${v.camera} ${sidecarRows[i] ?? '–'}/${video}`;
    })
    .join(', ');
  return {
    code: 'recording_cut_short',
    detail: `the recording was cut short: ${why}. The trial is its first ${frames} frames, the most that every camera's timestamp sidecar and video hold (sidecar rows/video frames: ${each})`,
  };
}
