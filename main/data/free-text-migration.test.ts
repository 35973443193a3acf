import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from './db';
import { seedDemo } from './seed';
import { sqlite } from './sqlite';

describe('migration 0013: a typed deactivation reason leaves the changeset summary for its own column', () => {
  it('moves the reason of a deactivated athlete into athlete.deactivation_reason and rewrites every deactivation summary from structured fields', () => {
    const p = path.join(mkdtempSync(path.join(tmpdir(), 'free-text-mig-')), 'clinic.sqlite');
    const old = openDb(p, { migrateUpTo: 12 });
    const s = seedDemo(old, { seed: 5, today: '2026-11-20' });
    const db = sqlite(old);
    const [a, b] = db.prepare('SELECT id, name FROM athlete WHERE org_id = ? ORDER BY name LIMIT 2').all(s.orgId) as { id: string; name: string }[];
    const user = s.userIds.physio;
    const changeset = db.prepare(
      `INSERT INTO changeset (id, org_id, user_id, verb, summary, changes_json, inverse_json, content_hash, status, via_assistant, created_at, applied_at, undo_of, undone_by)
       VALUES (?, ?, ?, ?, ?, ?, NULL, 'h', ?, 0, ?, ?, ?, ?)`,
    );
    const activity = db.prepare(
      `INSERT INTO activity (id, org_id, created_at, actor_user_id, actor_name, via_assistant, run_id, record_table, record_id, summary, changeset_id) VALUES (?, ?, ?, ?, 'Physio', 0, NULL, 'athlete', ?, ?, ?)`,
    );
    const change = (id: string) =>
      JSON.stringify([{ op: 'update', table: 'athlete', id, version: 1, before: { status: 'active' }, after: { status: 'deactivated' } }]);
    // A: deactivated twice (the later reason wins), still deactivated; the reason holds parentheses.
    const reasonA = 'ACL repair (left knee), out for the season';
    changeset.run(
      'cs-a1',
      s.orgId,
      user,
      'athletes.deactivate',
      `Deactivate athlete ${a!.name} (old reason)`,
      change(a!.id),
      'applied',
      '2026-10-01T09:00:00Z',
      '2026-10-01T09:00:00Z',
      null,
      null,
    );
    changeset.run(
      'cs-a2',
      s.orgId,
      user,
      'athletes.deactivate',
      `Deactivate athlete ${a!.name} (${reasonA})`,
      change(a!.id),
      'applied',
      '2026-11-01T09:00:00Z',
      '2026-11-01T09:00:00Z',
      null,
      null,
    );
    activity.run('act-a2', s.orgId, '2026-11-01T09:00:00Z', user, a!.id, `Deactivate athlete ${a!.name} (${reasonA})`, 'cs-a2');
    db.prepare(`UPDATE athlete SET status = 'deactivated' WHERE id = ?`).run(a!.id);
    // B: deactivated, then the deactivation was undone: active again, no reason kept; Undo's summary repeated the reason.
    changeset.run(
      'cs-b1',
      s.orgId,
      user,
      'athletes.deactivate',
      `Deactivate athlete ${b!.name} (depression, on leave)`,
      change(b!.id),
      'undone',
      '2026-11-02T09:00:00Z',
      '2026-11-02T09:00:00Z',
      null,
      null,
    );
    changeset.run(
      'cs-b2',
      s.orgId,
      user,
      'changesets.undo',
      `Undo: Deactivate athlete ${b!.name} (depression, on leave)`,
      change(b!.id),
      'applied',
      '2026-11-03T09:00:00Z',
      '2026-11-03T09:00:00Z',
      'cs-b1',
      null,
    );
    activity.run('act-b2', s.orgId, '2026-11-03T09:00:00Z', user, b!.id, `Undo: Deactivate athlete ${b!.name} (depression, on leave)`, 'cs-b2');
    old.close();

    const upgraded = openDb(p);
    const q = sqlite(upgraded);
    const reason = (id: string) => (q.prepare('SELECT deactivation_reason AS r FROM athlete WHERE id = ?').get(id) as { r: string }).r;
    expect(reason(a!.id)).toBe(reasonA);
    expect(reason(b!.id)).toBe('');
    const summaries = Object.fromEntries(
      (q.prepare(`SELECT id, summary FROM changeset UNION ALL SELECT id, summary FROM activity`).all() as { id: string; summary: string }[]).map((r) => [
        r.id,
        r.summary,
      ]),
    );
    expect(summaries['cs-a1']).toBe(`Deactivate athlete ${a!.name}`);
    expect(summaries['cs-a2']).toBe(`Deactivate athlete ${a!.name}`);
    expect(summaries['act-a2']).toBe(`Deactivate athlete ${a!.name}`);
    expect(summaries['cs-b2']).toBe(`Undo: Deactivate athlete ${b!.name}`);
    expect(summaries['act-b2']).toBe(`Undo: Deactivate athlete ${b!.name}`);
    const all = JSON.stringify(summaries);
    for (const typed of ['ACL repair', 'old reason', 'depression']) expect(all).not.toContain(typed);
    // Runs from before the migration have no recorded clearance (NULL: read fail closed by the harness).
    expect(q.prepare(`SELECT count(*) AS n FROM pragma_table_info('kinetix_run') WHERE name = 'cleared_for_json'`).get()).toEqual({ n: 1 });
    upgraded.close();
  });
});
