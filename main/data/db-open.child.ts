/**
 * Test helper process for main/data/db.test.ts ("two processes open one new file at once").
 * Reads lines `{"path": string, "at": epochMs}` on stdin; waits until `at` (so every child opens
 * at the same instant), opens the database with openDb, and writes one JSON line per request:
 * `{"ok": true, "applied": n, "tables": n}` or `{"ok": false, "code": string, "message": string}`.
 */
import { createInterface } from 'node:readline';
import { appliedMigrations, openDb } from './db';
import { sqlite } from './sqlite';

const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
lines.on('line', (line) => {
  const { path, at } = JSON.parse(line) as { path: string; at: number };
  while (Date.now() < at) {
    /* spin to the shared start instant (at most a few hundred ms) */
  }
  try {
    const db = openDb(path);
    const applied = appliedMigrations(db).length;
    const tables = (sqlite(db).prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'`).get() as { n: number }).n;
    db.close();
    process.stdout.write(JSON.stringify({ ok: true, applied, tables }) + '\n');
  } catch (e) {
    const err = e as { code?: string; message?: string };
    process.stdout.write(JSON.stringify({ ok: false, code: err.code ?? 'Error', message: err.message ?? String(e) }) + '\n');
  }
});
