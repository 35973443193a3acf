/**
 * Who can sign in on a device, against the real HQ (real Postgres, the embedded shape service
 * behind the proxy, `@electric-sql/client`): an org device (enrolled by staff) holds every account
 * of its org with PIN hashes (never PINs), so a shared clinic laptop signs anyone in offline; role
 * changes and deactivations arrive live like any other row; an athlete's device holds that
 * athlete's account only. An org device uploads each signed-in user's changesets, applied as that
 * user, and the activity row says who, when and from which device. Revoking a device token stops
 * its sync at the next request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shape, ShapeStream, FetchError, type Message, type Row } from '@electric-sql/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from 'uuidv7';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import type { ChangesetOutcome, ChangesetUploadResult } from '../../models/sync';
import { verifyPin } from '../auth/pin';
import { hqTypes } from '../pg/db';
import { HQ_PUBLICATION } from '../pg/roles';
import { initialiseHq } from '../seed';
import { startHqServer, type HqServer } from '../server';
import { startShapeServer, type ShapeServer } from '../shape/server';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { enrolmentCodeFor } from '../testing/enrolment';

const TODAY = new Date().toISOString().slice(0, 10);
const SECRET = 'device-users-secret';

async function waitFor<T>(what: string, fn: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!havePg)('who can sign in on a device', () => {
  const hq = useHqDatabase();
  let shapes: ShapeServer;
  let server: HqServer;
  let admin: pg.Client;
  let storage = '';
  let ids: { org: string; second: string; linkedAthlete: string; users: Record<string, string> };
  const devices: Record<string, { token: string; device_id: string }> = {};
  const aborts: AbortController[] = [];

  const sql = async <R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> => (await admin.query<R>(text, params)).rows;
  const enrol = async (email: string, name: string): Promise<{ token: string; device_id: string }> => {
    const res = await fetch(`${server.url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, pin: DEMO_PIN, code: await enrolmentCodeFor(hq.appUrl, email), name }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { token: string; device_id: string };
  };
  const stream = (token: string, params: Record<string, string>, onError?: (e: Error) => void): ShapeStream<Row> => {
    const ac = new AbortController();
    aborts.push(ac);
    return new ShapeStream<Row>({
      url: `${server.url}/v1/shape`,
      params: params as never,
      headers: { Authorization: `Bearer ${token}` },
      signal: ac.signal,
      ...(onError ? { onError } : {}),
    });
  };
  const rowsOf = (token: string, params: Record<string, string>): Promise<Row[]> => new Shape(stream(token, params)).rows;
  const upload = (token: string, changesets: unknown[]): Promise<Response> =>
    fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ changesets }),
    });
  // Each insert is its own day (one live wellness row per athlete and day, HQ 0007; the seed fills recent days).
  let wellnessDays = 0;
  const wellnessInsert = (athleteId: string, notes: string) => ({
    op: 'insert',
    table: 'wellness',
    id: uuidv7(),
    after: {
      athlete_id: athleteId,
      date: new Date(Date.UTC(2020, 0, 1 + wellnessDays++)).toISOString().slice(0, 10),
      sleep: 4,
      soreness: 2,
      stress: 2,
      mood: 4,
      fatigue: 2,
      notes,
    },
  });

  beforeAll(async () => {
    if (!havePg) return;
    const init = await initialiseHq(hq.ownerUrl, { seed: 1, today: TODAY });
    if (!init.initialised || !init.seeded) throw new Error('seed failed');
    ids = { org: init.summary.orgId, second: init.summary.secondOrgId, linkedAthlete: init.summary.linkedAthleteId, users: init.summary.userIds };
    admin = new pg.Client({ connectionString: hq.adminUrl, types: hqTypes });
    await admin.connect();
    storage = mkdtempSync(join(tmpdir(), 'ai-hq-users-'));
    shapes = await startShapeServer({
      databaseUrl: hq.replicationUrl,
      storageDir: storage,
      port: 0,
      secret: SECRET,
      slot: 'hq_users',
      publication: HQ_PUBLICATION,
      longPollTimeoutMs: 2_000,
    });
    server = await startHqServer({ appUrl: hq.appUrl, shapeUrl: shapes.url, shapeSecret: SECRET, maxLongPollMs: 10_000, poolSize: 4 });
    devices.clinic = await enrol(DEMO_EMAILS.admin, 'Clinic laptop');
    devices.treatment = await enrol(DEMO_EMAILS.doctor, 'Treatment laptop');
    devices.athlete = await enrol(DEMO_EMAILS.athlete, 'Phone');
  });
  afterAll(async () => {
    for (const a of aborts) a.abort();
    await server?.close();
    await shapes?.close();
    await admin?.end();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  it("gives an org device every account of its org with PIN hashes that verify offline, and no other org's", async () => {
    const users = await rowsOf(devices.clinic!.token, { table: 'app_user' });
    const expected = await sql<{ id: string }>('SELECT id FROM app_user WHERE org_id = $1', [ids.org]);
    expect(users.map((u) => u.id).sort()).toEqual(expected.map((u) => u.id).sort());
    expect(new Set(users.map((u) => u.org_id))).toEqual(new Set([ids.org]));
    for (const u of users) expect(u.pin_hash, String(u.email)).toMatch(/^scrypt\$16384\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]{43}$/);
    // The hash is what the device checks a PIN against when it is offline; the PIN never travels.
    const doctor = users.find((u) => u.id === ids.users.doctor)!;
    expect(await verifyPin(DEMO_PIN, doctor.pin_hash as string)).toBe(true);
    expect(await verifyPin('9999', doctor.pin_hash as string)).toBe(false);
    expect(JSON.stringify(users)).not.toContain(`"${DEMO_PIN}"`);
  });

  it("gives an athlete's device that athlete's account and rows only", async () => {
    const users = await rowsOf(devices.athlete!.token, { table: 'app_user' });
    expect(users.map((u) => u.id)).toEqual([ids.users.athlete]);
    expect(await verifyPin(DEMO_PIN, users[0]!.pin_hash as string)).toBe(true);
    // Even a hand-made where cannot widen it.
    const forged = await rowsOf(devices.athlete!.token, { table: 'app_user', where: 'true OR true' });
    expect(forged.map((u) => u.id)).toEqual([ids.users.athlete]);
    const athletes = await rowsOf(devices.athlete!.token, { table: 'athlete' });
    expect(athletes.map((a) => a.id)).toEqual([ids.linkedAthlete]);
  });

  it('delivers a role change and a deactivation at HQ to the org device live, like any other row', async () => {
    const s = stream(devices.clinic!.token, { table: 'app_user' });
    const seen: Message<Row>[] = [];
    s.subscribe((msgs) => void seen.push(...msgs));
    await waitFor('up-to-date', () => s.isUpToDate);
    const who = ids.users.strength_coach!;
    await sql("UPDATE app_user SET role = 'coach', version = version + 1, updated_at = now() WHERE id = $1", [who]);
    const roleMsg = await waitFor('the role change', () =>
      seen.find((m) => 'key' in m && m.headers.operation === 'update' && m.value.id === who && m.value.role === 'coach'),
    );
    expect(roleMsg).toBeTruthy();
    await sql('UPDATE app_user SET active = false, version = version + 1, updated_at = now() WHERE id = $1', [who]);
    await waitFor('the deactivation', () => seen.find((m) => 'key' in m && m.value.id === who && m.value.active === false));
  });

  it('applies what an org device uploads for whoever signed in on it, as that user; activity says who, when, which device', async () => {
    const recorded = new Date(Date.now() - 2 * 3_600_000).toISOString(); // made offline two hours ago
    const byPhysio = {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      user_id: ids.users.physio,
      created_at: recorded,
      changes: [wellnessInsert(ids.linkedAthlete, 'pitch side')],
    };
    // A coach cannot record an injury (models/roles.ts): rejected as the coach, even on an admin's device.
    const byCoach = {
      changeset_id: uuidv7(),
      verb: 'injuries.create',
      user_id: ids.users.coach,
      changes: [
        {
          op: 'insert',
          table: 'injury',
          id: uuidv7(),
          after: {
            athlete_id: ids.linkedAthlete,
            body_part: 'knee',
            side: 'left',
            mechanism: 'contact',
            onset_date: TODAY,
            severity: 'mild',
            status: 'open',
            clinician_notes: '',
          },
        },
      ],
    };
    const otherOrgUser = (await sql<{ id: string }>('SELECT id FROM app_user WHERE org_id = $1 LIMIT 1', [ids.second]))[0]!.id;
    const byStranger = { changeset_id: uuidv7(), verb: 'wellness.record', user_id: otherOrgUser, changes: [wellnessInsert(ids.linkedAthlete, 'stranger')] };
    // The admin's clinic laptop could not record wellness itself (no wellness.write): the physio's own attestation would be needed.
    const viaAdmin = await upload(devices.clinic!.token, [{ ...byPhysio, changeset_id: uuidv7() }]);
    expect(((await viaAdmin.json()) as ChangesetUploadResult).results[0]).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
    // The doctor's treatment laptop could: applied as the physio's.
    const res = await upload(devices.treatment!.token, [byPhysio, byCoach, byStranger]);
    expect(res.status, await res.clone().text()).toBe(200);
    const [physio, coach, stranger] = ((await res.json()) as ChangesetUploadResult).results as ChangesetOutcome[];
    expect(physio!.status).toBe('applied');
    expect(coach).toMatchObject({ status: 'rejected', reason: 'forbidden' });
    expect(stranger).toMatchObject({ status: 'rejected', reason: 'forbidden' });
    expect(await sql("SELECT 1 FROM wellness WHERE notes = 'stranger'")).toEqual([]);

    const [act] = await sql<{ actor_user_id: string; actor_name: string; created_at: Date }>(
      'SELECT actor_user_id, actor_name, created_at FROM activity WHERE changeset_id = $1',
      [byPhysio.changeset_id],
    );
    const [physioName] = await sql<{ display_name: string }>('SELECT display_name FROM app_user WHERE id = $1', [ids.users.physio]);
    expect(act!.actor_user_id).toBe(ids.users.physio);
    expect(act!.actor_name).toBe(`${physioName!.display_name} via Device Treatment laptop`);
    expect(new Date(act!.created_at).toISOString()).toBe(recorded);
    const [log] = await sql<{ user_id: string; device_id: string; received_at: Date }>(
      'SELECT user_id, device_id, received_at FROM hq_changeset WHERE id = $1',
      [byPhysio.changeset_id],
    );
    expect(log).toMatchObject({ user_id: ids.users.physio, device_id: devices.treatment!.device_id });
    expect(new Date(log!.received_at).getTime()).toBeGreaterThan(Date.parse(recorded));

    // A device clock running ahead cannot date a change into the future.
    const ahead = {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      user_id: ids.users.physio,
      created_at: new Date(Date.now() + 86_400_000).toISOString(),
      changes: [wellnessInsert(ids.linkedAthlete, 'ahead')],
    };
    expect(((await (await upload(devices.treatment!.token, [ahead])).json()) as ChangesetUploadResult).results[0]!.status).toBe('applied');
    const [aheadAct] = await sql<{ created_at: Date }>('SELECT created_at FROM activity WHERE changeset_id = $1', [ahead.changeset_id]);
    expect(new Date(aheadAct!.created_at).getTime()).toBeLessThanOrEqual(Date.now());

    // An athlete's device uploads that athlete's changes only: the whole request is refused.
    const asPhysio = await upload(devices.athlete!.token, [{ ...byPhysio, changeset_id: uuidv7(), changes: [wellnessInsert(ids.linkedAthlete, 'x')] }]);
    expect(asPhysio.status).toBe(403);
    expect(((await asPhysio.json()) as { error: { code: string } }).error.code).toBe('Forbidden');
  });

  it('stops a device at its next request once its token is revoked at HQ', async () => {
    const lost = await enrol(DEMO_EMAILS.physio, 'Lost tablet');
    const errors: Error[] = [];
    const s = stream(lost.token, { table: 'wellness' }, (e) => void errors.push(e));
    const seen: Message<Row>[] = [];
    s.subscribe((msgs) => void seen.push(...msgs));
    await waitFor('up-to-date', () => s.isUpToDate);
    // Revoked by a club administrator (user.manage) from another device.
    const del = await fetch(`${server.url}/v1/devices/${lost.device_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${devices.clinic!.token}` } });
    expect(del.status).toBe(200);
    // A write ends the live request the stream holds; its next request carries the revoked token.
    const first = wellnessInsert(ids.linkedAthlete, 'after revoke');
    expect(
      (await upload(devices.treatment!.token, [{ changeset_id: uuidv7(), verb: 'wellness.record', user_id: ids.users.physio, changes: [first] }])).status,
    ).toBe(200);
    const err = await waitFor('the 401', () => errors[0]);
    expect(err).toBeInstanceOf(FetchError);
    expect((err as FetchError).status).toBe(401);
    const after = await fetch(`${server.url}/v1/shape?table=wellness&offset=-1`, { headers: { authorization: `Bearer ${lost.token}` } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { message: string } }).error.message).toMatch(/revoked/);
    const up = await upload(lost.token, [{ changeset_id: uuidv7(), verb: 'wellness.record', changes: [wellnessInsert(ids.linkedAthlete, 'never')] }]);
    expect(up.status).toBe(401);
    expect(await sql("SELECT 1 FROM wellness WHERE notes = 'never'")).toEqual([]);
  });

  it("an administrator cannot revoke an owner's device; the owner can (issue 12 re-review minor)", async () => {
    const ownerLaptop = await enrol(DEMO_EMAILS.owner, 'Owner laptop');
    // before: 200, and the owner's laptop was cut off HQ by an admin
    const byAdmin = await fetch(`${server.url}/v1/devices/${ownerLaptop.device_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${devices.clinic!.token}` },
    });
    expect(byAdmin.status).toBe(403);
    expect(((await byAdmin.json()) as { error: { message: string } }).error.message).toMatch(/^An owner's devices are revoked by that owner or another owner/);
    expect((await fetch(`${server.url}/v1/shape?table=athlete&offset=-1`, { headers: { authorization: `Bearer ${ownerLaptop.token}` } })).status).toBe(200);
    const byOwner = await fetch(`${server.url}/v1/devices/${ownerLaptop.device_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ownerLaptop.token}` },
    });
    expect(byOwner.status).toBe(200);
  });
});
