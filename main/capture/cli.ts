/**
 * `npm run capture -- process <trial folder> --calib <toml> [--keypoints <json folders>] --db PATH --athlete ID`
 * `npm run capture -- devices` / `npm run capture -- record --source SPEC,... --seconds N --out DIR` (see `live/commands.ts`)
 *
 * Videos (or 2D keypoint JSON) in; `pose_metric` rows (through the service layer) and a
 * per-frame 3D TRC out. Exit codes: 0 ok, 2 bad input (message on stderr), 1 other error.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DeclaredLayout } from '../../models/capture/obliquity';
import { CROSS_CHECK_MODEL, crossCheckDegrees } from '../../models/capture/quality';
import type { PoseMetricInput } from '../../models/capture/metrics';
import { CaptureInputError } from './errors';
import { processTrial, type ProcessOptions } from './pipeline';
import { DEFAULT_POSE, parsePoseModel, POSE_MODEL_NAMES, type PoseEstimatorSpec } from './pose/types';
import { openCaptureStore } from './store';
import { devicesCommand, LIVE_HELP, recordCommand } from './live/commands';

export const HELP = `Athlete Intelligence capture

Usage:
  npm run capture -- process <trial folder> --calib <toml> [options]
${LIVE_HELP}
Inputs:
  <trial folder>        holds one video per calibrated camera (videos/*.mp4 or *.mp4)
  --calib FILE          calibration TOML (one table per camera: size, matrix, distortions, rotation, translation)
  --keypoints DIRS      OpenPose JSON folders instead of videos, one per camera (comma-separated or repeated)
  --trial-keypoints     use the trial's own pose-associated/ (or pose/) JSON folders instead of videos
  --fps N               frame rate for JSON input (default: [project] frame_rate from Config.toml)
Athlete and rig:
  --tap CAM:X,Y         one tap on the athlete in the first frame of camera CAM (name or index), pixels;
                        default: the largest person in the first camera
  --layout JSON         declared layout, e.g. '[{"camera":"cam_01","label":"front","yaw_deg":0}]'
  --drift-deg N         layout drift tolerance in degrees (default 15)
Processing:
  --model NAME|FILE     movenet (default, Lightning) | movenet-thunder | blazepose (33 points: heels, foot tips) | blazepose-lite | bodypix | path to a SimCC .onnx (e.g. RTMPose)
  --cross-check NAME|none
                        a second 2D model run on the same frames (default for video: movenet-thunder;
                        movenet when --model is movenet-thunder; blazepose | … as --model): every reading
                        carries how far the two models' angles differ (model_difference) and fails above
                        8° mean (model_disagreement); about 3.6× the 2D time. none: skip it, and every
                        reading says not_cross_checked (as with --keypoints, where it does not apply)
  --cutoff HZ           Butterworth cut-off (default 6)      --max-gap N  longest gap filled, frames (default 10)
  --frames N            process only the first N frames
  --sync check|auto|off camera synchronisation (default check: estimate each camera's frame offset and
                        flag the readings camera_offset; auto: also shift that camera's frames by it
                        and trim to the frames all cameras cover, as Pose2Sim does; off: skip)
Outputs:
  --out DIR             where the TRC goes (default .data/captures/<trial>)
  --db PATH --athlete ID --as EMAIL
                        store the session and pose_metric rows through the service layer as EMAIL
                        (required: the recording user is never guessed; checked before processing)
  --json                print the result as JSON
`;

/** Where the command writes; injectable for tests. */
export interface CaptureIo {
  out(t: string): void;
  err(t: string): void;
  isTTY: boolean;
}
const STD: CaptureIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), isTTY: Boolean(process.stderr.isTTY) };

/** A text progress bar on stderr: redrawn in place on a terminal, every 25 % otherwise. */
export function progressBar(io: CaptureIo): (stage: string, done: number, total: number) => void {
  let lastStage = '',
    lastQuarter = -1;
  return (stage, done, total) => {
    const frac = total > 0 ? done / total : 1;
    const width = 30,
      filled = Math.round(frac * width);
    const line = `${stage.padEnd(12)} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${(frac * 100).toFixed(0).padStart(3)}%`;
    if (io.isTTY) io.err(`\r${line}${done >= total ? '\n' : ''}`);
    else {
      const q = Math.floor(frac * 4);
      if (stage !== lastStage || q !== lastQuarter) io.err(`${line}\n`);
      lastQuarter = q;
    }
    lastStage = stage;
  };
}

