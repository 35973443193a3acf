/**
 * One live wellness day per athlete (migration 0014) on real SQLite files: existing duplicates are
 * resolved (newest kept, the others soft-deleted and listed, nothing removed), and two connections
 * to one file submitting the same day at the same moment store one row and answer the second with
 * a typed Conflict, not an Internal error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../models/errors';
import { openDb } from './db';
import { seedDemo } from './seed';
import { sqlite } from './sqlite';
import { applyShapeBatch, saveEnrolment } from './sync';
import { createClinicFixture, fixtureNow } from '../testing/clinic-fixture';
import { VERBS, applyPlanned, planWrite } from '../services/index';
import type { WriteVerb } from '../services/verb';

describe('migration 0014: one live wellness row per athlete and day', () => {
  it('keeps the newest of duplicate rows, soft-deletes the others and lists them; then refuses a second live row', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wellness-mig-'));
    try {
      const p = path.join(dir, 'clinic.sqlite');
      const old = openDb(p, { migrateUpTo: 13 });
      const s = seedDemo(old, { seed: 5, today: '2026-11-20' });
      const db = sqlite(old);
      const src = db.prepare(`SELECT * FROM wellness WHERE org_id = ? AND deleted_at IS NULL ORDER BY date DESC LIMIT 1`).get(s.orgId) as Record<
        string,
        unknown
      >;
      const ins = db.prepare(
        `INSERT INTO wellness (id, org_id, created_at, updated_at, version, deleted_at, athlete_id, date, sleep, soreness, stress, mood, fatigue, notes)
         VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, 3, 3, 3, 3, '')`,
      );
      // Two extra rows for the same day: one newer than the seeded one (kept), one older.
      ins.run('0190aaaa-0000-7000-8000-000000000001', s.orgId, '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z', 1, src.athlete_id, src.date, 1);
      ins.run('0190aaaa-0000-7000-8000-000000000002', s.orgId, '2000-01-01T00:00:00.000Z', '2000-01-01T00:00:00.000Z', 1, src.athlete_id, src.date, 2);
      const before = (db.prepare('SELECT count(*) AS n FROM wellness').get() as { n: number }).n;
      old.close();

      const cur = openDb(p);
      try {
        const c = sqlite(cur);
        expect((c.prepare('SELECT count(*) AS n FROM wellness').get() as { n: number }).n).toBe(before);
        const live = c
          .prepare('SELECT id, sleep FROM wellness WHERE org_id = ? AND athlete_id = ? AND date = ? AND deleted_at IS NULL')
          .all(s.orgId, src.athlete_id, src.date);
        expect(live).toEqual([{ id: '0190aaaa-0000-7000-8000-000000000001', sleep: 1 }]);
        const retired = c.prepare('SELECT retired_id, kept_id FROM wellness_duplicate_retired ORDER BY retired_id').all();
        expect(retired).toEqual(
          [src.id as string, '0190aaaa-0000-7000-8000-000000000002'].sort().map((id) => ({ retired_id: id, kept_id: '0190aaaa-0000-7000-8000-000000000001' })),
        );
        // The seed had no other duplicates: every other row is untouched.
        expect((c.prepare('SELECT count(*) AS n FROM wellness WHERE deleted_at IS NOT NULL').get() as { n: number }).n).toBe(2);
        expect(() =>
          c
            .prepare(
              `INSERT INTO wellness (id, org_id, created_at, updated_at, athlete_id, date, sleep, soreness, stress, mood, fatigue) VALUES ('x', ?, 't', 't', ?, ?, 3, 3, 3, 3, 3)`,
            )
            .run(s.orgId, src.athlete_id, src.date),
        ).toThrow(/UNIQUE constraint failed: wellness/);
      } finally {
        cur.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('wellness.submit from two connections to one file', () => {
  it('the same athlete and day submitted at once: one row stored, the other a Conflict naming it; a resubmit replaces', () => {
    const f = createClinicFixture();
    const db2 = openDb(f.path);
    try {
      const verb = VERBS.get('wellness.submit')! as WriteVerb;
      const input = (sleep: number) => ({ athlete_id: f.a.otherAthleteId, date: '2026-11-17', sleep, soreness: 2, stress: 2, mood: 4, fatigue: 2 });
      const ctx1 = f.as(f.a.users.physio);
      const ctx2 = { db: db2, userId: f.a.users.doctor, now: fixtureNow };
      // Both planned before either applied: each saw no row for the day and planned an insert.
      const p1 = planWrite(ctx1, verb, input(4));
      const p2 = planWrite(ctx2, verb, input(1));
      expect([p1.planned.changes[0]!.op, p2.planned.changes[0]!.op]).toEqual(['insert', 'insert']);
      const first = applyPlanned(ctx1, p1.planned);
      let err: unknown;
      try {
        applyPlanned(ctx2, p2.planned);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'Conflict', conflicts: [{ table: 'wellness', id: first.changes[0]!.id, actualVersion: 1 }] });
      expect((err as AppError).message).toMatch(/Wellness for this athlete and day was recorded by someone else/);
      const rows = f.call(f.a.users.physio, 'wellness.list', { athlete_id: f.a.otherAthleteId, from: '2026-11-17', to: '2026-11-17' });
      expect(rows.wellness.map((w: { sleep: number }) => w.sleep)).toEqual([4]);
      // Planned again (as the form does after the conflict): an update of the stored row.
      const again = applyPlanned(ctx2, planWrite(ctx2, verb, input(1)).planned);
      expect(again.changes[0]).toMatchObject({ op: 'update', id: first.changes[0]!.id });
      const after = f.call(f.a.users.physio, 'wellness.list', { athlete_id: f.a.otherAthleteId, from: '2026-11-17', to: '2026-11-17' });
      expect(after.wellness.map((w: { sleep: number }) => w.sleep)).toEqual([1]);
    } finally {
      db2.close();
      f.close();
    }
  });
});

describe('a wellness day HQ sends while this device holds its own unsynced row for that day', () => {
  it("HQ's row wins in the live table, the local answers stay in the outbox, and the pull is not stuck", () => {
    const f = createClinicFixture();
    try {
      const { orgId, athleteId, users } = f.a;
      saveEnrolment(f.db, {
        hq_url: 'http://127.0.0.1:1',
        device_id: 'dev-1',
        device_name: 'Pitch laptop',
        org_id: orgId,
        org_name: 'Northbridge',
        user_id: users.physio,
        user_email: 'physio@example.test',
        user_role: 'physio',
        token_sealed: '{}',
        token_hint: 'x',
        token_expires_at: null,
        enrolled_at: fixtureNow().toISOString(),
      });
      const day = '2026-11-18';
      const local = f.call(users.physio, 'wellness.submit', {
        athlete_id: athleteId,
        date: day,
        sleep: 4,
        soreness: 2,
        stress: 2,
        mood: 4,
        fatigue: 2,
        notes: '',
      });
      const localId = local.changeset.changes[0].id as string;
      const c = sqlite(f.db);
      const serverRow = (id: string, sleep: number) => ({
        id,
        org_id: orgId,
        created_at: '2026-11-18T07:00:00.000Z',
        updated_at: '2026-11-18T07:00:00.000Z',
        version: 1,
        deleted_at: null,
        athlete_id: athleteId,
        date: day,
        sleep,
        soreness: 3,
        stress: 3,
        mood: 3,
        fatigue: 3,
        notes: '',
      });
      const fromHq = '0190bbbb-0000-7000-8000-000000000001';
      applyShapeBatch(f.db, 'wellness', [{ op: 'upsert', id: fromHq, row: serverRow(fromHq, 1) }], null);
      const live = c
        .prepare('SELECT id, sleep FROM wellness WHERE org_id = ? AND athlete_id = ? AND date = ? AND deleted_at IS NULL')
        .all(orgId, athleteId, day);
      expect(live).toEqual([{ id: fromHq, sleep: 1 }]);
      // The local answers are not lost: their changeset is still in the outbox, to be refused by HQ as a visible conflict.
      const queued = c.prepare('SELECT payload_json FROM outbox WHERE changeset_id = ?').get(local.changeset.id) as { payload_json: string };
      expect(queued.payload_json).toContain(localId);
      // A collision with a row that is not an unsynced local insert is not papered over.
      const other = '0190bbbb-0000-7000-8000-000000000002';
      expect(() => applyShapeBatch(f.db, 'wellness', [{ op: 'upsert', id: other, row: serverRow(other, 2) }], null)).toThrow(/UNIQUE/);
    } finally {
      f.close();
    }
  });
});
