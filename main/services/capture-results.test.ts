/**
 * `capture.getResults` on the seeded demo club (real SQLite file): the seeded demo session's
 * series, readings and refusals; the previous session of the same test; who may read it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf } from '../testing/clinic-fixture';
import { CaptureResultsOut } from '../../models/outputs';
import { POSE_JOINTS, type PoseJoint } from '../../models/capture/metrics';
import { DEMO_CAPTURE } from '../../models/seed/demo-capture.generated';
import { openDb, type Db } from '../data/db';
import { seedDemo, type SeedSummary } from '../data/seed';
import { VERBS, callVerbByName } from './index';
import { sqlite } from '../data/sqlite';

let dir: string, db: Db, seed: SeedSummary;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const call = (userId: string, verb: string, input: unknown): any => callVerbByName({ db, userId }, VERBS, verb as never, input as never);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-capture-results-'));
  db = openDb(path.join(dir, 'demo.sqlite'));
  seed = seedDemo(db, { seed: 1, today: '2026-11-20' });
});
afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the demo club has a processed capture session', () => {
  it('the linked athlete has the demo balancing trial with its series and readings', () => {
    const list = call(seed.userIds.physio, 'capture.listSessions', { athlete_id: seed.linkedAthleteId });
    expect(list.total).toBe(1);
    expect(list.sessions[0]).not.toHaveProperty('angle_series');
    const r = CaptureResultsOut.parse(call(seed.userIds.physio, 'capture.getResults', { id: list.sessions[0].id }));
    expect(r.session).toMatchObject({ test: 'balance', fps: 60, frame_count: 100, camera_count: 4, status: 'complete' });
    expect(r.series?.series.length).toBeGreaterThan(4);
    expect(r.series?.series.every((s) => s.values.length === 100)).toBe(true);
    // The stored numbers are the fixture's (generated from the trial), reading for reading.
    expect(r.metrics).toHaveLength(DEMO_CAPTURE.metrics.length);
    const knee = r.metrics.find((m) => m.joint === 'knee_flexion' && m.side === 'left' && m.statistic === 'peak')!;
    const fromFixture = DEMO_CAPTURE.metrics.find((m) => m.joint === 'knee_flexion' && m.side === 'left' && m.statistic === 'peak')!;
    expect(knee.value_deg).toBe(fromFixture.value_deg);
    // A reading has a series exactly when it was not refused (refused ones carry their reason).
    for (const m of r.metrics) {
      expect(m.value_deg === null).toBe(m.omitted_reason !== null);
      expect(r.series!.series.some((s) => s.joint === m.joint && s.side === m.side)).toBe(m.value_deg !== null);
    }
    expect(r.previous).toBeNull();
  });

  it('a later session of the same test is compared with the earlier one; another test is not', () => {
    const first = call(seed.userIds.physio, 'capture.listSessions', { athlete_id: seed.linkedAthleteId }).sessions[0];
    const base = {
      athlete_id: seed.linkedAthleteId,
      fps: 60,
      frame_count: 3,
      camera_count: 2,
      source: 'video',
      angle_series: { fps: 60, first_frame: 0, series: [{ joint: 'knee_flexion', side: 'left', values: [10, 20, 15] }] },
      metrics: [],
    };
    const later = call(seed.userIds.physio, 'capture.recordSession', { ...base, recorded_at: '2026-11-19T10:00:00.000Z', test: 'balance' }).changeset.changes[0]
      .id;
    const other = call(seed.userIds.physio, 'capture.recordSession', { ...base, recorded_at: '2026-11-19T11:00:00.000Z', test: 'gait' }).changeset.changes[0]
      .id;
    const r = CaptureResultsOut.parse(call(seed.userIds.physio, 'capture.getResults', { id: later }));
    expect(r.previous?.session.id).toBe(first.id);
    expect(r.previous?.metrics.length).toBe(DEMO_CAPTURE.metrics.length);
    expect(r.series?.series[0]?.values).toEqual([10, 20, 15]);
    expect(call(seed.userIds.physio, 'capture.getResults', { id: other }).previous).toBeNull();
    // The earlier session is not compared with the later one.
    expect(call(seed.userIds.physio, 'capture.getResults', { id: first.id }).previous).toBeNull();
  });

  it('a long trial is stored whole (its series grows with the recording), and only this verb takes more than 64 KiB', () => {
    // 10 series × 4,000 frames ≈ 250 KB of canonical JSON: over the common 64 KiB input bound.
    const series = (
      frames: number,
      joints: readonly PoseJoint[] = ['knee_flexion', 'hip_flexion', 'shoulder_flexion', 'elbow_flexion', 'ankle_dorsiflexion'],
    ) =>
      joints.flatMap((joint) =>
        (['left', 'right'] as const).map((side) => ({ joint, side, values: Array.from({ length: frames }, (_, i) => 100 + (i % 500) / 10) })),
      );
    const base = {
      athlete_id: seed.linkedAthleteId,
      recorded_at: '2026-11-20T10:00:00.000Z',
      fps: 60,
      camera_count: 4,
      source: 'video',
      test: 'gait',
      metrics: [],
    };
    const long = call(seed.userIds.physio, 'capture.recordSession', {
      ...base,
      frame_count: 4000,
      angle_series: { fps: 60, first_frame: 0, series: series(4000) },
    });
    const stored = CaptureResultsOut.parse(call(seed.userIds.physio, 'capture.getResults', { id: long.changeset.changes[0].id }));
    expect(stored.series?.series).toHaveLength(10);
    expect(stored.series?.series.every((s) => s.values.length === 4000)).toBe(true);
    // Past the verb's own bound (3 MiB): refused before validation, with the limit named, nothing stored.
    const before = call(seed.userIds.physio, 'capture.listSessions', { athlete_id: seed.linkedAthleteId }).total;
    const huge = errorOf(() =>
      call(seed.userIds.physio, 'capture.recordSession', {
        ...base,
        frame_count: 36000,
        angle_series: { fps: 60, first_frame: 0, series: series(36000, POSE_JOINTS) },
      }),
    );
    expect(huge.code).toBe('Validation');
    expect(huge.message).toContain(`larger than ${3 * 1024 * 1024} bytes`);
    expect(call(seed.userIds.physio, 'capture.listSessions', { athlete_id: seed.linkedAthleteId }).total).toBe(before);
    // Any other verb keeps the common bound: a 100 KB athlete name is refused by size, not by its schema.
    const big = errorOf(() => call(seed.userIds.physio, 'athletes.create', { first_name: 'x'.repeat(100_000), last_name: 'Y' }));
    expect(big.message).toContain(`larger than ${64 * 1024} bytes`);
  });

  it('needs pose.read; another organisation sees nothing', () => {
    const id = call(seed.userIds.physio, 'capture.listSessions', { athlete_id: seed.linkedAthleteId }).sessions[0].id;
    expect(errorOf(() => call(seed.userIds.coach, 'capture.getResults', { id })).code).toBe('Forbidden');
    // Athlete accounts hold no pose.read (domain.md: exactly athlete.read, wellness.write, vitals.read, device.manage).
    expect(errorOf(() => call(seed.userIds.athlete, 'capture.getResults', { id })).code).toBe('Forbidden');
    const otherOrgPhysio = (sqlite(db).prepare("SELECT id FROM app_user WHERE org_id = ? AND role = 'physio'").get(seed.secondOrgId) as { id: string }).id;
    expect(errorOf(() => call(otherOrgPhysio, 'capture.getResults', { id })).code).toBe('NotFound');
  });
});
