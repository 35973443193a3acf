/**
 * Who opens a run's trace (trace-access.ts), end to end: real SQLite, the real catalogue, the real
 * @anthropic-ai/sdk against the scripted Messages API. The owner asked to look at a physio's
 * assistant change opens its trace from the activity entry; an admin is refused a trace whose run
 * read injuries (admins cannot read them) but opens one that touched only the fee schedule; a
 * coach (cannot read the fee schedule) and an athlete account are not shown it; another org's
 * owner never; the owner asked to approve a needs-owner change opens it before anything is
 * applied; a run that changed nothing has no activity entry, so only its own user opens it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../models/errors';
import { listActivity } from '../data/changesets';
import { createClinicFixture, type ClinicFixture } from '../testing/clinic-fixture';
import { testHarness, waitForEvent } from '../testing/kinetix-fixtures';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { EventType } from '@ag-ui/core';
import { defaultToolRegistry } from './catalogue';
import { KINETIX_EVENTS } from './events';
import type { Kinetix } from './harness';

let f: ClinicFixture;
let server: ScriptedAnthropic;
beforeEach(async () => {
  f = createClinicFixture();
  server = await startScriptedAnthropic();
});
afterEach(async () => {
  await server.close();
  f.close();
});

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e.code;
    throw e;
  }
  return 'ok';
}

/** Run `message` as the physio through the scripted tool uses, approving the one write. */
async function approvedRun(kx: Kinetix, toolUses: { name: string; input: unknown }[][]): Promise<string> {
  const physio = f.a.users.physio;
  for (const t of toolUses) server.push({ toolUses: t });
  server.push({ text: 'Done.' });
  const { runId } = kx.startRun({ userId: physio, message: 'do it' });
  const ev = await waitForEvent(
    kx,
    physio,
    runId,
    (e) => e.event.type === EventType.CUSTOM && (e.event as { name: string }).name === KINETIX_EVENTS.confirmRequired,
  );
  const c = (ev.event as unknown as { value: { toolCallId: string; argsHash: string; contentHash: string } }).value;
  kx.confirm(physio, c.toolCallId, { approve: true, argsHash: c.argsHash, contentHash: c.contentHash });
  expect((await kx.waitForRun(runId)).status).toBe('completed');
  return runId;
}

describe('run trace access', () => {
  it('a fee-schedule change via the assistant: the owner and an admin open its trace; a coach and an athlete do not', async () => {
    const { kx } = testHarness(f.db, defaultToolRegistry(), { baseURL: server.url });
    const runId = await approvedRun(kx, [[{ name: 'bulk_update_rates', input: { folder_id: f.a.folderId, pct: 5 } }]]);
    expect(listActivity(f.db, f.a.orgId).some((a) => a.run_id === runId)).toBe(true);
    const owner = kx.getRunTrace(f.a.users.owner, runId);
    expect(owner.run.id).toBe(runId);
    expect(owner.toolCalls.map((t) => t.tool_name)).toEqual(['bulk_update_rates']);
    expect(codeOf(() => kx.getRunTrace(f.a.users.admin, runId))).toBe('ok');
    expect(codeOf(() => kx.getRunTrace(f.a.users.physio, runId))).toBe('ok');
    // The coach cannot read the fee schedule, so cannot see the activity entry either.
    expect(codeOf(() => kx.getRunTrace(f.a.users.coach, runId))).toBe('NotFound');
    expect(codeOf(() => kx.getRunTrace(f.a.users.athlete, runId))).toBe('NotFound');
    expect(codeOf(() => kx.getRunTrace(f.b.users.owner, runId))).toBe('NotFound');
  });

  it('a run that read injuries before changing an athlete: the owner opens it, an admin is told why not', async () => {
    const { kx } = testHarness(f.db, defaultToolRegistry(), { baseURL: server.url });
    const runId = await approvedRun(kx, [
      [{ name: 'list_injuries', input: { athlete_id: f.a.athleteId } }],
      [{ name: 'update_athlete', input: { id: f.a.athleteId, position: 'Winger' } }],
    ]);
    expect(kx.getRunTrace(f.a.users.owner, runId).toolCalls.map((t) => t.tool_name)).toEqual(['list_injuries', 'update_athlete']);
    let err: unknown;
    try {
      kx.getRunTrace(f.a.users.admin, runId);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('Forbidden');
    expect((err as AppError).message).toMatch(/records your role cannot read \(.*injuries.*\)/);
  });

  it('the owner asked to approve a needs-owner change opens the run trace before anything is applied; an admin does not', async () => {
    const { kx } = testHarness(f.db, defaultToolRegistry(), { baseURL: server.url });
    server.push({ toolUses: [{ name: 'bulk_update_rates', input: { folder_id: f.a.folderId, pct: 25 } }] }, { text: 'Waiting for an owner.' });
    const { runId } = kx.startRun({ userId: f.a.users.physio, message: 'raise the private rates by 25%' });
    expect((await kx.waitForRun(runId)).status).toBe('completed');
    expect(listActivity(f.db, f.a.orgId).some((a) => a.run_id === runId)).toBe(false);
    const t = kx.getRunTrace(f.a.users.owner, runId);
    expect(t.trace.find((x) => x.kind === 'policy')!.data).toMatchObject({ verdict: 'needs_owner' });
    expect(codeOf(() => kx.getRunTrace(f.a.users.admin, runId))).toBe('NotFound');
  });

  it('a run that changed nothing has no activity entry: only its own user opens the trace', async () => {
    const { kx } = testHarness(f.db, defaultToolRegistry(), { baseURL: server.url });
    server.push({ toolUses: [{ name: 'list_athletes', input: {} }] }, { text: 'Here they are.' });
    const { runId } = kx.startRun({ userId: f.a.users.physio, message: 'list athletes' });
    expect((await kx.waitForRun(runId)).status).toBe('completed');
    expect(codeOf(() => kx.getRunTrace(f.a.users.physio, runId))).toBe('ok');
    expect(codeOf(() => kx.getRunTrace(f.a.users.owner, runId))).toBe('NotFound');
  });
});
