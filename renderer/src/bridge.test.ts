/**
 * The renderer's typed `call()`: a verb travels in the `verb.call` envelope (writes with an
 * idempotency key), an operation by its own name, and an error reply comes back as a typed
 * CallError the page can switch on (code, message, field issues).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { CallResult, ContractBridge } from '../../models/contract';
import { AppError } from '../../models/errors';

const sent: { op: string; input: unknown }[] = [];
let reply: CallResult<unknown> = { ok: true, value: null };
const fake: ContractBridge = {
  call: (op, input) => {
    sent.push({ op, input });
    return Promise.resolve(reply as never);
  },
  subscribe: () => () => undefined,
};

let bridge: typeof import('./bridge');
beforeAll(async () => {
  (globalThis as { window?: unknown }).window = { athleteIntelligence: fake };
  bridge = await import('./bridge');
});

describe('call()', () => {
  it('sends a read verb in the verb.call envelope and returns its value', async () => {
    sent.length = 0;
    reply = { ok: true, value: { total: 0, athletes: [] } };
    const r = await bridge.call('athletes.list', { status: 'all', limit: 5 });
    expect(r).toEqual({ total: 0, athletes: [] });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.op).toBe('verb.call');
    expect(sent[0]!.input).toMatchObject({ verb: 'athletes.list', input: { status: 'all', limit: 5 } });
  });

  it("gives a write an idempotency key, reusing the caller's on a retry", async () => {
    sent.length = 0;
    reply = { ok: true, value: { changeset: {} } };
    await bridge.call('squads.create', { name: 'U21', season: '2026' });
    await bridge.call('squads.create', { name: 'U21', season: '2026' }, { idempotencyKey: 'retry-key-123' });
    const keys = sent.map((s) => (s.input as { idempotency_key?: string }).idempotency_key);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe('retry-key-123');
  });

  it('sends a contract operation under its own name', async () => {
    sent.length = 0;
    reply = { ok: true, value: null };
    await bridge.call('session.me', {});
    expect(sent).toEqual([{ op: 'session.me', input: {} }]);
  });

  it('throws a typed error that keeps code, message and field issues', async () => {
    reply = {
      ok: false,
      error: {
        code: 'Validation',
        message: 'Invalid input: rpe: Too big',
        issues: [
          { path: 'rpe', message: 'Too big' },
          { path: 'rows.3.minutes', message: 'Required' },
        ],
      },
    };
    const err = await bridge
      .call('workload.logSessionLoads', { athlete_id: '0193f0a0-0000-7000-8000-000000000001', date: '2026-11-30', duration_min: 60, rpe: 11 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(bridge.CallError);
    expect(err).toBeInstanceOf(AppError);
    const e = err as InstanceType<typeof bridge.CallError>;
    expect(e.code).toBe('Validation');
    expect(e.message).toBe('Invalid input: rpe: Too big');
    expect(e.fieldErrors()).toEqual({ rpe: 'Too big', 'rows.3.minutes': 'Required' });
    expect(e.payload).toEqual(reply.ok ? null : reply.error);

    reply = {
      ok: false,
      error: { code: 'Conflict', message: 'Reload and redo.', conflicts: [{ table: 'athlete', id: 'a', expectedVersion: 1, actualVersion: 2 }] },
    };
    const c = (await bridge.call('athletes.get', { id: 'a' }).catch((x: unknown) => x)) as InstanceType<typeof bridge.CallError>;
    expect(c.code).toBe('Conflict');
    expect(c.conflicts).toEqual([{ table: 'athlete', id: 'a', expectedVersion: 1, actualVersion: 2 }]);
    expect(c.fieldErrors()).toEqual({});
  });
});

describe('readEventStream (eventsource-parser)', () => {
  function body(chunks: string[]): ReadableStream<BufferSource> {
    const enc = new TextEncoder();
    return new ReadableStream<BufferSource>({
      start(ctl) {
        for (const c of chunks) ctl.enqueue(enc.encode(c));
        ctl.close();
      },
    });
  }

  it('parses events split across chunks, with ids, names, multi-line data and heartbeat comments', async () => {
    const got: { event?: string; id?: string; data: string }[] = [];
    await bridge.readEventStream(
      body(['id: 1\ndata: {"a"', ':1}\n\n: heartbeat\n\nid: 2\r\nevent: end\r\ndata: line one\r\n', 'data: line two\r\n\r\n']),
      (m) => got.push({ ...(m.event ? { event: m.event } : {}), ...(m.id ? { id: m.id } : {}), data: m.data }),
    );
    expect(got).toEqual([
      { id: '1', data: '{"a":1}' },
      { event: 'end', id: '2', data: 'line one\nline two' },
    ]);
  });

  it('stops reading when told to (the stream ended for the caller)', async () => {
    const got: string[] = [];
    let stop = false;
    await bridge.readEventStream(
      body(['data: one\n\n', 'data: two\n\n', 'data: three\n\n']),
      (m) => {
        got.push(m.data);
        stop = true;
      },
      () => stop,
    );
    expect(got).toEqual(['one']);
  });
});
