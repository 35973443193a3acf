/**
 * Worker thread: decodes one camera's video and runs the 2D pose estimator on every frame,
 * posting progress; the main thread never decodes or infers.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openCvAddon } from '../native/index';
import { createPoseEstimator } from './estimator';
import type { PoseEstimatorSpec } from './types';

export interface PoseJob {
  videoPath: string;
  frames: number;
  spec: PoseEstimatorSpec;
}
export type PoseWorkerMessage =
  | { type: 'progress'; frame: number }
  | { type: 'done'; people: number[][][]; estimator: string; decodeMs: number; inferMs: number }
  | { type: 'error'; message: string; code?: 'video_ended' };

async function main(job: PoseJob): Promise<void> {
  const est = await createPoseEstimator(job.spec);
  const reader = new (openCvAddon().VideoReader)(job.videoPath);
  const people: number[][][] = [];
  let decodeMs = 0,
    inferMs = 0;
  try {
    for (let f = 0; f < job.frames; f++) {
      const t0 = performance.now();
      const frame = reader.read();
      const t1 = performance.now();
      decodeMs += t1 - t0;
      if (!frame) {
        parentPort!.postMessage({
          type: 'error',
          code: 'video_ended',
          message: `${job.videoPath} ended after ${f} decoded frames; ${job.frames} were expected (the container's frame count is wrong or the file is truncated)`,
        } satisfies PoseWorkerMessage);
        return;
      }
      const found = await est.estimate(frame);
      inferMs += performance.now() - t1;
      people.push(found.map((p) => Array.from(p)));
      parentPort!.postMessage({ type: 'progress', frame: f + 1 } satisfies PoseWorkerMessage);
    }
  } finally {
    reader.close();
    await est.dispose();
  }
  parentPort!.postMessage({ type: 'done', people, estimator: est.name, decodeMs, inferMs } satisfies PoseWorkerMessage);
}

main(workerData as PoseJob).catch((e: unknown) =>
  parentPort!.postMessage({ type: 'error', message: e instanceof Error ? e.message : String(e) } satisfies PoseWorkerMessage),
);
