/**
 * The proxy's bound on shapes (issue 12 review: any device token minted unlimited shapes with
 * hand-edited `where`s), with the real HQ server, the real embedded shape service and a real
 * Postgres: a device, then a club, past its limit of distinct live shapes gets 429 `shape_limit`
 * and nothing is created; a refused `where` does not count; the shapes only a revoked device
 * followed, and those idle past the limit's idle time, are deleted at the shape service (logs
 * off disk); a restarted shape service does not resume shapes idle past its idle time.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { HQ_PUBLICATION } from '../pg/roles';
import { initialiseHq } from '../seed';
import { startHqServer, type HqServer } from '../server';
import { startShapeServer, type ShapeServer } from '../shape/server';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { enrolmentCodeFor } from '../testing/enrolment';
import { SHAPE_LIMITS } from './shape-registry';

const TODAY = new Date().toISOString().slice(0, 10);
const SECRET = 'shape-limit-secret';
const LIMITS = { perDevice: 5, perOrg: 8, idleMs: 3_600_000 };

describe.skipIf(!havePg)('HQ shape proxy: a bounded number of live shapes', () => {
  const hq = useHqDatabase();
  let shapes: ShapeServer;
  let server: HqServer;
  let storage = '';
  let clock = Date.now();
  const tokens: Record<string, { token: string; deviceId: string }> = {};
  let orgId = '';

  const get = (who: string, query: string): Promise<Response> =>
    fetch(`${server.url}/v1/shape?${query}`, { headers: { authorization: `Bearer ${tokens[who]!.token}` } });
  /** A hand-narrowed session_load shape, distinct per `i`. */
  const narrowed = (i: number): string =>
    `table=session_load&offset=-1&where=${encodeURIComponent(`id <> '00000000-0000-7000-8000-${String(i).padStart(12, '0')}'`)}`;
  const onDisk = (): number => readdirSync(join(storage, 'shapes')).length;

  beforeAll(async () => {
    if (!havePg) return;
    const init = await initialiseHq(hq.ownerUrl, { seed: 1, today: TODAY });
    if (!init.initialised || !init.seeded) throw new Error('seed failed');
    storage = mkdtempSync(join(tmpdir(), 'ai-hq-shape-limit-'));
    shapes = await startShapeServer({
      databaseUrl: hq.replicationUrl,
      storageDir: storage,
      port: 0,
      secret: SECRET,
      slot: 'hq_shapes',
      publication: HQ_PUBLICATION,
      longPollTimeoutMs: 2_000,
    });
    server = await startHqServer({
      appUrl: hq.appUrl,
      shapeUrl: shapes.url,
      shapeSecret: SECRET,
      poolSize: 4,
      shapeLimits: LIMITS,
      shapeSweepMs: 0,
      now: () => clock,
    });
    for (const role of ['physio', 'admin', 'doctor'] as const) {
      const res = await fetch(`${server.url}/v1/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: DEMO_EMAILS[role], pin: DEMO_PIN, code: await enrolmentCodeFor(hq.appUrl, DEMO_EMAILS[role]), name: `${role} laptop` }),
      });
      const body = (await res.json()) as { token: string; device_id: string; org: { id: string } };
      tokens[role] = { token: body.token, deviceId: body.device_id };
      orgId = body.org.id;
    }
  });
  afterAll(async () => {
    await server?.close();
    await shapes?.close();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  it('documents its limits: one shape per synced table per device, with room for a few narrowed ones', () => {
    expect(SHAPE_LIMITS).toEqual({ perDevice: 32, perUser: 64, perOrg: 500, idleMs: 6 * 3_600_000 });
  });

  it("refuses a device's new shape past its limit with 429 shape_limit, creating nothing; known shapes and refused wheres do not count", async () => {
    for (let i = 0; i < LIMITS.perDevice; i++) {
      const r = await get('physio', narrowed(i));
      expect(r.status, await r.clone().text()).toBe(200);
      await r.arrayBuffer();
    }
    const before = shapes.service.stats().shapes;
    expect(before).toBe(LIMITS.perDevice);
    const refused = await get('physio', narrowed(100));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; kind: string; message: string } };
    expect(body.error).toMatchObject({ code: 'RateLimited', kind: 'shape_limit' });
    expect(body.error.message).toMatch(/already follows 5 distinct shapes/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(shapes.service.stats().shapes).toBe(before);
    expect(onDisk()).toBe(before);
    // A shape it already follows is served as before.
    const again = await get('physio', narrowed(0));
    expect(again.status).toBe(200);
    await again.arrayBuffer();
    // 200 more hand-edited wheres: all refused, nothing grows.
    for (let i = 200; i < 400; i++) {
      const r = await get('physio', narrowed(i));
      expect(r.status).toBe(429);
      await r.arrayBuffer();
    }
    expect(shapes.service.stats().shapes).toBe(before);
    expect(onDisk()).toBe(before);
  });

  it("refuses past the club's limit across its devices, and a where the shape service refuses does not count", async () => {
    // A where with an unknown column: 400 from the shape service, nothing created, not counted.
    const bad = await get('admin', `table=session_load&offset=-1&where=${encodeURIComponent("nope = 'x'")}`);
    expect(bad.status).toBe(400);
    await bad.arrayBuffer();
    expect(server.shapes.shapes.counts(orgId, tokens.admin!.deviceId).device).toBe(0);
    // The admin's device shares the physio's live shape without counting a new one against the club.
    let ok = 0;
    for (let i = 0; i < LIMITS.perDevice; i++) {
      const r = await get('admin', narrowed(i + 50));
      if (r.status === 200) ok++;
      else {
        expect(r.status).toBe(429);
        expect(((await r.json()) as { error: { kind: string; message: string } }).error).toMatchObject({
          kind: 'shape_limit',
          message: expect.stringMatching(/club/),
        });
        continue;
      }
      await r.arrayBuffer();
    }
    expect(ok).toBe(LIMITS.perOrg - LIMITS.perDevice);
    expect(shapes.service.stats().shapes).toBe(LIMITS.perOrg);
  });

  it('releases the shapes only a revoked device followed (deleted at the shape service, off disk), then the idle ones', async () => {
    // The club is at its limit: the physio's 5 and the admin's 3.
    const physioOnly = LIMITS.perDevice;
    const total = shapes.service.stats().shapes;
    const revoke = await fetch(`${server.url}/v1/devices/${tokens.physio!.deviceId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${tokens.physio!.token}` },
    });
    expect(revoke.status).toBe(200);
    expect(await server.shapes.sweepShapes()).toBe(physioOnly);
    expect(shapes.service.stats().shapes).toBe(total - physioOnly);
    expect(onDisk()).toBe(total - physioOnly);
    // The club may create shapes again.
    const r = await get('doctor', narrowed(900));
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    // Idle: nothing requested for longer than idleMs is released; a shape requested just now stays.
    clock += LIMITS.idleMs - 1000;
    const keep = await get('doctor', narrowed(900));
    await keep.arrayBuffer();
    clock += 2000;
    const released = await server.shapes.sweepShapes();
    expect(released).toBeGreaterThan(0);
    expect(shapes.service.stats().shapes).toBe(1);
    expect(server.shapes.shapes.size).toBe(1);
  });

  it('a request the client cuts short still counts: every shape the service holds is one the registry counts', async () => {
    // Issue 12 re-review: a request dropped mid-snapshot was uncounted while the shape service
    // went on to create it, so cut-short requests made shapes past every limit and revocation.
    for (const [i, ms] of [0, 5, 20, 50, 100, 200].entries()) {
      const ctrl = new AbortController();
      const t = setTimeout(() => ctrl.abort(), ms);
      await fetch(`${server.url}/v1/shape?${narrowed(1000 + i)}`, { headers: { authorization: `Bearer ${tokens.doctor!.token}` }, signal: ctrl.signal })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
      clearTimeout(t);
    }
    // Let creations that outlived their request finish.
    await new Promise((r) => setTimeout(r, 3000));
    expect(shapes.service.stats().shapes).toBe(server.shapes.shapes.size);
    expect(server.shapes.shapes.counts(orgId, tokens.doctor!.deviceId).device).toBeLessThanOrEqual(LIMITS.perDevice);
  });

  it('a restarted shape service resumes only shapes requested within its idle time', async () => {
    const svc = shapes.service;
    const [handle] = readdirSync(join(storage, 'shapes'));
    expect(handle).toBeDefined();
    const hqUrl = shapes.url;
    await shapes.close();
    // Restarted with a 1 ms idle time: the shape (last requested above) is not resumed and leaves disk.
    await new Promise((r) => setTimeout(r, 20));
    shapes = await startShapeServer({
      databaseUrl: hq.replicationUrl,
      storageDir: storage,
      port: 0,
      secret: SECRET,
      slot: 'hq_shapes',
      publication: HQ_PUBLICATION,
      idleShapeMs: 1,
    });
    expect(shapes.service).not.toBe(svc);
    expect(hqUrl).toBeTruthy();
    expect(shapes.service.stats().shapes).toBe(0);
    expect(existsSync(join(storage, 'shapes', handle!))).toBe(false);
    // Its own sweep drops a shape nobody requests: create one directly, then let it idle.
    const res = await fetch(`${shapes.url}/v1/shape?table=organization&offset=-1&secret=${SECRET}`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(shapes.service.stats().shapes).toBe(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(await shapes.service.evictIdle()).toHaveLength(1);
    expect(shapes.service.stats().shapes).toBe(0);
  });
});
