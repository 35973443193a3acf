/**
 * A tool call that leaves out a required text field (issue 13 re-review blocker): the model gets
 * the Validation message naming the field as an error tool result and the run goes on (it ended
 * with RUN_ERROR `Internal … reading 'length'`). Real @anthropic-ai/sdk against the scripted
 * Messages API server, the real verb catalogue.
 */
import { EventType } from '@ag-ui/core';
import { afterEach, beforeEach, expect, it } from 'vitest';
import * as K from '../data/kinetix';
import { addOrg, addUser, collectEvents, tempDb, testHarness, type TempDb } from '../testing/kinetix-fixtures';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { defaultToolRegistry } from './catalogue';

let t: TempDb;
let server: ScriptedAnthropic;
let adminId: string;

beforeEach(async () => {
  t = tempDb();
  const orgId = addOrg(t.db, { name: 'Riverside FC' });
  adminId = addUser(t.db, orgId, { role: 'admin', displayName: 'Ada Admin' });
  server = await startScriptedAnthropic();
});
afterEach(async () => {
  await server.close();
  t.cleanup();
});

it('create_squad without season: the model reads a Validation error naming season, and the run completes', async () => {
  server.push({ toolUses: [{ name: 'create_squad', input: { name: 'Q' } }] }, { text: 'Which season is the squad for?' });
  const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url });
  const { runId } = kx.startRun({ userId: adminId, message: 'Add a squad called Q' });
  const events = await collectEvents(kx, adminId, runId);
  expect((await kx.waitForRun(runId)).status).toBe('completed');
  expect(events.map((e) => e.event.type)).not.toContain(EventType.RUN_ERROR);
  const results = server.requests[1]!.body.messages.at(-1)!.content as { type: string; content: string; is_error?: boolean }[];
  expect(results).toHaveLength(1);
  expect(results[0]!.is_error).toBe(true);
  expect(results[0]!.content).toMatch(/Validation/);
  expect(results[0]!.content).toMatch(/season: Required\./);
  expect(results[0]!.content).not.toMatch(/Cannot read properties/);
  expect(K.listToolCalls(t.db, runId)[0]).toMatchObject({ tool_name: 'create_squad', status: 'failed' });
});
