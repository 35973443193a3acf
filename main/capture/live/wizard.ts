/**
 * The rig set-up and calibration wizard behind the Capture page's "Rig & calibration" tab
 * (issue 15): live checkerboard detection on every open camera, the board views kept for
 * intrinsics with a coverage map, `calibrateCamera` per camera with its reprojection RMS, the
 * floor-board extrinsics (PnP), an imported TOML as an alternative, and the declared layout
 * checked against the calibrated poses. Detection and the solves run on worker threads
 * ({@link CalibrationPool}); this class only keeps the state and grabs frames from the rig.
 */
import type { CameraCalibration } from '../../../models/capture/camera';
import { type DeclaredLayout, DEFAULT_DRIFT_TOLERANCE_DEG, type RigDriftReport, assessRigDrift } from '../../../models/capture/obliquity';
import type { CalibrationViewStatus, CalibrationWizardState, RmsBand } from '../../../models/capture/rig-wizard';
import { RMS_GOOD_BELOW_PX } from '../../../models/capture/rig-wizard';
import type { CaptureRigApi } from '../../../models/capture/live';
import { CalibrationError, type Checkerboard } from '../calibration';
import { CalibrationPool } from './calib-pool';

/** Coverage grid size: cells across and down the image. */
export const COVERAGE_GRID = { cols: 8, rows: 8 } as const;
/**
 * A new view must differ from every kept one: mean corner displacement above this fraction of the
 * image diagonal (the same board position twice adds nothing to `calibrateCamera`).
 */
export const MIN_VIEW_CHANGE = 0.03;

/** Band of an intrinsic reprojection RMS (px); edge in {@link RMS_GOOD_BELOW_PX}. */
export function rmsBand(rmsPx: number): RmsBand {
  return rmsPx < RMS_GOOD_BELOW_PX ? 'good' : 'poor';
}

interface Detection {
  jpeg: Uint8Array;
  frameIndex: number;
  corners: Float64Array | null;
  /** Which board was searched for. */
  board: 'intrinsics' | 'extrinsics';
  width: number;
  height: number;
  ms: number;
  at: number;
}

interface CamState {
  index: number;
  name: string;
  width: number;
  height: number;
  last: Detection | null;
  error: string | null;
  views: { corners: Float64Array; frameIndex: number }[];
  intrinsics: { K: number[]; dist: number[]; rmsPx: number; perViewRmsPx: number[]; views: number; solvedAt: string; source: 'board' | 'imported' } | null;
  extrinsics: { rvec: [number, number, number]; tvec: [number, number, number]; rmsPx: number | null; solvedAt: string; source: 'board' | 'imported' } | null;
}

/** Options of {@link CalibrationWizard}. */
export interface WizardOptions {
  /** Board held in front of each camera for intrinsics (inner corners, square in metres). */
  intrinsicBoard: Checkerboard;
  /** Board lying on the floor for extrinsics (default: the intrinsic board). */
  extrinsicBoard?: Checkerboard;
  /** Worker pool (default: a new one, closed with the wizard). */
  pool?: CalibrationPool;
  /** Detect on frames downscaled to this width, corners refined at full resolution (default 800 px: on the demo photos it finds the same boards as full resolution in half the time). */
  detectWidth?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Point in the convex quad q (4 points, in order)? */
function inQuad(x: number, y: number, q: [number, number][]): boolean {
  let sign = 0;
  for (let i = 0; i < 4; i++) {
    const [ax, ay] = q[i]!,
      [bx, by] = q[(i + 1) % 4]!;
    const c = (bx - ax) * (y - ay) - (by - ay) * (x - ax);
    if (c === 0) continue;
    const s = Math.sign(c);
    if (sign === 0) sign = s;
    else if (s !== sign) return false;
  }
  return true;
}

/**
 * Coverage of the image by the kept views: a COVERAGE_GRID of counts, each cell counting the views
 * whose board (the quad of its outer inner corners) contains the cell centre.
 */
export function coverageGrid(views: Float64Array[], width: number, height: number, board: Checkerboard): number[] {
  const g = new Array<number>(COVERAGE_GRID.cols * COVERAGE_GRID.rows).fill(0);
  const n = board.cols * board.rows;
  for (const v of views) {
    const pt = (j: number): [number, number] => [v[j * 2]!, v[j * 2 + 1]!];
    const q = [pt(0), pt(board.cols - 1), pt(n - 1), pt(n - board.cols)];
    for (let r = 0; r < COVERAGE_GRID.rows; r++)
      for (let c = 0; c < COVERAGE_GRID.cols; c++)
        if (inQuad(((c + 0.5) * width) / COVERAGE_GRID.cols, ((r + 0.5) * height) / COVERAGE_GRID.rows, q)) g[r * COVERAGE_GRID.cols + c]!++;
  }
  return g;
}

/** Mean corner displacement between two views (px). */
function meanShift(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let j = 0; j < a.length; j += 2) s += Math.hypot(a[j]! - b[j]!, a[j + 1]! - b[j + 1]!);
  return s / (a.length / 2);
}

