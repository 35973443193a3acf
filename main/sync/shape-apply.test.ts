/**
 * ShapeApplier (main/sync/shape-apply.ts) on a real SQLite file, written through a second
 * connection as the shape worker writes it (main/data/db.ts openReplicaWriter) and read through the
 * app's own: full slices are committed as they arrive without the offset, the up-to-date
 * transaction stores handle and offset with the last rows, a restart from the stored offset that
 * re-applies a catch-up converges to the same rows, and must-refetch resets and sweeps.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message, Row } from '@electric-sql/client';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb, openReplicaWriter, type Db } from '../data/db';
import { shapeState } from '../data/sync';
import { sqlite } from '../data/sqlite';
import { ShapeApplier, type ApplyEvent } from './shape-apply';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function files(): { app: Db; writer: Db } {
  const d = mkdtempSync(join(tmpdir(), 'ai-shape-apply-'));
  dirs.push(d);
  const app = openDb(join(d, 'device.sqlite'));
  return { app, writer: openReplicaWriter(app.path) };
}

const ORG = '0190a000-0000-7000-8000-000000000001';
const id = (n: number): string => `0190a000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const squad = (n: number, name = `Squad ${n}`): Message<Row> => ({
  key: `"public"."squad"/"${id(n)}"`,
  value: {
    id: id(n),
    org_id: ORG,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    version: 1,
    deleted_at: null,
    name,
    season: '2026',
  },
  headers: { operation: 'insert', txids: [100 + n] },
});
const upToDate: Message<Row> = { headers: { control: 'up-to-date' } };
const mustRefetch: Message<Row> = { headers: { control: 'must-refetch' } };
const rows = (db: Db): { id: string; name: string }[] => sqlite(db).prepare('SELECT id, name FROM squad ORDER BY id').all() as { id: string; name: string }[];

describe('ShapeApplier', () => {
  it('commits full slices as a snapshot arrives, and the handle and offset only with the last rows at up-to-date', async () => {
    const { app, writer } = files();
    try {
      const s = shapeState(app, 'squad');
      const applier = new ShapeApplier(writer, 'squad', { resetting: s.needs_reset, lastOffset: s.offset, sliceRows: 3 });
      const events: ApplyEvent[] = [];
      const first = await applier.consume(
        [1, 2, 3, 4, 5, 6, 7].map((n) => squad(n)),
        { handle: 'h1', offset: '0_7' },
        (ev) => void events.push(ev),
        () => false,
      );
      // Two full slices are written (7 rows, 3 per transaction); the seventh waits for its batch's end.
      expect(first).toEqual({ upToDate: false, refetched: false, committed: false });
      expect(events).toEqual([
        { written: 3, committed: false, reset: false },
        { written: 3, committed: false, reset: false },
      ]);
      expect(rows(app).length).toBe(6);
      expect(shapeState(app, 'squad')).toMatchObject({ handle: null, offset: '-1', needs_reset: true });

      const second = await applier.consume(
        [squad(8), upToDate],
        { handle: 'h1', offset: '0_8' },
        (ev) => void events.push(ev),
        () => false,
      );
      expect(second).toEqual({ upToDate: true, refetched: false, committed: true });
      expect(events.at(-1)).toEqual({ written: 2, committed: true, reset: true });
      expect(rows(app).map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map(id));
      expect(shapeState(app, 'squad')).toMatchObject({ handle: 'h1', offset: '0_8', needs_reset: false, rows_applied: 8 });
      expect(sqlite(app).prepare(`SELECT count(*) FROM sync_seen_txid WHERE tbl = 'squad'`).pluck().get()).toBe(8);

      // Caught up, nothing new: no transaction.
      const idle = await applier.consume(
        [upToDate],
        { handle: 'h1', offset: '0_8' },
        (ev) => void events.push(ev),
        () => false,
      );
      expect(idle).toEqual({ upToDate: true, refetched: false, committed: false });
      expect(events.length).toBe(3);
    } finally {
      writer.close();
      app.close();
    }
  });

  it('a restart after slices were committed (the offset not yet stored) re-applies that catch-up and converges to the same rows', async () => {
    const { app, writer } = files();
    try {
      const s = shapeState(app, 'squad');
      const killed = new ShapeApplier(writer, 'squad', { resetting: s.needs_reset, lastOffset: s.offset, sliceRows: 2 });
      // The process dies after the first slice of a response (the stopped check ends it there).
      let n = 0;
      await killed.consume(
        [1, 2, 3, 4].map((i) => squad(i, `old ${i}`)),
        { handle: 'h1', offset: '0_4' },
        () => void n++,
        () => n >= 1,
      );
      expect(rows(app).length).toBe(2);

      // Restart: the stored offset is still the start, so HQ sends the whole catch-up again, newer values included.
      const again = shapeState(app, 'squad');
      expect(again.offset).toBe('-1');
      const restarted = new ShapeApplier(writer, 'squad', { resetting: again.needs_reset, lastOffset: again.offset, sliceRows: 2 });
      const r = await restarted.consume(
        [...[1, 2, 3, 4].map((i) => squad(i, `new ${i}`)), upToDate],
        { handle: 'h1', offset: '0_4' },
        () => undefined,
        () => false,
      );
      expect(r.committed).toBe(true);
      expect(rows(app)).toEqual([1, 2, 3, 4].map((i) => ({ id: id(i), name: `new ${i}` })));
      expect(shapeState(app, 'squad')).toMatchObject({ handle: 'h1', offset: '0_4', needs_reset: false });
    } finally {
      writer.close();
      app.close();
    }
  });

  it('must-refetch forgets what was buffered, resets the shape, and the next up-to-date removes the rows the fresh snapshot did not deliver', async () => {
    const { app, writer } = files();
    try {
      const s = shapeState(app, 'squad');
      const applier = new ShapeApplier(writer, 'squad', { resetting: s.needs_reset, lastOffset: s.offset, sliceRows: 10 });
      await applier.consume(
        [squad(1), squad(2), squad(3), upToDate],
        { handle: 'h1', offset: '0_3' },
        () => undefined,
        () => false,
      );
      expect(rows(app).length).toBe(3);

      const events: ApplyEvent[] = [];
      const r = await applier.consume(
        [squad(4), mustRefetch],
        { handle: undefined, offset: '-1' },
        (ev) => void events.push(ev),
        () => false,
      );
      expect(r).toEqual({ upToDate: false, refetched: true, committed: false });
      expect(events).toEqual([]);
      expect(shapeState(app, 'squad')).toMatchObject({ handle: null, offset: '-1', needs_reset: true });

      await applier.consume(
        [squad(1, 'fresh 1'), squad(3, 'fresh 3'), upToDate],
        { handle: 'h2', offset: '0_2' },
        (ev) => void events.push(ev),
        () => false,
      );
      expect(events).toEqual([{ written: 3, committed: true, reset: true }]); // 2 upserts + 1 swept
      expect(rows(app)).toEqual([
        { id: id(1), name: 'fresh 1' },
        { id: id(3), name: 'fresh 3' },
      ]);
      expect(shapeState(app, 'squad')).toMatchObject({ handle: 'h2', offset: '0_2', needs_reset: false });
    } finally {
      writer.close();
      app.close();
    }
  });

  it('openReplicaWriter refuses an in-memory database and a file that does not exist', () => {
    expect(() => openReplicaWriter(':memory:')).toThrow(/needs a database file/);
    const d = mkdtempSync(join(tmpdir(), 'ai-shape-apply-'));
    dirs.push(d);
    expect(() => openReplicaWriter(join(d, 'missing.sqlite'))).toThrow();
  });
});
