/**
 * A signed-in window ends when its account changes under it (issue 13 re-review): the real
 * handlers over a real SQLite file. The blocker was: a super admin made an account a super admin,
 * set its PIN, signed in as it in another tab, and then made it a doctor — the cleared PIN stopped
 * new sign-ins but the open session read injuries and signed off RTP as a doctor.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClinicFixture, errorOf, type ClinicFixture } from '../testing/clinic-fixture';
import { setUserPin } from '../services/admin';
import type { CallContext } from './handlers';
import { createHandlers } from './handlers';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const SIGNED_OUT = /^Your account was changed since you signed in \(its role, athlete link, PIN or status\), so you were signed out\. Sign in again\.$/;

describe('a session stands on the account as it was at sign-in', () => {
  it('a role change ends the sessions of that account: the super admin’s sign-in as an account it then makes a doctor reads nothing', async () => {
    const h = createHandlers({ db: f.db });
    const sa: CallContext = { session: { userId: f.a.users.super_admin } };
    // the super admin makes a fresh account a super admin, sets its PIN and signs in as it in another tab
    const made = (await h['verb.call'](sa, {
      verb: 'users.create',
      input: { email: 'locum@example.test', display_name: 'Locum', role: 'super_admin' },
    })) as { changeset: { changes: { id: string }[] } };
    const locum = made.changeset.changes[0]!.id;
    expect(setUserPin({ db: f.db, userId: f.a.users.super_admin }, { user_id: locum, pin: '2468' })).toEqual({ pin_set: true });
    const tab: CallContext = { session: { userId: null } };
    expect((await h['session.signIn'](tab, { user_id: locum, pin: '2468' })).role).toBe('super_admin');
    // a rename keeps the session
    await h['verb.call'](sa, { verb: 'users.update', input: { id: locum, display_name: 'Locum two' } });
    expect((await h['session.me'](tab, {}))?.display_name).toBe('Locum two');
    // the super admin makes it a doctor (allowed: it grants every role); the PIN is cleared, and the open tab ends
    await h['verb.call'](sa, { verb: 'users.update', input: { id: locum, role: 'doctor' } });
    const e = await errorOfAsync(() => h['verb.call'](tab, { verb: 'injuries.list', input: {} }));
    expect([e.code, e.message]).toEqual(['Unauthenticated', expect.stringMatching(SIGNED_OUT)]);
    expect(tab.session.userId).toBeNull();
    expect(await h['session.me'](tab, {})).toBeNull();
    // and it cannot sign back in with the PIN it was given
    expect((await errorOfAsync(() => h['session.signIn'](tab, { user_id: locum, pin: '2468' }))).code).toBe('Unauthenticated');
  });

  it('a PIN reset by someone else, a deactivation, or a link change ends the session too; session.me then answers null', async () => {
    const h = createHandlers({ db: f.db });
    const owner: CallContext = { session: { userId: f.a.users.owner } };
    const coach: CallContext = { session: { userId: null } };
    expect(setUserPin({ db: f.db, userId: f.a.users.owner }, { user_id: f.a.users.coach, pin: '1357' })).toEqual({ pin_set: true });
    await h['session.signIn'](coach, { user_id: f.a.users.coach, pin: '1357' });
    expect((await h['session.me'](coach, {}))?.role).toBe('coach');
    setUserPin({ db: f.db, userId: f.a.users.owner }, { user_id: f.a.users.coach, pin: '9753' });
    expect(await h['session.me'](coach, {})).toBeNull();
    expect(coach.session.userId).toBeNull();
    await h['session.signIn'](coach, { user_id: f.a.users.coach, pin: '9753' });
    await h['verb.call'](owner, { verb: 'users.update', input: { id: f.a.users.coach, active: false } });
    expect((await errorOfAsync(() => h['verb.call'](coach, { verb: 'athletes.list', input: {} }))).message).toMatch(SIGNED_OUT);
  });
});

async function errorOfAsync(fn: () => unknown): Promise<{ code: string; message: string }> {
  try {
    await fn();
  } catch (e) {
    return errorOf(() => {
      throw e;
    });
  }
  throw new Error('expected an error');
}
