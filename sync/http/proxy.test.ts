/**
 * GET /v1/shape through the HQ proxy, in front of the real embedded shape service reading as the
 * replication role, with the real `@electric-sql/client`: the proxy sets the table's tenant
 * `where`, so a device sees its org (athletes: their own athlete) and a forged `where` or org
 * narrows at most; PIN hashes travel (never PINs); a write through POST /v1/changesets arrives live
 * carrying the txid HQ returned; a long-poll has a maximum lifetime.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shape, ShapeStream, type Message, type Row } from '@electric-sql/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from 'uuidv7';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import type { ChangesetUploadResult } from '../../models/sync';
import { initialiseHq } from '../seed';
import { startHqServer, type HqServer } from '../server';
import { startShapeServer, type ShapeServer } from '../shape/server';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { enrolmentCodeFor } from '../testing/enrolment';
import { HQ_PUBLICATION } from '../pg/roles';

const TODAY = new Date().toISOString().slice(0, 10);
/** A day of its own for each uploaded wellness row (one live row per athlete and day; the demo seed fills the recent weeks). */
let daysBack = 730;
const freshDay = (): string => new Date(Date.now() - daysBack++ * 86_400_000).toISOString().slice(0, 10);
const SECRET = 'proxy-test-secret';

async function waitFor<T>(what: string, fn: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!havePg)('HQ shape proxy', () => {
  const hq = useHqDatabase();
  let shapes: ShapeServer;
  let server: HqServer;
  let storage = '';
  let summary: { orgId: string; secondOrgId: string; linkedAthleteId: string };
  const tokens: Record<string, string> = {};
  const aborts: AbortController[] = [];

  const stream = (token: string, params: Record<string, string>): ShapeStream<Row> => {
    const ac = new AbortController();
    aborts.push(ac);
    return new ShapeStream<Row>({ url: `${server.url}/v1/shape`, params: params as never, headers: { Authorization: `Bearer ${token}` }, signal: ac.signal });
  };
  const rowsOf = async (token: string, params: Record<string, string>): Promise<Row[]> => new Shape(stream(token, params)).rows;
  const get = (token: string, query: string): Promise<Response> => fetch(`${server.url}/v1/shape?${query}`, { headers: { authorization: `Bearer ${token}` } });

  const uploadWellness = async (id: string, notes: string): Promise<ChangesetUploadResult['results'][number]> => {
    const res = await fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.physio}` },
      body: JSON.stringify({
        changesets: [
          {
            changeset_id: uuidv7(),
            verb: 'wellness.record',
            changes: [
              {
                op: 'insert',
                table: 'wellness',
                id,
                after: { athlete_id: summary.linkedAthleteId, date: freshDay(), sleep: 4, soreness: 2, stress: 3, mood: 4, fatigue: 2, notes },
              },
            ],
          },
        ],
      }),
    });
    return ((await res.json()) as ChangesetUploadResult).results[0]!;
  };
  /** Follow a shape through the proxy with raw requests until up-to-date; returns where it stands. */
  const catchUp = async (token: string, table: string): Promise<{ handle: string; offset: string }> => {
    let r = await get(token, `table=${table}&offset=-1`);
    let handle = r.headers.get('electric-handle')!;
    let offset = r.headers.get('electric-offset')!;
    await r.arrayBuffer();
    for (let i = 0; i < 50 && r.headers.get('electric-up-to-date') === null; i++) {
      r = await get(token, `table=${table}&offset=${offset}&handle=${handle}`);
      handle = r.headers.get('electric-handle') ?? handle;
      offset = r.headers.get('electric-offset') ?? offset;
      await r.arrayBuffer();
    }
    return { handle, offset };
  };

  beforeAll(async () => {
    if (!havePg) return;
    const init = await initialiseHq(hq.ownerUrl, { seed: 1, today: TODAY });
    if (!init.initialised || !init.seeded) throw new Error('seed failed');
    summary = init.summary;
    storage = mkdtempSync(join(tmpdir(), 'ai-hq-shapes-'));
    shapes = await startShapeServer({
      databaseUrl: hq.replicationUrl,
      storageDir: storage,
      port: 0,
      secret: SECRET,
      slot: 'hq_shapes',
      publication: HQ_PUBLICATION,
      longPollTimeoutMs: 3_000,
    });
    server = await startHqServer({ appUrl: hq.appUrl, shapeUrl: shapes.url, shapeSecret: SECRET, maxLongPollMs: 10_000, poolSize: 4 });
    for (const role of ['physio', 'athlete', 'admin'] as const) {
      const res = await fetch(`${server.url}/v1/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: DEMO_EMAILS[role], pin: DEMO_PIN, code: await enrolmentCodeFor(hq.appUrl, DEMO_EMAILS[role]), name: `${role} laptop` }),
      });
      tokens[role] = ((await res.json()) as { token: string }).token;
    }
  });
  afterAll(async () => {
    for (const a of aborts) a.abort();
    await server?.close();
    await shapes?.close();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  it("gives a device its own org's rows only", async () => {
    const athletes = await rowsOf(tokens.physio!, { table: 'athlete' });
    expect(athletes.length).toBe(46);
    expect(new Set(athletes.map((a) => a.org_id))).toEqual(new Set([summary.orgId]));
    const orgs = await rowsOf(tokens.physio!, { table: 'organization' });
    expect(orgs.map((o) => o.id)).toEqual([summary.orgId]);
  });

  it('lets a client narrow a shape, never widen it', async () => {
    const forgedOrg = await rowsOf(tokens.physio!, { table: 'athlete', where: `org_id = '${summary.secondOrgId}'` });
    expect(forgedOrg).toEqual([]);
    const orTrue = await rowsOf(tokens.physio!, { table: 'athlete', where: `org_id = '${summary.secondOrgId}' OR true` });
    expect(orTrue.length).toBe(46);
    const narrowed = await rowsOf(tokens.physio!, { table: 'athlete', where: 'sex = $1', 'params[1]': 'female' });
    expect(narrowed.length).toBe(20);
    for (const escape of ['true) OR (true', "name = 'x') OR (1=1", 'true; DROP TABLE athlete', 'true -- ']) {
      const res = await get(tokens.physio!, `table=athlete&offset=-1&where=${encodeURIComponent(escape)}`);
      expect(res.status, escape).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('Validation');
    }
  });

  it("cannot read another org's shape by reusing its handle", async () => {
    const a = await get(tokens.physio!, 'table=squad&offset=-1');
    const handle = a.headers.get('electric-handle')!;
    const offset = a.headers.get('electric-offset')!;
    await a.arrayBuffer();
    const larch = await fetch(`${server.url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'owner@larchfield.test', pin: DEMO_PIN, code: await enrolmentCodeFor(hq.appUrl, 'owner@larchfield.test'), name: 'x' }),
    });
    const larchToken = ((await larch.json()) as { token: string }).token;
    for (const q of [`table=squad&offset=-1&handle=${handle}`, `table=squad&offset=${offset}&handle=${handle}`]) {
      const r = await get(larchToken, q);
      const body = r.status === 200 ? ((await r.json()) as { value?: { org_id: string } }[]) : (await r.arrayBuffer(), []);
      expect(
        body.filter((m) => m.value).every((m) => m.value!.org_id === summary.secondOrgId),
        q,
      ).toBe(true);
      expect(r.headers.get('electric-handle') === handle && r.status === 200 && body.some((m) => m.value), q).toBe(false);
    }
  });

  it('self-scopes athlete devices and refuses tables a role may not read', async () => {
    const vitals = await rowsOf(tokens.athlete!, { table: 'vitals' });
    expect(vitals.length).toBeGreaterThan(0);
    expect(new Set(vitals.map((w) => w.athlete_id))).toEqual(new Set([summary.linkedAthleteId]));
    // The athlete role writes wellness but does not read it (models/roles.ts): refused, not emptied.
    expect((await get(tokens.athlete!, 'table=wellness&offset=-1')).status).toBe(403);
    const me = await rowsOf(tokens.athlete!, { table: 'athlete' });
    expect(me.map((a) => a.id)).toEqual([summary.linkedAthleteId]);
    expect((await get(tokens.athlete!, 'table=squad&offset=-1')).status).toBe(403);
    expect((await get(tokens.admin!, 'table=injury&offset=-1')).status).toBe(403);
    expect((await get(tokens.physio!, 'table=hq_device&offset=-1')).status).toBe(400);
    expect((await fetch(`${server.url}/v1/shape?table=athlete&offset=-1`)).status).toBe(401);
  });

  it("sends a role only the activity rows of records it may read (issue 12 review minor: an admin's laptop got injury summaries)", async () => {
    const injuryId = uuidv7();
    const res = await fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.physio}` },
      body: JSON.stringify({
        changesets: [
          {
            changeset_id: uuidv7(),
            verb: 'injuries.create',
            summary: 'Record left hamstring injury for the linked athlete',
            changes: [
              {
                op: 'insert',
                table: 'injury',
                id: injuryId,
                after: {
                  athlete_id: summary.linkedAthleteId,
                  body_part: 'hamstring',
                  side: 'left',
                  mechanism: 'non_contact',
                  onset_date: TODAY,
                  severity: 'moderate',
                  status: 'open',
                  clinician_notes: '',
                },
              },
            ],
          },
        ],
      }),
    });
    expect(((await res.json()) as ChangesetUploadResult).results[0]).toMatchObject({ status: 'applied' });
    // and a change to an athlete's profile, which the admin may read
    const athlete = (await rowsOf(tokens.physio!, { table: 'athlete' }))[0]!;
    const upd = await fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.physio}` },
      body: JSON.stringify({
        changesets: [
          {
            changeset_id: uuidv7(),
            verb: 'athletes.update',
            changes: [{ op: 'update', table: 'athlete', id: athlete.id, version: athlete.version, before: {}, after: { notes: 'activity shape test' } }],
          },
        ],
      }),
    });
    expect(((await upd.json()) as ChangesetUploadResult).results[0]).toMatchObject({ status: 'applied' });
    const physioRows = await rowsOf(tokens.physio!, { table: 'activity' });
    expect(physioRows.some((a) => a.record_id === injuryId)).toBe(true);
    const adminRows = await rowsOf(tokens.admin!, { table: 'activity' });
    // before: the admin's device received every org activity row, this injury's summary included
    expect(adminRows.some((a) => a.record_id === athlete.id)).toBe(true);
    expect(adminRows.some((a) => a.record_id === injuryId)).toBe(false);
    expect(new Set(adminRows.map((a) => a.record_table))).not.toContain('injury');
    // a hand-edited where narrows at most
    const widened = await rowsOf(tokens.admin!, { table: 'activity', where: "record_table = 'injury' OR true" });
    expect(widened.some((a) => a.record_table === 'injury')).toBe(false);
  });

  it("an analyst's token neither reads, overwrites nor forges an athlete summary at HQ; squad reports stay open to it (issue 13 re-review blocker)", async () => {
    const enrolAs = async (email: string) =>
      (
        (await (
          await fetch(`${server.url}/v1/devices`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email, pin: DEMO_PIN, code: await enrolmentCodeFor(hq.appUrl, email), name: 'Report test' }),
          })
        ).json()) as { token: string }
      ).token;
    const analyst = await enrolAs(DEMO_EMAILS.analyst);
    const send = async (token: string, change: Record<string, unknown>) => {
      const res = await fetch(`${server.url}/v1/changesets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ changesets: [{ changeset_id: uuidv7(), verb: 'reports.generate', changes: [change] }] }),
      });
      return ((await res.json()) as ChangesetUploadResult).results[0]!;
    };
    const report = (kind: string, markdown: string, by: string) => ({
      athlete_id: kind === 'squad_workload' ? null : summary.linkedAthleteId,
      squad_id: null,
      kind,
      title: 'Report',
      markdown,
      pdf_path: null,
      generated_by: by,
    });
    const physioId = (await rowsOf(tokens.physio!, { table: 'app_user' })).find((u) => u.email === DEMO_EMAILS.physio)!.id as string;
    const analystId = (await rowsOf(tokens.physio!, { table: 'app_user' })).find((u) => u.email === DEMO_EMAILS.analyst)!.id as string;
    const secretId = uuidv7();
    expect(
      await send(tokens.physio!, {
        op: 'insert',
        table: 'report',
        id: secretId,
        after: report('athlete_summary', 'SECRET: ACL rupture, RTP stage 2', physioId),
      }),
    ).toMatchObject({
      status: 'applied',
    });
    const squadId = uuidv7();
    expect(await send(analyst, { op: 'insert', table: 'report', id: squadId, after: report('squad_workload', 'U19 loads', analystId) })).toMatchObject({
      status: 'applied',
    });
    // before: the analyst's device received the athlete summary
    const seen = await rowsOf(analyst, { table: 'report' });
    expect(seen.some((r) => r.id === squadId)).toBe(true);
    expect(seen.some((r) => r.kind !== 'squad_workload')).toBe(false);
    expect((await rowsOf(tokens.physio!, { table: 'report' })).some((r) => r.id === secretId)).toBe(true);
    // before: applied (overwritten), and at an old version a stale reply carrying the whole report
    for (const version of [1, 5]) {
      const out = await send(analyst, { op: 'update', table: 'report', id: secretId, version, before: {}, after: { markdown: 'overwritten by analyst' } });
      expect(out).toMatchObject({ status: 'rejected', reason: 'forbidden' });
      expect(JSON.stringify(out)).not.toMatch(/SECRET/);
    }
    // before: applied (a forged "cleared to play" summary syncing to clinicians)
    expect(
      await send(analyst, { op: 'insert', table: 'report', id: uuidv7(), after: report('athlete_summary', 'Cleared to play (forged)', analystId) }),
    ).toMatchObject({
      status: 'rejected',
      reason: 'forbidden',
    });
    // and the physio may not relabel a summary as a squad report the analysts would then read
    expect(
      await send(tokens.physio!, { op: 'update', table: 'report', id: secretId, version: 1, before: {}, after: { kind: 'squad_workload' } }),
    ).toMatchObject({
      status: 'rejected',
      reason: 'forbidden',
    });
  });

  it('sends PIN hashes (never PINs) for offline sign-in, and refuses columns outside the table', async () => {
    const users = await rowsOf(tokens.physio!, { table: 'app_user' });
    expect(users.length).toBeGreaterThan(10);
    expect(users.every((u) => typeof u.pin_hash === 'string' && u.pin_hash.startsWith('scrypt$'))).toBe(true);
    expect((await get(tokens.physio!, 'table=app_user&offset=-1&columns=id,secret_pin')).status).toBe(400);
    const raw = await get(tokens.physio!, 'table=athlete&offset=-1');
    expect(raw.headers.get('cache-control') ?? '').not.toMatch(/public/);
    expect(raw.headers.get('vary') ?? '').toMatch(/authorization/i);
    await raw.arrayBuffer();
    const cols = await rowsOf(tokens.physio!, { table: 'athlete', columns: 'id,name' });
    expect(Object.keys(cols[0]!).sort()).toEqual(['id', 'name']);
  });

  it('delivers a change written through POST /v1/changesets live, with the txid HQ returned', async () => {
    const s = stream(tokens.physio!, { table: 'wellness' });
    const seen: Message<Row>[] = [];
    s.subscribe((msgs) => void seen.push(...msgs));
    await waitFor('up-to-date', () => s.isUpToDate);
    const id = uuidv7();
    const res = await fetch(`${server.url}/v1/changesets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.physio}` },
      body: JSON.stringify({
        changesets: [
          {
            changeset_id: uuidv7(),
            verb: 'wellness.record',
            changes: [
              {
                op: 'insert',
                table: 'wellness',
                id,
                after: { athlete_id: summary.linkedAthleteId, date: freshDay(), sleep: 3, soreness: 3, stress: 3, mood: 3, fatigue: 3, notes: 'live' },
              },
            ],
          },
        ],
      }),
    });
    const out = ((await res.json()) as ChangesetUploadResult).results[0]!;
    expect(out.status).toBe('applied');
    const msg = (await waitFor('the change', () => seen.find((m) => 'key' in m && m.value.id === id))) as Message<Row> & {
      headers: { operation: string; txids?: number[] };
    };
    expect(msg.headers.operation).toBe('insert');
    if (out.status === 'applied') expect(msg.headers.txids?.map(String)).toContain(out.txid);
  });

  it('serves two clients on one shape the same rows and the same live change', async () => {
    const a = new Shape(stream(tokens.physio!, { table: 'wellness' }));
    const b = new Shape(stream(tokens.physio!, { table: 'wellness' }));
    const [ra, rb] = await Promise.all([a.rows, b.rows]);
    expect(ra.length).toBeGreaterThan(0);
    expect(rb.map((r) => r.id).sort()).toEqual(ra.map((r) => r.id).sort());
    const id = uuidv7();
    expect((await uploadWellness(id, 'two clients')).status).toBe('applied');
    await waitFor('client a', () => a.currentRows.some((r) => r.id === id));
    await waitFor('client b', () => b.currentRows.some((r) => r.id === id));
    expect(b.currentRows.length).toBe(a.currentRows.length);
  });

  it('answers must-refetch through the proxy after the shape is deleted, and the client resyncs', async () => {
    const s = stream(tokens.physio!, { table: 'squad' });
    const shape = new Shape(s);
    const before = await shape.rows;
    expect(before.length).toBeGreaterThan(0);
    const controls: string[] = [];
    s.subscribe((msgs) => {
      for (const m of msgs) if ('headers' in m && 'control' in m.headers) controls.push(String(m.headers.control));
    });
    const handle = s.shapeHandle!;
    const where = encodeURIComponent(`org_id = '${summary.orgId}'`);
    const del = await fetch(`${shapes.url}/v1/shape?table=squad&where=${where}&handle=${handle}&secret=${SECRET}`, { method: 'DELETE' });
    expect(del.status).toBe(202);
    const raw = await get(tokens.physio!, `table=squad&offset=0_0&handle=${handle}`);
    expect(raw.status).toBe(409);
    expect(await raw.json()).toEqual([{ headers: { control: 'must-refetch' } }]);
    expect(raw.headers.get('electric-handle')).not.toBe(handle);
    await waitFor('client refetched', () => controls.includes('must-refetch') && s.isUpToDate && s.shapeHandle !== handle);
    expect(shape.currentRows.map((r) => r.id).sort()).toEqual(before.map((r) => r.id).sort());
  });

  it('resumes from handle and offset through the proxy after the shape service restarts', async () => {
    const at = await catchUp(tokens.physio!, 'wellness');
    const port = Number(new URL(shapes.url).port);
    await shapes.close();
    const id = uuidv7();
    expect((await uploadWellness(id, 'written while the shape service was down')).status).toBe('applied');
    shapes = await startShapeServer({
      databaseUrl: hq.replicationUrl,
      storageDir: storage,
      port,
      secret: SECRET,
      slot: 'hq_shapes',
      publication: HQ_PUBLICATION,
      longPollTimeoutMs: 3_000,
    });
    let found = false;
    let { handle, offset } = at;
    for (let i = 0; i < 20 && !found; i++) {
      const r = await get(tokens.physio!, `table=wellness&offset=${offset}&handle=${handle}&live=true`);
      expect(r.status).toBe(200);
      handle = r.headers.get('electric-handle') ?? handle;
      offset = r.headers.get('electric-offset') ?? offset;
      const msgs = (await r.json()) as { value?: { id: string }; headers: { operation?: string; control?: string } }[];
      expect(msgs.some((m) => m.headers.control === 'must-refetch')).toBe(false);
      found = msgs.some((m) => m.value?.id === id && m.headers.operation === 'insert');
    }
    expect(found).toBe(true);
    expect(handle).toBe(at.handle);
  });

  it('bounds a long-poll by its maximum lifetime', async () => {
    const short = await startHqServer({ appUrl: hq.appUrl, shapeUrl: shapes.url, shapeSecret: SECRET, maxLongPollMs: 300, poolSize: 2 });
    try {
      const first = await get(tokens.physio!, 'table=rate_folder&offset=-1');
      let handle = first.headers.get('electric-handle')!;
      let offset = first.headers.get('electric-offset')!;
      await first.arrayBuffer();
      // Catch up to the live edge, then hold a live request on a table nobody writes.
      for (let i = 0; i < 10 && !first.headers.get('electric-up-to-date'); i++) {
        const r = await get(tokens.physio!, `table=rate_folder&offset=${offset}&handle=${handle}`);
        handle = r.headers.get('electric-handle') ?? handle;
        offset = r.headers.get('electric-offset') ?? offset;
        await r.arrayBuffer();
        if (r.headers.get('electric-up-to-date') !== null) break;
      }
      const t0 = Date.now();
      const res = await fetch(`${short.url}/v1/shape?table=rate_folder&offset=${offset}&handle=${handle}&live=true`, {
        headers: { authorization: `Bearer ${tokens.physio}` },
      });
      expect(res.status).toBe(504);
      expect(Date.now() - t0).toBeLessThan(2_500);
    } finally {
      await short.close();
    }
  });
});
