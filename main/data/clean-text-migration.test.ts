/**
 * Migration 0016 on a real SQLite file written before it (seeded, then dirtied the way old data
 * could be): stored one-line text is cleaned as the text rules store it (control, zero-width and
 * direction characters removed, trimmed, NFKC); a value that would become blank, or a squad name /
 * fee item code that would equal another row's (ignoring case), keeps its original and is listed
 * in `text_cleanup_kept`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanOneLine } from '../../models/text';
import { openDb } from './db';
import { seedDemo } from './seed';
import { sqlite } from './sqlite';

describe('cleanOneLine', () => {
  it('removes invisible and direction characters, trims and NFKC-normalises', () => {
    expect(cleanOneLine('  \uFF35\uFF11\uFF19\u200B ')).toBe('U19');
    expect(cleanOneLine('Jo\u202Enah\u2066')).toBe('Jonah');
    expect(cleanOneLine('\u200B\uFEFF')).toBe('');
    expect(cleanOneLine('\uFDFA')).toHaveLength(18);
  });
});

describe('migration 0016: stored one-line text cleaned', () => {
  it('cleans names, codes and positions; keeps and lists what would be blank or collide', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'clean-text-mig-'));
    try {
      const p = path.join(dir, 'clinic.sqlite');
      const old = openDb(p, { migrateUpTo: 15 });
      const s = seedDemo(old, { seed: 5, today: '2026-11-20' });
      const db = sqlite(old);
      const athletes = db.prepare('SELECT id, name FROM athlete WHERE org_id = ? ORDER BY name LIMIT 2').all(s.orgId) as { id: string; name: string }[];
      const squads = db.prepare('SELECT id, name FROM squad WHERE org_id = ? ORDER BY name LIMIT 2').all(s.orgId) as { id: string; name: string }[];
      const items = db.prepare('SELECT id, code, name FROM rate_item WHERE org_id = ? ORDER BY code LIMIT 2').all(s.orgId) as {
        id: string;
        code: string;
        name: string;
      }[];
      const set = (table: string, col: string, id: string, v: string | null) => db.prepare(`UPDATE ${table} SET ${col} = ? WHERE id = ?`).run(v, id);
      // Old data as it could be stored before the rules: full-width, zero-width, a direction override, spaces.
      set('athlete', 'name', athletes[0]!.id, ` \uFF2A${athletes[0]!.name.slice(1)}\u200B `);
      set('athlete', 'position', athletes[0]!.id, 'Wing\u202Eer');
      set('athlete', 'position', athletes[1]!.id, '\u200B\u200C'); // would be blank: kept
      set('squad', 'season', squads[0]!.id, '２０２６/２７');
      // A squad named like another once cleaned (ignoring case): kept, listed.
      set('squad', 'name', squads[1]!.id, ` ${squads[0]!.name.toUpperCase()}\u200B`);
      // A fee code equal to another item's once cleaned: kept; its name is still cleaned.
      set('rate_item', 'code', items[1]!.id, `${items[0]!.code}\u2066`);
      set('rate_item', 'name', items[1]!.id, `  ${items[1]!.name}\uFEFF`);
      old.close();

      const db2 = openDb(p);
      const q = sqlite(db2);
      const get = (table: string, col: string, id: string) => (q.prepare(`SELECT ${col} AS v FROM ${table} WHERE id = ?`).get(id) as { v: string | null }).v;
      expect(get('athlete', 'name', athletes[0]!.id)).toBe(`J${athletes[0]!.name.slice(1)}`);
      expect(get('athlete', 'position', athletes[0]!.id)).toBe('Winger');
      expect(get('athlete', 'position', athletes[1]!.id)).toBe('\u200B\u200C');
      expect(get('squad', 'season', squads[0]!.id)).toBe('2026/27');
      expect(get('squad', 'name', squads[1]!.id)).toBe(` ${squads[0]!.name.toUpperCase()}\u200B`);
      expect(get('squad', 'name', squads[0]!.id)).toBe(squads[0]!.name);
      expect(get('rate_item', 'code', items[1]!.id)).toBe(`${items[0]!.code}\u2066`);
      expect(get('rate_item', 'name', items[1]!.id)).toBe(items[1]!.name);
      const kept = q.prepare('SELECT table_name, row_id, column_name, reason, original, cleaned FROM text_cleanup_kept ORDER BY table_name, column_name').all();
      expect(kept).toEqual([
        { table_name: 'athlete', row_id: athletes[1]!.id, column_name: 'position', reason: 'blank', original: '\u200B\u200C', cleaned: '' },
        {
          table_name: 'rate_item',
          row_id: items[1]!.id,
          column_name: 'code',
          reason: 'collision',
          original: `${items[0]!.code}\u2066`,
          cleaned: items[0]!.code,
        },
        {
          table_name: 'squad',
          row_id: squads[1]!.id,
          column_name: 'name',
          reason: 'collision',
          original: ` ${squads[0]!.name.toUpperCase()}\u200B`,
          cleaned: squads[0]!.name.toUpperCase(),
        },
      ]);
      db2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
