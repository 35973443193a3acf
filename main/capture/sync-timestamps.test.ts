import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SIDECAR_HEADER } from './live/sidecar';
import { syncEvidenceCondition, timestampSkew } from './sync-timestamps';

/** Sidecars as the recorder writes them: camera c's frame f at f/fps + offsetUs[c] (+ jitter), all captured. */
function recording(offsetUs: number[], frames = 60, fps = 60): { camera: string; path: string }[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'sync-ts-'));
  return offsetUs.map((off, c) => {
    const camera = `cam0${c + 1}`;
    const rows = Array.from({ length: frames }, (_, f) => {
      const slot = Math.round((f * 1e6) / fps);
      return `${f},${slot + off + ((f * 7919 * (c + 1)) % 500)},${slot},${f},captured`;
    });
    writeFileSync(path.join(dir, `${camera}.timestamps.csv`), `${SIDECAR_HEADER}\n${rows.join('\n')}\n`);
    return { camera, path: path.join(dir, `${camera}.avi`) };
  });
}

describe('synchronisation from a recording’s timestamps', () => {
  it('cameras within half a frame: sync_timestamps (informational) with the measured skew', () => {
    const s = timestampSkew(recording([0, 3000]), 60)!;
    expect(s.frames).toBe(60);
    expect(s.maxSkewUs).toBeGreaterThan(2500);
    expect(s.maxSkewUs).toBeLessThan(3600);
    const c = syncEvidenceCondition(s, 60, false, 'x')!;
    expect(c.code).toBe('sync_timestamps');
    expect(c.detail).toMatch(/up to 3\.\d ms apart .* half a frame at 60 fps is 8\.3 ms\): synchronised/);
  });

  it('a camera 12 ms behind at 60 fps: camera_offset naming it', () => {
    const c = syncEvidenceCondition(timestampSkew(recording([0, 12000, 0]), 60), 60, true, 'x')!;
    expect(c.code).toBe('camera_offset');
    expect(c.detail).toMatch(/out of step \(worst at frame \d+: cam02 12\.\d ms after cam0[13]\)/);
  });

  it('duplicated rows are not compared (the pipeline leaves those stale views out)', () => {
    const rec = recording([0, 0]);
    const file = rec[1]!.path.replace(/\.avi$/, '.timestamps.csv');
    // frame 10 of cam02 repeats frame 9: its timestamp is 16.7 ms old
    const lines = `${SIDECAR_HEADER}\n${Array.from({ length: 60 }, (_, f) => `${f},${Math.round(((f === 10 ? 9 : f) * 1e6) / 60)},${Math.round((f * 1e6) / 60)},${f === 10 ? 9 : f},${f === 10 ? 'duplicated' : 'captured'}`).join('\n')}\n`;
    writeFileSync(file, lines);
    expect(timestampSkew(rec, 60)!.maxSkewUs).toBeLessThan(1000);
  });

  it('no sidecar: the geometric check speaks when it ran, else sync_unchecked says why', () => {
    const rec = recording([0, 0]);
    const noSidecar = [...rec, { camera: 'cam09', path: path.join(tmpdir(), 'no-such-video.mp4') }];
    expect(timestampSkew(noSidecar, 60)).toBeNull();
    expect(syncEvidenceCondition(null, 60, true, 'x')).toBeNull();
    const c = syncEvidenceCondition(null, 60, false, 'it needs ≥ 3 calibrated cameras and this rig has 2')!;
    expect(c.code).toBe('sync_unchecked');
    expect(c.detail).toMatch(
      /^camera synchronisation could not be checked: it needs ≥ 3 calibrated cameras and this rig has 2, and the recording has no timestamp files/,
    );
  });
});
