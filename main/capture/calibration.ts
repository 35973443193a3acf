/**
 * Calibration: import of the common TOML layout (Pose2Sim / Anipose style) and checkerboard
 * calibration with OpenCV (intrinsics by `calibrateCamera`, extrinsics by `solvePnP` on a board
 * lying in the world's floor plane).
 */
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { AppError } from '../../models/errors';
import { type CameraCalibration, type Vec3, cameraCenter, projectPoint } from '../../models/capture/camera';
import { OpenCvError, openCvAddon } from './native/index';

/** A calibration problem the user can fix (bad file, missing key, …). */
export class CalibrationError extends AppError {
  constructor(message: string) {
    super({ code: 'Validation', message });
    this.name = 'CalibrationError';
  }
}

const num = z.number().finite();
const TomlCamera = z.object({
  name: z.string().optional(),
  size: z.tuple([num, num]),
  matrix: z.tuple([z.tuple([num, num, num]), z.tuple([num, num, num]), z.tuple([num, num, num])]),
  // OpenCV's models: [k1,k2,p1,p2], + k3, + k4..k6 (rational); 6 or 7 coefficients are not a model.
  distortions: z.array(num).refine((d) => d.length === 4 || d.length === 5 || d.length === 8, {
    message: 'distortions must hold 4, 5 or 8 coefficients (OpenCV: k1 k2 p1 p2 [k3 [k4 k5 k6]])',
  }),
  rotation: z.tuple([num, num, num]),
  translation: z.tuple([num, num, num]),
  fisheye: z.boolean().optional(),
});

/**
 * Parse TOML calibration text: one table per camera with `name`, `size` [width, height] px,
 * `matrix` K (px), `distortions` [k1, k2, p1, p2(, k3…)], `rotation` (Rodrigues, world→camera),
 * `translation` (m, world→camera); non-camera tables such as `[metadata]` are ignored.
 * Cameras are returned sorted by table name.
 */
export function parseTomlCalibration(text: string, source = 'calibration'): CameraCalibration[] {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    throw new CalibrationError(`${source}: not valid TOML (${(e as Error).message.split('\n')[0]})`);
  }
  const cams: CameraCalibration[] = [];
  for (const key of Object.keys(doc).sort()) {
    const v = doc[key];
    if (key === 'metadata' || typeof v !== 'object' || v === null || !('matrix' in v)) continue;
    const r = TomlCamera.safeParse(v);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new CalibrationError(`${source}: camera [${key}] ${issue ? `${issue.path.join('.') || 'table'}: ${issue.message}` : 'is malformed'}`);
    }
    const c = r.data;
    if (c.fisheye) throw new CalibrationError(`${source}: camera [${key}] is a fisheye model, which is not supported`);
    // A pinhole K has positive focal lengths and a bottom row [0, 0, 1].
    const [[fx, , cx], [, fy, cy], [k20, k21, k22]] = c.matrix;
    if (!(fx > 0 && fy > 0))
      throw new CalibrationError(`${source}: camera [${key}] matrix has a non-positive focal length (fx ${fx}, fy ${fy} px); recalibrate or fix the file`);
    if (!Number.isFinite(cx) || !Number.isFinite(cy)) throw new CalibrationError(`${source}: camera [${key}] principal point is not a number`);
    if (k20 !== 0 || k21 !== 0 || k22 !== 1) throw new CalibrationError(`${source}: camera [${key}] matrix bottom row must be [0, 0, 1]`);
    if (!(c.size[0] > 0 && c.size[1] > 0)) throw new CalibrationError(`${source}: camera [${key}] size must be positive pixels`);
    cams.push({
      name: c.name ?? key,
      width: c.size[0],
      height: c.size[1],
      K: c.matrix.flat(),
      dist: c.distortions,
      rvec: c.rotation,
      tvec: c.translation,
    });
  }
  if (cams.length === 0) throw new CalibrationError(`${source}: no camera tables (each needs size, matrix, distortions, rotation, translation)`);
  return cams;
}

/** Read and parse a TOML calibration file. */
export function loadTomlCalibration(path: string): CameraCalibration[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CalibrationError(
      code === 'ENOENT'
        ? `calibration file ${path} does not exist; pass --calib with the rig's TOML (e.g. the trial's Calib*.toml)`
        : `cannot read calibration ${path}: ${code ?? (e as Error).message}`,
    );
  }
  return parseTomlCalibration(text, path);
}

/** Write cameras as TOML in the same layout (numbers in full precision). */
export function formatTomlCalibration(cams: CameraCalibration[], metadata: { adjusted?: boolean; error?: number } = {}): string {
  const arr = (a: readonly number[]) => `[ ${a.map((x) => String(x)).join(', ')}]`;
  const out: string[] = [];
  for (const c of cams) {
    out.push(
      `[${c.name}]`,
      `name = "${c.name}"`,
      `size = ${arr([c.width, c.height])}`,
      `matrix = [ ${arr(c.K.slice(0, 3))}, ${arr(c.K.slice(3, 6))}, ${arr(c.K.slice(6, 9))}]`,
      `distortions = ${arr(c.dist)}`,
      `rotation = ${arr(c.rvec)}`,
      `translation = ${arr(c.tvec)}`,
      'fisheye = false',
      '',
    );
  }
  out.push('[metadata]', `adjusted = ${metadata.adjusted ?? false}`, `error = ${metadata.error ?? 0}`, '');
  return out.join('\n');
}

