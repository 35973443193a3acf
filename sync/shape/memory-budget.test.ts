/**
 * The shape service's memory budget (ShapeServiceOptions.maxMemoryBytes) against a real Postgres:
 * past it the least recently requested shape is dropped (its client gets 409 must-refetch and a
 * fresh snapshot), a shape larger than the whole budget is refused with 503 and nothing kept, a
 * restart with a smaller budget resumes only what fits, an SSE client that stops reading holds
 * the server to a bounded read of the log, and the budget's configuration value is read strictly.
 */
import { get as httpGet } from 'node:http';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePg, usePgCluster } from '../testing/pg';
import { shapeMemoryBudget, startShapeServer, type ShapeServer } from './server';

const pgt = usePgCluster();

describe('shapeMemoryBudget (--max-memory-mb / SHAPE_MAX_MEMORY_MB)', () => {
  it('reads whole MiB from 16 to 1048576 and refuses anything else, naming the range', () => {
    expect(shapeMemoryBudget(undefined)).toBeUndefined();
    expect(shapeMemoryBudget('')).toBeUndefined();
    expect(shapeMemoryBudget('512')).toBe(512 * 1048576);
    for (const bad of ['15', '0', '-1', '1.5', '1e3', '512MB', '2000000', 'lots']) expect(() => shapeMemoryBudget(bad)).toThrow(/16 to 1048576/);
  });
});

