/**
 * `npm run capture:bench [-- --points N] [--pose-frames N] [--skip-e2e] [--models] [--e2e-model NAME]`
 * Prints: triangulation points/s (native vs TypeScript, one thread), 2D pose frames/s per core
 * (one worker = one core), end-to-end seconds for the 4 × 100-frame demo trial from video
 * (`--e2e-model`: which 2D model, default the pipeline's). `--models`: the 2D model comparison
 * against the demo's OpenPose (px per joint, frames/s/core, decode separately) and the person-detector
 * comparison (pose/compare-models.ts); models whose weights are not in the weights folder are skipped.
 */
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { projectionMatrix } from '../../models/capture/camera';
import { prng, projectFrames, ringCamera, syntheticMotion, syntheticPose } from '../../models/capture/synthetic';
import { triangulateBatch } from '../../models/capture/triangulation';
import { loadTomlCalibration } from './calibration';
import { hasAddon, triangulationAddon } from './native/index';
import { processTrial } from './pipeline';
import { estimateVideoPoses, lastPoseRunStats } from './pose/run';
import { findVideos, probeVideos } from './sources';
import { BALANCING, DEMO_CALIB, hasBodyPix, hasDemo } from './testing/paths';
import { compareDetectors, compareModel, comparisonTable, openPoseAthlete, sampleFrames, type ModelComparison } from './pose/compare-models';
import { parsePoseModel, type PoseEstimatorSpec } from './pose/types';

const { values } = parseArgs({
  options: {
    points: { type: 'string' },
    'pose-frames': { type: 'string' },
    'skip-e2e': { type: 'boolean' },
    models: { type: 'boolean' },
    'e2e-model': { type: 'string' },
  },
});
const log = (s = '') => process.stdout.write(`${s}\n`);
const e2eSpec = parsePoseModel(values['e2e-model']);
if (!e2eSpec) throw new Error(`--e2e-model: unknown model "${values['e2e-model']}"`);
/** CPU seconds used by this process (user + system): per-core figures that do not depend on other load. */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}
log(`# Measurement pipeline benchmark — ${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, Node ${process.version}`);

// Triangulation: 4 cameras, 1 px noise, 5 % outlier views (forcing the exclusion search), 17 keypoints per frame.
const N = Number(values.points ?? 340_000);
const cams = [0, 60, -60, 170].map((y, i) => ringCamera(`c${i}`, y));
const P = Float64Array.from(cams.flatMap(projectionMatrix));
const frames = syntheticMotion(Math.ceil(N / 17)).map((m) => syntheticPose(m));
const clean = projectFrames(cams, frames, 1, 3);
const withOutliers = Float64Array.from(clean);
const rand = prng(9);
for (let i = 0; i < withOutliers.length / 3; i++) if (rand() < 0.05) withOutliers[i * 3] = withOutliers[i * 3]! + 60;
const pts = clean.length / 12;
for (const [name, obs] of [
  ['clean (no exclusion)', clean],
  ['5 % outlier views', withOutliers],
] as const) {
  let nat = NaN;
  if (hasAddon('triangulation')) {
    const a = triangulationAddon();
    a.triangulate(P, obs.subarray(0, 12 * 1000), 4);
    const t = cpuSeconds();
    a.triangulate(P, obs, 4);
    nat = pts / (cpuSeconds() - t);
  }
  const sub = obs.subarray(0, 12 * Math.min(pts, 40_000));
  triangulateBatch({ cameras: 4, projections: P, observations: sub.subarray(0, 12 * 1000) });
  const t2 = cpuSeconds();
  triangulateBatch({ cameras: 4, projections: P, observations: sub });
  const ts = sub.length / 12 / (cpuSeconds() - t2);
  log(
    `triangulation, 4 cameras, ${name}: native ${(nat / 1e6).toFixed(2)} M points/s, TypeScript ${(ts / 1e6).toFixed(3)} M points/s, ratio ${(nat / ts).toFixed(1)}× (per CPU-second of this single thread, ${pts} points)`,
  );
}

if (values.models && hasDemo && hasBodyPix && hasAddon('opencv')) {
  // the frames of shared/data/models/README.md's comparison: 13 per camera, 52 images
  const idx = [0, 10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 90, 99];
  const { frames: imgs, decodeMsPerFrame } = sampleFrames(idx);
  const ref = openPoseAthlete(idx);
  log();
  log(`## 2D pose models vs the demo's OpenPose BODY_25B (BalancingTrial, 4 cameras × ${idx.length} frames; median px per joint, left and right pooled)`);
  log(`video decode (OpenCV FFmpeg backend, 1080/1088 × 1920, H.264 + VP9), not counted below: ${decodeMsPerFrame.toFixed(1)} CPU-ms/frame`);
  const rows: ModelComparison[] = [];
  for (const spec of [
    { kind: 'movenet', variant: 'lightning' },
    { kind: 'movenet', variant: 'thunder' },
    { kind: 'blazepose', variant: 'full' },
    { kind: 'blazepose', variant: 'lite' },
    { kind: 'bodypix' },
  ] as PoseEstimatorSpec[]) {
    try {
      rows.push(await compareModel(spec, imgs, ref));
    } catch (e) {
      log(`${JSON.stringify(spec)}: not run (${e instanceof Error ? e.message : String(e)})`);
    }
  }
  log(comparisonTable(rows).join('\n'));
  log();
  log('## Person detectors (does a box cover the athlete?)');
  log((await compareDetectors(imgs, ref)).join('\n'));
  log();
}

if (hasDemo && hasBodyPix && hasAddon('opencv')) {
  const F = Number(values['pose-frames'] ?? 30);
  const videos = probeVideos(loadTomlCalibration(DEMO_CALIB), findVideos(BALANCING)).slice(0, 1);
  await estimateVideoPoses(videos, F, e2eSpec, undefined, 1);
  const s = lastPoseRunStats!;
  log(
    `2D pose (${s.estimator}), one worker = one core, ${F} frames of ${videos[0]!.width}×${videos[0]!.height}: ${(F / (s.inferMs / 1000)).toFixed(2)} frames/s inference (detector + keypoints, 2 passes when the box disagrees); decode ${(s.decodeMs / F).toFixed(1)} ms/frame`,
  );
  if (!values['skip-e2e']) {
    const t = performance.now(),
      c0 = cpuSeconds();
    const r = await processTrial({ trialDir: BALANCING, calibPath: DEMO_CALIB, pose: e2eSpec });
    log(
      `end-to-end, demo BalancingTrial from video (${lastPoseRunStats?.estimator}, ${r.cameras.length} × ${r.frames} frames, ${lastPoseRunStats?.workers} pose workers): ${((performance.now() - t) / 1000).toFixed(1)} s wall, ${(cpuSeconds() - c0).toFixed(1)} CPU-s (all threads; wall on an idle machine with N free cores ≈ CPU-s / N) ${JSON.stringify(Object.fromEntries(Object.entries(r.timings).map(([k, v]) => [k, Number(v.toFixed(2))])))}`,
    );
    const t2 = performance.now();
    await processTrial({ trialDir: BALANCING, calibPath: DEMO_CALIB, useTrialKeypoints: true });
    log(`end-to-end, demo BalancingTrial from its 2D JSON: ${((performance.now() - t2) / 1000).toFixed(2)} s`);
  }
} else log('2D pose and end-to-end: skipped (demo data, BodyPix model or OpenCV addon missing)');
