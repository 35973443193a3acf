/**
 * 2D model comparison on the Pose2Sim demo BalancingTrial (`npm run capture:bench -- --models`):
 * every model's keypoints against the trial's OpenPose BODY_25B keypoints (pose-associated, the
 * athlete), per joint, in image pixels, and each model's speed (frames/s per core, decode timed
 * separately). Also a person-detector comparison: BodyPix mask boxes vs MoveNet MultiPose boxes.
 * Not ground truth: OpenPose itself is good to ≈ 8–17 px here (shared/data/models/README.md).
 */
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { BODY25B, type KeypointSet } from '../../../models/capture/keypoints';
import { personBox, type Keypoints2D } from '../../../models/capture/openpose';
import { median, quantile } from '../../../models/capture/vec';
import { loadTomlCalibration } from '../calibration';
import { openCvAddon, type RawImage } from '../native/index';
import { findKeypointFolders, findVideos, loadKeypointFolders, probeVideos } from '../sources';
import { BALANCING, DEMO_CALIB } from '../testing/paths';
import { defaultBodyPixPath, createPoseEstimator } from './estimator';
import { BodyPixDetector } from './bodypix';
import { iou } from './geometry';
import { loadTfjsGraph } from './tfjs';
import { poseKeypointSet, type Box, type PoseEstimator, type PoseEstimatorSpec } from './types';

/** Joint groups compared (left and right pooled), as BODY_25B names without the side. */
export const COMPARED_JOINTS = ['shoulder', 'elbow', 'wrist', 'hip', 'knee', 'ankle', 'heel', 'toe'] as const;

/** Our keypoint name for a BODY_25B joint group and side in `set` (toe = big toe or foot index), or null. */
function nameIn(set: KeypointSet, joint: (typeof COMPARED_JOINTS)[number], side: 'left' | 'right'): string | null {
  if (joint === 'toe') return set.includes(`${side}_big_toe`) ? `${side}_big_toe` : set.includes(`${side}_foot_index`) ? `${side}_foot_index` : null;
  return set.includes(`${side}_${joint}`) ? `${side}_${joint}` : null;
}

