/**
 * Board-image camera feeds for the calibration wizard's tests (unit and e2e): the Pose2Sim demo's
 * recorded intrinsic checkerboard photos (S00_Calibration/intrinsics, 4×7 inner corners, 60 mm
 * squares as its Config.toml says) turned into one short MJPEG video per camera, each photo held
 * for `holdFrames` frames, followed by a board lying on the floor. The demo has no floor-board
 * photo (Pose2Sim computed its extrinsics from clicked scene points), so those frames are rendered
 * (models/capture/board.ts) with each camera's K and pose from Calib_qualisys.toml: the poses the
 * wizard recovers can be compared with the file's. The videos play through the same file-source
 * path as a camera (`openRig` / ATHLETE_CAPTURE_FILE_SOURCES).
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { type CameraCalibration, rodrigues } from '../../../models/capture/camera';
import { renderCheckerboard } from '../../../models/capture/board';
import { type Checkerboard, loadTomlCalibration } from '../calibration';
import { openCvAddon } from '../native/index';
import { DEMO, DEMO_CALIB } from './paths';

/** The demo's intrinsic board (Config.toml: intrinsics_corners_nb = [4,7], intrinsics_square_size = 60 mm). */
export const DEMO_BOARD: Checkerboard = { cols: 4, rows: 7, squareM: 0.06 };
/** The floor board rendered for extrinsics: 5×8 inner corners (unique origin: 5 + 8 is odd), 100 mm squares. */
export const FLOOR_BOARD: Checkerboard = { cols: 5, rows: 8, squareM: 0.1 };
/** Where the floor board's first inner corner lies in the demo's world (m): in view of all four cameras. */
export const FLOOR_ORIGIN: [number, number, number] = [-0.4, -0.3, 0];

/** The demo's intrinsic photos of one camera ("01"…"04"), sorted. */
export function demoIntrinsicImages(cam: string): string[] {
  const dir = path.join(DEMO, 'S00_Calibration', 'intrinsics', `int_cam${cam}_img`);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jpg'))
    .sort()
    .map((f) => path.join(dir, f));
}

/**
 * A demo camera's pose expressed in the floor board's frame (origin at FLOOR_ORIGIN, axes the
 * world's): x_cam = R·X_world + t = R·(X_board + o) + t, so t_board = t + R·o.
 */
export function cameraInBoardFrame(c: CameraCalibration): CameraCalibration {
  const R = rodrigues(c.rvec);
  const o = FLOOR_ORIGIN;
  const t: [number, number, number] = [0, 1, 2].map((i) => c.tvec[i]! + R[i * 3]! * o[0] + R[i * 3 + 1]! * o[1] + R[i * 3 + 2]! * o[2]) as [
    number,
    number,
    number,
  ];
  return { ...c, tvec: t };
}

/**
 * Write `<dir>/cam0N.avi` for the demo's four cameras: each intrinsic photo for `holdFrames`
 * frames, then the rendered floor board for `floorFrames` frames, at `fps`. Existing files are
 * kept (the rendering takes seconds per camera). Returns the paths in camera order.
 */
export function writeBoardFeeds(dir: string, o: { holdFrames?: number; floorFrames?: number; fps?: number; photos?: number } = {}): string[] {
  const cv = openCvAddon();
  const hold = o.holdFrames ?? 4,
    floor = o.floorFrames ?? 8,
    fps = o.fps ?? 2;
  mkdirSync(dir, { recursive: true });
  const calib = loadTomlCalibration(DEMO_CALIB);
  return ['01', '02', '03', '04'].map((cam, i) => {
    const out = path.join(dir, `cam${cam}.avi`);
    if (existsSync(out)) return out;
    const frames = [];
    for (const img of demoIntrinsicImages(cam).slice(0, o.photos ?? 7)) {
      const f = cv.readImage(img);
      for (let k = 0; k < hold; k++) frames.push(f);
    }
    if (floor > 0) {
      const g = renderCheckerboard({ ...cameraInBoardFrame(calib[i]!), dist: [0, 0, 0, 0] }, FLOOR_BOARD, 2);
      const rgb = new Uint8Array(g.width * g.height * 3);
      for (let p = 0; p < g.data.length; p++) rgb[p * 3] = rgb[p * 3 + 1] = rgb[p * 3 + 2] = g.data[p]!;
      const f = { data: rgb, width: g.width, height: g.height, channels: 3 };
      for (let k = 0; k < floor; k++) frames.push(f);
    }
    cv.writeVideo(out, 'MJPG', fps, frames);
    return out;
  });
}

/**
 * Command line (the e2e specs drive the app from outside, so they run this instead of importing it):
 * `npx tsx main/capture/testing/board-feed.ts OUT_DIR [HOLD_FRAMES] [FLOOR_FRAMES] [FPS]` prints the
 * feed paths as a JSON array.
 */
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const [out, hold, floor, fps] = process.argv.slice(2);
  if (!out) {
    console.error('usage: board-feed.ts OUT_DIR [HOLD_FRAMES] [FLOOR_FRAMES] [FPS]');
    process.exit(2);
  }
  const o: { holdFrames?: number; floorFrames?: number; fps?: number } = {};
  if (hold) o.holdFrames = Number(hold);
  if (floor) o.floorFrames = Number(floor);
  if (fps) o.fps = Number(fps);
  console.log(JSON.stringify(writeBoardFeeds(out, o)));
}
