// Native triangulation vs the TypeScript reference (models/capture/triangulation.ts).
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { projectionMatrix } from '../../models/capture/camera';
import { prng, projectFrames, ringCamera, syntheticMotion, syntheticPose } from '../../models/capture/synthetic';
import { triangulateBatch } from '../../models/capture/triangulation';
import type { TriangulationAddon } from './types';

const here = path.dirname(fileURLToPath(import.meta.url));
const file = path.join(here, 'build', 'Release', 'triangulation.node');
const built = existsSync(file);
const addon = built ? (createRequire(import.meta.url)(file) as TriangulationAddon) : null;

describe.skipIf(!built)('native triangulation (skipped: run `npm run build:native`)', () => {
  const cams = [0, 50, -50, 170].map((y, i) => ringCamera(`c${i}`, y, { distance: 3.5 + i * 0.3 }));
  const P = Float64Array.from(cams.flatMap(projectionMatrix));
  const frames = syntheticMotion(60).map((m) => syntheticPose(m));

  function noisy(noisePx: number, seed: number): Float64Array {
    const obs = projectFrames(cams, frames, noisePx, seed);
    const rand = prng(seed + 7);
    // outliers, low confidences and missing views, all deterministic
    for (let i = 0; i < obs.length / 3; i++) {
      const r = rand();
      if (r < 0.05) obs[i * 3] = obs[i * 3]! + 40 + 80 * rand();
      else if (r < 0.1) obs[i * 3 + 2] = 0.1;
      else if (r < 0.12) {
        obs[i * 3] = NaN;
        obs[i * 3 + 1] = NaN;
        obs[i * 3 + 2] = 0;
      } else obs[i * 3 + 2] = 0.3 + 0.7 * rand();
    }
    return obs;
  }

  it('agrees with the TypeScript reference to 1e-6 m, with the same views, exclusions and misses', () => {
    for (const [noise, seed] of [
      [0, 1],
      [1, 2],
      [3, 3],
    ] as const) {
      const obs = noisy(noise, seed);
      const ref = triangulateBatch({ cameras: 4, projections: P, observations: obs });
      const nat = addon!.triangulate(P, obs, 4);
      expect(Array.from(nat.viewMask)).toEqual(Array.from(ref.viewMask));
      expect(Array.from(nat.excludedCounts)).toEqual(Array.from(ref.excludedCounts));
      expect(Array.from(nat.lowConfidenceCounts)).toEqual(Array.from(ref.lowConfidenceCounts));
      let maxDiff = 0;
      for (let i = 0; i < ref.points.length; i++) {
        const a = ref.points[i]!,
          b = nat.points[i]!;
        expect(Number.isNaN(a)).toBe(Number.isNaN(b));
        if (!Number.isNaN(a)) maxDiff = Math.max(maxDiff, Math.abs(a - b));
      }
      expect(maxDiff).toBeLessThan(1e-6);
      for (let i = 0; i < ref.reprojectionPx.length; i++)
        if (!Number.isNaN(ref.reprojectionPx[i]!)) expect(Math.abs(ref.reprojectionPx[i]! - nat.reprojectionPx[i]!)).toBeLessThan(1e-6);
      expect(ref.excludedCounts.reduce((s, x) => s + x, 0)).toBeGreaterThan(0);
    }
  });

  it('recovers noise-free points exactly', () => {
    const obs = projectFrames(cams, frames);
    const r = addon!.triangulate(P, obs, 4);
    frames.flat().forEach((X, k) => X.forEach((v, d) => expect(Math.abs(r.points[k * 3 + d]! - v)).toBeLessThan(1e-9)));
  });

  it('runs off the JavaScript thread with the same result', async () => {
    const obs = noisy(1, 5);
    const a = addon!.triangulate(P, obs, 4, { maxReprojectionPx: 10, minConfidence: 0.4 });
    const b = await addon!.triangulateAsync(P, obs, 4, { maxReprojectionPx: 10, minConfidence: 0.4 });
    expect(Array.from(b.points)).toEqual(Array.from(a.points));
  });

  it('rejects malformed input with a clear error', () => {
    expect(() => addon!.triangulate(new Float64Array(11), new Float64Array(12), 1)).toThrow(/cameras×12/);
    expect(() => addon!.triangulate(P, new Float64Array(13), 4)).toThrow(/N×cameras×3/);
    expect(() => addon!.triangulate(P, new Float64Array(12), 17)).toThrow(/1-16/);
  });
});
