/**
 * Issue 9: what models actually send. Bounded input (§3), stop reasons and tool-call shape (§4),
 * one TEXT_MESSAGE_END per message (§12). Real SDK against the scripted Messages API server.
 */
import { EventType } from '@ag-ui/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as K from '../data/kinetix';
import { putOrgSetting } from '../data/identity';
import { CLASSIFICATIONS } from '../../models/classification';
import { CLEARANCE_SETTING_KEY } from './classification';
import { addOrg, addRecord, addUser, collectEvents, tempDb, testHarness, type TempDb } from '../testing/kinetix-fixtures';
import { testRegistry } from '../testing/kinetix-tools';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { digestInput, MAX_TOOL_INPUT_BYTES, MAX_TOOL_INPUT_DEPTH, measureInput } from '../services/bounds';
import type { RunEventEnvelope } from './bus';
import { MAX_TOOL_CALLS_PER_RESPONSE, REFUSAL_MESSAGE, TRUNCATED_NOTICE } from './harness';
import { PRICE_CEILING_PER_MTOK } from './pricing';
import { digestText } from '../services/bounds';

let t: TempDb;
let server: ScriptedAnthropic;
let orgId: string;
let ownerId: string;
let physioId: string;

beforeEach(async () => {
  t = tempDb();
  orgId = addOrg(t.db, { name: 'Riverside FC' });
  ownerId = addUser(t.db, orgId, { role: 'owner', displayName: 'Olivia Owner' });
  physioId = addUser(t.db, orgId, { role: 'physio', displayName: 'Priya Shah', email: 'priya@example.test' });
  // Reliability, not clearance, is under test: the club has cleared the provider for every class, so
  // writes of names and dates of birth are proposed rather than refused (clearance.test.ts covers that).
  putOrgSetting(t.db, orgId, CLEARANCE_SETTING_KEY, { anthropic: [...CLASSIFICATIONS] });
  addRecord(t.db, orgId, ownerId, 'owner', 'athlete', {
    name: 'Jane Doe',
    date_of_birth: '2001-02-03',
    sex: 'female',
    position: 'winger',
    squad_id: null,
    dominant_side: 'right',
    status: 'active',
    notes: '',
  });
  server = await startScriptedAnthropic();
});

afterEach(async () => {
  await server.close();
  t.cleanup();
});

const types = (events: RunEventEnvelope[]) => events.map((e) => e.event.type);
const toolResults = (req: number) =>
  server.requests[req]!.body.messages.at(-1)!.content as { type: string; tool_use_id: string; content: string; is_error?: boolean }[];

function endsPerMessage(events: RunEventEnvelope[]): Map<string, number> {
  const ends = new Map<string, number>();
  for (const e of events) {
    const ev = e.event as { type: string; messageId?: string };
    if (ev.type === EventType.TEXT_MESSAGE_START) ends.set(ev.messageId!, ends.get(ev.messageId!) ?? 0);
    if (ev.type === EventType.TEXT_MESSAGE_END) ends.set(ev.messageId!, (ends.get(ev.messageId!) ?? 0) + 1);
  }
  return ends;
}

