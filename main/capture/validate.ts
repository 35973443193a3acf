/**
 * `npm run capture:validate [-- --frames N] [--skip-video] [--model blazepose|blazepose-lite|movenet|movenet-thunder|bodypix|FILE.onnx] [--cross-check MODEL[,MODEL…]|none] [--cache-2d DIR]`
 *
 * Accuracy tables, one per configuration (never one averaged number):
 *  1. synthetic rigs with known motion: 2/3/4 cameras × 0/1/3 px noise × frontal/oblique layouts →
 *     angle MAE per joint, share of readings omitted by the observability gate, shoulder/elbow
 *     error with and without the gate;
 *  2. checkerboard intrinsics on the demo photos vs Calib_qualisys.toml;
 *  3. the Pose2Sim demo BalancingTrial: our 3D from their 2D JSON vs their TRC (per marker, regression);
 *  4. our 3D per joint vs their TRC from both 2D sources (their OpenPose JSON; our 2D model on their
 *     videos), mean / p95 mm; and our 2D vs their OpenPose per joint and camera (px);
 *  5. the figure a clinician should read: per joint angle, our angles from video vs from the trial's
 *     OpenPose 2D, and each vs the same definitions on Pose2Sim's filtered TRC (mean / p95 degrees),
 *     with each reading's trustworthy verdict and failed conditions from both sources, the share of
 *     its frames resting on a keypoint triangulated from only two cameras (`two_view_keypoints`),
 *     and the video-vs-JSON difference in those frames vs in cross-checked frames;
 *  6. the second-model cross-check (`--cross-check MODEL[,MODEL…]|none`, default MoveNet Thunder for
 *     MoveNet Lightning, else MoveNet Lightning), one table per second model: per reading, its error
 *     from the JSON's, the two models' angle difference (the `model_disagreement` criterion), the
 *     keypoint they place furthest apart, the verdict; whether each criterion separates good readings
 *     from bad ones.
 * `--cache-2d DIR` keeps each model's 2D poses in DIR (`testing/pose-cache.ts`): a rerun, or another
 * cross-check model, does not redo the 2D pass of a model already there.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { computeJointSeries, FLEXION_OBSERVABILITY_GATE, type JointSeries } from '../../models/capture/angles';
import { projectionMatrix } from '../../models/capture/camera';
import { COCO17, POSE2SIM_TRC_MARKERS, type KeypointSet } from '../../models/capture/keypoints';
import { postProcess } from '../../models/capture/summary';
import { INFO_CONDITIONS, MODEL_DISAGREEMENT_MAX_DEG, readingAngleDifference, readingModelDistances, uncheckedFrames } from '../../models/capture/quality';
import { projectFrames, ringCamera, syntheticMotion, syntheticPose, type SyntheticAngles } from '../../models/capture/synthetic';
import { parseTrc, type TrcData } from '../../models/capture/trc';
import { median, quantile } from '../../models/capture/vec';
import { calibrateIntrinsics, loadTomlCalibration } from './calibration';
import { compareWithTrc } from './compare';
import { hasAddon, triangulationAddon } from './native/index';
import { poseModelLabel, processTrial } from './pipeline';
import { findVideos, probeVideos } from './sources';
import { cachedVideoPoses } from './testing/pose-cache';
import { parsePoseModel } from './pose/types';
import { BALANCING, DEMO, DEMO_CALIB, hasBodyPix, hasDemo, NO_DEMO } from './testing/paths';

const { values } = parseArgs({
  options: {
    frames: { type: 'string' },
    'skip-video': { type: 'boolean' },
    model: { type: 'string' },
    'cross-check': { type: 'string' },
    'cache-2d': { type: 'string' },
  },
});
const log = (s = '') => process.stdout.write(`${s}\n`);
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '-');

function tableOut(head: string[], rows: (string | number)[][]): void {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  log(`| ${head.map((h, i) => h.padEnd(w[i]!)).join(' | ')} |`);
  log(`| ${w.map((x) => '-'.repeat(x)).join(' | ')} |`);
  for (const r of rows) log(`| ${r.map((c, i) => String(c).padStart(w[i]!)).join(' | ')} |`);
  log();
}

// ---------------------------------------------------------------- 1. synthetic rigs
const LAYOUTS: Record<string, Record<number, number[]>> = {
  frontal: { 2: [-20, 20], 3: [-25, 0, 25], 4: [-30, -10, 10, 30] },
  oblique: { 2: [45, -45], 3: [90, 45, -45], 4: [90, 45, -45, -90] },
};

function synthetic(): void {
  log('## 1. Synthetic rigs with known motion (squat-and-reach from arms abducted 85° to arms forward 90°, 120 frames at 60 fps)');
  log(
    `Angle MAE in degrees over all frames and both sides, after triangulation (${hasAddon('triangulation') ? 'native' : 'TS reference'}) and the 6 Hz Butterworth.`,
  );
  log(
    `Shoulder/elbow: "gated" = frames passing the sagittal-ratio gate (≥ ${FLEXION_OBSERVABILITY_GATE}); "all" = every frame. Gate share = readings omitted by the gate.`,
  );
  log();
  const F = 120,
    fps = 60;
  const motion: SyntheticAngles[] = syntheticMotion(F).map((m, i) => {
    const s = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (F - 1));
    return { ...m, shoulderAbduction: { left: 85 * (1 - s), right: 85 * (1 - s) } };
  });
  const truthFrames = motion.map((m) => syntheticPose(m));
  const truth = Float64Array.from(truthFrames.flat(2));
  const rows: (string | number)[][] = [];
  for (const layout of ['frontal', 'oblique']) {
    for (const n of [2, 3, 4]) {
      for (const noise of [0, 1, 3]) {
        const cams = LAYOUTS[layout]![n]!.map((y, i) => ringCamera(`c${i}`, y));
        const P = Float64Array.from(cams.flatMap(projectionMatrix));
        const obs = projectFrames(cams, truthFrames, noise, 11 + n * 7 + noise);
        const tri = hasAddon('triangulation') ? triangulationAddon().triangulate(P, obs, n) : null;
        if (!tri) throw new Error('build the native addon first (npm run build:native)');
        const pts = postProcess(tri.points, 17, { fps }).points;
        let se = 0,
          cnt = 0;
        for (let i = 0; i < pts.length; i++)
          if (Number.isFinite(pts[i])) {
            se += (pts[i]! - truth[i]!) ** 2;
            cnt++;
          }
        const series = computeJointSeries(pts, COCO17);
        const err = (joint: string, key: 'hipFlexion' | 'kneeFlexion' | 'shoulderFlexion' | 'elbowFlexion', gated: boolean) => {
          let sum = 0,
            k = 0,
            omitted = 0,
            total = 0;
          for (const side of ['left', 'right'] as const) {
            const s = series.find((x) => x.joint === joint && x.side === side)!;
            for (let f = 0; f < F; f++) {
              const a = s.angleDeg[f]!;
              if (!Number.isFinite(a)) continue;
              total++;
              if (gated && !(s.sagittalRatio[f]! >= FLEXION_OBSERVABILITY_GATE)) {
                omitted++;
                continue;
              }
              sum += Math.abs(a - motion[f]![key][side]);
              k++;
            }
          }
          return { mae: k ? sum / k : NaN, share: total ? omitted / total : NaN };
        };
        const sh = err('shoulder_flexion', 'shoulderFlexion', true),
          shAll = err('shoulder_flexion', 'shoulderFlexion', false);
        const el = err('elbow_flexion', 'elbowFlexion', true),
          elAll = err('elbow_flexion', 'elbowFlexion', false);
        rows.push([
          layout,
          n,
          noise,
          f1(Math.sqrt(se / Math.max(1, cnt)) * 1000),
          f2(err('hip_flexion', 'hipFlexion', true).mae),
          f2(err('knee_flexion', 'kneeFlexion', true).mae),
          f2(sh.mae),
          f2(shAll.mae),
          f2(el.mae),
          f2(elAll.mae),
          `${(sh.share * 100).toFixed(0)} %`,
        ]);
      }
    }
  }
  tableOut(['layout', 'cams', 'noise px', '3D RMSE mm', 'hip', 'knee', 'shoulder gated', 'shoulder all', 'elbow gated', 'elbow all', 'gate share'], rows);
}

// ---------------------------------------------------------------- 2. checkerboard intrinsics
function intrinsics(): void {
  log('## 2. Checkerboard intrinsics (OpenCV calibrateCamera, 4×7 inner corners, 60 mm) vs Calib_qualisys.toml');
  if (!hasAddon('opencv')) {
    log('skipped: the OpenCV addon is not built');
    return;
  }
  const toml = loadTomlCalibration(DEMO_CALIB);
  const rows: (string | number)[][] = [];
  toml.forEach((ref, i) => {
    const cam = String(i + 1).padStart(2, '0');
    const imgs = Array.from({ length: 7 }, (_, k) => path.join(DEMO, 'S00_Calibration', 'intrinsics', `int_cam${cam}_img`, `cam${cam}_0${k + 1}_int.jpg`));
    const r = calibrateIntrinsics(imgs, { cols: 4, rows: 7, squareM: 0.06 });
    const pct = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(2)} %`;
    rows.push([
      ref.name,
      `${r.used}/7`,
      f2(r.rmsPx),
      f1(r.K[0]!),
      f1(ref.K[0]!),
      pct(r.K[0]!, ref.K[0]!),
      pct(r.K[4]!, ref.K[4]!),
      f1(r.K[2]! - ref.K[2]!),
      f1(r.K[5]! - ref.K[5]!),
    ]);
  });
  tableOut(['camera', 'boards found', 'RMS px', 'fx ours', 'fx TOML', 'fx diff', 'fy diff', 'cx diff px', 'cy diff px'], rows);
}

// ---------------------------------------------------------------- 3/4/5. demo
function markerTable(title: string, c: ReturnType<typeof compareWithTrc>): void {
  log(title);
  tableOut(
    ['marker', 'frames', 'median mm', 'p95 mm'],
    [...c.markers.map((m) => [m.marker, m.n, f1(m.medianMm), f1(m.p95Mm)]), ['ALL markers', c.all.n, f1(c.all.medianMm), f1(c.all.p95Mm)]],
  );
}

/** Our name of a BODY_25B keypoint in `set`: the same name, or the foot index (BlazePose) for a big toe; '' when absent. */
function inSet(set: KeypointSet, name: string): string {
  if (set.includes(name)) return name;
  const alias = name.replace('big_toe', 'foot_index');
  return set.includes(alias) ? alias : '';
}

