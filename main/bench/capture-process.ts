/**
 * `npm run capture:bench-process` — end-to-end seconds from "recording stopped" to "results
 * stored" for the demo trial, the way the Capture page does it: the trial in the capture
 * workspace, processing in its child process (2D pose in worker threads), results stored through
 * `capture.recordSession` in a seeded SQLite file. Prints one JSON line per run; BENCHMARKS.md
 * records the figures with the machine and date.
 *
 *   npm run capture:bench-process [-- --frames N] [--input video|keypoints] [--cross-check movenet-thunder|none]
 *
 * `--cross-check` (video only) also runs the second 2D model of the `model_disagreement` check, as the
 * Process step does by default for videos; `none` (the default here) measures the primary model alone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDb } from '../data/db';
import { seedDemo } from '../data/seed';
import { createCaptureWorkspace } from '../ipc/capture';
import { BALANCING, DEMO_CALIB, hasDemo, NO_DEMO } from '../capture/testing/paths';

const { values } = parseArgs({
  options: { frames: { type: 'string' }, input: { type: 'string', default: 'video' }, 'cross-check': { type: 'string', default: 'none' } },
});
if (!hasDemo) throw new Error(NO_DEMO);
const input = values.input === 'keypoints' ? 'keypoints' : 'video';
const cc = values['cross-check'];
if (cc !== 'none' && cc !== 'movenet-thunder' && cc !== 'blazepose') throw new Error(`--cross-check: movenet-thunder, blazepose or none, not ${cc}`);
const crossCheck = cc === 'none' ? null : cc;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-capture-bench-'));
const db = openDb(path.join(dir, 'bench.sqlite'));
try {
  const seed = seedDemo(db);
  const ws = createCaptureWorkspace(db, path.join(dir, 'captures'));
  const rec = ws.importTrial(
    {
      org_id: seed.orgId,
      athlete_id: seed.linkedAthleteId,
      test: 'balance',
      recorded_at: new Date().toISOString(),
      created_by: seed.userIds.physio,
      tap: null,
      rig_id: null,
    },
    BALANCING,
    DEMO_CALIB,
  );
  const t0 = performance.now();
  const job = ws.start(seed.orgId, seed.userIds.physio, rec.id, { input, maxFrames: values.frames ? Number(values.frames) : null, crossCheck });
  let j = ws.job(seed.orgId, job.id);
  while (j.status === 'running') {
    await new Promise((r) => setTimeout(r, 50));
    j = ws.job(seed.orgId, job.id);
  }
  const seconds = (performance.now() - t0) / 1000;
  if (j.status !== 'complete') throw new Error(`processing ${j.status}: ${JSON.stringify(j.error)}`);
  process.stdout.write(
    `${JSON.stringify({ trial: 'S00_P00_T01_BalancingTrial', input, cross_check: crossCheck ?? 'none', frames: values.frames ? Number(values.frames) : 100, cameras: 4, stop_to_results_s: Number(seconds.toFixed(2)), cpus: os.availableParallelism(), cpu: os.cpus()[0]?.model })}\n`,
  );
} finally {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
