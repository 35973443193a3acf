/**
 * Runs 2D pose on every camera's video in worker threads (one worker per camera, at most
 * `os.availableParallelism()` at a time) and gathers people[camera][frame] (COCO-17, K×3).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Keypoints2D } from '../../../models/capture/openpose';
import { CaptureInputError } from '../errors';
import type { VideoSource } from '../sources';
import type { PoseEstimatorSpec } from './types';
import type { PoseJob, PoseWorkerMessage } from './worker';

/** Per-run timing figures (ms, summed over cameras). */
export interface PoseRunStats {
  estimator: string;
  decodeMs: number;
  inferMs: number;
  workers: number;
}
export let lastPoseRunStats: PoseRunStats | null = null;

function runWorker(job: PoseJob, onFrame: () => void): Promise<Extract<PoseWorkerMessage, { type: 'done' }>> {
  return new Promise((resolve, reject) => {
    // The worker is TypeScript: worker-entry.mjs registers tsx's loader in the thread first.
    const w = new Worker(new URL('./worker-entry.mjs', import.meta.url), { workerData: job });
    w.on('message', (m: PoseWorkerMessage) => {
      if (m.type === 'progress') onFrame();
      else if (m.type === 'done') {
        resolve(m);
        void w.terminate();
      } else {
        reject(m.code === 'video_ended' ? new CaptureInputError('frame_count_mismatch', m.message) : new Error(m.message));
        void w.terminate();
      }
    });
    w.on('error', reject);
    w.on('exit', (code) => {
      if (code !== 0) reject(new Error(`pose worker exited with code ${code}`));
    });
  });
}

/** 2D people per camera per frame for the first `frames` frames of each video. */
export async function estimateVideoPoses(
  videos: VideoSource[],
  frames: number,
  spec: PoseEstimatorSpec,
  onProgress?: (stage: string, done: number, total: number) => void,
  maxWorkers = availableParallelism(),
  onCamera?: (camera: number, done: number, total: number) => void,
): Promise<Keypoints2D[][][]> {
  const total = videos.length * frames;
  let done = 0;
  onProgress?.('pose', 0, total);
  const results: Keypoints2D[][][] = new Array(videos.length);
  let next = 0,
    decodeMs = 0,
    inferMs = 0,
    estimator = '';
  const workers = Math.max(1, Math.min(maxWorkers, videos.length));
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < videos.length) {
        const i = next++;
        let camDone = 0;
        onCamera?.(i, 0, frames);
        const r = await runWorker({ videoPath: videos[i]!.path, frames, spec }, () => {
          onProgress?.('pose', ++done, total);
          onCamera?.(i, ++camDone, frames);
        });
        results[i] = r.people.map((fr) => fr.map((p) => Float64Array.from(p)));
        decodeMs += r.decodeMs;
        inferMs += r.inferMs;
        estimator = r.estimator;
      }
    }),
  );
  lastPoseRunStats = { estimator, decodeMs, inferMs, workers };
  return results;
}
