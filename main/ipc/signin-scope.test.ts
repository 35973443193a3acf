/**
 * The sign-in picker's scope (main/app/signin-scope.ts) through the real handlers on real SQLite:
 * with the installation limited to one organisation (by name or id), only its people are listed
 * and only they can sign in — another organisation's user with the right PIN gets the same answer
 * as an unknown user. Unset, every organisation is listed (the previous behaviour).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../models/errors';
import { findOrganization, setUserPinHash } from '../data/identity';
import { hashPin } from '../services/pin';
import { parseSignInOrgs } from '../app/signin-scope';
import { createClinicFixture, type ClinicFixture } from '../testing/clinic-fixture';
import type { CallContext } from './handlers';
import { createHandlers } from './handlers';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
  setUserPinHash(f.db, f.a.users.physio, hashPin('2468'));
  setUserPinHash(f.db, f.b.users.physio, hashPin('2468'));
});
afterEach(() => f.close());

const orgsListed = async (h: ReturnType<typeof createHandlers>) =>
  new Set((await h['session.users']({ session: { userId: null } }, {})).users.map((u) => u.org_name));

describe('sign-in scope', () => {
  it('lists and signs in only the configured organisation (by name, any case, or by id)', async () => {
    const nameA = findOrganization(f.db, f.a.orgId)!.name;
    const nameB = findOrganization(f.db, f.b.orgId)!.name;
    for (const signInOrgs of [[nameA.toUpperCase()], [f.a.orgId]]) {
      const h = createHandlers({ db: f.db, signInOrgs });
      expect(await orgsListed(h)).toEqual(new Set([nameA]));
      const ok: CallContext = { session: { userId: null } };
      expect((await h['session.signIn'](ok, { user_id: f.a.users.physio, pin: '2468' })).org_id).toBe(f.a.orgId);
      const other: CallContext = { session: { userId: null } };
      let err: unknown;
      try {
        await h['session.signIn'](other, { user_id: f.b.users.physio, pin: '2468' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('Unauthenticated');
      expect((err as AppError).message).toBe('That PIN is not right for this user. Try again.');
      expect(other.session.userId).toBeNull();
      expect(nameB).not.toBe(nameA);
    }
  });

  it('unset or empty: every organisation, as before', async () => {
    expect(parseSignInOrgs(undefined)).toBeNull();
    expect(parseSignInOrgs(' , ')).toBeNull();
    expect(parseSignInOrgs('Kestrel Vale FC, 0190-abc ')).toEqual(['Kestrel Vale FC', '0190-abc']);
    const h = createHandlers({ db: f.db, signInOrgs: null });
    expect((await orgsListed(h)).size).toBe(2);
  });
});
