import { describe, expect, it } from 'vitest';
import type { PlannedChangeset, RowChange, RuleActor } from './changeset';
import type { FeeCodeHistory } from './policy';
import {
  canApprove,
  evaluateOrgBudgetCap,
  evaluatePolicy,
  feeCodeTargets,
  mentionsSignoff,
  numericBaselines,
  numericHistoryKey,
  OWNER_AUTHORITY_CODES,
  signoffFieldsSet,
} from './policy';
import type { Role } from './roles';

const TODAY = '2026-11-29';
const ctx = { today: TODAY };

function actor(role: Role, userId = 'u-1'): RuleActor {
  return { userId, orgId: 'org-1', role, linkedAthleteId: null, active: true };
}
const physio = actor('physio', 'u-physio');
const owner = actor('owner', 'u-owner');

function cs(changes: RowChange[], verb = 'test.verb'): PlannedChangeset {
  return { verb, summary: 'test', changes };
}
function price(id: string, before: number, after: number): RowChange {
  return { op: 'update', table: 'rate_item', id, version: 1, before: { price_cents: before }, after: { price_cents: after } };
}
function load(id: string, date = '2026-11-28', rpe = 6, duration_min = 60): RowChange {
  return {
    op: 'insert',
    table: 'session_load',
    id,
    after: { athlete_id: 'a-1', training_session_id: null, date, duration_min, rpe, load_au: rpe * duration_min },
  };
}
const WITHIN = { code: 'within_limits', effect: 'allow' } as const;

describe('evaluatePolicy: records per changeset (kinetix.md §3)', () => {
  it('allows exactly 50 records', () => {
    const r = evaluatePolicy(physio, cs(Array.from({ length: 50 }, (_, i) => load(`l${i}`))), ctx);
    expect(r.verdict).toBe('allow');
    expect(r.decisions).toEqual([
      { ...WITHIN, reason: 'Within every policy limit (50 records).', rule: 'kinetix.md §3 Policy engine', detail: { records: 50 } },
    ]);
    expect(r.reasons).toEqual([]);
    expect(r.approverRole).toBeNull();
  });

  it('denies 51 records with one changeset-level decision', () => {
    const r = evaluatePolicy(physio, cs(Array.from({ length: 51 }, (_, i) => load(`l${i}`))), ctx);
    expect(r.verdict).toBe('deny');
    expect(r.decisions).toEqual([
      {
        code: 'too_many_records',
        effect: 'deny',
        reason: 'This change touches 51 records; at most 50 are allowed in one change. Split it into smaller changes.',
        rule: 'kinetix.md §3 Policy engine: at most 50 records per changeset',
        detail: { records: 51, max: 50 },
      },
    ]);
    expect(r.reasons).toEqual([r.decisions[0]!.reason]);
  });
});

describe('evaluatePolicy: a processed capture trial counts as one record with its readings', () => {
  const session: RowChange = { op: 'insert', table: 'capture_session', id: 'cs-1', after: { athlete_id: 'a-1', recorded_at: '2026-11-28T10:00:00Z' } };
  const reading = (i: number, sessionId = 'cs-1'): RowChange => ({
    op: 'insert',
    table: 'pose_metric',
    id: `pm-${sessionId}-${i}`,
    after: { capture_session_id: sessionId, athlete_id: 'a-1', joint: 'knee', side: 'left', value_deg: 40 + i },
  });
  it('a session inserted with 120 readings is within the limit (counted as 1 record)', () => {
    const r = evaluatePolicy(physio, cs([session, ...Array.from({ length: 120 }, (_, i) => reading(i))]), ctx);
    expect(r.verdict).toBe('allow');
    expect(r.decisions).toEqual([expect.objectContaining({ ...WITHIN, detail: { records: 1 } })]);
  });
  it('51 readings without their session in the same changeset are 51 records (deny)', () => {
    const r = evaluatePolicy(physio, cs(Array.from({ length: 51 }, (_, i) => reading(i))), ctx);
    expect(r.verdict).toBe('deny');
    expect(r.decisions[0]).toMatchObject({ code: 'too_many_records', detail: { records: 51 } });
  });
  it('readings of another session do not ride along with an inserted session', () => {
    const r = evaluatePolicy(physio, cs([session, ...Array.from({ length: 50 }, (_, i) => reading(i, 'cs-other'))]), ctx);
    expect(r.verdict).toBe('deny');
    expect(r.decisions[0]).toMatchObject({ code: 'too_many_records', detail: { records: 51 } });
  });
});

