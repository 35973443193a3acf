/**
 * The Capture page's rig set-up and calibration wizard (models/contract.ts `capture.calib*`): a
 * {@link CalibrationWizard} over the live room's open cameras, with board detection, intrinsics and
 * floor-board extrinsics on worker threads; an imported TOML; the declared layout checked against
 * the poses; and the save, through the `capture.saveRig` verb, with the rig's TOML (Pose2Sim
 * layout) written to `<capture folder>/rigs/<rig id>/Calib.toml`. Every call needs `capture.run`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ValidationError } from '../../models/errors';
import type { Handlers } from '../../models/contract';
import type { BoardSetting } from '../../models/capture/rig-wizard';
import { CalibrationError, formatTomlCalibration, parseTomlCalibration, type Checkerboard } from '../capture/calibration';
import { CalibrationWizard } from '../capture/live/wizard';
import type { CaptureWorkspace } from '../capture/workspace';
import type { Db } from '../data/db';
import { callVerb } from '../services';
import { captureRunner } from './capture';
import type { LiveRoom } from './capture-live';

type RigOps =
  | 'capture.calibStart'
  | 'capture.calibState'
  | 'capture.calibFrame'
  | 'capture.calibSet'
  | 'capture.calibCapture'
  | 'capture.calibRetake'
  | 'capture.calibIntrinsics'
  | 'capture.calibExtrinsics'
  | 'capture.calibImport'
  | 'capture.calibLayout'
  | 'capture.calibSave'
  | 'capture.calibClose';

const board = (b: BoardSetting): Checkerboard => ({ cols: b.cols, rows: b.rows, squareM: b.square_mm / 1000 });

/** The wizard handlers; without a workspace they answer NotConfigured. */
export function rigHandlers<Ctx extends { session: { userId: string | null } }>(
  db: Db,
  workspace: CaptureWorkspace | null | undefined,
  room: LiveRoom,
  signedIn: (ctx: Ctx) => string,
): Pick<Handlers<Ctx>, RigOps> {
  const run = captureRunner(db, workspace, signedIn);
  const wizard = (ctx: Ctx): CalibrationWizard => {
    const { actor } = run(ctx);
    if (!room.wizard || room.orgId !== actor.orgId) throw new ValidationError('The calibration wizard is not running: open the cameras and start it first.');
    return room.wizard;
  };
  return {
    'capture.calibStart': async (ctx, i) => {
      const { actor } = run(ctx);
      const rig = room.rigFor(actor.orgId);
      if (room.recording) throw new ValidationError('A recording is running: stop it before calibrating.');
      const intr = board(i.intrinsic_board);
      const extr = i.extrinsic_board ? board(i.extrinsic_board) : intr;
      if ((extr.cols + extr.rows) % 2 === 0)
        throw new CalibrationError(
          `a ${extr.cols}×${extr.rows} floor board is symmetric under a half turn; use inner-corner counts of different parity (e.g. 5×8) so every camera finds the same origin`,
        );
      await room.closeWizard();
      const w = new CalibrationWizard(rig, { intrinsicBoard: intr, extrinsicBoard: extr });
      room.wizard = w;
      w.start();
      return w.state();
    },
    'capture.calibState': (ctx) => {
      const { actor } = run(ctx);
      return room.wizard && room.orgId === actor.orgId ? room.wizard.state() : null;
    },
    'capture.calibFrame': (ctx, i) => {
      const w = wizard(ctx);
      const f = w.frame(i.camera);
      if (!f || (i.after_frame !== undefined && f.frameIndex === i.after_frame)) return null;
      return {
        camera: i.camera,
        frame_index: f.frameIndex,
        width: f.width,
        height: f.height,
        corners: f.corners,
        jpeg_base64: Buffer.from(f.jpeg).toString('base64'),
      };
    },
    'capture.calibSet': (ctx, i) => {
      const w = wizard(ctx);
      if (i.phase) w.phase = i.phase;
      if (i.auto_capture !== undefined) w.autoCapture = i.auto_capture;
      return w.state();
    },
    'capture.calibCapture': (ctx, i) => {
      const w = wizard(ctx);
      const results = w.captureViews(i.cameras);
      return { results, state: w.state() };
    },
    'capture.calibRetake': (ctx, i) => {
      const w = wizard(ctx);
      w.removeViews(i.camera, i.view);
      return w.state();
    },
    'capture.calibIntrinsics': async (ctx, i) => {
      const w = wizard(ctx);
      await w.solveIntrinsics(i.cameras);
      return w.state();
    },
    'capture.calibExtrinsics': async (ctx) => {
      const w = wizard(ctx);
      await w.solveExtrinsics();
      return w.state();
    },
    'capture.calibImport': (ctx, i) => {
      const w = wizard(ctx);
      w.importCalibration(parseTomlCalibration(i.toml, i.file_name ?? 'the imported file'));
      return w.state();
    },
    'capture.calibLayout': (ctx, i) => {
      const w = wizard(ctx);
      w.checkLayout(i.layout, i.tolerance_deg);
      return w.state();
    },
    'capture.calibSave': (ctx, i) => {
      const { ws, userId } = run(ctx);
      const w = wizard(ctx);
      const cams = w.calibration();
      if (!cams) throw new ValidationError('Calibrate every camera (intrinsics and floor board) or import a calibration before saving.');
      const st = w.state();
      const layout = st.layout;
      const out = callVerb({ db, userId }, 'capture.saveRig', {
        ...(i.rig_id ? { rig_id: i.rig_id } : {}),
        name: i.name,
        declared_layout: layout?.declared ?? [],
        ...(layout ? { drift_tolerance_deg: layout.tolerance_deg } : {}),
        cameras: cams.map((c, k) => ({
          name: c.name,
          width: c.width,
          height: c.height,
          K: c.K,
          dist: c.dist,
          rvec: [...c.rvec],
          tvec: [...c.tvec],
          reprojection_rms_px: st.cameras[k]?.intrinsics?.rms_px ?? null,
        })),
      });
      const rigId = i.rig_id ?? out.changeset.changes.find((c) => c.table === 'rig')?.id;
      if (!rigId) throw new Error('capture.saveRig stored no rig');
      const rms = st.cameras.map((c) => c.intrinsics?.rms_px).filter((x): x is number => typeof x === 'number');
      const toml = formatTomlCalibration(cams, { adjusted: false, error: rms.length ? Math.max(...rms) : 0 });
      const dir = path.join(ws.root, 'rigs', rigId);
      mkdirSync(dir, { recursive: true });
      const tomlPath = path.join(dir, 'Calib.toml');
      writeFileSync(tomlPath, toml);
      return { rig_id: rigId, toml_path: tomlPath, toml };
    },
    'capture.calibClose': async (ctx) => {
      run(ctx);
      await room.closeWizard();
      return { closed: true as const };
    },
  };
}
