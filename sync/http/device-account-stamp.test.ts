/**
 * A device token ends when its account changes at HQ (issue 13 review blocker; HQ migration 0012,
 * sync/auth/devices.ts): a relink of an athlete account to another athlete, a PIN reset (the
 * account handed to someone else) or a role change refuses every token enrolled before it, on
 * shapes and on uploads, with words saying what to do; an unchanged account's token keeps working,
 * a token enrolled after the change works, and shape eviction counts the refused device as
 * inactive. Real HQ server, real Postgres, the embedded shape service behind the proxy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shape, ShapeStream, type Row } from '@electric-sql/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from 'uuidv7';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { ACCOUNT_CHANGED, DeviceRegistry } from '../auth/devices';
import { hashPin } from '../auth/pin';
import { createPool, hqTypes } from '../pg/db';
import { HQ_PUBLICATION } from '../pg/roles';
import { initialiseHq } from '../seed';
import { startHqServer, type HqServer } from '../server';
import { startShapeServer, type ShapeServer } from '../shape/server';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { enrolmentCodeFor } from '../testing/enrolment';

const TODAY = new Date().toISOString().slice(0, 10);
const SECRET = 'device-stamp-secret';

describe.skipIf(!havePg)('a device token ends when its account changes at HQ', () => {
  const hq = useHqDatabase();
  let shapes: ShapeServer;
  let server: HqServer;
  let admin: pg.Client;
  let pool: pg.Pool;
  let storage = '';
  const aborts: AbortController[] = [];
  let ids: { org: string; linkedAthlete: string; users: Record<string, string> };
  let ownerToken = '';
  let wellnessDays = 0;

  const sql = async <R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> => (await admin.query<R>(text, params)).rows;
  const enrol = async (email: string, name: string, pin = DEMO_PIN): Promise<{ token: string; device_id: string }> => {
    const res = await fetch(`${server.url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, pin, code: await enrolmentCodeFor(hq.appUrl, email), name }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { token: string; device_id: string };
  };
  const rowsOf = (token: string, params: Record<string, string>): Promise<Row[]> => {
    const ac = new AbortController();
    aborts.push(ac);
    return new Shape(
      new ShapeStream<Row>({ url: `${server.url}/v1/shape`, params: params as never, headers: { Authorization: `Bearer ${token}` }, signal: ac.signal }),
    ).rows;
  };
  /** One shape request (offset -1): its status and HQ's error message, if any. */
  const shapeAnswer = async (token: string, table: string): Promise<{ status: number; message?: string }> => {
    const res = await fetch(`${server.url}/v1/shape?table=${table}&offset=-1`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { error?: { message?: string } };
    return { status: res.status, ...(body && !Array.isArray(body) && body.error ? { message: body.error.message } : {}) };
  };
  const upload = (token: string, changesets: unknown[]): Promise<Response> =>
    fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ changesets }),
    });
  const wellness = (athleteId: string, notes: string) => ({
    changeset_id: uuidv7(),
    verb: 'wellness.record',
    changes: [
      {
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
      },
    ],
  });
  /** The owner changes `userId`'s account through the ordinary write path (an upload from the owner's device). */
  const ownerUpdatesUser = async (userId: string, after: Record<string, unknown>): Promise<void> => {
    const [acct] = await sql<{ version: number }>('SELECT version FROM app_user WHERE id = $1', [userId]);
    const res = await upload(ownerToken, [
      { changeset_id: uuidv7(), verb: 'users.update', changes: [{ op: 'update', table: 'app_user', id: userId, version: acct!.version, before: {}, after }] },
    ]);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: { status: string }[] }).results[0]!.status).toBe('applied');
  };
  /** The token is refused on shapes and uploads, saying the account changed; nothing it sends is written. */
  const expectRefused = async (token: string, athleteId: string): Promise<void> => {
    for (const table of ['athlete', 'vitals', 'wellness']) {
      const a = await shapeAnswer(token, table);
      expect(a.status, table).toBe(401);
      expect(a.message).toBe(ACCOUNT_CHANGED);
    }
    const notes = `refused ${uuidv7()}`;
    const up = await upload(token, [wellness(athleteId, notes)]);
    expect(up.status).toBe(401);
    expect(((await up.json()) as { error: { code: string; message: string } }).error).toEqual({ code: 'Unauthenticated', message: ACCOUNT_CHANGED });
    expect(await sql('SELECT 1 FROM wellness WHERE notes = $1', [notes])).toEqual([]);
  };

  beforeAll(async () => {
    if (!havePg) return;
    const init = await initialiseHq(hq.ownerUrl, { seed: 1, today: TODAY });
    if (!init.initialised || !init.seeded) throw new Error('seed failed');
    ids = { org: init.summary.orgId, linkedAthlete: init.summary.linkedAthleteId, users: init.summary.userIds };
    admin = new pg.Client({ connectionString: hq.adminUrl, types: hqTypes });
    await admin.connect();
    pool = createPool(hq.appUrl, 2);
    storage = mkdtempSync(join(tmpdir(), 'ai-hq-stamp-'));
    shapes = await startShapeServer({
      databaseUrl: hq.replicationUrl,
      storageDir: storage,
      port: 0,
      secret: SECRET,
      slot: 'hq_stamp',
      publication: HQ_PUBLICATION,
      longPollTimeoutMs: 2_000,
    });
    server = await startHqServer({ appUrl: hq.appUrl, shapeUrl: shapes.url, shapeSecret: SECRET, maxLongPollMs: 10_000, poolSize: 4 });
    ownerToken = (await enrol(DEMO_EMAILS.owner, 'Owner laptop')).token;
  });
  afterAll(async () => {
    for (const a of aborts) a.abort();
    await server?.close();
    await shapes?.close();
    await pool?.end();
    await admin?.end();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  it("refuses an athlete phone's token after the owner relinks the account to another athlete (the review's repro); a token enrolled after works", async () => {
    const phone = await enrol(DEMO_EMAILS.athlete, 'Phone of athlete A');
    const clinic = await enrol(DEMO_EMAILS.physio, 'Clinic laptop');
    expect((await rowsOf(phone.token, { table: 'athlete' })).map((a) => a.id)).toEqual([ids.linkedAthlete]);
    const [other] = await sql<{ id: string }>('SELECT id FROM athlete WHERE org_id = $1 AND id <> $2 ORDER BY name LIMIT 1', [ids.org, ids.linkedAthlete]);

    await ownerUpdatesUser(ids.users.athlete!, { linked_athlete_id: other!.id });
    expect((await sql('SELECT linked_athlete_id, pin_hash FROM app_user WHERE id = $1', [ids.users.athlete]))[0]).toEqual({
      linked_athlete_id: other!.id,
      pin_hash: null,
    });

    // The old phone reads neither the other athlete, nor their vitals, nor uploads for them.
    await expectRefused(phone.token, other!.id);
    // An unchanged account's token still works.
    expect((await shapeAnswer(clinic.token, 'athlete')).status).toBe(200);
    expect((await shapeAnswer(ownerToken, 'vitals')).status).toBe(200);
    // The new holder of the account gets a PIN and enrols: that token reads the athlete it is linked to now.
    await sql('UPDATE app_user SET pin_hash = $1 WHERE id = $2', [hashPin('4826'), ids.users.athlete]);
    const fresh = await enrol(DEMO_EMAILS.athlete, 'Phone of athlete B', '4826');
    expect((await rowsOf(fresh.token, { table: 'athlete' })).map((a) => a.id)).toEqual([other!.id]);
    const ok = await upload(fresh.token, [wellness(other!.id, 'by the new holder')]);
    expect(ok.status).toBe(200);
    // The old phone stays refused.
    expect((await shapeAnswer(phone.token, 'athlete')).status).toBe(401);
  }, 60_000);

  it('refuses a token after a PIN reset (the account handed to someone else); shape eviction counts its device inactive', async () => {
    const old = await enrol(DEMO_EMAILS.doctor, 'Doctor laptop');
    const bystander = await enrol(DEMO_EMAILS.coach, 'Coach tablet');
    expect((await shapeAnswer(old.token, 'wellness')).status).toBe(200);
    await sql('UPDATE app_user SET pin_hash = $1 WHERE id = $2', [hashPin('7391'), ids.users.doctor]);

    await expectRefused(old.token, ids.linkedAthlete);
    expect((await shapeAnswer(bystander.token, 'athlete')).status).toBe(200);
    const devices = new DeviceRegistry(pool);
    expect(await devices.inactiveDevices(ids.org, [old.device_id, bystander.device_id])).toEqual(new Set([old.device_id]));
    // The old PIN no longer signs in; the new one does, and its token works.
    const wrong = await fetch(`${server.url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: DEMO_EMAILS.doctor, pin: DEMO_PIN, code: await enrolmentCodeFor(hq.appUrl, DEMO_EMAILS.doctor), name: 'x' }),
    });
    expect(wrong.status).toBe(401);
    const fresh = await enrol(DEMO_EMAILS.doctor, 'Doctor laptop', '7391');
    expect((await shapeAnswer(fresh.token, 'wellness')).status).toBe(200);
    expect(await devices.inactiveDevices(ids.org, [old.device_id, fresh.device_id])).toEqual(new Set([old.device_id]));
  }, 60_000);

  it('refuses a token after a role change (a demotion that keeps the PIN, then a promotion), uploaded by the owner; a fresh enrolment works', async () => {
    const laptop = await enrol(DEMO_EMAILS.physio, 'Physio laptop');
    expect((await shapeAnswer(laptop.token, 'wellness')).status).toBe(200);
    const [before] = await sql<{ pin_hash: string }>('SELECT pin_hash FROM app_user WHERE id = $1', [ids.users.physio]);
    await ownerUpdatesUser(ids.users.physio!, { role: 'strength_coach' });
    // The PIN is kept (a demotion): only the role changed, and that alone ends the token.
    expect((await sql('SELECT role, pin_hash FROM app_user WHERE id = $1', [ids.users.physio]))[0]).toEqual({
      role: 'strength_coach',
      pin_hash: before!.pin_hash,
    });
    await expectRefused(laptop.token, ids.linkedAthlete);
    const demoted = await enrol(DEMO_EMAILS.physio, 'Physio laptop again');
    expect((await shapeAnswer(demoted.token, 'athlete')).status).toBe(200);
    // Promoted back (HQ clears the PIN of a promotion; a new one is set): the strength-coach-era token ends too.
    await ownerUpdatesUser(ids.users.physio!, { role: 'physio' });
    await sql('UPDATE app_user SET pin_hash = $1 WHERE id = $2', [before!.pin_hash, ids.users.physio]);
    await expectRefused(demoted.token, ids.linkedAthlete);
    const promoted = await enrol(DEMO_EMAILS.physio, 'Physio laptop, promoted');
    expect((await shapeAnswer(promoted.token, 'wellness')).status).toBe(200);
  }, 60_000);
});
