/**
 * Multi-camera capture (issue 15) on the same code path as cameras, with video files as sources:
 * the demo trial's four videos, and small synthetic videos whose frames carry their own index
 * (so the recorded videos can be checked frame by frame against their timestamp sidecars).
 * Device tests run where /dev/video* exists and say why they skip where it does not.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTomlCalibration } from '../calibration';
import { runCaptureCli, type CaptureIo } from '../cli';
import { CaptureInputError } from '../errors';
import { captureAddon, hasAddon, OpenCvError, openCvAddon, type RawImage } from '../native/index';
import { findVideos, frameRateFromConfig, probeVideos } from '../sources';
import { BALANCING, DEMO_CALIB, hasDemo, NO_DEMO } from '../testing/paths';
import { listCameras, openRig, parseSourceSpec, type DeviceFailure, type RecordingResult } from './rig';

const ci = process.env.CI === 'true';
const built = hasAddon('capture') && hasAddon('opencv');
const tmp = () => mkdtempSync(path.join(tmpdir(), 'capture-live-'));

/** A frame whose left half encodes i mod 16 and right half ⌊i/16⌋ mod 16 as grey levels (robust to MJPEG). */
function indexFrame(i: number, w: number, h: number): RawImage {
  const data = new Uint8Array(w * h * 3);
  const a = (i % 16) * 16 + 8,
    b = (Math.floor(i / 16) % 16) * 16 + 8;
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.fill(x < w / 2 ? a : b, (y * w + x) * 3, (y * w + x) * 3 + 3);
  return { data, width: w, height: h, channels: 3 };
}
/** Read the index back from the centre of each half. */
function frameIndexOf(f: RawImage): number {
  const px = (x: number) => f.data[(Math.floor(f.height / 2) * f.width + x) * 3]!;
  // Math.max: a level of 8 decoded as 5 must read 0, not −0
  const a = Math.max(0, Math.round((px(Math.floor(f.width / 4)) - 8) / 16)),
    b = Math.max(0, Math.round((px(Math.floor((3 * f.width) / 4)) - 8) / 16));
  return a + 16 * b;
}
function synthVideo(dir: string, name: string, frames: number, fps: number, w = 96, h = 64): string {
  const file = path.join(dir, `${name}.avi`);
  openCvAddon().writeVideo(
    file,
    'MJPG',
    fps,
    Array.from({ length: frames }, (_, i) => indexFrame(i, w, h)),
  );
  return file;
}
interface SidecarRow {
  frame: number;
  timestampUs: number;
  slotUs: number;
  sourceFrame: number;
  status: string;
}
function sidecar(file: string): SidecarRow[] {
  const [head, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  expect(head).toBe('frame,timestamp_us,slot_us,source_frame,status');
  return rows.map((r) => {
    const [frame, t, slot, src, status] = r.split(',');
    return { frame: Number(frame), timestampUs: Number(t), slotUs: Number(slot), sourceFrame: Number(src), status: status! };
  });
}
function decodeAll(file: string): RawImage[] {
  const r = new (openCvAddon().VideoReader)(file);
  const out: RawImage[] = [];
  for (let f = r.read(); f; f = r.read()) out.push(f);
  r.close();
  return out;
}
/** Every camera's video holds exactly its sidecar's rows, each frame the source frame the sidecar names (`loopFrames`: length of a looped source). */
function checkRecording(r: RecordingResult, loopFrames = Infinity): void {
  for (const c of r.cameras) {
    const rows = sidecar(c.timestamps);
    expect(rows.length, c.name).toBe(r.frames);
    expect(c.written, c.name).toBe(r.frames);
    rows.forEach((row, i) => expect(row.frame).toBe(i));
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i]!.slotUs, `${c.name} slot ${i}`).toBeGreaterThan(rows[i - 1]!.slotUs);
      // a written frame is never older than the previous one; a duplicate repeats it
      if (rows[i]!.status === 'captured') expect(rows[i]!.timestampUs, `${c.name} frame ${i}`).toBeGreaterThan(rows[i - 1]!.timestampUs);
      else expect(rows[i]!.timestampUs).toBe(rows[i - 1]!.timestampUs);
      // ±half a frame interval around the slot
      if (rows[i]!.status === 'captured') expect(Math.abs(rows[i]!.timestampUs - rows[i]!.slotUs)).toBeLessThanOrEqual(1e6 / r.fps / 2);
    }
    expect(rows.filter((x) => x.status === 'duplicated').length, c.name).toBe(c.duplicated);
    const frames = decodeAll(c.video);
    expect(frames.length, c.name).toBe(r.frames);
    frames.forEach((f, i) => expect(frameIndexOf(f), `${c.name} frame ${i}`).toBe((rows[i]!.sourceFrame % loopFrames) % 256));
  }
}

