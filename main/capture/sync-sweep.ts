/**
 * `npm run capture:sync-sweep [-- --factors 1.5,2] [--cache-2d DIR]` — the measurement behind the sync
 * check's agreement bound (models/capture/sync.ts `SYNC_AGREEMENT_FACTOR`, `SYNC_MAX_BEST_RESIDUAL_FACTOR`).
 *
 * On the Pose2Sim demo BalancingTrial (100 frames), for each 2D source — video (the default 2D model on the
 * four videos, athlete tapped at cam_01 (418, 744); `--cache-2d DIR` reuses `capture:validate`'s 2D cache),
 * the trial's OpenPose JSON, and the JSON with invented legs (testing/demo-cases.ts) — and each agreement
 * factor: the in-step estimate (estimable, offsets, residual at lag 0 and at the best lag per camera,
 * detection limit), and for video and JSON every camera shifted by ±3, ±5, ±8 frames in memory (as
 * quality.test.ts shifts it): how many are found within ±1 frame with no other camera moved, and the
 * shifted camera's best-lag / lag-0 residual. Needs ../shared/data (or ATHLETE_SHARED_DATA) and, for video,
 * the OpenCV addon and the BodyPix model.
 */
import { parseArgs } from 'node:util';
import { hasDistortion, projectionMatrix, undistortObservations } from '../../models/capture/camera';
import { estimateSync, SYNC_AGREEMENT_FACTOR } from '../../models/capture/sync';
import { loadTomlCalibration } from './calibration';
import { processTrial, type ProcessResult } from './pipeline';
import { DEFAULT_POSE } from './pose/types';
import { findVideos, probeVideos } from './sources';
import { inventLegs } from './testing/demo-cases';
import { BALANCING, DEMO_CALIB, hasDemo, NO_DEMO } from './testing/paths';
import { cachedVideoPoses } from './testing/pose-cache';

const { values } = parseArgs({ options: { factors: { type: 'string' }, 'cache-2d': { type: 'string' } } });
const log = (s = '') => process.stdout.write(`${s}\n`);
const f1 = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x.toFixed(1));

interface Source {
  name: string;
  C: number;
  K: number;
  F: number;
  ideal: Float64Array;
  P: Float64Array;
  cams: string[];
}

function source(name: string, r: ProcessResult): Source {
  const C = r.cameras.length,
    K = r.keypointSet.length;
  const P = new Float64Array(C * 12);
  r.cameras.forEach((c, i) => P.set(projectionMatrix(c), i * 12));
  const ideal = r.cameras.some(hasDistortion) ? undistortObservations(r.observations, r.cameras) : r.observations;
  return { name, C, K, F: r.frames, ideal, P, cams: r.cameras.map((c) => c.name) };
}

/** Camera `cam`'s frame f holds frame f + s (nobody beyond the ends). */
function shifted(s: Source, cam: number, by: number): Float64Array {
  const o = Float64Array.from(s.ideal);
  for (let f = 0; f < s.F; f++)
    for (let k = 0; k < s.K; k++) {
      const d = ((f * s.K + k) * s.C + cam) * 3,
        g = f + by,
        src = ((g * s.K + k) * s.C + cam) * 3,
        inside = g >= 0 && g < s.F;
      o[d] = inside ? (s.ideal[src] ?? NaN) : NaN;
      o[d + 1] = inside ? (s.ideal[src + 1] ?? NaN) : NaN;
      o[d + 2] = inside ? (s.ideal[src + 2] ?? 0) : 0;
    }
  return o;
}

async function main(): Promise<void> {
  if (!hasDemo) throw new Error(NO_DEMO);
  const factors = (values.factors ?? String(SYNC_AGREEMENT_FACTOR)).split(',').map(Number);
  const videos = probeVideos(loadTomlCalibration(DEMO_CALIB), findVideos(BALANCING));
  const twoD = await cachedVideoPoses(videos, 100, 'movenet', DEFAULT_POSE, values['cache-2d']);
  const base = { calibPath: DEMO_CALIB, sync: 'off' as const, maxFrames: 100 };
  const sources = [
    source(
      'video',
      await processTrial({
        ...base,
        trialDir: BALANCING,
        pose: DEFAULT_POSE,
        precomputed: { primary: twoD.people },
        tap: { camera: 'cam_01', x: 418, y: 744 },
      }),
    ),
    source('JSON', await processTrial({ ...base, trialDir: BALANCING, useTrialKeypoints: true, fps: 60 })),
    source('invented legs', await processTrial({ ...base, trialDir: inventLegs(BALANCING), useTrialKeypoints: true, fps: 60 })),
  ];
  for (const factor of factors) {
    log(`## agreement factor ${factor}`);
    for (const s of sources) {
      const r = estimateSync(s.ideal, s.P, s.K, s.C, { agreementFactor: factor });
      log(
        `${s.name}, in step: estimable ${r.estimable}, offsets ${r.offsets.join(' ')}, residual lag 0 / best (px) ${r.residualAtZeroPx.map((x, c) => `${f1(x)}/${f1(r.residualAtBestPx[c])}`).join(' ')}, detection limit ${r.detectableFrames.map((x) => x ?? '-').join(' ')}`,
      );
      if (s.name === 'invented legs') continue;
      const missed: string[] = [],
        ratios: number[] = [];
      let n = 0;
      for (let c = 0; c < s.C; c++)
        for (const by of [-8, -5, -3, 3, 5, 8]) {
          const x = estimateSync(shifted(s, c, by), s.P, s.K, s.C, { agreementFactor: factor });
          n++;
          const z = x.residualAtZeroPx[c],
            b = x.residualAtBestPx[c];
          if (z && b) ratios.push(b / z);
          if (!(Math.abs((x.offsets[c] ?? 0) + by) <= 1 && x.offsets.every((o, i) => i === c || o === 0)))
            missed.push(`${s.cams[c]} ${by}: ${x.offsets.join('/')}${x.estimable ? '' : ' (not estimable)'}`);
        }
      log(
        `${s.name}, one camera shifted ±3/±5/±8: found within ±1 frame ${n - missed.length} of ${n}; best/lag-0 ${ratios.length ? `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}` : '-'}${missed.length ? `; missed: ${missed.join('; ')}` : ''}`,
      );
    }
    log();
  }
}

await main();