/** A Pose2Sim TRC as F×K×3 points in `set` (markers mapped by `POSE2SIM_TRC_MARKERS`, big toe → foot index for BlazePose; keypoints it lacks are NaN). */
function trcAsPoints(trc: TrcData, set: KeypointSet): Float64Array {
  const K = set.length,
    M = trc.markers.length;
  const out = new Float64Array(trc.frames * K * 3).fill(NaN);
  trc.markers.forEach((name, m) => {
    const k = set.indexOf(inSet(set, POSE2SIM_TRC_MARKERS[name] ?? ''));
    if (k < 0) return;
    for (let f = 0; f < trc.frames; f++) for (let d = 0; d < 3; d++) out[(f * K + k) * 3 + d] = trc.points[(f * M + m) * 3 + d]!;
  });
  return out;
}

/** Per-keypoint 3D distance (mm) between two F×K×3 arrays in different sets, over the names both have: mean and p95 per name. */
function jointDistances(a: Float64Array, sa: KeypointSet, b: Float64Array, sb: KeypointSet, frames: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const name of sa) {
    const i = sa.indexOf(name),
      j = sb.indexOf(name);
    if (j < 0) continue;
    const d: number[] = [];
    for (let f = 0; f < frames; f++) {
      const p = (f * sa.length + i) * 3,
        q = (f * sb.length + j) * 3;
      const x = Math.hypot(a[p]! - b[q]!, a[p + 1]! - b[q + 1]!, a[p + 2]! - b[q + 2]!);
      if (Number.isFinite(x)) d.push(x * 1000);
    }
    if (d.length) out.set(name, d);
  }
  return out;
}
const meanOf = (d: number[]) => (d.length ? d.reduce((s, x) => s + x, 0) / d.length : NaN);
const mp95 = (d: number[] | undefined) => (d && d.length ? `${f1(meanOf(d))} / ${f1(quantile(d, 0.95))}` : '-');

