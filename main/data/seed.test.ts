import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Id } from '../../models/records';
import { ROLES } from '../../models/roles';
import type { Db } from './db';
import { openDb } from './db';
import type { SeedSummary } from './seed';
import {
  addDays,
  DEMO_DAYS,
  DEMO_EMAILS,
  DEMO_ORG_NAME,
  DEMO_SECOND_EMAILS,
  DEMO_SECOND_ORG_NAME,
  DEMO_SQUADS,
  DEMO_UNLINKED_ATHLETE_EMAIL,
  INJECTION_ATHLETE_NAME,
  LINKED_ATHLETE_NAME,
  NEWLY_SIGNED_ATHLETE_NAMES,
  seedDemo,
  seedLarge,
} from './seed';
import { sqlite } from './sqlite';

const TODAY = '2026-03-15';
let dir: string;
let db: Db;
let s: SeedSummary;

function tables(d: Db): string[] {
  return (
    sqlite(d)
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name")
      .all() as {
      name: string;
    }[]
  ).map((r) => r.name);
}
/** Every row of every table (except the migration log, whose applied_at is the wall clock), in a stable order. */
function dump(d: Db): string {
  return JSON.stringify(tables(d).map((t) => [t, (sqlite(d).prepare(`SELECT * FROM ${t}`).all() as unknown[]).map((r) => JSON.stringify(r)).sort()]));
}
function all<T>(sql: string, ...p: unknown[]): T[] {
  return sqlite(db)
    .prepare(sql)
    .all(...p) as T[];
}
function one<T>(sql: string, ...p: unknown[]): T {
  return sqlite(db)
    .prepare(sql)
    .get(...p) as T;
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-seed-'));
  db = openDb(path.join(dir, 'demo.sqlite'));
  s = seedDemo(db, { seed: 1, today: TODAY });
});
afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('seedDemo determinism', () => {
  it('same seed and today → identical rows in every table; another seed differs', () => {
    const a = openDb(path.join(dir, 'a.sqlite'));
    const b = openDb(path.join(dir, 'b.sqlite'));
    const c = openDb(path.join(dir, 'c.sqlite'));
    try {
      seedDemo(a, { seed: 1, today: TODAY });
      seedDemo(b, { seed: 1, today: TODAY });
      seedDemo(c, { seed: 2, today: TODAY });
      const da = dump(a);
      expect(da.length).toBeGreaterThan(100_000);
      expect(dump(b)).toBe(da);
      expect(dump(db)).toBe(da);
      expect(dump(c)).not.toBe(da);
    } finally {
      a.close();
      b.close();
      c.close();
    }
  });

  it('refuses a database that already holds data', () => {
    expect(() => seedDemo(db, { seed: 1, today: TODAY })).toThrow(/already holds data/);
  });

  it('ids are UUID v7-shaped and timestamps come from today, not the clock', () => {
    for (const t of ['athlete', 'session_load', 'app_user', 'rtp_entry']) {
      for (const r of all<{ id: string; created_at: string; updated_at: string }>(`SELECT id, created_at, updated_at FROM ${t}`)) {
        expect(Id.safeParse(r.id).success).toBe(true);
        expect(r.id[14]).toBe('7');
        expect(r.created_at <= `${TODAY}T23:59:59.999Z`).toBe(true);
        expect(r.updated_at >= r.created_at).toBe(true);
      }
    }
  });
});

