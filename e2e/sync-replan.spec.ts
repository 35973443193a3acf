/**
 * Sync conflicts re-planned through the assistant, in Chromium against the real HQ (sync/hq.ts as a
 * child process with its own Postgres, reached through a link the spec can cut) and the real
 * harness with @anthropic-ai/sdk talking to the scripted Messages server: an offline edit that
 * HQ meanwhile changed comes back as a conflict; "Ask Kinetix to re-plan" sends the model the
 * rejected change with both values; its proposal, approved in the confirm dialog, is applied on
 * the current row and reaches HQ, whose activity log reads "via Assistant via Device …"; the
 * refused change is then discarded.
 */
import type { Browser, Page } from 'playwright-core';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedAnthropic } from '../main/testing/scripted-anthropic';
import { startScriptedAnthropic } from '../main/testing/scripted-anthropic';
import type { RunningApp } from './fixtures/app';
import { DEMO_PIN, launchBrowser, screenshot, startApp } from './fixtures/app';
import type { NetLink, RunningHq } from './fixtures/hq';
import { havePostgres, startHq, startLink, enrolReviewer } from './fixtures/hq';
import { AssistantPanel } from './pages/assistant';
import { contractCall, goTo } from './pages/app';
import { EMAIL, signedIn } from './pages/forms';

let hq: RunningHq;
let link: NetLink;
let model: ScriptedAnthropic;
let app: RunningApp;
let browser: Browser;
let page: Page;
/** A token of the HQ reviewer's own device (the spec's direct line to HQ). */
let reviewer = '';
const DEVICE_NAME = 'Replan laptop E2E';