function parseTap(s: string): ProcessOptions['tap'] {
  const m = /^([^:]+):(-?[\d.]+),(-?[\d.]+)$/.exec(s);
  if (!m) throw new CaptureInputError('bad_argument', `--tap must look like cam_01:540,900 (camera name or index, then x,y pixels); got "${s}"`);
  const cam = /^\d+$/.test(m[1]!) ? Number(m[1]) : m[1]!;
  return { camera: cam, x: Number(m[2]), y: Number(m[3]) };
}

function parseModel(s: string | undefined): PoseEstimatorSpec {
  const spec = parsePoseModel(s, (p) => path.resolve(p));
  if (!spec) throw new CaptureInputError('bad_argument', `--model must be one of ${POSE_MODEL_NAMES.join(', ')} or a .onnx file; got "${s}"`);
  return spec;
}

/** The app's second model (`CROSS_CHECK_MODEL`, MoveNet Thunder), or Lightning when Thunder is the primary. */
function defaultCrossCheck(primary: PoseEstimatorSpec): PoseEstimatorSpec {
  const thunder = parsePoseModel(CROSS_CHECK_MODEL)!;
  return JSON.stringify(primary) === JSON.stringify(thunder) ? DEFAULT_POSE : thunder;
}

/**
 * `--cross-check NAME|none` (a second model, not the primary one: comparing a model with itself checks
 * nothing). Omitted → {@link defaultCrossCheck} for video, none for keypoint JSON; `none` → off.
 * @throws CaptureInputError `bad_argument` for an unknown name, the primary model, or a model named with keypoint JSON input
 */
export function parseCrossCheck(s: string | undefined, primary: PoseEstimatorSpec, keypointInput: boolean): PoseEstimatorSpec | undefined {
  if (s === 'none') return undefined;
  if (s === undefined) return keypointInput ? undefined : defaultCrossCheck(primary);
  const spec = parsePoseModel(s, (p) => path.resolve(p));
  if (!spec || !s) throw new CaptureInputError('bad_argument', `--cross-check must be one of ${POSE_MODEL_NAMES.join(', ')}, a .onnx file or none; got "${s}"`);
  if (keypointInput)
    throw new CaptureInputError(
      'bad_argument',
      `--cross-check ${s} runs a second 2D model on the videos: process the videos (not keypoint JSON) to use it, or drop --cross-check (the readings then say not_cross_checked)`,
    );
  if (JSON.stringify(spec) === JSON.stringify(primary))
    throw new CaptureInputError(
      'bad_argument',
      `--cross-check ${s} is the model already used (--model): name a different 2D model, e.g. ${CROSS_CHECK_MODEL} with the default movenet (the README's choice), or movenet with --model ${CROSS_CHECK_MODEL}`,
    );
  return spec;
}

/** Codes shown in the table's last column: the omission reason, then each condition once, the cross-check's with its degrees (e.g. `model_difference 5.8°`). */
export function tableCodes(r: Pick<PoseMetricInput, 'omitted_reason' | 'conditions'>): string {
  const out: string[] = [];
  for (const c of [...(r.omitted_reason ? [{ code: r.omitted_reason, detail: '' }] : []), ...r.conditions]) {
    const deg = crossCheckDegrees(c);
    const label = deg === null ? c.code : `${c.code} ${deg.toFixed(1)}°`;
    if (!out.some((o) => o === label || o.startsWith(`${c.code} `))) out.push(label);
  }
  return out.join(', ');
}

function num(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new CaptureInputError('bad_argument', `--${name} must be a positive number; got "${v}"`);
  return n;
}

