/**
 * The HQ write API end to end over HTTP, against a real Postgres with the demo club: device
 * enrolment and lockout, POST /v1/changesets applying a device's outbox changesets under RLS
 * with the same models/ rules, typed rejections, idempotent retries, and bad input refused whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { DEMO_EMAILS, DEMO_PIN, DEMO_SECOND_EMAILS } from '../../models/seed/demo';
import type { ChangesetOutcome, ChangesetUploadResult } from '../../models/sync';
import { hqTypes } from '../pg/db';
import { initialiseHq } from '../seed';
import { startHqServer, type HqServer } from '../server';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { enrolmentCodeFor } from '../testing/enrolment';

const TODAY = new Date().toISOString().slice(0, 10);

describe.skipIf(!havePg)('POST /v1/changesets and device tokens', () => {
  const hq = useHqDatabase();
  let server: HqServer;
  let admin: pg.Client;
  let ids: { org: string; second: string; linkedAthlete: string; users: Record<string, string> };
  let athletes: string[];
  let secondAthlete: string;
  const tokens: Record<string, string> = {};

  async function sql<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    return (await admin.query<R>(text, params)).rows;
  }
  async function enrol(email: string, pin = DEMO_PIN, name = 'Pitch laptop'): Promise<Response> {
    return fetch(`${server.url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, pin, code: await enrolmentCodeFor(hq.appUrl, email).catch(() => 'AAAA-AAAA-AAAA'), name }),
    });
  }
  async function upload(token: string, body: unknown): Promise<Response> {
    return fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }
  async function one(token: string, cs: Record<string, unknown>): Promise<ChangesetOutcome> {
    const res = await upload(token, { changesets: [cs] });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as ChangesetUploadResult).results[0]!;
  }
  // Each inserted day is its own (one live wellness row per athlete and day, HQ 0007; the seed fills recent days).
  let wellnessDays = 0;
  function wellness(athleteId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const date = new Date(Date.UTC(2020, 0, 1 + wellnessDays++)).toISOString().slice(0, 10);
    return { athlete_id: athleteId, date, sleep: 4, soreness: 2, stress: 2, mood: 4, fatigue: 2, notes: '', ...extra };
  }

  beforeAll(async () => {
    if (!havePg) return;
    const init = await initialiseHq(hq.ownerUrl, { seed: 1, today: TODAY });
    if (!init.initialised || !init.seeded) throw new Error('seed failed');
    ids = { org: init.summary.orgId, second: init.summary.secondOrgId, linkedAthlete: init.summary.linkedAthleteId, users: init.summary.userIds };
    admin = new pg.Client({ connectionString: hq.adminUrl, types: hqTypes });
    await admin.connect();
    athletes = (await sql<{ id: string }>('SELECT id FROM athlete WHERE org_id = $1 ORDER BY name', [ids.org])).map((r) => r.id);
    secondAthlete = (await sql<{ id: string }>('SELECT id FROM athlete WHERE org_id = $1 LIMIT 1', [ids.second]))[0]!.id;
    server = await startHqServer({ appUrl: hq.appUrl, shapeUrl: 'http://127.0.0.1:9', poolSize: 4 });
    for (const role of ['physio', 'doctor', 'athlete', 'owner', 'admin', 'super_admin'] as const) {
      const res = await enrol(DEMO_EMAILS[role]);
      expect(res.status).toBe(201);
      tokens[role] = ((await res.json()) as { token: string }).token;
    }
  });
  afterAll(async () => {
    await server?.close();
    await admin?.end();
  });

  it('issues a device token for email + PIN, stored only as a hash, expiring', async () => {
    const res = await enrol(DEMO_EMAILS.coach, DEMO_PIN, 'Coach tablet');
    expect(res.status).toBe(201);
    const body = (await res.json()) as { device_id: string; token: string; expires_at: string; user: { role: string }; org: { name: string } };
    expect(body.token).toMatch(/^aihq_[A-Za-z0-9_-]{43}$/);
    expect(body.user.role).toBe('coach');
    expect(body.org.name).toBe('Kestrel Vale FC');
    expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(89 * 86_400_000);
    const [row] = await sql<{ token_hash: string; name: string }>('SELECT token_hash, name FROM hq_device WHERE id = $1', [body.device_id]);
    expect(row!.name).toBe('Coach tablet');
    expect(row!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(await sql('SELECT * FROM hq_device'))).not.toContain(body.token);
  });

  it('answers a wrong PIN and an unknown email alike, and locks a user after 5 wrong PINs', async () => {
    const wrong = await enrol(DEMO_EMAILS.analyst, '0000');
    const unknown = await enrol('nobody@kestrelvale.test', '0000');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toBe(
      ((await unknown.json()) as { error: { message: string } }).error.message,
    );
    for (let i = 0; i < 4; i++) expect((await enrol(DEMO_EMAILS.analyst, '0000')).status).toBe(401);
    const locked = await enrol(DEMO_EMAILS.analyst, DEMO_PIN);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(200);
    expect(((await locked.json()) as { error: { code: string } }).error.code).toBe('RateLimited');
  });

  it('applies a changeset in one transaction: rows, version, txid, activity "via Device"', async () => {
    const id = uuidv7();
    const csId = uuidv7();
    const out = await one(tokens.physio!, {
      changeset_id: csId,
      verb: 'wellness.record',
      summary: 'Record wellness for one athlete',
      changes: [{ op: 'insert', table: 'wellness', id, after: wellness(athletes[3]!) }],
    });
    expect(out).toMatchObject({ status: 'applied', versions: { [id]: 1 }, replayed: false });
    if (out.status !== 'applied') return;
    expect(out.txid).toMatch(/^\d+$/);
    const [row] = await sql<{ org_id: string; version: number; sleep: number }>('SELECT org_id, version, sleep FROM wellness WHERE id = $1', [id]);
    expect(row).toEqual({ org_id: ids.org, version: 1, sleep: 4 });
    const [act] = await sql<{ actor_name: string; summary: string; changeset_id: string; via_assistant: boolean }>(
      'SELECT actor_name, summary, changeset_id, via_assistant FROM activity WHERE id = $1',
      [out.activity_id],
    );
    expect(act).toEqual({
      actor_name: 'Lowri Pendry via Device Pitch laptop',
      summary: 'Record wellness for one athlete',
      changeset_id: csId,
      via_assistant: false,
    });

    // An update planned against version 1 bumps it to 2.
    const up = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'wellness.update',
      changes: [{ op: 'update', table: 'wellness', id, version: 1, before: { sleep: 4 }, after: { sleep: 5 } }],
    });
    expect(up).toMatchObject({ status: 'applied', versions: { [id]: 2 } });
  });

  it('keeps "via Assistant" in the activity row', async () => {
    const out = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      summary: 'Wellness via the assistant',
      via: 'Assistant',
      run_id: 'run-1',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[4]!) }],
    });
    expect(out.status).toBe('applied');
    if (out.status !== 'applied') return;
    const [act] = await sql<{ actor_name: string; via_assistant: boolean; run_id: string }>(
      'SELECT actor_name, via_assistant, run_id FROM activity WHERE id = $1',
      [out.activity_id],
    );
    expect(act).toEqual({ actor_name: 'Lowri Pendry via Assistant via Device Pitch laptop', via_assistant: true, run_id: 'run-1' });
  });

  it('is idempotent by client changeset id: a retry returns the first outcome; other content under that id is refused', async () => {
    const cs = { changeset_id: uuidv7(), verb: 'wellness.record', changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[5]!) }] };
    const first = await one(tokens.physio!, cs);
    const again = await one(tokens.physio!, cs);
    expect(again).toEqual({ ...first, replayed: true });
    const [n] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM activity WHERE changeset_id = $1', [cs.changeset_id]);
    expect(n!.n).toBe(1);
    const other = await one(tokens.physio!, { ...cs, changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[6]!) }] });
    expect(other).toMatchObject({ status: 'rejected', reason: 'idempotency_mismatch' });
  });

  it('rejects a stale version with the server row, and writes nothing of the changeset', async () => {
    const [row] = await sql<{ id: string; version: number; name: string }>('SELECT id, version, name FROM athlete WHERE id = $1', [athletes[7]]);
    const newWellness = uuidv7();
    const out = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'athletes.update',
      changes: [
        { op: 'insert', table: 'wellness', id: newWellness, after: wellness(athletes[7]!) },
        { op: 'update', table: 'athlete', id: row!.id, version: row!.version + 5, before: { notes: '' }, after: { notes: 'Planned on an old copy' } },
      ],
    });
    expect(out).toMatchObject({ status: 'rejected', reason: 'stale' });
    if (out.status !== 'rejected') return;
    expect(out.current).toEqual([
      expect.objectContaining({
        table: 'athlete',
        id: row!.id,
        expected_version: row!.version + 5,
        actual_version: row!.version,
        row: expect.objectContaining({ name: row!.name }),
      }),
    ]);
    expect(await sql('SELECT 1 FROM wellness WHERE id = $1', [newWellness])).toEqual([]);
  });

  it('authorises every row with the models/ rules, judging the stored row, not the device\'s "before"', async () => {
    const [rtp] = await sql<{ id: string; version: number }>(
      'SELECT id, version FROM rtp_entry WHERE org_id = $1 AND doctor_signoff_by IS NULL AND deleted_at IS NULL LIMIT 1',
      [ids.org],
    );
    const forged = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'rtp.update',
      changes: [
        {
          op: 'update',
          table: 'rtp_entry',
          id: rtp!.id,
          version: rtp!.version,
          before: { doctor_signoff_by: ids.users.doctor },
          after: { doctor_signoff_by: ids.users.doctor },
        },
      ],
    });
    expect(forged).toMatchObject({ status: 'rejected', reason: 'forbidden', field: 'doctor_signoff_by' });
    // HQ's row goes with the refusal (the physio may read it), so the conflict shows "HQ now", not "—".
    expect(forged).toMatchObject({
      current: [
        { table: 'rtp_entry', id: rtp!.id, expected_version: rtp!.version, actual_version: rtp!.version, row: { id: rtp!.id, doctor_signoff_by: null } },
      ],
    });
    const [after] = await sql<{ doctor_signoff_by: string | null; version: number }>('SELECT doctor_signoff_by, version FROM rtp_entry WHERE id = $1', [
      rtp!.id,
    ]);
    expect(after).toEqual({ doctor_signoff_by: null, version: rtp!.version });

    const del = await one(tokens.doctor!, {
      changeset_id: uuidv7(),
      verb: 'injury.delete',
      changes: [{ op: 'delete', table: 'wellness', id: uuidv7(), version: 1 }],
    });
    expect(del).toMatchObject({ status: 'rejected', reason: 'forbidden' });
    const bounds = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[8]!, { sleep: 9 }) }],
    });
    expect(bounds).toMatchObject({ status: 'rejected', reason: 'validation', field: 'sleep' });
    const future = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    const policy = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[8]!, { date: future }) }],
    });
    expect(policy).toMatchObject({ status: 'rejected', reason: 'policy' });
    if (policy.status === 'rejected') expect(policy.policy?.map((d) => d.code)).toContain('date_in_future');
    const admin = await one(tokens.admin!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[8]!) }],
    });
    expect(admin).toMatchObject({ status: 'rejected', reason: 'forbidden' });
  });

  it("self-scopes athlete accounts, and never reaches another org's rows", async () => {
    const own = await one(tokens.athlete!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(ids.linkedAthlete) }],
    });
    expect(own.status).toBe('applied');
    const other = await one(tokens.athlete!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes.find((a) => a !== ids.linkedAthlete)!) }],
    });
    expect(other).toMatchObject({ status: 'rejected', reason: 'not_found' });
    const cross = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'athletes.update',
      changes: [{ op: 'update', table: 'athlete', id: secondAthlete, version: 1, before: { notes: '' }, after: { notes: 'x' } }],
    });
    expect(cross).toMatchObject({ status: 'rejected', reason: 'not_found' });
    const crossRef = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(secondAthlete) }],
    });
    expect(crossRef).toMatchObject({ status: 'rejected', reason: 'not_found', field: 'athlete_id' });
    const [n] = await sql<{ n: number }>("SELECT count(*)::int AS n FROM athlete WHERE id = $1 AND notes = 'x'", [secondAthlete]);
    expect(n!.n).toBe(0);
  });

  it("refuses an admin's upload that creates or relinks an athlete account (issue 13 re-review: the admin would control a login to that athlete's wellness and vitals)", async () => {
    const linkedUser = ids.users.athlete!;
    const [before] = await sql<{ linked_athlete_id: string; version: number }>('SELECT linked_athlete_id, version FROM app_user WHERE id = $1', [linkedUser]);
    const target = athletes.find((a) => a !== before!.linked_athlete_id)!;
    const accountId = uuidv7();
    const create = await one(tokens.admin!, {
      changeset_id: uuidv7(),
      verb: 'users.create',
      changes: [
        {
          op: 'insert',
          table: 'app_user',
          id: accountId,
          after: { email: 'mine@kestrelvale.test', display_name: 'Mine', role: 'athlete', linked_athlete_id: target, active: true, budget_cap_usd: null },
        },
      ],
    });
    expect(create).toMatchObject({ status: 'rejected', reason: 'forbidden', field: 'role' });
    if (create.status === 'rejected') expect(create.message).toMatch(/Ask an owner/);
    const relink = await one(tokens.admin!, {
      changeset_id: uuidv7(),
      verb: 'users.update',
      changes: [{ op: 'update', table: 'app_user', id: linkedUser, version: before!.version, before: {}, after: { linked_athlete_id: target } }],
    });
    expect(relink).toMatchObject({ status: 'rejected', reason: 'forbidden', field: 'linked_athlete_id' });
    expect(await sql('SELECT 1 FROM app_user WHERE id = $1', [accountId])).toHaveLength(0);
    expect((await sql('SELECT linked_athlete_id, version FROM app_user WHERE id = $1', [linkedUser]))[0]).toEqual(before);
  });

  it("HQ applies the same account rules: an admin's role change of a linked account is refused; a link change clears the account's PIN (issue 13 second re-review B1)", async () => {
    const linkedUser = ids.users.athlete!;
    const [athleteRow] = await sql<{ role: string; version: number }>('SELECT role, version FROM app_user WHERE id = $1', [linkedUser]);
    const toAdmin = await one(tokens.admin!, {
      changeset_id: uuidv7(),
      verb: 'users.update',
      changes: [{ op: 'update', table: 'app_user', id: linkedUser, version: athleteRow!.version, before: {}, after: { role: 'admin' } }],
    });
    expect(toAdmin).toMatchObject({ status: 'rejected', reason: 'forbidden', field: 'role' });
    if (toAdmin.status === 'rejected') expect(toAdmin.message).toMatch(/change the role of an athlete account.*Ask an owner/);
    expect((await sql('SELECT role, version FROM app_user WHERE id = $1', [linkedUser]))[0]).toEqual(athleteRow);

    // The owner links a new account, a PIN is set on it at HQ, then the owner relinks it: the PIN is gone.
    const accountId = uuidv7();
    const created = await one(tokens.owner!, {
      changeset_id: uuidv7(),
      verb: 'users.create',
      changes: [
        {
          op: 'insert',
          table: 'app_user',
          id: accountId,
          after: {
            email: 'linked-hq@kestrelvale.test',
            display_name: 'Linked',
            role: 'athlete',
            linked_athlete_id: athletes[0],
            active: true,
            budget_cap_usd: null,
          },
        },
      ],
    });
    expect(created).toMatchObject({ status: 'applied' });
    await sql("UPDATE app_user SET pin_hash = 'scrypt$known' WHERE id = $1", [accountId]);
    const relink = await one(tokens.owner!, {
      changeset_id: uuidv7(),
      verb: 'users.update',
      changes: [{ op: 'update', table: 'app_user', id: accountId, version: 1, before: {}, after: { linked_athlete_id: athletes[1] } }],
    });
    expect(relink).toMatchObject({ status: 'applied' });
    expect((await sql('SELECT linked_athlete_id, pin_hash FROM app_user WHERE id = $1', [accountId]))[0]).toEqual({
      linked_athlete_id: athletes[1],
      pin_hash: null,
    });
    // A rename keeps a PIN.
    await sql("UPDATE app_user SET pin_hash = 'scrypt$known' WHERE id = $1", [accountId]);
    const rename = await one(tokens.owner!, {
      changeset_id: uuidv7(),
      verb: 'users.update',
      changes: [{ op: 'update', table: 'app_user', id: accountId, version: 2, before: {}, after: { display_name: 'Renamed' } }],
    });
    expect(rename).toMatchObject({ status: 'applied' });
    expect((await sql<{ pin_hash: string }>('SELECT pin_hash FROM app_user WHERE id = $1', [accountId]))[0]!.pin_hash).toBe('scrypt$known');
  });

  it("HQ keeps the club's last active owner: a super admin's upload demoting or deactivating the only owner is refused, nothing written (issue 13 review minor)", async () => {
    const owner = ids.users.owner!;
    const [row] = await sql<{ role: string; active: boolean; version: number }>('SELECT role, active, version FROM app_user WHERE id = $1', [owner]);
    for (const after of [{ role: 'super_admin' }, { active: false }]) {
      const out = await one(tokens.super_admin!, {
        changeset_id: uuidv7(),
        verb: 'users.update',
        changes: [{ op: 'update', table: 'app_user', id: owner, version: row!.version, before: {}, after }],
      });
      expect(out).toMatchObject({ status: 'rejected', reason: 'forbidden' });
      if (out.status === 'rejected') expect(out.message).toMatch(/^This is the club's last active owner/);
    }
    expect((await sql('SELECT role, active, version FROM app_user WHERE id = $1', [owner]))[0]).toEqual(row);
  });

  it('a refusal never shows a row the uploading account may not read, whoever the changeset names as author (issue 12 re-review B1)', async () => {
    // the admin (no injury.read) names the doctor as author of an insert under an existing injury id, and of an update at a wrong version
    const [inj] = await sql<{ id: string; version: number }>('SELECT id, version FROM injury WHERE org_id = $1 AND deleted_at IS NULL LIMIT 1', [ids.org]);
    const asDoctor = (changes: unknown[]) => one(tokens.admin!, { changeset_id: uuidv7(), verb: 'injuries.update', user_id: ids.users.doctor, changes });
    for (const out of [
      await asDoctor([{ op: 'insert', table: 'injury', id: inj!.id, after: {} }]),
      await asDoctor([{ op: 'update', table: 'injury', id: inj!.id, version: inj!.version + 5, before: {}, after: { clinician_notes: 'x' } }]),
    ]) {
      expect(out.status).toBe('rejected');
      // before: the stale reply carried the whole injury row (clinician_notes included)
      if (out.status === 'rejected') for (const c of out.current ?? []) expect(c.row).toBeNull();
      expect(JSON.stringify(out)).not.toMatch(/clinician_notes/);
    }
    // the doctor's own token still gets HQ's row with a stale reply
    const own = await one(tokens.doctor!, {
      changeset_id: uuidv7(),
      verb: 'injuries.update',
      changes: [{ op: 'update', table: 'injury', id: inj!.id, version: inj!.version + 5, before: {}, after: { clinician_notes: 'x' } }],
    });
    expect(own).toMatchObject({ status: 'rejected', reason: 'stale' });
    if (own.status === 'rejected') expect(own.current?.[0]?.row).toMatchObject({ id: inj!.id });
  });

  it('two devices recording the same athlete and day at once: one row (HQ 0007), the other rejected with a clear message', async () => {
    const day = { date: '2026-01-02' };
    const race = (token: string, sleep: number) =>
      one(token, {
        changeset_id: uuidv7(),
        verb: 'wellness.submit',
        changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[13]!, { ...day, sleep }) }],
      });
    const [a, b] = await Promise.all([race(tokens.physio!, 3), race(tokens.doctor!, 5)]);
    expect([a.status, b.status].sort()).toEqual(['applied', 'rejected']);
    const loser = a.status === 'rejected' ? a : b;
    if (loser.status === 'rejected') {
      expect(loser.reason).toBe('validation');
      expect(loser.message).toMatch(/already recorded on another device/);
    }
    const live = await sql('SELECT id FROM wellness WHERE athlete_id = $1 AND date = $2 AND deleted_at IS NULL', [athletes[13], day.date]);
    expect(live).toHaveLength(1);
  });
  it("lets one of two devices racing on the same row win; the other gets stale with the winner's row", async () => {
    const [row] = await sql<{ id: string; version: number }>('SELECT id, version FROM athlete WHERE id = $1', [athletes[12]]);
    const race = (notes: string, token: string) =>
      one(token, {
        changeset_id: uuidv7(),
        verb: 'athletes.update',
        changes: [{ op: 'update', table: 'athlete', id: row!.id, version: row!.version, before: { notes: '' }, after: { notes } }],
      });
    const [a, b] = await Promise.all([race('from the physio', tokens.physio!), race('from the doctor', tokens.doctor!)]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual(['applied', 'rejected']);
    const loser = a.status === 'rejected' ? a : b;
    const [now] = await sql<{ notes: string; version: number }>('SELECT notes, version FROM athlete WHERE id = $1', [row!.id]);
    expect(now!.version).toBe(row!.version + 1);
    if (loser.status === 'rejected') {
      expect(loser.reason).toBe('stale');
      expect(loser.current?.[0]?.row?.notes).toBe(now!.notes);
    }
  });

  it("an edit naming the device's change its version counts applies only if HQ applied that change with that version (based_on): a coinciding version reached through another device's write is stale", async () => {
    const [row] = await sql<{ id: string; version: number; notes: string }>('SELECT id, version, notes FROM athlete WHERE id = $1', [athletes[14]]);
    const v = row!.version;
    const edit = (version: number, notes: string, extra: Record<string, unknown> = {}) => ({
      changeset_id: uuidv7(),
      verb: 'athletes.update',
      changes: [{ op: 'update', table: 'athlete', id: row!.id, version, before: { notes: 'whatever the device held' }, after: { notes } }],
      ...extra,
    });
    // The doctor's device made E1 at version v, but the physio's write reached HQ first: E1 is stale.
    expect(await one(tokens.physio!, edit(v, 'PHYSIO: must keep'))).toMatchObject({ status: 'applied' });
    const e1 = edit(v, 'doctor first');
    expect(await one(tokens.doctor!, e1)).toMatchObject({ status: 'rejected', reason: 'stale' });
    // The doctor's second edit, made on top of E1 (version v + 1 on that device), coincides with HQ's
    // version v + 1 (the physio's): naming E1 as its base, it is stale and writes nothing.
    const e2 = edit(v + 1, 'doctor second', { based_on: [{ table: 'athlete', id: row!.id, changeset_id: e1.changeset_id }] });
    const out = await one(tokens.doctor!, e2);
    expect(out).toMatchObject({ status: 'rejected', reason: 'stale' });
    expect(out.status === 'rejected' && out.current?.[0]?.row?.notes).toBe('PHYSIO: must keep');
    // Without the base the version check alone would have applied it (what HQ did before based_on).
    const [kept] = await sql<{ notes: string; version: number }>('SELECT notes, version FROM athlete WHERE id = $1', [row!.id]);
    expect(kept).toEqual({ notes: 'PHYSIO: must keep', version: v + 1 });
    // A chain HQ did apply goes through: E3 at v + 1, then E4 on top of it at v + 2 naming E3.
    const e3 = edit(v + 1, 'doctor third');
    const e4 = edit(v + 2, 'doctor fourth', { based_on: [{ table: 'athlete', id: row!.id, changeset_id: e3.changeset_id }] });
    const res = await upload(tokens.doctor!, { changesets: [e3, e4] });
    expect(((await res.json()) as ChangesetUploadResult).results.map((r) => r.status)).toEqual(['applied', 'applied']);
    // A base HQ applied, but which gave the row another version than the one expected, is stale too.
    const e5 = edit(v + 3, 'doctor fifth', { based_on: [{ table: 'athlete', id: row!.id, changeset_id: e3.changeset_id }] });
    expect(await one(tokens.doctor!, e5)).toMatchObject({ status: 'rejected', reason: 'stale' });
  });

  describe('owner approval of a change the policy marks "needs owner"', () => {
    /** A +25 % (or `factor`) change of one fee, planned against the row as HQ holds it now. */
    async function feeChange(code: number, factor = 1.25) {
      const [item] = await sql<{ id: string; version: number; price_cents: number }>(
        'SELECT id, version, price_cents FROM rate_item WHERE org_id = $1 ORDER BY code LIMIT 1 OFFSET $2',
        [ids.org, code],
      );
      const change = {
        op: 'update',
        table: 'rate_item',
        id: item!.id,
        version: item!.version,
        before: { price_cents: item!.price_cents },
        after: { price_cents: Math.round(item!.price_cents * factor) },
      };
      return { item: item!, cs: (extra: Record<string, unknown> = {}) => ({ changeset_id: uuidv7(), verb: 'rates.updateItem', changes: [change], ...extra }) };
    }
    async function price(id: string): Promise<{ price_cents: number; version: number }> {
      return (await sql<{ price_cents: number; version: number }>('SELECT price_cents, version FROM rate_item WHERE id = $1', [id]))[0]!;
    }
    async function approve(token: string, approvals: unknown[]): Promise<Response> {
      return fetch(`${server.url}/v1/approvals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ approvals }),
      });
    }

    it('refuses a change without an approval, or approved by someone who is not an owner', async () => {
      const { cs } = await feeChange(0, 1.5);
      const unapproved = await one(tokens.physio!, cs());
      expect(unapproved).toMatchObject({ status: 'rejected', reason: 'policy' });
      if (unapproved.status === 'rejected') expect(unapproved.policy?.map((d) => d.code)).toContain('numeric_change_needs_owner');
      const byDoctor = await one(tokens.physio!, cs({ approved_by: ids.users.doctor }));
      expect(byDoctor).toMatchObject({ status: 'rejected', reason: 'policy' });
    });

    it("rejects a forged approved_by: an admin's (or physio's) device naming the owner without the owner's proof", async () => {
      const { item, cs } = await feeChange(1);
      const before = await price(item.id);
      // The attack of issue 12: an admin device uploads +25 % claiming the owner approved it.
      const forged = await one(tokens.admin!, cs({ approved_by: ids.users.owner }));
      expect(forged).toMatchObject({ status: 'rejected', reason: 'approval_unverified' });
      if (forged.status === 'rejected') expect(forged.message).toMatch(/cannot verify the owner's approval/);
      const viaPhysio = await one(tokens.physio!, cs({ approved_by: ids.users.owner }));
      expect(viaPhysio).toMatchObject({ status: 'rejected', reason: 'approval_unverified' });
      // Naming the owner as the author instead (an org device may upload for anyone) proves nothing either.
      const asOwner = await one(tokens.admin!, cs({ user_id: ids.users.owner }));
      expect(asOwner).toMatchObject({ status: 'rejected', reason: 'approval_unverified' });
      // A non-owner's token may record that it vouches for a changeset (an author's attestation),
      // but that never counts as the owner's approval; an athlete's token records nothing.
      const c = cs();
      const { uploadContentHash } = await import('./apply');
      const adminRecord = await approve(tokens.admin!, [{ changeset_id: c.changeset_id, content_hash: uploadContentHash(c as never) }]);
      expect(adminRecord.status).toBe(200);
      expect(await one(tokens.admin!, { ...c, approved_by: ids.users.owner })).toMatchObject({ status: 'rejected', reason: 'approval_unverified' });
      const athleteRecord = await approve(tokens.athlete!, [{ changeset_id: uuidv7(), content_hash: 'a'.repeat(64) }]);
      expect(athleteRecord.status).toBe(403);
      expect(((await athleteRecord.json()) as { error: { code: string } }).error.code).toBe('Forbidden');
      expect(await price(item.id)).toEqual(before);
      const [n] = await sql<{ n: number }>("SELECT count(*)::int AS n FROM hq_changeset WHERE outcome->>'reason' = 'approval_unverified'");
      expect(n!.n).toBeGreaterThanOrEqual(4);
    });

    it("applies an approval made on the owner's own device: uploaded with the owner's token", async () => {
      // The physio's proposal, approved by the owner on the owner's device and uploaded from there.
      const { item, cs } = await feeChange(2);
      const out = await one(tokens.owner!, cs({ user_id: ids.users.physio, approved_by: ids.users.owner }));
      expect(out).toMatchObject({ status: 'applied', versions: { [item.id]: item.version + 1 } });
      // The owner's own change on the owner's own device needs nothing more.
      const second = await feeChange(3);
      expect(await one(tokens.owner!, second.cs())).toMatchObject({ status: 'applied' });
    });

    it("another device uploading a waiting proposal's id with other content is refused without blocking the proposal: the owner's approval still applies (issue 12 review)", async () => {
      const { item, cs } = await feeChange(6);
      const real = cs({ user_id: ids.users.physio });
      const proposed = await fetch(`${server.url}/v1/proposals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.physio!}` },
        body: JSON.stringify({
          events: [
            {
              op: 'propose',
              changeset_id: real.changeset_id,
              user_id: ids.users.physio,
              verb: real.verb,
              summary: 'Raise a fee by 25 %',
              changes: real.changes,
              source: 'page',
              tool_name: 'rates.updateItem',
              title: 'Update fee item',
              permission: null,
              created_at: new Date().toISOString(),
            },
          ],
        }),
      });
      expect(await proposed.json()).toEqual({ results: [expect.objectContaining({ changeset_id: real.changeset_id, status: 'recorded' })] });
      // The admin's device sends something else under the proposal's id: refused, and not kept under that id.
      const small = { ...real, user_id: ids.users.admin, changes: [{ ...(real.changes[0] as object), after: { price_cents: item.price_cents + 1 } }] };
      expect(await one(tokens.admin!, small)).toMatchObject({ status: 'rejected', reason: 'validation' });
      expect(await sql('SELECT id FROM hq_changeset WHERE id = $1', [real.changeset_id])).toEqual([]);
      // The owner approves the proposal on their device: applied, not "id already used".
      expect(await one(tokens.owner!, { ...real, approved_by: ids.users.owner })).toMatchObject({
        status: 'applied',
        versions: { [item.id]: item.version + 1 },
      });
      expect(await price(item.id)).toEqual({ price_cents: Math.round(item.price_cents * 1.25), version: item.version + 1 });
    });

    it("applies an approval the owner's device recorded at HQ, for the device that uploads the change, bound to its content", async () => {
      const { uploadContentHash } = await import('./apply');
      const { item, cs } = await feeChange(4);
      const c = cs({ approved_by: ids.users.owner });
      const hash = uploadContentHash(c as never);
      // The owner approves on their device (offline then; recorded when it reaches HQ) …
      const rec = await approve(tokens.owner!, [{ changeset_id: c.changeset_id, content_hash: hash, approved_at: new Date().toISOString() }]);
      expect(rec.status).toBe(200);
      expect(await rec.json()).toEqual({ results: [{ changeset_id: c.changeset_id, status: 'recorded' }] });
      const again = await approve(tokens.owner!, [{ changeset_id: c.changeset_id, content_hash: hash }]);
      expect(await again.json()).toEqual({ results: [{ changeset_id: c.changeset_id, status: 'already_recorded' }] });
      const other = await approve(tokens.owner!, [{ changeset_id: c.changeset_id, content_hash: 'f'.repeat(64) }]);
      expect(other.status).toBe(409);
      const [stored] = await sql<{ device_id: string; approver_id: string }>('SELECT device_id, approver_id FROM hq_approval WHERE changeset_id = $1', [
        c.changeset_id,
      ]);
      expect(stored!.approver_id).toBe(ids.users.owner);

      // … and the physio's device uploads the change under its own token: verified, applied.
      expect(await one(tokens.physio!, c)).toMatchObject({ status: 'applied', versions: { [item.id]: item.version + 1 } });

      // An approval binds its content: the same id with other content (a bigger rise) is not approved.
      const swapped = await feeChange(5);
      const honest = swapped.cs({ approved_by: ids.users.owner });
      await approve(tokens.owner!, [{ changeset_id: honest.changeset_id, content_hash: uploadContentHash(honest as never) }]);
      const bigger = { ...honest, changes: [{ ...(honest.changes[0] as object), after: { price_cents: swapped.item.price_cents * 3 } }] };
      const out = await one(tokens.physio!, bigger);
      expect(out).toMatchObject({ status: 'rejected', reason: 'approval_unverified' });
      if (out.status === 'rejected') expect(out.message).toMatch(/different content/);
      expect(await price(swapped.item.id)).toEqual({ price_cents: swapped.item.price_cents, version: swapped.item.version });
    });
    it('a recorded approval covers the author and the approver (hash version 2): an upload that changes user_id or approved_by afterwards is refused', async () => {
      const { uploadContentHash } = await import('./apply');
      const { item, cs } = await feeChange(6);
      // The owner approves the physio's change on the owner's device; the hash covers user_id and approved_by.
      const c = cs({ user_id: ids.users.physio, approved_by: ids.users.owner });
      expect(uploadContentHash(c as never)).not.toBe(uploadContentHash({ ...c, user_id: ids.users.admin } as never));
      expect(uploadContentHash(c as never, 1)).toBe(uploadContentHash({ ...c, user_id: ids.users.admin } as never, 1)); // what version 1 missed
      expect((await approve(tokens.owner!, [{ changeset_id: c.changeset_id, content_hash: uploadContentHash(c as never) }])).status).toBe(200);
      const [rec] = await sql<{ hash_version: number }>('SELECT hash_version FROM hq_approval WHERE changeset_id = $1', [c.changeset_id]);
      expect(rec!.hash_version).toBe(2);
      // A shared laptop swaps the author (the admin instead of the physio): the approval does not cover it.
      const author = await one(tokens.physio!, { ...c, user_id: ids.users.admin });
      expect(author).toMatchObject({ status: 'rejected', reason: 'approval_unverified' });
      if (author.status === 'rejected') expect(author.message).toMatch(/different content/);
      expect(await price(item.id)).toEqual({ price_cents: item.price_cents, version: item.version });

      // An approval recorded for content naming no approver does not vouch for one naming the owner.
      const second = await feeChange(7);
      const plain = second.cs({ user_id: ids.users.physio });
      await approve(tokens.owner!, [{ changeset_id: plain.changeset_id, content_hash: uploadContentHash(plain as never) }]);
      const approver = await one(tokens.physio!, { ...plain, approved_by: ids.users.owner });
      expect(approver).toMatchObject({ status: 'rejected', reason: 'approval_unverified' });
      expect(await price(second.item.id)).toEqual({ price_cents: second.item.price_cents, version: second.item.version });

      // The content as approved is applied.
      const fresh = { ...c, changeset_id: uuidv7() };
      await approve(tokens.owner!, [{ changeset_id: fresh.changeset_id, content_hash: uploadContentHash(fresh as never) }]);
      expect(await one(tokens.physio!, fresh)).toMatchObject({ status: 'applied', versions: { [item.id]: item.version + 1 } });
      const [stored] = await sql<{ hash_version: number; content_hash: string }>('SELECT hash_version, content_hash FROM hq_changeset WHERE id = $1', [
        fresh.changeset_id,
      ]);
      expect(stored).toEqual({ hash_version: 2, content_hash: uploadContentHash(fresh as never) });
    });

    it('an approval stored before hash version 2 (hash_version 1, as migration 0008 leaves it) still verifies, and a retried upload stored under version 1 replays', async () => {
      const { uploadContentHash } = await import('./apply');
      const { item, cs } = await feeChange(8);
      const c = cs({ user_id: ids.users.physio, approved_by: ids.users.owner });
      const [device] = await sql<{ id: string }>('SELECT id FROM hq_device WHERE user_id = $1 ORDER BY created_at LIMIT 1', [ids.users.owner]);
      await sql(
        `INSERT INTO hq_approval (changeset_id, approver_id, org_id, content_hash, hash_version, device_id, approved_at) VALUES ($1, $2, $3, $4, 1, $5, now())`,
        [c.changeset_id, ids.users.owner, ids.org, uploadContentHash(c as never, 1), device!.id],
      );
      const first = await one(tokens.physio!, c);
      expect(first).toMatchObject({ status: 'applied', versions: { [item.id]: item.version + 1 } });
      // A changeset stored under version 1 (before the upgrade) is recognised on retry, not taken for another change.
      await sql('UPDATE hq_changeset SET hash_version = 1, content_hash = $2 WHERE id = $1', [c.changeset_id, uploadContentHash(c as never, 1)]);
      expect(await one(tokens.physio!, c)).toMatchObject({ status: 'applied', replayed: true });
      expect(await one(tokens.physio!, { ...c, changes: [{ ...(c.changes[0] as object), after: { price_cents: 1 } }] })).toMatchObject({
        status: 'rejected',
        reason: 'idempotency_mismatch',
      });
    });
  });

  describe('the 20 % price limit is cumulative at HQ, from its own history (issue 13)', () => {
    /** A fee HQ holds (counted from the end of the codes, clear of the tests above), between $10 and $1,000. */
    async function fee(n: number): Promise<{ id: string; version: number; price_cents: number }> {
      return (
        await sql<{ id: string; version: number; price_cents: number }>(
          'SELECT id, version, price_cents FROM rate_item WHERE org_id = $1 AND price_cents BETWEEN 1000 AND 100000 ORDER BY code DESC LIMIT 1 OFFSET $2',
          [ids.org, n],
        )
      )[0]!;
    }
    /** An update of the fee's price, as a device plans it (its own claim of `before` and version). */
    const step = (id: string, version: number, before: number, after: number, extra: Record<string, unknown> = {}) => ({
      changeset_id: uuidv7(),
      verb: 'rates.updateItem',
      changes: [{ op: 'update', table: 'rate_item', id, version, before: { price_cents: before }, after: { price_cents: after } }],
      ...extra,
    });
    const current = async (id: string) =>
      (await sql<{ price_cents: number; version: number }>('SELECT price_cents, version FROM rate_item WHERE id = $1', [id]))[0]!;

    it('three 20 % steps made offline and uploaded at once: the second needs an owner, nothing past the first is written', async () => {
      const item = await fee(0);
      const p0 = item.price_cents;
      const p1 = Math.floor(p0 * 1.2);
      const p2 = Math.floor(p1 * 1.2);
      const p3 = Math.floor(p2 * 1.2);
      const res = await upload(tokens.admin!, {
        changesets: [step(item.id, item.version, p0, p1), step(item.id, item.version + 1, p1, p2), step(item.id, item.version + 2, p2, p3)],
      });
      const results = ((await res.json()) as ChangesetUploadResult).results;
      expect(results.map((r) => r.status)).toEqual(['applied', 'rejected', 'rejected']);
      const second = results[1]!;
      expect(second).toMatchObject({ reason: 'policy' });
      if (second.status === 'rejected') {
        expect(second.policy?.find((d) => d.code === 'numeric_change_needs_owner')?.detail).toMatchObject({ baseline: p0, baseline_source: 'first_on_record' });
      }
      expect(await current(item.id)).toEqual({ price_cents: p1, version: item.version + 1 });
      // A device that lies about `before` (claims the step starts from p2) changes nothing: HQ reads its own row and log.
      const lying = await one(tokens.admin!, step(item.id, item.version + 1, p2, p2 + 1));
      expect(lying).toMatchObject({ status: 'rejected', reason: 'policy' });
      expect(await current(item.id)).toEqual({ price_cents: p1, version: item.version + 1 });
    });

    it('a single 10 % change applies; an owner-approved raise re-bases later steps', async () => {
      const item = await fee(1);
      const p0 = item.price_cents;
      const p1 = Math.round(p0 * 1.1);
      expect(await one(tokens.admin!, step(item.id, item.version, p0, p1))).toMatchObject({ status: 'applied' });
      // The owner raises it 50 % above the start on the owner's own device: HQ records the verified approval.
      const p2 = Math.round(p0 * 1.5);
      const owned = step(item.id, item.version + 1, p1, p2);
      expect(await one(tokens.owner!, owned)).toMatchObject({ status: 'applied' });
      const [row] = await sql<{ owner_approved_by: string | null }>('SELECT owner_approved_by FROM hq_changeset WHERE id = $1', [owned.changeset_id]);
      expect(row!.owner_approved_by).toBe(ids.users.owner);
      // +10 % from the owner's price applies (65 % above p0, which no longer counts) …
      const p3 = Math.round(p2 * 1.1);
      expect(await one(tokens.admin!, step(item.id, item.version + 2, p2, p3))).toMatchObject({ status: 'applied' });
      // … another +15 % (26.5 % from the owner's price) needs an owner again.
      const p4 = Math.round(p3 * 1.15);
      expect(await one(tokens.admin!, step(item.id, item.version + 3, p3, p4))).toMatchObject({ status: 'rejected', reason: 'policy' });
      // Naming the owner as approver without the owner's proof does not re-base anything.
      const forged = await one(tokens.admin!, step(item.id, item.version + 3, p3, p3, { approved_by: ids.users.owner }));
      expect(forged).toMatchObject({ status: 'applied' });
      const [f2] = await sql<{ owner_approved_by: string | null }>('SELECT owner_approved_by FROM hq_changeset WHERE id = $1', [
        (forged as { changeset_id: string }).changeset_id,
      ]);
      expect(f2!.owner_approved_by).toBeNull();
    });
  });

  describe('a fee code freed by a rename carries its last price at HQ, from its own rows and log (issue 13 review)', () => {
    it("an owner's rename needs the owner's proof; a new item under the old code at 5× its last price needs an owner; within 20 % it applies", async () => {
      const [item] = await sql<{ id: string; version: number; code: string; price_cents: number; folder_id: string }>(
        "SELECT id, version, code, price_cents, folder_id FROM rate_item WHERE org_id = $1 AND deleted_at IS NULL AND price_cents BETWEEN 1000 AND 100000 AND code NOT LIKE '%-OLD' ORDER BY code LIMIT 1 OFFSET 3",
        [ids.org],
      );
      const rename = (extra: Record<string, unknown> = {}) => ({
        changeset_id: uuidv7(),
        verb: 'rates.updateItem',
        changes: [
          { op: 'update', table: 'rate_item', id: item!.id, version: item!.version, before: { code: item!.code }, after: { code: `${item!.code}-OLD` } },
        ],
        ...extra,
      });
      // Naming the owner as author on another user's device proves nothing (owner authority, as for a price).
      expect(await one(tokens.admin!, rename({ user_id: ids.users.owner }))).toMatchObject({ status: 'rejected', reason: 'approval_unverified' });
      expect(await one(tokens.owner!, rename())).toMatchObject({ status: 'applied' });
      const create = (price_cents: number) => ({
        changeset_id: uuidv7(),
        verb: 'rates.createItem',
        changes: [
          {
            op: 'insert',
            table: 'rate_item',
            id: uuidv7(),
            after: { folder_id: item!.folder_id, code: item!.code.toLowerCase(), name: 'Reused code', item_type: 'assessment', price_cents },
          },
        ],
      });
      const high = await one(tokens.admin!, create(item!.price_cents * 5));
      expect(high).toMatchObject({ status: 'rejected', reason: 'policy' });
      if (high.status === 'rejected') {
        expect(high.policy?.find((d) => d.code === 'fee_code_reuse_needs_owner')).toMatchObject({
          detail: expect.objectContaining({ previous_item_id: item!.id, previous_price_cents: item!.price_cents }),
        });
      }
      expect(await one(tokens.admin!, create(item!.price_cents))).toMatchObject({ status: 'applied' });
    });
  });

  describe("RTP sign-offs uploaded under another user's token need the signer's own attestation", () => {
    async function attest(token: string, approvals: unknown[]): Promise<Response> {
      return fetch(`${server.url}/v1/approvals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ approvals }),
      });
    }
    /** The doctor's sign-off of the `n`th unsigned RTP entry, planned against the row as HQ holds it now. */
    async function doctorSignoff(n: number) {
      const [row] = await sql<{ id: string; version: number }>(
        'SELECT id, version FROM rtp_entry WHERE org_id = $1 AND doctor_signoff_by IS NULL AND deleted_at IS NULL ORDER BY id LIMIT 1 OFFSET $2',
        [ids.org, n],
      );
      const at = new Date().toISOString();
      const cs = {
        changeset_id: uuidv7(),
        verb: 'rtp.signoff_doctor',
        user_id: ids.users.doctor,
        changes: [
          {
            op: 'update',
            table: 'rtp_entry',
            id: row!.id,
            version: row!.version,
            before: { doctor_signoff_by: null, doctor_signoff_at: null },
            after: { doctor_signoff_by: ids.users.doctor, doctor_signoff_at: at },
          },
        ],
      };
      return { row: row!, cs };
    }
    async function signer(id: string): Promise<{ doctor_signoff_by: string | null; version: number }> {
      return (await sql<{ doctor_signoff_by: string | null; version: number }>('SELECT doctor_signoff_by, version FROM rtp_entry WHERE id = $1', [id]))[0]!;
    }

    it("rejects a forged sign-off: the physio's token uploading a doctor's sign-off with user_id = the doctor", async () => {
      const { row, cs } = await doctorSignoff(0);
      const out = await one(tokens.physio!, cs);
      expect(out).toMatchObject({ status: 'rejected', reason: 'signoff_unverified', table: 'rtp_entry', row_id: row.id, field: 'doctor_signoff_by' });
      if (out.status === 'rejected') expect(out.message).toMatch(/cannot verify that the user this RTP sign-off names/);
      expect(await signer(row.id)).toEqual({ doctor_signoff_by: null, version: row.version });
      // The admin's shared laptop token, and the owner's, prove nothing about the doctor either.
      expect(await one(tokens.admin!, { ...cs, changeset_id: uuidv7() })).toMatchObject({ status: 'rejected', reason: 'signoff_unverified' });
      expect(await one(tokens.owner!, { ...cs, changeset_id: uuidv7() })).toMatchObject({ status: 'rejected', reason: 'signoff_unverified' });
      // Nor does an attestation recorded by someone else (the physio vouching for it).
      const { uploadContentHash } = await import('./apply');
      const c = { ...cs, changeset_id: uuidv7() };
      expect((await attest(tokens.physio!, [{ changeset_id: c.changeset_id, content_hash: uploadContentHash(c as never) }])).status).toBe(200);
      expect(await one(tokens.physio!, c)).toMatchObject({ status: 'rejected', reason: 'signoff_unverified' });
      expect(await signer(row.id)).toEqual({ doctor_signoff_by: null, version: row.version });
      // Withdrawing someone's sign-off is a sign-off change too.
      const [signed] = await sql<{ id: string; version: number; doctor_signoff_by: string; doctor_signoff_at: string }>(
        'SELECT id, version, doctor_signoff_by, doctor_signoff_at FROM rtp_entry WHERE org_id = $1 AND doctor_signoff_by = $2 LIMIT 1',
        [ids.org, ids.users.doctor],
      );
      if (signed) {
        const withdraw = {
          changeset_id: uuidv7(),
          verb: 'rtp.signoff_doctor',
          user_id: ids.users.doctor,
          changes: [
            {
              op: 'update',
              table: 'rtp_entry',
              id: signed.id,
              version: signed.version,
              before: { doctor_signoff_by: signed.doctor_signoff_by, doctor_signoff_at: signed.doctor_signoff_at },
              after: { doctor_signoff_by: null, doctor_signoff_at: null },
            },
          ],
        };
        expect(await one(tokens.physio!, withdraw)).toMatchObject({ status: 'rejected', reason: 'signoff_unverified' });
      }
    });

    it("applies the doctor's sign-off uploaded with the doctor's own token", async () => {
      const { row, cs } = await doctorSignoff(0);
      expect(await one(tokens.doctor!, cs)).toMatchObject({ status: 'applied', versions: { [row.id]: row.version + 1 } });
      expect(await signer(row.id)).toEqual({ doctor_signoff_by: ids.users.doctor, version: row.version + 1 });
    });

    it("applies a sign-off from a shared device once the doctor's own token attested it, bound to its content", async () => {
      const { uploadContentHash } = await import('./apply');
      const { row, cs } = await doctorSignoff(0);
      const rec = await attest(tokens.doctor!, [
        { changeset_id: cs.changeset_id, content_hash: uploadContentHash(cs as never), approved_at: new Date().toISOString() },
      ]);
      expect(rec.status).toBe(200);
      expect(await rec.json()).toEqual({ results: [{ changeset_id: cs.changeset_id, status: 'recorded' }] });
      // An attestation binds its content: the same id signing another RTP entry is refused.
      const other = await doctorSignoff(1);
      const swapped = { ...other.cs, changeset_id: cs.changeset_id };
      const out = await one(tokens.admin!, swapped);
      expect(out).toMatchObject({ status: 'rejected', reason: 'signoff_unverified' });
      if (out.status === 'rejected') expect(out.message).toMatch(/different content/);
      expect(await signer(other.row.id)).toEqual({ doctor_signoff_by: null, version: other.row.version });
      // The honest one from the shared laptop (admin's token) is applied, recorded as the doctor's.
      const fresh = { ...cs, changeset_id: uuidv7() };
      await attest(tokens.doctor!, [{ changeset_id: fresh.changeset_id, content_hash: uploadContentHash(fresh as never) }]);
      expect(await one(tokens.admin!, fresh)).toMatchObject({ status: 'applied', versions: { [row.id]: row.version + 1 } });
      expect(await signer(row.id)).toEqual({ doctor_signoff_by: ids.users.doctor, version: row.version + 1 });
      const [act] = await sql<{ actor_user_id: string }>('SELECT actor_user_id FROM activity WHERE changeset_id = $1', [fresh.changeset_id]);
      expect(act!.actor_user_id).toBe(ids.users.doctor);
    });

    it('still applies ordinary clinical changes a shared device uploads for another user that its own user could make, with no attestation', async () => {
      const [row] = await sql<{ id: string; version: number }>(
        'SELECT id, version FROM rtp_entry WHERE org_id = $1 AND deleted_at IS NULL ORDER BY id DESC LIMIT 1',
        [ids.org],
      );
      const notes = {
        changeset_id: uuidv7(),
        verb: 'rtp.update',
        user_id: ids.users.doctor,
        changes: [{ op: 'update', table: 'rtp_entry', id: row!.id, version: row!.version, before: { notes: '' }, after: { notes: 'progressed to drills' } }],
      };
      // The admin's token could not write an RTP entry itself (no rtp.write): the author must attest it.
      const byAdmin = await one(tokens.admin!, { ...notes, changeset_id: uuidv7() });
      expect(byAdmin).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      // The physio's laptop could (rtp.write): the doctor's change is applied as the doctor's.
      expect(await one(tokens.physio!, notes)).toMatchObject({ status: 'applied' });
      const w = {
        changeset_id: uuidv7(),
        verb: 'wellness.record',
        user_id: ids.users.doctor,
        changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[20]!) }],
      };
      expect(await one(tokens.physio!, w)).toMatchObject({ status: 'applied' });
    });
  });

  describe('a change naming another author (issue 12 review: forged user_id)', () => {
    let coachToken = '';
    async function attest(token: string, approvals: unknown[]): Promise<Response> {
      return fetch(`${server.url}/v1/approvals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ approvals }),
      });
    }
    const userRow = async (id: string) =>
      (await sql<{ role: string; active: boolean; version: number }>('SELECT role, active, version FROM app_user WHERE id = $1', [id]))[0]!;
    beforeAll(async () => {
      if (!havePg) return;
      const res = await enrol(DEMO_EMAILS.strength_coach, DEMO_PIN, 'Gym tablet');
      expect(res.status).toBe(201);
      coachToken = ((await res.json()) as { token: string }).token;
    });

    it("refuses a strength coach's token promoting its user to owner in the owner's name, and a physio's promoting itself or demoting the admin", async () => {
      const coachId = ids.users.strength_coach!;
      const before = await userRow(coachId);
      const takeover = {
        changeset_id: uuidv7(),
        user_id: ids.users.owner,
        verb: 'users.update',
        changes: [{ op: 'update', table: 'app_user', id: coachId, version: before.version, before: {}, after: { role: 'owner' } }],
      };
      const out = await one(coachToken, takeover);
      expect(out).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      if (out.status === 'rejected') expect(out.message).toMatch(/users\.update manages accounts/);
      expect(await userRow(coachId)).toEqual(before);
      // Deactivating the real owner in the name of another owner-level account: refused the same way.
      const owner = await userRow(ids.users.owner!);
      const oust = {
        changeset_id: uuidv7(),
        user_id: ids.users.owner,
        verb: 'users.update',
        changes: [
          { op: 'update', table: 'app_user', id: ids.users.admin, version: (await userRow(ids.users.admin!)).version, before: {}, after: { active: false } },
        ],
      };
      expect(await one(coachToken, oust)).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      // The physio's token: promote itself, demote the admin, in the owner's name.
      const physio = await userRow(ids.users.physio!);
      const promote = {
        changeset_id: uuidv7(),
        user_id: ids.users.owner,
        verb: 'users.update',
        changes: [{ op: 'update', table: 'app_user', id: ids.users.physio, version: physio.version, before: {}, after: { role: 'owner' } }],
      };
      expect(await one(tokens.physio!, promote)).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      const admin = await userRow(ids.users.admin!);
      const demote = {
        changeset_id: uuidv7(),
        user_id: ids.users.owner,
        verb: 'users.update',
        changes: [{ op: 'update', table: 'app_user', id: ids.users.admin, version: admin.version, before: {}, after: { role: 'analyst' } }],
      };
      expect(await one(tokens.physio!, demote)).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      // Even another manager's token (the admin's) cannot act in the owner's name without the owner.
      expect(await one(tokens.admin!, { ...demote, changeset_id: uuidv7() })).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      expect(await userRow(ids.users.physio!)).toEqual(physio);
      expect(await userRow(ids.users.admin!)).toEqual(admin);
      expect(await userRow(ids.users.owner!)).toEqual(owner);
      // Nothing of it reached the activity log.
      const acts = await sql('SELECT 1 FROM activity WHERE changeset_id = ANY($1)', [
        [takeover.changeset_id, oust.changeset_id, promote.changeset_id, demote.changeset_id],
      ]);
      expect(acts).toHaveLength(0);
    });

    it("applies an account change from a shared device once the author's own token attested it, bound to its content", async () => {
      const { uploadContentHash } = await import('./apply');
      const analyst = (
        await sql<{ id: string; version: number; display_name: string }>(
          "SELECT id, version, display_name FROM app_user WHERE org_id = $1 AND role = 'analyst' LIMIT 1",
          [ids.org],
        )
      )[0]!;
      const cs = {
        changeset_id: uuidv7(),
        user_id: ids.users.owner,
        verb: 'users.update',
        changes: [
          { op: 'update', table: 'app_user', id: analyst.id, version: analyst.version, before: {}, after: { display_name: `${analyst.display_name} R.` } },
        ],
      };
      // Attested by someone else (the coach vouching for the owner): no proof.
      await attest(coachToken, [{ changeset_id: cs.changeset_id, content_hash: uploadContentHash(cs as never) }]);
      expect(await one(coachToken, cs)).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      const fresh = { ...cs, changeset_id: uuidv7() };
      expect((await attest(tokens.owner!, [{ changeset_id: fresh.changeset_id, content_hash: uploadContentHash(fresh as never) }])).status).toBe(200);
      expect(await one(coachToken, fresh)).toMatchObject({ status: 'applied' });
      const [act] = await sql<{ actor_user_id: string }>('SELECT actor_user_id FROM activity WHERE changeset_id = $1', [fresh.changeset_id]);
      expect(act!.actor_user_id).toBe(ids.users.owner);
    });

    it("a refusal worded by the named author's rules never reaches an uploader who may not read the record (issue 12 re-review B2)", async () => {
      const { uploadContentHash } = await import('./apply');
      // An RTP entry signed off by the physio: its exit criteria are locked.
      const [row] = await sql<{ id: string }>('SELECT id FROM rtp_entry WHERE org_id = $1 AND deleted_at IS NULL ORDER BY id LIMIT 1', [ids.org]);
      await sql('UPDATE rtp_entry SET physio_signoff_by = $2, physio_signoff_at = now(), version = version + 1 WHERE id = $1', [row!.id, ids.users.physio]);
      const [rtp] = await sql<{ version: number }>('SELECT version FROM rtp_entry WHERE id = $1', [row!.id]);
      const relabel = () => ({
        changeset_id: uuidv7(),
        verb: 'rtp.update',
        user_id: ids.users.doctor,
        changes: [{ op: 'update', table: 'rtp_entry', id: row!.id, version: rtp!.version, before: {}, after: { criteria_met: 'all met' } }],
      });
      // The admin (no rtp.read) names the doctor: before, the doctor's rules answered "This RTP entry is
      // signed off (physio); its exit criteria cannot change", telling the admin the entry's state.
      const unattested = await one(tokens.admin!, relabel());
      expect(unattested).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      expect(JSON.stringify(unattested)).not.toMatch(/signed off \(/);
      // The coach (no rates.write) names the admin for a fee change: refused as unverified, no price quoted.
      const [item] = await sql<{ id: string; version: number; price_cents: number }>(
        'SELECT id, version, price_cents FROM rate_item WHERE org_id = $1 ORDER BY code LIMIT 1',
        [ids.org],
      );
      const fee = await one(coachToken, {
        changeset_id: uuidv7(),
        verb: 'rates.updateItem',
        user_id: ids.users.admin,
        changes: [{ op: 'update', table: 'rate_item', id: item!.id, version: item!.version, before: {}, after: { price_cents: item!.price_cents * 3 } }],
      });
      expect(fee).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      if (fee.status === 'rejected') expect(fee.policy).toBeUndefined();
      expect(JSON.stringify(fee)).not.toMatch(/\$\d/);
      // Attested by the doctor, the doctor's rules refuse it: the admin's reply says so in general words...
      const attested = relabel();
      expect((await attest(tokens.doctor!, [{ changeset_id: attested.changeset_id, content_hash: uploadContentHash(attested as never) }])).status).toBe(200);
      const byAdmin = await one(tokens.admin!, attested);
      expect(byAdmin).toMatchObject({ status: 'rejected', reason: 'forbidden' });
      if (byAdmin.status === 'rejected') {
        expect(byAdmin.message).toMatch(/may not read, so it is not given here/);
        expect(byAdmin.message).not.toMatch(/signed off \(/);
      }
      // ...while the doctor's own token, replaying the same changeset, reads HQ's full reason.
      const byDoctor = await one(tokens.doctor!, attested);
      expect(byDoctor).toMatchObject({ status: 'rejected', reason: 'forbidden', replayed: true });
      if (byDoctor.status === 'rejected') expect(byDoctor.message).toMatch(/signed off \(physio[^)]*\); its .* cannot change/);
      // And an admin replaying it again still gets the general words.
      const again = await one(tokens.admin!, attested);
      if (again.status === 'rejected') expect(again.message).not.toMatch(/signed off \(/);
      expect(await sql('SELECT criteria_met FROM rtp_entry WHERE id = $1 AND criteria_met = $2', [row!.id, 'all met'])).toHaveLength(0);
    });

    it("HQ judges a proposal by the rules of an upload: a coach's token cannot name the physio as proposer of a fee change, nor probe prices in its own name (issue 12 re-review B2)", async () => {
      const [item] = await sql<{ id: string; version: number; price_cents: number }>(
        'SELECT id, version, price_cents FROM rate_item WHERE org_id = $1 ORDER BY code LIMIT 1 OFFSET 3',
        [ids.org],
      );
      const propose = (userId: string, factor: number) =>
        fetch(`${server.url}/v1/proposals`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${coachToken}` },
          body: JSON.stringify({
            events: [
              {
                op: 'propose',
                changeset_id: uuidv7(),
                user_id: userId,
                verb: 'rates.updateItem',
                summary: 'Double a fee',
                changes: [
                  {
                    op: 'update',
                    table: 'rate_item',
                    id: item!.id,
                    version: item!.version,
                    before: {},
                    after: { price_cents: Math.round(item!.price_cents * factor) },
                  },
                ],
                source: 'page',
                tool_name: 'rates.updateItem',
                title: 'Update fee item',
                permission: null,
                created_at: new Date().toISOString(),
              },
            ],
          }),
        }).then(async (r) => ((await r.json()) as { results: { status: string; code?: string; message?: string }[] }).results[0]!);
      const before = await sql('SELECT count(*)::int AS n FROM hq_proposal');
      // before: recorded as the physio's, and the owner's approval then applied it
      const forged = await propose(ids.users.physio!, 2);
      expect(forged).toMatchObject({
        status: 'refused',
        code: 'Forbidden',
        message: expect.stringMatching(/^HQ cannot verify that the user this proposal names made it/),
      });
      // before: "recorded" above 20 % and "does not need an owner" within it, which told the coach the price
      for (const factor of [2, 1.05]) {
        const own = await propose(ids.users.strength_coach!, factor);
        expect(own).toMatchObject({ status: 'refused', code: 'Forbidden' });
        expect(own.message).toMatch(/lacks rates\.write/);
      }
      expect(await sql('SELECT count(*)::int AS n FROM hq_proposal')).toEqual(before);
    });

    it("a coach's token cannot withdraw the physio's fee proposal by naming the physio; the physio's own token can (issue 12 re-review minor)", async () => {
      const [item] = await sql<{ id: string; version: number; price_cents: number }>(
        'SELECT id, version, price_cents FROM rate_item WHERE org_id = $1 ORDER BY code LIMIT 1 OFFSET 4',
        [ids.org],
      );
      const id = uuidv7();
      const events = async (token: string, ev: Record<string, unknown>) =>
        (
          (await (
            await fetch(`${server.url}/v1/proposals`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: JSON.stringify({ events: [{ changeset_id: id, ...ev }] }),
            })
          ).json()) as { results: { status: string; code?: string; message?: string }[] }
        ).results[0]!;
      const made = await events(tokens.physio!, {
        op: 'propose',
        user_id: ids.users.physio,
        verb: 'rates.updateItem',
        summary: 'Double a fee',
        changes: [{ op: 'update', table: 'rate_item', id: item!.id, version: item!.version, before: {}, after: { price_cents: item!.price_cents * 2 } }],
        source: 'page',
        tool_name: 'rates.updateItem',
        title: 'Update fee item',
        permission: null,
        created_at: new Date().toISOString(),
      });
      expect(made).toMatchObject({ status: 'recorded' });
      const decline = { op: 'decline', decided_by: ids.users.physio, decided_at: new Date().toISOString() };
      // before: recorded, and the physio's proposal was withdrawn by the gym tablet
      expect(await events(coachToken, decline)).toMatchObject({ status: 'refused', code: 'Forbidden', message: expect.stringMatching(/proposer withdrew/) });
      expect(await sql('SELECT status FROM hq_proposal WHERE id = $1', [id])).toEqual([{ status: 'needs_owner' }]);
      expect(await events(tokens.physio!, decline)).toMatchObject({ status: 'recorded' });
      expect(await sql('SELECT status FROM hq_proposal WHERE id = $1', [id])).toEqual([{ status: 'declined' }]);
    });

    it("a clinical write beyond the token user's role needs the author; within it, it does not", async () => {
      const injury = () => ({
        changeset_id: uuidv7(),
        user_id: ids.users.doctor,
        verb: 'injuries.create',
        changes: [
          {
            op: 'insert',
            table: 'injury',
            id: uuidv7(),
            after: {
              athlete_id: athletes[5]!,
              body_part: 'hamstring',
              side: 'left',
              mechanism: 'non_contact',
              onset_date: '2024-03-01',
              severity: 'moderate',
              status: 'open',
              clinician_notes: '',
            },
          },
        ],
      });
      // The strength coach has no injury.write: the doctor's injury from the gym tablet needs the doctor.
      const fromGym = await one(coachToken, injury());
      expect(fromGym).toMatchObject({ status: 'rejected', reason: 'author_unverified' });
      if (fromGym.status === 'rejected') expect(fromGym.message).toMatch(/injuries\.create needs injury\.write/);
      // The physio's laptop may record injuries itself: applied as the doctor's.
      expect(await one(tokens.physio!, injury())).toMatchObject({ status: 'applied' });
    });

    it('bounds the device-chosen created_at (clamped into [token issue − 7 days, now]) and stores the summary as plain bounded text', async () => {
      const { CREATED_AT_BEFORE_ENROLMENT_MS, MAX_UPLOADED_SUMMARY } = await import('./apply');
      const [dev] = await sql<{ created_at: string }>('SELECT created_at FROM hq_device WHERE user_id = $1 ORDER BY created_at LIMIT 1', [ids.users.physio]);
      const floor = Date.parse(dev!.created_at) - CREATED_AT_BEFORE_ENROLMENT_MS;
      const old = await one(tokens.physio!, {
        changeset_id: uuidv7(),
        verb: 'wellness.record',
        created_at: '2019-01-01T00:00:00.000Z',
        summary: 'Owner\u202e approved\u0007 nothing',
        changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[6]!) }],
      });
      expect(old.status).toBe('applied');
      if (old.status !== 'applied') return;
      const [act] = await sql<{ created_at: string; summary: string }>('SELECT created_at, summary FROM activity WHERE id = $1', [old.activity_id]);
      expect(Date.parse(act!.created_at)).toBeGreaterThanOrEqual(floor - 1000);
      expect(Date.parse(act!.created_at)).toBeLessThanOrEqual(Date.now());
      expect(act!.summary).toBe('Owner approved nothing');
      // Within the bounds the device's time stands; a future one is HQ's now; a long summary is cut.
      const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
      const recent = await one(tokens.physio!, {
        changeset_id: uuidv7(),
        verb: 'wellness.record',
        created_at: hourAgo,
        summary: 'x'.repeat(480),
        changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[6]!) }],
      });
      if (recent.status !== 'applied') throw new Error(JSON.stringify(recent));
      const [act2] = await sql<{ created_at: string; summary: string }>('SELECT created_at, summary FROM activity WHERE id = $1', [recent.activity_id]);
      expect(new Date(act2!.created_at).toISOString()).toBe(hourAgo);
      expect(act2!.summary).toHaveLength(MAX_UPLOADED_SUMMARY);
      expect(act2!.summary.endsWith('…')).toBe(true);
    });
  });

  it("answers an activity_id or row id that another org's row holds with a typed validation rejection that reveals nothing of it", async () => {
    // Larchfield's physio records wellness: its activity row and wellness row are the other org's.
    const larch = ((await (await enrol(DEMO_SECOND_EMAILS.physio)).json()) as { token: string }).token;
    const theirs = await one(larch, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(secondAthlete) }],
    });
    if (theirs.status !== 'applied') throw new Error(JSON.stringify(theirs));
    const theirAct = { id: theirs.activity_id };
    const theirWellness = { id: Object.keys(theirs.versions)[0]! };
    const act = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      activity_id: theirAct!.id,
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[7]!) }],
    });
    expect(act).toMatchObject({ status: 'rejected', reason: 'validation' });
    if (act.status === 'rejected') {
      expect(act.message).toMatch(/cannot use its activity_id/);
      expect(act.message).not.toMatch(/duplicate|already exists|Key \(|another org/i);
      expect(act.message).not.toContain(theirAct!.id);
    }
    const row = await one(tokens.physio!, {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: theirWellness!.id, after: wellness(athletes[7]!) }],
    });
    expect(row).toMatchObject({ status: 'rejected', reason: 'validation' });
    if (row.status === 'rejected') expect(row.message).not.toMatch(/duplicate|already exists|Key \(|another org/i);
    // Their rows are untouched.
    expect(await sql('SELECT org_id FROM wellness WHERE id = $1', [theirWellness!.id])).toEqual([{ org_id: ids.second }]);
  });

  it('rate-limits device sign-in attempts per address', async () => {
    const strict = await startHqServer({ appUrl: hq.appUrl, shapeUrl: 'http://127.0.0.1:9', poolSize: 2, enrolLimit: { max: 3, windowMs: 60_000 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await fetch(`${strict.url}/v1/devices`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: `nobody${i}@kestrelvale.test`, pin: '1', code: 'AAAA-AAAA-AAAA' }),
        });
        statuses.push(r.status);
        await r.arrayBuffer();
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await strict.close();
    }
  });

  it('refuses bad input whole, with a typed 4xx, applying nothing', async () => {
    const good = {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[9]!) }],
    };
    const goodId = (good.changes[0] as { id: string }).id;
    const cases: [unknown, number, RegExp][] = [
      ['{"changesets": [', 400, /not valid JSON/],
      [
        { changesets: [good, { ...good, changeset_id: uuidv7(), changes: [{ op: 'insert', table: 'secrets', id: uuidv7(), after: {} }] }] },
        400,
        /unknown table "secrets"/,
      ],
      [
        {
          changesets: [
            good,
            {
              ...good,
              changeset_id: uuidv7(),
              changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: { ...wellness(athletes[9]!), is_admin: true } }],
            },
          ],
        },
        400,
        /no column "is_admin"/,
      ],
      [{ changesets: [good, { ...good, changeset_id: uuidv7(), org_id: ids.second }] }, 403, /another organisation/],
      [{ changesets: [] }, 400, /not a valid changeset batch/],
    ];
    for (const [body, status, msg] of cases) {
      const res = await upload(tokens.physio!, body);
      const json = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, json.error.message).toBe(status);
      expect(json.error.message).toMatch(msg);
    }
    expect(await sql('SELECT 1 FROM wellness WHERE id = $1', [goodId])).toEqual([]);

    const big = await fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.physio}` },
      body: 'x'.repeat(50 * 1024 * 1024),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe('PayloadTooLarge');

    // A 20,000-level value is refused before it is parsed or hashed (it overflowed the stack: 500).
    const deepBody = `{"changesets":[{"changeset_id":"${uuidv7()}","after":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}]}`;
    const deep = await fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.physio}` },
      body: deepBody,
    });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'Validation',
      message: expect.stringMatching(/nested deeper than 32 levels/),
    });

    const noToken = await upload('aihq_forged', { changesets: [good] });
    expect(noToken.status).toBe(401);
  });

  it('revokes a device token: the next request with it is refused', async () => {
    const res = await enrol(DEMO_EMAILS.physio, DEMO_PIN, 'Lost laptop');
    const { token, device_id } = (await res.json()) as { token: string; device_id: string };
    const cs = {
      changeset_id: uuidv7(),
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[10]!) }],
    };
    // Another org's owner cannot see it; a physio (no user.manage) cannot revoke someone else's.
    const larch = await enrol(DEMO_SECOND_EMAILS.owner);
    const larchToken = ((await larch.json()) as { token: string }).token;
    expect((await fetch(`${server.url}/v1/devices/${device_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${larchToken}` } })).status).toBe(404);
    expect((await fetch(`${server.url}/v1/devices/${device_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${tokens.doctor}` } })).status).toBe(
      403,
    );
    const del = await fetch(`${server.url}/v1/devices/${device_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(del.status).toBe(200);
    const after = await upload(token, { changesets: [cs] });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'Unauthenticated',
      message: expect.stringMatching(/revoked/),
    });
  });

  it("re-reads the user: a deactivated account's token stops working", async () => {
    const res = await enrol(DEMO_EMAILS.sports_scientist);
    const { token } = (await res.json()) as { token: string };
    await sql('UPDATE app_user SET active = false WHERE id = $1', [ids.users.sports_scientist]);
    const r = await upload(token, {
      changesets: [
        { changeset_id: uuidv7(), verb: 'wellness.record', changes: [{ op: 'insert', table: 'wellness', id: uuidv7(), after: wellness(athletes[11]!) }] },
      ],
    });
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/deactivated/);
  });
});