export interface ModelComparison {
  model: string;
  /** Per joint group: distances (px) to OpenPose over the sampled images. */
  perJoint: Record<string, number[]>;
  /** Images where the model returned a person near the athlete. */
  found: number;
  images: number;
  /** CPU seconds (all threads of this process) and wall seconds for detector + keypoints over the images. */
  cpuS: number;
  wallS: number;
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Mean distance (px) between two keypoint arrays over the athlete's confident COCO joints (5–16). */
function personDistance(ref: Keypoints2D, kp: Keypoints2D, set: KeypointSet): number {
  let s = 0,
    n = 0;
  for (let k = 5; k < 17; k++) {
    const j = set.indexOf(BODY25B[k]!);
    if (j < 0 || (ref[k * 3 + 2] ?? 0) < 0.3) continue;
    s += Math.hypot((ref[k * 3] ?? 0) - (kp[j * 3] ?? 0), (ref[k * 3 + 1] ?? 0) - (kp[j * 3 + 1] ?? 0));
    n++;
  }
  return n ? s / n : Infinity;
}

/** Decoded frames of the BalancingTrial at `frameIdx` for each camera, and decode CPU ms per frame (CPU time of this process, all threads; every frame up to the last index is decoded). */
export function sampleFrames(frameIdx: number[]): { frames: RawImage[][]; decodeMsPerFrame: number } {
  const cams = loadTomlCalibration(DEMO_CALIB);
  const videos = probeVideos(cams, findVideos(BALANCING));
  const cv = openCvAddon();
  const last = Math.max(...frameIdx);
  let ms = 0,
    decoded = 0;
  const frames = videos.map((v) => {
    const r = new cv.VideoReader(v.path);
    const out: RawImage[] = [];
    try {
      for (let f = 0; f <= last; f++) {
        const t = cpuSeconds();
        const img = r.read();
        ms += (cpuSeconds() - t) * 1000;
        decoded++;
        if (!img) throw new Error(`${v.path} ended at frame ${f}`);
        if (frameIdx.includes(f)) out.push(img);
      }
    } finally {
      r.close();
    }
    return out;
  });
  return { frames, decodeMsPerFrame: ms / decoded };
}

/** OpenPose athlete (pose-associated person 0) per camera and sampled frame, BODY_25B K×3. */
export function openPoseAthlete(frameIdx: number[]): (Keypoints2D | null)[][] {
  const cams = loadTomlCalibration(DEMO_CALIB);
  const kp = loadKeypointFolders(cams, findKeypointFolders(BALANCING), BODY25B.length);
  return kp.people.map((perFrame) => frameIdx.map((f) => perFrame[f]?.[0] ?? null));
}

/** Run one model over the sampled images and compare with OpenPose. */
export async function compareModel(spec: PoseEstimatorSpec, frames: RawImage[][], ref: (Keypoints2D | null)[][]): Promise<ModelComparison> {
  const est: PoseEstimator = await createPoseEstimator(spec);
  const set = poseKeypointSet(spec);
  const perJoint: Record<string, number[]> = Object.fromEntries(COMPARED_JOINTS.map((j) => [j, []]));
  let found = 0,
    images = 0,
    cpu = 0,
    wall = 0;
  await est.estimate(frames[0]![0]!); // warm-up (WASM compile, first-run allocations), not timed
  for (let c = 0; c < frames.length; c++)
    for (let i = 0; i < frames[c]!.length; i++) {
      const r = ref[c]![i];
      const t0 = cpuSeconds(),
        w0 = performance.now();
      const people = await est.estimate(frames[c]![i]!);
      cpu += cpuSeconds() - t0;
      wall += (performance.now() - w0) / 1000;
      images++;
      if (!r) continue;
      let best: Keypoints2D | null = null,
        bd = Infinity;
      for (const p of people) {
        const d = personDistance(r, p, set);
        if (d < bd) {
          bd = d;
          best = p;
        }
      }
      if (!best || bd > 200) continue;
      found++;
      for (const j of COMPARED_JOINTS)
        for (const side of ['left', 'right'] as const) {
          const ours = nameIn(set, j, side),
            theirs = nameIn(BODY25B, j, side);
          if (!ours || !theirs) continue;
          const a = set.indexOf(ours),
            b = BODY25B.indexOf(theirs as (typeof BODY25B)[number]);
          if ((r[b * 3 + 2] ?? 0) < 0.3 || !((best[a * 3 + 2] ?? 0) > 0)) continue;
          perJoint[j]!.push(Math.hypot((r[b * 3] ?? 0) - (best[a * 3] ?? 0), (r[b * 3 + 1] ?? 0) - (best[a * 3 + 1] ?? 0)));
        }
    }
  await est.dispose();
  return { model: est.name, perJoint, found, images, cpuS: cpu, wallS: wall };
}

/** Print a comparison table (median px per joint group, all body joints, % < 20 px, speed). */
export function comparisonTable(rows: ModelComparison[]): string[] {
  const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '–');
  const head = ['model', ...COMPARED_JOINTS, 'body joints median (p90)', '% < 20 px', 'athlete found', 'frames/s/core (detector + keypoints)'];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  for (const r of rows) {
    const body = ['shoulder', 'elbow', 'wrist', 'hip', 'knee', 'ankle'].flatMap((j) => r.perJoint[j] ?? []);
    lines.push(
      `| ${r.model} | ${COMPARED_JOINTS.map((j) => f1(median(r.perJoint[j] ?? []))).join(' | ')} | ${f1(median(body))} (${f1(quantile(body, 0.9))}) | ${f1((100 * body.filter((d) => d < 20).length) / Math.max(1, body.length))} | ${r.found}/${r.images} | ${f1(r.images / r.cpuS)} |`,
    );
  }
  return lines;
}

