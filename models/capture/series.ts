/**
 * Joint-angle time series of one capture session, the repetitions found in them, and the peak of
 * every joint per repetition (the results page). Runtime-agnostic: zod and plain arrays only.
 *
 * Stored as JSON in `capture_session.angle_series` (migration 0010): one series per reported
 * (joint, side) — the per-frame values the pipeline's statistics were computed from (gated and
 * missing frames are null), degrees rounded to 0.1°. Omitted readings have no series: the page shows
 * them as refused with their reason from `pose_metric`.
 */
import { z } from 'zod';
import { POSE_JOINTS, POSE_SIDES, type PoseJoint, type PoseSide } from './metrics';

/** Movement tests a session can record. `balance` is the demo's treadmill balancing trial. */
export const CAPTURE_TESTS = ['single_leg_squat', 'drop_jump', 'gait', 'balance'] as const;
export type CaptureTest = (typeof CAPTURE_TESTS)[number];

/** Longest series stored: 10 minutes at 60 fps. */
export const MAX_SERIES_FRAMES = 36_000;

/** One joint's angle per frame (degrees; null = no valid reading in that frame). */
export const JointAngleSeries = z.object({
  joint: z.enum(POSE_JOINTS).describe('Joint measured.'),
  side: z.enum(POSE_SIDES).describe('Side of the body.'),
  values: z
    .array(z.number().finite().nullable())
    .max(MAX_SERIES_FRAMES)
    .describe('Degrees per frame, 0.1° resolution; null where the frame had no valid reading.'),
});
export type JointAngleSeries = z.infer<typeof JointAngleSeries>;

/** `capture_session.angle_series`: frame rate, the trial frame of values[0], and the series. */
export const AngleSeries = z.object({
  fps: z.number().positive().max(1000).describe('Frames per second.'),
  first_frame: z.number().int().min(0).describe('Frame of the recording that values[0] is (after synchronisation trimming); 0 normally.'),
  series: z
    .array(JointAngleSeries)
    .max(POSE_JOINTS.length * POSE_SIDES.length)
    .describe('One per-frame angle series per joint and side.'),
});
export type AngleSeries = z.infer<typeof AngleSeries>;

/**
 * Build the stored series from per-frame angles. `perFrame` gives, per (joint, side), the values
 * (degrees, NaN/null where invalid or gated); values are rounded to 0.1°.
 */
export function makeAngleSeries(
  fps: number,
  firstFrame: number,
  perFrame: { joint: PoseJoint; side: PoseSide; values: ArrayLike<number | null> }[],
): AngleSeries {
  return {
    fps,
    first_frame: firstFrame,
    series: perFrame.map((s) => ({
      joint: s.joint,
      side: s.side,
      values: Array.from({ length: s.values.length }, (_, i) => {
        const v = s.values[i];
        return v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v * 10) / 10;
      }),
    })),
  };
}

/** Parse a stored `angle_series` text; '' (none stored) → null. @throws ZodError / SyntaxError on a malformed value. */
export function parseAngleSeries(text: string): AngleSeries | null {
  if (!text) return null;
  return AngleSeries.parse(JSON.parse(text));
}

/** One repetition: frames [start_frame, end_frame] around its peak (indices into the series). */
export interface Repetition {
  index: number;
  start_frame: number;
  peak_frame: number;
  end_frame: number;
}

/** Options of {@link findRepetitions}. */
export interface RepetitionOptions {
  /** Minimum prominence of a repetition's peak (degrees). @default 20 */
  minProminenceDeg?: number;
  /** Minimum time between two peaks (seconds). @default 0.4 */
  minSeparationS?: number;
}

/**
 * Repetitions of a movement in one angle series (e.g. knee flexion in single-leg squats): peaks
 * whose topographic prominence is at least `minProminenceDeg`, at least `minSeparationS` apart
 * (taller peak kept), each bounded by the lowest frame between it and its neighbouring peaks (or the
 * series' ends). Prominence and the distance rule follow `scipy.signal.find_peaks`
 * (prominence = peak − the higher of the lowest points on each side before a higher peak).
 * Null frames are skipped. A series with no such peak (a held posture) has no repetitions.
 */