describe('bounded input (issue 9 §3)', () => {
  it('measures without recursion: a 20,000-level input is refused at the depth limit, and its digest is computed iteratively', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = { a: deep };
    const m = measureInput(deep);
    expect(m).toMatchObject({ ok: false, reason: 'depth', depth: MAX_TOOL_INPUT_DEPTH + 1 });
    expect(digestInput(deep)).toMatch(/^[0-9a-f]{64}$/);
    expect(digestInput({ b: 1, a: [1, 'x'] })).toBe(digestText('{"a":[1,"x"],"b":1}'));
    expect(measureInput({ note: 'x'.repeat(MAX_TOOL_INPUT_BYTES) })).toMatchObject({ ok: false, reason: 'size' });
    expect(measureInput({ name: 'Jane', tags: ['a', 'b'] })).toEqual({ ok: true, bytes: expect.any(Number), depth: 2 });
  });

  it('a 20,000-level nested tool input: refused with a clear message, the audit row holds digest and size only, the run goes on', async () => {
    const raw = `{"search":${'['.repeat(20_000)}1${']'.repeat(20_000)}}`;
    server.push({ toolUses: [{ name: 'list_athletes', rawJson: raw }] }, { text: 'That input was refused.' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: physioId, message: 'list athletes' });
    await collectEvents(kx, physioId, runId);
    expect((await kx.waitForRun(runId)).status).toBe('completed');
    const [row] = K.listToolCalls(t.db, runId);
    expect(row).toMatchObject({ tool_name: 'list_athletes', status: 'failed', args_hash: `sha256:${digestText(raw)}` });
    expect(JSON.parse(row!.args_json)).toEqual({ refused_input: 'depth', bytes: raw.length, depth: MAX_TOOL_INPUT_DEPTH + 1, sha256: digestText(raw) });
    const [result] = toolResults(1);
    expect(result!.is_error).toBe(true);
    expect(result!.content).toContain(`nested deeper than ${MAX_TOOL_INPUT_DEPTH} levels`);
  });

  it('a 3 MB argument is refused; it is stored nowhere (tool-call row, trace, events)', async () => {
    const big = 'A'.repeat(3 * 1024 * 1024);
    server.push({ toolUses: [{ name: 'create_athlete', input: { name: big, date_of_birth: '2001-01-01', sex: 'female' } }] }, { text: 'Too large.' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: physioId, message: 'add athlete' });
    const events = await collectEvents(kx, physioId, runId);
    await kx.waitForRun(runId);
    const [row] = K.listToolCalls(t.db, runId);
    expect(row!.status).toBe('failed');
    expect(JSON.parse(row!.args_json)).toMatchObject({ refused_input: 'size', bytes: expect.any(Number) });
    expect(JSON.parse(row!.args_json).bytes).toBeGreaterThan(3 * 1024 * 1024);
    const stored =
      JSON.stringify(K.listToolCalls(t.db, runId)) +
      JSON.stringify(K.listTrace(t.db, runId)) +
      JSON.stringify(K.listRunEvents(t.db, runId)) +
      JSON.stringify(events);
    expect(stored.length).toBeLessThan(200_000);
    expect(stored).not.toContain('AAAAAAAAAAAAAAAAAAAA');
    expect(toolResults(1)[0]!.content).toContain(`larger than ${MAX_TOOL_INPUT_BYTES} bytes`);
    // The model's own message is replayed without the refused input.
    const replayed = server.requests[1]!.body.messages.at(-2)!.content as { type: string; input?: unknown }[];
    expect(replayed.find((b) => b.type === 'tool_use')!.input).toEqual({});
  });
});