/** The readings as a table, with the conditions they were measured under printed above it. */
function table(rows: PoseMetricInput[]): string {
  const c = rows[0];
  const conditions = c
    ? `conditions: ${c.camera_mode} (${c.camera_count} camera${c.camera_count === 1 ? '' : 's'}); view obliquity ${c.view_obliquity_deg === null ? 'unknown' : `${c.view_obliquity_deg.toFixed(0)}°`} (${c.obliquity_band}); view matches declared layout: ${c.view_matches_declared ? 'yes' : 'no'}; ${c.frames} frames. Angles in degrees; no test-retest reliability or "improved" threshold has been measured.`
    : 'no readings';
  // the joint column as wide as the longest name (knee_frontal_projection_angle)
  const w = Math.max(19, ...rows.map((r) => r.joint.length));
  const lines = [
    conditions,
    `${'joint'.padEnd(w)} side   peak    min   mean  range  coverage  ratio  trustworthy  omitted / conditions (failed and informational)`,
  ];
  const key = (r: PoseMetricInput) => `${r.joint}|${r.side}`;
  const groups = new Map<string, PoseMetricInput[]>();
  for (const r of rows) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  for (const g of groups.values()) {
    const v = (s: string) => {
      const x = g.find((r) => r.statistic === s)?.value_deg;
      return x === null || x === undefined ? '     -' : x.toFixed(1).padStart(6);
    };
    const r0 = g[0]!;
    lines.push(
      `${r0.joint.padEnd(w)} ${r0.side.padEnd(5)} ${v('peak')} ${v('min')} ${v('mean')} ${v('range')}  ${r0.coverage.toFixed(2).padStart(8)}  ${r0.sagittal_ratio === null ? '    -' : r0.sagittal_ratio.toFixed(2).padStart(5)}  ${String(r0.trustworthy).padEnd(11)}  ${tableCodes(r0)}`,
    );
  }
  return lines.join('\n');
}

