import { describe, expect, it } from 'vitest';
import { findRepetitions, makeAngleSeries, parseAngleSeries, repetitionPeaks } from './series';

/** Knee flexion of `reps` squats: 10° standing, `depth`° at the bottom, 1 s per rep at 60 fps. */
function squats(reps: number, depths: number[], fps = 60): number[] {
  const out: number[] = [];
  for (let r = 0; r < reps; r++) for (let f = 0; f < fps; f++) out.push(10 + ((depths[r] ?? 80) - 10) * Math.sin((Math.PI * f) / fps) ** 2);
  out.push(10);
  return out;
}

describe('findRepetitions', () => {
  it('finds each squat with its peak frame and bounds at the lowest frames between peaks', () => {
    const v = squats(3, [70, 90, 80]);
    const reps = findRepetitions(v, 60);
    expect(reps.map((r) => r.peak_frame)).toEqual([30, 90, 150]);
    expect(reps[0]!.start_frame).toBe(0);
    expect(reps[1]!.start_frame).toBe(reps[0]!.end_frame);
    expect(reps[2]!.end_frame).toBe(180);
  });
  it('a held posture with small wobble has no repetitions (prominence under 20°)', () => {
    const v = Array.from({ length: 300 }, (_, i) => 30 + 5 * Math.sin(i / 7));
    expect(findRepetitions(v, 60)).toEqual([]);
  });
  it('two peaks closer than 0.4 s count once (the taller kept), null frames are skipped', () => {
    const v: (number | null)[] = [0, 40, 10, 50, 0, null, null, 0];
    const reps = findRepetitions(v, 60);
    expect(reps).toHaveLength(1);
    expect(reps[0]!.peak_frame).toBe(3);
    expect(findRepetitions(v, 1)).toHaveLength(2);
  });
});

describe('repetitionPeaks', () => {
  it("gives every series' peak per repetition, found on the knee with the larger range", () => {
    const left = squats(2, [60, 95]);
    const right = left.map((x) => x / 2);
    const hip = left.map((x, i) => (i > 70 && i < 80 ? null : x + 5));
    const s = makeAngleSeries(60, 0, [
      { joint: 'knee_flexion', side: 'right', values: right },
      { joint: 'knee_flexion', side: 'left', values: left },
      { joint: 'hip_flexion', side: 'left', values: hip },
    ]);
    const p = repetitionPeaks(s, 'single_leg_squat');
    expect(p.basis).toEqual({ joint: 'knee_flexion', side: 'left' });
    expect(p.repetitions).toHaveLength(2);
    expect(p.repetitions[1]!.peaks.find((x) => x.joint === 'knee_flexion' && x.side === 'left')!.peak_deg).toBe(95);
    expect(p.repetitions[0]!.peaks.find((x) => x.joint === 'hip_flexion')!.peak_deg).toBe(65);
  });
  it('stores 0.1° values with null for missing frames and round-trips through JSON', () => {
    const s = makeAngleSeries(60, 3, [{ joint: 'elbow_flexion', side: 'right', values: Float64Array.from([1.234, NaN, 2.25]) }]);
    expect(s.series[0]!.values).toEqual([1.2, null, 2.3]);
    expect(parseAngleSeries(JSON.stringify(s))).toEqual(s);
    expect(parseAngleSeries('')).toBeNull();
    expect(() => parseAngleSeries('{"fps":-1}')).toThrow();
  });
});
