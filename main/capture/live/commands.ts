/**
 * `npm run capture -- devices` and `npm run capture -- record` (issue 15), dispatched from
 * `main/capture/cli.ts`. Exit codes: 0 ok (an empty camera list is not an error), 2 bad input,
 * 3 the recording was cut short by a camera that failed (what was captured is kept), 1 other error
 * (e.g. `ERR_VIDEO_WRITE`: a disk that filled up during the recording).
 */
import { parseArgs } from 'node:util';
import { CaptureInputError } from '../errors';
import { listCameras, openRig, parseSourceSpec, type CaptureSourceSpec, type RecordingResult } from './rig';

/** Where the command writes (the capture CLI's `CaptureIo`). */
export interface LiveIo {
  out(t: string): void;
  err(t: string): void;
}

export const LIVE_HELP = `  npm run capture -- devices [--json]
      attached cameras with their modes (size, fps, pixel format); an empty list is not an error
  npm run capture -- record --source SPEC,SPEC,... --seconds N --out DIR [options]
      record N seconds from every source at once into the trial folder DIR (videos/NAME.avi,
      videos/NAME.timestamps.csv, Config.toml, calibration/); prints per camera the frames captured
      (its own frames in the recording), written, dropped and duplicated. SPEC: a camera index (0),
      a device path (/dev/video2) or a video file, optionally named NAME=SOURCE (cam_01=/dev/video0);
      unnamed sources are cam01, cam02, … in --source order. A DIR left by a failed open is reused.
      --width W --height H --fps F   mode to ask the cameras for (they report what they grant)
      --pixel-format CC              FOURCC to ask for (default MJPG)
      --pace realtime|fast           video files: as a camera would deliver them (default) or as fast as they decode
      --calib FILE                   calibration TOML copied into DIR/calibration/; every source name must
                                     match one of its cameras (cam_01 ↔ cam01), every camera needs a source, and each
                                     camera must deliver the size it was calibrated at (± 16 px) (else exit 2, nothing written)
      --no-passthrough               decode and re-encode MJPEG sources (default: their own JPEG frames are recorded as they are)
      --json                         print the result as JSON
      exit 3: a camera failed mid-recording (the recording stops; what was captured is kept)
      exit 1: no frame was recorded, or a file could not be written (e.g. a full disk)
      Ctrl-C, SIGTERM or SIGHUP stops the recording cleanly (files closed, Config.toml final)
`;

function positive(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new CaptureInputError('bad_argument', `--${name} must be a positive number; got "${v}"`);
  return n;
}

/** `devices`: every camera and mode. */
export function devicesCommand(argv: string[], io: LiveIo): number {
  const { values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { json: { type: 'boolean' } } });
  const cams = listCameras();
  if (values.json) {
    io.out(`${JSON.stringify(cams, null, 2)}\n`);
    return 0;
  }
  if (cams.length === 0) {
    io.out('no cameras found\n');
    return 0;
  }
  for (const c of cams) {
    io.out(`${c.index}  ${c.path ?? '-'}  ${c.label}  (${c.backend})\n`);
    for (const m of c.modes)
      io.out(
        `    ${m.pixelFormat.padEnd(4)} ${`${m.width}×${m.height}`.padEnd(10)} ${m.fps.length ? m.fps.map((f) => Number(f.toFixed(2))).join(', ') + ' fps' : ''}\n`,
      );
  }
  return 0;
}

/** A per-camera table of the recording. */
export function recordingTable(r: RecordingResult): string {
  const lines = [`${r.frames} synchronised frames per camera at ${r.fps} fps (${r.seconds.toFixed(2)} s) in ${r.outDir}`];
  lines.push('camera  state    captured  written  dropped  duplicated  video');
  for (const c of r.cameras)
    lines.push(
      `${c.name.padEnd(7)} ${c.state.padEnd(8)} ${String(c.captured).padStart(8)} ${String(c.written).padStart(8)} ${String(c.dropped).padStart(8)} ${String(c.duplicated).padStart(11)}  ${c.video}${c.calibrationCamera ? `  (calibration camera ${c.calibrationCamera})` : ''}`,
    );
  lines.push("captured: the camera's own frames in the recording; written = captured + duplicated (slots that repeat its previous frame)");
  for (const c of r.cameras)
    if (c.queueDropped > 0)
      lines.push(
        `${c.name}: ${c.queueDropped} of its dropped frames were lost to a full record queue (the recorder fell behind, or the queue's memory bound was hit while waiting on a slower camera); their slots are among its duplicates`,
      );
  if (r.failure) lines.push(`stopped at ${r.frames} frames: ${r.failure.name} ${r.failure.state}: ${r.failure.message}; everything written is kept`);
  return `${lines.join('\n')}\n`;
}

