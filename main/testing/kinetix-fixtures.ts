/**
 * Test support for the Kinetix harness: a real SQLite file in a temp dir, an organisation and
 * users created through the changeset path (no SQL here), and a harness wired to the real
 * Anthropic SDK pointed at a scripted Messages API server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import type { Role } from '../../models/roles';
import { applyChangeset } from '../data/changesets';
import type { Db } from '../data/db';
import { openDb } from '../data/db';
import { insertOrganization } from '../data/identity';
import { getRow } from '../data/rows';
import { Kinetix, type KinetixOptions } from '../kinetix/harness';
import { AnthropicProvider } from '../kinetix/provider';
import type { ToolRegistry } from '../kinetix/registry';

/** A temp database and a cleanup. */
export interface TempDb {
  db: Db;
  dir: string;
  cleanup(): void;
}

/** Open a fresh SQLite file (all migrations applied) in a new temp dir. */
export function tempDb(prefix = 'kinetix-'): TempDb {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = openDb(join(dir, 'app.db'));
  return {
    db,
    dir,
    cleanup: () => {
      try {
        db.close();
      } catch {
        /* already closed */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Insert an organisation. */
export function addOrg(db: Db, o: { name?: string; budgetCapUsd?: number | null; model?: string } = {}): string {
  const id = uuidv7();
  const now = new Date().toISOString();
  insertOrganization(db, {
    id,
    created_at: now,
    updated_at: now,
    version: 1,
    name: o.name ?? 'Riverside FC',
    plan: 'club',
    budget_cap_usd: o.budgetCapUsd ?? null,
    assistant_model: o.model ?? 'claude-sonnet-4-6',
  });
  return id;
}

/**
 * Insert a user through a changeset. The changeset is authorised as a set-up actor holding
 * `user.manage` with the new user's own id (so the activity row's actor exists).
 */
export function addUser(
  db: Db,
  orgId: string,
  u: { role: Role; displayName?: string; email?: string; budgetCapUsd?: number | null; linkedAthleteId?: string | null },
): string {
  const id = uuidv7();
  const displayName = u.displayName ?? `Test ${u.role}`;
  applyChangeset(db, {
    actor: { userId: id, orgId, role: 'owner', linkedAthleteId: null, active: true, displayName: 'Set-up' },
    planned: {
      verb: 'test.addUser',
      summary: `Add ${displayName}`,
      changes: [
        {
          op: 'insert',
          table: 'app_user',
          id,
          after: {
            email: u.email ?? `${id.slice(-8)}@example.test`,
            display_name: displayName,
            role: u.role,
            linked_athlete_id: u.linkedAthleteId ?? null,
            active: true,
            budget_cap_usd: u.budgetCapUsd ?? null,
          },
        },
      ],
    },
  });
  return id;
}

/** Change a user's row (role, active, budget) as `byUserId` (an owner/admin of the org). */
export function updateUser(
  db: Db,
  orgId: string,
  byUserId: string,
  userId: string,
  patch: { role?: Role; active?: boolean; budget_cap_usd?: number | null },
): void {
  const row = getRow<{ id: string; version: number } & Record<string, unknown>>(db, 'app_user', orgId, userId);
  if (!row) throw new Error('no such user');
  const before: Record<string, unknown> = {};
  for (const k of Object.keys(patch)) before[k] = row[k];
  applyChangeset(db, {
    actor: { userId: byUserId, orgId, role: 'owner', linkedAthleteId: null, active: true, displayName: 'Owner' },
    planned: {
      verb: 'test.updateUser',
      summary: 'Update user',
      changes: [{ op: 'update', table: 'app_user', id: userId, version: row.version, before, after: patch }],
    },
  });
}

/** Options for {@link testHarness}. */
export interface TestHarnessOptions extends Partial<Omit<KinetixOptions, 'db' | 'tools'>> {
  baseURL: string;
  apiKey?: string;
}

/** A harness using the real SDK against `baseURL`, no retries, a fixed test key, logs collected. */
export function testHarness(db: Db, tools: ToolRegistry, o: TestHarnessOptions): { kx: Kinetix; logs: string[] } {
  const logs: string[] = [];
  const apiKey = o.apiKey ?? 'sk-ant-test-0123456789abcdef';
  const { baseURL, apiKey: _k, ...rest } = o;
  const kx = Kinetix.open({
    db,
    tools,
    env: { ANTHROPIC_API_KEY: apiKey },
    secretBox: null,
    log: (line, fields) => logs.push(`${line} ${fields ? JSON.stringify(fields) : ''}`),
    providerFactory: (cfg) => new AnthropicProvider({ apiKey: cfg.apiKey, baseURL, maxRetries: 0, clearedFor: cfg.clearedFor }),
    ...rest,
  });
  return { kx, logs };
}

/** Insert a business row through a changeset, authorised as `byUserId` acting with `role`. Returns its id. */
export function addRecord(
  db: Db,
  orgId: string,
  byUserId: string,
  role: Role,
  table: import('../../models/tables').TableName,
  after: Record<string, unknown>,
): string {
  const id = uuidv7();
  applyChangeset(db, {
    actor: { userId: byUserId, orgId, role, linkedAthleteId: null, active: true, displayName: 'Set-up' },
    planned: { verb: 'test.addRecord', summary: `Add ${table}`, changes: [{ op: 'insert', table, id, after }] },
  });
  return id;
}

/** Every AG-UI event of a run until it ends (subscribing as its user). */
export async function collectEvents(kx: Kinetix, userId: string, runId: string, lastEventId?: number): Promise<import('../kinetix/bus').RunEventEnvelope[]> {
  const out: import('../kinetix/bus').RunEventEnvelope[] = [];
  for await (const e of kx.subscribe(userId, runId, lastEventId)) out.push(e);
  return out;
}

/** Wait for the first event matching `pred` (e.g. a confirm_required) and return it. */
export async function waitForEvent(
  kx: Kinetix,
  userId: string,
  runId: string,
  pred: (e: import('../kinetix/bus').RunEventEnvelope) => boolean,
): Promise<import('../kinetix/bus').RunEventEnvelope> {
  for await (const e of kx.subscribe(userId, runId)) if (pred(e)) return e;
  throw new Error('run ended before the awaited event');
}
