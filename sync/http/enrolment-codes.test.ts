/**
 * One-time HQ sign-in codes against the real HQ (real Postgres, HQ migrations, the HTTP app):
 * the PIN is no secret from a device's database (every staff device holds the club's PIN hashes,
 * so a 4-digit PIN falls to an offline brute force), so POST /v1/devices needs a code as well,
 * and only the account itself, an owner, or an administrator who may set the account's PIN can
 * get one (issue 12 review blocker B3). Codes work once, for one account, for 24 hours; a newer
 * code replaces an older one; a wrong code counts towards the PIN lockout; only hashes are stored.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from 'uuidv7';
import { DEMO_EMAILS, DEMO_PIN, DEMO_SECOND_EMAILS } from '../../models/seed/demo';
import { ENROLMENT_CODE_TTL_HOURS, hashEnrolmentCode, issueOperatorEnrolmentCode, normaliseEnrolmentCode } from '../auth/enrolment-codes';
import { hashPin, verifyPin } from '../auth/pin';
import { createPool, hqTypes, withTenant } from '../pg/db';
import { initialiseHq } from '../seed';
import { startHqServer, type HqServer } from '../server';
import { enrolmentCodeFor } from '../testing/enrolment';
import { havePg, useHqDatabase } from '../testing/hqdb';

const TODAY = new Date().toISOString().slice(0, 10);

describe('sign-in code format', () => {
  it('reads a typed code in any case, with or without separators, and refuses what cannot be one', () => {
    expect(normaliseEnrolmentCode('abcd-efgh-jkmn')).toBe('ABCDEFGHJKMN');
    expect(normaliseEnrolmentCode(' ab cd ef gh jk mn ')).toBe('ABCDEFGHJKMN');
    // Crockford's look-alikes: I and L read as 1, O as 0.
    expect(normaliseEnrolmentCode('IL0O-1111-0000')).toBe('110011110000');
    expect(normaliseEnrolmentCode('ABCD-EFGH-JKM')).toBeNull();
    expect(normaliseEnrolmentCode('ABCD-EFGH-JKMU')).toBeNull();
    expect(hashEnrolmentCode('abcd efgh jkmn')).toBe(hashEnrolmentCode('ABCD-EFGH-JKMN'));
    expect(hashEnrolmentCode('x')).toBeNull();
  });
});

describe.skipIf(!havePg)('HQ sign-in codes', () => {
  const hq = useHqDatabase();
  let server: HqServer;
  let admin: pg.Client;
  let pool: pg.Pool;
  let ids: { org: string; users: Record<string, string>; secondOwner: string };
  const tokens: Record<string, string> = {};

  const signIn = (email: string, pin: string, code?: string): Promise<Response> =>
    fetch(`${server.url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, pin, ...(code !== undefined ? { code } : {}), name: 'Test laptop' }),
    });
  const issue = (token: string, userId: string): Promise<Response> =>
    fetch(`${server.url}/v1/enrolment-codes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ user_id: userId }),
    });
  const errorOf = async (res: Response): Promise<{ code: string; message: string }> =>
    ((await res.json()) as { error: { code: string; message: string } }).error;
  const enrolled = async (email: string): Promise<string> => {
    const res = await signIn(email, DEMO_PIN, await enrolmentCodeFor(hq.appUrl, email));
    expect(res.status).toBe(201);
    return ((await res.json()) as { token: string }).token;
  };

  beforeAll(async () => {
    if (!havePg) return;
    const init = await initialiseHq(hq.ownerUrl, { seed: 1, today: TODAY });
    if (!init.initialised || !init.seeded) throw new Error('seed failed');
    admin = new pg.Client({ connectionString: hq.adminUrl, types: hqTypes });
    await admin.connect();
    const second = (await admin.query<{ id: string }>('SELECT id FROM app_user WHERE email = $1', [DEMO_SECOND_EMAILS.owner])).rows[0]!.id;
    ids = { org: init.summary.orgId, users: init.summary.userIds, secondOwner: second };
    pool = createPool(hq.appUrl, 2);
    // The per-address sign-in limit (20 in 5 min) is sync/write/changesets.test.ts's subject, not this file's.
    server = await startHqServer({ appUrl: hq.appUrl, shapeUrl: 'http://127.0.0.1:9', poolSize: 4, enrolLimit: { max: 1000, windowMs: 60_000 } });
    for (const role of ['owner', 'admin', 'physio', 'athlete'] as const) tokens[role] = await enrolled(DEMO_EMAILS[role]);
  });
  afterAll(async () => {
    await server?.close();
    await pool?.end();
    await admin?.end();
  });

  it("refuses an owner's HQ token to whoever knows the owner's PIN (as from a device's hash) without the owner's code", async () => {
    // What every staff device holds: the owner's PIN hash, which a 4-digit search matches offline.
    const [{ pin_hash }] = (await admin.query<{ pin_hash: string }>('SELECT pin_hash FROM app_user WHERE id = $1', [ids.users.owner])).rows as [
      { pin_hash: string },
    ];
    expect(await verifyPin(DEMO_PIN, pin_hash)).toBe(true);

    // Email + PIN alone: refused, saying what is missing.
    const bare = await signIn(DEMO_EMAILS.owner, DEMO_PIN);
    expect(bare.status).toBe(400);
    expect(await errorOf(bare)).toMatchObject({ code: 'Validation', message: expect.stringContaining('sign-in code') as string });
    // A guessed code: the same answer as a wrong PIN.
    const guessed = await signIn(DEMO_EMAILS.owner, DEMO_PIN, '0000-0000-0000');
    expect(guessed.status).toBe(401);
    const wrongPin = await signIn(DEMO_EMAILS.owner, '9999', '0000-0000-0000');
    expect(wrongPin.status).toBe(401);
    expect((await errorOf(guessed)).message).toBe((await errorOf(wrongPin)).message);
    // The physio's own code does not open the owner's account.
    const physioCode = (await (await issue(tokens.physio!, ids.users.physio!)).json()) as { code: string };
    const crossed = await signIn(DEMO_EMAILS.owner, DEMO_PIN, physioCode.code);
    expect(crossed.status).toBe(401);
    await crossed.arrayBuffer();
    // Nor can the physio (or the admin) get one for the owner.
    for (const who of ['physio', 'admin'] as const) {
      const res = await issue(tokens[who]!, ids.users.owner!);
      expect(res.status).toBe(403);
      expect((await errorOf(res)).code).toBe('Forbidden');
    }
    // The physio's code, unspent by the failed attempt, still lets the physio in.
    const own = await signIn(DEMO_EMAILS.physio, DEMO_PIN, physioCode.code);
    expect(own.status).toBe(201);
    await own.arrayBuffer();
  });

  it('issues codes to oneself, and to others only where the issuer may set their PIN', async () => {
    const may = async (who: string, target: string): Promise<number> => {
      const res = await issue(tokens[who]!, ids.users[target]!);
      await res.arrayBuffer();
      return res.status;
    };
    expect(await may('physio', 'physio')).toBe(201);
    expect(await may('athlete', 'athlete')).toBe(201);
    expect(await may('admin', 'admin')).toBe(201);
    expect(await may('owner', 'physio')).toBe(201);
    expect(await may('owner', 'doctor')).toBe(201);
    expect(await may('owner', 'athlete')).toBe(201);
    // Without user.manage: nobody else's.
    expect(await may('physio', 'doctor')).toBe(403);
    // An owner manages no super_admin and sets no other owner's PIN: no code for them either
    // (issue 12 re-review B1: the super_admin's code, with its PIN from a device, was its HQ token).
    expect(await may('owner', 'super_admin')).toBe(403);
    const coOwner = uuidv7();
    await admin.query(
      `INSERT INTO app_user (id, org_id, email, display_name, role, active, pin_hash, created_at, updated_at, version)
       VALUES ($1, $2, 'co-owner@kestrelvale.test', 'Co Owner', 'owner', true, $3, now(), now(), 1)`,
      [coOwner, ids.org, hashPin(DEMO_PIN)],
    );
    const coRes = await issue(tokens.owner!, coOwner);
    expect(coRes.status).toBe(403);
    expect((await errorOf(coRes)).message).toMatch(/enrolment-code/);
    // An admin manages admin and athlete accounts, sets no clinician's PIN, and no athlete's
    // (whoever sets it reads the athlete's records): no code for them either.
    expect(await may('admin', 'physio')).toBe(403);
    expect(await may('admin', 'athlete')).toBe(403);
    // An athlete sees no other account at all.
    expect(await may('athlete', 'physio')).toBe(404);
    // Another club's account is not found.
    const other = await issue(tokens.owner!, ids.secondOwner);
    expect(other.status).toBe(404);
    await other.arrayBuffer();
    // What is stored is the code's hash, with who issued it.
    const res = await issue(tokens.owner!, ids.users.coach!);
    const body = (await res.json()) as { code: string; expires_at: string; user: { id: string; email: string } };
    expect(body.code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    expect(body.user).toMatchObject({ id: ids.users.coach, email: DEMO_EMAILS.coach });
    expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan((ENROLMENT_CODE_TTL_HOURS - 1) * 3_600_000);
    const rows = (
      await admin.query<{ code_hash: string; issued_by: string }>(
        'SELECT code_hash, issued_by FROM hq_enrolment_code WHERE user_id = $1 AND used_at IS NULL AND revoked_at IS NULL',
        [ids.users.coach],
      )
    ).rows;
    expect(rows).toEqual([{ code_hash: hashEnrolmentCode(body.code), issued_by: ids.users.owner }]);
    expect(JSON.stringify(rows)).not.toContain(body.code.replace(/-/g, ''));
  });

  it('lets a code in once, for its account only, until it expires or a newer one replaces it', async () => {
    const email = DEMO_EMAILS.strength_coach;
    const first = await enrolmentCodeFor(hq.appUrl, email);
    const second = await enrolmentCodeFor(hq.appUrl, email);
    // The newer code replaced the older one.
    const old = await signIn(email, DEMO_PIN, first);
    expect(old.status).toBe(401);
    await old.arrayBuffer();
    const ok = await signIn(email, DEMO_PIN, second);
    expect(ok.status).toBe(201);
    const { device_id } = (await ok.json()) as { device_id: string };
    expect((await admin.query('SELECT used_by_device FROM hq_enrolment_code WHERE code_hash = $1', [hashEnrolmentCode(second)])).rows).toEqual([
      { used_by_device: device_id },
    ]);
    const again = await signIn(email, DEMO_PIN, second);
    expect(again.status).toBe(401);
    await again.arrayBuffer();
    // Issued more than a day ago: expired.
    const stale = await issueOperatorEnrolmentCode(pool, email, Date.now() - (ENROLMENT_CODE_TTL_HOURS * 3_600_000 + 60_000));
    const late = await signIn(email, DEMO_PIN, stale.code);
    expect(late.status).toBe(401);
    await late.arrayBuffer();
  });

  it("revoking a device revokes its account's unused codes: a stolen device's token leaves none behind", async () => {
    const email = DEMO_EMAILS.analyst;
    const res = await signIn(email, DEMO_PIN, await enrolmentCodeFor(hq.appUrl, email));
    const device = (await res.json()) as { token: string; device_id: string };
    // With the device's token, a code for its own account, kept for later...
    const minted = (await (await issue(device.token, ids.users.analyst!)).json()) as { code: string };
    // ...then the device is revoked.
    const del = await fetch(`${server.url}/v1/devices/${device.device_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${tokens.owner}` } });
    expect(del.status).toBe(200);
    await del.arrayBuffer();
    const later = await signIn(email, DEMO_PIN, minted.code);
    expect(later.status).toBe(401);
    await later.arrayBuffer();
  });

  it("revoking an administrator's device revokes the codes its token issued for other accounts (issue 12 final review)", async () => {
    const id = uuidv7();
    await admin.query(
      `INSERT INTO app_user (id, org_id, email, display_name, role, active, pin_hash, created_at, updated_at, version)
       VALUES ($1, $2, 'minted.admin@kestrelvale.test', 'Minted Admin', 'admin', true, $3, now(), now(), 1)`,
      [id, ids.org, hashPin(DEMO_PIN)],
    );
    const res = await signIn(DEMO_EMAILS.admin, DEMO_PIN, await enrolmentCodeFor(hq.appUrl, DEMO_EMAILS.admin));
    const stolen = (await res.json()) as { token: string; device_id: string };
    const minted = await issue(stolen.token, id);
    expect(minted.status).toBe(201);
    const { code } = (await minted.json()) as { code: string };
    const del = await fetch(`${server.url}/v1/devices/${stolen.device_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${tokens.owner}` } });
    expect(del.status).toBe(200);
    await del.arrayBuffer();
    const later = await signIn('minted.admin@kestrelvale.test', DEMO_PIN, code);
    expect(later.status).toBe(401);
    await later.arrayBuffer();
    const [row] = (
      await admin.query<{ revoked_at: Date | null; issued_by_device: string }>(
        'SELECT revoked_at, issued_by_device FROM hq_enrolment_code WHERE code_hash = $1',
        [hashEnrolmentCode(code)],
      )
    ).rows;
    expect(row!.issued_by_device).toBe(stolen.device_id);
    expect(row!.revoked_at).not.toBeNull();
    // The admin's other device still works, and a code issued with it is unaffected.
    const again = await issue(tokens.admin!, id);
    expect(again.status).toBe(201);
    const ok = await signIn('minted.admin@kestrelvale.test', DEMO_PIN, ((await again.json()) as { code: string }).code);
    expect(ok.status).toBe(201);
    await ok.arrayBuffer();
  });

  it("ends a code when its account changes: an admin's code for an admin account no longer signs it in once the owner makes it a doctor (issue 12 re-review)", async () => {
    const id = uuidv7();
    await admin.query(
      `INSERT INTO app_user (id, org_id, email, display_name, role, active, pin_hash, created_at, updated_at, version)
       VALUES ($1, $2, 'second.admin@kestrelvale.test', 'Second Admin', 'admin', true, $3, now(), now(), 1)`,
      [id, ids.org, hashPin(DEMO_PIN)],
    );
    const issued = await issue(tokens.admin!, id);
    expect(issued.status).toBe(201);
    const { code } = (await issued.json()) as { code: string };
    await admin.query("UPDATE app_user SET role = 'doctor', version = version + 1 WHERE id = $1", [id]);
    const late = await signIn('second.admin@kestrelvale.test', DEMO_PIN, code);
    expect(late.status).toBe(401);
    await late.arrayBuffer();
    // Back to admin: the same stamp again, the code (still unused) works.
    await admin.query("UPDATE app_user SET role = 'admin', version = version + 1 WHERE id = $1", [id]);
    const ok = await signIn('second.admin@kestrelvale.test', DEMO_PIN, code);
    expect(ok.status).toBe(201);
    await ok.arrayBuffer();
  });

  it('ends the codes an administrator issued when the owner deactivates or demotes that administrator (issue 12 final review B-d)', async () => {
    const addUser = async (email: string, name: string): Promise<string> => {
      const id = uuidv7();
      await admin.query(
        `INSERT INTO app_user (id, org_id, email, display_name, role, active, pin_hash, created_at, updated_at, version)
         VALUES ($1, $2, $3, $4, 'admin', true, $5, now(), now(), 1)`,
        [id, ids.org, email, name, hashPin(DEMO_PIN)],
      );
      return id;
    };
    /** The owner's write at HQ as an upload makes it: the app role, under the owner's tenant. */
    const ownerSets = (id: string, set: string) =>
      withTenant(pool, { orgId: ids.org, userId: ids.users.owner! }, (c) => c.query(`UPDATE app_user SET ${set}, version = version + 1 WHERE id = $1`, [id]));
    const issuerEmail = 'issuing.admin@kestrelvale.test';
    const issuer = await addUser(issuerEmail, 'Issuing Admin');
    const issuerToken = await enrolled(issuerEmail);
    const targets = [await addUser('target.one@kestrelvale.test', 'Target One'), await addUser('target.two@kestrelvale.test', 'Target Two')];
    const codeFor = async (id: string): Promise<string> => {
      const res = await issue(issuerToken, id);
      expect(res.status).toBe(201);
      return ((await res.json()) as { code: string }).code;
    };
    // A PIN change of the issuer leaves the codes; a deactivation ends them.
    const first = await codeFor(targets[0]!);
    await ownerSets(issuer, `pin_hash = '${hashPin('9876')}'`);
    const kept = await signIn('target.one@kestrelvale.test', DEMO_PIN, first);
    expect(kept.status).toBe(201);
    await kept.arrayBuffer();
    // (The PIN change ended the issuer's device token; a fresh one, at the new stamp.)
    const again = await signIn(issuerEmail, '9876', await enrolmentCodeFor(hq.appUrl, issuerEmail));
    expect(again.status).toBe(201);
    const { token } = (await again.json()) as { token: string };
    const second = await issue(token, targets[1]!);
    expect(second.status).toBe(201);
    const { code } = (await second.json()) as { code: string };
    await ownerSets(issuer, 'active = false');
    const late = await signIn('target.two@kestrelvale.test', DEMO_PIN, code);
    expect(late.status).toBe(401);
    await late.arrayBuffer();
    // Reactivated: the revoked code stays revoked.
    await ownerSets(issuer, 'active = true');
    const still = await signIn('target.two@kestrelvale.test', DEMO_PIN, code);
    expect(still.status).toBe(401);
    await still.arrayBuffer();
    const [row] = (await admin.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM hq_enrolment_code WHERE code_hash = $1', [hashEnrolmentCode(code)]))
      .rows;
    expect(row!.revoked_at).not.toBeNull();
    // A demotion ends them too (the issuer as a physio could not have issued an admin's code).
    const demoted = await signIn(issuerEmail, '9876', await enrolmentCodeFor(hq.appUrl, issuerEmail));
    expect(demoted.status).toBe(201);
    const third = await issue(((await demoted.json()) as { token: string }).token, targets[1]!);
    expect(third.status).toBe(201);
    const thirdCode = ((await third.json()) as { code: string }).code;
    await ownerSets(issuer, "role = 'physio'");
    const afterDemotion = await signIn('target.two@kestrelvale.test', DEMO_PIN, thirdCode);
    expect(afterDemotion.status).toBe(401);
    await afterDemotion.arrayBuffer();
    const [thirdRow] = (
      await admin.query<{ revoked_at: Date | null; used_at: Date | null }>('SELECT revoked_at, used_at FROM hq_enrolment_code WHERE code_hash = $1', [
        hashEnrolmentCode(thirdCode),
      ])
    ).rows;
    expect(thirdRow).toMatchObject({ used_at: null });
    expect(thirdRow!.revoked_at).not.toBeNull();
  });

  it("POST /v1/users/:id/pin sets a PIN at HQ under the device rules; the new hash ends the account's tokens (issue 12 final review B4)", async () => {
    const setPin = (token: string, userId: string, body: unknown): Promise<Response> =>
      fetch(`${server.url}/v1/users/${userId}/pin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
    const refused = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      return errorOf(res);
    };
    const email = DEMO_EMAILS.doctor;
    const doctorToken = await enrolled(email);
    const hashOf = async () => (await admin.query<{ pin_hash: string }>('SELECT pin_hash FROM app_user WHERE id = $1', [ids.users.doctor])).rows[0]!.pin_hash;
    const before = await hashOf();
    // No user.manage; an admin manages no doctor account; one's own PIN; a malformed PIN; another club's account.
    expect((await refused(await setPin(tokens.physio!, ids.users.doctor!, { pin: '4826' }), 403)).message).toMatch(/user\.manage/);
    expect((await refused(await setPin(tokens.admin!, ids.users.doctor!, { pin: '4826' }), 403)).code).toBe('Forbidden');
    expect((await refused(await setPin(tokens.owner!, ids.users.owner!, { pin: '4826' }), 403)).message).toMatch(/own PIN/);
    expect((await refused(await setPin(tokens.owner!, ids.users.doctor!, { pin: '12' }), 400)).code).toBe('Validation');
    expect((await refused(await setPin(tokens.owner!, ids.secondOwner, { pin: '4826' }), 404)).code).toBe('NotFound');
    // An id that only looks like a UUID (36 dashes) is a 400, at both id routes, never a 500.
    expect((await refused(await setPin(tokens.owner!, '-'.repeat(36), { pin: '4826' }), 400)).message).toMatch(/must be a UUID/);
    const revokeDashes = await fetch(`${server.url}/v1/devices/${'-'.repeat(36)}`, { method: 'DELETE', headers: { authorization: `Bearer ${tokens.owner!}` } });
    expect((await refused(revokeDashes, 400)).message).toMatch(/must be a UUID/);
    expect(await hashOf()).toBe(before);
    // The owner resets it: HQ stores the new hash; the doctor's device token (old PIN) ends.
    const ok = await setPin(tokens.owner!, ids.users.doctor!, { pin: '4826' });
    expect(ok.status).toBe(200);
    // The answer carries the row's new version and updated_at, which the device stores with the hash.
    const row = (
      await admin.query<{ version: number; updated_at: string }>(
        `SELECT version, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at FROM app_user WHERE id = $1`,
        [ids.users.doctor],
      )
    ).rows[0]!;
    expect(await ok.json()).toEqual({ user_id: ids.users.doctor, pin_set: true, version: Number(row.version), updated_at: row.updated_at });
    expect(await verifyPin('4826', await hashOf())).toBe(true);
    const stale = await issue(doctorToken, ids.users.doctor!);
    expect(stale.status).toBe(401);
    await stale.arrayBuffer();
    // At most 30 PIN settings an hour per setting account, refusals included (each would cost an
    // scrypt hash): the admin's first was refused above; 29 more, then 429.
    for (let i = 0; i < 29; i++) await refused(await setPin(tokens.admin!, ids.users.doctor!, { pin: '4826' }), 403);
    const limited = await refused(await setPin(tokens.admin!, ids.users.doctor!, { pin: '4826' }), 429);
    expect(limited).toMatchObject({ code: 'RateLimited', message: expect.stringMatching(/Too many PINs/) });
    // Another account's limit is its own.
    expect((await refused(await setPin(tokens.owner!, ids.users.owner!, { pin: '4826' }), 403)).message).toMatch(/own PIN/);
  });

  it('counts wrong codes towards the lockout, and a failed sign-in stores no token', async () => {
    const email = DEMO_EMAILS.sports_scientist;
    const before = Number(
      (await admin.query<{ n: string }>('SELECT count(*) AS n FROM hq_device WHERE user_id = $1', [ids.users.sports_scientist])).rows[0]!.n,
    );
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await signIn(email, DEMO_PIN, `ZZZZ-ZZZZ-ZZZ${i}`);
      statuses.push(r.status);
      await r.arrayBuffer();
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    // Locked now, even with the right PIN and a good code.
    const locked = await signIn(email, DEMO_PIN, await enrolmentCodeFor(hq.appUrl, email));
    expect(locked.status).toBe(429);
    await locked.arrayBuffer();
    const after = Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM hq_device WHERE user_id = $1', [ids.users.sports_scientist])).rows[0]!.n);
    expect(after).toBe(before);
  });

  it('refuses codes for a deactivated account, and the operator command for an unknown email', async () => {
    const id = uuidv7();
    await admin.query(
      `INSERT INTO app_user (id, org_id, email, display_name, role, active, pin_hash, created_at, updated_at, version)
       VALUES ($1, $2, 'gone@kestrelvale.test', 'Gone Person', 'coach', false, $3, now(), now(), 1)`,
      [id, ids.org, hashPin(DEMO_PIN)],
    );
    const res = await issue(tokens.owner!, id);
    expect(res.status).toBe(403);
    expect((await errorOf(res)).message).toMatch(/deactivated/);
    await expect(issueOperatorEnrolmentCode(pool, 'nobody@kestrelvale.test')).rejects.toMatchObject({ code: 'NotFound' });
    // A body that is not a user id: a typed 400.
    const bad = await fetch(`${server.url}/v1/enrolment-codes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.owner}` },
      body: JSON.stringify({ email: DEMO_EMAILS.coach }),
    });
    expect(bad.status).toBe(400);
    await bad.arrayBuffer();
    // No token: 401.
    const anon = await fetch(`${server.url}/v1/enrolment-codes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_id: id }),
    });
    expect(anon.status).toBe(401);
    await anon.arrayBuffer();
  });
  it('limits how many codes one account issues in an hour (each is a stored row)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const r = await issue(tokens.admin!, ids.users.admin!);
      statuses.push(r.status);
      await r.arrayBuffer();
    }
    expect(statuses.filter((st) => st === 201).length).toBeLessThanOrEqual(30);
    expect(statuses.at(-1)).toBe(429);
  });
});
