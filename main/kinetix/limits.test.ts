/**
 * Each limit of kinetix.md §4 and the provider edges of §9, against the real SDK and the
 * scripted server: a really hung call ends at the (shortened) timeout, the 4th run is refused,
 * the iteration cap, both budget gates, Stop persisting spend, rate limits, usage idempotency,
 * no key, no key in any log/error/event, the encrypted key.
 */
import { EventType } from '@ag-ui/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getOrgSetting } from '../data/identity';
import * as K from '../data/kinetix';
import { addOrg, addUser, collectEvents, tempDb, testHarness, updateUser, type TempDb } from '../testing/kinetix-fixtures';
import { testRegistry } from '../testing/kinetix-tools';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { Kinetix } from './harness';
import { BUDGET_STOP_MESSAGE } from './limits';
import { AnthropicProvider } from './provider';
import { ManualScheduler } from './scheduler';
import { describeProviderKey, PROVIDER_KEY_SETTING, resolveProviderKey, SecretBox, storeProviderKey } from './secrets';

let t: TempDb;
let server: ScriptedAnthropic;
let orgId: string;
let ownerId: string;
let userId: string;

beforeEach(async () => {
  t = tempDb();
  orgId = addOrg(t.db);
  ownerId = addUser(t.db, orgId, { role: 'owner' });
  userId = addUser(t.db, orgId, { role: 'physio', displayName: 'Priya Shah' });
  server = await startScriptedAnthropic();
});
afterEach(async () => {
  await server.close();
  t.cleanup();
});

describe('provider call timeout (per call)', () => {
  it('a server that accepts and never answers ends the run at the timeout with a clear error', async () => {
    server.push({ hang: 'before_headers' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url, limits: { providerTimeoutMs: 400 } });
    const started = Date.now();
    const { runId } = kx.startRun({ userId, message: 'hello?' });
    await server.waitForRequests(1);
    expect(server.hanging).toBe(1);
    const outcome = await kx.waitForRun(runId);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(5000);
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toMatch(/did not answer within/);
    const events = await collectEvents(kx, userId, runId);
    expect(events.at(-1)!.event.type).toBe(EventType.RUN_ERROR);
  });

  it('a stream that starts then stalls also ends at the timeout, and the spend reached is recorded', async () => {
    server.push({ hang: 'after_start', usage: { input_tokens: 5000 } });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url, limits: { providerTimeoutMs: 400 } });
    const { runId } = kx.startRun({ userId, message: 'hello?' });
    const outcome = await kx.waitForRun(runId);
    expect(outcome.error?.message).toMatch(/did not answer within/);
    const usage = K.listUsage(t.db, runId);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ partial: 1, input_tokens: 5000 });
  });

  it('an HTTP error from the provider fails the run with a clear message that never contains the key', async () => {
    const key = 'sk-ant-api03-SECRET-never-print-me-000000';
    const bad = await startScriptedAnthropic([], { expectedKey: 'a-different-key' });
    try {
      const { kx, logs } = testHarness(t.db, testRegistry(), { baseURL: bad.url, apiKey: key });
      const { runId } = kx.startRun({ userId, message: 'hi' });
      const outcome = await kx.waitForRun(runId);
      expect(outcome.status).toBe('failed');
      expect(outcome.error?.message).toMatch(/API key was rejected/);
      const everything = JSON.stringify([outcome, logs, K.listRunEvents(t.db, runId), K.listTrace(t.db, runId), K.getRun(t.db, runId)]);
      expect(everything).not.toContain(key);
      expect(everything).not.toContain('SECRET-never');
    } finally {
      await bad.close();
    }
  });
});

