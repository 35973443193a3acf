import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { MigrationMismatch, appliedMigrations, openDb } from './db';
import { MIGRATIONS } from './migrations';

const dirs: string[] = [];
function tempPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'ai-db-'));
  dirs.push(d);
  return join(d, 'app.sqlite');
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('openDb', () => {
  it('creates the file with WAL and foreign keys, and records every migration', () => {
    const db = openDb(tempPath());
    expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.raw.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(appliedMigrations(db).map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
    db.close();
  });
  it('reopening keeps data and applies nothing twice', () => {
    const p = tempPath();
    const db = openDb(p);
    db.raw.prepare(`INSERT INTO organization (id, created_at, updated_at, name, plan, assistant_model) VALUES ('o1', 'x', 'x', 'Club', 'club', 'm')`).run();
    db.close();
    const again = openDb(p);
    expect(appliedMigrations(again)).toHaveLength(MIGRATIONS.length);
    expect(again.raw.prepare('SELECT name FROM organization').get()).toEqual({ name: 'Club' });
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
  it('each later migration applies to a database that already holds the demo club', async () => {
    const { seedDemo } = await import('./seed');
    for (const m of MIGRATIONS.slice(1)) {
      const p = tempPath();
      const old = openDb(p, { migrateUpTo: m.id - 1 });
      seedDemo(old, { seed: 7, today: '2026-11-20' });
      const athletes = (old.raw.prepare('SELECT count(*) AS n FROM athlete').get() as { n: number }).n;
      old.close();
      const upgraded = openDb(p);
      expect(appliedMigrations(upgraded).map((x) => x.id)).toContain(m.id);
      expect((upgraded.raw.prepare('SELECT count(*) AS n FROM athlete').get() as { n: number }).n).toBe(athletes);
      upgraded.close();
    }
  });
  it('enforces foreign keys', () => {
    const db = openDb(tempPath());
    expect(() => db.raw.prepare(`INSERT INTO squad (id, org_id, created_at, updated_at, name, season) VALUES ('s', 'missing-org', 'x', 'x', 'U19', '2026')`).run()).toThrow(/FOREIGN KEY/);
    db.close();
  });
});