async function demo(): Promise<void> {
  if (!hasDemo) {
    log(`## 3–5. Pose2Sim demo: ${NO_DEMO}`);
    return;
  }
  const trc = parseTrc(readFileSync(path.join(BALANCING, 'pose-3d', 'S00_P00_T01_BalancingTrial_0-100.trc'), 'utf8'));
  const trcFilt = parseTrc(readFileSync(path.join(BALANCING, 'pose-3d', 'S00_P00_T01_BalancingTrial_0-100_filt_butterworth.trc'), 'utf8'));
  const fromJson = await processTrial({ trialDir: BALANCING, calibPath: DEMO_CALIB, useTrialKeypoints: true });
  markerTable(
    '## 3. BalancingTrial: our 3D from their 2D JSON (pose-associated) vs their raw TRC (_0-100.trc), gap-filled, unfiltered',
    compareWithTrc(fromJson.filled, fromJson.keypointSet, trc),
  );
  log(
    `views excluded (> 15 px) per camera: ${fromJson.cameras.map((c, i) => `${c.name} ${fromJson.triangulation.excludedCounts[i]}`).join(', ')}; median reprojection error ${f1(median(fromJson.triangulation.reprojectionPx))} px`,
  );
  log();
  if (values['skip-video']) {
    log('## 4–5. skipped (--skip-video)');
    return;
  }
  if (!hasAddon('opencv') || !hasBodyPix) {
    log('## 4–5. skipped: OpenCV addon or BodyPix model missing');
    return;
  }
  const frames = values.frames ? Number(values.frames) : 100;
  const spec = parsePoseModel(values.model, (p) => path.resolve(p));
  if (!spec) throw new Error(`--model: unknown model "${values.model}"`);
  // tap: centre of the OpenPose athlete in cam01, frame 0 (what a clinician would tap)
  const ref0 = fromJson.observations;
  const K25 = fromJson.keypointSet.length,
    C = fromJson.cameras.length;
  let tx = 0,
    ty = 0,
    tn = 0;
  for (let k = 5; k < 17; k++) {
    const o = (k * C + 0) * 3;
    if (ref0[o + 2]! >= 0.3) {
      tx += ref0[o]!;
      ty += ref0[o + 1]!;
      tn++;
    }
  }
  // 2D poses first (cached with --cache-2d DIR), so every cross-check model reuses the primary's
  const crossNames = (values['cross-check'] ?? (spec.kind === 'movenet' && spec.variant !== 'thunder' ? 'movenet-thunder' : 'movenet'))
    .split(',')
    .filter((x) => x && x !== 'none');
  const crossSpecs = crossNames.map((n) => {
    const c = parsePoseModel(n, (p) => path.resolve(p));
    if (!c) throw new Error(`--cross-check: unknown model "${n}" (or none)`);
    return c;
  });
  const videos = probeVideos(fromJson.cameras, findVideos(BALANCING));
  const frames2d = Math.min(frames, videos[0]!.frames);
  const cacheDir = values['cache-2d'] ? path.resolve(values['cache-2d']) : undefined;
  const t0 = performance.now();
  let last = '';
  const onProgress = (st: string, d: number, n: number) => {
    const q = `${st} ${Math.floor((d / n) * 10)}`;
    if (q !== last) {
      process.stderr.write(`${st} ${d}/${n}\n`);
      last = q;
    }
  };
  const twoD = new Map<string, Awaited<ReturnType<typeof cachedVideoPoses>>>();
  for (const [n, sp] of [[values.model ?? 'movenet', spec] as const, ...crossNames.map((x, i) => [x, crossSpecs[i]!] as const)])
    twoD.set(n, await cachedVideoPoses(videos, frames2d, n.replace(/[^a-z0-9.-]/gi, '_'), sp, cacheDir, onProgress));
  const primary2d = twoD.get(values.model ?? 'movenet')!;
  const runWith = (i: number | null) =>
    processTrial({
      trialDir: BALANCING,
      calibPath: DEMO_CALIB,
      pose: spec,
      maxFrames: frames,
      ...(i === null ? {} : { crossCheck: crossSpecs[i]! }),
      precomputed: { primary: primary2d.people, ...(i === null ? {} : { crossCheck: twoD.get(crossNames[i]!)!.people }) },
      tap: { camera: 0, x: tx / tn, y: ty / tn },
    });
  const r = await runWith(crossSpecs.length ? 0 : null);
  const crossRuns = [r, ...(await Promise.all(crossSpecs.slice(1).map((_, i) => runWith(i + 1))))].filter((x) => x.crossCheck);
  log(
    `2D pass per model (4 cameras × ${frames2d} frames${cacheDir ? `, cache ${cacheDir}` : ''}): ${[...twoD].map(([n, x]) => `${n} ${x.cached ? 'from the cache' : `${x.cpuS.toFixed(1)} CPU-s (${x.wallS.toFixed(1)} s wall)`}`).join('; ')}`,
  );
  const secs = (performance.now() - t0) / 1000;
  const Kv = r.keypointSet.length;
  // 4. our 3D per joint vs their TRC, from both 2D sources
  const trcSub = { ...trc, frames: Math.min(trc.frames, frames) };
  log(
    `## 4. Our 3D per joint vs Pose2Sim's raw TRC (their triangulation of OpenPose), from both 2D sources: their OpenPose JSON, and ${poseModelLabel(spec)} on their videos (${r.frames} frames × ${C} cameras) — mean / p95 distance, mm (gap-filled, unfiltered)`,
  );
  const trcJ = trcAsPoints(trcSub, fromJson.keypointSet),
    trcV = trcAsPoints(trcSub, r.keypointSet);
  const dJ = jointDistances(fromJson.filled, fromJson.keypointSet, trcJ, fromJson.keypointSet, trcSub.frames),
    dV = jointDistances(r.filled, r.keypointSet, trcV, r.keypointSet, trcSub.frames);
  const jointRows: (string | number)[][] = [];
  for (const m of trc.markers) {
    const name = POSE2SIM_TRC_MARKERS[m];
    if (!name) continue;
    const vname = inSet(r.keypointSet, name);
    jointRows.push([m, mp95(dJ.get(name)), `${mp95(dV.get(vname))}${vname && vname !== name ? ' (foot index)' : ''}`]);
  }
  const all = (d: Map<string, number[]>) => [...d.values()].flat();
  jointRows.push(['ALL joints', mp95(all(dJ)), mp95(all(dV))]);
  tableOut(['TRC marker', 'from OpenPose JSON', `from video (${poseModelLabel(spec)})`], jointRows);
  log(
    `video: views excluded (> 15 px) per camera: ${r.cameras.map((c, i) => `${c.name} ${r.triangulation.excludedCounts[i]}`).join(', ')}; missing point-frames ${Array.from(r.triangulation.points).filter((x, i) => i % 3 === 0 && Number.isNaN(x)).length} of ${r.frames * Kv}`,
  );
  log(`end-to-end ${secs.toFixed(1)} s (${JSON.stringify(Object.fromEntries(Object.entries(r.timings).map(([k, v]) => [k, Number(v.toFixed(2))])))})`);
  log();
  // 2D agreement with OpenPose, per joint and camera, on frames where OpenPose conf ≥ 0.3
  log("### 2D agreement with the demo's OpenPose (pose-associated) keypoints, median px (p90) per joint");
  const names = ['shoulder', 'elbow', 'wrist', 'hip', 'knee', 'ankle', 'heel', 'big_toe'];
  const rows: (string | number)[][] = [];
  const allCam: number[][] = r.cameras.map(() => []);
  for (const g of names) {
    const row: (string | number)[] = [g];
    const allG: number[] = [];
    for (let c = 0; c < C; c++) {
      const d: number[] = [];
      for (const side of ['left', 'right']) {
        const kj = fromJson.keypointSet.indexOf(`${side}_${g}`);
        const ours = g === 'big_toe' && !r.keypointSet.includes(`${side}_big_toe`) ? `${side}_foot_index` : `${side}_${g}`;
        const kv = r.keypointSet.indexOf(ours);
        if (kj < 0 || kv < 0) continue;
        for (let f = 0; f < r.frames; f++) {
          const o = ((f * K25 + kj) * C + c) * 3,
            m = ((f * Kv + kv) * C + c) * 3;
          if (ref0[o + 2]! < 0.3 || !(r.observations[m + 2]! > 0)) continue;
          d.push(Math.hypot(ref0[o]! - r.observations[m]!, ref0[o + 1]! - r.observations[m + 1]!));
        }
      }
      row.push(d.length ? `${f1(median(d))} (${f1(quantile(d, 0.9))})` : '-');
      allG.push(...d);
      if (g !== 'heel' && g !== 'big_toe') allCam[c]!.push(...d);
    }
    if (!allG.length) continue;
    row.push(`${f1(median(allG))} (${f1(quantile(allG, 0.9))})`);
    rows.push(row);
  }
  rows.push([
    'ALL body joints (no feet)',
    ...allCam.map((d) => `${f1(median(d))} (${f1(quantile(d, 0.9))})`),
    `${f1(median(allCam.flat()))} (${f1(quantile(allCam.flat(), 0.9))})`,
  ]);
  tableOut(['joint (L+R)', ...r.cameras.map((c) => c.name), 'all cameras'], rows);
  angleAgreement(r, fromJson, trcFilt);
  if (!crossRuns.length) log('## 6. Second-model cross-check: skipped (--cross-check none)\n');
  for (const x of crossRuns) modelCrossCheck(x, fromJson);
}