/** Checkerboard geometry: inner corners and square size. */
export interface Checkerboard {
  /** Inner corners along the board's width. */
  cols: number;
  /** Inner corners along its height. */
  rows: number;
  /** Square side in metres. */
  squareM: number;
}

/** Board corner coordinates (cols·rows × 3, metres) in OpenCV's row-major corner order, z = 0. */
export function boardObjectPoints(b: Checkerboard): Float64Array {
  const o = new Float64Array(b.cols * b.rows * 3);
  for (let j = 0; j < b.cols * b.rows; j++) {
    o[j * 3] = (j % b.cols) * b.squareM;
    o[j * 3 + 1] = Math.floor(j / b.cols) * b.squareM;
  }
  return o;
}

/** Image input for calibration: a file path or raw RGB/grey pixels. */
export type CalibrationImage = string | { data: Uint8Array; width: number; height: number; channels: number };

/** Result of intrinsic calibration of one camera. */
export interface IntrinsicResult {
  K: number[];
  dist: number[];
  width: number;
  height: number;
  /** Reprojection RMS over all detected corners (px). */
  rmsPx: number;
  /** Images in which the board was found / not found. */
  used: number;
  rejected: number[];
}

function imageSize(img: CalibrationImage): { width: number; height: number } {
  if (typeof img !== 'string') return { width: img.width, height: img.height };
  const i = openCvAddon().readImage(img);
  return { width: i.width, height: i.height };
}

/**
 * Intrinsics K and distortion of one camera from checkerboard images (`cv::findChessboardCorners`,
 * `cv::cornerSubPix`, `cv::calibrateCamera`; Zhang 2000, IEEE TPAMI 22:1330). Needs the board in
 * at least 3 images.
 */
export function calibrateIntrinsics(images: CalibrationImage[], board: Checkerboard): IntrinsicResult {
  const cv = openCvAddon();
  if (images.length === 0) throw new CalibrationError('no checkerboard images');
  const obj = boardObjectPoints(board);
  const op: Float64Array[] = [],
    ip: Float64Array[] = [],
    rejected: number[] = [];
  let size: { width: number; height: number } | null = null;
  images.forEach((img, i) => {
    const s = imageSize(img);
    if (size && (s.width !== size.width || s.height !== size.height))
      throw new CalibrationError(`image ${i} is ${s.width}×${s.height}, the others ${size.width}×${size.height}`);
    size = s;
    const corners = cv.findChessboard(img as never, board.cols, board.rows);
    if (!corners) {
      rejected.push(i);
      return;
    }
    op.push(obj);
    ip.push(corners);
  });
  if (op.length < 3 || !size)
    throw new CalibrationError(`the ${board.cols}×${board.rows} board was found in ${op.length} of ${images.length} images; need at least 3`);
  const { width, height } = size as { width: number; height: number };
  const r = calibrateFromCorners(ip, width, height, board);
  return { K: r.K, dist: r.dist, width, height, rmsPx: r.rmsPx, used: op.length, rejected };
}

/** Intrinsics from corners already found (one Float64Array of cols·rows·2 px per view), with each view's own RMS. */
export interface CornerIntrinsics {
  K: number[];
  dist: number[];
  /** Reprojection RMS over every corner of every view (px), as `cv::calibrateCamera` returns it. */
  rmsPx: number;
  /** RMS per view (px), in the order given: a view far above the others is the one to retake. */
  perViewRmsPx: number[];
}

/**
 * `cv::calibrateCamera` (Zhang 2000) over detected board corners; needs ≥ 3 views of
 * `board.cols`×`board.rows` corners in a `width`×`height` px image. Per-view RMS is the reprojection
 * of the board with the view's own pose (rvec, tvec) and the solved K, dist.
 * Throws {@link CalibrationError} for too few views, wrong corner counts or an OpenCV refusal.
 */
