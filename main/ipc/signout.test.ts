/**
 * Signing out stops the user's pending assistant runs, server side: the real handlers, the real
 * harness and @anthropic-ai/sdk against the scripted Messages API, real SQLite. A run waiting for
 * the user's confirmation ends as stopped when its window signs out; its proposal is not applied
 * (nothing written) and no longer waits; its run slot (lease) is free at once, not after the
 * 10-minute confirmation timeout. A run of another window of the same user is left running.
 */
import { EventType } from '@ag-ui/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getChangeset } from '../data/changesets';
import { getRow } from '../data/rows';
import { defaultToolRegistry } from '../kinetix/catalogue';
import { KINETIX_EVENTS } from '../kinetix/events';
import { createClinicFixture, type ClinicFixture } from '../testing/clinic-fixture';
import { testHarness, waitForEvent } from '../testing/kinetix-fixtures';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import type { CallContext } from './handlers';
import { createHandlers } from './handlers';
import { sqlite } from '../data/sqlite';

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

/** Leases held by `userId` (test-only peek through the data layer's handle). */
const leases = (userId: string) => (sqlite(f.db).prepare('SELECT count(*) AS n FROM kinetix_run_lease WHERE user_id = ?').get(userId) as { n: number }).n;
const price = () => getRow<{ price_cents: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!.price_cents;

describe('session.signOut', () => {
  it('stops the runs this window started that wait for confirmation; the proposal is not applied and the slot is free', async () => {
    const physio = f.a.users.physio;
    const { kx } = testHarness(f.db, defaultToolRegistry(), { baseURL: server.url });
    const h = createHandlers({ db: f.db, kinetix: kx, tools: defaultToolRegistry() });
    // Two windows of the same user; each run asks to change the fee schedule and waits for a confirmation.
    // (The scripted server answers requests in order: run A's first request, then run B's.)
    server.push({ toolUses: [{ name: 'bulk_update_rates', input: { folder_id: f.a.folderId, pct: 5 } }] });
    server.push({ toolUses: [{ name: 'bulk_update_rates', input: { folder_id: f.a.folderId, pct: 3 } }] });
    const a: CallContext = { session: { userId: physio } };
    const b: CallContext = { session: { userId: physio } };
    const isConfirm = (e: { event: { type: string } }) =>
      e.event.type === EventType.CUSTOM && (e.event as unknown as { name: string }).name === KINETIX_EVENTS.confirmRequired;
    const runA = await h['assistant.start'](a, { message: 'raise the private rates by 5%' });
    const confirmA = (await waitForEvent(kx, physio, runA.run_id, isConfirm)).event as unknown as { value: { changesetId: string } };
    const runB = await h['assistant.start'](b, { message: 'raise the private rates by 3%' });
    await waitForEvent(kx, physio, runB.run_id, isConfirm);
    expect(leases(physio)).toBe(2);
    const before = price();

    expect(await h['session.signOut'](a, {})).toEqual({ signed_out: true });
    expect(a.session.userId).toBeNull();
    const outcome = await kx.waitForRun(runA.run_id);
    expect(outcome.status).not.toBe('running');
    expect(outcome.status).toMatch(/stopped|cancelled/);
    // Nothing applied; the proposal no longer waits; the slot is free now.
    expect(price()).toBe(before);
    expect(getChangeset(f.db, f.a.orgId, confirmA.value.changesetId)!.status).not.toBe('proposed');
    expect(getChangeset(f.db, f.a.orgId, confirmA.value.changesetId)!.status).not.toBe('applied');
    expect(leases(physio)).toBe(1);
    // The other window's run still waits for its confirmation.
    expect(kx.activeRunCount()).toBe(1);
    kx.stop(physio, runB.run_id);
    await kx.waitForRun(runB.run_id);
    expect(leases(physio)).toBe(0);
  });

  it('a window without runs signs out as before', async () => {
    const h = createHandlers({ db: f.db, kinetix: null });
    const ctx: CallContext = { session: { userId: f.a.users.coach } };
    expect(await h['session.signOut'](ctx, {})).toEqual({ signed_out: true });
    expect(ctx.session.userId).toBeNull();
  });
});
