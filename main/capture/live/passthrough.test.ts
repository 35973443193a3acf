/**
 * MJPEG passthrough (issue 15): a source that delivers MJPEG is recorded with its own JPEG frames,
 * byte for byte, not decoded and re-encoded. Tested with MJPEG .avi files made from the demo
 * trial's four videos (in a temp folder; FFmpeg's raw packet mode is the file counterpart of a
 * V4L2 camera's MJPG buffers with CAP_PROP_CONVERT_RGB off). Also: non-MJPEG sources keep the
 * encode path, `passthrough: false` re-encodes, the preview of a passthrough source, and a file
 * that cannot be written (a full disk: /dev/full) stops the recording with a typed error while
 * every other camera's files are kept.
 */
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { loadTomlCalibration } from '../calibration';
import { captureAddon, hasAddon, OpenCvError, openCvAddon, type RawImage } from '../native/index';
import { findVideos, frameRateFromConfig, probeVideos } from '../sources';
import { BALANCING, DEMO_CALIB, hasDemo, NO_DEMO } from '../testing/paths';
import { openRig } from './rig';

const ci = process.env.CI === 'true';
const built = hasAddon('capture') && hasAddon('opencv');
const FRAMES = 20;
const FPS = 60;

function decodeAll(file: string): RawImage[] {
  const r = new (openCvAddon().VideoReader)(file);
  const out: RawImage[] = [];
  for (let f = r.read(); f; f = r.read()) out.push(f);
  r.close();
  return out;
}

