/**
 * Setting a PIN on a device enrolled for sync (issue 12 final review B4), with real parts: the HQ
 * server over a real Postgres (main/sync/testing/hq-stack.ts), device SQLite files, the app's
 * background sync (main/app/AppSync over main/sync/engine.ts) and `dispatch` as the transports call
 * it. The PIN hashes travel to every device in the `app_user` shape, so a PIN set on one device
 * alone came back as HQ's old hash at the next sync; `admin.setPin` now goes to HQ first, from the
 * account that enrolled the device, and every device gets the new PIN.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { deviceSyncFactory } from '../app/device-sync';
import { AppSync, type SyncEngine, type SyncEngineFactory } from '../app/sync-runner';
import type { Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { verifyPin } from '../security/pin';
import { callVerb } from '../services';
import { DeviceSync } from '../sync/engine';
import { useDeviceFiles } from '../sync/testing/device-files';
import { havePg, useHqStack } from '../sync/testing/hq-stack';
import { createHandlers, dispatch, type CallContext } from './handlers';

const NEW_PIN = '4826';

describe.skipIf(!havePg)('admin.setPin on a device enrolled for sync', () => {
  const hq = useHqStack();
  const syncs: AppSync[] = [];
  const files = useDeviceFiles('ai-sync-pin-');
  afterAll(async () => {
    for (const s of syncs) await s.close();
  });

  /** Engines that sync only when asked (as `cli sync` does): no live stream brings HQ's rows in between. */
  const onDemand: SyncEngineFactory = {
    open: (db) => quiet(new DeviceSync(db)),
    enrol: async (db, input) => quiet(await DeviceSync.enrol(db, input)),
  };
  function quiet(e: SyncEngine): SyncEngine {
    e.start = () => undefined;
    return e;
  }

  async function device(email: string, name: string, factory: SyncEngineFactory = deviceSyncFactory()): Promise<{ db: Db; sync: AppSync }> {
    const db = files.open();
    const sync = new AppSync(db, factory, { tickMs: 0, stopTimeoutMs: 1000 });
    syncs.push(sync);
    await sync.enrol({ hqUrl: hq.url, email, pin: DEMO_PIN, code: await hq.code(email), deviceName: name });
    await sync.syncNow();
    return { db, sync };
  }
  const localHash = (db: Db, email: string) => findUserByEmail(db, email)!.pin_hash;
  /**
   * Pull until `email`'s row here carries `pinHash` (at most 20 s): HQ's write of a PIN reaches the
   * shape through logical replication, which may lag the end of a sync pass.
   */
  async function pullUntilHash(d: { db: Db; sync: AppSync }, email: string, pinHash: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (localHash(d.db, email) !== pinHash && Date.now() < deadline) await d.sync.syncNow();
  }
  const hqRow = async (email: string) =>
    (await hq.query<{ id: string; pin_hash: string }>(hq.summary.orgId, 'SELECT id, pin_hash FROM app_user WHERE email = $1', [email]))[0]!;

  it('goes to HQ first and reaches every device; a later resend of the row keeps it; only the enrolled account sets it; offline nothing changes', async () => {
    const office = await device(DEMO_EMAILS.owner, 'Owner laptop');
    const laptop = await device(DEMO_EMAILS.admin, 'Clinic laptop');
    const as = (db: Db, email: string): CallContext => ({ session: { userId: findUserByEmail(db, email)!.id } });
    const physio = findUserByEmail(office.db, DEMO_EMAILS.physio)!.id;
    const officeHandlers = createHandlers({ db: office.db, sync: office.sync });

    // The owner resets the physio's PIN on the owner's own device: HQ holds it, and so does the device at once.
    expect(await dispatch(officeHandlers, as(office.db, DEMO_EMAILS.owner), 'admin.setPin', { user_id: physio, pin: NEW_PIN })).toEqual({
      ok: true,
      value: { pin_set: true },
    });
    expect(verifyPin(NEW_PIN, (await hqRow(DEMO_EMAILS.physio)).pin_hash)).toBe(true);
    expect(verifyPin(DEMO_PIN, (await hqRow(DEMO_EMAILS.physio)).pin_hash)).toBe(false);
    expect(verifyPin(NEW_PIN, localHash(office.db, DEMO_EMAILS.physio))).toBe(true);
    const [activity] = await hq.query<{ summary: string; actor_name: string }>(
      hq.summary.orgId,
      "SELECT summary, actor_name FROM activity WHERE record_table = 'app_user' AND record_id = $1 ORDER BY created_at DESC LIMIT 1",
      [physio],
    );
    expect(activity).toMatchObject({
      summary: expect.stringMatching(/^Reset the sign-in PIN of /),
      actor_name: expect.stringMatching(/via Device Owner laptop$/),
    });

    // HQ sends the physio's row again (the owner renames the account): the new PIN stays, on both devices.
    callVerb({ db: office.db, userId: findUserByEmail(office.db, DEMO_EMAILS.owner)!.id }, 'users.update', { id: physio, display_name: 'Physio Renamed' });
    await office.sync.syncNow();
    for (const d of [office, laptop]) {
      const deadline = Date.now() + 20_000;
      while (findUserByEmail(d.db, DEMO_EMAILS.physio)!.display_name !== 'Physio Renamed' && Date.now() < deadline) await d.sync.syncNow();
      expect(findUserByEmail(d.db, DEMO_EMAILS.physio)!.display_name).toBe('Physio Renamed');
      expect(verifyPin(NEW_PIN, localHash(d.db, DEMO_EMAILS.physio))).toBe(true);
      expect(verifyPin(DEMO_PIN, localHash(d.db, DEMO_EMAILS.physio))).toBe(false);
    }

    // On the admin's laptop the owner (signed in there with a PIN) cannot set it: not the account that enrolled it.
    const laptopHandlers = createHandlers({ db: laptop.db, sync: laptop.sync });
    const before = localHash(laptop.db, DEMO_EMAILS.physio);
    expect(await dispatch(laptopHandlers, as(laptop.db, DEMO_EMAILS.owner), 'admin.setPin', { user_id: physio, pin: '1111' })).toMatchObject({
      ok: false,
      error: { code: 'Forbidden', message: expect.stringMatching(/enrolled with your own account/) },
    });
    // The device's own rules still answer first, in its words (an admin sets no physio's PIN).
    expect(await dispatch(laptopHandlers, as(laptop.db, DEMO_EMAILS.admin), 'admin.setPin', { user_id: physio, pin: '1111' })).toMatchObject({
      ok: false,
      error: { code: 'Forbidden' },
    });
    expect(localHash(laptop.db, DEMO_EMAILS.physio)).toBe(before);

    // HQ unreachable: Unavailable, nothing changed anywhere.
    await hq.stopHq();
    try {
      expect(await dispatch(officeHandlers, as(office.db, DEMO_EMAILS.owner), 'admin.setPin', { user_id: physio, pin: '2222' })).toMatchObject({
        ok: false,
        error: { code: 'Unavailable' },
      });
    } finally {
      await hq.startHq();
    }
    expect(verifyPin(NEW_PIN, localHash(office.db, DEMO_EMAILS.physio))).toBe(true);
  });

  it("stores HQ's row version and updated_at with the hash: the device's next change of the account is not refused as stale (review i12g minor 1)", async () => {
    const office = await device(DEMO_EMAILS.owner, 'Owner desktop', onDemand);
    const owner = findUserByEmail(office.db, DEMO_EMAILS.owner)!.id;
    const doctor = findUserByEmail(office.db, DEMO_EMAILS.doctor)!;
    const handlers = createHandlers({ db: office.db, sync: office.sync });
    expect(await dispatch(handlers, { session: { userId: owner } }, 'admin.setPin', { user_id: doctor.id, pin: NEW_PIN })).toMatchObject({ ok: true });
    const [atHq] = await hq.query<{ version: number; updated_at: Date }>(hq.summary.orgId, 'SELECT version, updated_at FROM app_user WHERE id = $1', [
      doctor.id,
    ]);
    expect(Number(atHq!.version)).toBe(doctor.version + 1);
    const here = findUserByEmail(office.db, DEMO_EMAILS.doctor)!;
    expect({ version: here.version, updated_at: here.updated_at }).toEqual({ version: doctor.version + 1, updated_at: atHq!.updated_at.toISOString() });
    expect(verifyPin(NEW_PIN, here.pin_hash)).toBe(true);

    // The owner renames the doctor straight away, before any pull: HQ applies it.
    callVerb({ db: office.db, userId: owner }, 'users.update', { id: doctor.id, display_name: 'Doctor Renamed' });
    await office.sync.syncNow();
    expect(office.sync.conflicts()).toEqual([]);
    const [renamed] = await hq.query<{ display_name: string; pin_hash: string }>(
      hq.summary.orgId,
      'SELECT display_name, pin_hash FROM app_user WHERE id = $1',
      [doctor.id],
    );
    expect(renamed!.display_name).toBe('Doctor Renamed');
    expect(verifyPin(NEW_PIN, renamed!.pin_hash)).toBe(true);
    // After the pull the device holds HQ's row, hash included.
    expect(findUserByEmail(office.db, DEMO_EMAILS.doctor)).toMatchObject({ display_name: 'Doctor Renamed', pin_hash: renamed!.pin_hash });
  });
  it("adopts HQ's version only when the PIN was HQ's one change since this device's copy: another device's unpulled change still makes the next edit here a stale conflict (review i12h B1)", async () => {
    const a = await device(DEMO_EMAILS.owner, 'Owner desk A', onDemand);
    const b = await device(DEMO_EMAILS.owner, 'Owner desk B', onDemand);
    const ownerA = findUserByEmail(a.db, DEMO_EMAILS.owner)!.id;
    const ownerB = findUserByEmail(b.db, DEMO_EMAILS.owner)!.id;
    const coach = findUserByEmail(a.db, DEMO_EMAILS.coach)!;

    // B renames the coach and uploads it; A does not pull.
    callVerb({ db: b.db, userId: ownerB }, 'users.update', { id: coach.id, display_name: 'Coach From B' });
    await b.sync.syncNow();
    expect(b.sync.conflicts()).toEqual([]);

    // A sets the coach's PIN at HQ (HQ's row is now two versions past A's copy), then renames the coach.
    const handlers = createHandlers({ db: a.db, sync: a.sync });
    expect(await dispatch(handlers, { session: { userId: ownerA } }, 'admin.setPin', { user_id: coach.id, pin: NEW_PIN })).toMatchObject({ ok: true });
    const here = findUserByEmail(a.db, DEMO_EMAILS.coach)!;
    expect(here.version).toBe(coach.version);
    expect(verifyPin(NEW_PIN, here.pin_hash)).toBe(true);
    const edit = callVerb({ db: a.db, userId: ownerA }, 'users.update', { id: coach.id, display_name: 'Coach From A' }) as { changeset: { id: string } };
    await a.sync.syncNow();

    // A's edit is refused as stale and shown; HQ keeps B's name and A's PIN; A now shows HQ's row.
    expect(a.sync.conflicts().map((c) => [c.changeset_id, c.reason])).toEqual([[edit.changeset.id, 'stale']]);
    const [atHq] = await hq.query<{ display_name: string; pin_hash: string }>(hq.summary.orgId, 'SELECT display_name, pin_hash FROM app_user WHERE id = $1', [
      coach.id,
    ]);
    expect(atHq!.display_name).toBe('Coach From B');
    expect(verifyPin(NEW_PIN, atHq!.pin_hash)).toBe(true);
    await pullUntilHash(a, DEMO_EMAILS.coach, atHq!.pin_hash);
    expect(findUserByEmail(a.db, DEMO_EMAILS.coach)).toMatchObject({ display_name: 'Coach From B', pin_hash: atHq!.pin_hash });
  });
  it('a change of the account made here and not yet synced goes to HQ before the PIN: it is applied, not a conflict (review i12i minor 1)', async () => {
    const a = await device(DEMO_EMAILS.owner, 'Owner desk C', onDemand);
    const owner = findUserByEmail(a.db, DEMO_EMAILS.owner)!.id;
    const analyst = findUserByEmail(a.db, DEMO_EMAILS.analyst)!;
    callVerb({ db: a.db, userId: owner }, 'users.update', { id: analyst.id, display_name: 'Analyst Edited Here' });
    const handlers = createHandlers({ db: a.db, sync: a.sync });
    expect(await dispatch(handlers, { session: { userId: owner } }, 'admin.setPin', { user_id: analyst.id, pin: NEW_PIN })).toMatchObject({ ok: true });
    await a.sync.syncNow();
    expect(a.sync.conflicts()).toEqual([]);
    const [atHq] = await hq.query<{ display_name: string; pin_hash: string }>(hq.summary.orgId, 'SELECT display_name, pin_hash FROM app_user WHERE id = $1', [
      analyst.id,
    ]);
    expect(atHq!.display_name).toBe('Analyst Edited Here');
    expect(verifyPin(NEW_PIN, atHq!.pin_hash)).toBe(true);
    // HQ's row at the edit's version (old hash) can arrive before the PIN's row: the device holds
    // HQ's hash once the PIN's row has arrived too (see main/data/identity.ts storePinHashSetAtHq).
    await pullUntilHash(a, DEMO_EMAILS.analyst, atHq!.pin_hash);
    expect(a.sync.conflicts()).toEqual([]);
    expect(findUserByEmail(a.db, DEMO_EMAILS.analyst)).toMatchObject({ display_name: 'Analyst Edited Here', pin_hash: atHq!.pin_hash });
  });
});