/** Spearman rank correlation of two equal-length lists (average ranks for ties are not needed here: values are continuous). */
function spearman(a: number[], b: number[]): number {
  const rank = (v: number[]) => {
    const r = new Array<number>(v.length);
    v.map((x, i) => [x, i] as const)
      .sort((p, q) => p[0] - q[0])
      .forEach(([, i], j) => (r[i] = j));
    return r;
  };
  const ra = rank(a),
    rb = rank(b);
  const ma = meanOf(ra),
    mb = meanOf(rb);
  let n = 0,
    da = 0,
    db = 0;
  for (let i = 0; i < a.length; i++) {
    n += (ra[i]! - ma) * (rb[i]! - mb);
    da += (ra[i]! - ma) ** 2;
    db += (rb[i]! - mb) ** 2;
  }
  return n / Math.sqrt(da * db);
}

/**
 * Section 6: the second-model cross-check, one table per second model. Per reading of the video
 * run: its mean / p95 |Δ| from the JSON's (the reference), the second model's own mean |Δ| from the
 * JSON's, the two models' angle difference (the criterion: mean / p95 degrees over the reading's
 * reported frames, bound {@link MODEL_DISAGREEMENT_MAX_DEG}), the keypoint they place furthest apart
 * (median mm; the earlier criterion, bound 60 mm) and the verdict. Then whether each criterion
 * separates good readings from bad ones: mean error of flagged vs passing readings, Spearman rank
 * correlation over readings, and per frame the error where the two models differ by more than 10°;
 * last, per joint, whether the two models' 3D misplacements (from the JSON's) are independent.
 */
