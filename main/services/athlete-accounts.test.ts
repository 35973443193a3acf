/**
 * Athlete accounts reach an athlete's record (issue 13 re-review blocker): whoever creates or links
 * one, or sets its PIN, can sign in as it and read that athlete's wellness and vitals. So only a
 * role that may read those itself (the owner) may; an admin (no clinical reads) is refused with
 * the reason and what to do, on every device door: the entry form (`forms.submit`), `verb.call`
 * and the CLI (`callVerbByName`), Undo, and the PIN door (`admin.setPin`). Every PIN set or reset
 * writes an activity row (who set whose PIN; never the PIN). Real SQLite file, real service verbs.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getRow } from '../data/rows';
import { sqlite } from '../data/sqlite';
import { submitForm } from '../ipc/forms';
import { createClinicFixture, errorOf, fixtureNow, type ClinicFixture } from '../testing/clinic-fixture';
import { setUserPin } from './admin';
import { verifyPin } from './pin';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const now = fixtureNow();
type UserRow = { id: string; role: string; linked_athlete_id: string | null; version: number; display_name: string };
const user = (id: string) => getRow<UserRow>(f.db, 'app_user', f.a.orgId, id)!;
const pinHash = (id: string) => (sqlite(f.db).prepare('SELECT pin_hash FROM app_user WHERE id = ?').get(id) as { pin_hash: string | null }).pin_hash;
const usersNamed = (email: string) => (f.call(f.a.users.owner, 'users.list', {}) as { users: { email: string }[] }).users.filter((u) => u.email === email);
const ASK_OWNER = /Your role \(admin\) cannot .*wellness and vitals.*Ask an owner/;

describe('an admin cannot put an account in reach of an athlete record', () => {
  it('creating an athlete account: refused on the form and through verb.call, nothing written', () => {
    const input = { email: 'mine@example.test', display_name: 'Mine', role: 'athlete', linked_athlete_id: f.a.otherAthleteId };
    const form = errorOf(() => submitForm(f.db, f.a.users.admin, { verb: 'users.create', input }, now));
    expect(form.code).toBe('Forbidden');
    expect(form.message).toMatch(ASK_OWNER);
    expect(form.message).toMatch(/create an athlete account/);
    const call = errorOf(() => f.call(f.a.users.admin, 'users.create', input));
    expect(call.code).toBe('Forbidden');
    expect(call.message).toMatch(ASK_OWNER);
    expect(usersNamed('mine@example.test')).toEqual([]);
    // An admin account carrying an athlete link (to become an athlete account later): refused too.
    const linkedAdmin = errorOf(() => f.call(f.a.users.admin, 'users.create', { ...input, role: 'admin' }));
    expect(linkedAdmin.code).toBe('Forbidden');
    expect(linkedAdmin.message).toMatch(/link an account to an athlete's record/);
    // The owner may (and the admin may still add admin accounts with no link).
    expect(f.call(f.a.users.owner, 'users.create', input).changeset.changes).toHaveLength(1);
    expect(
      f.call(f.a.users.admin, 'users.create', { email: 'admin2@example.test', display_name: 'Second admin', role: 'admin' }).changeset.changes,
    ).toHaveLength(1);
  });

  it('relinking an athlete account, or making an account an athlete one: refused; renaming or deactivating it is not', () => {
    const athleteUser = f.a.users.athlete;
    const before = user(athleteUser);
    const relink = errorOf(() =>
      submitForm(
        f.db,
        f.a.users.admin,
        { verb: 'users.update', input: { id: athleteUser, linked_athlete_id: f.a.otherAthleteId }, expected_versions: { [athleteUser]: before.version } },
        now,
      ),
    );
    expect(relink.code).toBe('Forbidden');
    expect(relink.message).toMatch(/change which athlete's record an account is linked to/);
    expect(errorOf(() => f.call(f.a.users.admin, 'users.update', { id: f.a.users.athlete_unlinked, linked_athlete_id: f.a.athleteId })).code).toBe('Forbidden');
    expect(user(athleteUser).linked_athlete_id).toBe(before.linked_athlete_id);
    // An admin account the admin controls, made an athlete account linked to an athlete: refused.
    const mine = f.call(f.a.users.admin, 'users.create', { email: 'mine2@example.test', display_name: 'Mine', role: 'admin' }).changeset.changes[0]
      .id as string;
    const promote = errorOf(() => f.call(f.a.users.admin, 'users.update', { id: mine, role: 'athlete', linked_athlete_id: f.a.athleteId }));
    expect(promote.code).toBe('Forbidden');
    expect(user(mine).role).toBe('admin');
    // Account upkeep that gives no reach stays with the admin.
    f.call(f.a.users.admin, 'users.update', { id: athleteUser, display_name: 'Renamed athlete account' });
    f.call(f.a.users.admin, 'users.update', { id: athleteUser, active: false });
    expect(user(athleteUser)).toMatchObject({ display_name: 'Renamed athlete account', linked_athlete_id: before.linked_athlete_id });
    // The owner may relink.
    f.call(f.a.users.owner, 'users.update', { id: athleteUser, linked_athlete_id: f.a.otherAthleteId });
    expect(user(athleteUser).linked_athlete_id).toBe(f.a.otherAthleteId);
  });

  it("Undo by an admin of an owner's relink is refused (it would change the link back)", () => {
    const cs = f.call(f.a.users.owner, 'users.update', { id: f.a.users.athlete, linked_athlete_id: f.a.otherAthleteId }).changeset.id as string;
    const e = errorOf(() => f.call(f.a.users.admin, 'changesets.undo', { changeset_id: cs }));
    expect(e.code).toBe('Forbidden');
    expect(e.message).toMatch(ASK_OWNER);
    expect(user(f.a.users.athlete).linked_athlete_id).toBe(f.a.otherAthleteId);
  });

  it("setting or resetting an athlete account's PIN: refused for the admin, nothing stored; the owner may", () => {
    const ctx = (u: string) => ({ db: f.db, userId: u });
    const e = errorOf(() => setUserPin(ctx(f.a.users.admin), { user_id: f.a.users.athlete, pin: '4321' }));
    expect(e.code).toBe('Forbidden');
    expect(e.message).toMatch(/cannot set the PIN of an athlete account/);
    expect(e.message).toMatch(ASK_OWNER);
    expect(pinHash(f.a.users.athlete)).toBeNull();
    setUserPin(ctx(f.a.users.owner), { user_id: f.a.users.athlete, pin: '2468' });
    const reset = errorOf(() => setUserPin(ctx(f.a.users.admin), { user_id: f.a.users.athlete, pin: '4321' }));
    expect(reset.message).toMatch(/cannot reset the PIN of an athlete account/);
    expect(verifyPin('2468', pinHash(f.a.users.athlete))).toBe(true);
    // An admin account's PIN stays the admin's to set.
    const other = f.call(f.a.users.admin, 'users.create', { email: 'admin3@example.test', display_name: 'Third admin', role: 'admin' }).changeset.changes[0].id;
    expect(setUserPin(ctx(f.a.users.admin), { user_id: other, pin: '1357' })).toEqual({ pin_set: true });
  });
});

describe('a PIN set or reset is in the activity log', () => {
  it('says who set or reset whose PIN, never the PIN, for anyone who reads the accounts', () => {
    const ctx = (u: string) => ({ db: f.db, userId: u });
    setUserPin(ctx(f.a.users.owner), { user_id: f.a.users.coach, pin: '735519' });
    setUserPin(ctx(f.a.users.owner), { user_id: f.a.users.coach, pin: '915537' });
    type Act = { actor_name: string; record_table: string; record_id: string; summary: string; changeset_id: string | null };
    const acts = (f.call(f.a.users.admin, 'activity.list', { record_id: f.a.users.coach }) as { activity: Act[] }).activity;
    const coach = user(f.a.users.coach).display_name;
    const owner = user(f.a.users.owner).display_name;
    expect(acts.map((a) => [a.actor_name, a.record_table, a.summary, a.changeset_id])).toEqual([
      [owner, 'app_user', `Reset the sign-in PIN of ${coach} (coach)`, null],
      [owner, 'app_user', `Set the sign-in PIN of ${coach} (coach)`, null],
    ]);
    expect(JSON.stringify(acts)).not.toMatch(/735519|915537|scrypt/);
    // A refused PIN change writes nothing.
    errorOf(() => setUserPin(ctx(f.a.users.admin), { user_id: f.a.users.athlete, pin: '4321' }));
    expect(
      (f.call(f.a.users.owner, 'activity.list', { record_id: f.a.users.athlete }) as { activity: Act[] }).activity.filter((a) => /PIN/.test(a.summary)),
    ).toEqual([]);
  });
});

describe('issue 13 second re-review B1: no known PIN on an athlete account by a role change and back', () => {
  const ctx = (u: string) => ({ db: f.db, userId: u });
  const vitalsAs = (u: string) => (f.call(u, 'vitals.list', { athlete_id: f.a.athleteId }) as { vitals: unknown[] }).vitals;

  it("an admin cannot change an athlete account's role (form, verb.call), so the admin → PIN → back chain is closed", () => {
    const athleteUser = f.a.users.athlete;
    const before = user(athleteUser);
    const form = errorOf(() =>
      submitForm(
        f.db,
        f.a.users.admin,
        { verb: 'users.update', input: { id: athleteUser, role: 'admin' }, expected_versions: { [athleteUser]: before.version } },
        now,
      ),
    );
    expect(form.code).toBe('Forbidden');
    expect(form.message).toMatch(ASK_OWNER);
    expect(form.message).toMatch(/change the role of an athlete account/);
    const call = errorOf(() => f.call(f.a.users.admin, 'users.update', { id: athleteUser, role: 'admin' }));
    expect(call.code).toBe('Forbidden');
    expect(user(athleteUser)).toMatchObject({ role: 'athlete', version: before.version });
    // Step 2 of the chain is refused on its own too, and no PIN is stored: the athlete's vitals stay out of the admin's reach.
    expect(errorOf(() => setUserPin(ctx(f.a.users.admin), { user_id: athleteUser, pin: '7777' })).code).toBe('Forbidden');
    expect(verifyPin('7777', pinHash(athleteUser))).toBe(false);
    expect(vitalsAs(athleteUser).length).toBeGreaterThan(0); // what the PIN would have opened
  });

  it('an account linked to an athlete record but of another role: its PIN and role are an owner’s; the owner may', () => {
    // The owner links an admin account to the athlete (only an owner may).
    const linked = f.call(f.a.users.owner, 'users.create', {
      email: 'linked-admin@example.test',
      display_name: 'Linked admin',
      role: 'admin',
      linked_athlete_id: f.a.athleteId,
    }).changeset.changes[0].id as string;
    const pin = errorOf(() => setUserPin(ctx(f.a.users.admin), { user_id: linked, pin: '7777' }));
    expect(pin.code).toBe('Forbidden');
    expect(pin.message).toMatch(/set the PIN of an account linked to an athlete's record/);
    expect(pin.message).toMatch(ASK_OWNER);
    expect(pinHash(linked)).toBeNull();
    const role = errorOf(() => f.call(f.a.users.admin, 'users.update', { id: linked, role: 'athlete' }));
    expect(role.code).toBe('Forbidden');
    // Upkeep that gives no reach stays with the admin.
    f.call(f.a.users.admin, 'users.update', { id: linked, display_name: 'Renamed linked admin' });
    expect(user(linked).display_name).toBe('Renamed linked admin');
    expect(setUserPin(ctx(f.a.users.owner), { user_id: linked, pin: '2468' })).toEqual({ pin_set: true });
  });

  it('the PIN is cleared when an account becomes an athlete account or its link changes, including by Undo; the owner then sets it', () => {
    // The owner sets a coach's PIN, then makes the coach account an athlete account: the old PIN no longer signs in.
    const coach = f.a.users.coach;
    setUserPin(ctx(f.a.users.owner), { user_id: coach, pin: '5555' });
    f.call(f.a.users.owner, 'users.update', { id: coach, role: 'athlete', linked_athlete_id: f.a.otherAthleteId });
    expect(pinHash(coach)).toBeNull();
    // Relinking an athlete account clears its PIN too.
    const athleteUser = f.a.users.athlete;
    setUserPin(ctx(f.a.users.owner), { user_id: athleteUser, pin: '6666' });
    const relink = f.call(f.a.users.owner, 'users.update', { id: athleteUser, linked_athlete_id: f.a.otherAthleteId }).changeset.id as string;
    expect(pinHash(athleteUser)).toBeNull();
    // The review's step 3 by the owner: an athlete account made admin, given a PIN, then the change undone.
    setUserPin(ctx(f.a.users.owner), { user_id: athleteUser, pin: '7777' });
    f.call(f.a.users.owner, 'changesets.undo', { changeset_id: relink }); // link back to athlete one: cleared
    expect(pinHash(athleteUser)).toBeNull();
    const toAdmin = f.call(f.a.users.owner, 'users.update', { id: athleteUser, role: 'admin' }).changeset.id as string;
    setUserPin(ctx(f.a.users.owner), { user_id: athleteUser, pin: '7777' });
    f.call(f.a.users.owner, 'changesets.undo', { changeset_id: toAdmin });
    expect(user(athleteUser).role).toBe('athlete');
    expect(verifyPin('7777', pinHash(athleteUser))).toBe(false);
    expect(pinHash(athleteUser)).toBeNull();
    // A change that gives no new reach keeps the PIN.
    setUserPin(ctx(f.a.users.owner), { user_id: athleteUser, pin: '8888' });
    f.call(f.a.users.owner, 'users.update', { id: athleteUser, display_name: 'Renamed' });
    expect(verifyPin('8888', pinHash(athleteUser))).toBe(true);
  });
});

describe('issue 13 second re-review B2: whoever sets a PIN can sign in as that account', () => {
  const ctx = (u: string) => ({ db: f.db, userId: u });
  const ASK = /Ask an owner/;

  it('the super admin adds a doctor account but cannot set its PIN, nor the owner’s; the owner sets the doctor’s', () => {
    const doctor = f.call(f.a.users.super_admin, 'users.create', { email: 'dr@example.test', display_name: 'Dr New', role: 'doctor' }).changeset.changes[0]
      .id as string;
    const e = errorOf(() => setUserPin(ctx(f.a.users.super_admin), { user_id: doctor, pin: '1234' }));
    expect(e.code).toBe('Forbidden');
    expect(e.message).toMatch(/Your role \(super_admin\) cannot set the PIN of a doctor account: whoever sets a PIN can sign in as that account/);
    expect(e.message).toMatch(ASK);
    expect(pinHash(doctor)).toBeNull();
    const owner = errorOf(() => setUserPin(ctx(f.a.users.super_admin), { user_id: f.a.users.owner, pin: '1234' }));
    expect(owner.code).toBe('Forbidden');
    expect(pinHash(f.a.users.owner)).toBeNull();
    expect(errorOf(() => setUserPin(ctx(f.a.users.super_admin), { user_id: f.a.users.physio, pin: '1234' })).code).toBe('Forbidden');
    expect(setUserPin(ctx(f.a.users.owner), { user_id: doctor, pin: '2468' })).toEqual({ pin_set: true });
    // An account whose permissions are within the actor's own: a super admin's, by a super admin.
    const sa2 = f.call(f.a.users.super_admin, 'users.create', { email: 'sa2@example.test', display_name: 'SA two', role: 'super_admin' }).changeset.changes[0]
      .id as string;
    expect(setUserPin(ctx(f.a.users.super_admin), { user_id: sa2, pin: '1357' })).toEqual({ pin_set: true });
  });

  it('issue 13 re-review B1: a PIN set on a lower role does not survive a promotion — the super admin’s role round trip on the owner and a doctor, an owner’s on another owner', () => {
    const roleTo = (actor: string, id: string, role: string) => f.call(actor, 'users.update', { id, role });
    const sa = f.a.users.super_admin;
    // a second owner first: the club's last active owner cannot be demoted (below)
    f.call(f.a.users.owner, 'users.create', { email: 'o2@example.test', display_name: 'Owner two', role: 'owner' });
    for (const target of [f.a.users.owner, f.a.users.doctor]) {
      const original = user(target).role;
      roleTo(sa, target, 'super_admin'); // applies: the super admin grants every role
      expect(setUserPin(ctx(sa), { user_id: target, pin: '918273' })).toEqual({ pin_set: true }); // within its reach now
      expect(verifyPin('918273', pinHash(target))).toBe(true);
      roleTo(sa, target, original);
      // before the fix the PIN stayed: the super admin signed in as the owner / the doctor
      expect([original, user(target).role, pinHash(target)]).toEqual([original, original, null]);
    }
    // an owner: another owner demoted to coach, PIN set, promoted back → cleared (only that owner sets an owner's PIN)
    const owner2 = f.call(f.a.users.owner, 'users.create', { email: 'o3@example.test', display_name: 'Owner three', role: 'owner' }).changeset.changes[0]
      .id as string;
    roleTo(f.a.users.owner, owner2, 'coach');
    expect(setUserPin(ctx(f.a.users.owner), { user_id: owner2, pin: '5555' })).toEqual({ pin_set: true });
    roleTo(f.a.users.owner, owner2, 'owner');
    expect(pinHash(owner2)).toBeNull();
    // a role lowered (its permissions within the old role's) keeps the PIN the owner set
    expect(setUserPin(ctx(f.a.users.owner), { user_id: f.a.users.physio, pin: '2468' })).toEqual({ pin_set: true });
    roleTo(f.a.users.owner, f.a.users.physio, 'analyst');
    expect(verifyPin('2468', pinHash(f.a.users.physio))).toBe(true);
  });

  it("the club's last active owner cannot be demoted or deactivated by a super admin; with a second owner it can", () => {
    const owner = f.a.users.owner;
    for (const [actor, input] of [
      [f.a.users.super_admin, { id: owner, role: 'super_admin' }],
      [f.a.users.super_admin, { id: owner, active: false }],
    ] as const) {
      const e = errorOf(() => f.call(actor, 'users.update', input));
      expect([e.code, e.message]).toEqual([
        'Forbidden',
        expect.stringMatching(/^This is the club's last active owner: .*Make another account an owner first\./),
      ]);
      expect([user(owner).role, (user(owner) as unknown as { active: boolean }).active]).toEqual(['owner', true]);
    }
    const owner2 = f.call(owner, 'users.create', { email: 'o4@example.test', display_name: 'Owner four', role: 'owner' }).changeset.changes[0].id as string;
    const demoted = f.call(f.a.users.super_admin, 'users.update', { id: owner2, role: 'coach' });
    expect(user(owner2).role).toBe('coach');
    expect(demoted.changeset.changes).toHaveLength(1);
  });

  it("an owner sets any non-owner PIN, never another owner's", () => {
    const owner2 = f.call(f.a.users.owner, 'users.create', { email: 'o2@example.test', display_name: 'Owner two', role: 'owner' }).changeset.changes[0]
      .id as string;
    const e = errorOf(() => setUserPin(ctx(f.a.users.owner), { user_id: owner2, pin: '1234' }));
    expect(e.code).toBe('Forbidden');
    expect(e.message).toMatch(/An owner's PIN is set only by that owner/);
    expect(pinHash(owner2)).toBeNull();
    for (const r of ['admin', 'doctor', 'physio', 'sports_scientist', 'strength_coach', 'coach', 'analyst'] as const)
      expect(setUserPin(ctx(f.a.users.owner), { user_id: f.a.users[r], pin: '4321' })).toEqual({ pin_set: true });
  });
});
