/**
 * `npm run capture:bench:live [-- --seconds S] [--writer-only] [--passthrough]` — multi-camera capture throughput (issue 15), for BENCHMARKS.md.
 *
 * 1. Frames/s captured per camera and in total with 4 file sources at 720p and 1080p (portrait
 *    720×1280 and 1080×1920, MPEG-4 Part 2 re-encodes of the demo trial's frames so both sizes
 *    share a codec; plus the demo's own H.264/VP9 files), decoded as fast as they go (`pace: fast`,
 *    looped), live only and while recording (MJPEG + sidecars).
 * 2. Drop rate under a slow consumer: 4 sources at their real 60 fps, the consumer reads each
 *    camera every 100 ms (10 Hz): dropped / captured from the bounded rings.
 * 3. Real-time recording at 60 fps: the synchroniser's dropped and duplicated frames per camera.
 * `--writer-only`: only the recording writer's cost by MJPEG quality (90 default, 75, 50) on the
 * 4 × 1080p sources, against live capture without a writer: CPU per written frame and KB per frame.
 * `--passthrough`: recording throughput, MJPEG passthrough vs decode + re-encode, 4 MJPEG .avi file
 * sources (the demo frames resized to 720p / 1080p portrait, OpenCV's MJPEG writer) recorded as fast
 * as they go: written frames/s per camera and in total, CPU per written frame, KB per frame.
 * (Files stand in for USB cameras, which deliver MJPEG the same way through V4L2; no camera here.)
 * Prints a Markdown table; the demo data must be present (shared/data/pose2sim-demo).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openCvAddon } from '../native/index';
import { BALANCING, hasDemo, NO_DEMO } from '../testing/paths';
import { openRig, type CaptureSourceSpec } from './rig';

const { values } = parseArgs({ options: { seconds: { type: 'string' }, 'writer-only': { type: 'boolean' }, passthrough: { type: 'boolean' } } });
const SECONDS = Number(values.seconds ?? 4);
if (!hasDemo) {
  console.error(NO_DEMO);
  process.exit(2);
}
const dir = mkdtempSync(path.join(os.tmpdir(), 'capture-bench-'));
const cv = openCvAddon();
const demo = [1, 2, 3, 4].map((i) => path.join(BALANCING, 'videos', `cam0${i}.mp4`));

/** 60 frames of each demo video resized to w×h, written as MPEG-4 Part 2 (`mp4v`, .mp4) or MJPEG (`MJPG`, .avi). */
function resized(w: number, h: number, fourcc: 'mp4v' | 'MJPG' = 'mp4v'): string[] {
  return demo.map((f, i) => {
    const r = new cv.VideoReader(f);
    const frames = [];
    for (let k = 0; k < 60; k++) {
      const fr = r.read();
      if (!fr) break;
      frames.push(cv.cropResize(fr, 0, 0, fr.width - 1, fr.height - 1, w, h));
    }
    r.close();
    const out = path.join(dir, `${w}x${h}-cam0${i + 1}.${fourcc === 'MJPG' ? 'avi' : 'mp4'}`);
    cv.writeVideo(out, fourcc, 60, frames);
    return out;
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function throughput(label: string, files: string[], record: boolean, quality?: number, passthrough = true) {
  const specs: CaptureSourceSpec[] = files.map((f) => ({ kind: 'file', path: f, pace: 'fast', loop: true, passthrough }));
  const out = path.join(dir, `rec-${label}-${record}-${quality ?? ''}-${passthrough}`.replace(/[^a-z0-9-]/gi, '_'));
  const rig = await openRig(specs, record ? { record: { outDir: out, ...(quality ? { quality } : {}) } } : {});
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const c0 = rig.counts().map((c) => c.captured);
  await sleep(SECONDS * 1000);
  const dt = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const c1 = record ? rig.counts().map((c) => c.written) : rig.counts().map((c) => c.captured);
  const per = c1.map((n, i) => (n - (record ? 0 : c0[i]!)) / dt);
  const frames = per.reduce((a, b) => a + b, 0) * dt;
  // CPU time of the whole process per frame (all threads): a load-independent cost figure
  const cpuMs = (cpu.user + cpu.system) / 1000 / Math.max(frames, 1);
  await rig.close();
  // recorded bytes per written frame (videos only)
  const vdir = path.join(out, 'videos');
  const bytes =
    record && existsSync(vdir)
      ? readdirSync(vdir)
          .filter((f) => f.endsWith('.avi'))
          .reduce((a, f) => a + statSync(path.join(vdir, f)).size, 0)
      : 0;
  rmSync(out, { recursive: true, force: true });
  const s = rig.sources[0]!;
  const mode = record ? `live + recording (${s.passthrough ? 'MJPEG passthrough' : `decode + JPEG encode${quality ? ` q${quality}` : ''}`})` : 'live only';
  return {
    row: `| ${label} | ${s.width}×${s.height} | ${mode} | ${per.map((p) => p.toFixed(1)).join(' / ')} | ${per.reduce((a, b) => a + b, 0).toFixed(1)} | ${cpuMs.toFixed(1)} |`,
    cpuMs,
    kbPerFrame: frames > 0 ? bytes / 1024 / frames : NaN,
    fps: per.reduce((a, b) => a + b, 0),
    per,
  };
}

/** Recording throughput, passthrough vs decode + re-encode, 4 MJPEG file sources at 720p and 1080p. */
async function passthroughVsEncode() {
  console.log(
    '\n| 4 MJPEG .avi sources (pace fast) | recording | written frames/s per camera | total written frames/s | CPU ms per written frame (whole process) | KB per frame |\n|---|---|---|---|---|---|',
  );
  for (const [label, w, h] of [
    ['720p', 720, 1280],
    ['1080p', 1080, 1920],
  ] as const) {
    const files = resized(w, h, 'MJPG');
    for (const passthrough of [false, true]) {
      const r = await throughput(`4 × ${label} MJPEG`, files, true, undefined, passthrough);
      console.log(
        `| 4 × ${label} (${w}×${h}) | ${passthrough ? 'MJPEG passthrough' : 'decode + JPEG encode (q90)'} | ${r.per.map((p) => p.toFixed(1)).join(' / ')} | ${r.fps.toFixed(1)} | ${r.cpuMs.toFixed(1)} | ${r.kbPerFrame.toFixed(0)} |`,
      );
    }
  }
  // As cameras deliver: each file released at its 60 fps on the rig clock; what a slow writer costs.
  console.log('\n| real-time recording, 4 MJPEG sources at 60 fps | frames | dropped/duplicated per camera | duplicated share |\n|---|---|---|---|');
  for (const [label, w, h] of [
    ['720p', 720, 1280],
    ['1080p', 1080, 1920],
  ] as const) {
    const files = resized(w, h, 'MJPG');
    for (const passthrough of [false, true])
      console.log(await realtimeRecording(`4 × ${label}, ${passthrough ? 'passthrough' : 'decode + encode'}`, files, passthrough));
  }
}

/** The recording writer's cost by MJPEG quality: 4 × 1080p file sources recorded as fast as they go. */
async function writerCost(files: string[]) {
  console.log('\n| 4 × 1080p recorded (pace fast) | total frames/s written | CPU ms per written frame (whole process) | KB per frame |\n|---|---|---|---|');
  const live = await throughput('4 × 1080p mp4v', files, false);
  console.log(`| live only (decode, no writer) | ${live.fps.toFixed(1)} captured | ${live.cpuMs.toFixed(1)} | – |`);
  for (const q of [90, 75, 50]) {
    const r = await throughput('4 × 1080p mp4v', files, true, q);
    console.log(`| JPEG encode quality ${q}${q === 90 ? ' (default)' : ''} | ${r.fps.toFixed(1)} | ${r.cpuMs.toFixed(1)} | ${r.kbPerFrame.toFixed(0)} |`);
  }
}

async function slowConsumer(label: string, files: string[]) {
  const rig = await openRig(
    files.map((f) => ({ kind: 'file' as const, path: f, loop: true })),
    { ringFrames: 4 },
  );
  const t0 = performance.now();
  let read = 0;
  while (performance.now() - t0 < SECONDS * 1000) {
    for (let c = 0; c < rig.sources.length; c++) if (rig.snapshot(c, 320)) read++;
    await sleep(100);
  }
  const counts = rig.counts();
  await rig.close();
  const captured = counts.reduce((a, c) => a + c.captured, 0),
    dropped = counts.reduce((a, c) => a + c.ringDropped, 0);
  return `| ${label} | ${counts.map((c) => c.measuredFps.toFixed(1)).join(' / ')} | ${captured} | ${read} | ${dropped} | ${((100 * dropped) / captured).toFixed(1)} % |`;
}

async function realtimeRecording(label: string, files: string[], passthrough = true) {
  const out = path.join(dir, `rt-${label}-${passthrough}`.replace(/[^a-z0-9-]/gi, '_'));
  const rig = await openRig(
    files.map((f) => ({ kind: 'file' as const, path: f, loop: true, passthrough })),
    { record: { outDir: out, seconds: SECONDS } },
  );
  const r = await rig.recordingDone();
  await rig.close();
  rmSync(out, { recursive: true, force: true });
  return `| ${label} | ${r.frames} | ${r.cameras.map((c) => `${c.dropped}/${c.duplicated}`).join(' · ')} | ${((100 * r.cameras.reduce((a, c) => a + c.duplicated, 0)) / (r.frames * r.cameras.length)).toFixed(1)} % |`;
}

if (values['writer-only'] || values.passthrough) {
  console.log(
    `machine: ${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}, load average ${os.loadavg()[0]!.toFixed(1)}; ${new Date().toISOString()}; OpenCV ${cv.version}; ${SECONDS} s per run`,
  );
  if (values['writer-only']) await writerCost(resized(1080, 1920));
  if (values.passthrough) await passthroughVsEncode();
  console.log(`load average at the end ${os.loadavg()[0]!.toFixed(1)}`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
const p720 = resized(720, 1280),
  p1080 = resized(1080, 1920);
const rows: string[] = [];
console.log(
  `machine: ${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}, load average ${os.loadavg()[0]!.toFixed(1)}; ${new Date().toISOString()}; OpenCV ${cv.version}; ${SECONDS} s per run\n`,
);
console.log('| sources | size | mode | frames/s per camera | total frames/s | CPU ms per frame |\n|---|---|---|---|---|---|');
for (const [label, files] of [
  ['4 × 720p mp4v', p720],
  ['4 × 1080p mp4v', p1080],
  ['demo 4 × 1080p (H.264, VP9, H.264, H.264)', demo],
] as const)
  for (const record of [false, true]) {
    const { row } = await throughput(label, [...files], record);
    rows.push(row);
    console.log(row);
  }
console.log(
  '\n| sources (real-time 60 fps, ring 4, consumer every 100 ms) | measured fps per camera | captured | read | dropped | drop rate |\n|---|---|---|---|---|---|',
);
for (const [label, files] of [
  ['4 × 720p', p720],
  ['4 × 1080p', p1080],
] as const)
  console.log(await slowConsumer(label, [...files]));
console.log('\n| real-time recording at 60 fps | frames | dropped/duplicated per camera | duplicated share |\n|---|---|---|---|');
for (const [label, files] of [
  ['4 × 720p', p720],
  ['4 × 1080p', p1080],
] as const)
  console.log(await realtimeRecording(label, [...files]));
await passthroughVsEncode();
rmSync(dir, { recursive: true, force: true });
