/**
 * The one input-issue formatter (main/services/verb.ts `inputIssues`): zod's default texts for
 * bounds, decimals and types become words a clinician reads, through every door (here the
 * service door on a real SQLite file); messages a schema or service wrote itself pass unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../../models/errors';
import { codeWords, formatDay } from '../../models/format';
import type { ClinicFixture } from '../testing/clinic-fixture';
import { createClinicFixture } from '../testing/clinic-fixture';
import { inputIssues } from './verb';

function messages(schema: z.ZodType, value: unknown): Record<string, string> {
  const r = schema.safeParse(value);
  if (r.success) throw new Error('expected a parse failure');
  return Object.fromEntries(inputIssues(r.error).map((i) => [i.path, i.message]));
}

describe('inputIssues words', () => {
  it('bounds, decimals, negative bounds, whole numbers, lengths and missing fields', () => {
    const s = z.object({
      hrv: z.number().min(1).max(400),
      step: z.number().multipleOf(0.1),
      half: z.number().multipleOf(0.5),
      pct: z.number().min(-50).max(50),
      hr: z.number().int(),
      pos: z.number().positive(),
      note: z.string().max(3),
      name: z.string().min(1),
      ids: z.array(z.string()).min(1),
      mine: z.number().max(5, 'five or fewer, please'),
      req: z.number(),
      num: z.number(),
    });
    expect(messages(s, { hrv: 400.5, step: 1.23, half: 0.3, pct: -60, hr: 52.5, pos: 0, note: 'abcd', name: '', ids: [], mine: 6, num: 'x' })).toEqual({
      hrv: 'Too large: at most 400.',
      step: 'At most 1 decimal place.',
      half: 'Use steps of 0.5.',
      pct: 'Too small: at least -50.',
      hr: 'Enter a whole number.',
      pos: 'Too small: more than 0.',
      note: 'Too long: at most 3 characters.',
      name: 'Required.',
      ids: 'Too small: at least 1.',
      mine: 'five or fewer, please',
      req: 'Required.',
      num: 'Enter a number.',
    });
  });
});

describe('through a verb', () => {
  let f: ClinicFixture;
  beforeAll(() => {
    f = createClinicFixture();
  });
  afterAll(() => f.close());

  it('vitals out of range and a fractional heart rate read as words, in the message and at the field', () => {
    let e: unknown;
    try {
      f.call(f.a.users.physio, 'vitals.record', { athlete_id: f.a.athleteId, date: '2026-11-18', resting_hr_bpm: 52.5, hrv_rmssd_ms: 400.5 });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).issues).toEqual([
      { path: 'resting_hr_bpm', message: 'Enter a whole number.' },
      { path: 'hrv_rmssd_ms', message: 'Too large: at most 400.' },
    ]);
    expect((e as AppError).message).not.toMatch(/expected|<=|Too big/);
  });

  it('summaries name tests and stages in words and days in the app format', () => {
    const r = f.call(f.a.users.physio, 'workload.logSessionLoads', { athlete_id: f.a.athleteId, date: '2026-11-05', duration_min: 30, rpe: 4 });
    expect(r.changeset.summary).toContain('on 5 Nov 2026 (RPE 4 × 30 min = 120 AU)');
    const s = f.call(f.a.users.physio, 'screenings.create', {
      athlete_id: f.a.athleteId,
      test: 'weight_bearing_lunge',
      side: 'left',
      value: 11,
      unit: 'cm',
      date: '2026-11-05',
    });
    expect(s.changeset.summary).toMatch(/^Record weight bearing lunge \(11 cm\)/);
    expect(formatDay('2026-01-09')).toBe('9 Jan 2026');
    expect(codeWords('return_to_play')).toBe('return to play');
  });
});
