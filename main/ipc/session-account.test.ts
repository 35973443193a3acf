/**
 * A signed-in window ends when its account changes under it (issue 13 re-review): the real
 * handlers over a real SQLite file. The blocker was: a super admin made an account a super admin,
 * set its PIN, signed in as it in another tab, and then made it a doctor — the cleared PIN stopped
 * new sign-ins but the open session read injuries and signed off RTP as a doctor.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultToolRegistry } from '../kinetix/catalogue';
import * as K from '../data/kinetix';
import { createClinicFixture, errorOf, type ClinicFixture } from '../testing/clinic-fixture';
import { testHarness, waitForEvent } from '../testing/kinetix-fixtures';
import { EventType } from '@ag-ui/core';
import { KINETIX_EVENTS } from '../kinetix/events';
import { startScriptedAnthropic } from '../testing/scripted-anthropic';
import { setUserPin } from '../services/admin';
import type { CallContext } from './handlers';
import { createHandlers } from './handlers';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const SIGNED_OUT = /^Your account was changed since you signed in \(its role, athlete link, PIN or status\), so you were signed out\. Sign in again\.$/;

describe('a session stands on the account as it was at sign-in', () => {
  it('a role change ends the sessions of that account: the super admin’s sign-in as an account it then makes a doctor reads nothing', async () => {
    const h = createHandlers({ db: f.db });
    const sa: CallContext = { session: { userId: f.a.users.super_admin } };
    // the super admin makes a fresh account a super admin, sets its PIN and signs in as it in another tab
    const made = (await h['verb.call'](sa, {
      verb: 'users.create',
      input: { email: 'locum@example.test', display_name: 'Locum', role: 'super_admin' },
    })) as { changeset: { changes: { id: string }[] } };
    const locum = made.changeset.changes[0]!.id;
    expect(setUserPin({ db: f.db, userId: f.a.users.super_admin }, { user_id: locum, pin: '2468' })).toEqual({ pin_set: true });
    const tab: CallContext = { session: { userId: null } };
    expect((await h['session.signIn'](tab, { user_id: locum, pin: '2468' })).role).toBe('super_admin');
    // a rename keeps the session
    await h['verb.call'](sa, { verb: 'users.update', input: { id: locum, display_name: 'Locum two' } });
    expect((await h['session.me'](tab, {}))?.display_name).toBe('Locum two');
    // the super admin makes it a doctor (allowed: it grants every role); the PIN is cleared, and the open tab ends
    await h['verb.call'](sa, { verb: 'users.update', input: { id: locum, role: 'doctor' } });
    const e = await errorOfAsync(() => h['verb.call'](tab, { verb: 'injuries.list', input: {} }));
    expect([e.code, e.message]).toEqual(['Unauthenticated', expect.stringMatching(SIGNED_OUT)]);
    expect(tab.session.userId).toBeNull();
    expect(await h['session.me'](tab, {})).toBeNull();
    // and it cannot sign back in with the PIN it was given
    expect((await errorOfAsync(() => h['session.signIn'](tab, { user_id: locum, pin: '2468' }))).code).toBe('Unauthenticated');
  });

  it('a PIN reset by someone else, a deactivation, or a link change ends the session too; session.me then answers null', async () => {
    const h = createHandlers({ db: f.db });
    const owner: CallContext = { session: { userId: f.a.users.owner } };
    const coach: CallContext = { session: { userId: null } };
    expect(setUserPin({ db: f.db, userId: f.a.users.owner }, { user_id: f.a.users.coach, pin: '1357' })).toEqual({ pin_set: true });
    await h['session.signIn'](coach, { user_id: f.a.users.coach, pin: '1357' });
    expect((await h['session.me'](coach, {}))?.role).toBe('coach');
    setUserPin({ db: f.db, userId: f.a.users.owner }, { user_id: f.a.users.coach, pin: '9753' });
    expect(await h['session.me'](coach, {})).toBeNull();
    expect(coach.session.userId).toBeNull();
    await h['session.signIn'](coach, { user_id: f.a.users.coach, pin: '9753' });
    await h['verb.call'](owner, { verb: 'users.update', input: { id: f.a.users.coach, active: false } });
    expect((await errorOfAsync(() => h['verb.call'](coach, { verb: 'athletes.list', input: {} }))).message).toMatch(SIGNED_OUT);
  });
});

describe('an assistant run stands on the account as it was when the run started', () => {
  it('the owner relinks an athlete account while its run waits on the model: the tool call is refused and the run ends, nothing of the other athlete read (issue 13 re-review)', async () => {
    const server = await startScriptedAnthropic();
    try {
      const { kx } = testHarness(f.db, defaultToolRegistry(), { baseURL: server.url });
      const h = createHandlers({ db: f.db, kinetix: kx, tools: defaultToolRegistry() });
      f.call(f.a.users.physio, 'vitals.record', { athlete_id: f.a.otherAthleteId, date: '2026-11-01', resting_hr_bpm: 99, hrv_rmssd_ms: 11 });
      setUserPin({ db: f.db, userId: f.a.users.owner }, { user_id: f.a.users.athlete, pin: '4321' });
      const tab: CallContext = { session: { userId: null } };
      await h['session.signIn'](tab, { user_id: f.a.users.athlete, pin: '4321' });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      server.push(
        async () => {
          await gate;
          return { toolUses: [{ name: 'list_vitals', input: {} }] };
        },
        { text: 'done' },
      );
      const run = await h['assistant.start'](tab, { message: 'my vitals' });
      await server.waitForRequests(1);
      // while the model answers, the owner links the account to another athlete (its PIN is cleared)
      f.call(f.a.users.owner, 'users.update', { id: f.a.users.athlete, linked_athlete_id: f.a.otherAthleteId });
      release();
      const out = await kx.waitForRun(run.run_id);
      // before: the run completed and list_vitals returned the other athlete's vitals (HR 99, HRV 11)
      expect(out.status).toBe('failed');
      const calls = K.listToolCalls(f.db, run.run_id) as { status: string; error_json: string | null; result_json: string | null }[];
      expect(calls.map((c) => c.result_json ?? '').join(' ')).not.toMatch(/99/);
      expect(calls.map((c) => [c.status, c.error_json && (JSON.parse(c.error_json) as { message: string }).message])).toEqual([
        ['failed', expect.stringMatching(/^Your account changed while this request ran/)],
      ]);
      // the tab's next call is refused too (its session ended)
      expect((await errorOfAsync(() => h['verb.call'](tab, { verb: 'vitals.list', input: {} }))).code).toBe('Unauthenticated');
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a PIN reset while a proposal waits: approving it applies nothing, and says the account changed rather than the role (issue 13 re-review minor)', async () => {
    const server = await startScriptedAnthropic();
    try {
      const { kx } = testHarness(f.db, defaultToolRegistry(), { baseURL: server.url });
      const physio = f.a.users.physio;
      const before = f.call(physio, 'rates.listItems', { folder_id: f.a.folderId });
      server.push({ toolUses: [{ name: 'bulk_update_rates', input: { folder_id: f.a.folderId, pct: 5 } }] }, { text: 'Done.' });
      const { runId } = kx.startRun({ userId: physio, message: 'raise the fees 5 %' });
      const ev = await waitForEvent(
        kx,
        physio,
        runId,
        (e) => e.event.type === EventType.CUSTOM && (e.event as { name: string }).name === KINETIX_EVENTS.confirmRequired,
      );
      const c = (ev.event as unknown as { value: { toolCallId: string; argsHash: string; contentHash: string } }).value;
      // the owner resets the physio's PIN while the proposal waits (whoever set it can sign in as the physio)
      setUserPin({ db: f.db, userId: f.a.users.owner }, { user_id: physio, pin: '8642' });
      kx.confirm(physio, c.toolCallId, { approve: true, argsHash: c.argsHash, contentHash: c.contentHash });
      expect((await kx.waitForRun(runId)).status).toBe('failed');
      const calls = K.listToolCalls(f.db, runId) as { status: string; error_json: string | null }[];
      const message = (JSON.parse(calls.at(-1)!.error_json!) as { message: string }).message;
      // before: "Your role no longer allows …" though the physio's role had not changed
      expect(message).toMatch(/^Your account changed since this was proposed .*nothing was changed/);
      expect(f.call(physio, 'rates.listItems', { folder_id: f.a.folderId })).toEqual(before);
    } finally {
      await server.close();
    }
  }, 60_000);
});

async function errorOfAsync(fn: () => unknown): Promise<{ code: string; message: string }> {
  try {
    await fn();
  } catch (e) {
    return errorOf(() => {
      throw e;
    });
  }
  throw new Error('expected an error');
}
