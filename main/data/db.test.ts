import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MigrationMismatch, appliedMigrations, openDb, registerSqlFunctions, type Db } from './db';
import { MIGRATIONS, sqlSha256 } from './migrations';
import { seedDemo } from './seed';
import { sqlite } from './sqlite';

const dirs: string[] = [];
function tempPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'ai-db-'));
  dirs.push(d);
  return join(d, 'app.sqlite');
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function tableCounts(db: Db): Record<string, number> {
  const tables = sqlite(db)
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'help_passage_%' ORDER BY name`)
    .all() as { name: string }[];
  return Object.fromEntries(tables.map((t) => [t.name, (sqlite(db).prepare(`SELECT count(*) AS n FROM "${t.name}"`).get() as { n: number }).n]));
}

describe('openDb', () => {
  it('creates the file with WAL, foreign keys and the busy timeout, and records every migration with its hash', () => {
    const db = openDb(tempPath());
    expect(sqlite(db).pragma('journal_mode', { simple: true })).toBe('wal');
    expect(sqlite(db).pragma('foreign_keys', { simple: true })).toBe(1);
    expect(sqlite(db).pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(appliedMigrations(db).map((m) => [m.name, m.sha256])).toEqual(MIGRATIONS.map((m) => [m.name, m.sha256]));
    db.close();
  });
  it('reopening keeps data and applies nothing twice', () => {
    const p = tempPath();
    const db = openDb(p);
    sqlite(db).prepare(`INSERT INTO organization (id, created_at, updated_at, name, plan, assistant_model) VALUES ('o1', 'x', 'x', 'Club', 'club', 'm')`).run();
    const first = appliedMigrations(db);
    db.close();
    const again = openDb(p);
    expect(appliedMigrations(again)).toEqual(first);
    expect(sqlite(again).prepare('SELECT name FROM organization').get()).toEqual({ name: 'Club' });
    again.close();
  });
  it('refuses a database whose applied migrations are not a prefix of this build', () => {
    const p = tempPath();
    openDb(p).close();
    const raw = new Database(p);
    raw.prepare(`UPDATE schema_migrations SET name = 'foreign_build' WHERE id = 1`).run();
    raw.close();
    expect(() => openDb(p)).toThrow(MigrationMismatch);
  });
  it('refuses a database whose migration was applied from different SQL (recorded sha256 differs)', () => {
    const p = tempPath();
    openDb(p).close();
    const raw = new Database(p);
    raw.prepare(`UPDATE schema_migrations SET sha256 = ? WHERE id = 2`).run(sqlSha256('CREATE TABLE edited (x);'));
    raw.close();
    expect(() => openDb(p)).toThrow(/\(0002_kinetix\) was applied from different SQL/);
  });
  it('records the hashes of a database written before hashes were kept, and keeps its rows', () => {
    const p = tempPath();
    const raw = new Database(p);
    registerSqlFunctions(raw);
    raw.exec(`CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    for (const m of MIGRATIONS) {
      raw.exec(m.sql);
      raw.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, '2026-01-01T00:00:00Z');
    }
    raw.prepare(`INSERT INTO organization (id, created_at, updated_at, name, plan, assistant_model) VALUES ('o1', 'x', 'x', 'Club', 'club', 'm')`).run();
    raw.close();
    const db = openDb(p);
    expect(appliedMigrations(db).map((m) => [m.id, m.applied_at, m.sha256])).toEqual(MIGRATIONS.map((m) => [m.id, '2026-01-01T00:00:00Z', m.sha256]));
    expect(sqlite(db).prepare('SELECT name FROM organization').get()).toEqual({ name: 'Club' });
    db.close();
  });
  it('enforces foreign keys', () => {
    const db = openDb(tempPath());
    expect(() =>
      sqlite(db).prepare(`INSERT INTO squad (id, org_id, created_at, updated_at, name, season) VALUES ('s', 'missing-org', 'x', 'x', 'U19', '2026')`).run(),
    ).toThrow(/FOREIGN KEY/);
    db.close();
  });
});