describe('stop reasons and tool-call shape (issue 9 §4)', () => {
  it('max_tokens: a tool_use whose JSON was cut off is never dispatched, and the model is told why', async () => {
    server.push(
      { toolUses: [{ name: 'create_athlete', rawJson: '{"name":"Half', id: 'toolu_cut' }], stopReason: 'max_tokens' },
      { text: 'Sorry, my reply was cut off.' },
    );
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: physioId, message: 'add athlete' });
    await collectEvents(kx, physioId, runId);
    expect((await kx.waitForRun(runId)).status).toBe('completed');
    const [row] = K.listToolCalls(t.db, runId);
    expect(row).toMatchObject({ status: 'failed', changeset_id: null, proposal_json: null });
    expect(JSON.parse(row!.args_json)).toMatchObject({ refused_input: 'incomplete' });
    expect(toolResults(1)[0]).toMatchObject({ tool_use_id: 'toolu_cut', is_error: true });
    expect(toolResults(1)[0]!.content).toContain('cut off at the output limit (max_tokens)');
  });

  it('max_tokens on a text answer: kept, marked as cut off to the user, stored with the notice, one TEXT_MESSAGE_END per message', async () => {
    server.push({ text: 'The squad has three athletes with hamstring inj', stopReason: 'max_tokens' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId, conversationId } = kx.startRun({ userId: physioId, message: 'summarise' });
    const events = await collectEvents(kx, physioId, runId);
    const out = await kx.waitForRun(runId);
    expect(out.status).toBe('completed');
    expect(out.text).toBe(`The squad has three athletes with hamstring inj\n\n${TRUNCATED_NOTICE}`);
    const finished = events.find((e) => e.event.type === EventType.RUN_FINISHED)!.event as { result: Record<string, unknown> };
    expect(finished.result).toMatchObject({ truncated: true, stopReason: 'max_tokens' });
    expect(K.listMessages(t.db, conversationId).at(-1)!.content).toContain(TRUNCATED_NOTICE);
    const ends = endsPerMessage(events);
    expect(ends.size).toBe(2);
    expect([...ends.values()]).toEqual([1, 1]);
  });

  it('refusal is shown as a refusal, not a completed answer', async () => {
    server.push({ text: '', stopReason: 'refusal' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: physioId, message: 'something' });
    const events = await collectEvents(kx, physioId, runId);
    const out = await kx.waitForRun(runId);
    expect(out.status).toBe('failed');
    expect(out.error).toMatchObject({ runCode: 'Refusal', message: REFUSAL_MESSAGE });
    expect(events.at(-1)!.event).toMatchObject({ type: EventType.RUN_ERROR, code: 'Refusal' });
  });

  it('pause_turn and an unknown stop reason end the run with a clear outcome; their tool calls do not run', async () => {
    server.push({ toolUses: [{ name: 'list_athletes', input: {} }], stopReason: 'pause_turn' }, { text: 'x', stopReason: 'model_context_window_exceeded_v9' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const a = kx.startRun({ userId: physioId, message: 'one' });
    await collectEvents(kx, physioId, a.runId);
    const outA = await kx.waitForRun(a.runId);
    expect(outA).toMatchObject({ status: 'failed', error: { runCode: 'PauseTurn', message: expect.stringContaining('pause_turn') } });
    expect(K.listToolCalls(t.db, a.runId)).toEqual([]);
    const b = kx.startRun({ userId: physioId, message: 'two' });
    await collectEvents(kx, physioId, b.runId);
    expect(await kx.waitForRun(b.runId)).toMatchObject({
      status: 'failed',
      error: { runCode: 'UnknownStopReason', message: expect.stringContaining('"model_context_window_exceeded_v9"') },
    });
    expect(server.requests).toHaveLength(2);
  });

  it('tool input sent in content_block_start (no deltas) is used, not replaced by {}', async () => {
    server.push(
      { toolUses: [{ name: 'create_athlete', input: { name: 'Start Block', date_of_birth: '2000-05-05', sex: 'male' }, inputInStart: true }] },
      { text: 'Proposed.' },
    );
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: physioId, message: 'add' });
    for await (const e of kx.subscribe(physioId, runId)) {
      if (e.event.type === EventType.CUSTOM && (e.event as { name: string }).name === 'kinetix.confirm_required') {
        expect((e.event as { value: { args: unknown } }).value.args).toEqual({ name: 'Start Block', date_of_birth: '2000-05-05', sex: 'male' });
        kx.confirm(physioId, (e.event as { value: { toolCallId: string } }).value.toolCallId, { approve: false });
      }
    }
    expect(K.listToolCalls(t.db, runId)[0]).toMatchObject({ status: 'rejected' });
    expect(JSON.parse(K.listToolCalls(t.db, runId)[0]!.args_json)).toEqual({ name: 'Start Block', date_of_birth: '2000-05-05', sex: 'male' });
  });

  it('a repeated tool_use id in one run is refused (and renamed in what is sent back); more than 16 calls in one response are refused beyond the 16th', async () => {
    server.push(
      {
        toolUses: [
          { name: 'list_athletes', input: {}, id: 'toolu_same' },
          { name: 'list_athletes', input: {}, id: 'toolu_same' },
        ],
      },
      { toolUses: [{ name: 'list_injuries', input: {}, id: 'toolu_same' }] },
      { toolUses: Array.from({ length: 20 }, (_, i) => ({ name: 'list_athletes', input: {}, id: `toolu_many_${i}` })) },
      { text: 'Done.' },
    );
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: physioId, message: 'go' });
    await collectEvents(kx, physioId, runId);
    expect((await kx.waitForRun(runId)).status).toBe('completed');
    const calls = K.listToolCalls(t.db, runId);
    expect(calls.map((c) => c.status).slice(0, 3)).toEqual(['executed', 'failed', 'failed']);
    expect(JSON.parse(calls[1]!.error_json!).message).toContain('was already used');
    // The second request carries unique tool_use ids and one result for each.
    const assistant = server.requests[1]!.body.messages.at(-2)!.content as { type: string; id?: string }[];
    const ids = assistant.filter((b) => b.type === 'tool_use').map((b) => b.id);
    expect(new Set(ids).size).toBe(2);
    expect(toolResults(1).map((r) => r.tool_use_id)).toEqual(ids);
    const many = calls.slice(3);
    expect(many).toHaveLength(20);
    expect(many.filter((c) => c.status === 'executed')).toHaveLength(MAX_TOOL_CALLS_PER_RESPONSE);
    expect(
      many
        .slice(MAX_TOOL_CALLS_PER_RESPONSE)
        .every((c) => c.status === 'failed' && JSON.parse(c.error_json!).message.includes(`At most ${MAX_TOOL_CALLS_PER_RESPONSE} tool calls`)),
    ).toBe(true);
  });

  it('a response cut short mid-text gets exactly one TEXT_MESSAGE_END (issue 9 §12)', async () => {
    server.push({ hang: 'after_start', text: 'Partial ans' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url, limits: { providerTimeoutMs: 300 } });
    const { runId } = kx.startRun({ userId: physioId, message: 'x' });
    const events = await collectEvents(kx, physioId, runId);
    expect((await kx.waitForRun(runId)).status).toBe('failed');
    const ends = endsPerMessage(events);
    expect(ends.size).toBeGreaterThanOrEqual(1);
    for (const n of ends.values()) expect(n).toBe(1);
    expect(types(events).filter((x) => x === EventType.TEXT_MESSAGE_END).length).toBe(ends.size);
  });
});

