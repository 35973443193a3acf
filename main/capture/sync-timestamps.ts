/**
 * Synchronisation from a live recording's own timestamps (issue 14 review): the native recorder
 * writes `videos/<name>.timestamps.csv` next to each video (`frame,timestamp_us,slot_us,
 * source_frame,status`, µs on one steady clock for every camera; main/capture/README.md, "Live
 * capture"). When every camera of a trial has one, the time between the images shown together in a
 * frame is measured, not estimated: skew(f) = max − min over cameras of `timestamp_us` of frame f's
 * `captured` rows (a `duplicated` row is a stale image the pipeline already leaves out of
 * triangulation, `live/sidecar.ts`).
 *
 * Rule: max skew over the processed frames ≤ half a frame interval → `sync_timestamps`
 * (informational, with the measured skew); more → `camera_offset` (failing). Half a frame is the
 * bound the recorder's own slot assignment aims for per camera (|t − slot| < ½ interval) and the
 * largest time error that still puts every image nearer its own frame than the next one; beyond it
 * a camera shows the athlete nearer another frame's moment than this one's. When neither the
 * geometric check (models/capture/sync.ts: ≥ 3 cameras, ≥ 20 frames) nor timestamps can vouch for
 * synchronisation, every reading fails `sync_unchecked`: a camera out of step by a few frames moves
 * angles by tens of degrees (demo, 2 cameras, cam_02 5 frames ahead: right hip flexion range 63.8°
 * vs 49.6° in sync) and nothing else in the pipeline notices it.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { ReadingCondition } from '../../models/capture/quality';
import { sidecarPath } from './live/sidecar';

/** Measured inter-camera skew of a recording's frames (µs). */
export interface TimestampSkew {
  /** Frames with a captured row from ≥ 2 cameras. */
  frames: number;
  maxSkewUs: number;
  medianSkewUs: number;
  /** Frame index (0-based, as in the video) of the largest skew, and the cameras earliest and latest there. */
  worstFrame: number;
  earliest: string;
  latest: string;
}

/**
 * Skew over the first `frames` frames of the trial's videos from their sidecars; null when any
 * camera's video has no sidecar (not recorded by this app) or fewer than 2 frames can be compared.
 * Malformed rows are skipped (live/sidecar.ts refuses a malformed sidecar before this runs).
 */
export function timestampSkew(videos: readonly { camera: string; path: string }[], frames: number): TimestampSkew | null {
  if (videos.length < 2) return null;
  const stamps: { t: (number | null)[]; camera: string }[] = [];
  for (const v of videos) {
    const file = sidecarPath(v.path);
    if (!existsSync(file)) return null;
    const t = new Array<number | null>(frames).fill(null);
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const c = line.trim().split(',');
      const f = Number(c[0]),
        us = Number(c[1]);
      if (c.length === 5 && c[4] === 'captured' && Number.isInteger(f) && f >= 0 && f < frames && Number.isFinite(us)) t[f] = us;
    }
    stamps.push({ t, camera: v.camera });
  }
  const skews: number[] = [];
  let worst = { s: -1, f: 0, lo: '', hi: '' };
  for (let f = 0; f < frames; f++) {
    const at = stamps.filter((s) => s.t[f] !== null).map((s) => ({ t: s.t[f]!, camera: s.camera }));
    if (at.length < 2) continue;
    at.sort((a, b) => a.t - b.t);
    const s = at[at.length - 1]!.t - at[0]!.t;
    skews.push(s);
    if (s > worst.s) worst = { s, f, lo: at[0]!.camera, hi: at[at.length - 1]!.camera };
  }
  if (skews.length < 2) return null;
  const sorted = [...skews].sort((a, b) => a - b);
  return {
    frames: skews.length,
    maxSkewUs: worst.s,
    medianSkewUs: sorted[Math.floor(sorted.length / 2)]!,
    worstFrame: worst.f,
    earliest: worst.lo,
    latest: worst.hi,
  };
}

/**
 * The trial's synchronisation evidence as a condition: from timestamps when there are any
 * (`sync_timestamps` within half a frame at `fps`, else `camera_offset`), else `sync_unchecked` when
 * the geometric check could not run (`why` says why), else null (the geometric check speaks).
 */
export function syncEvidenceCondition(skew: TimestampSkew | null, fps: number, geometricChecked: boolean, why: string): ReadingCondition | null {
  const halfUs = 1e6 / fps / 2;
  const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`;
  if (skew) {
    const said = `the recording's timestamps put the cameras' images of one frame up to ${ms(skew.maxSkewUs)} apart (median ${ms(skew.medianSkewUs)}, ${skew.frames} frames; half a frame at ${fps} fps is ${ms(halfUs)})`;
    if (skew.maxSkewUs <= halfUs) return { code: 'sync_timestamps', detail: `${said}: synchronised` };
    return {
      code: 'camera_offset',
      detail: `${said}: out of step (worst at frame ${skew.worstFrame}: ${skew.latest} ${ms(skew.maxSkewUs)} after ${skew.earliest}). Re-record with the cameras at one frame rate on a less loaded machine, or with hardware-synchronised cameras`,
    };
  }
  if (geometricChecked) return null;
  return {
    code: 'sync_unchecked',
    detail: `camera synchronisation could not be checked: ${why}, and the recording has no timestamp files (videos/<camera>.timestamps.csv, written by this app's capture). A camera a few frames out of step moves angles by tens of degrees unseen: record with this app's capture, or with ≥ 3 calibrated cameras so the geometric check can run`,
  };
}
