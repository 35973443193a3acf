/**
 * One account cannot fill its club's shape limit (issue 12 review M1: an athlete enrolled 17
 * devices, each asking for 32 distinct narrowed `vitals` shapes, used up the club's 500 and
 * locked new staff devices out for 6 h). The real HQ server, the real embedded shape service and
 * a real Postgres: an account's devices together hold at most `perUser` distinct definitions;
 * past it, 429 `shape_limit` naming the account's limit, nothing created; a definition the
 * account already follows is served to its other devices; a staff device still creates shapes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import type { Principal } from '../write/principal';
import { HQ_PUBLICATION } from '../pg/roles';
import { initialiseHq } from '../seed';
import { startHqServer, type HqServer } from '../server';
import { startShapeServer, type ShapeServer } from '../shape/server';
import { havePg, useHqDatabase } from '../testing/hqdb';
import { enrolmentCodeFor } from '../testing/enrolment';
import { ShapeRegistry, shapeLimitsFromEnv } from './shape-registry';

const TODAY = new Date().toISOString().slice(0, 10);
const SECRET = 'shape-user-limit-secret';
const LIMITS = { perDevice: 4, perUser: 6, perOrg: 40, idleMs: 3_600_000 };

describe('ShapeRegistry per-account limit', () => {
  const who = (deviceId: string, userId: string): Principal =>
    ({
      deviceId,
      userId,
      orgId: 'org',
      role: 'athlete',
      deviceName: deviceId,
      displayName: userId,
      linkedAthleteId: null,
      active: true,
      enrolledAt: '',
    }) as Principal;
  const def = (n: number) => new URLSearchParams({ table: 'vitals', where: `version = ${n}` });
  it("counts an account's distinct definitions over all its devices; a shared one counts once", () => {
    const r = new ShapeRegistry(LIMITS);
    for (let n = 0; n < 4; n++) expect(r.admit(who('d1', 'u'), def(n), 0)).toBe(true);
    expect(r.admit(who('d2', 'u'), def(0), 0)).toBe(true); // already the account's: not a new one for it
    expect(r.admit(who('d2', 'u'), def(4), 0)).toBe(true);
    expect(r.admit(who('d2', 'u'), def(5), 0)).toBe(true);
    expect(r.counts('org', 'd2', 'u')).toEqual({ org: 6, device: 3, user: 6 });
    expect(() => r.admit(who('d2', 'u'), def(6), 0)).toThrow(/This account's devices already follow 6 distinct shapes/);
    expect(() => r.admit(who('d3', 'u'), def(7), 0)).toThrow(/account/);
    // Another account of the club is not held back by it.
    expect(r.admit(who('d9', 'other'), def(100), 0)).toBe(true);
    expect(r.admit(who('d9', 'other'), def(0), 0)).toBe(true);
  });
});

describe('shapeLimitsFromEnv (npm run hq)', () => {
  it('reads HQ_SHAPES_PER_DEVICE / _PER_USER / _PER_ORG as whole numbers 1–100000 and refuses anything else, naming the variable', () => {
    expect(shapeLimitsFromEnv({})).toEqual({});
    expect(shapeLimitsFromEnv({ HQ_SHAPES_PER_USER: '100', HQ_SHAPES_PER_ORG: '', HQ_SHAPES_PER_DEVICE: '40' })).toEqual({ perUser: 100, perDevice: 40 });
    for (const bad of ['0', '-1', '1.5', 'lots', '200000'])
      expect(() => shapeLimitsFromEnv({ HQ_SHAPES_PER_USER: bad })).toThrow(/HQ_SHAPES_PER_USER must be a whole number of shapes from 1 to 100000/);
  });
});

describe.skipIf(!havePg)('HQ shape proxy: a bounded number of live shapes per account', () => {
  const hq = useHqDatabase();
  let shapes: ShapeServer;
  let server: HqServer;
  let storage = '';

  const enrol = async (email: string, name: string): Promise<string> => {
    const res = await fetch(`${server.url}/v1/devices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, pin: DEMO_PIN, code: await enrolmentCodeFor(hq.appUrl, email), name }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { token: string }).token;
  };
  const vitals = (token: string, n: number): Promise<Response> =>
    fetch(`${server.url}/v1/shape?table=vitals&offset=-1&where=${encodeURIComponent(`version = ${n}`)}`, { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    if (!havePg) return;
    const init = await initialiseHq(hq.ownerUrl, { seed: 1, today: TODAY });
    if (!init.initialised || !init.seeded) throw new Error('seed failed');
    storage = mkdtempSync(join(tmpdir(), 'ai-hq-shape-user-limit-'));
    shapes = await startShapeServer({
      databaseUrl: hq.replicationUrl,
      storageDir: storage,
      port: 0,
      secret: SECRET,
      slot: 'hq_shapes',
      publication: HQ_PUBLICATION,
      longPollTimeoutMs: 2_000,
    });
    server = await startHqServer({ appUrl: hq.appUrl, shapeUrl: shapes.url, shapeSecret: SECRET, poolSize: 4, shapeLimits: LIMITS, shapeSweepMs: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await shapes?.close();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  it("refuses an account's new shapes past its limit over all its devices, 429 shape_limit naming the account; staff devices still get theirs", async () => {
    const devices = [];
    for (let i = 0; i < 4; i++) devices.push(await enrol(DEMO_EMAILS.athlete, `athlete phone ${i}`));
    const statuses: number[] = [];
    let refusal: { code: string; kind: string; message: string } | null = null;
    for (const [d, token] of devices.entries()) {
      for (let j = 0; j < LIMITS.perDevice; j++) {
        const r = await vitals(token, d * LIMITS.perDevice + j);
        statuses.push(r.status);
        if (r.status === 429) refusal ??= ((await r.json()) as { error: typeof refusal }).error;
        else await r.arrayBuffer();
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMITS.perUser);
    expect(statuses.filter((s) => s === 429)).toHaveLength(devices.length * LIMITS.perDevice - LIMITS.perUser);
    expect(refusal).toMatchObject({ code: 'RateLimited', kind: 'shape_limit' });
    expect(refusal!.message).toMatch(/This account's devices already follow 6 distinct shapes, the most HQ keeps for one account/);
    expect(shapes.service.stats().shapes).toBe(LIMITS.perUser);
    // A shape the account already follows is served to its other devices.
    const shared = await vitals(devices[3]!, 0);
    expect(shared.status).toBe(200);
    await shared.arrayBuffer();
    // The club is far from full: a new staff device gets its shapes.
    const physio = await enrol(DEMO_EMAILS.physio, 'physio laptop');
    const r = await fetch(`${server.url}/v1/shape?table=athlete&offset=-1`, { headers: { authorization: `Bearer ${physio}` } });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  });
});
