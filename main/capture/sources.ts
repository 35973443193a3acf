/**
 * Trial inputs: videos (probed with OpenCV's FFmpeg backend) or OpenPose-style 2D keypoint JSON
 * folders, matched to the calibration's cameras, with the bad-input checks of the capture command.
 */
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { CameraCalibration } from '../../models/capture/camera';
import { openPosePeople, type Keypoints2D } from '../../models/capture/openpose';
import { CaptureInputError } from './errors';
import { allHaveSidecars } from './live/sidecar';
import { openCvAddon } from './native/index';

const VIDEO_EXT = /\.(mp4|avi|mov|mkv|webm|m4v)$/i;

/** Digits of a camera/file name ("cam_01" → "1", "cam01.mp4" → "1"); null without digits. */
export function cameraNumber(name: string): string | null {
  const m = /(\d+)(?!.*\d)/.exec(
    path
      .basename(name)
      .replace(VIDEO_EXT, '')
      .replace(/_json$/, ''),
  );
  return m?.[1] ? String(Number(m[1])) : null;
}

/** A name reduced for matching: basename without extension or `_json`, lower case, letters and digits only ("cam_01" and "cam01_json" → "cam01"). */
export function normalizedCameraName(name: string): string {
  return path
    .basename(name)
    .replace(VIDEO_EXT, '')
    .replace(/_json$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/**
 * Order `items` to match `cams`, by name only — never by sort order: an item belongs to the camera
 * whose normalised name equals its own ("cam_01" ↔ "cam01.mp4" ↔ "cam01_json"), or, failing that,
 * whose trailing number equals its own ("cam_1" ↔ "front_01.mp4") when that number is unique on
 * both sides. Throws `missing_camera` naming every camera without an input, `bad_calibration`
 * naming every input that matches no camera (never silently dropped), and `bad_argument` when two
 * inputs match the same camera.
 */
export function matchToCameras<T>(cams: CameraCalibration[], items: T[], nameOf: (t: T) => string, what: string): T[] {
  const camNorm = cams.map((c) => normalizedCameraName(c.name));
  const camNums = cams.map((c) => cameraNumber(c.name));
  const itemNums = items.map((t) => cameraNumber(nameOf(t)));
  const uniqueNum = (a: (string | null)[], n: string | null) => n !== null && a.filter((x) => x === n).length === 1;
  const owner = items.map((t, i) => {
    const exact = camNorm.indexOf(normalizedCameraName(nameOf(t)));
    if (exact >= 0) return exact;
    const n = itemNums[i] ?? null;
    if (uniqueNum(itemNums, n) && uniqueNum(camNums, n)) return camNums.indexOf(n);
    return -1;
  });
  const base = (t: T) => path.basename(nameOf(t));
  const calibrated = cams.map((c) => c.name).join(', ');
  const unmatched = items.filter((_, i) => owner[i] === -1);
  if (unmatched.length)
    throw new CaptureInputError(
      'bad_calibration',
      `${unmatched.map(base).join(', ')} ${unmatched.length === 1 ? 'matches' : 'match'} no camera in the calibration by name (calibrated: ${calibrated}); name each ${what} after its camera (e.g. cam01 for cam_01), add the camera's section, or move that ${what} out of the trial to leave the camera out deliberately`,
    );
  const out: T[] = [];
  const missing: string[] = [];
  for (let c = 0; c < cams.length; c++) {
    const mine = items.filter((_, i) => owner[i] === c);
    if (mine.length > 1)
      throw new CaptureInputError('bad_argument', `${mine.map(base).join(' and ')} both match camera ${cams[c]!.name}; keep one ${what} per camera`);
    if (mine.length === 0) missing.push(cams[c]!.name);
    else out.push(mine[0]!);
  }
  if (missing.length)
    throw new CaptureInputError(
      'missing_camera',
      `no ${what} for camera ${missing.join(', ')} (found ${items.map(base).join(', ') || 'none'}); every calibrated camera needs one`,
    );
  return out;
}

/** A probed video. */
export interface VideoSource {
  camera: string;
  path: string;
  width: number;
  height: number;
  fps: number;
  /** Frame count from the container (counted by decoding when the container has none). */
  frames: number;
}

/** Calibration and image sizes may differ by up to one 16-px codec macroblock (e.g. 1080 vs 1088). */
export const SIZE_TOLERANCE_PX = 16;

/** Videos in `dir` (or `dir/videos`), matched to the cameras. */
export function findVideos(trialDir: string): string[] {
  const dirs = [path.join(trialDir, 'videos'), trialDir];
  for (const d of dirs) {
    if (!existsSync(d) || !statSync(d).isDirectory()) continue;
    const v = readdirSync(d)
      .filter((f) => VIDEO_EXT.test(f))
      .sort()
      .map((f) => path.join(d, f));
    if (v.length) return v;
  }
  return [];
}

/**
 * Probe every camera's video: it must open, decode at least one frame, agree with the others in
 * frame count and fps, and match its calibration's image size (± `SIZE_TOLERANCE_PX`). Frame counts
 * may differ when every video has a timestamp sidecar (a recording of this app cut short: a full
 * disk, a killed recorder): the pipeline then takes the frames every camera holds and says so
 * (`recording_cut_short`, main/capture/live/sidecar.ts).
 * @throws CaptureInputError `empty_video`, `unreadable_video`, `size_mismatch`, `frame_count_mismatch`, `fps_mismatch`, and those of {@link matchToCameras}
 */
export function probeVideos(cams: CameraCalibration[], files: string[]): VideoSource[] {
  const cv = openCvAddon();
  const matched = matchToCameras(cams, files, (f) => f, 'video');
  const out = matched.map((file, i): VideoSource => {
    const cam = cams[i]!;
    if (statSync(file).size === 0) throw new CaptureInputError('empty_video', `${file} is empty (0 bytes)`);
    let reader;
    try {
      reader = new cv.VideoReader(file);
    } catch {
      throw new CaptureInputError('unreadable_video', `${file} cannot be opened as a video (corrupt file or unsupported codec)`);
    }
    try {
      const info = reader.info();
      const first = reader.read();
      if (!first) throw new CaptureInputError('unreadable_video', `${file} has no decodable frame (empty or corrupt video)`);
      const frames = info.frameCount > 0 ? Math.round(info.frameCount) : 1 + reader.skip(1 << 30);
      const w = first.width,
        h = first.height;
      if (Math.abs(w - cam.width) > SIZE_TOLERANCE_PX || Math.abs(h - cam.height) > SIZE_TOLERANCE_PX) {
        throw new CaptureInputError(
          'size_mismatch',
          `${path.basename(file)} is ${w}×${h} px but camera ${cam.name} was calibrated at ${cam.width}×${cam.height} px; recalibrate or use the matching calibration`,
        );
      }
      return { camera: cam.name, path: file, width: w, height: h, fps: info.fps, frames };
    } finally {
      reader.close();
    }
  });
  const fr = new Set(out.map((v) => v.frames));
  if (fr.size > 1 && !allHaveSidecars(matched))
    throw new CaptureInputError(
      'frame_count_mismatch',
      `videos have different frame counts (${out.map((v) => `${path.basename(v.path)}: ${v.frames}`).join(', ')}); they must be synchronised frame by frame`,
    );
  const fps = out.map((v) => v.fps);
  if (Math.max(...fps) - Math.min(...fps) > 0.01 * Math.max(...fps))
    throw new CaptureInputError('fps_mismatch', `videos have different frame rates (${out.map((v) => `${path.basename(v.path)}: ${v.fps} fps`).join(', ')})`);
  return out;
}

/**
 * Whether a RIFF file (an .avi) is shorter than its own chunk headers say: the top-level RIFF chunk
 * (and OpenDML's RIFF 'AVIX' chunks past 1 GiB) are walked from the start by their sizes, and one
 * that runs past the end of the file means the file was cut off after it was written (a copy cut
 * short, a disk that filled while a later write grew it) — its container frame count is then not
 * what it holds. Reads 8 bytes per top-level chunk. False for a file that is not RIFF (.mp4 and the
 * others: their own index is read) or cannot be opened, and for a header whose size was never filled
 * in (a killed recorder: Config.toml's reason says that case).
 * Format: Microsoft RIFF/AVI and the OpenDML AVI File Format Extensions 1.02 (chunk = FOURCC,
 * little-endian uint32 size, data padded to even length).
 */
export function riffTruncated(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(8);
    for (let off = 0; off + 8 <= size;) {
      if (readSync(fd, head, 0, 8, off) < 8 || head.toString('latin1', 0, 4) !== 'RIFF') return false;
      const len = head.readUInt32LE(4);
      if (len === 0) return false;
      const end = off + 8 + len + (len & 1);
      if (end > size) return true;
      off = end;
    }
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * Frames of `file` OpenCV's FFmpeg reader can read, counting at most `upTo` (the first is decoded,
 * the rest grabbed: demuxed and decoded without colour conversion). For a video whose container
 * count cannot be trusted: an .avi truncated or left without its index by a recording cut short.
 * Returns 0 for a video that does not open.
 */
export function countReadableFrames(file: string, upTo: number): number {
  if (upTo < 1) return 0;
  let reader;
  try {
    reader = new (openCvAddon().VideoReader)(file);
  } catch {
    return 0;
  }
  try {
    return reader.read() ? 1 + reader.skip(upTo - 1) : 0;
  } finally {
    reader.close();
  }
}

/** 2D keypoints of every person in every frame of every camera: [camera][frame] → people (K×3). */
export interface KeypointInput {
  folders: string[];
  frames: number;
  people: Keypoints2D[][][];
}

/** Keypoint folders of a trial: `pose-associated/cam*_json` if present, else `pose/cam*_json`. */
export function findKeypointFolders(trialDir: string): string[] {
  for (const sub of ['pose-associated', 'pose']) {
    const d = path.join(trialDir, sub);
    if (!existsSync(d)) continue;
    const f = readdirSync(d)
      .filter((x) => statSync(path.join(d, x)).isDirectory())
      .sort()
      .map((x) => path.join(d, x));
    if (f.length) return f;
  }
  return [];
}

/** Read OpenPose JSON folders (one per camera, one file per frame, sorted by name). */
export function loadKeypointFolders(cams: CameraCalibration[], folders: string[], keypoints: number): KeypointInput {
  for (const f of folders)
    if (!existsSync(f) || !statSync(f).isDirectory()) throw new CaptureInputError('missing_camera', `keypoint folder ${f} does not exist`);
  const matched = matchToCameras(cams, folders, (f) => f, 'keypoint folder');
  const files = matched.map((d) =>
    readdirSync(d)
      .filter((x) => x.endsWith('.json'))
      .sort()
      .map((x) => path.join(d, x)),
  );
  files.forEach((fs, i) => {
    if (fs.length === 0) throw new CaptureInputError('bad_keypoints', `${matched[i]} holds no .json frames`);
  });
  const counts = new Set(files.map((f) => f.length));
  if (counts.size > 1)
    throw new CaptureInputError(
      'frame_count_mismatch',
      `keypoint folders have different frame counts (${matched.map((d, i) => `${path.basename(d)}: ${files[i]!.length}`).join(', ')})`,
    );
  const people = files.map((fs) =>
    fs.map((file) => {
      let doc: unknown;
      try {
        doc = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        throw new CaptureInputError('bad_keypoints', `${file} is not valid JSON (${(e as Error).message})`);
      }
      try {
        return openPosePeople(doc, keypoints);
      } catch {
        throw new CaptureInputError('bad_keypoints', `${file} is not OpenPose keypoint JSON (needs "people": [{"pose_keypoints_2d": [...]}])`);
      }
    }),
  );
  people.forEach((cam, c) => checkKeypointsInImage(cams[c]!, matched[c]!, cam));
  return { folders: matched, frames: files[0]!.length, people };
}

/** Margin around the image, as a fraction of each dimension, inside which detected keypoints are accepted (2D models extrapolate slightly past the border: 49 px in the demo's multi-person trial). */
export const KEYPOINT_IMAGE_MARGIN = 0.1;
/** Fraction of detected keypoints allowed outside image + margin before the folder is refused. */
export const KEYPOINT_OUTSIDE_MAX = 0.01;

/**
 * JSON input carries no image size, so it is checked against the calibration's: more than
 * {@link KEYPOINT_OUTSIDE_MAX} of the detected keypoints outside the image (± {@link KEYPOINT_IMAGE_MARGIN}
 * of its size) means the keypoints were not made from this camera's images at this size (a
 * swapped or wrong calibration, a rotated video). Throws `size_mismatch`.
 */
export function checkKeypointsInImage(cam: CameraCalibration, folder: string, frames: Keypoints2D[][]): void {
  const mx = cam.width * KEYPOINT_IMAGE_MARGIN,
    my = cam.height * KEYPOINT_IMAGE_MARGIN;
  let n = 0,
    out = 0,
    maxX = -Infinity,
    maxY = -Infinity;
  for (const people of frames)
    for (const kp of people)
      for (let k = 0; k < kp.length / 3; k++) {
        const x = kp[k * 3] ?? NaN,
          y = kp[k * 3 + 1] ?? NaN;
        if (!((kp[k * 3 + 2] ?? 0) > 0) || !Number.isFinite(x) || !Number.isFinite(y)) continue;
        n++;
        maxX = Math.max(maxX, x);
        maxY = Math.max(maxY, y);
        if (x < -mx || y < -my || x > cam.width + mx || y > cam.height + my) out++;
      }
  if (n > 0 && out / n > KEYPOINT_OUTSIDE_MAX) {
    throw new CaptureInputError(
      'size_mismatch',
      `${path.basename(folder)}: ${out} of ${n} keypoints (${((100 * out) / n).toFixed(1)} %) lie outside camera ${cam.name}'s calibrated image of ${cam.width}×${cam.height} px (keypoints reach x ${Math.round(maxX)}, y ${Math.round(maxY)} px); the keypoints were not made at this camera's calibrated size — check that the calibration belongs to these cameras and that width and height are not swapped`,
    );
  }
}

/** `[project] frame_rate` from a Pose2Sim Config.toml in the trial folder or its two parents. */
export function frameRateFromConfig(trialDir: string): number | null {
  let d = path.resolve(trialDir);
  for (let i = 0; i < 3; i++) {
    const f = path.join(d, 'Config.toml');
    if (existsSync(f)) {
      try {
        const doc = parseToml(readFileSync(f, 'utf8')) as { project?: { frame_rate?: unknown } };
        const r = doc.project?.frame_rate;
        if (typeof r === 'number' && r > 0) return r;
      } catch {
        /* a broken config is not ours to judge */
      }
    }
    d = path.dirname(d);
  }
  return null;
}
