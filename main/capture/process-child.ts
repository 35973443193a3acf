/**
 * The processing child process (forked by workspace.ts): receives one {@link ChildJob}, runs the
 * pipeline on the recording (2D pose in worker threads inside this process), writes the TRC, and
 * sends progress per stage, then the results or the error with the stage it happened in. It never
 * touches the database: the parent stores the results through the service layer.
 */
import { writeFileSync } from 'node:fs';
import { CaptureInputError } from './errors';
import { angleSeriesOf, processTrial } from './pipeline';
import { parsePoseModel } from './pose/types';
import type { ChildJob, ChildMessage } from './workspace';

function send(m: ChildMessage): Promise<void> {
  return new Promise((resolve) => process.send!(m, () => resolve()));
}

process.once('message', (job: ChildJob) => {
  let stage = 'decode';
  void (async () => {
    try {
      const r = await processTrial({
        trialDir: job.trialDir,
        calibPath: job.calibPath,
        useTrialKeypoints: job.useKeypoints,
        ...(job.maxFrames ? { maxFrames: job.maxFrames } : {}),
        ...(job.tap ? { tap: job.tap } : {}),
        ...(job.crossCheck ? { crossCheck: parsePoseModel(job.crossCheck)! } : {}),
        onProgress: (s, done, total) => {
          if (s === 'pose') return; // reported per camera below
          stage = s === 'synchronise' ? 'triangulate' : s;
          void send({ type: 'progress', stage: s, done, total });
        },
        onCameraProgress: (camera, done, total) => {
          stage = `pose:${camera}`;
          void send({ type: 'progress', stage, done, total });
        },
      });
      writeFileSync(job.trcPath, r.trcText);
      await send({
        type: 'done',
        fps: r.fps,
        frames: r.frames,
        cameraCount: r.cameras.length,
        source: r.source,
        rows: r.rows,
        series: angleSeriesOf(r),
        trcPath: job.trcPath,
      });
    } catch (e) {
      await send({
        type: 'error',
        stage,
        code: e instanceof CaptureInputError ? e.code : e instanceof Error ? e.name : 'Error',
        message: e instanceof Error ? e.message : String(e),
      });
    }
    process.exit(0);
  })();
});
