/**
 * `npm run capture:validate [-- --frames N] [--skip-video] [--model movenet|movenet-thunder|bodypix|FILE.onnx]`
 *
 * Accuracy tables, one per configuration (never one averaged number):
 *  1. synthetic rigs with known motion: 2/3/4 cameras × 0/1/3 px noise × frontal/oblique layouts →
 *     angle MAE per joint, share of readings omitted by the observability gate, shoulder/elbow
 *     error with and without the gate;
 *  2. checkerboard intrinsics on the demo photos vs Calib_qualisys.toml;
 *  3. the Pose2Sim demo BalancingTrial: our 3D from their 2D JSON vs their TRC (per marker);
 *  4. our 3D from our own 2D pose on their videos vs their TRC, and our 2D vs their OpenPose per joint;
 *  5. the figure a clinician should read: per joint, our angles from video vs our angles from the
 *     trial's OpenPose 2D (same triangulation, filter and definitions; mean and p95 |difference|),
 *     with each reading's trustworthy verdict and failed conditions from both sources.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { computeJointSeries, FLEXION_OBSERVABILITY_GATE } from '../../models/capture/angles';
import { projectionMatrix } from '../../models/capture/camera';
import { COCO17 } from '../../models/capture/keypoints';
import { postProcess } from '../../models/capture/summary';
import { projectFrames, ringCamera, syntheticMotion, syntheticPose, type SyntheticAngles } from '../../models/capture/synthetic';
import { parseTrc } from '../../models/capture/trc';
import { median, quantile } from '../../models/capture/vec';
import { calibrateIntrinsics, loadTomlCalibration } from './calibration';
import { compareWithTrc } from './compare';
import { hasAddon, triangulationAddon } from './native/index';
import { processTrial } from './pipeline';
import { lastPoseRunStats } from './pose/run';
import type { PoseEstimatorSpec } from './pose/types';
import { BALANCING, DEMO, DEMO_CALIB, hasBodyPix, hasDemo, NO_DEMO } from './testing/paths';

const { values } = parseArgs({ options: { frames: { type: 'string' }, 'skip-video': { type: 'boolean' }, model: { type: 'string' } } });
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

// ---------------------------------------------------------------- 3/4. demo
function markerTable(title: string, c: ReturnType<typeof compareWithTrc>): void {
  log(title);
  tableOut(
    ['marker', 'frames', 'median mm', 'p95 mm'],
    [...c.markers.map((m) => [m.marker, m.n, f1(m.medianMm), f1(m.p95Mm)]), ['ALL markers', c.all.n, f1(c.all.medianMm), f1(c.all.p95Mm)]],
  );
}

async function demo(): Promise<void> {
  if (!hasDemo) {
    log(`## 3–4. Pose2Sim demo: ${NO_DEMO}`);
    return;
  }
  const trc = parseTrc(readFileSync(path.join(BALANCING, 'pose-3d', 'S00_P00_T01_BalancingTrial_0-100.trc'), 'utf8'));
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
    log('## 4. skipped (--skip-video)');
    return;
  }
  if (!hasAddon('opencv') || !hasBodyPix) {
    log('## 4. skipped: OpenCV addon or BodyPix model missing');
    return;
  }
  const frames = values.frames ? Number(values.frames) : 100;
  const spec: PoseEstimatorSpec =
    !values.model || values.model === 'movenet'
      ? { kind: 'movenet' }
      : values.model === 'movenet-thunder'
        ? { kind: 'movenet', variant: 'thunder' }
        : values.model === 'bodypix'
          ? { kind: 'bodypix' }
          : { kind: 'onnx-simcc', modelPath: path.resolve(values.model) };
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
  const t0 = performance.now();
  let last = '';
  const r = await processTrial({
    trialDir: BALANCING,
    calibPath: DEMO_CALIB,
    pose: spec,
    maxFrames: frames,
    tap: { camera: 0, x: tx / tn, y: ty / tn },
    onProgress: (s, d, n) => {
      const q = `${s} ${Math.floor((d / n) * 10)}`;
      if (q !== last) {
        process.stderr.write(`${s} ${d}/${n}\n`);
        last = q;
      }
    },
  });
  const secs = (performance.now() - t0) / 1000;
  const trcSub = { ...trc, frames: Math.min(trc.frames, frames) };
  markerTable(
    `## 4. BalancingTrial: our 3D from OUR 2D pose (${lastPoseRunStats?.estimator ?? spec.kind}) on their videos (${frames} frames × 4 cameras) vs their raw TRC`,
    compareWithTrc(r.filled, r.keypointSet, trcSub),
  );
  log(
    `views excluded (> 15 px) per camera: ${r.cameras.map((c, i) => `${c.name} ${r.triangulation.excludedCounts[i]}`).join(', ')}; missing point-frames ${Array.from(r.triangulation.points).filter((x, i) => i % 3 === 0 && Number.isNaN(x)).length} of ${r.frames * 17}`,
  );
  log(`end-to-end ${secs.toFixed(1)} s (${JSON.stringify(Object.fromEntries(Object.entries(r.timings).map(([k, v]) => [k, Number(v.toFixed(2))])))})`);
  log();
  // 2D agreement with OpenPose, per joint and camera (COCO 5–16), on frames where OpenPose conf ≥ 0.3
  log("### 2D agreement with the demo's OpenPose (pose-associated) keypoints, median px (p90) per joint");
  const names = ['shoulder', 'elbow', 'wrist', 'hip', 'knee', 'ankle'];
  const rows: (string | number)[][] = [];
  const allCam: number[][] = r.cameras.map(() => []);
  for (const [gi, g] of names.entries()) {
    const row: (string | number)[] = [g];
    const all: number[] = [];
    for (let c = 0; c < C; c++) {
      const d: number[] = [];
      for (let f = 0; f < r.frames; f++)
        for (const k of [5 + gi * 2, 6 + gi * 2]) {
          const o = ((f * K25 + k) * C + c) * 3,
            m = ((f * 17 + k) * C + c) * 3;
          if (ref0[o + 2]! < 0.3 || !(r.observations[m + 2]! > 0)) continue;
          d.push(Math.hypot(ref0[o]! - r.observations[m]!, ref0[o + 1]! - r.observations[m + 1]!));
        }
      row.push(`${f1(median(d))} (${f1(quantile(d, 0.9))})`);
      all.push(...d);
      allCam[c]!.push(...d);
    }
    row.push(`${f1(median(all))} (${f1(quantile(all, 0.9))})`);
    rows.push(row);
  }
  rows.push([
    'ALL joints',
    ...allCam.map((d) => `${f1(median(d))} (${f1(quantile(d, 0.9))})`),
    `${f1(median(allCam.flat()))} (${f1(quantile(allCam.flat(), 0.9))})`,
  ]);
  tableOut(['joint (L+R)', ...r.cameras.map((c) => c.name), 'all cameras'], rows);
  angleAgreement(r, fromJson);
}

/**
 * Section 5: per joint and side, |angle from video − angle from OpenPose JSON| per frame (filtered
 * 3D, frames where both exist): mean, p95 and max in degrees, with the trustworthy verdict and the
 * failed conditions each source stored. This is the real-data figure a clinician should read: how
 * far the number moves when only the 2D model changes.
 */
