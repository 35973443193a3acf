/**
 * 2D poses of a trial's videos cached on disk for `capture:validate -- --cache-2d DIR`: one file
 * per model and frame count, `<DIR>/<model>-<frames>.json` = { model, frames, videos: [{ path, bytes }],
 * people: people[camera][frame][person] = K×3 numbers }. A second run with the same videos, model
 * and frame count reads it instead of running the 2D model again (the 2D pass is > 99 % of the
 * processing time). A file whose videos differ (path or size) is recomputed, not trusted.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Keypoints2D } from '../../../models/capture/openpose';
import { estimateVideoPoses } from '../pose/run';
import type { PoseEstimatorSpec } from '../pose/types';
import type { VideoSource } from '../sources';

interface CacheFile {
  model: string;
  frames: number;
  videos: { path: string; bytes: number }[];
  people: number[][][][];
}

/**
 * people[camera][frame] for the first `frames` frames of `videos` with the model `name` (`spec`):
 * from `<dir>/<name>-<frames>.json` when it exists for the same videos, else estimated (and written
 * there when `dir` is given). `cached` says which. CPU seconds of the estimate are in `cpuS` (0 when cached).
 */
export async function cachedVideoPoses(
  videos: VideoSource[],
  frames: number,
  name: string,
  spec: PoseEstimatorSpec,
  dir: string | undefined,
  onProgress?: (stage: string, done: number, total: number) => void,
): Promise<{ people: Keypoints2D[][][]; cached: boolean; cpuS: number; wallS: number }> {
  const ids = videos.map((v) => ({ path: path.resolve(v.path), bytes: statSync(v.path).size }));
  const file = dir ? path.join(dir, `${name}-${frames}.json`) : null;
  if (file && existsSync(file)) {
    const c = JSON.parse(readFileSync(file, 'utf8')) as CacheFile;
    if (c.frames === frames && JSON.stringify(c.videos) === JSON.stringify(ids))
      return { people: c.people.map((cam) => cam.map((fr) => fr.map((p) => Float64Array.from(p)))), cached: true, cpuS: 0, wallS: 0 };
  }
  const c0 = process.cpuUsage(),
    t0 = performance.now();
  const people = await estimateVideoPoses(videos, frames, spec, onProgress);
  const cpu = process.cpuUsage(c0);
  if (file) {
    mkdirSync(path.dirname(file), { recursive: true });
    const out: CacheFile = { model: name, frames, videos: ids, people: people.map((cam) => cam.map((fr) => fr.map((p) => Array.from(p)))) };
    writeFileSync(file, JSON.stringify(out));
  }
  return { people, cached: false, cpuS: (cpu.user + cpu.system) / 1e6, wallS: (performance.now() - t0) / 1000 };
}
