/**
 * Conformance of the shape service with the real `@electric-sql/client` (ShapeStream and Shape)
 * against a real Postgres (started by sync/testing/pg.ts) and the standalone server.
 */
import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shape, ShapeStream, type Message, type Row } from '@electric-sql/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { havePg, usePgCluster } from '../testing/pg';
import { startShapeServer, type ShapeServer } from './server';

const pgt = usePgCluster();

async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!havePg)('shape service with @electric-sql/client', () => {
  let dbUrl = '';
  let storage = '';
  let server: ShapeServer;
  const aborts: AbortController[] = [];
  const secret = 's3cret-for-tests';

  const start = async (): Promise<ShapeServer> =>
    startShapeServer({ databaseUrl: dbUrl, storageDir: storage, port: 0, secret, longPollTimeoutMs: 2_000, chunkBytes: 4_000, maxLogBytes: 150_000 });
  const sql = (text: string, params: unknown[] = []) => pgt.query(text, params, dbUrl);
  const stream = (params: Record<string, unknown>, extra: Record<string, unknown> = {}): ShapeStream<Row> => {
    const ac = new AbortController();
    aborts.push(ac);
    return new ShapeStream<Row>({ url: `${server.url}/v1/shape`, params: { secret, ...params } as never, signal: ac.signal, ...extra });
  };
  const sortById = (rows: Row[]): Row[] => [...rows].sort((a, b) => Number(a.id) - Number(b.id));

  beforeAll(async () => {
    dbUrl = await pgt.createDatabase();
    await sql(`CREATE TABLE items (id int PRIMARY KEY, title text NOT NULL, status text, n bigint, tags text[], at timestamptz)`);
    await sql(
      `INSERT INTO items VALUES (1, 'one', 'open', 10, '{a,b}', '2026-01-02 03:04:05+00'), (2, 'two', 'closed', 20, NULL, NULL), (3, 'three', 'open', 30, '{}', NULL)`,
    );
    storage = mkdtempSync(join(tmpdir(), 'ai-shapes-test-'));
    server = await start();
  });
  afterAll(async () => {
    for (const a of aborts) a.abort();
    await server?.close();
    if (storage) rmSync(storage, { recursive: true, force: true });
  });

  it('serves the initial snapshot with Electric types, then inserts, updates and deletes live', async () => {
    const shape = new Shape(stream({ table: 'items' }));
    const rows = sortById(await shape.rows);
    expect(rows).toEqual([
      { id: 1, title: 'one', status: 'open', n: 10n, tags: ['a', 'b'], at: '2026-01-02 03:04:05+00' },
      { id: 2, title: 'two', status: 'closed', n: 20n, tags: null, at: null },
      { id: 3, title: 'three', status: 'open', n: 30n, tags: [], at: null },
    ]);
    await sql(`INSERT INTO items (id, title, status, n) VALUES (4, 'four', 'open', 40)`);
    await waitFor('insert', () => shape.currentRows.some((r) => r.id === 4));
    await sql(`UPDATE items SET title = 'ONE' WHERE id = 1`);
    await waitFor('update', () => shape.currentRows.find((r) => r.id === 1)?.title === 'ONE');
    // The update carried the whole row before; unchanged columns are kept.
    expect(shape.currentRows.find((r) => r.id === 1)).toMatchObject({ status: 'open', n: 10n });
    await sql(`DELETE FROM items WHERE id = 2`);
    await waitFor('delete', () => !shape.currentRows.some((r) => r.id === 2));
    expect(sortById(shape.currentRows).map((r) => r.id)).toEqual([1, 3, 4]);
  });

  it("sends change messages with key, operation, txids and lsn; the txid is the writer's pg_current_xact_id()::xid", async () => {
    const s = stream({ table: 'items' });
    const seen: Message<Row>[] = [];
    s.subscribe((msgs) => void seen.push(...msgs));
    await waitFor('up-to-date', () => s.isUpToDate);
    const { rows } = await sql(
      `WITH w AS (INSERT INTO items (id, title) VALUES (50, 'txid') RETURNING 1) SELECT pg_current_xact_id()::xid::text AS xid FROM w`,
    );
    const change = (await waitFor('change 50', () => seen.find((m) => 'key' in m && m.value.id === 50))) as Message<Row> & {
      key: string;
      headers: Record<string, unknown>;
    };
    expect(change.key).toBe('"public"."items"/"50"');
    expect(change.headers.operation).toBe('insert');
    expect(change.headers.txids).toEqual([Number(rows[0]!.xid)]);
    expect(String(change.headers.lsn)).toMatch(/^\d+$/);
    expect(change.headers.relation).toEqual(['public', 'items']);
    await sql(`DELETE FROM items WHERE id = 50`);
  });

  it('filters by where with params and projects columns, moving rows in and out on update', async () => {
    const shape = new Shape(stream({ table: 'items', where: 'status = $1 AND n >= 10', params: ['open'], columns: ['id', 'title'] }));
    expect(sortById(await shape.rows)).toEqual([
      { id: 1, title: 'ONE' },
      { id: 3, title: 'three' },
      { id: 4, title: 'four' },
    ]);
    await sql(`UPDATE items SET status = 'closed' WHERE id = 3`);
    await waitFor('move out', () => !shape.currentRows.some((r) => r.id === 3));
    await sql(`UPDATE items SET status = 'open', n = 99 WHERE id = 3`);
    await waitFor('move in', () => shape.currentRows.some((r) => r.id === 3));
    await sql(`INSERT INTO items (id, title, status, n) VALUES (5, 'five', 'closed', 50), (6, 'six', 'open', 60)`);
    await waitFor('filtered insert', () => shape.currentRows.some((r) => r.id === 6));
    expect(shape.currentRows.some((r) => r.id === 5)).toBe(false);
    expect(Object.keys(shape.currentRows.find((r) => r.id === 6)!).sort()).toEqual(['id', 'title']);
  });

  it('streams live changes over SSE (live_sse) to a ShapeStream with liveSse', async () => {
    const shape = new Shape(stream({ table: 'items', where: 'id >= 100' }, { liveSse: true }));
    expect(await shape.rows).toEqual([]);
    await sql(`INSERT INTO items (id, title) VALUES (100, 'sse')`);
    await waitFor('sse insert', () => shape.currentRows.some((r) => r.id === 100));
    await sql(`UPDATE items SET title = 'sse2' WHERE id = 100`);
    await waitFor('sse update', () => shape.currentRows.find((r) => r.id === 100)?.title === 'sse2');
    await sql(`INSERT INTO items (id, title) VALUES (101, 'sse3')`);
    await sql(`DELETE FROM items WHERE id = 100`);
    await waitFor('sse delete', () => shape.currentRows.length === 1 && shape.currentRows[0]!.id === 101);
    await sql(`DELETE FROM items WHERE id = 101`);
    await waitFor('sse delete 2', () => shape.currentRows.length === 0);
  });

  it('serves two clients from one shape (same handle) and both see a change', async () => {
    const a = new Shape(stream({ table: 'items' }));
    const b = new Shape(stream({ table: 'items' }));
    await Promise.all([a.rows, b.rows]);
    expect(a.handle).toBe(b.handle);
    await sql(`UPDATE items SET title = 'shared' WHERE id = 4`);
    await waitFor('both', () => a.currentRows.find((r) => r.id === 4)?.title === 'shared' && b.currentRows.find((r) => r.id === 4)?.title === 'shared');
  });

  it('answers must-refetch (409 with a new handle) after a shape is deleted, and the client resyncs', async () => {
    const s = stream({ table: 'items', where: "title LIKE 'f%'" });
    const shape = new Shape(s);
    await shape.rows;
    const controls: string[] = [];
    s.subscribe((msgs) => {
      for (const m of msgs) if ('headers' in m && 'control' in m.headers) controls.push(String(m.headers.control));
    });
    const handle = s.shapeHandle!;
    const del = await fetch(`${server.url}/v1/shape?table=items&where=${encodeURIComponent("title LIKE 'f%'")}&handle=${handle}&secret=${secret}`, {
      method: 'DELETE',
    });
    expect(del.status).toBe(202);
    const raw = await fetch(`${server.url}/v1/shape?table=items&where=${encodeURIComponent("title LIKE 'f%'")}&handle=${handle}&offset=0_0&secret=${secret}`);
    expect(raw.status).toBe(409);
    expect(await raw.json()).toEqual([{ headers: { control: 'must-refetch' } }]);
    const newHandle = raw.headers.get('electric-handle');
    expect(newHandle).toMatch(/^\d+-\d+$/);
    expect(newHandle).not.toBe(handle);
    await sql(`INSERT INTO items (id, title) VALUES (7, 'fresh')`);
    await waitFor('client refetched', () => controls.includes('must-refetch') && shape.currentRows.some((r) => r.id === 7));
    expect(s.shapeHandle).toBe(newHandle);
    expect(sortById(shape.currentRows).map((r) => r.id)).toEqual([5, 7]);
  });

  it('syncs a table created after the service started', async () => {
    await sql(`CREATE TABLE later (k text PRIMARY KEY, v numeric(8,2))`);
    await sql(`INSERT INTO later VALUES ('a', 1.5)`);
    const shape = new Shape(stream({ table: 'later' }));
    expect(await shape.rows).toEqual([{ k: 'a', v: '1.50' }]);
    await sql(`INSERT INTO later VALUES ('b', 2)`);
    await waitFor('live row in new table', () => shape.currentRows.some((r) => r.k === 'b'));
  });

  it('chunks a large log over several responses, with up-to-date only on the last', async () => {
    await sql(`CREATE TABLE big (id int PRIMARY KEY, body text)`);
    await sql(`INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series(1, 300) g`);
    const first = await fetch(`${server.url}/v1/shape?table=big&offset=-1&secret=${secret}`);
    expect(first.status).toBe(200);
    expect(first.headers.has('electric-up-to-date')).toBe(false);
    const msgs = (await first.json()) as unknown[];
    expect(msgs.length).toBeGreaterThan(5);
    expect(msgs.length).toBeLessThan(300);
    const shape = new Shape(stream({ table: 'big' }));
    expect((await shape.rows).length).toBe(300);
  });

  it('resumes from handle and offset after a restart, receiving what changed while it was down', async () => {
    const s1 = stream({ table: 'items' });
    const shape1 = new Shape(s1);
    await shape1.rows;
    const handle = s1.shapeHandle!;
    const offset = s1.lastOffset;
    const before = new Map(shape1.currentRows.map((r) => [r.id, r]));
    aborts.at(-1)!.abort();
    await server.close();
    await sql(`INSERT INTO items (id, title) VALUES (8, 'while down')`);
    await sql(`UPDATE items SET title = 'changed while down' WHERE id = 1`);
    server = await start();
    const s2 = stream({ table: 'items' }, { offset, handle });
    const got: Message<Row>[] = [];
    s2.subscribe((msgs) => void got.push(...msgs));
    await waitFor('resumed', () => got.some((m) => 'key' in m && m.value.id === 1) && got.some((m) => 'key' in m && m.value.id === 8));
    expect(s2.shapeHandle).toBe(handle);
    const changes = got.filter((m): m is Message<Row> & { key: string; value: Row; headers: { operation: string } } => 'key' in m);
    // Only what changed while down, never the snapshot again, and no must-refetch.
    expect(changes.map((m) => [m.headers.operation, m.value.id])).toEqual([
      ['insert', 8],
      ['update', 1],
    ]);
    expect(got.some((m) => 'control' in m.headers && m.headers.control === 'must-refetch')).toBe(false);
    expect(before.has(8)).toBe(false);
  });

  it('answers must-refetch, not a wrong page, when a log file was cut outside the service; the client gets a fresh snapshot', async () => {
    const q = (extra: Record<string, string>) => `${server.url}/v1/shape?${new URLSearchParams({ secret, table: 'items', where: 'id <> 99', ...extra })}`;
    const first = await fetch(q({ offset: '-1' }));
    expect(first.status).toBe(200);
    const rows = ((await first.json()) as { key?: string }[]).filter((m) => m.key).length;
    const handle = first.headers.get('electric-handle')!;
    // Messages are read from the file for every response (memory holds only an index).
    truncateSync(join(storage, 'shapes', handle, 'log.jsonl'), 20);
    const cut = await fetch(q({ offset: '-1' }));
    expect(cut.status).toBe(409);
    expect(await cut.json()).toEqual([{ headers: { control: 'must-refetch' } }]);
    const fresh = cut.headers.get('electric-handle')!;
    expect(fresh).not.toBe(handle);
    const again = await fetch(q({ offset: '-1', handle: fresh }));
    expect(again.status).toBe(200);
    expect(((await again.json()) as { key?: string }[]).filter((m) => m.key).length).toBe(rows);
  });

  it('invalidates a shape (409 must-refetch) when its table is truncated or altered', async () => {
    await sql(`CREATE TABLE volatile (id int PRIMARY KEY, v text)`);
    await sql(`INSERT INTO volatile VALUES (1, 'a')`);
    const open = async () => {
      const r = await fetch(`${server.url}/v1/shape?table=volatile&offset=-1&secret=${secret}`);
      await r.arrayBuffer();
      return { h: r.headers.get('electric-handle')!, o: r.headers.get('electric-offset')! };
    };
    const poll = (x: { h: string; o: string }) => fetch(`${server.url}/v1/shape?table=volatile&offset=${x.o}&handle=${x.h}&live=true&secret=${secret}`);
    const a = await open();
    const p1 = poll(a);
    await new Promise((r) => setTimeout(r, 100));
    await sql(`TRUNCATE volatile`);
    const r1 = await p1;
    expect(r1.status).toBe(409);
    expect(r1.headers.get('electric-handle')).not.toBe(a.h);
    await r1.arrayBuffer();
    const b = await open();
    const p2 = poll(b);
    await new Promise((r) => setTimeout(r, 100));
    await sql(`ALTER TABLE volatile ADD COLUMN extra int`);
    await sql(`INSERT INTO volatile VALUES (2, 'b', 7)`);
    const r2 = await p2;
    expect(r2.status).toBe(409);
    await r2.arrayBuffer();
    const c = await fetch(`${server.url}/v1/shape?table=volatile&offset=-1&secret=${secret}`);
    expect(JSON.parse(c.headers.get('electric-schema')!)).toHaveProperty('extra');
    expect(((await c.json()) as { value?: { id: string } }[]).filter((m) => m.value).map((m) => m.value!.id)).toEqual(['2']);
  });

  it('acknowledges the slot once changes are persisted, so Postgres can release WAL', async () => {
    await sql(`INSERT INTO items (id, title) VALUES (60, 'ack me')`);
    const { rows } = await sql(`SELECT pg_current_wal_lsn()::text AS lsn`);
    await waitFor('slot confirmed past the write', async () => {
      const r = await sql(`SELECT confirmed_flush_lsn >= $1::pg_lsn AS ok FROM pg_replication_slots WHERE slot_name = 'ai_shapes'`, [rows[0]!.lsn]);
      return r.rows[0]?.ok === true;
    });
    await sql(`DELETE FROM items WHERE id = 60`);
  });

  it('drops a shape whose log outgrows maxLogBytes; the client refetches a compact snapshot', async () => {
    await sql(`CREATE TABLE churn (id int PRIMARY KEY, body text)`);
    await sql(`INSERT INTO churn VALUES (1, 'start')`);
    const s = stream({ table: 'churn' });
    const shape = new Shape(s);
    await shape.rows;
    const first = s.shapeHandle;
    for (let i = 0; i < 4; i++) await sql(`UPDATE churn SET body = repeat('y', 50000) || $1 WHERE id = 1`, [String(i)]);
    await waitFor('new handle', () => s.shapeHandle !== first && shape.currentRows[0]?.body === 'y'.repeat(50000) + '3');
    expect(shape.currentRows).toHaveLength(1);
  });

  it('answers must-refetch, not a gap, when the replication slot was lost while the service was down', async () => {
    const r0 = await fetch(`${server.url}/v1/shape?table=items&offset=-1&secret=${secret}`);
    await r0.arrayBuffer();
    const h = r0.headers.get('electric-handle')!;
    const o = r0.headers.get('electric-offset')!;
    await server.close();
    await sql(`SELECT pg_drop_replication_slot('ai_shapes')`);
    await sql(`INSERT INTO items (id, title) VALUES (9, 'lost while down')`);
    server = await start();
    const r1 = await fetch(`${server.url}/v1/shape?table=items&offset=${o}&handle=${h}&secret=${secret}`);
    expect(r1.status).toBe(409);
    const fresh = r1.headers.get('electric-handle')!;
    expect(fresh).not.toBe(h);
    const r2 = await fetch(`${server.url}/v1/shape?table=items&offset=-1&handle=${fresh}&secret=${secret}`);
    const ids = ((await r2.json()) as { value?: { id: string } }[]).filter((m) => m.value).map((m) => m.value!.id);
    expect(ids).toContain('9');
  });

  describe('protocol details', () => {
    const get = (qs: string, init?: RequestInit) => fetch(`${server.url}/v1/shape?${qs}${qs.includes('secret=') ? '' : `&secret=${secret}`}`, init);

    it('sends Electric headers: handle, offset, schema, up-to-date, etag, cache-control; 304 on a matching If-None-Match', async () => {
      const r = await get('table=items&offset=-1');
      expect(r.status).toBe(200);
      const schema = JSON.parse(r.headers.get('electric-schema')!);
      expect(schema.id).toEqual({ type: 'int4', dims: 0, not_null: true, pk_index: 0 });
      expect(schema.tags).toEqual({ type: 'text', dims: 1 });
      expect(r.headers.get('electric-offset')).toMatch(/^\d+_\d+$/);
      expect(r.headers.has('electric-up-to-date')).toBe(true);
      expect(r.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=300');
      const body = (await r.json()) as { headers: Record<string, unknown> }[];
      expect(body.at(-1)!.headers.control).toBe('up-to-date');
      expect(body.some((m) => m.headers.control === 'snapshot-end')).toBe(true);
      const etag = r.headers.get('etag')!;
      expect(etag).toBe(`"${r.headers.get('electric-handle')}:-1:${r.headers.get('electric-offset')}"`);
      expect((await get('table=items&offset=-1', { headers: { 'if-none-match': etag } })).status).toBe(304);
      const now = await get(`table=items&offset=now`);
      expect(await now.json()).toEqual([{ headers: { control: 'up-to-date', global_last_seen_lsn: expect.stringMatching(/^\d+$/) } }]);
      expect(now.headers.get('electric-offset')).toBe(r.headers.get('electric-offset'));
    });

    it('holds a live request until a change, with electric-cursor, and answers up-to-date when the long-poll expires', async () => {
      const r0 = await get('table=items&offset=-1');
      await r0.arrayBuffer();
      const h = r0.headers.get('electric-handle')!;
      const o = r0.headers.get('electric-offset')!;
      const t0 = Date.now();
      const idle = await get(`table=items&offset=${o}&handle=${h}&live=true&cursor=1`);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1_900);
      expect(idle.headers.get('electric-cursor')).toMatch(/^\d+$/);
      expect(idle.headers.get('electric-offset')).toBe(o);
      expect(await idle.json()).toEqual([{ headers: { control: 'up-to-date', global_last_seen_lsn: expect.any(String) } }]);
      const pending = get(`table=items&offset=${o}&handle=${h}&live=true`);
      await new Promise((r) => setTimeout(r, 200));
      await sql(`UPDATE items SET n = n + 1 WHERE id = 4`);
      const live = await pending;
      const msgs = (await live.json()) as { key?: string; headers: Record<string, unknown>; value?: Record<string, unknown> }[];
      expect(msgs[0]).toMatchObject({ key: '"public"."items"/"4"', headers: { operation: 'update', last: true } });
      // Without REPLICA IDENTITY FULL the old row is unknown, so the whole new row is sent.
      expect(msgs[0]!.value).toMatchObject({ id: '4', n: '41', title: 'shared' });
    });

    it('live_sse answers text/event-stream with one data: line per message and up-to-date after each batch', async () => {
      const r0 = await get('table=items&offset=-1&where=id%20%3E%3D%20200');
      await r0.arrayBuffer();
      const ac = new AbortController();
      const r = await get(
        `table=items&where=id%20%3E%3D%20200&offset=${r0.headers.get('electric-offset')}&handle=${r0.headers.get('electric-handle')}&live=true&live_sse=true`,
        { signal: ac.signal },
      );
      expect(r.headers.get('content-type')).toBe('text/event-stream');
      expect(r.headers.get('electric-cursor')).toMatch(/^\d+$/);
      const reader = r.body!.getReader();
      await sql(`INSERT INTO items (id, title) VALUES (200, 'a'), (201, 'b')`);
      let text = '';
      while (!text.includes('up-to-date')) text += new TextDecoder().decode((await reader.read()).value);
      ac.abort();
      const events = text
        .split('\n\n')
        .filter((e) => e.startsWith('data: '))
        .map((e) => JSON.parse(e.slice(6)) as { key?: string; headers: Record<string, unknown> });
      expect(events.map((e) => e.key ?? e.headers.control)).toEqual(['"public"."items"/"200"', '"public"."items"/"201"', 'up-to-date']);
      await sql(`DELETE FROM items WHERE id >= 200`);
    });

    it('replica=full sends whole rows and old_value, replica=default only the key and changed columns (REPLICA IDENTITY FULL)', async () => {
      await sql(`CREATE TABLE full_t (id int PRIMARY KEY, a text, b text)`);
      await sql(`ALTER TABLE full_t REPLICA IDENTITY FULL`);
      await sql(`INSERT INTO full_t VALUES (1, 'x', 'y')`);
      const r0 = await get('table=full_t&offset=-1&replica=full');
      await r0.arrayBuffer();
      const pending = get(`table=full_t&offset=${r0.headers.get('electric-offset')}&handle=${r0.headers.get('electric-handle')}&live=true&replica=full`);
      const d0 = await get('table=full_t&offset=-1');
      await d0.arrayBuffer();
      const pendingDefault = get(`table=full_t&offset=${d0.headers.get('electric-offset')}&handle=${d0.headers.get('electric-handle')}&live=true`);
      await new Promise((r) => setTimeout(r, 150));
      await sql(`UPDATE full_t SET a = 'x2' WHERE id = 1`);
      const msgs = (await (await pending).json()) as { value: unknown; old_value: unknown }[];
      expect(msgs[0]).toMatchObject({ value: { id: '1', a: 'x2', b: 'y' }, old_value: { a: 'x' } });
      const dmsgs = (await (await pendingDefault).json()) as { value: unknown; old_value?: unknown }[];
      expect(dmsgs[0]!.value).toEqual({ id: '1', a: 'x2' });
      expect(dmsgs[0]!.old_value).toBeUndefined();
      await sql(`DELETE FROM full_t WHERE id = 1`);
    });

    it('refuses what it cannot serve safely with 400 and the field at fault', async () => {
      const bad = async (qs: string, field: string, re: RegExp) => {
        const r = await get(qs);
        expect(r.status).toBe(400);
        const body = (await r.json()) as { errors: Record<string, string[]> };
        expect(body.errors[field]?.[0]).toMatch(re);
      };
      await bad(`table=items&offset=-1&where=${encodeURIComponent('id = 1; DROP TABLE items')}`, 'where', /unsupported character ';'/);
      await bad(`table=items&offset=-1&where=${encodeURIComponent('pg_sleep(10) IS NULL')}`, 'where', /function calls are not supported/);
      await bad(`table=items&offset=-1&where=${encodeURIComponent('secret_col = 1')}`, 'where', /unknown column "secret_col"/);
      await bad(`table=items&offset=-1&where=${encodeURIComponent('id = $1')}`, 'where', /params\[1\] is not given/);
      await bad(`table=items&offset=-1&where=${encodeURIComponent("n = 'abc'")}`, 'where', /invalid input syntax for type bigint/);
      await bad(`table=items&offset=-1&columns=title`, 'columns', /primary key column "id"/);
      await bad(`table=nope&offset=-1`, 'table', /does not exist/);
      await bad(`table=items&offset=banana`, 'offset', /invalid format/);
      await bad(`table=items&offset=0_0`, 'handle', /can't be blank/);
      await bad(`table=items&offset=-1&replica=partial`, 'replica', /default.*full/);
      expect((await sql(`SELECT count(*)::int AS n FROM items`)).rows[0]!.n).toBeGreaterThan(0);
      const noSecret = await fetch(`${server.url}/v1/shape?table=items&offset=-1`);
      expect(noSecret.status).toBe(401);
      const health = await fetch(`${server.url}/v1/health`);
      expect(await health.json()).toEqual({ status: 'active' });
    });
  });
});

describe.skipIf(!havePg)('shape service under a role with only REPLICATION + SELECT', () => {
  it('refuses to start without a publication, saying what an administrator must run; then serves snapshot and live changes', async () => {
    const adminUrl = await pgt.createDatabase();
    const db = new URL(adminUrl).pathname.slice(1);
    const admin = (text: string) => pgt.query(text, [], adminUrl);
    await admin(
      `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'shape_reader') THEN CREATE ROLE shape_reader LOGIN REPLICATION PASSWORD 'reader-pw'; END IF; END $$`,
    );
    await admin(`CREATE TABLE notes (id uuid PRIMARY KEY, body text)`);
    await admin(`GRANT SELECT ON notes TO shape_reader`);
    await admin(`INSERT INTO notes VALUES ('0190a3c4-0000-7000-8000-000000000001', 'hello')`);
    const readerUrl = pgt.cluster.urlFor(db, { user: 'shape_reader', password: 'reader-pw' });
    const { rows } = await pgt.query<{ rolsuper: boolean; rolbypassrls: boolean }>(
      `SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'shape_reader'`,
    );
    expect(rows[0]).toEqual({ rolsuper: false, rolbypassrls: false });
    const storage = mkdtempSync(join(tmpdir(), 'ai-shapes-role-'));
    try {
      await expect(
        startShapeServer({ databaseUrl: readerUrl, storageDir: storage, port: 0, slot: 'reader_slot', publication: 'reader_pub' }),
      ).rejects.toMatchObject({
        kind: 'publication_missing',
        code: 'NotConfigured',
        message: expect.stringContaining('CREATE PUBLICATION "reader_pub" FOR ALL TABLES'),
      });
      await admin(`CREATE PUBLICATION reader_pub FOR ALL TABLES`);
      const srv = await startShapeServer({ databaseUrl: readerUrl, storageDir: storage, port: 0, slot: 'reader_slot', publication: 'reader_pub' });
      const ac = new AbortController();
      try {
        const shape = new Shape(new ShapeStream<Row>({ url: `${srv.url}/v1/shape`, params: { table: 'notes' }, signal: ac.signal }));
        expect(await shape.rows).toEqual([{ id: '0190a3c4-0000-7000-8000-000000000001', body: 'hello' }]);
        await admin(`INSERT INTO notes VALUES ('0190a3c4-0000-7000-8000-000000000002', 'live')`);
        await waitFor('live row as the unprivileged role', () => shape.currentRows.some((r) => r.body === 'live'));
        // A table the role may not read is refused, not leaked.
        await admin(`CREATE TABLE secrets (id int PRIMARY KEY, v text)`);
        const r = await fetch(`${srv.url}/v1/shape?table=secrets&offset=-1`);
        expect(r.status).toBe(403);
        expect(await r.json()).toMatchObject({ message: expect.stringMatching(/permission denied/) });
      } finally {
        ac.abort();
        await srv.close();
      }
    } finally {
      rmSync(storage, { recursive: true, force: true });
      await admin(`SELECT pg_drop_replication_slot('reader_slot')`).catch(() => undefined);
    }
  });
});
