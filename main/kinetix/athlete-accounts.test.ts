/**
 * The assistant meets the athlete-account rule too (issue 13 re-review blocker): an admin asking
 * Kinetix to add an athlete account gets the service's refusal ("Ask an owner") as an error tool
 * result, nothing is proposed or written, and the run goes on. Real @anthropic-ai/sdk against the
 * scripted Messages API server, the real verb catalogue.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CLASSIFICATIONS } from '../../models/classification';
import * as K from '../data/kinetix';
import { findUserByEmail, putOrgSetting } from '../data/identity';
import { addOrg, addRecord, addUser, collectEvents, tempDb, testHarness, type TempDb } from '../testing/kinetix-fixtures';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { defaultToolRegistry } from './catalogue';
import { CLEARANCE_SETTING_KEY } from './classification';

let t: TempDb;
let server: ScriptedAnthropic;
let adminId: string;
let athleteId: string;

beforeEach(async () => {
  t = tempDb();
  const orgId = addOrg(t.db, { name: 'Riverside FC' });
  const ownerId = addUser(t.db, orgId, { role: 'owner', displayName: 'Olivia Owner' });
  adminId = addUser(t.db, orgId, { role: 'admin', displayName: 'Ada Admin' });
  // Clearance is not under test: the provider may see names, so the refusal is the account rule's.
  putOrgSetting(t.db, orgId, CLEARANCE_SETTING_KEY, { anthropic: [...CLASSIFICATIONS] });
  athleteId = addRecord(t.db, orgId, ownerId, 'owner', 'athlete', {
    name: 'Jane Doe',
    date_of_birth: '2001-02-03',
    sex: 'female',
    position: null,
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

it("an admin's create_user for an athlete account: the model reads Forbidden with 'Ask an owner', nothing is proposed, the run completes", async () => {
  const input = { email: 'jane.login@example.test', display_name: 'Jane login', role: 'athlete', linked_athlete_id: athleteId };
  server.push({ toolUses: [{ name: 'create_user', input }] }, { text: 'Only an owner can add that account.' });
  const { kx } = testHarness(t.db, defaultToolRegistry(), { baseURL: server.url });
  const { runId } = kx.startRun({ userId: adminId, message: 'Give Jane Doe a login' });
  await collectEvents(kx, adminId, runId);
  expect((await kx.waitForRun(runId)).status).toBe('completed');
  const results = server.requests[1]!.body.messages.at(-1)!.content as { content: string; is_error?: boolean }[];
  expect(results[0]!.is_error).toBe(true);
  expect(results[0]!.content).toMatch(/Forbidden/);
  expect(results[0]!.content).toMatch(/cannot create an athlete account.*Ask an owner/);
  expect(K.listToolCalls(t.db, runId)[0]).toMatchObject({ tool_name: 'create_user', status: 'failed' });
  expect(findUserByEmail(t.db, input.email)).toBeNull();
});
