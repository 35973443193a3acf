import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from './db';
import { listRows } from './rows';
import { seedDemo } from './seed';
import { sqlite } from './sqlite';

describe('migration 0008: pose_metric rows gain conditions', () => {
  it('readings recorded before the checks read back with one not_checked condition, never an empty "passed" list', () => {
    const p = path.join(mkdtempSync(path.join(tmpdir(), 'capture-mig-')), 'clinic.sqlite');
    const old = openDb(p, { migrateUpTo: 7 });
    seedDemo(old, { seed: 3, today: '2026-11-20' });
    const a = sqlite(old).prepare('SELECT id, org_id FROM athlete LIMIT 1').get() as { id: string; org_id: string };
    const now = '2026-11-20T10:00:00.000Z';
    sqlite(old)
      .prepare(
        `INSERT INTO capture_session (id, org_id, created_at, updated_at, athlete_id, recorded_at, fps, frame_count, camera_count, source, status) VALUES ('cs-old', ?, ?, ?, ?, ?, 60, 100, 4, 'video', 'processed')`,
      )
      .run(a.org_id, now, now, a.id, now);
    sqlite(old)
      .prepare(
        `INSERT INTO pose_metric (id, org_id, created_at, updated_at, athlete_id, capture_session_id, joint, side, statistic, value_deg, omitted_reason, camera_count, camera_mode, view_obliquity_deg, obliquity_band, view_matches_declared, coverage, trustworthy, sagittal_ratio, frames)
      VALUES ('pm-old', ?, ?, ?, ?, 'cs-old', 'knee_flexion', 'left', 'peak', 81.5, NULL, 4, '4 cameras', 30, 'oblique', 0, 0.97, 1, 0.9, 100)`,
      )
      .run(a.org_id, now, now, a.id);
    old.close();
    const db = openDb(p);
    const rows = listRows<{ id: string; conditions: { code: string; detail: string }[]; trustworthy: boolean }>(db, 'pose_metric', a.org_id, {
      eq: { capture_session_id: 'cs-old' },
    });
    db.close();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.conditions.map((c) => c.code)).toEqual(['not_checked']);
    expect(rows[0]!.conditions[0]!.detail).toMatch(/re-process the trial/);
  });
});