function modelCrossCheck(video: Awaited<ReturnType<typeof processTrial>>, json: Awaited<ReturnType<typeof processTrial>>): void {
  const x = video.crossCheck!;
  log(
    `## 6. Second-model cross-check: ${x.primaryModel} vs ${x.model} on the same ${video.frames} frames — per reading, its |Δ| from the JSON's angle (the reference), the two models' angle difference (the criterion; model_disagreement above ${MODEL_DISAGREEMENT_MAX_DEG}° mean), and the keypoint they place furthest apart (median mm; the earlier 60 mm criterion)`,
  );
  log(`${x.model} views excluded (> 15 px) per camera: ${video.cameras.map((c, i) => `${c.name} ${x.excludedCounts[i]}`).join(', ')}`);
  log();
  const check = {
    primary: x.primaryModel,
    secondary: x.model,
    primarySet: video.keypointSet,
    primaryPoints: video.filtered,
    secondarySet: x.keypointSet,
    secondaryPoints: x.filtered,
  };
  const second = computeJointSeries(x.filtered, x.keypointSet);
  const jsonSeries = computeJointSeries(json.filtered, json.keypointSet);
  const rows: (string | number)[][] = [];
  const per: { err: number; deg: number; mm: number; flagged: boolean; mmFlagged: boolean; frames: number[] }[] = [];
  const frameErr: number[] = [],
    frameDiff: number[] = [];
  for (const o of video.outcomes) {
    if (o.omitted) continue;
    const j = jsonSeries.find((y) => y.joint === o.series.joint && y.side === o.series.side);
    const b = second.find((y) => y.joint === o.series.joint && y.side === o.series.side && y.measurable);
    const e: number[] = [],
      eb: number[] = [];
    const mirror = o.series.side === 'right' && (o.series.joint === 'pelvic_obliquity' || o.series.joint === 'trunk_lateral_lean');
    for (let f = 0; f < o.perFrame.length; f++) {
      const a = o.perFrame[f] ?? NaN,
        jv = j?.angleDeg[f] ?? NaN,
        bv = b?.angleDeg[f] ?? NaN;
      if (Number.isFinite(a) && Number.isFinite(jv)) e.push(Math.abs(a - jv));
      if (Number.isFinite(a) && Number.isFinite(bv) && Number.isFinite(jv)) {
        eb.push(Math.abs(bv - jv));
        if (!mirror) {
          frameErr.push(Math.abs(a - jv));
          frameDiff.push(Math.abs(a - bv));
        }
      }
    }
    const diff = readingAngleDifference(o.perFrame, b?.angleDeg ?? []);
    const dist = readingModelDistances(o.series.joint, o.series.side, o.perFrame, check);
    const m = video.rows.find((y) => y.joint === o.series.joint && y.side === o.series.side && y.statistic === 'mean');
    const flagged = Boolean(m?.conditions.some((c) => c.code === 'model_disagreement'));
    per.push({ err: meanOf(e), deg: diff.meanDeg, mm: dist[0]?.medianMm ?? NaN, flagged, mmFlagged: (dist[0]?.medianMm ?? 0) > 60, frames: e });
    rows.push([
      o.series.joint,
      o.series.side,
      mp95(e),
      f1(meanOf(eb)),
      `${f1(diff.meanDeg)} / ${f1(diff.p95Deg)}`,
      dist[0] ? `${dist[0].keypoint} ${f1(dist[0].medianMm)}` : '-',
      flagged ? 'model_disagreement' : 'model_difference',
    ]);
  }
  tableOut(['joint', 'side', `${x.primaryModel} vs JSON`, `${x.model} vs JSON`, 'models differ, ° mean / p95', 'furthest keypoint, mm', 'verdict'], rows);
  const split = (sel: (p: (typeof per)[number]) => boolean) => {
    const a = per.filter(sel),
      b = per.filter((p) => !sel(p));
    return `${a.length} readings, ${f1(meanOf(a.map((p) => p.err)))}° mean (per frame ${mp95(a.flatMap((p) => p.frames))}) vs ${b.length} passing, ${f1(meanOf(b.map((p) => p.err)))}° (per frame ${mp95(b.flatMap((p) => p.frames))})`;
  };
  log(`|Δ| from the JSON's, flagged vs passing: degrees criterion (> ${MODEL_DISAGREEMENT_MAX_DEG}° mean) ${split((p) => p.flagged)}`);
  log(`  earlier mm criterion (a keypoint > 60 mm): ${split((p) => p.mmFlagged)}`);
  const ok = per.filter((p) => Number.isFinite(p.err) && Number.isFinite(p.deg) && Number.isFinite(p.mm));
  log(
    `  Spearman rank correlation over readings, error vs criterion: degrees ${f2(
      spearman(
        ok.map((p) => p.err),
        ok.map((p) => p.deg),
      ),
    )}, mm ${f2(
      spearman(
        ok.map((p) => p.err),
        ok.map((p) => p.mm),
      ),
    )} (n = ${ok.length}; pelvic obliquity and trunk lean appear twice, as mirror values)`,
  );
  const over = frameErr.filter((_, i) => frameDiff[i]! > 10),
    under = frameErr.filter((_, i) => frameDiff[i]! <= 10);
  log(
    `  per frame (mirror readings once): where the two models differ by > 10° the reading is ${mp95(over)} from the JSON's (n = ${over.length}), elsewhere ${mp95(under)} (n = ${under.length})`,
  );
  log();
  // Is the second model's error independent of the primary's? Per joint: each model's median 3D
  // distance from the JSON's point, their distance from each other, and the cosine between their mean
  // offsets from the JSON's (1 = both misplace the joint the same way, which no cross-check can see).
  const jointRows: (string | number)[][] = [];
  for (const name of video.keypointSet) {
    const i = video.keypointSet.indexOf(name),
      k = x.keypointSet.indexOf(name),
      jj = json.keypointSet.indexOf(name);
    if (k < 0 || jj < 0 || name === 'nose') continue;
    const dA: number[] = [],
      dB: number[] = [],
      dAB: number[] = [];
    const oA = [0, 0, 0],
      oB = [0, 0, 0];
    let n = 0;
    const F = Math.min(video.frames, json.frames);
    for (let f = 0; f < F; f++) {
      const a = [0, 1, 2].map((d) => video.filtered[(f * video.keypointSet.length + i) * 3 + d]!);
      const b = [0, 1, 2].map((d) => x.filtered[(f * x.keypointSet.length + k) * 3 + d]!);
      const j = [0, 1, 2].map((d) => json.filtered[(f * json.keypointSet.length + jj) * 3 + d]!);
      const da = 1000 * Math.hypot(a[0]! - j[0]!, a[1]! - j[1]!, a[2]! - j[2]!),
        db = 1000 * Math.hypot(b[0]! - j[0]!, b[1]! - j[1]!, b[2]! - j[2]!),
        dab = 1000 * Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);
      if (Number.isFinite(da)) dA.push(da);
      if (Number.isFinite(db)) dB.push(db);
      if (Number.isFinite(dab)) dAB.push(dab);
      if (Number.isFinite(da) && Number.isFinite(db)) {
        for (let d = 0; d < 3; d++) {
          oA[d]! += a[d]! - j[d]!;
          oB[d]! += b[d]! - j[d]!;
        }
        n++;
      }
    }
    const cos = (oA[0]! * oB[0]! + oA[1]! * oB[1]! + oA[2]! * oB[2]!) / (Math.hypot(...oA) * Math.hypot(...oB));
    jointRows.push([name, f1(median(dA)), f1(median(dB)), f1(median(dAB)), n ? f2(cos) : '-']);
  }
  log(`Shared error per joint (filtered 3D, median mm over frames): is ${x.model}'s misplacement independent of ${x.primaryModel}'s?`);
  tableOut(['joint', `${x.primaryModel} – JSON`, `${x.model} – JSON`, 'between the models', 'cosine of mean offsets from JSON'], jointRows);
}