export function findRepetitions(values: readonly (number | null)[], fps: number, opts: RepetitionOptions = {}): Repetition[] {
  const minProm = opts.minProminenceDeg ?? 20;
  const minDist = Math.max(1, Math.round((opts.minSeparationS ?? 0.4) * fps));
  const idx: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i] !== null && Number.isFinite(values[i])) idx.push(i);
  const v = idx.map((i) => values[i] as number);
  const n = v.length;
  // Local maxima (a plateau counts once, at its middle).
  const cand: number[] = [];
  for (let j = 1; j < n - 1; j++) {
    if (!(v[j]! > v[j - 1]!)) continue;
    let k = j;
    while (k + 1 < n && v[k + 1] === v[j]) k++;
    if (k + 1 < n && v[k + 1]! < v[j]!) cand.push(Math.floor((j + k) / 2));
    j = k;
  }
  const prominent = cand.filter((p) => {
    let leftMin = v[p]!;
    for (let j = p - 1; j >= 0 && v[j]! <= v[p]!; j--) leftMin = Math.min(leftMin, v[j]!);
    let rightMin = v[p]!;
    for (let j = p + 1; j < n && v[j]! <= v[p]!; j++) rightMin = Math.min(rightMin, v[j]!);
    return v[p]! - Math.max(leftMin, rightMin) >= minProm;
  });
  // Distance rule: taller peaks first; drop any within minDist frames of a kept one.
  const kept: number[] = [];
  for (const p of [...prominent].sort((a, b) => v[b]! - v[a]! || a - b)) {
    if (kept.every((q) => Math.abs(idx[q]! - idx[p]!) >= minDist)) kept.push(p);
  }
  kept.sort((a, b) => a - b);
  const lowest = (from: number, to: number): number => {
    let best = from;
    for (let j = from; j <= to; j++) if (v[j]! < v[best]!) best = j;
    return best;
  };
  return kept.map((p, r) => {
    const prev = kept[r - 1],
      next = kept[r + 1];
    const s = lowest(prev === undefined ? 0 : prev, p);
    const e = lowest(p, next === undefined ? n - 1 : next);
    return { index: r + 1, start_frame: idx[s]!, peak_frame: idx[p]!, end_frame: idx[e]! };
  });
}

/** The joint whose repetitions define a test's repetitions. */
export const REPETITION_JOINT: Record<CaptureTest, PoseJoint> = {
  single_leg_squat: 'knee_flexion',
  drop_jump: 'knee_flexion',
  gait: 'knee_flexion',
  balance: 'knee_flexion',
};

/** Peaks of every series within each repetition (degrees; null when the series has no value there). */
export interface RepetitionPeaks {
  /** The series the repetitions were found in (the side with the larger range of the test's joint). */
  basis: { joint: PoseJoint; side: PoseSide } | null;
  repetitions: (Repetition & { peaks: { joint: PoseJoint; side: PoseSide; peak_deg: number | null }[] })[];
}

/**
 * Repetitions of a session and every joint's peak in each: repetitions are found in the test's
 * joint ({@link REPETITION_JOINT}; knee flexion when the test is not said) on the side with the
 * larger range; each series' peak is its maximum over the repetition's frames.
 */
export function repetitionPeaks(s: AngleSeries, test: CaptureTest | '', opts: RepetitionOptions = {}): RepetitionPeaks {
  const joint = test ? REPETITION_JOINT[test] : 'knee_flexion';
  const range = (x: JointAngleSeries) => {
    const f = x.values.filter((y): y is number => y !== null);
    return f.length ? Math.max(...f) - Math.min(...f) : -1;
  };
  const basis = s.series.filter((x) => x.joint === joint).sort((a, b) => range(b) - range(a))[0];
  if (!basis) return { basis: null, repetitions: [] };
  const reps = findRepetitions(basis.values, s.fps, opts);
  return {
    basis: { joint: basis.joint, side: basis.side },
    repetitions: reps.map((r) => ({
      ...r,
      peaks: s.series.map((x) => {
        let peak: number | null = null;
        for (let f = r.start_frame; f <= r.end_frame; f++) {
          const y = x.values[f];
          if (y !== null && y !== undefined && (peak === null || y > peak)) peak = y;
        }
        return { joint: x.joint, side: x.side, peak_deg: peak };
      }),
    })),
  };
}