/** `record`: open every source, record, print the counts. */
export async function recordCommand(argv: string[], io: LiveIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      source: { type: 'string', multiple: true },
      seconds: { type: 'string' },
      out: { type: 'string' },
      calib: { type: 'string' },
      width: { type: 'string' },
      height: { type: 'string' },
      fps: { type: 'string' },
      'pixel-format': { type: 'string' },
      pace: { type: 'string' },
      'no-passthrough': { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  if (positionals.length) throw new CaptureInputError('bad_argument', `unexpected arguments: ${positionals.join(' ')}`);
  const specs = (values.source ?? []).flatMap((s) => s.split(',')).filter((s) => s.trim());
  if (!specs.length) throw new CaptureInputError('bad_argument', '--source SPEC,SPEC,... is required (a camera index, /dev/videoN or a video file)');
  const seconds = positive(values.seconds, 'seconds');
  if (!seconds) throw new CaptureInputError('bad_argument', '--seconds N is required');
  if (!values.out) throw new CaptureInputError('bad_argument', '--out DIR is required (a new trial folder)');
  const pace = values.pace ?? 'realtime';
  if (pace !== 'realtime' && pace !== 'fast') throw new CaptureInputError('bad_argument', `--pace must be realtime or fast; got "${pace}"`);
  const pf = values['pixel-format'];
  if (pf !== undefined && !/^[ -~]{4}$/.test(pf))
    throw new CaptureInputError('bad_argument', `--pixel-format must be a 4-character FOURCC such as MJPG; got "${pf}"`);
  const width = positive(values.width, 'width'),
    height = positive(values.height, 'height'),
    fps = positive(values.fps, 'fps');
  const passthrough = !values['no-passthrough'];
  const sources: CaptureSourceSpec[] = specs.map((s) => {
    const p = { ...parseSourceSpec(s, pace), passthrough };
    if (p.kind === 'device')
      return { ...p, ...(width ? { width } : {}), ...(height ? { height } : {}), ...(fps ? { fps } : {}), ...(pf ? { pixelFormat: pf } : {}) };
    return p;
  });
  const rig = await openRig(sources, { record: { outDir: values.out, seconds, ...(values.calib ? { calibrationPath: values.calib } : {}) } });
  for (const s of rig.sources)
    io.err(
      `${s.name}: ${s.kind} ${s.source} → ${s.width}×${s.height} @ ${Number(s.fps.toFixed(2))} fps ${s.pixelFormat} (${s.backend}; ${s.passthrough ? 'MJPEG passthrough' : 'decode + encode'})\n`,
    );
  rig.on('device-failure', (f) => io.err(`${f.name} ${f.state}: ${f.message}\n`));
  // Ctrl-C, a terminal closed (SIGHUP) or a service manager's stop (SIGTERM): stop the recording
  // cleanly (every file closed, the final Config.toml written, the reserve released), then exit.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal = (sig: NodeJS.Signals) => {
    io.err(`${sig}: stopping…\n`);
    void rig.stopRecording().catch(() => undefined);
  };
  for (const s of signals) process.on(s, onSignal);
  try {
    const r = await rig.recordingDone();
    if (values.json) io.out(`${JSON.stringify(r, null, 2)}\n`);
    else io.out(recordingTable(r));
    if (r.frames === 0) {
      io.err(
        `no frame was recorded: ${r.failure ? `${r.failure.name} ${r.failure.state} (${r.failure.message}) before` : 'the recording stopped before'} every camera delivered its first frame${seconds * r.fps < 0.5 ? ` (--seconds ${seconds} is less than one frame at ${r.fps} fps)` : ''}; the folder holds empty videos — record again\n`,
      );
      return r.failure?.state === 'failed' ? 3 : 1;
    }
    return r.failure?.state === 'failed' ? 3 : 0;
  } finally {
    for (const s of signals) process.off(s, onSignal);
    await rig.close();
  }
}
