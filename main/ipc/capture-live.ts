/**
 * The Capture page's live room (models/contract.ts `capture.sources` … `capture.tap`): the cameras
 * attached to this machine (and video files configured as stand-in cameras with
 * ATHLETE_CAPTURE_FILE_SOURCES, the same code path), one open rig per app, preview snapshots,
 * record → stop into the capture workspace, and the one tap that marks the athlete. Every call
 * needs `capture.run`; the native capture addon (native/capture, main/capture/live/rig.ts) does the
 * capturing on its own threads.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError, Conflict, NotFound, ValidationError } from '../../models/errors';
import type { CameraCalibration } from '../../models/capture/camera';
import type { Handlers } from '../../models/contract';
import type { CaptureRigApi, DeviceFailure, RecordingResult } from '../../models/capture/live';
import { formatTomlCalibration } from '../capture/calibration';
import { listCameras, openRig } from '../capture/live/rig';
import type { CalibrationWizard } from '../capture/live/wizard';
import type { CaptureWorkspace } from '../capture/workspace';
import type { Db } from '../data/db';
import { callVerb } from '../services';
import { captureRunner } from './capture';

type LiveOps =
  | 'capture.sources'
  | 'capture.openRig'
  | 'capture.closeRig'
  | 'capture.preview'
  | 'capture.rigStatus'
  | 'capture.startRecording'
  | 'capture.stopRecording'
  | 'capture.tapFrame'
  | 'capture.tap';

/** Video files that stand in for cameras (comma-separated paths in ATHLETE_CAPTURE_FILE_SOURCES). */
export function fileSources(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.ATHLETE_CAPTURE_FILE_SOURCES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** One live room per app: the open rig, the running recording, the failures seen. */
export class LiveRoom {
  rig: CaptureRigApi | null = null;
  orgId: string | null = null;
  /** The running recording; `calibDir` holds the rig calibration file the recorder checks image sizes against (removed when it stops). */
  recording: { id: string; orgId: string; startedAt: number; calibDir: string } | null = null;
  failures: DeviceFailure[] = [];
  last: RecordingResult | null = null;
  /** The calibration wizard over the open rig (main/ipc/capture-rig.ts), closed with the rig. */
  wizard: CalibrationWizard | null = null;
  private off: (() => void)[] = [];

  /** The open rig of organisation `orgId`. @throws Validation when no cameras are open for it */
  rigFor(orgId: string): CaptureRigApi {
    if (!this.rig || this.orgId !== orgId) throw new ValidationError('No cameras are open: choose the cameras first.');
    return this.rig;
  }

  async closeWizard(): Promise<void> {
    const w = this.wizard;
    this.wizard = null;
    if (w) await w.close();
  }

  async open(orgId: string, specs: Parameters<typeof openRig>[0]): Promise<CaptureRigApi> {
    await this.close();
    const rig = await openRig(specs);
    this.rig = rig;
    this.orgId = orgId;
    this.failures = [];
    this.off = [rig.on('device-failure', (f) => this.failures.push(f))];
    return rig;
  }

  async close(): Promise<void> {
    await this.closeWizard();
    for (const f of this.off) f();
    this.off = [];
    const r = this.rig;
    this.rig = null;
    if (this.recording) rmSync(this.recording.calibDir, { recursive: true, force: true });
    this.recording = null;
    if (r) await r.close();
  }
}

/** The live-room handlers; without a workspace they answer NotConfigured. */
export function liveHandlers<Ctx extends { session: { userId: string | null } }>(
  db: Db,
  workspace: CaptureWorkspace | null | undefined,
  room: LiveRoom,
  signedIn: (ctx: Ctx) => string,
): Pick<Handlers<Ctx>, LiveOps> {
  const run = captureRunner(db, workspace, signedIn);
  const sourceList = () => {
    let devices: { id: string; label: string }[] = [];
    let note: string | null = null;
    try {
      devices = listCameras().map((d) => ({ id: `device:${d.index}`, label: `${d.label}${d.path ? ` (${d.path})` : ''}` }));
    } catch (e) {
      note = e instanceof Error ? e.message : String(e);
    }
    const files = fileSources().map((f, i) => ({ id: `file:${i}`, label: `Video file ${path.basename(f)} (stands in for a camera)` }));
    return { sources: [...devices, ...files], note };
  };
  return {
    'capture.sources': (ctx) => {
      run(ctx);
      return sourceList();
    },
    'capture.openRig': async (ctx, i) => {
      const { actor } = run(ctx);
      const files = fileSources();
      const specs = i.source_ids.map((id, k) => {
        const [kind, n] = id.split(':');
        const idx = Number(n);
        const name = `cam${String(k + 1).padStart(2, '0')}`;
        if (kind === 'device' && Number.isInteger(idx)) return { kind: 'device' as const, device: idx, name };
        if (kind === 'file' && files[idx]) return { kind: 'file' as const, path: files[idx], pace: 'realtime' as const, loop: true, name };
        throw new NotFound(`Camera source ${id}`);
      });
      try {
        const rig = await room.open(actor.orgId, specs);
        return { sources: [...rig.sources], fps: rig.fps };
      } catch (e) {
        if (e instanceof AppError) throw e;
        throw new ValidationError(`The cameras could not be opened: ${e instanceof Error ? e.message : String(e)}`);
      }
    },
    'capture.closeRig': async (ctx) => {
      run(ctx);
      await room.close();
      return { closed: true as const };
    },
    'capture.preview': (ctx, i) => {
      const { actor } = run(ctx);
      const rig = room.rigFor(actor.orgId);
      if (i.camera >= rig.sources.length) throw new NotFound(`Camera ${i.camera}`);
      const f = rig.snapshot(i.camera, i.max_width ?? 480, 70);
      if (!f) return null;
      return {
        camera: f.camera,
        name: f.name,
        width: f.width,
        height: f.height,
        frame_index: f.frameIndex,
        jpeg_base64: Buffer.from(f.jpeg).toString('base64'),
      };
    },
    'capture.rigStatus': (ctx) => {
      const { actor } = run(ctx);
      if (!room.rig || room.orgId !== actor.orgId) return { open: false as const };
      const counts = room.rig.counts();
      return {
        open: true as const,
        sources: [...room.rig.sources],
        fps: room.rig.fps,
        counts,
        recording: room.recording ? { recording_id: room.recording.id, seconds: (Date.now() - room.recording.startedAt) / 1000 } : null,
        failures: room.failures,
      };
    },
    'capture.startRecording': (ctx, i) => {
      const { ws, actor, userId } = run(ctx);
      const rig = room.rigFor(actor.orgId);
      if (room.recording) throw new Conflict('A recording is already running: stop it first.');
      // The calibration wizard reads the same preview rings: it stops when a recording starts.
      if (room.wizard) void room.closeWizard();
      callVerb({ db, userId }, 'athletes.get', { id: i.athlete_id });
      const rigs = callVerb({ db, userId }, 'capture.listRigs', {});
      const r = rigs.rigs.find((x) => x.id === i.rig_id);
      if (!r) throw new NotFound('Rig');
      if (r.cameras.length < rig.sources.length)
        throw new ValidationError(
          `The rig has ${r.cameras.length} calibrated cameras; ${rig.sources.length} are open. Open as many cameras as the rig calibrated.`,
        );
      const cams: CameraCalibration[] = r.cameras.slice(0, rig.sources.length).map((c, k) => {
        const cal = JSON.parse(c.calibration) as Pick<CameraCalibration, 'K' | 'dist' | 'rvec' | 'tvec'>;
        // The open cameras take the rig's calibrated cameras in order (cam01 ↔ the rig's first camera).
        return { name: rig.sources[k]!.name, width: c.width, height: c.height, ...cal };
      });
      const toml = formatTomlCalibration(cams);
      const snap = rig.snapshot(0, 960, 85);
      // The recorder checks each camera's image size against the rig calibration (size_mismatch, nothing written) and copies it into the trial.
      const calibDir = mkdtempSync(path.join(os.tmpdir(), 'ai-rig-calib-'));
      const calibrationPath = path.join(calibDir, 'Calib_rig.toml');
      writeFileSync(calibrationPath, toml);
      let rec;
      try {
        rec = ws.createLive(
          {
            org_id: actor.orgId,
            athlete_id: i.athlete_id,
            test: i.test,
            recorded_at: new Date().toISOString(),
            created_by: userId,
            tap: null,
            rig_id: r.id,
            cameras: rig.sources.map((s) => s.name),
          },
          toml,
          (outDir) => rig.startRecording({ outDir, calibrationPath, metadata: { athlete_id: i.athlete_id, test: i.test } }),
        );
      } catch (e) {
        rmSync(calibDir, { recursive: true, force: true });
        throw e;
      }
      const tapFile = path.join(ws.root, rec.id, 'tap-frame.jpg');
      if (snap) writeFileSync(tapFile, snap.jpeg);
      else {
        // The preview grid may just have taken the newest frame: take the next one (within 2 s).
        let tries = 0;
        const t = setInterval(() => {
          let next = null;
          try {
            next = rig.snapshot(0, 960, 85);
          } catch {
            tries = Infinity; // the rig was closed
          }
          if (next) writeFileSync(tapFile, next.jpeg);
          if (next || ++tries > 40) clearInterval(t);
        }, 50);
        t.unref?.();
      }
      room.recording = { id: rec.id, orgId: actor.orgId, startedAt: Date.now(), calibDir };
      return rec;
    },
    'capture.stopRecording': async (ctx) => {
      const { ws, actor } = run(ctx);
      const rig = room.rigFor(actor.orgId);
      const cur = room.recording;
      if (!cur) throw new ValidationError('No recording is running.');
      let result: RecordingResult;
      try {
        try {
          result = await rig.stopRecording();
        } catch {
          // A source that ended finished the recording by itself: its result is the one to keep.
          result = await rig.recordingDone();
        }
      } catch (e) {
        rmSync(cur.calibDir, { recursive: true, force: true });
        // A video that could not be written (OpenCvError ERR_VIDEO_WRITE, e.g. a full disk): the
        // recording stopped there and its files are kept; mark it recorded with the error, then say so.
        if (e instanceof AppError && e.details.kind === 'ERR_VIDEO_WRITE') {
          room.recording = null;
          ws.finishLive(actor.orgId, cur.id, { stage: 'record', code: 'write_failed', message: e.message });
        }
        throw e;
      }
      room.recording = null;
      rmSync(cur.calibDir, { recursive: true, force: true });
      room.last = result;
      const failure = result.failure ? { stage: 'record', code: result.failure.state, message: `${result.failure.name}: ${result.failure.message}` } : null;
      const rec = ws.finishLive(actor.orgId, cur.id, failure);
      return {
        recording: rec,
        frames: result.frames,
        seconds: result.seconds,
        reason: result.reason,
        failure: result.failure,
        cameras: result.cameras.map((c) => ({ name: c.name, captured: c.captured, written: c.written, dropped: c.dropped, duplicated: c.duplicated })),
      };
    },
    'capture.tapFrame': (ctx, i) => {
      const { ws, actor } = run(ctx);
      const f = ws.tapFrame(actor.orgId, i.recording_id);
      return { camera: f.camera, jpeg_base64: f.jpeg.toString('base64'), width: f.width, height: f.height };
    },
    'capture.tap': (ctx, i) => {
      const { ws, actor } = run(ctx);
      return ws.setTap(actor.orgId, i.recording_id, { camera: i.camera, x: i.x, y: i.y });
    },
  };
}