describe.skipIf(!havePg)('shape service memory budget', () => {
  let dbUrl = '';
  let storage = '';
  let server: ShapeServer;
  const sql = (text: string) => pgt.query(text, [], dbUrl);
  const get = async (where: string, extra: Record<string, string> = {}) => {
    const r = await fetch(`${server.url}/v1/shape?${new URLSearchParams({ table: 'rows', where, offset: '-1', ...extra })}`);
    return { status: r.status, handle: r.headers.get('electric-handle'), offset: r.headers.get('electric-offset'), body: (await r.json()) as unknown };
  };

  beforeAll(async () => {
    dbUrl = await pgt.createDatabase();
    await sql(`CREATE TABLE rows (id int PRIMARY KEY, grp int NOT NULL, note text)`);
    await sql(`INSERT INTO rows SELECT g, g % 10, repeat('x', 200) FROM generate_series(1, 12000) g`);
    storage = mkdtempSync(join(tmpdir(), 'ai-shapes-budget-'));
    // One 2,000-row shape takes ~119 KB (index 2,048 × 24 B + membership 4,096 slots × 17 B): 300 KB holds two.
    server = await startShapeServer({ databaseUrl: dbUrl, storageDir: storage, port: 0, longPollTimeoutMs: 1_000, maxMemoryBytes: 300_000 });
  });
  afterAll(async () => {
    await server?.close();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  it('drops the least recently requested shape when a new one passes the budget; its client refetches', async () => {
    const a = await get('id <= 2000');
    const b = await get('id > 2000 AND id <= 4000');
    expect([a.status, b.status]).toEqual([200, 200]);
    await get('id <= 2000', { handle: a.handle!, offset: a.offset! }); // A requested again: B is now the oldest
    const c = await get('id > 4000 AND id <= 6000');
    expect(c.status).toBe(200);
    const stats = server.service.stats();
    expect(stats.shapes).toBe(2);
    expect(stats.memoryBytes).toBeLessThanOrEqual(300_000);
    expect(server.service.getByHandle(a.handle!)).toBeDefined();
    expect(server.service.getByHandle(b.handle!)).toBeUndefined();
    const again = await get('id > 2000 AND id <= 4000', { handle: b.handle!, offset: b.offset! });
    expect(again.status).toBe(409);
    expect(again.body).toEqual([{ headers: { control: 'must-refetch' } }]);
    const fresh = await get('id > 2000 AND id <= 4000', { handle: again.handle! });
    expect(fresh.status).toBe(200);
    expect((fresh.body as { key?: string }[]).filter((m) => m.key).length).toBe(2000);
    expect(server.service.stats().memoryBytes).toBeLessThanOrEqual(300_000);
  });

  it('an SSE client that stops reading makes the server stop reading the log (backpressure), not buffer all of it', async () => {
    await sql(`CREATE TABLE wide (id int PRIMARY KEY, note text)`);
    await sql(`INSERT INTO wide SELECT g, repeat('w', 2000) FROM generate_series(1, 20000) g`); // ~40 MB of log
    const big = await startShapeServer({
      databaseUrl: dbUrl,
      storageDir: mkdtempSync(join(tmpdir(), 'ai-shapes-sse-')),
      port: 0,
      slot: 'sse_test',
      publication: 'ai_shapes',
    });
    try {
      let readBytes = 0;
      const readLog = big.service.readLog.bind(big.service);
      big.service.readLog = (...args) => {
        const r = readLog(...args);
        for (const m of r.messages) readBytes += m.length;
        return r;
      };
      const first = await fetch(`${big.url}/v1/shape?table=wide&offset=-1`);
      await first.arrayBuffer();
      const handle = first.headers.get('electric-handle')!;
      const plainRead = readBytes;
      expect(plainRead).toBeLessThan(5 * 1024 * 1024); // one 4 MiB page
      readBytes = 0;
      // An SSE request from the start of the log whose reader never reads.
      const req = httpGet(`${big.url}/v1/shape?table=wide&offset=0_0&handle=${handle}&live=true&live_sse=true`, (res) => res.pause());
      await new Promise((r) => setTimeout(r, 1500));
      // Socket buffers take a few MB; the rest of the 40 MB log stays on disk until the client reads.
      expect(readBytes).toBeGreaterThan(0);
      expect(readBytes).toBeLessThan(16 * 1024 * 1024);
      req.destroy();
    } finally {
      await big.close();
    }
  }, 120_000);

  it('refuses a shape larger than the whole budget with 503 and what to do; nothing of it is kept', async () => {
    const before = readdirSync(join(storage, 'shapes')).length;
    const big = await get('id > 0');
    expect(big.status).toBe(503);
    expect((big.body as { kind: string }).kind).toBe('shape_too_large'); // HQ's proxy tells it from a service that is down
    expect((big.body as { message: string }).message).toMatch(
      /more than its whole budget of 0\.3 MB\. Narrow it with a where clause, or raise the budget \(SHAPE_MAX_MEMORY_MB\)/,
    );
    expect(readdirSync(join(storage, 'shapes')).length).toBe(before);
    expect(server.service.stats().shapes).toBe(2);
    // Asking again is refused the same way (no half-made shape is found by its definition).
    expect((await get('id > 0')).status).toBe(503);
  });

  it('shapes requested at once are created one at a time: memory stays within the budget plus the one under creation (12 too-large shapes at once peaked at ~7× it)', async () => {
    const shapesBefore = server.service.stats().shapes;
    let peak = 0;
    let sampling = true;
    const sample = async (): Promise<void> => {
      while (sampling) {
        peak = Math.max(peak, server.service.stats().memoryBytes);
        await new Promise((r) => setImmediate(r));
      }
    };
    const sampler = sample();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, k) => get(`id > ${k + 1}`)));
    sampling = false;
    await sampler;
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(503));
    // Created shapes within the budget, plus the one under creation: refused once it alone passes
    // the budget, checked after each 5,000-row snapshot batch (~60 B a row here).
    expect(peak).toBeLessThanOrEqual(300_000 + 300_000 + 5000 * 60);
    // The shapes that fit were not disturbed, and nothing of the refused ones is kept.
    expect(server.service.stats().shapes).toBe(shapesBefore);
    expect(server.service.stats().memoryBytes).toBeLessThanOrEqual(300_000);
  }, 120_000);

  it('a restart with a smaller budget resumes only the shapes that fit', async () => {
    const held = server.service.stats();
    expect(held.shapes).toBe(2);
    await server.close();
    server = await startShapeServer({ databaseUrl: dbUrl, storageDir: storage, port: 0, longPollTimeoutMs: 1_000, maxMemoryBytes: 150_000 });
    expect(server.service.stats().shapes).toBe(1);
    expect(server.service.stats().memoryBytes).toBeLessThanOrEqual(150_000);
    expect(readdirSync(join(storage, 'shapes'))).toHaveLength(1);
    await server.close();
    server = await startShapeServer({ databaseUrl: dbUrl, storageDir: storage, port: 0, longPollTimeoutMs: 1_000, maxMemoryBytes: 300_000 });
  });
});
