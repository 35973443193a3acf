/** The 2D pose cache of `capture:validate -- --cache-2d DIR` on the demo videos (2 frames, MoveNet Lightning). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTomlCalibration } from '../calibration';
import { hasAddon } from '../native/index';
import { findVideos, probeVideos } from '../sources';
import { BALANCING, DEMO_CALIB, hasBodyPix, hasDemo, NO_DEMO } from './paths';
import { cachedVideoPoses } from './pose-cache';

const dir = mkdtempSync(path.join(tmpdir(), 'pose-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf((!hasDemo || !hasBodyPix || !hasAddon('opencv')) && process.env.CI !== 'true')(`2D pose cache${hasDemo ? '' : ` (${NO_DEMO})`}`, () => {
  it('writes the first run, reads it back identically on the second, and recomputes when the videos differ', async () => {
    const videos = probeVideos(loadTomlCalibration(DEMO_CALIB), findVideos(BALANCING));
    const spec = { kind: 'movenet', variant: 'lightning' } as const;
    const first = await cachedVideoPoses(videos, 2, 'movenet', spec, dir);
    expect(first.cached).toBe(false);
    expect(first.cpuS).toBeGreaterThan(0);
    expect(first.people).toHaveLength(4);
    expect(first.people[0]!.length).toBe(2);
    const second = await cachedVideoPoses(videos, 2, 'movenet', spec, dir);
    expect(second.cached).toBe(true);
    expect(second.people.map((c) => c.map((f) => f.map((p) => Array.from(p))))).toEqual(first.people.map((c) => c.map((f) => f.map((p) => Array.from(p)))));
    // a cache file written for other videos (another size) is not trusted
    const file = path.join(dir, 'movenet-2.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { videos: { bytes: number }[] };
    doc.videos[0]!.bytes += 1;
    writeFileSync(file, JSON.stringify(doc));
    expect((await cachedVideoPoses(videos, 2, 'movenet', spec, dir)).cached).toBe(false);
  }, 300_000);
});