async function hqFetch<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${hq.url}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${reviewer}`, ...(init.headers as Record<string, string>) },
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function hqRows(table: string, where: string): Promise<Record<string, unknown>[]> {
  const { status, body } = await hqFetch<{ value?: Record<string, unknown> }[]>(`/v1/shape?table=${table}&offset=-1&where=${encodeURIComponent(where)}`);
  expect(status).toBe(200);
  return body.filter((m) => m.value).map((m) => m.value!);
}

async function indicator(p: Page, attr: string, value: string): Promise<void> {
  await p.locator(`a.sync-indicator[${attr}="${value}"]`).waitFor({ timeout: 60_000 });
}

beforeAll(async () => {
  if (!havePostgres) return;
  hq = await startHq();
  link = await startLink(hq.url);
  model = await startScriptedAnthropic([]);
  app = await startApp({ env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-0123456789abcdef', ATHLETE_SECRET_KEY: 'e2e-machine-key' } });
  browser = await launchBrowser();
  reviewer = await enrolReviewer(hq, EMAIL('doctor'), DEMO_PIN, 'HQ review desk');
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await model?.close();
  await link?.close();
  await hq?.stop();
});

describe.skipIf(!havePostgres)('a sync conflict re-planned by the assistant', () => {
  it('"Ask Kinetix to re-plan" proposes our value on the current row; approved, it reaches HQ via Assistant via Device', async () => {
    page = await signedIn(browser, app, 'owner');
    const code = await hq.enrolmentCode(EMAIL('owner'));
    const enrolled = await contractCall(page, 'sync.enrol', { hqUrl: link.url, email: EMAIL('owner'), pin: DEMO_PIN, code, deviceName: DEVICE_NAME });
    expect(enrolled.ok).toBe(true);
    await indicator(page, 'data-sync-indicator', 'online');
    expect((await contractCall(page, 'sync.now', {})).ok).toBe(true);

    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 5 } });
    const id = list.value!.athletes[4]!.id;
    const got = await contractCall<{ version: number }>(page, 'verb.call', { verb: 'athletes.get', input: { id } });
    const version = got.value!.version;

    // Offline edit; meanwhile HQ changes the same athlete (another device's upload).
    link.cut();
    const ours = 'Ours: adductor load capped this week';
    expect((await contractCall(page, 'verb.call', { verb: 'athletes.update', input: { id, notes: ours } })).ok).toBe(true);
    await indicator(page, 'data-pending', '1');
    const theirs = await hqFetch<{ results: { status: string }[] }>('/v1/changesets', {
      method: 'POST',
      body: JSON.stringify({
        changesets: [
          {
            changeset_id: uuidv7(),
            verb: 'athletes.update',
            changes: [{ op: 'update', table: 'athlete', id, version, before: {}, after: { notes: 'Theirs: HQ' } }],
          },
        ],
      }),
    });
    expect(theirs.body.results[0]!.status).toBe('applied');
    link.restore();
    await contractCall(page, 'sync.now', {});
    await indicator(page, 'data-conflicts', '1');

    // The club has cleared the provider for every class (athlete notes are clinical-restricted), so
    // the model may read the note; values still reach it only through its tools, never in the prompt.
    const settings = await contractCall<{ version: number }>(page, 'settings.assistant', {});
    const cleared = await contractCall(page, 'settings.updateAssistant', {
      provider_clearance: { anthropic: ['internal', 'personal', 'clinical', 'clinical-restricted'] },
      expected_version: settings.value!.version,
    });
    expect(cleared.ok).toBe(true);
    const conflicts = await contractCall<{ conflicts: { changeset_id: string }[] }>(page, 'sync.conflicts', {});
    const changesetId = conflicts.value!.conflicts[0]!.changeset_id;

    // The model reads the rejected change and the record as HQ holds it now, proposes the same
    // change on the current row, then reports.
    const requestsBefore = model.requests.length;
    model.push(
      {
        text: 'I will read the rejected change and the current record, then propose your note again.',
        toolUses: [
          { name: 'get_changeset', input: { id: changesetId } },
          { name: 'read_athlete_notes', input: { id } },
          { name: 'update_athlete', input: { id, notes: ours } },
        ],
      },
      { text: 'Re-planned: your note is proposed on the current record.' },
    );
    await goTo(page, '#/sync', 'sync');
    const card = page.locator('[data-conflict][data-reason="stale"]');
    await card.locator('[data-action="ask-replan"]').click();
    const panel = new AssistantPanel(page);
    const dialog = await panel.confirmDialog();
    expect(dialog.title).toBe('Update athlete details');
    // What the model was asked: the rejected change by id, why, and the fields — no record values.
    const asked = model.requests[requestsBefore]!.raw;
    expect(asked).toContain(`HQ rejected my change ${changesetId}`);
    expect(asked).toContain('Changed at HQ meanwhile');
    expect(asked).not.toContain(ours);
    expect(asked).not.toContain('Theirs: HQ');
    await screenshot(page, 'sync-replan-01-assistant-confirm');
    await panel.approve();
    await panel.waitForStatus('finished');
    // Through its tools, under the club's clearance, the model saw the current note (HQ's).
    expect(model.requests[requestsBefore + 1]!.raw).toContain('Theirs: HQ');
    await page.locator('.ok-note', { hasText: 'Kinetix is re-planning it' }).waitFor();

    // Applied on this device against HQ's version; the refused change is then discarded.
    const now = await contractCall<{ notes: string; version: number }>(page, 'verb.call', { verb: 'athletes.get', input: { id } });
    expect(now.value!.notes).toBe(ours);
    await card.locator('[data-action="discard"]').click();
    await page.locator('dialog[data-dialog="discard"] [data-action="confirm-discard"]').click();
    await page.locator('section[data-conflicts="0"]').waitFor();
    await contractCall(page, 'sync.now', {});
    await indicator(page, 'data-pending', '0');
    await indicator(page, 'data-conflicts', '0');
    const [row] = await hqRows('athlete', `id = '${id}'`);
    expect(row?.notes).toBe(ours);
    const activity = await hqRows('activity', `record_id = '${id}'`);
    expect(activity.map((a) => a.actor_name)).toContain(`Morwenna Halsey via Assistant via Device ${DEVICE_NAME}`);
    await screenshot(page, 'sync-replan-02-resolved');
  });
});
