/**
 * `capture.saveRig` on the seeded demo club (real SQLite file): a new rig with its cameras read
 * back through `capture.listRigs`; recalibrating a rig in place; bad input refused with what is
 * wrong; who may save.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf } from '../testing/clinic-fixture';
import { openDb, type Db } from '../data/db';
import { seedDemo, type SeedSummary } from '../data/seed';
import { VERBS, callVerbByName } from './index';

let dir: string, db: Db, seed: SeedSummary;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const call = (userId: string, verb: string, input: unknown): any => callVerbByName({ db, userId }, VERBS, verb, input);

const cam = (name: string, x: number) => ({
  name,
  width: 1280,
  height: 720,
  K: [900, 0, 640, 0, 900, 360, 0, 0, 1],
  dist: [0.01, -0.02, 0, 0, 0],
  rvec: [1.2, 0.1, x],
  tvec: [0.1, 0.2, 3],
  reprojection_rms_px: 0.31,
});

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ai-capture-rig-'));
  db = openDb(path.join(dir, 'demo.sqlite'));
  seed = seedDemo(db, { seed: 1, today: '2026-11-20' });
});
afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('capture.saveRig', () => {
  it('stores a room rig with its cameras, declared layout and tolerance', () => {
    const physio = seed.userIds.physio!;
    const out = call(physio, 'capture.saveRig', {
      name: 'Clinic room 2',
      declared_layout: [
        { camera: 'cam01', label: 'front', yaw_deg: 0 },
        { camera: 'cam02', label: 'left side', yaw_deg: 90 },
      ],
      drift_tolerance_deg: 10,
      cameras: [cam('cam01', 0.1), cam('cam02', 0.2)],
    });
    const rigId = out.changeset.changes.find((c: { table: string }) => c.table === 'rig').id as string;
    const rig = call(physio, 'capture.listRigs', {}).rigs.find((r: { id: string }) => r.id === rigId);
    expect(rig.name).toBe('Clinic room 2');
    expect(rig.drift_tolerance_deg).toBe(10);
    expect(JSON.parse(rig.declared_layout)).toEqual([
      { camera: 'cam01', label: 'front', yaw_deg: 0 },
      { camera: 'cam02', label: 'left side', yaw_deg: 90 },
    ]);
    expect(rig.cameras.map((c: { name: string }) => c.name)).toEqual(['cam01', 'cam02']);
    expect(JSON.parse(rig.cameras[1].calibration)).toEqual({ K: cam('x', 0).K, dist: cam('x', 0).dist, rvec: [1.2, 0.1, 0.2], tvec: [0.1, 0.2, 3] });
    expect(rig.cameras[0].reprojection_rms_px).toBe(0.31);
    expect(rig.cameras[0].calibrated_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    // Recalibrated in place: same rig, same camera rows, new numbers.
    call(physio, 'capture.saveRig', { rig_id: rigId, name: 'Clinic room 2', cameras: [cam('cam01', 0.5), cam('cam02', 0.6)] });
    const again = call(physio, 'capture.listRigs', {}).rigs.filter((r: { name: string }) => r.name === 'Clinic room 2');
    expect(again).toHaveLength(1);
    expect(again[0].cameras.map((c: { id: string }) => c.id)).toEqual(rig.cameras.map((c: { id: string }) => c.id));
    expect(JSON.parse(again[0].cameras[0].calibration).rvec).toEqual([1.2, 0.1, 0.5]);
    expect(again[0].cameras[0].version).toBe(2);

    // A different set of cameras cannot replace it.
    const e = errorOf(() => call(physio, 'capture.saveRig', { rig_id: rigId, name: 'Clinic room 2', cameras: [cam('cam01', 0), cam('cam03', 0)] }));
    expect(e.code).toBe('Validation');
    expect(e.message).toMatch(/has cameras cam01, cam02; this calibration has cam01, cam03\. Save it as a new rig/);
  });

  it('refuses malformed calibrations with the field named', () => {
    const physio = seed.userIds.physio!;
    const bad = (patch: object, msg: RegExp) => {
      const e = errorOf(() => call(physio, 'capture.saveRig', { name: 'Room X', cameras: [{ ...cam('cam01', 0), ...patch }] }));
      expect(e.code).toBe('Validation');
      expect(e.message).toMatch(msg);
    };
    bad({ K: [1, 2, 3] }, /cameras\.0\.K/);
    bad({ dist: [0, 0, 0, 0, 0, 0] }, /4, 5 or 8 coefficients/);
    bad({ name: 'cam 1' }, /cameras\.0\.name/);
    const dup = errorOf(() => call(physio, 'capture.saveRig', { name: 'Room X', cameras: [cam('cam01', 0), cam('cam01', 1)] }));
    expect(dup.message).toMatch(/camera names must be unique/);
    const layout = errorOf(() =>
      call(physio, 'capture.saveRig', { name: 'Room X', declared_layout: [{ camera: 'cam09', label: 'front', yaw_deg: 0 }], cameras: [cam('cam01', 0)] }),
    );
    expect(layout.message).toMatch(/declared layout names a camera the rig does not have/);
  });

  it('needs capture.run: a coach may not save a rig', () => {
    const e = errorOf(() => call(seed.userIds.coach!, 'capture.saveRig', { name: 'Room Y', cameras: [cam('cam01', 0)] }));
    expect(e.code).toBe('Forbidden');
  });
});