describe('concurrency, iterations, rate limits', () => {
  it('refuses a 4th concurrent run per user (not queued); another user is unaffected', async () => {
    server.push({ hang: 'after_start' }, { hang: 'after_start' }, { hang: 'after_start' }, { text: 'other user ok' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const runs = [1, 2, 3].map(() => kx.startRun({ userId, message: 'slow' }).runId);
    expect(() => kx.startRun({ userId, message: 'fourth' })).toThrow(expect.objectContaining({ code: 'TooManyRuns' }));
    await server.waitForRequests(3);
    const other = kx.startRun({ userId: ownerId, message: 'mine' });
    expect((await kx.waitForRun(other.runId)).status).toBe('completed');
    for (const r of runs) kx.stop(userId, r);
    for (const r of runs) expect((await kx.waitForRun(r)).status).toBe('cancelled');
    // A slot is free again.
    server.push({ text: 'ok' });
    expect((await kx.waitForRun(kx.startRun({ userId, message: 'again' }).runId)).status).toBe('completed');
  });

  it('stops a runaway loop at the iteration cap with a message', async () => {
    for (let i = 0; i < 5; i++) server.push({ toolUses: [{ name: 'list_athletes', input: {} }] });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url, limits: { maxIterations: 3 } });
    const { runId } = kx.startRun({ userId, message: 'loop' });
    const outcome = await kx.waitForRun(runId);
    expect(server.requests).toHaveLength(3);
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.runCode).toBe('IterationLimit');
    expect(K.listToolCalls(t.db, runId)).toHaveLength(2);
    expect(K.listUsage(t.db, runId).map((u) => u.request_index)).toEqual([0, 1, 2]);
  });

  it("default limits are the design's", () => {
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    expect(kx.limits).toMatchObject({
      maxConcurrentRunsPerUser: 3,
      confirmTimeoutMs: 600_000,
      providerTimeoutMs: 90_000,
      maxIterations: 12,
      capabilityTtlMs: 300_000,
    });
  });

  it('refuses runs over the per-user and per-org rate with a retry-after, and allows them again after the window', async () => {
    const clock = new ManualScheduler();
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url, scheduler: clock, limits: { userRunsPerMinute: 2, orgRunsPerMinute: 3 } });
    server.push({ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' });
    await kx.waitForRun(kx.startRun({ userId, message: '1' }).runId);
    clock.advance(10_000);
    await kx.waitForRun(kx.startRun({ userId, message: '2' }).runId);
    let err: { code?: string; retryAfterSeconds?: number } = {};
    try {
      kx.startRun({ userId, message: '3' });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err).toMatchObject({ code: 'RateLimited', retryAfterSeconds: 50 });
    await kx.waitForRun(kx.startRun({ userId: ownerId, message: 'owner 1' }).runId);
    expect(() => kx.startRun({ userId: ownerId, message: 'owner 2' })).toThrow(expect.objectContaining({ code: 'RateLimited' }));
    clock.advance(60_000);
    expect((await kx.waitForRun(kx.startRun({ userId, message: '4' }).runId)).status).toBe('completed');
  });
});

describe('budget', () => {
  it('refuses before the first paid call when the org cap is used up, saying the remaining headroom', async () => {
    const capped = addOrg(t.db, { budgetCapUsd: 0 });
    const u = addUser(t.db, capped, { role: 'physio' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    expect(() => kx.startRun({ userId: u, message: 'hi' })).toThrow(expect.objectContaining({ code: 'BudgetExceeded', remainingUsd: 0 }));
    expect(server.requests).toHaveLength(0);
  });

  it('refuses on the user cap, month to date, once spend reaches it', async () => {
    updateUser(t.db, orgId, ownerId, userId, { budget_cap_usd: 0.01 });
    server.push({ text: 'expensive', usage: { input_tokens: 10_000, output_tokens: 100 } });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    await kx.waitForRun(kx.startRun({ userId, message: 'one' }).runId);
    expect(() => kx.startRun({ userId, message: 'two' })).toThrow(
      expect.objectContaining({ code: 'BudgetExceeded', message: expect.stringMatching(/personal monthly Kinetix budget/) }),
    );
    // The owner (no personal cap, no org cap) is unaffected.
    server.push({ text: 'fine' });
    expect((await kx.waitForRun(kx.startRun({ userId: ownerId, message: 'x' }).runId)).status).toBe('completed');
  });

  it('stops mid-run when a response asking for more tools reaches the remaining budget, with the stop message', async () => {
    updateUser(t.db, orgId, ownerId, userId, { budget_cap_usd: 0.02 });
    server.push({ text: 'Checking…', toolUses: [{ name: 'list_athletes', input: {} }], usage: { input_tokens: 20_000, output_tokens: 50 } }, { text: 'never' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId, message: 'big job' });
    const outcome = await kx.waitForRun(runId);
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('BudgetExceeded');
    expect(outcome.text).toContain(BUDGET_STOP_MESSAGE);
    expect(BUDGET_STOP_MESSAGE.startsWith('I stopped partway through because this turn reached the remaining')).toBe(true);
    expect(server.requests).toHaveLength(1);
    expect(K.listToolCalls(t.db, runId)).toHaveLength(0);
    const msgs = kx.getConversation(userId, outcome.conversationId).messages;
    expect(msgs.at(-1)!.content).toContain(BUDGET_STOP_MESSAGE);
  });

  it('never withholds a completed answer, even over budget', async () => {
    updateUser(t.db, orgId, ownerId, userId, { budget_cap_usd: 0.02 });
    server.push({ text: 'Here is the whole answer.', usage: { input_tokens: 20_000, output_tokens: 50 } });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const outcome = await kx.waitForRun(kx.startRun({ userId, message: 'q' }).runId);
    expect(outcome).toMatchObject({ status: 'completed', text: 'Here is the whole answer.' });
  });

  it('Stop persists the spend of the cut-short response', async () => {
    server.push({ hang: 'after_start', usage: { input_tokens: 40_000 }, text: 'Working on it' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId, message: 'long' });
    await server.waitForRequests(1);
    // Wait until the response has begun streaming (the harness has read message_start and its input tokens).
    for await (const e of kx.subscribe(userId, runId)) if (e.event.type === EventType.TEXT_MESSAGE_CONTENT) break;
    kx.stop(userId, runId);
    const outcome = await kx.waitForRun(runId);
    expect(outcome.status).toBe('cancelled');
    const usage = K.listUsage(t.db, runId);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ partial: 1, input_tokens: 40_000 });
    expect(usage[0]!.cost_usd!).toBeGreaterThan(0.1);
    expect(K.getRun(t.db, runId)!.cost_usd).toBeCloseTo(usage[0]!.cost_usd!, 10);
  });
});