describe('evaluatePolicy: numeric changes over 20% need an owner', () => {
  it('allows exactly +20% and exactly −20%', () => {
    expect(evaluatePolicy(physio, cs([price('r1', 10_000, 12_000)]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(physio, cs([price('r1', 10_000, 8_000)]), ctx).verdict).toBe('allow');
    // Floats at the edge: RPE 5 → 6 is exactly 20%.
    const rpe: RowChange = { op: 'update', table: 'session_load', id: 's1', version: 3, before: { rpe: 5 }, after: { rpe: 6 } };
    expect(evaluatePolicy(physio, cs([rpe]), ctx).verdict).toBe('allow');
  });

  it('marks +20.01% as needs owner, with the row, field and numbers', () => {
    const r = evaluatePolicy(physio, cs([price('r1', 10_000, 12_001)]), ctx);
    expect(r.verdict).toBe('needs_owner');
    expect(r.approverRole).toBe('owner');
    expect(r.decisions).toEqual([
      {
        code: 'numeric_change_needs_owner',
        effect: 'needs_owner',
        reason: 'The price $100.00 → $120.01 is a 20.01% rise (over 20%); an owner must approve this change in the app.',
        rule: 'kinetix.md §3 Policy engine: a change of more than 20% to a numeric value needs an owner (cumulative: judged from the last owner-approved value and the 30-day extremes, models/policy.ts numericBaselines)',
        table: 'rate_item',
        rowId: 'r1',
        field: 'price_cents',
        detail: { before: 10_000, after: 12_001, change_pct: 20.01, limit_pct: 20, baseline: 10_000, baseline_source: 'current' },
      },
    ]);
    expect(r.reasons).toEqual([r.decisions[0]!.reason]);
  });

  it("a physio's 25% bulk rate rise needs an owner for every row; an owner's is allowed and says why", () => {
    const rows = [price('r1', 8_000, 10_000), price('r2', 4_000, 5_000), price('r3', 10_000, 11_000)];
    const p = evaluatePolicy(physio, cs(rows, 'rates.bulkUpdate'), ctx);
    expect(p.verdict).toBe('needs_owner');
    expect(p.decisions.map((d) => [d.code, d.rowId, d.field])).toEqual([
      ['numeric_change_needs_owner', 'r1', 'price_cents'],
      ['numeric_change_needs_owner', 'r2', 'price_cents'],
    ]);
    const o = evaluatePolicy(owner, cs(rows, 'rates.bulkUpdate'), ctx);
    expect(o.verdict).toBe('allow');
    expect(o.reasons).toEqual([]);
    expect(o.decisions.map((d) => [d.code, d.effect, d.rowId])).toEqual([
      ['numeric_change_by_owner', 'allow', 'r1'],
      ['numeric_change_by_owner', 'allow', 'r2'],
    ]);
    expect(o.decisions[0]!.reason).toBe('The price $80.00 → $100.00 is a 25% rise (over 20%); you are an owner, so no further approval is needed.');
  });

  it('judges each listed field; a cut counts like a rise; from 0 is over the limit; unlisted fields and inserts are not judged', () => {
    const loadEdit: RowChange = {
      op: 'update',
      table: 'session_load',
      id: 's1',
      version: 2,
      before: { load_au: 400, duration_min: 80, rpe: 5 },
      after: { load_au: 300, duration_min: 60, rpe: 5 },
    };
    const session: RowChange = { op: 'update', table: 'training_session', id: 't1', version: 1, before: { duration_min: 0 }, after: { duration_min: 30 } };
    const vitals: RowChange = { op: 'update', table: 'vitals', id: 'v1', version: 1, before: { resting_hr_bpm: 50 }, after: { resting_hr_bpm: 80 } };
    const budget: RowChange = { op: 'update', table: 'app_user', id: 'u9', version: 1, before: { budget_cap_usd: null }, after: { budget_cap_usd: 500 } };
    const r = evaluatePolicy(physio, cs([loadEdit, session, vitals, budget, load('new')]), ctx);
    expect(r.verdict).toBe('needs_owner');
    expect(r.decisions.map((d) => [d.table, d.rowId, d.field, d.detail?.change_pct])).toEqual([
      ['session_load', 's1', 'load_au', 25],
      ['session_load', 's1', 'duration_min', 25],
      ['training_session', 't1', 'duration_min', null],
    ]);
    expect(r.decisions[0]!.reason).toBe('The session load (AU) 400 → 300 is a 25% cut (over 20%); an owner must approve this change in the app.');
    expect(r.decisions[2]!.reason).toContain('very large (from 0)');
  });
});

describe('evaluatePolicy: rates between $1 and $10,000', () => {
  const item = (cents: unknown): RowChange => ({
    op: 'insert',
    table: 'rate_item',
    id: 'n1',
    after: { folder_id: 'f1', code: 'X1', name: 'Thing', item_type: 'treatment', price_cents: cents },
  });

  it('allows $1.00 and $10,000.00 exactly', () => {
    expect(evaluatePolicy(physio, cs([item(100)]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(physio, cs([item(1_000_000)]), ctx).verdict).toBe('allow');
  });

  it('denies $0.99, $10,000.01 and fractional cents', () => {
    const r = evaluatePolicy(physio, cs([item(99)]), ctx);
    expect(r.verdict).toBe('deny');
    expect(r.decisions).toEqual([
      {
        code: 'rate_out_of_range',
        effect: 'deny',
        reason: 'A price of $0.99 is outside the allowed range of $1.00 to $10,000.00 (whole cents).',
        rule: 'kinetix.md §3 Policy engine: rates between $1 and $10,000',
        table: 'rate_item',
        rowId: 'n1',
        field: 'price_cents',
        detail: { value: 99, min_cents: 100, max_cents: 1_000_000 },
      },
    ]);
    expect(evaluatePolicy(physio, cs([item(1_000_001)]), ctx).decisions[0]!.code).toBe('rate_out_of_range');
    expect(evaluatePolicy(physio, cs([item(150.5)]), ctx).decisions[0]!.code).toBe('rate_out_of_range');
    expect(evaluatePolicy(physio, cs([item('100')]), ctx).decisions[0]!.code).toBe('rate_out_of_range');
  });

  it('deny wins over needs-owner when one change does both', () => {
    const r = evaluatePolicy(physio, cs([price('r1', 500, 50)]), ctx);
    expect(r.verdict).toBe('deny');
    expect(r.decisions.map((d) => d.code)).toEqual(['rate_out_of_range', 'numeric_change_needs_owner']);
    expect(r.reasons).toEqual(['A price of $0.50 is outside the allowed range of $1.00 to $10,000.00 (whole cents).']);
    expect(r.approverRole).toBeNull();
  });
});

describe('evaluatePolicy: scales and dates', () => {
  const wellness = (over: Record<string, unknown>): RowChange => ({
    op: 'insert',
    table: 'wellness',
    id: 'w1',
    after: { athlete_id: 'a-1', date: TODAY, sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3, notes: '', ...over },
  });

  it('allows wellness 1 and 5, denies 0, 6 and 2.5', () => {
    expect(evaluatePolicy(physio, cs([wellness({ sleep: 1, mood: 5 })]), ctx).verdict).toBe('allow');
    const r = evaluatePolicy(physio, cs([wellness({ sleep: 0, stress: 6, mood: 2.5 })]), ctx);
    expect(r.verdict).toBe('deny');
    expect(r.decisions.map((d) => [d.code, d.field])).toEqual([
      ['scale_out_of_range', 'sleep'],
      ['scale_out_of_range', 'stress'],
      ['scale_out_of_range', 'mood'],
    ]);
    expect(r.decisions[0]!.reason).toBe('0 is not a valid wellness sleep (1–5); use a whole number from 1 to 5.');
  });

  it('allows RPE 0 and 10 (and 6.5), denies 10.5 and −1', () => {
    expect(evaluatePolicy(physio, cs([load('a', TODAY, 0), load('b', TODAY, 10), load('c', TODAY, 6.5)]), ctx).verdict).toBe('allow');
    const r = evaluatePolicy(physio, cs([load('a', TODAY, 10.5), load('b', TODAY, -1)]), ctx);
    expect(r.decisions).toEqual([
      expect.objectContaining({ code: 'scale_out_of_range', rowId: 'a', field: 'rpe', reason: '10.5 is not a valid session RPE (CR-10, 0–10) from 0 to 10.' }),
      expect.objectContaining({ code: 'scale_out_of_range', rowId: 'b', field: 'rpe' }),
    ]);
  });

  it('allows a clinical date of today and tomorrow (time zones east of UTC), denies the day after, a date before 1950 and an impossible date; a planned session may be in the future', () => {
    const injury = (onset: string): RowChange => ({
      op: 'insert',
      table: 'injury',
      id: 'i1',
      after: {
        athlete_id: 'a-1',
        body_part: 'Hamstring',
        side: 'left',
        mechanism: 'non_contact',
        onset_date: onset,
        severity: 'moderate',
        status: 'open',
        clinician_notes: '',
      },
    });
    expect(evaluatePolicy(physio, cs([injury(TODAY)]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(physio, cs([injury('2026-11-30')]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(physio, cs([injury('2026-12-01')]), ctx).decisions).toEqual([
      {
        code: 'date_in_future',
        effect: 'deny',
        reason:
          "The injury onset date 2026-12-01 is in the future (today is 2026-11-29; one day's grace allows for time zones); clinical events are recorded on or before the day they happen.",
        rule: 'kinetix.md §3 Policy engine: dates not in the future for clinical events',
        table: 'injury',
        rowId: 'i1',
        field: 'onset_date',
        detail: { value: '2026-12-01', today: TODAY },
      },
    ]);
    expect(evaluatePolicy(physio, cs([injury('1900-01-01')]), ctx).decisions).toEqual([
      expect.objectContaining({ code: 'date_too_early', effect: 'deny', field: 'onset_date', detail: { value: '1900-01-01', earliest: '1950-01-01' } }),
    ]);
    expect(evaluatePolicy(physio, cs([injury('2026-02-30')]), ctx).decisions.map((d) => d.code)).toEqual(['date_invalid']);
    const capture: RowChange = { op: 'insert', table: 'capture_session', id: 'c1', after: { recorded_at: '2026-12-01T09:00:00.000Z' } };
    expect(evaluatePolicy(physio, cs([capture]), ctx).decisions.map((d) => [d.code, d.field])).toEqual([['date_in_future', 'recorded_at']]);
    const planned: RowChange = {
      op: 'insert',
      table: 'training_session',
      id: 't1',
      after: { squad_id: null, date: '2026-12-05', kind: 'pitch', duration_min: 90, notes: '' },
    };
    expect(evaluatePolicy(physio, cs([planned]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(physio, cs([load('x', '2026-12-01')]), ctx).decisions.map((d) => d.code)).toEqual(['date_in_future']);
  });
});

describe('evaluatePolicy: RTP sign-offs only by the holder of that permission', () => {
  const rtpUpdate = (after: Record<string, unknown>, before: Record<string, unknown> = {}): RowChange => ({
    op: 'update',
    table: 'rtp_entry',
    id: 'e1',
    version: 4,
    before: { doctor_signoff_by: null, doctor_signoff_at: null, ...before },
    after,
  });
  const at = '2026-11-29T10:00:00.000Z';

  it('a physio cannot give the doctor sign-off', () => {
    const r = evaluatePolicy(physio, cs([rtpUpdate({ doctor_signoff_by: 'u-physio', doctor_signoff_at: at })]), ctx);
    expect(r.verdict).toBe('deny');
    expect(r.decisions).toEqual([
      {
        code: 'signoff_not_holder',
        effect: 'deny',
        reason: 'Only the doctor may give or withdraw the doctor sign-off; your role (physiotherapist) does not hold it.',
        rule: 'kinetix.md §3 Policy engine: RTP sign-offs only by the holder of that sign-off permission',
        table: 'rtp_entry',
        rowId: 'e1',
        field: 'doctor_signoff_by',
        detail: { permission: 'rtp.signoff_doctor', role: 'physio' },
      },
    ]);
  });

  it('nor withdraw it', () => {
    const r = evaluatePolicy(
      physio,
      cs([rtpUpdate({ doctor_signoff_by: null, doctor_signoff_at: null }, { doctor_signoff_by: 'u-doc', doctor_signoff_at: at })]),
      ctx,
    );
    expect(r.decisions.map((d) => d.code)).toEqual(['signoff_not_holder']);
  });

  it('a doctor may sign in their own name, not on behalf of another doctor', () => {
    const doctor = actor('doctor', 'u-doc');
    expect(evaluatePolicy(doctor, cs([rtpUpdate({ doctor_signoff_by: 'u-doc', doctor_signoff_at: at })]), ctx).verdict).toBe('allow');
    const r = evaluatePolicy(doctor, cs([rtpUpdate({ doctor_signoff_by: 'u-other-doc', doctor_signoff_at: at })]), ctx);
    expect(r.decisions).toEqual([expect.objectContaining({ code: 'signoff_for_other_user', effect: 'deny', field: 'doctor_signoff_by' })]);
  });

  it('on insert, only sign-offs that are set are judged; a coach gives the coach sign-off', () => {
    const insert = (over: Record<string, unknown>): RowChange => ({
      op: 'insert',
      table: 'rtp_entry',
      id: 'e2',
      after: {
        injury_id: 'i1',
        athlete_id: 'a-1',
        stage: 'return_to_training',
        criteria_met: '',
        notes: '',
        physio_signoff_by: null,
        physio_signoff_at: null,
        doctor_signoff_by: null,
        doctor_signoff_at: null,
        coach_signoff_by: null,
        coach_signoff_at: null,
        ...over,
      },
    });
    expect(evaluatePolicy(physio, cs([insert({})]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(physio, cs([insert({ physio_signoff_by: 'u-physio', physio_signoff_at: at })]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(actor('coach', 'u-coach'), cs([insert({ coach_signoff_by: 'u-coach', coach_signoff_at: at })]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(physio, cs([insert({ coach_signoff_by: 'u-physio', coach_signoff_at: at })]), ctx).decisions.map((d) => [d.code, d.field])).toEqual([
      ['signoff_not_holder', 'coach_signoff_by'],
    ]);
  });

  it('an unchanged sign-off in an update is not judged', () => {
    const r = evaluatePolicy(
      physio,
      cs([
        {
          op: 'update',
          table: 'rtp_entry',
          id: 'e1',
          version: 2,
          before: { notes: 'a', doctor_signoff_by: 'u-doc' },
          after: { notes: 'b', doctor_signoff_by: 'u-doc' },
        },
      ]),
      ctx,
    );
    expect(r.verdict).toBe('allow');
  });
});

describe('canApprove', () => {
  it('only an owner approves needs-owner; nobody approves deny; allow is the run user\u2019s to approve', () => {
    expect(canApprove('owner', 'needs_owner')).toBe(true);
    for (const role of ['admin', 'physio', 'doctor', 'super_admin', 'athlete'] as const) expect(canApprove(role, 'needs_owner')).toBe(false);
    expect(canApprove('owner', 'deny')).toBe(false);
    expect(canApprove('physio', 'allow')).toBe(true);
  });
});

describe('reasons in clinician words', () => {
  it('name the field as the forms do (no table.column, no permission id), with units and money as money', () => {
    const future = '2026-12-03';
    const changes: RowChange[] = [
      price('p1', 10_000, 15_000),
      {
        op: 'update',
        table: 'session_load',
        id: 'l1',
        version: 1,
        before: { rpe: 5, duration_min: 60, load_au: 300 },
        after: { rpe: 9, duration_min: 90, load_au: 810 },
      },
      { op: 'update', table: 'app_user', id: 'u1', version: 1, before: { budget_cap_usd: 50 }, after: { budget_cap_usd: 100 } },
      { op: 'insert', table: 'screening', id: 's1', after: { athlete_id: 'a-1', date: future } },
      { op: 'insert', table: 'wellness', id: 'w1', after: { athlete_id: 'a-1', date: '2026-13-01', sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3 } },
      { op: 'update', table: 'rtp_entry', id: 'r1', version: 1, before: { coach_signoff_by: null }, after: { coach_signoff_by: 'u-physio' } },
    ];
    const reasons = evaluatePolicy(physio, cs(changes), ctx).decisions.map((d) => d.reason);
    expect(reasons.length).toBeGreaterThanOrEqual(8);
    for (const r of reasons) {
      expect(r).not.toMatch(/\b[a-z]+_[a-z_]+\b|\b[a-z_]+\.[a-z_]+\b/);
    }
    expect(reasons).toEqual(
      expect.arrayContaining([
        'The price $100.00 → $150.00 is a 50% rise (over 20%); an owner must approve this change in the app.',
        'The session RPE 5 → 9 is a 80% rise (over 20%); an owner must approve this change in the app.',
        'The monthly assistant budget cap $50.00 → $100.00 is a 100% rise (over 20%); an owner must approve this change in the app.',
        `The screening date ${future} is in the future (today is ${TODAY}; one day's grace allows for time zones); clinical events are recorded on or before the day they happen.`,
        'The wellness date "2026-13-01" is not a real calendar date.',
        'Only the coach may give or withdraw the coach sign-off; your role (physiotherapist) does not hold it.',
      ]),
    );
  });
});

describe('sign-off fields a change sets (HQ attestation check)', () => {
  const id = '018f0000-0000-7000-8000-000000000001';
  const upd = (before: Record<string, unknown>, after: Record<string, unknown>): RowChange =>
    ({ op: 'update', table: 'rtp_entry', id, version: 1, before, after }) as RowChange;
  it('lists the sign-off fields set or withdrawn, judged against before', () => {
    expect(signoffFieldsSet(upd({ doctor_signoff_by: null, doctor_signoff_at: null }, { doctor_signoff_by: 'u1', doctor_signoff_at: 'x' }))).toEqual([
      'doctor_signoff_by',
      'doctor_signoff_at',
    ]);
    expect(signoffFieldsSet(upd({ physio_signoff_by: 'u1' }, { physio_signoff_by: null }))).toEqual(['physio_signoff_by']);
    expect(signoffFieldsSet(upd({ coach_signoff_by: 'u1' }, { coach_signoff_by: 'u1' }))).toEqual([]);
    expect(signoffFieldsSet(upd({ notes: '' }, { notes: 'x' }))).toEqual([]);
    expect(signoffFieldsSet({ op: 'insert', table: 'rtp_entry', id, after: { doctor_signoff_by: null, coach_signoff_by: 'u2' } } as RowChange)).toEqual([
      'coach_signoff_by',
    ]);
    expect(signoffFieldsSet({ op: 'update', table: 'injury', id, version: 1, before: {}, after: { doctor_signoff_by: 'u1' } } as RowChange)).toEqual([]);
  });
  it('mentionsSignoff is a superset that needs no stored row', () => {
    expect(mentionsSignoff([upd({ coach_signoff_by: 'u1' }, { coach_signoff_by: 'u1' })])).toBe(true);
    expect(mentionsSignoff([upd({ notes: '' }, { notes: 'x' })])).toBe(false);
    expect(mentionsSignoff([{ op: 'insert', table: 'rtp_entry', id, after: { doctor_signoff_by: null } } as RowChange])).toBe(false);
  });
});

describe('evaluatePolicy: the 20% price limit is cumulative (numericBaselines, issue 13)', () => {
  const NOW = '2026-11-29T12:00:00.000Z';
  const day = (d: number) => new Date(Date.parse(NOW) - d * 86_400_000).toISOString();
  const h = (at: string, before: number, after: number, ownerApproved = false) => ({ at, before, after, ownerApproved });
  const withHistory = (entries: ReturnType<typeof h>[]) => ({
    today: TODAY,
    now: NOW,
    history: new Map([[numericHistoryKey('rate_item', 'r1', 'price_cents'), entries]]),
  });

  it('4000 → 4800 → 5760 → 6912: each step is 20 %, but the second and third need an owner', () => {
    expect(evaluatePolicy(physio, cs([price('r1', 4000, 4800)]), withHistory([])).verdict).toBe('allow');
    const second = evaluatePolicy(physio, cs([price('r1', 4800, 5760)]), withHistory([h(day(2), 4000, 4800)]));
    expect(second.verdict).toBe('needs_owner');
    expect(second.decisions[0]).toMatchObject({ detail: { baseline: 4000, baseline_source: 'first_on_record', change_pct: 44 } });
    const third = evaluatePolicy(physio, cs([price('r1', 5760, 6912)]), withHistory([h(day(2), 4000, 4800), h(day(1), 4800, 5760)]));
    expect(third.verdict).toBe('needs_owner');
    expect(third.decisions[0]!.detail).toMatchObject({ baseline: 4000, change_pct: 72.8 });
    // Without history the same change is judged on its own (20 %: allowed), as before.
    expect(evaluatePolicy(physio, cs([price('r1', 5760, 6912)]), ctx).verdict).toBe('allow');
  });

  it('an owner-approved change re-bases: steps before it no longer count', () => {
    const r = evaluatePolicy(physio, cs([price('r1', 6000, 6600)]), withHistory([h(day(3), 4000, 4800), h(day(1), 4800, 6000, true)]));
    expect(r.verdict).toBe('allow');
    expect(
      evaluatePolicy(physio, cs([price('r1', 6600, 7800)]), withHistory([h(day(3), 4000, 4800), h(day(1), 4800, 6000, true), h(day(1), 6000, 6600)])).verdict,
    ).toBe('needs_owner');
  });

  it("the window's extremes bind a swing back the other way; values older than 30 days after the owner's price do not", () => {
    const hist = [h(day(40), 5000, 5000, true), h(day(10), 5000, 6000), h(day(5), 6000, 5500)];
    // 4700 is within 20 % of the owner's 5000 and of today's 5500, but 21.7 % below the window's 6000.
    const r = evaluatePolicy(physio, cs([price('r1', 5500, 4700)]), withHistory(hist));
    expect(r.verdict).toBe('needs_owner');
    expect(r.decisions[0]!.detail).toMatchObject({ baseline: 6000, baseline_source: 'window' });
    expect(r.reasons[0]).toMatch(/a value it held in the last 30 days/);
    const old = [h(day(60), 5000, 5000, true), h(day(40), 5000, 6000), h(day(35), 6000, 5500)];
    expect(evaluatePolicy(physio, cs([price('r1', 5500, 4700)]), withHistory(old)).verdict).toBe('allow');
  });

  it('numericBaselines lists the current value, the anchor and the window values', () => {
    expect(numericBaselines(5500, [h(day(40), 5000, 5000, true), h(day(10), 5000, 6000)], Date.parse(NOW))).toEqual([
      { value: 5500, source: 'current' },
      { value: 5000, source: 'owner_approved', at: day(40) },
      { value: 5000, source: 'window', at: day(10) },
      { value: 6000, source: 'window', at: day(10) },
    ]);
  });

  it('an owner making a cumulative raise is allowed, with the decision naming the baseline', () => {
    const r = evaluatePolicy(owner, cs([price('r1', 4800, 5760)]), withHistory([h(day(2), 4000, 4800)]));
    expect(r.verdict).toBe('allow');
    expect(r.decisions[0]).toMatchObject({ code: 'numeric_change_by_owner', detail: { baseline: 4000 } });
  });
});

describe('evaluatePolicy: a fee code change needs an owner (issue 13 review: code swap around the 20 % limit)', () => {
  const rename = (before: string, after: string): RowChange => ({
    op: 'update',
    table: 'rate_item',
    id: 'r1',
    version: 1,
    before: { code: before },
    after: { code: after },
  });

  it("a non-owner's code change waits for an owner; an owner's is allowed; a name-only change and an unchanged code are not judged", () => {
    const admin = actor('admin', 'u-admin');
    const p = evaluatePolicy(admin, cs([rename('CLU-001', 'OLD-001')], 'rates.updateItem'), ctx);
    expect(p.verdict).toBe('needs_owner');
    expect(p.decisions).toEqual([
      expect.objectContaining({
        code: 'fee_code_change_needs_owner',
        effect: 'needs_owner',
        table: 'rate_item',
        rowId: 'r1',
        field: 'code',
        detail: { before: 'CLU-001', after: 'OLD-001' },
      }),
    ]);
    expect(p.reasons[0]).toContain('CLU-001 → OLD-001');
    expect(evaluatePolicy(owner, cs([rename('CLU-001', 'OLD-001')]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(admin, cs([rename('CLU-001', 'CLU-001')]), ctx).verdict).toBe('allow');
    const nameOnly: RowChange = { op: 'update', table: 'rate_item', id: 'r1', version: 1, before: { name: 'A' }, after: { name: 'B' } };
    expect(evaluatePolicy(admin, cs([nameOnly]), ctx).verdict).toBe('allow');
  });
});

describe('evaluatePolicy: budget caps are limits (issue 13 review)', () => {
  const admin = actor('admin', 'u-admin');
  const cap = (before: number | null, after: number | null): RowChange => ({
    op: 'update',
    table: 'app_user',
    id: 'u9',
    version: 1,
    before: { budget_cap_usd: before },
    after: { budget_cap_usd: after },
  });
  it('removing a cap (→ null) needs an owner like a rise beyond any bound; an owner is allowed under owner authority', () => {
    const r = evaluatePolicy(admin, cs([cap(2, null)]), ctx);
    expect(r.verdict).toBe('needs_owner');
    expect(r.reasons).toEqual([
      'The monthly assistant budget cap $2.00 → no cap removes the limit (a rise beyond any bound, over 20%); an owner must approve this change in the app.',
    ]);
    expect(r.decisions[0]).toMatchObject({
      code: 'numeric_change_needs_owner',
      table: 'app_user',
      rowId: 'u9',
      field: 'budget_cap_usd',
      detail: { before: 2, after: null },
    });
    const o = evaluatePolicy(owner, cs([cap(2, null)]), ctx);
    expect(o.verdict).toBe('allow');
    expect(OWNER_AUTHORITY_CODES.has(o.decisions[0]!.code)).toBe(true);
  });
  it('a cut of any size, or a cap set where none was, needs no owner; a rise over 20 % does', () => {
    expect(evaluatePolicy(admin, cs([cap(200, 1)]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(admin, cs([cap(null, 5000)]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(admin, cs([cap(null, null)]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(admin, cs([cap(2, 2.4)]), ctx).verdict).toBe('allow');
    expect(evaluatePolicy(admin, cs([cap(2, 3)]), ctx).verdict).toBe('needs_owner');
  });
  it('the organisation cap follows the same rule (evaluateOrgBudgetCap)', () => {
    expect(evaluateOrgBudgetCap(admin, 200, 5000)).toMatchObject({
      verdict: 'needs_owner',
      approverRole: 'owner',
      reasons: [
        "The organisation's monthly assistant budget cap $200.00 → $5,000.00 is a 2400% rise (over 20%); an owner must approve this change in the app.",
      ],
    });
    expect(evaluateOrgBudgetCap(admin, 200, null).verdict).toBe('needs_owner');
    expect(evaluateOrgBudgetCap(admin, 200, 240).verdict).toBe('allow');
    expect(evaluateOrgBudgetCap(admin, 200, 10).verdict).toBe('allow');
    expect(evaluateOrgBudgetCap(admin, null, 10).verdict).toBe('allow');
    expect(evaluateOrgBudgetCap(owner, 200, null)).toMatchObject({ verdict: 'allow', decisions: [{ code: 'numeric_change_by_owner' }] });
  });
});

describe('evaluatePolicy: a budget cap is judged on rises only, cumulative ones too (issue 13 re-review)', () => {
  const NOW = '2026-11-29T12:00:00.000Z';
  const day = (d: number) => new Date(Date.parse(NOW) - d * 86_400_000).toISOString();
  const h = (at: string, before: number | null, after: number | null, ownerApproved = false) => ({ at, before, after, ownerApproved });
  const admin = actor('admin', 'u-admin');
  const cap = (before: number, after: number): RowChange => ({
    op: 'update',
    table: 'app_user',
    id: 'u9',
    version: 1,
    before: { budget_cap_usd: before },
    after: { budget_cap_usd: after },
  });
  const judge = (change: RowChange, entries: ReturnType<typeof h>[]) =>
    evaluatePolicy(admin, cs([change]), { today: TODAY, now: NOW, history: new Map([[numericHistoryKey('app_user', 'u9', 'budget_cap_usd'), entries]]) });
  const ownerTen = h(day(3), 20, 10, true);

  it('owner $10 → admin cut to $5 → admin $5.50: allowed (10 % above today, below the owner’s value)', () => {
    const r = judge(cap(5, 5.5), [ownerTen, h(day(2), 10, 5)]);
    expect(r.verdict).toBe('allow');
    expect(r.reasons).toEqual([]);
  });
  it('back to the owner’s value in steps within 20 %, and up to 20 % above it, allowed; past that, judged from the owner’s value', () => {
    const hist = [ownerTen, h(day(2), 10, 5), h(day(2), 5, 6), h(day(1), 6, 7.2), h(day(1), 7.2, 8.64)];
    expect(judge(cap(8.64, 10), hist).verdict).toBe('allow');
    expect(judge(cap(10, 12), [...hist, h(day(1), 8.64, 10)]).verdict).toBe('allow');
    const over = judge(cap(12, 12.5), [...hist, h(day(1), 8.64, 10), h(day(0), 10, 12)]);
    expect(over.verdict).toBe('needs_owner');
    expect(over.decisions[0]!.detail).toMatchObject({ baseline: 10, baseline_source: 'owner_approved', change_pct: 25 });
  });
  it('steps of 19 % still add up against the owner’s value, and against the window when no owner value is known', () => {
    expect(judge(cap(11.9, 14.16), [ownerTen, h(day(1), 10, 11.9)]).verdict).toBe('needs_owner');
    // Set where there was none (no numeric anchor): the window's lowest value is the reference.
    expect(judge(cap(2.38, 2.83), [h(day(2), null, 2), h(day(1), 2, 2.38)]).decisions[0]!.detail).toMatchObject({ baseline: 2, baseline_source: 'window' });
    // One step of more than 20 % needs an owner below the owner's value too.
    expect(judge(cap(4, 8), [ownerTen, h(day(1), 10, 4)]).decisions[0]!.detail).toMatchObject({ baseline: 4, baseline_source: 'current', change_pct: 100 });
  });
});

describe('evaluatePolicy: a fee code used before carries its last price (issue 13 review)', () => {
  const admin = actor('admin', 'u-admin');
  const history: FeeCodeHistory = {
    holders: new Map([
      [
        'pri-010',
        [
          {
            itemId: 'old',
            code: 'PRI-010',
            name: 'Initial assessment',
            priceCents: 22_000,
            at: '2026-11-01T10:00:00.000Z',
            how: 'renamed',
            codeNow: 'PRI-010-OLD',
          },
          { itemId: 'older', code: 'PRI-010', name: 'Assessment (2024)', priceCents: 15_000, at: '2024-01-01T10:00:00.000Z', how: 'deleted' },
        ],
      ],
    ]),
    prices: new Map([['r2', 50_000]]),
  };
  const create = (code: string, price_cents: number): RowChange => ({
    op: 'insert',
    table: 'rate_item',
    id: 'new',
    after: { folder_id: 'f', code, name: 'X', item_type: 'assessment', price_cents },
  });
  it('feeCodeTargets lists inserted and renamed-to codes, normalised (NFKC, trimmed, lower case)', () => {
    const rename: RowChange = { op: 'update', table: 'rate_item', id: 'r2', version: 1, before: { code: 'B' }, after: { code: 'ＰＲＩ-011' } };
    const caseOnly: RowChange = { op: 'update', table: 'rate_item', id: 'r3', version: 1, before: { code: 'c-1' }, after: { code: 'C-1' } };
    expect(feeCodeTargets([create(' PRI-010 ', 100), rename, caseOnly])).toEqual({ codes: ['pri-010', 'pri-011'], renamedIds: ['r2'] });
  });
  it('a new item under the code more than 20 % from its latest holder’s price needs an owner, naming that item and price', () => {
    const r = evaluatePolicy(admin, cs([create('pri-010', 999_900)]), { ...ctx, feeCodes: history });
    expect(r.verdict).toBe('needs_owner');
    expect(r.reasons).toEqual([
      'Fee code pri-010 was last billed at $220.00 by item "Initial assessment" (now PRI-010-OLD); the new item at $9,999.00 is a 4445% rise from it (over 20%); an owner must approve this change in the app.',
    ]);
    expect(r.decisions[0]).toMatchObject({ code: 'fee_code_reuse_needs_owner', detail: { previous_item_id: 'old', previous_price_cents: 22_000 } });
    expect(evaluatePolicy(admin, cs([create('PRI-010', 26_400)]), { ...ctx, feeCodes: history }).verdict).toBe('allow');
    expect(evaluatePolicy(admin, cs([create('PRI-010', 999_900)]), ctx).verdict).toBe('allow'); // no history given: not judged
    expect(evaluatePolicy(owner, cs([create('PRI-010', 999_900)]), { ...ctx, feeCodes: history }).decisions[0]!.code).toBe('fee_code_reuse_by_owner');
  });
  it('renaming an item to the code judges its stored price; the item’s own old code is not a reuse', () => {
    const toUsed: RowChange = { op: 'update', table: 'rate_item', id: 'r2', version: 1, before: { code: 'B' }, after: { code: 'PRI-010' } };
    expect(evaluatePolicy(admin, cs([toUsed]), { ...ctx, feeCodes: history }).decisions.map((d) => d.code)).toEqual([
      'fee_code_change_needs_owner',
      'fee_code_reuse_needs_owner',
    ]);
    const back: RowChange = { op: 'update', table: 'rate_item', id: 'old', version: 2, before: { code: 'PRI-010-OLD' }, after: { code: 'PRI-010' } };
    expect(evaluatePolicy(admin, cs([back]), { ...ctx, feeCodes: { ...history, prices: new Map([['old', 99_000]]) } }).decisions.map((d) => d.code)).toEqual([
      'fee_code_change_needs_owner',
    ]);
  });
  it('a code rename says the old code becomes free; an owner’s is allowed under owner authority', () => {
    const rename: RowChange = { op: 'update', table: 'rate_item', id: 'r1', version: 1, before: { code: 'PRI-010' }, after: { code: 'PRI-010-OLD' } };
    expect(evaluatePolicy(admin, cs([rename]), ctx).reasons[0]).toMatch(/PRI-010 becomes free for another item/);
    const o = evaluatePolicy(owner, cs([rename]), ctx);
    expect(o).toMatchObject({ verdict: 'allow', decisions: [{ code: 'fee_code_change_by_owner', effect: 'allow' }] });
    expect(OWNER_AUTHORITY_CODES.has('fee_code_change_by_owner')).toBe(true);
  });
});