describe('one redactor for every sink (issue 9 §5)', () => {
  const KEYS = {
    anthropic: 'sk-ant-api03-PROMPTKEY0123456789abcdef',
    openai: 'sk-proj-OPENAIKEY0123456789abcdefXYZ',
    github: 'ghp_GITHUBTOKEN0123456789abcdefABCD',
    device: 'aik_DEVICEKEY0123456789abcdefghij',
    mcp: 'aimcp_MCPTOKEN0123456789abcdefghijklmn',
    bearer: 'eyJhbGciOiJIUzI1NiJ9.BEARERPAYLOAD123.sig456',
    password: 'Hunter2Swordfish!',
  };
  const values = Object.values(KEYS);

  it('a key typed into the prompt, or echoed by the model across stream chunks, is masked in messages, title, request_text, events, traces and the answer', async () => {
    const prompt = `my key is ${KEYS.anthropic} and ${KEYS.openai}; Authorization: Bearer ${KEYS.bearer} password: ${KEYS.password}`;
    server.push((req) => {
      // The model is sent the masked prompt, never the key.
      expect(JSON.stringify(req.body.messages)).not.toContain(KEYS.anthropic);
      return { text: `Echo: ${KEYS.github} ${KEYS.device} ${KEYS.mcp} pwd=${KEYS.password} done`, chunk: 5 };
    });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId, conversationId } = kx.startRun({ userId: physioId, message: prompt });
    const events = await collectEvents(kx, physioId, runId);
    const out = await kx.waitForRun(runId);
    expect(out.status).toBe('completed');
    expect(out.text).toBe('Echo: ••• ••• ••• pwd=••• done');
    const streamed = events
      .filter((e) => e.event.type === EventType.TEXT_MESSAGE_CONTENT)
      .map((e) => (e.event as { delta: string }).delta)
      .join('');
    expect(streamed).toBe(out.text);
    const conv = K.getOwnConversation(t.db, orgId, physioId, conversationId)!;
    const run = K.getRun(t.db, runId)!;
    expect(run.request_text).toBe('my key is ••• and •••; Authorization: Bearer ••• password: •••');
    expect(conv.title).toBe(run.request_text.slice(0, 80));
    const everything = JSON.stringify([
      conv,
      run,
      K.listMessages(t.db, conversationId),
      K.listRunEvents(t.db, runId),
      K.listTrace(t.db, runId),
      events,
      server.requests.map((r) => r.body),
    ]);
    for (const v of values) expect(everything.includes(v), `${v} leaked`).toBe(false);
  });

  it('stdout of the CLI passes the same redactor, also for JSON-escaped password fields', async () => {
    const { redactText } = await import('./mask');
    const line = JSON.stringify({ answer: `here ${KEYS.github} and "token":"${KEYS.password}"` });
    expect(JSON.parse(redactText(line))).toEqual({ answer: 'here ••• and "token":"•••"' });
  });
});

