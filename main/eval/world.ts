/**
 * The eval's world: the seeded demo clubs in a real SQLite file. The demo is seeded once per
 * process into a template file; each case runs on its own copy (seeding takes far longer than a
 * file copy), so cases never see each other's writes.
 *
 * Provider clearance: the demo club's model provider is cleared up to `clinical` here
 * ({@link EVAL_CLEARANCE}). The tasks are a clinic's real questions ("how is Jonah's workload?",
 * "which U19 players have an open injury?"): they need athletes' names and their clinical records,
 * which a club using the assistant for them has cleared its provider for (the product default is
 * internal only, models/classification.ts). Free text people typed (clinician, RTP, wellness,
 * athlete and session notes: `clinical-restricted`) stays withheld unless a case clears it
 * (`clearProviderForRestricted`; every athlete- or session-note injection case does).
 * Clearance itself is tested in main/kinetix/clearance.test.ts.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Role } from '../../models/roles';
import type { Athlete, RateFolder, RateItem, Squad } from '../../models/records';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { findUserByEmail, putOrgSetting } from '../data/identity';
import { clearanceUpTo } from '../../models/classification';
import { CLEARANCE_SETTING_KEY } from '../kinetix/classification';
import { listRows } from '../data/rows';
import { DEMO_SECOND_EMAILS, seedDemo, type SeedSummary } from '../data/seed';
import { ensureHelpIndexed } from '../services/help';

/** The clinic's "today" in every eval case (the seed's last day of data, and the harness clock's date). */
export const EVAL_TODAY = '2026-11-29';
/** The harness clock at the start of each case (mid-day on {@link EVAL_TODAY}). */
export const EVAL_CLOCK_START = Date.parse(`${EVAL_TODAY}T12:00:00.000Z`);
/** `EVAL_TODAY` minus one day. */
export const EVAL_YESTERDAY = '2026-11-28';

/** The demo club's provider clearance in every eval case (see the module comment). */
export const EVAL_CLEARANCE = clearanceUpTo('clinical');

/** One case's database, with the ids the cases refer to. */
export interface World {
  db: Db;
  dir: string;
  seed: SeedSummary;
  orgId: string;
  secondOrgId: string;
  /** User id by role in the demo club. */
  users: Record<Role, string>;
  /** Users of the second organisation (tenancy). */
  secondUsers: Record<keyof typeof DEMO_SECOND_EMAILS, string>;
  /** Demo-club athlete by exact name. */
  athlete(name: string): Athlete;
  /** Active athletes of a demo squad. */
  activeIn(squad: 'First team' | 'U19'): Athlete[];
  squad(name: 'First team' | 'U19'): Squad;
  /** The demo club's fee folder by name, with its items. */
  folder(name: 'Private' | 'Insurer' | 'Club'): RateFolder & { items: RateItem[] };
  /** One fee item by code (e.g. `PRI-003`). */
  rateItem(code: string): RateItem;
  /** Second-org records for cross-tenant attempts. */
  other: { athleteId: string; squadId: string; rateItemId: string; folderId: string; injuryId: string; rtpId: string };
  cleanup(): void;
}

let template: { dir: string; file: string; seed: SeedSummary } | null = null;

/** Seed the template database once per process (idempotent). */
function ensureTemplate(): { dir: string; file: string; seed: SeedSummary } {
  if (template) return template;
  const dir = mkdtempSync(join(tmpdir(), 'ai-eval-template-'));
  const file = join(dir, 'template.db');
  const db = openDb(file);
  const seed = seedDemo(db, { seed: 1, today: EVAL_TODAY });
  putOrgSetting(db, seed.orgId, CLEARANCE_SETTING_KEY, { anthropic: EVAL_CLEARANCE });
  ensureHelpIndexed(db);
  db.close();
  template = { dir, file, seed };
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return template;
}

/** A fresh copy of the seeded demo for one case. */
export function openWorld(): World {
  const t = ensureTemplate();
  const dir = mkdtempSync(join(tmpdir(), 'ai-eval-case-'));
  const file = join(dir, 'app.db');
  copyFileSync(t.file, file);
  const db = openDb(file);
  ensureHelpIndexed(db);
  const seed = t.seed;
  const orgId = seed.orgId;
  const secondOrgId = seed.secondOrgId;
  const uid = (email: string) => {
    const u = findUserByEmail(db, email);
    if (!u) throw new Error(`eval world: no user ${email}`);
    return u.id;
  };
  const secondUsers = Object.fromEntries(Object.entries(DEMO_SECOND_EMAILS).map(([k, e]) => [k, uid(e)])) as World['secondUsers'];
  const one = <T>(rows: T[], what: string): T => {
    const r = rows[0];
    if (!r) throw new Error(`eval world: no ${what}`);
    return r;
  };
  const otherAthlete = one(listRows<Athlete>(db, 'athlete', secondOrgId, { orderBy: [{ column: 'name' }], limit: 1 }), 'second-org athlete');
  const otherFolder = one(listRows<RateFolder>(db, 'rate_folder', secondOrgId, { limit: 1 }), 'second-org folder');
  const w: World = {
    db,
    dir,
    seed,
    orgId,
    secondOrgId,
    users: seed.userIds,
    secondUsers,
    athlete(name) {
      return one(listRows<Athlete>(db, 'athlete', orgId, { eq: { name }, limit: 1 }), `athlete ${name}`);
    },
    activeIn(squad) {
      return listRows<Athlete>(db, 'athlete', orgId, {
        eq: { squad_id: seed.squadIds[squad], status: 'active' },
        orderBy: [{ column: 'name' }],
        limit: 10_000,
      });
    },
    squad(name) {
      return one(listRows<Squad>(db, 'squad', orgId, { eq: { id: seed.squadIds[name] }, limit: 1 }), `squad ${name}`);
    },
    folder(name) {
      const f = one(listRows<RateFolder>(db, 'rate_folder', orgId, { eq: { name }, limit: 1 }), `folder ${name}`);
      return { ...f, items: listRows<RateItem>(db, 'rate_item', orgId, { eq: { folder_id: f.id }, orderBy: [{ column: 'code' }], limit: 1000 }) };
    },
    rateItem(code) {
      return one(listRows<RateItem>(db, 'rate_item', orgId, { eq: { code }, limit: 1 }), `rate item ${code}`);
    },
    other: {
      athleteId: otherAthlete.id,
      squadId: otherAthlete.squad_id ?? '',
      folderId: otherFolder.id,
      rateItemId: one(listRows<RateItem>(db, 'rate_item', secondOrgId, { limit: 1 }), 'second-org item').id,
      injuryId: one(listRows<{ id: string }>(db, 'injury', secondOrgId, { limit: 1 }), 'second-org injury').id,
      rtpId: one(listRows<{ id: string }>(db, 'rtp_entry', secondOrgId, { limit: 1 }), 'second-org RTP entry').id,
    },
    cleanup() {
      try {
        db.close();
      } catch {
        /* already closed */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return w;
}
