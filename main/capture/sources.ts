/**
 * Trial inputs: videos (probed with OpenCV's FFmpeg backend) or OpenPose-style 2D keypoint JSON
 * folders, matched to the calibration's cameras, with the bad-input checks of the capture command.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { CameraCalibration } from '../../models/capture/camera';
import { openPosePeople, type Keypoints2D } from '../../models/capture/openpose';
import { CaptureInputError } from './errors';
import { openCvAddon } from './native/index';

const VIDEO_EXT = /\.(mp4|avi|mov|mkv|webm|m4v)$/i;

/** Digits of a camera/file name ("cam_01" → "1", "cam01.mp4" → "1"); null without digits. */
export function cameraNumber(name: string): string | null {
  const m = /(\d+)(?!.*\d)/.exec(path.basename(name).replace(VIDEO_EXT, '').replace(/_json$/, ''));
  return m?.[1] ? String(Number(m[1])) : null;
}

/**
 * Order `items` to match `cams`: by the trailing number in their names when every camera and
 * item has a distinct one, else by sorted order. Throws `missing_camera` naming the cameras
 * without an input.
 */
export function matchToCameras<T>(cams: CameraCalibration[], items: T[], nameOf: (t: T) => string, what: string): T[] {
  const camNums = cams.map((c) => cameraNumber(c.name));
  const itemNums = items.map((t) => cameraNumber(nameOf(t)));
  const unique = (a: (string | null)[]) => a.every((x) => x !== null) && new Set(a).size === a.length;
  if (unique(camNums) && unique(itemNums)) {
    const missing = cams.filter((_, i) => !itemNums.includes(camNums[i]!));
    if (missing.length) throw new CaptureInputError('missing_camera', `no ${what} for camera ${missing.map((c) => c.name).join(', ')} (found ${items.map(nameOf).map((n) => path.basename(n)).join(', ') || 'none'}); every calibrated camera needs one`);
    // An input whose camera has no calibration section is not silently dropped.
    const uncalibrated = items.filter((_, i) => !camNums.includes(itemNums[i]!));
    if (uncalibrated.length) throw new CaptureInputError('bad_calibration', `${uncalibrated.map((t) => path.basename(nameOf(t))).join(', ')} has no camera section in the calibration (calibrated: ${cams.map((c) => c.name).join(', ')}); add its section, or move that ${what} out of the trial to leave the camera out deliberately`);
    return camNums.map((n) => items[itemNums.indexOf(n)]!);
  }
  if (items.length < cams.length) throw new CaptureInputError('missing_camera', `${items.length} ${what}(s) for ${cams.length} calibrated cameras (${cams.map((c) => c.name).join(', ')}); every calibrated camera needs one`);
  return [...items].sort((a, b) => nameOf(a).localeCompare(nameOf(b))).slice(0, cams.length);
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
    const v = readdirSync(d).filter((f) => VIDEO_EXT.test(f)).sort().map((f) => path.join(d, f));
    if (v.length) return v;
  }
  return [];
}

/**
 * Probe every camera's video: it must open, decode at least one frame, agree with the others in
 * frame count and fps, and match its calibration's image size (± `SIZE_TOLERANCE_PX`).
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
      const w = first.width, h = first.height;
      if (Math.abs(w - cam.width) > SIZE_TOLERANCE_PX || Math.abs(h - cam.height) > SIZE_TOLERANCE_PX) {
        throw new CaptureInputError('size_mismatch', `${path.basename(file)} is ${w}×${h} px but camera ${cam.name} was calibrated at ${cam.width}×${cam.height} px; recalibrate or use the matching calibration`);
      }
      return { camera: cam.name, path: file, width: w, height: h, fps: info.fps, frames };
    } finally {
      reader.close();
    }
  });
  const fr = new Set(out.map((v) => v.frames));
  if (fr.size > 1) throw new CaptureInputError('frame_count_mismatch', `videos have different frame counts (${out.map((v) => `${path.basename(v.path)}: ${v.frames}`).join(', ')}); they must be synchronised frame by frame`);
  const fps = out.map((v) => v.fps);
  if (Math.max(...fps) - Math.min(...fps) > 0.01 * Math.max(...fps)) throw new CaptureInputError('fps_mismatch', `videos have different frame rates (${out.map((v) => `${path.basename(v.path)}: ${v.fps} fps`).join(', ')})`);
  return out;
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
    const f = readdirSync(d).filter((x) => statSync(path.join(d, x)).isDirectory()).sort().map((x) => path.join(d, x));
    if (f.length) return f;
  }
  return [];
}

/** Read OpenPose JSON folders (one per camera, one file per frame, sorted by name). */
export function loadKeypointFolders(cams: CameraCalibration[], folders: string[], keypoints: number): KeypointInput {
  for (const f of folders) if (!existsSync(f) || !statSync(f).isDirectory()) throw new CaptureInputError('missing_camera', `keypoint folder ${f} does not exist`);
  const matched = matchToCameras(cams, folders, (f) => f, 'keypoint folder');
  const files = matched.map((d) => readdirSync(d).filter((x) => x.endsWith('.json')).sort().map((x) => path.join(d, x)));
  files.forEach((fs, i) => { if (fs.length === 0) throw new CaptureInputError('bad_keypoints', `${matched[i]} holds no .json frames`); });
  const counts = new Set(files.map((f) => f.length));
  if (counts.size > 1) throw new CaptureInputError('frame_count_mismatch', `keypoint folders have different frame counts (${matched.map((d, i) => `${path.basename(d)}: ${files[i]!.length}`).join(', ')})`);
  const people = files.map((fs) => fs.map((file) => {
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
  }));
  return { folders: matched, frames: files[0]!.length, people };
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
      } catch { /* a broken config is not ours to judge */ }
    }
    d = path.dirname(d);
  }
  return null;
}