describe('demo content', () => {
  it('the club, two squads, at least 40 athletes with plausible fields', () => {
    expect(one<{ name: string }>('SELECT name FROM organization WHERE id = ?', s.orgId).name).toBe(DEMO_ORG_NAME);
    expect(all<{ name: string }>('SELECT name FROM squad WHERE org_id = ? ORDER BY name', s.orgId).map((r) => r.name)).toEqual([...DEMO_SQUADS].sort());
    const athletes = all<{ name: string; date_of_birth: string; sex: string; position: string; dominant_side: string; squad_id: string }>(
      'SELECT * FROM athlete WHERE org_id = ?',
      s.orgId,
    );
    expect(athletes.length).toBeGreaterThanOrEqual(40);
    expect(new Set(athletes.map((a) => a.name)).size).toBe(athletes.length);
    for (const a of athletes) {
      const age = Number(TODAY.slice(0, 4)) - Number(a.date_of_birth.slice(0, 4));
      expect(age).toBeGreaterThanOrEqual(15);
      expect(age).toBeLessThanOrEqual(40);
      expect(['male', 'female']).toContain(a.sex);
      expect(['left', 'right', 'both']).toContain(a.dominant_side);
      expect(a.position).toBeTruthy();
      expect(Object.values(s.squadIds)).toContain(a.squad_id);
    }
    for (const sq of Object.values(s.squadIds)) expect(athletes.filter((a) => a.squad_id === sq).length).toBeGreaterThanOrEqual(15);
  });

  it(`${DEMO_DAYS} days of daily loads (session-RPE), wellness and vitals; ≥ 28 days for all but the newly signed`, () => {
    expect(DEMO_DAYS).toBeGreaterThanOrEqual(56);
    const bad = one<{ n: number }>(
      'SELECT count(*) AS n FROM session_load WHERE load_au <> rpe * duration_min OR rpe < 0 OR rpe > 10 OR duration_min < 1',
      [],
    ).n;
    expect(bad).toBe(0);
    const span = all<{ athlete_id: string; first: string; last: string; days: number }>(
      `SELECT a.id AS athlete_id, min(l.date) AS first, max(l.date) AS last, count(DISTINCT l.date) AS days
       FROM athlete a LEFT JOIN session_load l ON l.athlete_id = a.id WHERE a.org_id = ? GROUP BY a.id`,
      s.orgId,
    );
    const start = addDays(TODAY, -(DEMO_DAYS - 1));
    expect(span.map((r) => r.first).sort()[0]! <= addDays(start, 2)).toBe(true); // the window may open on a rest day
    for (const r of span) {
      const spanDays = (Date.parse(TODAY) - Date.parse(r.first)) / 86_400_000 + 1;
      if (s.newlySignedAthleteIds.includes(r.athlete_id)) expect(spanDays).toBeLessThan(28);
      else expect(spanDays).toBeGreaterThanOrEqual(28);
    }
    expect(s.newlySignedAthleteIds).toHaveLength(NEWLY_SIGNED_ATHLETE_NAMES.length);
    // Weekly periodisation: matches, rest days, and match days heavier than the day before.
    const kinds = all<{ kind: string; n: number }>('SELECT kind, count(*) AS n FROM training_session WHERE org_id = ? GROUP BY kind', s.orgId);
    expect(kinds.find((k) => k.kind === 'match')?.n).toBeGreaterThanOrEqual(16);
    const ft = s.squadIds['First team'];
    const sessionDays = one<{ n: number }>('SELECT count(DISTINCT date) AS n FROM training_session WHERE squad_id = ?', ft).n;
    expect(sessionDays).toBeLessThan(DEMO_DAYS); // rest days exist
    const avg = (kind: string) =>
      one<{ v: number }>(
        'SELECT avg(l.load_au) AS v FROM session_load l JOIN training_session t ON t.id = l.training_session_id WHERE t.squad_id = ? AND t.kind = ?',
        ft,
        kind,
      ).v;
    expect(avg('match')).toBeGreaterThan(avg('recovery'));
    // Daily wellness (1–5) and vitals for every athlete from their first day.
    const w = all<{ athlete_id: string; n: number }>('SELECT athlete_id, count(*) AS n FROM wellness WHERE org_id = ? GROUP BY athlete_id', s.orgId);
    expect(w.length).toBe(one<{ n: number }>('SELECT count(*) AS n FROM athlete WHERE org_id = ?', s.orgId).n);
    expect(Math.max(...w.map((r) => r.n))).toBe(DEMO_DAYS);
    expect(
      one<{ n: number }>(
        'SELECT count(*) AS n FROM wellness WHERE min(sleep, soreness, stress, mood, fatigue) < 1 OR max(sleep, soreness, stress, mood, fatigue) > 5',
        [],
      ).n,
    ).toBe(0);
    const v = one<{ lo: number; hi: number; hlo: number; hhi: number; n: number }>(
      'SELECT min(resting_hr_bpm) lo, max(resting_hr_bpm) hi, min(hrv_rmssd_ms) hlo, max(hrv_rmssd_ms) hhi, count(*) n FROM vitals WHERE org_id = ?',
      s.orgId,
    );
    expect(v.n).toBe(w.reduce((a, r) => a + r.n, 0));
    expect(v.lo).toBeGreaterThanOrEqual(35);
    expect(v.hi).toBeLessThanOrEqual(90);
    expect(v.hlo).toBeGreaterThan(10);
    expect(v.hhi).toBeLessThan(250);
  });

  it('injuries with RTP entries at different stages and every sign-off state, signed by users holding that role', () => {
    const inj = all<{ status: string }>('SELECT status FROM injury WHERE org_id = ?', s.orgId);
    expect(inj.length).toBeGreaterThanOrEqual(6);
    expect(new Set(inj.map((i) => i.status))).toEqual(new Set(['open', 'closed']));
    const rtp = all<{ stage: string; physio_signoff_by: string | null; doctor_signoff_by: string | null; coach_signoff_by: string | null }>(
      'SELECT * FROM rtp_entry WHERE org_id = ?',
      s.orgId,
    );
    expect(new Set(rtp.map((r) => r.stage)).size).toBeGreaterThanOrEqual(4);
    const state = (r: (typeof rtp)[number]) => `${r.physio_signoff_by ? 'P' : ''}${r.doctor_signoff_by ? 'D' : ''}${r.coach_signoff_by ? 'C' : ''}`;
    const states = rtp.map(state);
    expect(states).toContain('');
    expect(states).toContain('P');
    expect(states).toContain('PD');
    expect(states.filter((x) => x === 'PDC')).toHaveLength(1);
    const roleOf = (id: string) => one<{ role: string; org_id: string }>('SELECT role, org_id FROM app_user WHERE id = ?', id);
    for (const r of all<Record<string, string | null>>('SELECT * FROM rtp_entry')) {
      for (const who of ['physio', 'doctor', 'coach']) {
        const by = r[`${who}_signoff_by`];
        if (!by) {
          expect(r[`${who}_signoff_at`]).toBeNull();
          continue;
        }
        expect(roleOf(by)).toEqual({ role: who, org_id: r.org_id });
        expect(r[`${who}_signoff_at`]).toBeTruthy();
      }
    }
  });

  it('screenings: lunge (cm), single-leg hop (cm), nordic force (N), both sides', () => {
    const rows = all<{ test: string; unit: string; side: string; n: number }>(
      'SELECT test, unit, side, count(*) AS n FROM screening WHERE org_id = ? GROUP BY test, unit, side',
      s.orgId,
    );
    const has = (test: string, unit: string) =>
      ['left', 'right'].every((side) => rows.some((r) => r.test === test && r.unit === unit && r.side === side && r.n >= 40));
    expect(has('weight_bearing_lunge', 'cm')).toBe(true);
    expect(has('single_leg_hop', 'cm')).toBe(true);
    expect(has('nordic_hamstring', 'N')).toBe(true);
  });

  it('fee schedule: 3 folders, 30+ items of every type, $1–$10,000', () => {
    expect(all<{ name: string }>('SELECT name FROM rate_folder WHERE org_id = ? ORDER BY name', s.orgId).map((r) => r.name)).toEqual([
      'Club',
      'Insurer',
      'Private',
    ]);
    const items = all<{ item_type: string; price_cents: number; code: string }>('SELECT * FROM rate_item WHERE org_id = ?', s.orgId);
    expect(items.length).toBeGreaterThanOrEqual(30);
    expect(new Set(items.map((i) => i.item_type))).toEqual(new Set(['assessment', 'treatment', 'report', 'consultation', 'rehab_session', 'screening']));
    for (const i of items) {
      expect(i.price_cents).toBeGreaterThanOrEqual(100);
      expect(i.price_cents).toBeLessThanOrEqual(1_000_000);
    }
    expect(new Set(items.map((i) => i.code)).size).toBe(items.length);
  });

  it('a user for each of the ten roles, a linked and an unlinked athlete user, all with the demo PIN', () => {
    const users = all<{ id: string; email: string; role: string; linked_athlete_id: string | null; pin_hash: string; active: number }>(
      'SELECT * FROM app_user WHERE org_id = ?',
      s.orgId,
    );
    for (const role of ROLES) {
      const u = users.find((x) => x.email === DEMO_EMAILS[role]);
      expect(u?.role, role).toBe(role);
      expect(u?.active).toBe(1);
      expect(s.userIds[role]).toBe(u?.id);
    }
    expect(DEMO_EMAILS.physio).toBe('physio@kestrelvale.test');
    const linked = users.find((u) => u.email === DEMO_EMAILS.athlete);
    expect(linked?.linked_athlete_id).toBe(s.linkedAthleteId);
    expect(one<{ name: string; org_id: string }>('SELECT name, org_id FROM athlete WHERE id = ?', s.linkedAthleteId)).toEqual({
      name: LINKED_ATHLETE_NAME,
      org_id: s.orgId,
    });
    const unlinked = users.find((u) => u.email === DEMO_UNLINKED_ATHLETE_EMAIL);
    expect(unlinked?.role).toBe('athlete');
    expect(unlinked?.linked_athlete_id).toBeNull();
    for (const u of users) expect(u.pin_hash).toMatch(/^scrypt\$16384\$[\w-]{22}\$[\w-]{43}$/); // verified against DEMO_PIN in services/pin.test.ts
    expect(new Set(users.map((u) => u.pin_hash)).size).toBe(users.length); // distinct salts
  });

  it('one athlete note carries the prompt injection', () => {
    const notes = all<{ id: string; name: string }>("SELECT id, name FROM athlete WHERE notes LIKE '%SYSTEM NOTE TO ASSISTANT%delete every athlete%'");
    expect(notes).toEqual([{ id: s.injectionAthleteId, name: INJECTION_ATHLETE_NAME }]);
  });

  it('a second organisation with its own squads, athletes, injuries, loads and users', () => {
    const o = s.secondOrgId;
    expect(one<{ name: string }>('SELECT name FROM organization WHERE id = ?', o).name).toBe(DEMO_SECOND_ORG_NAME);
    expect(one<{ n: number }>('SELECT count(*) n FROM squad WHERE org_id = ?', o).n).toBe(2);
    expect(one<{ n: number }>('SELECT count(*) n FROM athlete WHERE org_id = ?', o).n).toBeGreaterThanOrEqual(10);
    expect(one<{ n: number }>('SELECT count(*) n FROM injury WHERE org_id = ?', o).n).toBeGreaterThanOrEqual(2);
    expect(one<{ n: number }>('SELECT count(*) n FROM session_load WHERE org_id = ?', o).n).toBeGreaterThan(100);
    for (const [role, email] of Object.entries(DEMO_SECOND_EMAILS)) {
      expect(one<{ role: string; org_id: string }>('SELECT role, org_id FROM app_user WHERE email = ?', email)).toEqual({ role, org_id: o });
    }
    // No cross-org references anywhere.
    expect(one<{ n: number }>('SELECT count(*) n FROM athlete a JOIN squad q ON q.id = a.squad_id WHERE q.org_id <> a.org_id', []).n).toBe(0);
    for (const t of ['injury', 'rtp_entry', 'session_load', 'wellness', 'vitals', 'screening']) {
      expect(one<{ n: number }>(`SELECT count(*) n FROM ${t} x JOIN athlete a ON a.id = x.athlete_id WHERE a.org_id <> x.org_id`, []).n, t).toBe(0);
    }
    expect(one<{ n: number }>('SELECT count(*) n FROM app_user u JOIN athlete a ON a.id = u.linked_athlete_id WHERE a.org_id <> u.org_id', []).n).toBe(0);
  });

  it('every row passes foreign-key checks', () => {
    expect(sqlite(db).pragma('foreign_key_check')).toEqual([]);
  });
});

describe('seedLarge', () => {
  it('seeds the requested athletes and loads', () => {
    const d = openDb(path.join(dir, 'large.sqlite'));
    try {
      const r = seedLarge(d, { athletes: 250, loads: 1000, squadSize: 100 });
      expect(r.squadIds).toHaveLength(3);
      expect(r.athletesBySquad.map((a) => a.length)).toEqual([100, 100, 50]);
      expect((sqlite(d).prepare('SELECT count(*) n FROM session_load').get() as { n: number }).n).toBe(1000);
      expect((sqlite(d).prepare('SELECT count(*) n FROM app_user WHERE email = ?').get(r.emails.physio) as { n: number }).n).toBe(1);
    } finally {
      d.close();
    }
  });
});