/** Run the command with `argv` (after `npm run capture --`). Returns the exit code. */
export async function runCaptureCli(argv: string[], io: CaptureIo = STD): Promise<number> {
  try {
    if (argv[0] === 'devices') return devicesCommand(argv.slice(1), io);
    if (argv[0] === 'record') return await recordCommand(argv.slice(1), io);
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        calib: { type: 'string' },
        keypoints: { type: 'string', multiple: true },
        'trial-keypoints': { type: 'boolean' },
        fps: { type: 'string' },
        tap: { type: 'string' },
        layout: { type: 'string' },
        'drift-deg': { type: 'string' },
        model: { type: 'string' },
        'cross-check': { type: 'string' },
        cutoff: { type: 'string' },
        'max-gap': { type: 'string' },
        frames: { type: 'string' },
        out: { type: 'string' },
        db: { type: 'string' },
        athlete: { type: 'string' },
        as: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        sync: { type: 'string' },
      },
    });
    const [command, trial, ...extra] = positionals;
    if (values.help || command === 'help' || !command) {
      io.out(HELP);
      return command || values.help ? 0 : 2;
    }
    if (command !== 'process') throw new CaptureInputError('bad_argument', `unknown command "${command}" (process, devices or record)`);
    if (!trial) throw new CaptureInputError('bad_argument', 'give the trial folder: npm run capture -- process <trial folder> --calib <toml>');
    if (extra.length) throw new CaptureInputError('bad_argument', `unexpected arguments: ${extra.join(' ')}`);
    if (!values.calib) throw new CaptureInputError('bad_argument', '--calib <toml> is required');
    if (values.db && !values.athlete) throw new CaptureInputError('bad_argument', '--athlete ID is required with --db');
    const sync = values.sync ?? 'check';
    if (sync !== 'check' && sync !== 'auto' && sync !== 'off') throw new CaptureInputError('bad_argument', `--sync must be check, auto or off; got "${sync}"`);
    let layout = null;
    if (values.layout) {
      let raw: unknown;
      try {
        raw = JSON.parse(values.layout);
      } catch {
        throw new CaptureInputError('bad_argument', '--layout must be JSON');
      }
      const r = DeclaredLayout.safeParse(raw);
      if (!r.success) throw new CaptureInputError('bad_argument', `--layout: ${r.error.issues[0]?.path.join('.')} ${r.error.issues[0]?.message}`);
      layout = r.data;
    }
    const keypointDirs = values.keypoints
      ?.flatMap((k) => k.split(','))
      .filter(Boolean)
      .map((k) => path.resolve(k));
    const trialDir = path.resolve(trial);
    const opts: ProcessOptions = {
      trialDir,
      calibPath: path.resolve(values.calib),
      keypointDirs,
      useTrialKeypoints: values['trial-keypoints'],
      tap: values.tap ? parseTap(values.tap) : undefined,
      fps: num(values.fps, 'fps'),
      cutoffHz: num(values.cutoff, 'cutoff'),
      maxGapFrames: num(values['max-gap'], 'max-gap'),
      maxFrames: num(values.frames, 'frames'),
      layout,
      driftToleranceDeg: num(values['drift-deg'], 'drift-deg'),
      pose: parseModel(values.model),
      crossCheck: parseCrossCheck(values['cross-check'], parseModel(values.model), Boolean(keypointDirs?.length || values['trial-keypoints'])),
      onProgress: progressBar(io),
      sync,
    };
    const store = values.db ? openCaptureStore(path.resolve(values.db), values.athlete!, values.as) : null;
    try {
      // Who records for which athlete is checked before minutes of processing, and before any file is written.
      store?.preflight(values.athlete!);
      const r = await processTrial(opts);
      const outDir = path.resolve(values.out ?? path.join('.data', 'captures', path.basename(trialDir)));
      mkdirSync(outDir, { recursive: true });
      const trcPath = path.join(outDir, `${path.basename(trialDir)}.trc`);
      writeFileSync(trcPath, r.trcText);
      let stored: { captureSessionId: string; metricCount: number } | null = null;
      if (store) {
        stored = store.recordSession(
          {
            athleteId: values.athlete!,
            recordedAt: new Date().toISOString(),
            trialName: path.basename(trialDir),
            fps: r.fps,
            frameCount: r.frames,
            cameraCount: r.cameras.length,
            source: r.source,
            trcPath,
            notes: `capture ${r.source}; excluded views per camera ${Array.from(r.triangulation.excludedCounts).join('/')}${r.drift.drifted ? `; rig drift: ${r.drift.reasons.join('; ')}` : ''}`,
          },
          r.rows,
        );
      }
      const excluded = Object.fromEntries(r.cameras.map((c, i) => [c.name, r.triangulation.excludedCounts[i] ?? 0]));
      if (values.json) {
        io.out(
          `${JSON.stringify({ trc: trcPath, stored, fps: r.fps, frames: r.frames, source: r.source, excluded_views: excluded, out_of_image: Object.fromEntries(r.cameras.map((c, i) => [c.name, r.outOfImage[i] ?? 0])), sync: r.sync, trial_conditions: r.trialConditions, duplicated_frames: r.duplicatedFrames, undistorted: r.undistorted, drift: r.drift, obliquity: r.obliquity, timings: r.timings, cross_check: r.crossCheck ? { model: r.crossCheck.model, excluded_views: r.crossCheck.excludedCounts } : null, metrics: r.rows }, null, 2)}\n`,
        );
      } else {
        io.out(
          `${r.frames} frames at ${r.fps} fps from ${r.cameras.length} cameras (${r.source}); athlete ${opts.tap ? 'tapped' : 'auto-selected (largest person; pass --tap to choose)'} in ${r.cameras[r.tap.camera]?.name} at (${r.tap.x.toFixed(0)}, ${r.tap.y.toFixed(0)})\n`,
        );
        io.out(
          `views excluded for reprojection error > 15 px: ${Object.entries(excluded)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}; ${r.interpolated} point-frames interpolated\n`,
        );
        if (r.outOfImage.some((n) => n > 0))
          io.out(`2D points outside the image treated as unseen: ${r.cameras.map((c, i) => `${c.name} ${r.outOfImage[i] ?? 0}`).join(', ')}\n`);
        io.out(
          `view obliquity ${r.obliquity.obliquityDeg?.toFixed(1) ?? '-'}° (${r.rows[0]?.obliquity_band}); rig ${r.drift.drifted ? `DRIFTED: ${r.drift.reasons.join('; ')}` : opts.layout ? 'within its declared layout' : 'has no declared layout (view_matches_declared = false)'}\n\n`,
        );
        for (const c of r.trialConditions) io.out(`condition ${c.code}: ${c.detail}\n`);
        io.out(`${table(r.rows)}\n\nTRC: ${trcPath}\n`);
        if (stored) io.out(`stored capture session ${stored.captureSessionId} with ${stored.metricCount} pose_metric rows as ${store!.actorEmail}\n`);
      }
      return 0;
    } finally {
      store?.close();
    }
  } catch (e) {
    if (e instanceof CaptureInputError) {
      io.err(`capture: ${e.message}\n`);
      return 2;
    }
    if (
      e instanceof Error &&
      'code' in e &&
      ['ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'].includes(String((e as { code?: string }).code))
    ) {
      io.err(`capture: ${e.message}\n${HELP}`);
      return 2;
    }
    io.err(`capture: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runCaptureCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