describe('migrations are frozen', () => {
  it('every migration of this build still hashes to the value recorded when it was written', () => {
    for (const m of MIGRATIONS) expect({ name: m.name, sha256: sqlSha256(m.sql) }).toEqual({ name: m.name, sha256: m.sha256 });
  });
  it('ids run 1..n in order with unique names', () => {
    expect(MIGRATIONS.map((m) => m.id)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(new Set(MIGRATIONS.map((m) => m.name)).size).toBe(MIGRATIONS.length);
  });
  it('the schema a fresh database gets matches the reviewed snapshot (main/data/schema.snapshot.sql)', async () => {
    const db = openDb(tempPath());
    const rows = sqlite(db)
      .prepare(`SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type, name`)
      .all() as {
      type: string;
      name: string;
      sql: string;
    }[];
    db.close();
    const header =
      '-- The schema of a fresh database after every migration, written by main/data/db.test.ts.\n-- A new migration changes it: run `npx vitest run main/data/db.test.ts -u` and review the diff.\n\n';
    const text = header + rows.map((r) => `-- ${r.type} ${r.name}\n${r.sql};\n`).join('\n');
    await expect(text).toMatchFileSnapshot('./schema.snapshot.sql');
  });
});

/** Migrations that rebuild or alter an existing table (or its indexes) instead of adding one. */
const TABLE_REBUILDS = new Set([
  '0006_page_proposals',
  '0008_pose_conditions',
  '0010_capture_results',
  '0011_idempotency_per_user',
  '0013_free_text',
  '0017_mcp_token_account_stamp',
  '0018_discarded_by',
  '0019_optimistic_base',
  '0020_rejected_here',
]);

describe('each migration applies to a database that already holds real rows', () => {
  // Migration 1 creates the first tables, so there are no rows before it; every later one is
  // applied to a file holding the seeded demo clubs (both organisations, every record kind).
  it.each(MIGRATIONS.slice(1).map((m) => [m.name, m] as const))('%s keeps every row, every foreign key and the integrity of the file', (_name, m) => {
    const p = tempPath();
    const old = openDb(p, { migrateUpTo: m.id - 1 });
    seedDemo(old, { seed: 7, today: '2026-11-20' });
    const before = tableCounts(old);
    expect(before.athlete).toBeGreaterThan(10);
    expect(before.session_load).toBeGreaterThan(100);
    old.close();

    const upgraded = openDb(p, { migrateUpTo: m.id });
    expect(appliedMigrations(upgraded).map((x) => x.id)).toEqual(MIGRATIONS.filter((x) => x.id <= m.id).map((x) => x.id));
    const after = tableCounts(upgraded);
    for (const [table, n] of Object.entries(before)) expect({ table, n: after[table] }).toEqual({ table, n: n + (table === 'schema_migrations' ? 1 : 0) });
    // Every migration adds tables, except those that only rebuild one (a widened CHECK constraint).
    if (TABLE_REBUILDS.has(m.name)) expect(Object.keys(after)).toEqual(Object.keys(before));
    else expect(Object.keys(after).length).toBeGreaterThan(Object.keys(before).length);
    expect(sqlite(upgraded).pragma('foreign_key_check')).toEqual([]);
    expect(sqlite(upgraded).pragma('integrity_check', { simple: true })).toBe('ok');
    upgraded.close();
  });
});

describe('several processes open one new database file at the same instant', () => {
  const CHILDREN = 3;
  const ROUNDS = 6;
  const children: { proc: ChildProcessWithoutNullStreams; next: () => Promise<string> }[] = [];

  beforeAll(async () => {
    for (let i = 0; i < CHILDREN; i++) {
      const proc = spawn(process.execPath, [join(process.cwd(), 'node_modules/tsx/dist/cli.mjs'), 'main/data/db-open.child.ts'], {
        cwd: process.cwd(),
        env: { ...process.env, NODE_NO_WARNINGS: '1' },
      });
      const queue: string[] = [];
      const waiters: ((l: string) => void)[] = [];
      createInterface({ input: proc.stdout }).on('line', (l) => {
        const w = waiters.shift();
        if (w) w(l);
        else queue.push(l);
      });
      const next = () => new Promise<string>((resolve) => (queue.length ? resolve(queue.shift()!) : waiters.push(resolve)));
      children.push({ proc, next });
    }
    for (const c of children) expect(await c.next()).toBe('ready');
  });
  afterAll(() => {
    for (const c of children) c.proc.kill();
  });

  it(`all ${CHILDREN} succeed in each of ${ROUNDS} rounds, and the migrations are applied exactly once`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const p = tempPath();
      const at = Date.now() + 300;
      const replies = children.map((c) => c.next());
      for (const c of children) c.proc.stdin.write(JSON.stringify({ path: p, at }) + '\n');
      const results = (await Promise.all(replies)).map((l) => JSON.parse(l) as { ok: boolean; applied?: number; message?: string });
      expect(results, `round ${round}`).toEqual(children.map(() => expect.objectContaining({ ok: true, applied: MIGRATIONS.length })));
      const db = openDb(p);
      expect(appliedMigrations(db).map((m) => m.id)).toEqual(MIGRATIONS.map((m) => m.id));
      db.close();
    }
  });
});