describe('a confirm request is never lost (issue 9 §2)', () => {
  const reads = (n: number, tag: string) => ({
    toolUses: Array.from({ length: n }, (_, i) => ({ name: 'list_athletes', input: {}, id: `toolu_${tag}_${i}` })),
  });

  it('a subscriber whose buffer overflowed catches up from the events table and sees confirm_required (≥ 300 events before it)', async () => {
    server.push(
      reads(16, 'a'),
      reads(16, 'b'),
      reads(16, 'c'),
      reads(16, 'd'),
      { toolUses: [{ name: 'create_athlete', input: { name: 'Late Write', date_of_birth: '2000-01-01', sex: 'female' } }] },
      { text: 'Added.' },
    );
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: physioId, message: 'look around, then add Late Write' });
    const it = kx.subscribe(physioId, runId)[Symbol.asyncIterator]();
    // The view reads its first event (it is live), then stalls until the run waits for the human.
    const first = await it.next();
    expect(first.value!.event.type).toBe(EventType.RUN_STARTED);
    for (let i = 0; i < 400 && K.getRun(t.db, runId)!.status !== 'waiting_confirm'; i++) await new Promise((r) => setTimeout(r, 25));
    expect(K.getRun(t.db, runId)!.status).toBe('waiting_confirm');
    expect(kx.bus.subscriberCount(runId)).toBe(1);
    const seen: RunEventEnvelope[] = [first.value!];
    let confirmAt = -1;
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      seen.push(r.value);
      const ev = r.value.event as { type: string; name?: string; value?: { toolCallId: string; argsHash: string } };
      if (ev.type === EventType.CUSTOM && ev.name === 'kinetix.confirm_required') {
        confirmAt = r.value.seq;
        kx.confirm(physioId, ev.value!.toolCallId, { approve: true, argsHash: ev.value!.argsHash });
      }
    }
    expect(confirmAt).toBeGreaterThan(300);
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    const out = await kx.waitForRun(runId);
    expect(out).toMatchObject({ status: 'completed', text: 'Added.' });
    expect(K.listToolCalls(t.db, runId).at(-1)).toMatchObject({ tool_name: 'create_athlete', status: 'executed' });
  });
});

describe('unknown price never counts as $0 (issue 9 §12)', () => {
  it('3 M tokens on an unpriced model under a $0.001 cap: counted at the stated ceiling, the run stops and says why, the next run is refused', async () => {
    const org2 = addOrg(t.db, { name: 'Unpriced FC', budgetCapUsd: 0.001, model: 'claude-unpriced-test-9' });
    const u = addUser(t.db, org2, { role: 'physio' });
    server.push({ toolUses: [{ name: 'list_athletes', input: {} }], usage: { input_tokens: 2_000_000, output_tokens: 1_000_000 } }, { text: 'never reached' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId: u, message: 'go' });
    const events = await collectEvents(kx, u, runId);
    const out = await kx.waitForRun(runId);
    const ceiling = (2_000_000 * PRICE_CEILING_PER_MTOK.input + 1_000_000 * PRICE_CEILING_PER_MTOK.output) / 1_000_000;
    expect(ceiling).toBe(105);
    expect(K.listUsage(t.db, runId)[0]).toMatchObject({ model: 'claude-unpriced-test-9', cost_usd: ceiling });
    expect(JSON.parse(K.listUsage(t.db, runId)[0]!.price_snapshot_json!)).toMatchObject({ unknown_price: true });
    expect(out).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('The price of the model "claude-unpriced-test-9" is unknown') } });
    expect(K.getRun(t.db, runId)!.error_code).toBe('BudgetExceeded');
    expect(K.listToolCalls(t.db, runId)).toEqual([]);
    expect(server.requests).toHaveLength(1);
    const usageEvent = events.find((e) => e.event.type === EventType.CUSTOM && (e.event as { name: string }).name === 'kinetix.usage')!.event as {
      value: Record<string, unknown>;
    };
    expect(usageEvent.value).toMatchObject({ costUsd: ceiling, priceUnknown: true });
    expect(() => kx.startRun({ userId: u, message: 'again' })).toThrow(expect.objectContaining({ code: 'BudgetExceeded' }));
  });
});