/** The calibration wizard over one open rig; see the module comment. */
export class CalibrationWizard {
  readonly intrinsicBoard: Checkerboard;
  readonly extrinsicBoard: Checkerboard;
  phase: 'intrinsics' | 'extrinsics' = 'intrinsics';
  autoCapture = false;
  readonly #cams: CamState[];
  readonly #pool: CalibrationPool;
  readonly #ownPool: boolean;
  readonly #detectWidth: number;
  #running = false;
  #loops: Promise<void>[] = [];
  #layout: { layout: DeclaredLayout; tolDeg: number; report: RigDriftReport } | null = null;

  constructor(
    readonly rig: CaptureRigApi,
    o: WizardOptions,
  ) {
    this.intrinsicBoard = o.intrinsicBoard;
    this.extrinsicBoard = o.extrinsicBoard ?? o.intrinsicBoard;
    this.#pool = o.pool ?? new CalibrationPool();
    this.#ownPool = !o.pool;
    this.#detectWidth = o.detectWidth ?? 800;
    this.#cams = rig.sources.map((s) => ({
      index: s.index,
      name: s.name,
      width: s.width,
      height: s.height,
      last: null,
      error: null,
      views: [],
      intrinsics: null,
      extrinsics: null,
    }));
  }

  /** Start one detection loop per camera (newest frame → worker → overlay, again). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loops = this.#cams.map((c) => this.#loop(c));
  }

  /** Stop the loops (waits for detections in flight) and the pool this wizard created. */
  async close(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
    if (this.#ownPool) await this.#pool.close();
  }

  async #loop(cam: CamState): Promise<void> {
    while (this.#running) {
      let snap;
      try {
        snap = this.rig.snapshot(cam.index, cam.width, 92);
      } catch (e) {
        cam.error = (e as Error).message;
        return;
      }
      if (!snap) {
        await sleep(40);
        continue;
      }
      const which = this.phase;
      const board = which === 'intrinsics' ? this.intrinsicBoard : this.extrinsicBoard;
      try {
        const r = await this.#pool.detect(snap.jpeg, board, this.#detectWidth);
        cam.last = {
          jpeg: snap.jpeg,
          frameIndex: snap.frameIndex,
          corners: r.corners,
          board: which,
          width: r.width,
          height: r.height,
          ms: r.ms,
          at: Date.now(),
        };
        cam.error = null;
        if (this.autoCapture && which === 'intrinsics' && r.corners) this.#keep(cam);
      } catch (e) {
        if (!this.#running) return;
        cam.error = (e as Error).message;
        await sleep(200);
      }
    }
  }

  #camera(i: number): CamState {
    const c = this.#cams[i];
    if (!c) throw new CalibrationError(`there is no camera ${i} in this rig`);
    return c;
  }

  /** Keep the camera's newest detection as an intrinsic view; the reason when it is not kept. */
  #keep(cam: CamState): CalibrationViewStatus {
    const d = cam.last;
    if (!d) return { camera: cam.index, kept: false, reason: 'no frame yet' };
    if (d.board !== 'intrinsics' || !d.corners) return { camera: cam.index, kept: false, reason: 'the board is not found in the current frame' };
    if (d.width !== cam.width || d.height !== cam.height)
      return { camera: cam.index, kept: false, reason: `the frame is ${d.width}×${d.height}, the camera ${cam.width}×${cam.height}` };
    const diag = Math.hypot(cam.width, cam.height);
    const same = cam.views.findIndex((v) => meanShift(v.corners, d.corners!) < MIN_VIEW_CHANGE * diag);
    if (same >= 0) return { camera: cam.index, kept: false, reason: `same board position as view ${same + 1}: move or tilt the board` };
    cam.views.push({ corners: d.corners, frameIndex: d.frameIndex });
    return { camera: cam.index, kept: true, reason: null };
  }

  /** Keep the current detection of every camera (or only `cameras`) as a board view. */
  captureViews(cameras?: number[]): CalibrationViewStatus[] {
    return (cameras ?? this.#cams.map((c) => c.index)).map((i) => this.#keep(this.#camera(i)));
  }

  /** Retake: drop one view (index 0-based) or, without `view`, all of a camera's views and its intrinsics. */
  removeViews(camera: number, view?: number): void {
    const c = this.#camera(camera);
    if (view === undefined) c.views = [];
    else {
      if (!c.views[view]) throw new CalibrationError(`${c.name} has no view ${view + 1}`);
      c.views.splice(view, 1);
    }
    c.intrinsics = null;
    c.extrinsics = null;
    this.#layout = null;
  }

  /**
   * `calibrateCamera` per camera (default: every camera with ≥ 3 views) on the worker threads.
   * Throws {@link CalibrationError} when a camera has fewer than 3 views or OpenCV refuses them.
   */
  async solveIntrinsics(cameras?: number[]): Promise<void> {
    const list = (cameras ?? this.#cams.filter((c) => c.views.length >= 3).map((c) => c.index)).map((i) => this.#camera(i));
    if (list.length === 0) throw new CalibrationError('no camera has 3 board views yet: capture the board in different positions and tilts first');
    await Promise.all(
      list.map(async (c) => {
        if (c.views.length < 3) throw new CalibrationError(`${c.name} has ${c.views.length} board views; need at least 3`);
        const r = await this.#pool.intrinsics(
          c.views.map((v) => v.corners),
          c.width,
          c.height,
          this.intrinsicBoard,
        );
        c.intrinsics = {
          K: r.K,
          dist: r.dist,
          rmsPx: r.rmsPx,
          perViewRmsPx: r.perViewRmsPx,
          views: c.views.length,
          solvedAt: new Date().toISOString(),
          source: 'board',
        };
        c.extrinsics = null;
      }),
    );
    this.#layout = null;
  }

  /**
   * Camera poses from the board lying on the floor, seen now by every camera (PnP with each camera's
   * intrinsics; world = the board: origin at its first inner corner, Z up). Throws
   * {@link CalibrationError} naming the cameras without intrinsics or without the board in view.
   */
  async solveExtrinsics(): Promise<void> {
    const noK = this.#cams.filter((c) => !c.intrinsics).map((c) => c.name);
    if (noK.length) throw new CalibrationError(`solve the intrinsics first (${noK.join(', ')} ${noK.length === 1 ? 'has' : 'have'} none)`);
    const noBoard = this.#cams.filter((c) => !c.last || c.last.board !== 'extrinsics' || !c.last.corners).map((c) => c.name);
    if (noBoard.length)
      throw new CalibrationError(
        `the floor board (${this.extrinsicBoard.cols}×${this.extrinsicBoard.rows}) is not in view of ${noBoard.join(', ')}: every camera must see the whole board`,
      );
    const out = await Promise.all(
      this.#cams.map((c) =>
        this.#pool.extrinsics(c.name, c.last!.jpeg, this.extrinsicBoard, { K: c.intrinsics!.K, dist: c.intrinsics!.dist, width: c.width, height: c.height }),
      ),
    );
    const at = new Date().toISOString();
    out.forEach((r, i) => {
      this.#cams[i]!.extrinsics = { rvec: r.camera.rvec, tvec: r.camera.tvec, rmsPx: r.rmsPx, solvedAt: at, source: 'board' };
    });
    this.#layout = null;
  }

  /**
   * Take intrinsics and poses from an imported calibration (Pose2Sim TOML), matched to the open
   * cameras in order. Throws {@link CalibrationError} when the counts or image sizes differ.
   */
  importCalibration(cams: CameraCalibration[]): void {
    if (cams.length !== this.#cams.length)
      throw new CalibrationError(`the file has ${cams.length} cameras; ${this.#cams.length} are open. Open as many cameras as the file calibrates.`);
    cams.forEach((f, i) => {
      const c = this.#cams[i]!;
      if (f.width !== c.width || f.height !== c.height)
        throw new CalibrationError(`${f.name} in the file is ${f.width}×${f.height} px; ${c.name} delivers ${c.width}×${c.height}`);
    });
    const at = new Date().toISOString();
    cams.forEach((f, i) => {
      const c = this.#cams[i]!;
      c.intrinsics = { K: [...f.K], dist: [...f.dist], rmsPx: NaN, perViewRmsPx: [], views: 0, solvedAt: at, source: 'imported' };
      c.extrinsics = {
        rvec: [...f.rvec] as [number, number, number],
        tvec: [...f.tvec] as [number, number, number],
        rmsPx: null,
        solvedAt: at,
        source: 'imported',
      };
    });
    this.#layout = null;
  }

  /** The calibrated cameras (names as the rig's), or null until every camera has intrinsics and a pose. */
  calibration(): CameraCalibration[] | null {
    if (this.#cams.some((c) => !c.intrinsics || !c.extrinsics)) return null;
    return this.#cams.map((c) => ({
      name: c.name,
      width: c.width,
      height: c.height,
      K: c.intrinsics!.K,
      dist: c.intrinsics!.dist,
      rvec: c.extrinsics!.rvec,
      tvec: c.extrinsics!.tvec,
    }));
  }

  /**
   * Compare the declared layout (camera name → yaw in degrees, see models/capture/obliquity.ts)
   * with the calibrated poses: yaw drift per camera after the best common rotation
   * ({@link assessRigDrift}), drifted above `tolDeg` (default 15°).
   */
  checkLayout(layout: DeclaredLayout, tolDeg = DEFAULT_DRIFT_TOLERANCE_DEG): RigDriftReport {
    const cams = this.calibration();
    if (!cams) throw new CalibrationError('calibrate every camera (intrinsics and floor board) or import a calibration before checking the layout');
    for (const d of layout) if (!cams.some((c) => c.name === d.camera)) throw new CalibrationError(`the layout names ${d.camera}, which is not open`);
    const report = assessRigDrift(cams, layout, { tolDeg });
    this.#layout = { layout, tolDeg, report };
    return report;
  }

  /** The camera's newest frame (JPEG) with its detected corners (full-resolution px). */
  frame(camera: number): { jpeg: Uint8Array; frameIndex: number; corners: number[] | null; width: number; height: number } | null {
    const d = this.#camera(camera).last;
    if (!d) return null;
    return { jpeg: d.jpeg, frameIndex: d.frameIndex, corners: d.corners ? Array.from(d.corners) : null, width: d.width, height: d.height };
  }

  /** Everything the page shows, without images. */
  state(): CalibrationWizardState {
    const calib = this.calibration();
    return {
      phase: this.phase,
      auto_capture: this.autoCapture,
      intrinsic_board: { cols: this.intrinsicBoard.cols, rows: this.intrinsicBoard.rows, square_mm: this.intrinsicBoard.squareM * 1000 },
      extrinsic_board: { cols: this.extrinsicBoard.cols, rows: this.extrinsicBoard.rows, square_mm: this.extrinsicBoard.squareM * 1000 },
      rms_good_below_px: RMS_GOOD_BELOW_PX,
      coverage_grid: { ...COVERAGE_GRID },
      cameras: this.#cams.map((c) => {
        const grid = coverageGrid(
          c.views.map((v) => v.corners),
          c.width,
          c.height,
          this.intrinsicBoard,
        );
        return {
          index: c.index,
          name: c.name,
          width: c.width,
          height: c.height,
          detection: c.last
            ? { frame_index: c.last.frameIndex, board: c.last.board, found: c.last.corners !== null, ms: Math.round(c.last.ms), age_ms: Date.now() - c.last.at }
            : null,
          error: c.error,
          views: c.views.length,
          view_frames: c.views.map((v) => v.frameIndex),
          coverage: grid,
          coverage_fraction: grid.filter((x) => x > 0).length / grid.length,
          intrinsics: c.intrinsics
            ? {
                source: c.intrinsics.source,
                rms_px: Number.isFinite(c.intrinsics.rmsPx) ? c.intrinsics.rmsPx : null,
                band: Number.isFinite(c.intrinsics.rmsPx) ? rmsBand(c.intrinsics.rmsPx) : null,
                per_view_rms_px: c.intrinsics.perViewRmsPx,
                views: c.intrinsics.views,
                fx: c.intrinsics.K[0]!,
                fy: c.intrinsics.K[4]!,
                cx: c.intrinsics.K[2]!,
                cy: c.intrinsics.K[5]!,
                solved_at: c.intrinsics.solvedAt,
              }
            : null,
          extrinsics: c.extrinsics
            ? { source: c.extrinsics.source, rms_px: c.extrinsics.rmsPx, rvec: c.extrinsics.rvec, tvec: c.extrinsics.tvec, solved_at: c.extrinsics.solvedAt }
            : null,
        };
      }),
      complete: calib !== null,
      layout: this.#layout ? { declared: this.#layout.layout, tolerance_deg: this.#layout.tolDeg, report: this.#layout.report } : null,
    };
  }
}