function sidecar(file: string) {
  const [head, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  expect(head).toBe('frame,timestamp_us,slot_us,source_frame,status');
  return rows.map((r) => {
    const [frame, t, slot, src, status] = r.split(',');
    return { frame: Number(frame), timestampUs: Number(t), slotUs: Number(slot), sourceFrame: Number(src), status: status! };
  });
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe.skipIf((!built || !hasDemo) && !ci)(
  `MJPEG passthrough recording${built ? '' : ' (skipped: native capture addon not built; needs libopencv-dev and npm run build:native)'}${hasDemo ? '' : ` (${NO_DEMO})`}`,
  () => {
    let dir: string;
    let mjpeg: string[];
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'capture-passthrough-'));
      const cv = openCvAddon();
      // The first FRAMES frames of each demo video (1080/1088×1920), as an MJPEG .avi (OpenCV's writer).
      mjpeg = [1, 2, 3, 4].map((i) => {
        const r = new cv.VideoReader(path.join(BALANCING, 'videos', `cam0${i}.mp4`));
        const frames: RawImage[] = [];
        for (let k = 0; k < FRAMES; k++) frames.push(r.read()!);
        r.close();
        const out = path.join(dir, `src-cam0${i}.avi`);
        cv.writeVideo(out, 'MJPG', FPS, frames);
        return out;
      });
    }, 120_000);
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('records 4 MJPEG sources with their own JPEG frames, byte for byte, in a trial folder the pipeline reads', async () => {
      const out = path.join(dir, 'trial');
      const rig = await openRig(
        mjpeg.map((f) => ({ kind: 'file' as const, path: f, pace: 'fast' as const })),
        { record: { outDir: out, seconds: FRAMES / FPS, calibrationPath: DEMO_CALIB } },
      );
      expect(rig.sources.map((s) => [s.pixelFormat, s.passthrough])).toEqual(Array(4).fill(['MJPG', true]));
      const r = await rig.recordingDone();
      await rig.close();
      expect(r.reason).toBe('stopped');
      expect(r.frames).toBe(FRAMES);
      const src = captureAddon();
      r.cameras.forEach((c, i) => {
        expect([c.written, c.passedThrough, c.encoded, c.dropped, c.duplicated], c.name).toEqual([FRAMES, FRAMES, 0, 0, 0]);
        // sidecar: one row per frame, source frame k in row k, timestamps 1/fps apart (pace fast = media clock)
        const rows = sidecar(c.timestamps);
        expect(rows.map((x) => [x.frame, x.sourceFrame, x.status])).toEqual(Array.from({ length: FRAMES }, (_, k) => [k, k, 'captured']));
        for (let k = 1; k < FRAMES; k++) expect(Math.abs(rows[k]!.timestampUs - rows[k - 1]!.timestampUs - 1e6 / FPS)).toBeLessThanOrEqual(1);
        // the recorded frames are the source's JPEGs, byte for byte
        const recorded = src.readPackets(c.video);
        const source = src.readPackets(mjpeg[i]!);
        expect(recorded.length, c.name).toBe(FRAMES);
        recorded.forEach((p, k) => expect(sameBytes(p, source[rows[k]!.sourceFrame]!), `${c.name} frame ${k}`).toBe(true));
      });
      // and OpenCV's reader decodes them to the source's pixels (one camera is enough: same bytes)
      const a = decodeAll(r.cameras[0]!.video),
        b = decodeAll(mjpeg[0]!);
      expect(a.length).toBe(FRAMES);
      a.forEach((f, k) => expect(sameBytes(f.data, b[k]!.data), `frame ${k}`).toBe(true));
      // the pipeline reads the folder unchanged
      expect(frameRateFromConfig(out)).toBe(FPS);
      const probed = probeVideos(loadTomlCalibration(path.join(out, 'calibration', 'Calib_qualisys.toml')), findVideos(out));
      expect(probed.map((v) => [v.camera, v.frames, v.width, v.height])).toEqual([
        ['cam_01', FRAMES, 1080, 1920],
        ['cam_02', FRAMES, 1080, 1920],
        ['cam_03', FRAMES, 1088, 1920],
        ['cam_04', FRAMES, 1088, 1920],
      ]);
      const config = parseToml(readFileSync(r.config, 'utf8')) as { capture: { camera: { recording: string; passed_through: number }[] } };
      expect(config.capture.camera.map((c) => [c.recording, c.passed_through])).toEqual(Array(4).fill(['passthrough', FRAMES]));
    }, 120_000);

    it('non-MJPEG sources and passthrough: false keep the encode path', async () => {
      const out = path.join(dir, 'encoded');
      const rig = await openRig(
        [
          { kind: 'file', path: mjpeg[0]!, pace: 'fast', passthrough: false },
          { kind: 'file', path: path.join(BALANCING, 'videos', 'cam02.mp4'), pace: 'fast' },
        ],
        { record: { outDir: out, seconds: 5 / FPS } },
      );
      expect(rig.sources.map((s) => s.passthrough)).toEqual([false, false]);
      const r = await rig.recordingDone();
      await rig.close();
      expect(r.cameras.map((c) => [c.written, c.passedThrough, c.encoded])).toEqual([
        [5, 0, 5],
        [5, 0, 5],
      ]);
      // re-encoded: not the source's bytes, but a readable MJPEG video of the source's size
      const rec = captureAddon().readPackets(r.cameras[0]!.video);
      const srcp = captureAddon().readPackets(mjpeg[0]!, 5);
      expect(rec.length).toBe(5);
      expect(rec.some((p, k) => !sameBytes(p, srcp[k]!))).toBe(true);
      expect(decodeAll(r.cameras[1]!.video).map((f) => [f.width, f.height])).toEqual(Array(5).fill([1080, 1920]));
      const config = parseToml(readFileSync(r.config, 'utf8')) as { capture: { camera: { recording: string }[] } };
      expect(config.capture.camera.map((c) => c.recording)).toEqual(['encoded', 'encoded']);
    }, 120_000);

    it('the preview of a passthrough source: the camera JPEG itself at full size, decoded and downscaled when smaller', async () => {
      const rig = await openRig([{ kind: 'file', path: mjpeg[0]!, pace: 'fast', loop: true }], { ringFrames: 1 });
      let full = null;
      for (let t = 0; t < 200 && !full; t++) {
        full = rig.snapshot(0, 4000);
        if (!full) await new Promise((res) => setTimeout(res, 5));
      }
      expect(full).not.toBeNull();
      const source = captureAddon().readPackets(mjpeg[0]!);
      expect([full!.width, full!.height]).toEqual([1080, 1920]);
      expect(sameBytes(full!.jpeg, source[full!.frameIndex % FRAMES]!)).toBe(true);
      let small = null;
      for (let t = 0; t < 200 && !small; t++) {
        small = rig.snapshot(0, 240);
        if (!small) await new Promise((res) => setTimeout(res, 5));
      }
      expect([small!.width, small!.height]).toEqual([240, 427]);
      const img = openCvAddon().decodeImage(small!.jpeg);
      expect([img.width, img.height]).toEqual([240, 427]);
      await rig.close();
    }, 60_000);

    it('a file that cannot be written (a full disk) stops the recording with ERR_VIDEO_WRITE, naming it; the other cameras keep their files', async () => {
      // Native session: cam01.avi is a link to /dev/full (every write fails with ENOSPC once the buffer flushes).
      const vdir = path.join(dir, 'full', 'videos');
      mkdirSync(vdir, { recursive: true });
      if (!existsSync('/dev/full')) throw new Error('/dev/full is missing on this machine');
      symlinkSync('/dev/full', path.join(vdir, 'cam01.avi'));
      const s = new (captureAddon().CaptureSession)(
        mjpeg.slice(0, 2).map((f, i) => ({ kind: 'file' as const, path: f, pace: 'fast' as const, name: `cam0${i + 1}` })),
        { record: { dir: vdir } },
      );
      let st = s.recording();
      for (let t = 0; t < 1000 && st.state !== 'finished'; t++) {
        await new Promise((res) => setTimeout(res, 10));
        st = s.recording();
      }
      s.close();
      expect(st.reason).toBe('write_failed');
      expect(st.failedCamera).toBe(0);
      expect(st.error).toMatch(/cam01\.avi: .*No space left on device/);
      // the other camera's video is complete up to where the recording stopped
      const ok = st.cameras[1]!;
      expect(ok.written).toBe(st.frames);
      expect(captureAddon().readPackets(ok.video).length).toBe(ok.written);
      expect(sidecar(ok.timestamps).length).toBe(ok.written);
    }, 60_000);

    it('a sidecar that cannot be written (a full disk) stops the recording with ERR_VIDEO_WRITE, naming it; the other camera keeps its files', async () => {
      // cam01's .avi is fine, its timestamps CSV is a link to /dev/full: the per-row flush fails.
      const vdir = path.join(dir, 'fullcsv', 'videos');
      mkdirSync(vdir, { recursive: true });
      symlinkSync('/dev/full', path.join(vdir, 'cam01.timestamps.csv'));
      const s = new (captureAddon().CaptureSession)(
        mjpeg.slice(0, 2).map((f, i) => ({ kind: 'file' as const, path: f, pace: 'fast' as const, name: `cam0${i + 1}` })),
        { record: { dir: vdir } },
      );
      let st = s.recording();
      for (let t = 0; t < 1000 && st.state !== 'finished'; t++) {
        await new Promise((res) => setTimeout(res, 10));
        st = s.recording();
      }
      s.close();
      expect(st.reason).toBe('write_failed');
      expect(st.failedCamera).toBe(0);
      expect(st.error).toMatch(/cam01\.timestamps\.csv: cannot write the sidecar/);
      const ok = st.cameras[1]!;
      expect(ok.written).toBe(st.frames);
      expect(captureAddon().readPackets(ok.video).length).toBe(ok.written);
      expect(sidecar(ok.timestamps).length).toBe(ok.written);
    }, 60_000);

    // A real full disk: a small tmpfs (needs root / CAP_SYS_ADMIN to mount). Skipped, saying why, where
    // mounting is not permitted (also in CI: a container may lack the capability); the /dev/full cases
    // above cover the same write errors without privileges.
    const canMount = (() => {
      if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
      const probe = mkdtempSync(path.join(tmpdir(), 'capture-mount-probe-'));
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
        execFileSync('umount', [probe], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      } finally {
        rmSync(probe, { recursive: true, force: true });
      }
    })();
    it.skipIf(!canMount)(
      `a disk that fills up during a 4-camera recording: typed ERR_VIDEO_WRITE (write_failed), sidecar rows kept for the frames written${canMount ? '' : ' (skipped: cannot mount a tmpfs here; needs root)'}`,
      async () => {
        const mnt = mkdtempSync(path.join(tmpdir(), 'capture-diskfull-'));
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', mnt]);
        try {
          const out = path.join(mnt, 'trial');
          const rig = await openRig(
            mjpeg.map((f) => ({ kind: 'file' as const, path: f, pace: 'fast' as const })),
            { record: { outDir: out, seconds: FRAMES / FPS, calibrationPath: DEMO_CALIB } },
          );
          let err: unknown;
          try {
            await rig.recordingDone();
          } catch (e) {
            err = e;
          }
          await rig.close();
          expect(err).toBeInstanceOf(OpenCvError);
          expect((err as OpenCvError).kind).toBe('ERR_VIDEO_WRITE');
          expect((err as OpenCvError).code).toBe('Unavailable');
          const msg = (err as OpenCvError).message;
          expect(msg).toMatch(/No space left on device|ENOSPC/);
          // the error names the camera's file; the final Config.toml is written into the space held
          // since the start (.capture-reserve, released first) and says what happened
          expect(msg).toMatch(/^recording stopped: .*cam0\d\.(avi|timestamps\.csv)/);
          const cfg = path.join(out, 'Config.toml');
          expect(frameRateFromConfig(out)).toBe(FPS);
          const doc = parseToml(readFileSync(cfg, 'utf8')) as {
            capture: { reason: string; write_error: string; failed_camera: string; frames: number; calibration: string };
          };
          expect(doc.capture.reason).toBe('write_failed');
          expect(doc.capture.write_error).toMatch(/No space left on device/);
          expect(msg).toContain(doc.capture.failed_camera);
          expect(existsSync(path.join(out, '.capture-reserve'))).toBe(false);
          // the calibration was copied when the recording started, while there was room
          expect(readFileSync(path.join(out, doc.capture.calibration), 'utf8')).toBe(readFileSync(DEMO_CALIB, 'utf8'));
          // every sidecar keeps its header and consecutive rows; the disk filled after some frames were written
          const rows = [1, 2, 3, 4].map((i) => sidecar(path.join(out, 'videos', `cam0${i}.timestamps.csv`)));
          rows.forEach((r) => expect(r.map((x) => x.frame)).toEqual(r.map((_, k) => k)));
          expect(rows.some((r) => r.length > 0)).toBe(true);
          expect(Math.max(...rows.map((r) => r.length))).toBeLessThan(FRAMES);
          // Config.toml's frames = what every camera's writer confirmed; each video plays at least its sidecar's frames
          expect(doc.capture.frames).toBe(Math.min(...rows.map((r) => r.length)));
          rows.forEach((r, i) => expect(decodeAll(path.join(out, 'videos', `cam0${i + 1}.avi`)).length).toBeGreaterThanOrEqual(r.length));
        } finally {
          execFileSync('umount', [mnt]);
          rmSync(mnt, { recursive: true, force: true });
        }
      },
      60_000,
    );

    it('a recording folder that cannot be created is a typed ERR_VIDEO_WRITE error', () => {
      let err: unknown;
      try {
        new (captureAddon().CaptureSession)([{ kind: 'file', path: mjpeg[0]!, pace: 'fast', name: 'cam01' }], {
          record: { dir: path.join(dir, 'no', 'such', 'folder') },
        });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(OpenCvError);
      expect((err as OpenCvError).kind).toBe('ERR_VIDEO_WRITE');
      expect((err as OpenCvError).message).toMatch(/no\/such\/folder\/cam01\.avi: cannot open for writing/);
    });
  },
);