describe.skipIf(!built && !ci)(
  `capture rig from video files${built ? '' : ' (skipped: native capture addon not built; needs libopencv-dev and npm run build:native)'}`,
  () => {
    let dir: string;
    beforeAll(() => {
      dir = tmp();
    });

    it.skipIf(!hasDemo && !ci)(
      `records the demo trial's four videos into a trial folder the pipeline reads${hasDemo ? '' : ` (${NO_DEMO})`}`,
      async () => {
        const out = path.join(dir, 'demo-trial');
        const files = [1, 2, 3, 4].map((i) => path.join(BALANCING, 'videos', `cam0${i}.mp4`));
        const rig = await openRig(
          files.map((f) => ({ kind: 'file' as const, path: f, pace: 'fast' as const })),
          { record: { outDir: out, seconds: 0.5, calibrationPath: DEMO_CALIB, metadata: { test: 'balancing' } } },
        );
        expect(rig.sources.map((s) => [s.name, s.width, s.height, s.fps, s.backend])).toEqual([
          ['cam01', 1080, 1920, 60, 'FFMPEG'],
          ['cam02', 1080, 1920, 60, 'FFMPEG'],
          ['cam03', 1088, 1920, 60, 'FFMPEG'],
          ['cam04', 1088, 1920, 60, 'FFMPEG'],
        ]);
        expect(rig.fps).toBe(60);
        const r = await rig.recordingDone();
        await rig.close();
        expect(r.frames).toBe(30);
        expect(r.reason).toBe('stopped');
        expect(r.failure).toBeNull();
        for (const c of r.cameras) expect([c.name, c.written, c.dropped, c.duplicated]).toEqual([c.name, 30, 0, 0]);
        // H.264/VP9 sources: decoded, and every frame JPEG-encoded by the writer (no passthrough)
        expect(rig.sources.map((s) => s.passthrough)).toEqual([false, false, false, false]);
        for (const c of r.cameras) expect([c.passedThrough, c.encoded]).toEqual([0, 30]);
        for (const c of r.cameras) {
          const rows = sidecar(c.timestamps);
          expect(rows.map((x) => x.sourceFrame)).toEqual(Array.from({ length: 30 }, (_, i) => i));
          for (let i = 1; i < rows.length; i++) expect(rows[i]!.timestampUs).toBeGreaterThan(rows[i - 1]!.timestampUs);
        }
        // The pipeline's own reader accepts the folder: one video per calibrated camera, equal frame counts, sizes within tolerance.
        expect(frameRateFromConfig(out)).toBe(60);
        const cams = loadTomlCalibration(path.join(out, 'calibration', 'Calib_qualisys.toml'));
        const probed = probeVideos(cams, findVideos(out));
        expect(probed.map((v) => [v.camera, v.frames, v.width])).toEqual([
          ['cam_01', 30, 1080],
          ['cam_02', 30, 1080],
          ['cam_03', 30, 1088],
          ['cam_04', 30, 1088],
        ]);
        const config = parseToml(readFileSync(r.config, 'utf8')) as { capture: { camera: { name: string; written: number }[]; metadata: { test: string } } };
        expect(config.capture.camera.map((c) => c.written)).toEqual([30, 30, 30, 30]);
        expect(config.capture.metadata.test).toBe('balancing');
      },
      180_000,
    );

    it.skipIf(!hasDemo && !ci)(
      'the recording quality reaches the MJPEG writer: quality 20 writes much smaller files than 95, same frames',
      async () => {
        const file = path.join(BALANCING, 'videos', 'cam01.mp4');
        const sizes: number[] = [];
        for (const quality of [95, 20]) {
          const rig = await openRig([{ kind: 'file', path: file, pace: 'fast' }], { record: { outDir: path.join(dir, `q${quality}`), seconds: 0.1, quality } });
          const r = await rig.recordingDone();
          await rig.close();
          expect(r.cameras[0]!.written).toBe(6);
          sizes.push(statSync(r.cameras[0]!.video).size);
        }
        expect(sizes[1]!).toBeLessThan(0.6 * sizes[0]!);
      },
      60_000,
    );

    it('realtime sources: monotonic timestamps, frames grouped within ±half an interval, every written frame the one its sidecar names', async () => {
      const files = [0, 1, 2, 3].map((i) => synthVideo(dir, `rt${i}`, 60, 30));
      const out = path.join(dir, 'rt-trial');
      const rig = await openRig(
        files.map((f) => ({ kind: 'file' as const, path: f })),
        { record: { outDir: out, seconds: 1 } },
      );
      const r = await rig.recordingDone();
      await rig.close();
      expect(r.reason).toBe('stopped');
      expect(r.frames).toBe(30);
      checkRecording(r);
      // captured = the camera's own frames written; a slot the camera missed (a busy machine) is a
      // duplicate, so together they are every written frame.
      for (const c of r.cameras) expect(c.captured + c.duplicated, c.name).toBe(r.frames);
    }, 60_000);

    // A source over 8× faster than the timeline (a 240 fps phone clip next to a 25 fps webcam file)
    // puts more frames into one slot than its record queue holds (8); with --pace fast it waited for
    // room while the synchroniser waited for its frame past the slot: a deadlock (1000/30, 60/7).
    it.each([
      [1000, 30, 0.5],
      [60, 7, 1],
      [25, 7, 1],
    ])(
      '--pace fast, a %i fps source next to a %i fps one: finishes, each slot the fast source frame nearest its centre',
      async (hiFps, loFps, seconds) => {
        const slots = Math.round(seconds * loFps);
        const hi = synthVideo(dir, `hi${hiFps}`, Math.ceil((seconds + 0.2) * hiFps), hiFps, 32, 32);
        const lo = synthVideo(dir, `lo${loFps}`, Math.ceil((seconds + 0.2) * loFps) + 1, loFps, 32, 32);
        const out = path.join(dir, `ratio-${hiFps}-${loFps}`);
        const rig = await openRig(
          [hi, lo].map((f) => ({ kind: 'file' as const, path: f, pace: 'fast' as const })),
          { record: { outDir: out, seconds } },
        );
        let timer: NodeJS.Timeout | undefined;
        const hung = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`recording did not finish within 20 s (${hiFps} fps next to ${loFps} fps: deadlock)`)), 20_000);
        });
        const r = await Promise.race([rig.recordingDone(), hung]).finally(() => clearTimeout(timer));
        await rig.close();
        expect(rig.fps).toBe(loFps);
        expect(r.frames).toBe(slots);
        expect(r.reason).toBe('stopped');
        checkRecording(r);
        const [fast, slow] = r.cameras;
        // both sources start on the same media clock: slot k's centre is the fast source's frame k·hi/lo
        expect(sidecar(fast!.timestamps).map((x) => x.sourceFrame)).toEqual(Array.from({ length: slots }, (_, k) => Math.round((k * hiFps) / loFps)));
        expect(sidecar(slow!.timestamps).map((x) => x.sourceFrame)).toEqual(Array.from({ length: slots }, (_, k) => k));
        expect([fast!.duplicated, slow!.duplicated, slow!.dropped]).toEqual([0, 0, 0]);
        expect(fast!.dropped).toBeGreaterThanOrEqual(Math.floor(((slots - 1) * hiFps) / loFps) - (slots - 1));
      },
      60_000,
    );

    // At realtime pace (every camera) a slot is decided only once the slowest camera has a frame
    // past it; a 60 fps camera next to a 3 fps one queues up to 20 frames meanwhile. With the record
    // queue capped at 8 and its front evicted when full, the fast camera lost the frame kept for the
    // slot being decided, slot after slot, written as its own duplicates (issue 15, review B2): on a
    // 60 fps timeline 77 of 120 fast slots duplicated, on the default (3 fps) timeline 5 of 6.
    it.each([
      { fps: 60, timeline: 'a 60 fps timeline' },
      { fps: undefined, timeline: 'the default timeline (the slowest rate, 3 fps)' },
    ])(
      '--pace realtime, a 60 fps source next to a 3 fps one on $timeline: the slow camera carries the duplicates, the fast one (almost) none',
      async ({ fps }) => {
        const seconds = 2;
        const hi = synthVideo(dir, 'rt-hi60', Math.ceil((seconds + 1.5) * 60), 60, 32, 32);
        const lo = synthVideo(dir, 'rt-lo3', Math.ceil((seconds + 1.5) * 3) + 1, 3, 32, 32);
        const rig = await openRig(
          [hi, lo].map((f) => ({ kind: 'file' as const, path: f })),
          { ...(fps ? { fps } : {}), record: { outDir: path.join(dir, `rt-ratio-60-3-${fps ?? 'default'}`), seconds } },
        );
        const r = await rig.recordingDone();
        await rig.close();
        const timeline = fps ?? 3;
        expect([r.reason, r.frames, rig.fps]).toEqual(['stopped', seconds * timeline, timeline]);
        checkRecording(r);
        const [fast, slow] = r.cameras;
        // the fast camera's queue held every frame that arrived while a slot waited for the slow camera
        // (⌈2·333/16.7⌉ + 4 = 44 frames, a little more with the measured intervals' jitter), so none was
        // lost before the synchroniser saw it …
        expect(fast!.recordQueueFrames).toBeGreaterThanOrEqual(44);
        expect(fast!.recordQueueFrames).toBeLessThanOrEqual(50);
        expect(fast!.queueDropped).toBe(0);
        // … and it has a frame for (almost) every slot. Not exactly all: a realtime frame is stamped when
        // it is delivered, and on a loaded machine (2 shared cores here) a late one misses its ±½-interval
        // window — seen up to 28 of 120 (23 %), usually 0; before the fix 77 of 120 (64 %), every run.
        expect(fast!.duplicated, `fast camera duplicated ${fast!.duplicated} of ${r.frames}`).toBeLessThanOrEqual(Math.ceil(0.3 * r.frames));
        // the slow camera's own frames, every one written in order, with timeline/3 − 1 duplicates between
        expect([slow!.dropped, slow!.queueDropped, slow!.recordQueueFrames]).toEqual([0, 0, 8]);
        const captured = sidecar(slow!.timestamps).filter((x) => x.status === 'captured');
        expect(captured.map((x) => x.sourceFrame)).toEqual(Array.from({ length: captured.length }, (_, i) => captured[0]!.sourceFrame + i));
        expect(captured.length).toBeGreaterThanOrEqual(seconds * 3 - 1);
        expect(captured.length).toBeLessThanOrEqual(seconds * 3 + 1);
        expect(slow!.duplicated).toBe(r.frames - captured.length);
        if (!fps) expect(slow!.duplicated).toBe(0);
        for (let i = 1; i < captured.length; i++) {
          const gap = captured[i]!.frame - captured[i - 1]!.frame;
          expect(Math.abs(gap - timeline / 3), `slow camera: ${gap} slots between its frames ${i - 1} and ${i}`).toBeLessThanOrEqual(1);
        }
      },
      60_000,
    );

    it('--pace realtime, the record queue memory bound hit: frames past it dropped and counted, every written frame still the one its sidecar names', async () => {
      const seconds = 2;
      const hi = synthVideo(dir, 'rtb-hi60', Math.ceil((seconds + 1.5) * 60), 60, 32, 32);
      const lo = synthVideo(dir, 'rtb-lo3', Math.ceil((seconds + 1.5) * 3) + 1, 3, 32, 32);
      // decoded 32×32 BGR frames of 3072 bytes: 12 fit, where ~20 arrive while a slot waits for the 3 fps camera
      const rig = await openRig(
        [hi, lo].map((f) => ({ kind: 'file' as const, path: f, passthrough: false })),
        { fps: 60, recordQueueBytes: 12 * 32 * 32 * 3, record: { outDir: path.join(dir, 'rt-bound-60-3'), seconds } },
      );
      const r = await rig.recordingDone();
      await rig.close();
      expect([r.reason, r.frames]).toEqual(['stopped', seconds * 60]);
      checkRecording(r);
      const [fast, slow] = r.cameras;
      expect(fast!.dropped).toBeGreaterThan(10);
      // every one of them a frame the full queue lost (the slot surplus of a 60 fps source on a 60 fps timeline is none)
      expect(fast!.queueDropped).toBeGreaterThan(10);
      expect(fast!.queueDropped).toBeLessThanOrEqual(fast!.dropped);
      // every fast source frame up to the last written (the recording started before frame 0) is
      // written or counted dropped; a few more may be counted: frames for slots past the recording's
      // end, dropped while the last slots waited for the slow camera (≤ 20 slots per slow frame)
      const written = sidecar(fast!.timestamps).filter((x) => x.status === 'captured');
      const missing = written[written.length - 1]!.sourceFrame + 1 - written.length;
      expect(fast!.dropped).toBeGreaterThanOrEqual(missing);
      expect(fast!.dropped).toBeLessThanOrEqual(missing + 20);
      // the dropped frames' slots are the fast camera's duplicates (frames before the timeline's start drop without one)
      expect(fast!.duplicated).toBeGreaterThan(0);
      expect(fast!.duplicated).toBeLessThanOrEqual(fast!.dropped);
      expect(slow!.dropped).toBe(0);
    }, 60_000);

    it('a source that ends early (an unplugged camera) stops the recording cleanly, names it, and keeps what was written', async () => {
      const files = [synthVideo(dir, 'long0', 90, 30), synthVideo(dir, 'long1', 90, 30), synthVideo(dir, 'short', 20, 30)];
      const out = path.join(dir, 'early-trial');
      const rig = await openRig(
        files.map((f, i) => ({ kind: 'file' as const, path: f, name: ['front', 'side', 'oblique'][i] })),
        { record: { outDir: out, seconds: 10 } },
      );
      const failures: DeviceFailure[] = [];
      rig.on('device-failure', (f) => failures.push(f));
      const r = await rig.recordingDone();
      const stateAtEnd = rig.counts().map((c) => c.state);
      await rig.close();
      expect(r.reason).toBe('source_ended');
      expect(r.failure).toMatchObject({ camera: 2, name: 'oblique', state: 'ended', stoppedRecording: true });
      expect(r.failure!.message).toMatch(/end of file after 20 frames/);
      // up to 20 (its length); fewer when another camera's first frame came late (the timeline starts at the latest first frame)
      expect(r.frames).toBeGreaterThanOrEqual(10);
      expect(r.frames).toBeLessThanOrEqual(20);
      // the other cameras were still running when it stopped
      expect(stateAtEnd.slice(0, 2)).toEqual(['running', 'running']);
      expect(failures[0]).toMatchObject({ name: 'oblique', stoppedRecording: true });
      checkRecording(r);
      const config = parseToml(readFileSync(r.config, 'utf8')) as { capture: { failed_camera: string; reason: string } };
      expect(config.capture).toMatchObject({ failed_camera: 'oblique', reason: 'source_ended' });
    }, 60_000);

    it('the Capture page path: preview events, start/stop recording with progress, a second recording on the same rig', async () => {
      const files = [0, 1].map((i) => synthVideo(dir, `ui${i}`, 30, 30));
      const rig = await openRig(files.map((f) => ({ kind: 'file' as const, path: f, loop: true })));
      const previews: number[] = [];
      let progress = 0,
        finished = 0;
      rig.on('preview', (f) => previews.push(f.camera));
      rig.on('progress', () => progress++);
      rig.on('recording-finished', () => finished++);
      rig.startPreview({ fps: 20, maxWidth: 64 });
      await new Promise((res) => setTimeout(res, 300));
      rig.startRecording({ outDir: path.join(dir, 'ui-1'), metadata: { athlete: 'A1' } });
      expect(() => rig.startRecording({ outDir: path.join(dir, 'ui-x') })).toThrow(/a recording into .* is running/);
      await new Promise((res) => setTimeout(res, 1200));
      const r1 = await rig.stopRecording();
      expect(r1.reason).toBe('stopped');
      expect(r1.frames).toBeGreaterThan(10);
      checkRecording(r1, 30);
      expect(progress).toBeGreaterThan(0);
      expect(previews.filter((c) => c === 0).length).toBeGreaterThan(3);
      expect(previews.filter((c) => c === 1).length).toBeGreaterThan(3);
      rig.stopPreview();
      rig.startRecording({ outDir: path.join(dir, 'ui-2'), seconds: 0.5 });
      const r2 = await rig.recordingDone();
      expect([r2.reason, r2.frames]).toEqual(['stopped', 15]);
      checkRecording(r2, 30);
      expect(finished).toBe(2);
      await rig.close();
    }, 30_000);

    it('a slow consumer drops frames and counts them; capture neither blocks nor grows the ring', async () => {
      const file = synthVideo(dir, 'slow', 60, 30);
      const rig = await openRig([{ kind: 'file', path: file }], { ringFrames: 3 });
      let read = 0,
        lastIndex = -1;
      const t0 = Date.now();
      // read one frame every 150 ms while the source delivers one every 33 ms
      while (rig.counts()[0]!.state === 'running' && Date.now() - t0 < 10_000) {
        const f = rig.snapshot(0, 48);
        if (f) {
          read++;
          expect(f.frameIndex).toBeGreaterThan(lastIndex);
          lastIndex = f.frameIndex;
          expect(f.width).toBe(48);
          expect([f.jpeg[0], f.jpeg[1]]).toEqual([0xff, 0xd8]);
        }
        await new Promise((res) => setTimeout(res, 150));
      }
      const c = rig.counts()[0]!;
      expect(c.state).toBe('ended');
      expect(c.captured).toBe(60);
      expect(c.ringDropped).toBeGreaterThan(30);
      // conservation: every captured frame was read, dropped, or is still in the 3-frame ring
      const left = c.captured - read - c.ringDropped;
      expect(left).toBeGreaterThanOrEqual(0);
      expect(left).toBeLessThanOrEqual(3);
      await rig.close();
    }, 30_000);

    it.each([true, false])(
      'a one-frame recorder queue: whatever it drops or duplicates, it still writes equal-length, frame-accurate videos (passthrough %s)',
      async (passthrough) => {
        // recordQueueFrames 1 with 4 sources: the synchroniser cannot always take every frame in time.
        const files = [0, 1, 2, 3].map((i) => synthVideo(dir, `q${i}-${passthrough}`, 60, 60));
        const rig = await openRig(
          files.map((f) => ({ kind: 'file' as const, path: f, passthrough })),
          { recordQueueFrames: 1, record: { outDir: path.join(dir, `q-trial-${passthrough}`) } },
        );
        const r = await rig.recordingDone();
        await rig.close();
        checkRecording(r);
        for (const c of r.cameras) expect(passthrough ? c.passedThrough : c.encoded).toBe(r.frames);
        // every one of the source's 60 frames was either written (captured) or dropped, but for at most
        // the one still queued when the first source ended; written = captured + duplicated
        for (const c of r.cameras) {
          expect(c.captured + c.dropped, c.name).toBeGreaterThanOrEqual(59);
          expect(c.captured + c.dropped, c.name).toBeLessThanOrEqual(60);
          expect(c.captured + c.duplicated, c.name).toBe(c.written);
        }
      },
      60_000,
    );

    it('no leak over 10,000 frames (64×48 source looped, read and recorded)', async () => {
      const file = synthVideo(dir, 'tiny', 250, 100, 64, 48);
      const rig = await openRig([{ kind: 'file', path: file, pace: 'fast', loop: true }], { record: { outDir: path.join(dir, 'leak-trial'), seconds: 100 } });
      const rss: number[] = [];
      let frames = 0;
      while (frames < 10_000) {
        await new Promise((res) => setTimeout(res, 20));
        rig.snapshot(0, 32);
        frames = rig.counts()[0]!.captured;
        if (frames >= 2000 && rss.length === 0) rss.push(process.memoryUsage().rss);
      }
      const r = await rig.recordingDone();
      rss.push(process.memoryUsage().rss);
      await rig.close();
      expect(r.frames).toBe(10_000);
      expect(r.cameras[0]!.dropped).toBe(0); // fast sources apply back-pressure instead of dropping
      const growthMiB = (rss[1]! - rss[0]!) / 2 ** 20;
      expect(growthMiB).toBeLessThan(24);
      expect(sidecar(r.cameras[0]!.timestamps).length).toBe(10_000);
    }, 120_000);

    it('bad input: typed errors, nothing half-written', async () => {
      await expect(openRig([{ kind: 'file', path: path.join(dir, 'missing.mp4') }])).rejects.toMatchObject({
        name: 'CaptureInputError',
        kind: 'bad_argument',
        message: expect.stringMatching(/source ".*missing\.mp4" \(cam01\) is neither a camera .* nor an existing video file/),
      });
      await expect(openRig([])).rejects.toBeInstanceOf(CaptureInputError);
      const f = synthVideo(dir, 'bad', 10, 30);
      await expect(openRig([{ kind: 'file', path: f, name: 'a/b' }])).rejects.toMatchObject({ kind: 'bad_argument' });
      await expect(
        openRig([
          { kind: 'file', path: f, name: 'x' },
          { kind: 'file', path: f, name: 'x' },
        ]),
      ).rejects.toMatchObject({ kind: 'bad_argument' });
      const full = path.join(dir, 'not-empty');
      await openRig([{ kind: 'file', path: f }], { record: { outDir: path.join(full, 'x') } }).then((r) => r.close());
      await expect(openRig([{ kind: 'file', path: f }], { record: { outDir: full } })).rejects.toMatchObject({
        kind: 'bad_argument',
        message: expect.stringMatching(/not an empty folder/),
      });
      const rig = await openRig([{ kind: 'file', path: f }]);
      expect(() => rig.snapshot(5)).toThrow(RangeError);
      await rig.close();
      await rig.close(); // idempotent
      expect(() => rig.snapshot(0)).toThrow(OpenCvError);
      try {
        rig.snapshot(0);
      } catch (e) {
        expect((e as OpenCvError).kind).toBe('ERR_CAPTURE_STATE');
      }
      expect(() => parseSourceSpec(path.join(dir, 'nope.avi'))).toThrow(/neither a camera/);
      expect(parseSourceSpec('2')).toEqual({ kind: 'device', device: 2 });
      expect(parseSourceSpec('/dev/video3')).toEqual({ kind: 'device', device: '/dev/video3' });
    }, 30_000);

    describe('npm run capture -- devices / record', () => {
      function io(): CaptureIo & { stdout: string; stderr: string } {
        const o = { stdout: '', stderr: '', isTTY: false, out: (t: string) => void (o.stdout += t), err: (t: string) => void (o.stderr += t) };
        return o;
      }
      it('devices lists what is attached; an empty list is not an error', async () => {
        const i = io();
        expect(await runCaptureCli(['devices', '--json'], i)).toBe(0);
        expect(JSON.parse(i.stdout)).toEqual(listCameras());
        if (!existsSync('/dev') || !readdirSync('/dev').some((d) => /^video\d+$/.test(d))) expect(JSON.parse(i.stdout)).toEqual([]);
      });
      it('record prints frames, drops and duplicates per camera; bad arguments exit 2', async () => {
        const files = [0, 1].map((k) => synthVideo(dir, `cli${k}`, 40, 30));
        const out = path.join(dir, 'cli-trial');
        const i = io();
        expect(await runCaptureCli(['record', '--source', files.join(','), '--seconds', '0.5', '--out', out], i)).toBe(0);
        expect(i.stdout).toMatch(/^15 synchronised frames per camera at 30 fps/);
        expect(i.stdout).toMatch(/camera\s+state\s+captured\s+written\s+dropped\s+duplicated/);
        expect(i.stdout).toMatch(/cam01\s+\w+\s+\d+\s+15\s+\d+\s+\d+/);
        expect(i.stderr).toMatch(/cam02: file .*cli1\.avi → 96×64 @ 30 fps MJPG \(FFMPEG; MJPEG passthrough\)/);
        expect(readdirSync(path.join(out, 'videos')).sort()).toEqual(['cam01.avi', 'cam01.timestamps.csv', 'cam02.avi', 'cam02.timestamps.csv']);
        const enc = io();
        expect(
          await runCaptureCli(['record', '--source', files[0]!, '--seconds', '0.2', '--out', path.join(dir, 'cli-enc'), '--no-passthrough', '--json'], enc),
        ).toBe(0);
        expect(enc.stderr).toMatch(/cam01: file .*cli0\.avi → 96×64 @ 30 fps MJPG \(FFMPEG; decode \+ encode\)/);
        expect((JSON.parse(enc.stdout) as RecordingResult).cameras[0]).toMatchObject({ written: 6, passedThrough: 0, encoded: 6, passthrough: false });
        const bad = io();
        expect(await runCaptureCli(['record', '--source', files[0]!, '--out', path.join(dir, 'x')], bad)).toBe(2);
        expect(bad.stderr).toMatch(/--seconds N is required/);
        expect(await runCaptureCli(['record', '--source', 'nope.mp4', '--seconds', '1', '--out', path.join(dir, 'y')], bad)).toBe(2);
        expect(await runCaptureCli(['record', '--source', files[0]!, '--seconds', '1', '--out', out], bad)).toBe(2);
        expect(bad.stderr).toMatch(/not an empty folder/);
      }, 30_000);
    });

    it('opens the sources off the calling thread: a deferred session has nothing open until openAsync() settles', async () => {
      const v = synthVideo(dir, 'defer', 10, 10);
      const { CaptureSession } = captureAddon();
      const s = new CaptureSession([{ kind: 'file', path: v, name: 'a' }], { deferOpen: true });
      expect(s.sources()[0]!.width).toBe(0); // not opened yet
      const opening = s.openAsync();
      expect(() => s.close()).toThrow(/still opening/);
      await opening;
      expect(s.sources()[0]).toMatchObject({ width: 96, height: 64, backend: 'FFMPEG' });
      await expect(s.openAsync()).rejects.toMatchObject({ kind: 'ERR_CAPTURE_STATE' });
      s.close();
      // A source that cannot be opened rejects, named, and the others are released.
      const bad = new CaptureSession(
        [
          { kind: 'file', path: v, name: 'a' },
          { kind: 'file', path: path.join(dir, 'missing.mp4'), name: 'b' },
        ],
        { deferOpen: true },
      );
      const e = await bad.openAsync().then(
        () => null,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(OpenCvError);
      expect((e as OpenCvError).message).toMatch(/cannot open video .*missing\.mp4/);
      bad.close();
      // openRig goes through the same path; a file FFmpeg cannot open is a typed input error naming the source.
      const junk = path.join(dir, 'junk.mp4');
      writeFileSync(junk, 'not a video'.repeat(10));
      await expect(openRig([{ kind: 'file', path: junk }])).rejects.toMatchObject({
        name: 'CaptureInputError',
        kind: 'unreadable_video',
        message: expect.stringMatching(/source ".*junk\.mp4" \(cam01\) cannot be opened as a video/),
      });
    });

    afterAll(() => {
      writeFileSync(path.join(dir, 'done'), '');
    });
  },
);

const videoNodes = existsSync('/dev') ? readdirSync('/dev').filter((d) => /^video\d+$/.test(d)) : [];
describe.skipIf(!built || videoNodes.length === 0)(
  `capture from attached cameras${videoNodes.length ? '' : ' (skipped: no /dev/video* on this machine, so no camera to open)'}`,
  () => {
    it('lists the cameras with their modes and records one second from the first', async () => {
      const cams = listCameras();
      expect(cams.length).toBeGreaterThan(0);
      const cam = cams[0]!;
      expect(cam.backend).toBe('V4L2');
      expect(cam.modes.length).toBeGreaterThan(0);
      const rig = await openRig([{ kind: 'device', device: cam.path ?? cam.index }], { record: { outDir: path.join(tmp(), 'dev'), seconds: 1 } });
      expect(rig.sources[0]!.width).toBeGreaterThan(0);
      const r = await rig.recordingDone();
      await rig.close();
      expect(r.frames).toBeGreaterThan(0);
      checkRecording(r);
    }, 30_000);
  },
);
