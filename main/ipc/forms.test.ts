/**
 * Entry forms on a real SQLite file: one row applies at once under the user's own name; a stale
 * form is refused with Conflict and nothing is written; a squad load and a sign-off wait for
 * review and apply through the proposals' approval path; rows can be left out of a bulk change;
 * a role without the verb's permission is refused; the policy's needs-owner waits for an owner.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTRACT, MAX_EXPECTED_ROWS } from '../../models/contract';
import { IdempotencyKeyTaken, listActivity, requestHashOf } from '../data/changesets';
import { openDb } from '../data/db';
import { getRow } from '../data/rows';
import { approveProposal, declineProposal, listProposals, proposeChangeset } from '../kinetix/proposals';
import { VERBS, planWrite } from '../services';
import { createClinicFixture, fixtureNow, type ClinicFixture } from '../testing/clinic-fixture';
import { narrowProposal, submitForm } from './forms';
import { getChangeset } from '../data/changesets';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const athlete = () => getRow<{ name: string; position: string | null; version: number }>(f.db, 'athlete', f.a.orgId, f.a.athleteId)!;
const now = fixtureNow();

describe('submitForm', () => {
  it('applies a one-row edit at once, as the user (no "via"), with the version the form showed', () => {
    const v = athlete().version;
    const r = submitForm(
      f.db,
      f.a.users.physio,
      {
        verb: 'athletes.update',
        input: { id: f.a.athleteId, position: 'Winger' },
        expected_versions: { [f.a.athleteId]: v },
        idempotency_key: 'form-key-0001',
      },
      now,
    );
    expect(r.status).toBe('applied');
    expect(athlete()).toMatchObject({ position: 'Winger', version: v + 1 });
    expect(listActivity(f.db, f.a.orgId, { limit: 1 })[0]).toMatchObject({ actor_name: 'Northbridge physio', via_assistant: false, record_id: f.a.athleteId });
    // The same form sent twice is applied once.
    const again = submitForm(
      f.db,
      f.a.users.physio,
      {
        verb: 'athletes.update',
        input: { id: f.a.athleteId, position: 'Winger' },
        expected_versions: { [f.a.athleteId]: v },
        idempotency_key: 'form-key-0001',
      },
      now,
    );
    expect(again.status === 'applied' && again.changeset.replayed).toBe(true);
    expect(athlete().version).toBe(v + 1);
  });

  it('refuses a stale form with Conflict and writes nothing', () => {
    const v = athlete().version;
    submitForm(f.db, f.a.users.doctor, { verb: 'athletes.update', input: { id: f.a.athleteId, position: 'Goalkeeper' } }, now);
    expect(() =>
      submitForm(
        f.db,
        f.a.users.physio,
        { verb: 'athletes.update', input: { id: f.a.athleteId, position: 'Winger' }, expected_versions: { [f.a.athleteId]: v } },
        now,
      ),
    ).toThrow(expect.objectContaining({ code: 'Conflict', conflicts: [{ table: 'athlete', id: f.a.athleteId, expectedVersion: v, actualVersion: v + 1 }] }));
    expect(athlete()).toMatchObject({ position: 'Goalkeeper', version: v + 1 });
  });

  it('checks the updated_at a form showed as well as the version (issue 12 B3); the contract takes either form, bounded', () => {
    const row = getRow<{ version: number; updated_at: string; position: string | null }>(f.db, 'athlete', f.a.orgId, f.a.athleteId)!;
    // The same version with another updated_at (on a synced device: HQ's row that replaced a refused local edit): refused.
    const otherState = { version: row.version, updated_at: new Date(Date.parse(row.updated_at) - 60_000).toISOString() };
    expect(() =>
      submitForm(
        f.db,
        f.a.users.physio,
        { verb: 'athletes.update', input: { id: f.a.athleteId, position: 'Winger' }, expected_versions: { [f.a.athleteId]: otherState } },
        now,
      ),
    ).toThrow(
      expect.objectContaining({
        code: 'Conflict',
        message: expect.stringMatching(/^Someone changed this record after you opened the form/),
        conflicts: [{ table: 'athlete', id: f.a.athleteId, expectedVersion: row.version, actualVersion: row.version }],
      }),
    );
    expect(athlete()).toMatchObject({ position: row.position, version: row.version });
    // The row as stored: saved.
    const r = submitForm(
      f.db,
      f.a.users.physio,
      {
        verb: 'athletes.update',
        input: { id: f.a.athleteId, position: 'Winger' },
        expected_versions: { [f.a.athleteId]: { version: row.version, updated_at: row.updated_at } },
      },
      now,
    );
    expect(r.status).toBe('applied');
    // The contract: a bare version or {version, updated_at}; nothing else, and at most MAX_EXPECTED_ROWS rows.
    const input = CONTRACT['forms.submit'].input;
    const id = f.a.athleteId;
    expect(input.safeParse({ verb: 'athletes.update', expected_versions: { [id]: 3 } }).success).toBe(true);
    expect(input.safeParse({ verb: 'athletes.update', expected_versions: { [id]: { version: 3, updated_at: row.updated_at } } }).success).toBe(true);
    expect(input.safeParse({ verb: 'athletes.update', expected_versions: { [id]: { version: 3 } } }).success).toBe(false);
    expect(input.safeParse({ verb: 'athletes.update', expected_versions: { [id]: { version: 3, updated_at: 'x'.repeat(65) } } }).success).toBe(false);
    expect(input.safeParse({ verb: 'athletes.update', expected_versions: { [id]: { version: 3, updated_at: row.updated_at, extra: 1 } } }).success).toBe(false);
    const many = Object.fromEntries(Array.from({ length: MAX_EXPECTED_ROWS + 1 }, (_, i) => [`row-${i}`, 1]));
    expect(input.safeParse({ verb: 'athletes.update', expected_versions: many }).success).toBe(false);
  });

  it('a form opened with nothing stored (expect_absent) is refused when a row appeared meanwhile; replacing it then needs its current version', () => {
    const day = { athlete_id: f.a.athleteId, date: '2026-11-20', sleep: 4, soreness: 2, stress: 2, mood: 4, fatigue: 2 };
    const getDay = () =>
      f.call(f.a.users.physio, 'wellness.getDay', { athlete_id: f.a.athleteId, date: '2026-11-20' }) as { id: string; version: number; sleep: number } | null;
    expect(getDay()).toBeNull();
    // Both open the empty form; the doctor saves first.
    submitForm(f.db, f.a.users.doctor, { verb: 'wellness.submit', input: day, expect_absent: true }, now);
    const stored = getDay()!;
    expect(() => submitForm(f.db, f.a.users.physio, { verb: 'wellness.submit', input: { ...day, sleep: 1 }, expect_absent: true }, now)).toThrow(
      expect.objectContaining({
        code: 'Conflict',
        message: expect.stringMatching(/showed nothing stored/),
        conflicts: [{ table: 'wellness', id: stored.id, expectedVersion: 0, actualVersion: stored.version }],
      }),
    );
    expect(getDay()).toMatchObject({ sleep: 4, version: stored.version });
    // After reloading the stored row, Replace with its version works once.
    const r = submitForm(
      f.db,
      f.a.users.physio,
      { verb: 'wellness.submit', input: { ...day, sleep: 1 }, expected_versions: { [stored.id]: stored.version } },
      now,
    );
    expect(r.status).toBe('applied');
    expect(getDay()).toMatchObject({ sleep: 1, version: stored.version + 1 });
  });

  it('refuses a role without the permission (coach cannot add an injury)', () => {
    expect(() =>
      submitForm(
        f.db,
        f.a.users.coach,
        { verb: 'injuries.create', input: { athlete_id: f.a.athleteId, body_part: 'ankle', side: 'left', onset_date: '2026-11-19', severity: 'mild' } },
        now,
      ),
    ).toThrow(expect.objectContaining({ code: 'Forbidden' }));
  });

  it('a squad load waits for review; approve applies it as the user; rows can be left out first', () => {
    const r = submitForm(
      f.db,
      f.a.users.physio,
      { verb: 'workload.logSessionLoads', input: { squad_id: f.a.squadId, date: '2026-11-20', duration_min: 60, rpe: 5 } },
      now,
    );
    if (r.status !== 'review') throw new Error('expected review');
    expect(r.proposal).toMatchObject({ source: 'page', status: 'proposed' });
    expect(r.proposal.changes).toHaveLength(2);
    const drop = r.proposal.changes.find((c) => c.op === 'insert' && c.after.athlete_id === f.a.otherAthleteId)!.id;
    const narrowed = narrowProposal(f.db, f.a.users.physio, { changeset_id: r.proposal.id, content_hash: r.proposal.contentHash, drop_ids: [drop] }, now);
    expect(narrowed.changes).toHaveLength(1);
    expect(narrowed.summary).toMatch(/1 of 2 rows left out/);
    // The reviewed (wider) proposal can no longer be approved.
    expect(() => approveProposal(f.db, { approverUserId: f.a.users.physio, changesetId: r.proposal.id, contentHash: r.proposal.contentHash, now })).toThrow(
      expect.objectContaining({ code: 'Conflict' }),
    );
    const applied = approveProposal(f.db, { approverUserId: f.a.users.physio, changesetId: narrowed.id, contentHash: narrowed.contentHash, now });
    expect(applied.changeset.changes).toHaveLength(1);
    expect(listActivity(f.db, f.a.orgId, { limit: 1 })[0]).toMatchObject({ actor_name: 'Northbridge physio', via_assistant: false });
  });

  it('an Undo of a squad load is applied whole: leaving rows out is refused and the Undo stays applicable (issue 13 re-review minor)', () => {
    const r = submitForm(
      f.db,
      f.a.users.physio,
      { verb: 'workload.logSessionLoads', input: { squad_id: f.a.squadId, date: '2026-11-20', duration_min: 60, rpe: 5 } },
      now,
    );
    if (r.status !== 'review') throw new Error('expected review');
    approveProposal(f.db, { approverUserId: f.a.users.physio, changesetId: r.proposal.id, contentHash: r.proposal.contentHash, now });
    const u = submitForm(f.db, f.a.users.physio, { verb: 'changesets.undo', input: { changeset_id: r.proposal.id } }, now);
    if (u.status !== 'review') throw new Error('expected review');
    expect(u.proposal.verb).toBe('changesets.undo');
    // before: a partial Undo was applied with no link to the load, which stayed "applied" with an Undo that always conflicted
    expect(() =>
      narrowProposal(f.db, f.a.users.physio, { changeset_id: u.proposal.id, content_hash: u.proposal.contentHash, drop_ids: [u.proposal.changes[0]!.id] }, now),
    ).toThrow(expect.objectContaining({ code: 'Validation', message: expect.stringMatching(/^An Undo is applied whole/) }));
    approveProposal(f.db, { approverUserId: f.a.users.physio, changesetId: u.proposal.id, contentHash: u.proposal.contentHash, now });
    expect(getChangeset(f.db, f.a.orgId, r.proposal.id)).toMatchObject({ status: 'undone' });
  });

  it('a squad load takes per-athlete minutes and RPE; a stray athlete is refused', () => {
    const r = submitForm(
      f.db,
      f.a.users.physio,
      {
        verb: 'workload.logSessionLoads',
        input: {
          squad_id: f.a.squadId,
          date: '2026-11-20',
          duration_min: 60,
          rpe: 5,
          per_athlete: [{ athlete_id: f.a.otherAthleteId, duration_min: 20, rpe: 7 }],
        },
      },
      now,
    );
    if (r.status !== 'review') throw new Error('expected review');
    const rows = Object.fromEntries(r.proposal.changes.map((c) => (c.op === 'insert' ? [c.after.athlete_id as string, c.after] : ['', {}])));
    expect(rows[f.a.athleteId]).toMatchObject({ duration_min: 60, rpe: 5, load_au: 300 });
    expect(rows[f.a.otherAthleteId]).toMatchObject({ duration_min: 20, rpe: 7, load_au: 140 });
    expect(r.proposal.summary).toMatch(/1 with their own minutes\/RPE/);
    expect(() =>
      submitForm(
        f.db,
        f.a.users.physio,
        {
          verb: 'workload.logSessionLoads',
          input: {
            squad_id: f.a.squadId,
            date: '2026-11-20',
            duration_min: 60,
            rpe: 5,
            exclude_athlete_ids: [f.a.otherAthleteId],
            per_athlete: [{ athlete_id: f.a.otherAthleteId, rpe: 7 }],
          },
        },
        now,
      ),
    ).toThrow(expect.objectContaining({ code: 'Validation' }));
  });

  it('a sign-off is reviewed first; a coach signing before the doctor is told so', () => {
    const r = submitForm(f.db, f.a.users.coach, { verb: 'rtp.signoffCoach', input: { id: f.a.rtpId, signed: true } }, now);
    if (r.status !== 'review') throw new Error('expected review');
    expect(r.notes.join(' ')).toMatch(/doctor has not cleared this stage/);
    expect(getRow<{ coach_signoff_by: string | null }>(f.db, 'rtp_entry', f.a.orgId, f.a.rtpId)!.coach_signoff_by).toBeNull();
  });

  it('a fee change of more than 20 % waits for an owner', () => {
    const r = submitForm(f.db, f.a.users.admin, { verb: 'rates.bulkUpdate', input: { folder_id: f.a.folderId, pct: 30 } }, now);
    expect(r.status === 'review' && r.proposal.status).toBe('needs_owner');
    expect(getRow<{ price_cents: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!.price_cents).toBe(9000);
  });
});

describe('submitForm idempotency: one key → at most one changeset of the user, pending or applied', () => {
  const squadLoad = { squad_id: '', date: '2026-11-18', duration_min: 60, rpe: 5 };
  const loadsOn = (date: string) =>
    (f.call(f.a.users.physio, 'workload.listLoads', { squad_id: f.a.squadId, from: date, to: date }) as { loads: unknown[] }).loads.length;

  it('a squad load sent three times under one key makes one proposal; approved, it writes each load once; re-sent after, it replays the result', () => {
    const input = { ...squadLoad, squad_id: f.a.squadId };
    const before = loadsOn(input.date);
    const sends = [1, 2, 3].map(() =>
      submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'squad-load-key-1' }, now),
    );
    const ids = sends.map((r) => (r.status === 'review' ? r.proposal.id : r.status));
    expect(new Set(ids).size).toBe(1);
    expect(listProposals(f.db, f.a.users.physio).filter((p) => p.verb === 'workload.logSessionLoads')).toHaveLength(1);
    const first = sends[0]!;
    if (first.status !== 'review') throw new Error('expected review');
    approveProposal(f.db, { approverUserId: f.a.users.physio, changesetId: first.proposal.id, contentHash: first.proposal.contentHash, now });
    expect(loadsOn(input.date)).toBe(before + 2);
    // The same form sent again after approval: the applied result, nothing more written.
    const again = submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'squad-load-key-1' }, now);
    expect(again.status === 'applied' && again.changeset).toMatchObject({ id: first.proposal.id, replayed: true });
    expect(loadsOn(input.date)).toBe(before + 2);
  });

  it('a change waiting for an owner, re-sent under its key, is one proposal for the owner to approve', () => {
    const send = () =>
      submitForm(f.db, f.a.users.admin, { verb: 'rates.bulkUpdate', input: { folder_id: f.a.folderId, pct: 30 }, idempotency_key: 'fee-bulk-key-1' }, now);
    const a = send();
    const b = send();
    expect(a.status === 'review' && b.status === 'review' && a.proposal.id === b.proposal.id).toBe(true);
    expect(listProposals(f.db, f.a.users.owner, { status: 'needs_owner' }).filter((p) => p.verb === 'rates.bulkUpdate')).toHaveLength(1);
  });

  it('the same key with other input is refused with IdempotencyKeyReused and nothing is written (applied and pending)', () => {
    const v = athlete().version;
    submitForm(f.db, f.a.users.physio, { verb: 'athletes.update', input: { id: f.a.athleteId, position: 'Winger' }, idempotency_key: 'form-key-reuse' }, now);
    expect(() =>
      submitForm(
        f.db,
        f.a.users.physio,
        { verb: 'athletes.update', input: { id: f.a.athleteId, position: 'Goalkeeper' }, idempotency_key: 'form-key-reuse' },
        now,
      ),
    ).toThrow(expect.objectContaining({ code: 'IdempotencyKeyReused', message: expect.stringMatching(/open the form again/) }));
    expect(athlete()).toMatchObject({ position: 'Winger', version: v + 1 });

    const input = { ...squadLoad, squad_id: f.a.squadId };
    submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'squad-load-reuse' }, now);
    expect(() =>
      submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input: { ...input, rpe: 8 }, idempotency_key: 'squad-load-reuse' }, now),
    ).toThrow(expect.objectContaining({ code: 'IdempotencyKeyReused' }));
    expect(listProposals(f.db, f.a.users.physio).filter((p) => p.verb === 'workload.logSessionLoads')).toHaveLength(1);
  });

  it('the data layer refuses a second proposal under a key even when the form check is bypassed (a second process)', () => {
    const input = { ...squadLoad, squad_id: f.a.squadId };
    const first = submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'two-process-key' }, now);
    if (first.status !== 'review') throw new Error('expected review');
    const other = openDb(f.path);
    try {
      const verb = VERBS.get('workload.logSessionLoads');
      if (verb?.kind !== 'write') throw new Error('expected a write verb');
      const { planned } = planWrite({ db: other, userId: f.a.users.physio, now: () => now }, verb, input);
      const propose = (hash: string) =>
        proposeChangeset(other, {
          userId: f.a.users.physio,
          planned,
          source: 'page',
          toolName: 'x',
          title: 'x',
          now,
          idempotencyKey: 'two-process-key',
          requestHash: hash,
        });
      expect(() => propose(requestHashOf('workload.logSessionLoads', input))).toThrow(IdempotencyKeyTaken);
      expect(() => propose('another request')).toThrow(expect.objectContaining({ code: 'IdempotencyKeyReused' }));
      // The second process's form submit gets the first outcome.
      const second = submitForm(other, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'two-process-key' }, now);
      expect(second.status === 'review' && second.proposal.id).toBe(first.proposal.id);
    } finally {
      other.close();
    }
    expect(listProposals(f.db, f.a.users.physio).filter((p) => p.verb === 'workload.logSessionLoads')).toHaveLength(1);
  });

  it('after rows were left out, a re-sent form finds the narrowed proposal; a declined one is a Conflict that says to reopen the form', () => {
    const input = { ...squadLoad, squad_id: f.a.squadId };
    const r = submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'narrow-key-1' }, now);
    if (r.status !== 'review') throw new Error('expected review');
    const narrowed = narrowProposal(
      f.db,
      f.a.users.physio,
      { changeset_id: r.proposal.id, content_hash: r.proposal.contentHash, drop_ids: [r.proposal.changes[0]!.id] },
      now,
    );
    const again = submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'narrow-key-1' }, now);
    expect(again.status === 'review' && again.proposal.id).toBe(narrowed.id);
    declineProposal(f.db, { userId: f.a.users.physio, changesetId: narrowed.id, now });
    expect(() => submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'narrow-key-1' }, now)).toThrow(
      expect.objectContaining({ code: 'Conflict', message: expect.stringMatching(/declined.*open the form again/) }),
    );
  });

  it('the verb door (verb.call, CLI) shares the key: a pending form proposal is not applied again, other input is refused', () => {
    const input = { ...squadLoad, squad_id: f.a.squadId };
    submitForm(f.db, f.a.users.physio, { verb: 'workload.logSessionLoads', input, idempotency_key: 'shared-door-key' }, now);
    const before = loadsOn(input.date);
    expect(() => f.call(f.a.users.physio, 'workload.logSessionLoads', input, { idempotencyKey: 'shared-door-key' })).toThrow(
      expect.objectContaining({ code: 'Conflict', message: expect.stringMatching(/waiting for review/) }),
    );
    expect(() => f.call(f.a.users.physio, 'workload.logSessionLoads', { ...input, rpe: 9 }, { idempotencyKey: 'shared-door-key' })).toThrow(
      expect.objectContaining({ code: 'IdempotencyKeyReused' }),
    );
    expect(loadsOn(input.date)).toBe(before);
    // Keys are per user: another user's same key is their own.
    const other = f.call(f.a.users.doctor, 'athletes.update', { id: f.a.athleteId, position: 'Pivot' }, { idempotencyKey: 'shared-door-key' });
    expect(other.changeset.replayed).toBe(false);
  });
});