function angleAgreement(video: Awaited<ReturnType<typeof processTrial>>, json: Awaited<ReturnType<typeof processTrial>>): void {
  log(`## 5. Joint angles: our pipeline on video (${video.frames} frames) vs on the trial's OpenPose 2D JSON — |difference| in degrees per frame`);
  log(
    'Same calibration, triangulation, filter and angle definitions; only the 2D source differs. Not ground truth: it bounds how much the 2D model alone moves each number.',
  );
  log();
  const sv = computeJointSeries(video.filtered, video.keypointSet),
    sj = computeJointSeries(json.filtered, json.keypointSet);
  const rows: (string | number)[][] = [];
  const verdict = (r: Awaited<ReturnType<typeof processTrial>>, joint: string, side: string) => {
    const m = r.rows.find((x) => x.joint === joint && x.side === side && x.statistic === 'mean');
    if (!m) return '-';
    if (m.omitted_reason) return `omitted (${m.omitted_reason})`;
    const failed = m.conditions.filter((c) => c.code !== 'static_trial' && c.code !== 'camera_offset_corrected').map((c) => c.code);
    return m.trustworthy ? 'yes' : `no: ${failed.join(', ')}`;
  };
  for (const a of sv) {
    const b = sj.find((x) => x.joint === a.joint && x.side === a.side);
    if (!b || !a.measurable || !b.measurable) continue;
    const d: number[] = [];
    for (let f = 0; f < Math.min(video.frames, json.frames); f++) {
      const x = a.angleDeg[f] ?? NaN,
        y = b.angleDeg[f] ?? NaN;
      if (Number.isFinite(x) && Number.isFinite(y)) d.push(Math.abs(x - y));
    }
    const mean = d.length ? d.reduce((s, x) => s + x, 0) / d.length : NaN;
    rows.push([
      a.joint,
      a.side,
      d.length,
      f1(mean),
      f1(quantile(d, 0.95)),
      f1(d.length ? Math.max(...d) : NaN),
      verdict(video, a.joint, a.side),
      verdict(json, a.joint, a.side),
    ]);
  }
  tableOut(['joint', 'side', 'frames', 'mean |Δ|°', 'p95 |Δ|°', 'max |Δ|°', 'trustworthy from video', 'trustworthy from JSON'], rows);
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
