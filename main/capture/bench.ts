/**
 * `npm run capture:bench [-- --points N] [--pose-frames N] [--skip-e2e]`
 * Prints: triangulation points/s (native vs TypeScript, one thread), 2D pose frames/s per core
 * (one worker = one core), end-to-end seconds for the 4 × 100-frame demo trial from video.
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

const { values } = parseArgs({ options: { points: { type: 'string' }, 'pose-frames': { type: 'string' }, 'skip-e2e': { type: 'boolean' } } });
const log = (s = '') => process.stdout.write(`${s}\n`);
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

if (hasDemo && hasBodyPix && hasAddon('opencv')) {
  const F = Number(values['pose-frames'] ?? 30);
  const videos = probeVideos(loadTomlCalibration(DEMO_CALIB), findVideos(BALANCING)).slice(0, 1);
  await estimateVideoPoses(videos, F, { kind: 'movenet' }, undefined, 1);
  const s = lastPoseRunStats!;
  log(
    `2D pose (${s.estimator}), one worker = one core, ${F} frames of ${videos[0]!.width}×${videos[0]!.height}: ${(F / (s.inferMs / 1000)).toFixed(2)} frames/s inference (detector + keypoints, 2 passes when the box disagrees); decode ${(s.decodeMs / F).toFixed(1)} ms/frame`,
  );
  if (!values['skip-e2e']) {
    const t = performance.now();
    const r = await processTrial({ trialDir: BALANCING, calibPath: DEMO_CALIB });
    log(
      `end-to-end, demo BalancingTrial from video (${r.cameras.length} × ${r.frames} frames, ${lastPoseRunStats?.workers} pose workers): ${((performance.now() - t) / 1000).toFixed(1)} s ${JSON.stringify(Object.fromEntries(Object.entries(r.timings).map(([k, v]) => [k, Number(v.toFixed(2))])))}`,
    );
    const t2 = performance.now();
    await processTrial({ trialDir: BALANCING, calibPath: DEMO_CALIB, useTrialKeypoints: true });
    log(`end-to-end, demo BalancingTrial from its 2D JSON: ${((performance.now() - t2) / 1000).toFixed(2)} s`);
  }
} else log('2D pose and end-to-end: skipped (demo data, BodyPix model or OpenCV addon missing)');