export function calibrateFromCorners(views: Float64Array[], width: number, height: number, board: Checkerboard): CornerIntrinsics {
  const n = board.cols * board.rows;
  if (views.length < 3) throw new CalibrationError(`${views.length} board views; need at least 3 (different positions and tilts)`);
  views.forEach((v, i) => {
    if (v.length !== n * 2) throw new CalibrationError(`view ${i} has ${v.length / 2} corners; the ${board.cols}×${board.rows} board has ${n}`);
  });
  const obj = boardObjectPoints(board);
  let r;
  try {
    r = openCvAddon().calibrateCamera(
      views.map(() => obj),
      views,
      width,
      height,
    );
  } catch (e) {
    if (e instanceof OpenCvError)
      throw new CalibrationError(
        `OpenCV could not calibrate from these ${views.length} views (${e.message}); check the board size and take more photos of the whole board`,
      );
    throw e;
  }
  const K = Array.from(r.K),
    dist = Array.from(r.dist);
  const perViewRmsPx = views.map((v, i) => {
    const rv = r.rvecs[i]!,
      tv = r.tvecs[i]!;
    const cam: CameraCalibration = { name: 'view', width, height, K, dist, rvec: [rv[0]!, rv[1]!, rv[2]!], tvec: [tv[0]!, tv[1]!, tv[2]!] };
    let s = 0;
    for (let j = 0; j < n; j++) {
      const p = projectPoint(cam, [obj[j * 3]!, obj[j * 3 + 1]!, 0]);
      s += p ? (p[0] - v[j * 2]!) ** 2 + (p[1] - v[j * 2 + 1]!) ** 2 : Infinity;
    }
    return Math.sqrt(s / n);
  });
  return { K, dist, rmsPx: r.rms, perViewRmsPx };
}

/**
 * Extrinsics of a camera with known intrinsics from one image of the board lying in the world
 * floor plane (board frame = world frame: origin at the first inner corner, Z = board normal).
 * Returns the camera (world→camera Rodrigues rotation and translation in metres) and the PnP RMS (px).
 */
export function calibrateExtrinsics(
  name: string,
  image: CalibrationImage,
  board: Checkerboard,
  intr: Pick<IntrinsicResult, 'K' | 'dist' | 'width' | 'height'>,
): { camera: CameraCalibration; rmsPx: number } {
  if ((board.cols + board.rows) % 2 === 0)
    throw new CalibrationError(
      `a ${board.cols}×${board.rows} board is symmetric under a half turn; use inner-corner counts of different parity (e.g. 4×7) so every camera finds the same origin`,
    );
  const cv = openCvAddon();
  const img = typeof image === 'string' ? cv.readImage(image) : image;
  let corners = cv.findChessboard(img, board.cols, board.rows);
  if (!corners) throw new CalibrationError(`${name}: the ${board.cols}×${board.rows} board was not found in the extrinsic image`);
  const obj = boardObjectPoints(board);
  const K = Float64Array.from(intr.K),
    dist = Float64Array.from(intr.dist);
  const v = (a: Float64Array): Vec3 => [a[0] ?? 0, a[1] ?? 0, a[2] ?? 0];
  const solve = (c: Float64Array) => {
    let r;
    try {
      r = cv.solvePnP(obj, c, K, dist);
    } catch (e) {
      if (e instanceof OpenCvError)
        throw new CalibrationError(
          `${name}: OpenCV could not solve the board pose (${e.message}); check the intrinsics (K 3×3, 4, 5 or 8 distortion coefficients)`,
        );
      throw e;
    }
    if (!r) throw new CalibrationError(`${name}: solvePnP failed`);
    return { name, width: intr.width, height: intr.height, K: [...intr.K], dist: [...intr.dist], rvec: v(r.rvec), tvec: v(r.tvec), rms: r.rms };
  };
  let cam = solve(corners);
  // Handedness: the world Z axis points from the floor board toward the cameras (up). A camera
  // below the board means OpenCV listed the rows in the mirrored order; flip them and solve again.
  if (cameraCenter(cam)[2] < 0) {
    const flipped = new Float64Array(corners.length);
    for (let r = 0; r < board.rows; r++)
      for (let c = 0; c < board.cols; c++) {
        const from = ((board.rows - 1 - r) * board.cols + c) * 2,
          to = (r * board.cols + c) * 2;
        flipped[to] = corners[from] ?? 0;
        flipped[to + 1] = corners[from + 1] ?? 0;
      }
    corners = flipped;
    cam = solve(corners);
  }
  // Origin disambiguation: the outer square diagonal to corner 0 must be the darker of the two
  // opposite outer corner squares; otherwise OpenCV ordered the corners from the other end.
  const s = board.squareM;
  const a = greyAt(img, projectPoint(cam, [-s / 2, -s / 2, 0]));
  const b = greyAt(img, projectPoint(cam, [(board.cols - 0.5) * s, (board.rows - 0.5) * s, 0]));
  if (a > b) {
    const n = corners.length / 2;
    const rev = new Float64Array(corners.length);
    for (let i = 0; i < n; i++) {
      rev[i * 2] = corners[(n - 1 - i) * 2] ?? 0;
      rev[i * 2 + 1] = corners[(n - 1 - i) * 2 + 1] ?? 0;
    }
    corners = rev;
    cam = solve(corners);
  }
  const { rms, ...camera } = cam;
  return { camera, rmsPx: rms };
}

function greyAt(img: { data: Uint8Array; width: number; height: number; channels: number }, p: [number, number] | null): number {
  if (!p) return NaN;
  const u = Math.round(p[0]),
    w = Math.round(p[1]);
  if (u < 0 || w < 0 || u >= img.width || w >= img.height) return NaN;
  const o = (w * img.width + u) * img.channels;
  let s = 0;
  for (let c = 0; c < img.channels; c++) s += img.data[o + c] ?? 0;
  return s / img.channels;
}