/**
 * Person detectors: for each sampled image, whether the detector's boxes include the athlete
 * (IoU ≥ 0.5 with the OpenPose athlete's keypoint box grown 10 %), the best IoU, and boxes per image.
 * MoveNet MultiPose Lightning (TF.js graph, input [1,256,256,3] int32 on the frame padded square;
 * output [1,6,56]: 17 × (y, x, score) then box (ymin, xmin, ymax, xmax, score), normalised) needs
 * its weights in `ATHLETE_POSE_WEIGHTS` (`movenet-multipose`); they are not shipped.
 */
export async function compareDetectors(frames: RawImage[][], ref: (Keypoints2D | null)[][]): Promise<string[]> {
  const cv = openCvAddon();
  const bodypix = await BodyPixDetector.load(defaultBodyPixPath(), cv);
  const multipose = await loadTfjsGraph('movenet-multipose').catch(() => null);
  const detectors: [string, (img: RawImage) => Promise<Box[]>][] = [['BodyPix mask components (513 px)', async (img) => (await bodypix.detect(img)).boxes]];
  if (multipose) {
    const mp = multipose;
    detectors.push([
      'MoveNet MultiPose Lightning boxes (score ≥ 0.2)',
      async (img) => {
        const S = Math.max(img.width, img.height);
        const x0 = (img.width - S) / 2,
          y0 = (img.height - S) / 2;
        const sq = cv.cropResize(img, x0, y0, x0 + S - 1, y0 + S - 1, 256, 256);
        const input = tf.tensor4d(Int32Array.from(sq.data), [1, 256, 256, 3], 'int32');
        const y = mp.execute(input) as tf.Tensor;
        const d = await y.data();
        input.dispose();
        y.dispose();
        const boxes: Box[] = [];
        for (let p = 0; p < 6; p++) {
          const o = p * 56;
          if ((d[o + 55] ?? 0) < 0.2) continue;
          boxes.push([x0 + (d[o + 52] ?? 0) * S, y0 + (d[o + 51] ?? 0) * S, x0 + (d[o + 54] ?? 0) * S, y0 + (d[o + 53] ?? 0) * S]);
        }
        return boxes;
      },
    ]);
  }
  const lines = ['| detector | athlete found (IoU ≥ 0.5) | median best IoU | boxes per image | frames/s/core |', '| --- | --- | --- | --- | --- |'];
  for (const [name, detect] of detectors) {
    await detect(frames[0]![0]!);
    let hit = 0,
      n = 0,
      boxes = 0,
      cpu = 0;
    const ious: number[] = [];
    for (let c = 0; c < frames.length; c++)
      for (let i = 0; i < frames[c]!.length; i++) {
        const t = cpuSeconds();
        const b = await detect(frames[c]![i]!);
        cpu += cpuSeconds() - t;
        boxes += b.length;
        const r = ref[c]![i];
        const kb = r ? personBox(r, 0.3) : null;
        if (!kb) continue;
        const gw = (kb[2] - kb[0]) * 0.05,
          gh = (kb[3] - kb[1]) * 0.05;
        const truth: Box = [kb[0] - gw, kb[1] - gh, kb[2] + gw, kb[3] + gh];
        const best = Math.max(0, ...b.map((x) => iou(x, truth)));
        ious.push(best);
        n++;
        if (best >= 0.5) hit++;
      }
    const imgs = frames.reduce((s, f) => s + f.length, 0);
    lines.push(`| ${name} | ${hit}/${n} | ${median(ious).toFixed(2)} | ${(boxes / imgs).toFixed(1)} | ${(imgs / cpu).toFixed(1)} |`);
  }
  if (!multipose)
    lines.push(`(MoveNet MultiPose not run: no movenet-multipose weights in ${path.resolve(process.env.ATHLETE_POSE_WEIGHTS ?? 'weights folder')})`);
  await bodypix.dispose();
  multipose?.dispose();
  return lines;
}