describe('usage rows', () => {
  it('re-inserting (run_id, request_index) is a no-op', async () => {
    server.push({ text: 'hi' });
    const { kx } = testHarness(t.db, testRegistry(), { baseURL: server.url });
    const { runId } = kx.startRun({ userId, message: 'hi' });
    await kx.waitForRun(runId);
    const row = K.listUsage(t.db, runId)[0]!;
    expect(K.insertUsage(t.db, { ...row, id: 'another-id', input_tokens: 999_999 })).toBe(false);
    expect(K.listUsage(t.db, runId)).toEqual([row]);
  });
});

describe('provider key', () => {
  it('with no key: a clear refusal, no request, and the rest of the app keeps working', () => {
    const kx = Kinetix.open({ db: t.db, tools: testRegistry(), env: {}, secretBox: null, log: () => {} });
    expect(() => kx.startRun({ userId, message: 'hi' })).toThrow(
      expect.objectContaining({ code: 'NotConfigured', message: expect.stringMatching(/no Anthropic API key is configured/) }),
    );
    expect(kx.listConversations(userId)).toEqual([]);
    expect(describeProviderKey(t.db, orgId, null, {})).toEqual({ configured: false, source: 'none', baseUrl: null });
  });

  it('stores the key encrypted (AES-256-GCM); settings hold only ciphertext; the SDK gets the real key', async () => {
    const box = SecretBox.fromEnvOrFile(`${t.dir}/machine.key`, {});
    const key = 'sk-ant-api03-stored-in-settings-abcdef';
    storeProviderKey(t.db, orgId, key, box);
    const stored = getOrgSetting<Record<string, string>>(t.db, orgId, PROVIDER_KEY_SETTING)!;
    expect(stored.alg).toBe('aes-256-gcm');
    expect(JSON.stringify(stored)).not.toContain('stored-in-settings');
    expect(resolveProviderKey(t.db, orgId, box, () => {}, {})).toEqual({ key, source: 'settings' });
    expect(JSON.stringify(describeProviderKey(t.db, orgId, box, {}))).not.toContain(key);
    // Another machine key cannot open it (falls back to the environment, here none).
    const other = new SecretBox(Buffer.alloc(32, 7));
    const lines: string[] = [];
    expect(resolveProviderKey(t.db, orgId, other, (l) => lines.push(l), {})).toEqual({ key: null, source: 'none' });
    expect(lines.join('\n')).not.toContain(key);

    const srv = await startScriptedAnthropic([{ text: 'ok' }], { expectedKey: key });
    try {
      const kx = Kinetix.open({
        db: t.db,
        tools: testRegistry(),
        env: {},
        secretBox: box,
        log: () => {},
        providerFactory: (cfg) => new AnthropicProvider({ apiKey: cfg.apiKey, baseURL: srv.url, maxRetries: 0 }),
      });
      expect((await kx.waitForRun(kx.startRun({ userId, message: 'hi' }).runId)).status).toBe('completed');
    } finally {
      await srv.close();
    }
  });

  it('honours ANTHROPIC_BASE_URL by default', async () => {
    server.push({ text: 'via env base url' });
    const prev = process.env.ANTHROPIC_BASE_URL;
    process.env.ANTHROPIC_BASE_URL = server.url;
    try {
      const kx = Kinetix.open({
        db: t.db,
        tools: testRegistry(),
        env: { ANTHROPIC_API_KEY: 'sk-ant-env-key-123456', ANTHROPIC_BASE_URL: server.url },
        secretBox: null,
        log: () => {},
      });
      expect((await kx.waitForRun(kx.startRun({ userId, message: 'hi' }).runId)).text).toBe('via env base url');
    } finally {
      if (prev === undefined) delete process.env.ANTHROPIC_BASE_URL;
      else process.env.ANTHROPIC_BASE_URL = prev;
    }
  });
});
