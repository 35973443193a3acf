/**
 * HQ sign-in codes through the contract (issue 12, B3), with real parts: the HQ server over a real
 * Postgres (main/sync/testing/hq-stack.ts), device SQLite files, the app's background sync
 * (main/app/AppSync over main/sync/engine.ts) and `dispatch` as the transports call it. A PIN alone
 * signs no one in to HQ; `sync.enrolmentCode` gets a one-time code with the signed-in user's own HQ
 * sign-in on this device: for themselves, or (user.manage) for another account, where HQ applies
 * the rule for setting that account's PIN and its refusal reaches the caller. A code enrols one
 * device, once. (The rules alone, without HQ: main/ipc/sync.test.ts.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { deviceSyncFactory } from '../app/device-sync';
import { AppSync } from '../app/sync-runner';
import type { Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { useDeviceFiles } from '../sync/testing/device-files';
import { havePg, useHqStack } from '../sync/testing/hq-stack';
import { createHandlers, dispatch, type CallContext } from './handlers';

const CODE = /^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/;

describe.skipIf(!havePg)('HQ sign-in codes through the contract', () => {
  const hq = useHqStack();
  const syncs: AppSync[] = [];
  const files = useDeviceFiles('ai-signin-code-');
  afterAll(async () => {
    for (const s of syncs) await s.close();
  });

  function device(): { db: Db; sync: AppSync } {
    const db = files.open();
    const sync = new AppSync(db, deviceSyncFactory(), { tickMs: 0, stopTimeoutMs: 1000 });
    syncs.push(sync);
    return { db, sync };
  }

  it('issues codes with the caller’s own HQ sign-in; HQ’s rule and refusals reach the caller; a code enrols one device once', async () => {
    // The clinic laptop, enrolled by the admin with an operator-issued code; the club's accounts sync to it.
    const laptop = device();
    await laptop.sync.enrol({ hqUrl: hq.url, email: DEMO_EMAILS.admin, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.admin), deviceName: 'Clinic laptop' });
    await laptop.sync.syncNow();
    const handlers = createHandlers({ db: laptop.db, sync: laptop.sync });
    const id = (email: string) => findUserByEmail(laptop.db, email)!.id;
    const as = (email: string): CallContext => ({ session: { userId: id(email) } });
    const code = (email: string, target: string) => dispatch(handlers, as(email), 'sync.enrolmentCode', { userId: id(target) });

    // The admin (the enrolled user) for themselves: a code, its expiry (24 h) and the account.
    const own = await code(DEMO_EMAILS.admin, DEMO_EMAILS.admin);
    expect(own).toMatchObject({ ok: true, value: { code: expect.stringMatching(CODE), user: { id: id(DEMO_EMAILS.admin), email: DEMO_EMAILS.admin } } });
    const ttlH = (Date.parse((own as { value: { expires_at: string } }).value.expires_at) - Date.now()) / 3_600_000;
    expect(ttlH).toBeGreaterThan(23.9);
    expect(ttlH).toBeLessThanOrEqual(24);
    // For a physio: allowed here (user.manage), refused by HQ (an admin manages no physio account nor sets its PIN), with HQ's reason.
    expect(await code(DEMO_EMAILS.admin, DEMO_EMAILS.physio)).toMatchObject({
      ok: false,
      error: { code: 'Forbidden', message: expect.stringMatching(/physio/) },
    });
    // A physio for someone else: refused here, before HQ.
    expect(await code(DEMO_EMAILS.physio, DEMO_EMAILS.doctor)).toMatchObject({
      ok: false,
      error: { code: 'Forbidden', message: expect.stringMatching(/your own account only/) },
    });
    // The owner, on a laptop the admin enrolled: no codes from here (see below), saying where they come from.
    expect(await code(DEMO_EMAILS.owner, DEMO_EMAILS.physio)).toMatchObject({
      ok: false,
      error: { code: 'Forbidden', message: expect.stringMatching(/enrolled with your own account/) },
    });

    // The owner signs in to HQ here: the PIN with a wrong code is refused, with their own code accepted.
    const signIn = (pin: string, c: string) => dispatch(handlers, as(DEMO_EMAILS.owner), 'sync.signInToHq', { pin, code: c });
    expect(await signIn(DEMO_PIN, 'AAAA-BBBB-CCCC')).toMatchObject({ ok: false, error: { code: 'Unauthenticated' } });
    expect(await signIn(DEMO_PIN, await hq.code(DEMO_EMAILS.owner))).toMatchObject({ ok: true, value: { signed_in: true } });
    // Signed in to HQ on a device someone else enrolled, the owner issues no codes there: whoever
    // signed in locally as the owner (a PIN the laptop's hashes give away) would mint the owner's
    // own codes, and so HQ tokens anywhere (issue 12 re-review).
    expect(await code(DEMO_EMAILS.owner, DEMO_EMAILS.owner)).toMatchObject({
      ok: false,
      error: { code: 'Forbidden', message: expect.stringMatching(/enrolled with your own account/) },
    });
    expect(await code(DEMO_EMAILS.owner, DEMO_EMAILS.physio)).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    // On the owner's own device (enrolled with the owner's account), the owner issues the physio's code.
    const office = device();
    await office.sync.enrol({ hqUrl: hq.url, email: DEMO_EMAILS.owner, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.owner), deviceName: 'Owner laptop' });
    await office.sync.syncNow(); // the club's accounts arrive (the same ids as on the laptop)
    const officeHandlers = createHandlers({ db: office.db, sync: office.sync });
    const physioCode = await dispatch(officeHandlers, as(DEMO_EMAILS.owner), 'sync.enrolmentCode', { userId: id(DEMO_EMAILS.physio) });
    expect(physioCode).toMatchObject({ ok: true, value: { code: expect.stringMatching(CODE), user: { email: DEMO_EMAILS.physio, role: 'physio' } } });
    const issued = (physioCode as { value: { code: string } }).value.code;

    // A second device enrols as the physio with that code (typed in lower case); a third cannot reuse it.
    const pitch = device();
    await pitch.sync.enrol({ hqUrl: hq.url, email: DEMO_EMAILS.physio, pin: DEMO_PIN, code: issued.toLowerCase(), deviceName: 'Pitch laptop' });
    expect(pitch.sync.status().enrolled).toBe(true);
    const third = device();
    await expect(third.sync.enrol({ hqUrl: hq.url, email: DEMO_EMAILS.physio, pin: DEMO_PIN, code: issued, deviceName: 'Third' })).rejects.toMatchObject({
      code: 'Unauthenticated',
    });
    expect(third.sync.status().enrolled).toBe(false);

    // HQ unreachable: Unavailable, nothing issued.
    await hq.stopHq();
    try {
      expect(await code(DEMO_EMAILS.admin, DEMO_EMAILS.admin)).toMatchObject({ ok: false, error: { code: 'Unavailable' } });
    } finally {
      await hq.startHq();
    }
  });
});