/**
 * Section 5: per joint and side, per-frame |Δ angle| (filtered 3D, frames where both exist):
 * our video pipeline vs our pipeline on the OpenPose JSON, and each vs the same angle definitions
 * applied to Pose2Sim's filtered TRC (their triangulation of OpenPose + their 4th-order 6 Hz
 * Butterworth) — mean and p95 in degrees — with the trustworthy verdict and failed conditions each
 * source stored. The first column is the figure a clinician should read (README).
 */
function angleAgreement(video: Awaited<ReturnType<typeof processTrial>>, json: Awaited<ReturnType<typeof processTrial>>, trcFilt: TrcData): void {
  log(
    `## 5. Joint angles per joint (the figure to read): |difference| per frame in degrees, mean / p95 — our pipeline on video (${video.frames} frames) vs on the trial's OpenPose 2D JSON, and each vs the same definitions on Pose2Sim's filtered TRC`,
  );
  log(
    "Same calibration, triangulation, filter and angle definitions for ours; the TRC is Pose2Sim's own triangulation and filter of the same OpenPose 2D. Not ground truth: it shows how far each number moves when only the 2D model (or the 3D tool) changes.",
  );
  log();
  const trcPts = trcAsPoints(trcFilt, json.keypointSet);
  const sv = computeJointSeries(video.filtered, video.keypointSet),
    sj = computeJointSeries(json.filtered, json.keypointSet),
    st = computeJointSeries(trcPts, json.keypointSet);
  const rows: (string | number)[][] = [];
  const verdict = (r: Awaited<ReturnType<typeof processTrial>>, joint: string, side: string) => {
    const m = r.rows.find((x) => x.joint === joint && x.side === side && x.statistic === 'mean');
    if (!m) return '-';
    if (m.omitted_reason) return `omitted (${m.omitted_reason})`;
    const failed = m.conditions.filter((c) => !INFO_CONDITIONS.includes(c.code)).map((c) => c.code);
    return m.trustworthy ? 'yes' : `no: ${failed.join(', ')}`;
  };
  const diff = (a: JointSeries | undefined, b: JointSeries | undefined, F: number) => {
    const d: number[] = [];
    if (!a || !b || !a.measurable || !b.measurable) return d;
    for (let f = 0; f < F; f++) {
      const x = a.angleDeg[f] ?? NaN,
        y = b.angleDeg[f] ?? NaN;
      if (Number.isFinite(x) && Number.isFinite(y)) d.push(Math.abs(x - y));
    }
    return d;
  };
  const F = Math.min(video.frames, json.frames, trcFilt.frames);
  // share of a reading's reported frames resting on a keypoint triangulated from < 3 views (two_view_keypoints)
  const twoView = (r: Awaited<ReturnType<typeof processTrial>>, joint: string, side: string) => {
    const o = r.outcomes.find((x) => x.series.joint === joint && x.series.side === side);
    if (!o || o.omitted) return '-';
    const u = uncheckedFrames(o.series.joint, o.series.side, r.keypointSet, r.triangulation.viewMask);
    const rep = Array.from(o.perFrame, (x, f) => [Number.isFinite(x), u[f] === 1] as const).filter(([ok]) => ok);
    return rep.length ? `${Math.round((100 * rep.filter(([, x]) => x).length) / rep.length)} %` : '-';
  };
  // |video − JSON| per frame, split by whether the video reading's frame rests on a two-view point
  const split: { unchecked: number[]; checked: number[] } = { unchecked: [], checked: [] };
  for (const o of video.outcomes) {
    const b = sj.find((x) => x.joint === o.series.joint && x.side === o.series.side);
    if (o.omitted || !b?.measurable) continue;
    const u = uncheckedFrames(o.series.joint, o.series.side, video.keypointSet, video.triangulation.viewMask);
    for (let f = 0; f < F; f++) {
      const x = o.perFrame[f] ?? NaN,
        y = b.angleDeg[f] ?? NaN;
      if (Number.isFinite(x) && Number.isFinite(y)) (u[f] ? split.unchecked : split.checked).push(Math.abs(x - y));
    }
  }
  for (const b of sj) {
    const a = sv.find((x) => x.joint === b.joint && x.side === b.side),
      t = st.find((x) => x.joint === b.joint && x.side === b.side);
    const vj = diff(a, b, F),
      vt = diff(a, t, F),
      jt = diff(b, t, F);
    if (!vj.length && !jt.length) continue;
    rows.push([
      b.joint,
      b.side,
      vj.length,
      mp95(vj),
      mp95(vt),
      mp95(jt),
      `${twoView(video, b.joint, b.side)} / ${twoView(json, b.joint, b.side)}`,
      verdict(video, b.joint, b.side),
      verdict(json, b.joint, b.side),
    ]);
  }
  tableOut(
    [
      'joint',
      'side',
      'frames',
      'video vs JSON',
      'video vs TRC',
      'JSON vs TRC',
      '2-view frames video / JSON',
      'trustworthy from video',
      'trustworthy from JSON',
    ],
    rows,
  );
  log(
    `video vs JSON over every reported reading, mean / p95 |Δ|: frames resting on a keypoint from only two cameras ${mp95(split.unchecked)} (n = ${split.unchecked.length}), cross-checked frames ${mp95(split.checked)} (n = ${split.checked.length})`,
  );
  log(
    `trial conditions from video: ${video.trialConditions.map((c) => c.code).join(', ') || 'none'}; from JSON: ${json.trialConditions.map((c) => c.code).join(', ') || 'none'}`,
  );
  log();
}

log(`# Measurement pipeline validation (${new Date().toISOString().slice(0, 10)})`);
log();
synthetic();
intrinsics();
await demo();
