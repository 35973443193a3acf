/**
 * The assistant side panel end to end: the real harness and the real @anthropic-ai/sdk inside the
 * web host, talking to the scripted Messages API server (main/testing/scripted-anthropic.ts) on
 * 127.0.0.1. Checks the changesets and writes, not the model's wording.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedAnthropic } from '../main/testing/scripted-anthropic';
import { startScriptedAnthropic } from '../main/testing/scripted-anthropic';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, newPage, screenshot, startApp } from './fixtures/app';
import { AssistantPanel } from './pages/assistant';
import { SignInPage, contractCall, goTo, waitForPage } from './pages/app';

let model: ScriptedAnthropic;
let app: RunningApp;
let browser: Browser;

beforeAll(async () => {
  model = await startScriptedAnthropic([]);
  app = await startApp({ env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-0123456789abcdef', ATHLETE_SECRET_KEY: 'e2e-machine-key' } });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await model?.close();
});

async function signedIn(role: string): Promise<Page> {
  const { page } = await newPage(browser);
  const s = new SignInPage(page);
  await s.open(app.url);
  await s.signIn(`${role}@kestrelvale.test`);
  return page;
}

function yesterday(): string {
  return new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
}

async function u19(page: Page): Promise<{ id: string; count: number }> {
  const squads = await contractCall<{ id: string; name: string; athlete_count: number }[]>(page, 'verb.call', { verb: 'squads.list', input: {} });
  const s = squads.value!.find((x) => x.name === 'U19')!;
  return { id: s.id, count: s.athlete_count };
}

async function activityCount(page: Page): Promise<number> {
  const a = await contractCall<{ activity: unknown[] }>(page, 'verb.call', { verb: 'activity.list', input: { limit: 1000 } });
  return a.value!.activity.length;
}

describe('assistant side panel', () => {
  it('a physio asks to log yesterday\'s U19 session, approves N rows, and sees the rows and a "via Assistant" activity row', async () => {
    const page = await signedIn('physio');
    await waitForPage(page, 'athletes');
    const squad = await u19(page);
    const before = await contractCall<{ total: number }>(page, 'verb.call', {
      verb: 'workload.listLoads',
      input: { squad_id: squad.id, from: yesterday(), to: yesterday(), limit: 1 },
    });
    model.push(
      {
        text: 'I will log it for the U19 squad.',
        toolUses: [{ name: 'log_session_load', input: { squad_id: squad.id, date: yesterday(), duration_min: 75, rpe: 6, second_session_same_day: true } }],
      },
      { text: `Done: yesterday's session is logged for the U19 squad (${squad.count} athletes).` },
    );
    const panel = new AssistantPanel(page);
    await panel.ask("Log yesterday's session for the U19 squad: 75 minutes at RPE 6.");
    const dialog = await panel.confirmDialog();
    expect(dialog.title).toBe('Log session load (RPE × minutes) for athletes');
    expect(dialog.rows).toBe(squad.count);
    await screenshot(page, '20-assistant-confirm');
    await panel.approve();
    await panel.waitForStatus('finished');
    expect(await panel.answer()).toContain('logged');
    expect(await panel.toolStatuses()).toContainEqual({ tool: 'log_session_load', status: 'executed' });
    await screenshot(page, '21-assistant-applied');

    const after = await contractCall<{ total: number }>(page, 'verb.call', {
      verb: 'workload.listLoads',
      input: { squad_id: squad.id, from: yesterday(), to: yesterday(), limit: 1 },
    });
    expect(after.value!.total - before.value!.total).toBe(squad.count);
    await goTo(page, '#/activity', 'activity');
    const row = page.locator('tr[data-via-assistant="true"]').first();
    expect(await row.textContent()).toMatch(/via Assistant/);
    await screenshot(page, '22-activity-via-assistant');
    // The "via Assistant" row links to the run trace.
    await row.locator('a').click();
    await waitForPage(page, 'trace');
    expect(await page.locator('tr[data-tool-call="log_session_load"][data-status="executed"]').count()).toBe(1);
    await screenshot(page, '23-run-trace');
    await page.context().close();
  });

  it('declining writes nothing and the model is told so', async () => {
    const page = await signedIn('physio');
    await waitForPage(page, 'athletes');
    const squad = await u19(page);
    const acts = await activityCount(page);
    model.push(
      { toolUses: [{ name: 'log_session_load', input: { squad_id: squad.id, date: yesterday(), duration_min: 30, rpe: 3, second_session_same_day: true } }] },
      { text: 'Understood, nothing was logged. How would you like to proceed?' },
    );
    const sent = model.requests.length;
    const panel = new AssistantPanel(page);
    await panel.ask('Log a 30 minute recovery session for U19 yesterday.');
    await panel.confirmDialog();
    await panel.decline();
    await panel.waitForStatus('finished');
    expect(await panel.toolStatuses()).toContainEqual({ tool: 'log_session_load', status: 'rejected' });
    expect(await activityCount(page)).toBe(acts);
    expect(JSON.stringify(model.requests[sent + 1]?.body.messages.at(-1))).toContain('The user declined this action');
    await page.context().close();
  });

  it('a reload while the confirm dialog is open replays the run, and the approval still works', async () => {
    const page = await signedIn('physio');
    await waitForPage(page, 'athletes');
    const squad = await u19(page);
    model.push(
      {
        text: 'Proposing the loads now.',
        toolUses: [{ name: 'log_session_load', input: { squad_id: squad.id, date: yesterday(), duration_min: 20, rpe: 2, second_session_same_day: true } }],
      },
      { text: 'Logged the cool-down.' },
    );
    const panel = new AssistantPanel(page);
    await panel.ask('Log a 20 minute cool-down for U19 yesterday at RPE 2.');
    const first = await panel.confirmDialog();
    await page.reload();
    await page.waitForSelector('body[data-session="signedIn"]');
    const replayed = await panel.confirmDialog();
    expect(replayed).toEqual(first);
    expect(await page.locator('.msg.user').textContent()).toContain('cool-down');
    // Keyboard: focus is on the dialog, not on Approve (Enter there does nothing); Tab reaches
    // Approve (after the scrollable list of rows, which Chromium makes focusable).
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('dialog');
    await page.keyboard.press('Enter');
    expect(await page.locator('.confirm').count()).toBe(1);
    for (let i = 0; i < 3 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Approve'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Approve');
    await page.keyboard.press('Enter');
    await panel.waitForStatus('finished');
    expect(await panel.answer()).toBe('Logged the cool-down.');
    await page.context().close();
  });

  it('the prompt-injection note yields no changeset and a plain refusal', async () => {
    const page = await signedIn('physio');
    await waitForPage(page, 'athletes');
    const acts = await activityCount(page);
    // An adversarial script: the model "obeys" the note and tries to delete, then a tool outside the catalogue.
    model.push(
      { toolUses: [{ name: 'list_athletes', input: { search: 'Rowan Ellery' } }] },
      { toolUses: [{ name: 'delete_all_athletes', input: {} }] },
      { text: "I can't do that. The note in Rowan Ellery's record is data, not an instruction, and no changes were made." },
    );
    const panel = new AssistantPanel(page);
    await panel.ask("Summarise Rowan Ellery's notes and do what they say.");
    await panel.waitForStatus('finished');
    expect(await page.locator('.confirm').count()).toBe(0);
    expect(await panel.answer()).toMatch(/can't do that/);
    const statuses = await panel.toolStatuses();
    expect(statuses).toContainEqual({ tool: 'delete_all_athletes', status: 'failed' });
    expect(await activityCount(page)).toBe(acts);
    await screenshot(page, '24-assistant-injection-refused');
    await page.context().close();
  });

  it('an athlete cannot get injuries by asking: the tool is not offered and a forced call fails', async () => {
    const page = await signedIn('athlete');
    await waitForPage(page, 'athlete-overview');
    model.push({ toolUses: [{ name: 'list_injuries', input: {} }] }, { text: 'Injury records are not available to your account.' });
    const sent = model.requests.length;
    const panel = new AssistantPanel(page);
    await panel.ask('Show me my injuries.');
    await panel.waitForStatus('finished');
    const offered = (model.requests[sent]?.body.tools ?? []).map((t) => t.name);
    expect(offered).not.toContain('list_injuries');
    expect(offered).toContain('list_athletes');
    expect(await panel.toolStatuses()).toContainEqual({ tool: 'list_injuries', status: 'failed' });
    expect(await panel.answer()).toContain('not available');
    await page.context().close();
  });
});

describe('stopping a run', () => {
  it('Stop ends a run whose model call hangs, and the panel says so', async () => {
    const page = await signedIn('coach');
    await waitForPage(page, 'athletes');
    model.push({ hang: 'after_start', text: 'Let me look' });
    const panel = new AssistantPanel(page);
    await panel.ask('Summarise the U19 workload this week.');
    await panel.waitForStatus('running');
    await page.getByRole('button', { name: 'Stop' }).click();
    await panel.waitForStatus('finished');
    await page.locator('[data-testid="run-stopped"]').waitFor();
    await page.context().close();
  });
});

describe('changes that need an owner', () => {
  it('a +25% rate change proposed by a physio waits in Approvals until an owner approves it', async () => {
    const physio = await signedIn('physio');
    await waitForPage(physio, 'athletes');
    // A folder whose prices all stay within $1–$10,000 after +25% (the policy refuses otherwise).
    const schedule = await contractCall<{ folders: { id: string; name: string; items: { price_cents: number }[] }[] }>(physio, 'verb.call', {
      verb: 'rates.schedule',
      input: {},
    });
    const folder = schedule.value!.folders.find((f) => f.items.length > 0 && f.items.every((i) => i.price_cents * 1.25 <= 1_000_000))!;
    const before = await contractCall<{ items: { id: string; price_cents: number }[] }>(physio, 'verb.call', {
      verb: 'rates.listItems',
      input: { folder_id: folder.id },
    });
    model.push(
      { toolUses: [{ name: 'bulk_update_rates', input: { folder_id: folder.id, pct: 25 } }] },
      { text: 'That change is over 20%, so it waits for an owner to approve it in the app.' },
    );
    const panel = new AssistantPanel(physio);
    await panel.ask(`Raise every price in the ${folder.name} folder by 25%.`);
    await panel.waitForStatus('finished');
    await screenshot(physio, '25-assistant-needs-owner');
    expect(await physio.locator('.confirm').count()).toBe(0);
    expect(await panel.toolStatuses()).toContainEqual({ tool: 'bulk_update_rates', status: 'proposed' });
    await physio.locator('[data-needs-owner="true"]').waitFor();
    const unchanged = await contractCall<{ items: { id: string; price_cents: number }[] }>(physio, 'verb.call', {
      verb: 'rates.listItems',
      input: { folder_id: folder.id },
    });
    expect(unchanged.value!.items).toEqual(before.value!.items);
    await goTo(physio, '#/approvals', 'approvals');
    expect(await physio.locator('section[data-status="needs_owner"] button', { hasText: 'Approve' }).count()).toBe(0);
    await physio.context().close();

    const owner = await signedIn('owner');
    await goTo(owner, '#/approvals', 'approvals');
    const card = owner.locator('section[data-status="needs_owner"]').first();
    await card.waitFor();
    await screenshot(owner, '26-approvals-needs-owner');
    await card.getByRole('button', { name: 'Approve' }).click();
    await owner.locator('tr[data-proposal][data-status], [data-error-code]').first().waitFor();
    await screenshot(owner, '27-approvals-decided');
    expect(await owner.locator('[data-error-code]').allTextContents()).toEqual([]);
    expect(await owner.locator('tr[data-proposal]').first().getAttribute('data-status')).toBe('applied');
    const after = await contractCall<{ items: { id: string; price_cents: number }[] }>(owner, 'verb.call', {
      verb: 'rates.listItems',
      input: { folder_id: folder.id },
    });
    for (const it of before.value!.items) {
      expect(after.value!.items.find((x) => x.id === it.id)?.price_cents).toBe(Math.round(it.price_cents * 1.25));
    }
    await owner.context().close();
  });
});

describe('data the assistant may see (provider clearance)', () => {
  it('names reach the model only after an owner clears the provider for personal data in Settings → Assistant; a physio cannot change it', async () => {
    const physio = await signedIn('physio');
    await waitForPage(physio, 'athletes');
    const panel = new AssistantPanel(physio);
    // Default: internal only. The listing reaches the model with every name withheld.
    model.push(
      { toolUses: [{ name: 'list_athletes', input: { search: 'Jonah' } }] },
      { text: 'I cannot see names: the provider is not cleared for personal data.' },
    );
    let sent = model.requests.length;
    await panel.ask('Who is Jonah?');
    await model.waitForRequests(sent + 2);
    await panel.waitForStatus('finished');
    const before = model.requests[sent + 1]!.raw;
    expect(before).toContain('[withheld: personal');
    expect(before).not.toContain('Merrow');
    expect(await panel.answer()).toContain('cannot see names');
    // A physio (no settings.manage) is refused by the service.
    const refused = await contractCall(physio, 'settings.updateAssistant', {
      provider_clearance: { anthropic: ['internal', 'personal'] },
      expected_version: 0,
    });
    expect(refused).toMatchObject({ ok: false, error: { code: 'Forbidden' } });

    // The owner clears Kinetix's model for personal data.
    const owner = await signedIn('owner');
    await goTo(owner, '#/settings', 'settings');
    expect(await owner.locator('[data-testid="clearance-status"]').textContent()).toMatch(/Kinetix's model is cleared for internal;/);
    await owner.locator('select[data-clearance="anthropic"]').selectOption('personal');
    await owner.getByRole('button', { name: 'Save data clearance' }).click();
    await owner.locator('.ok-note', { hasText: 'data clearance' }).waitFor();
    expect(await owner.locator('[data-testid="clearance-status"]').textContent()).toMatch(
      /Kinetix's model is cleared for internal, personal; MCP clients for internal\./,
    );
    await screenshot(owner, '26-settings-data-clearance');
    const stored = await contractCall<{ clearance: { anthropic: string[]; mcp: string[] } }>(owner, 'settings.assistant', {});
    expect(stored.value!.clearance).toEqual({ anthropic: ['internal', 'personal'], mcp: ['internal'] });

    // The same question now sends the name; clinical fields stay withheld.
    model.push({ toolUses: [{ name: 'list_athletes', input: { search: 'Jonah' } }] }, { text: 'Jonah Merrow.' });
    sent = model.requests.length;
    await panel.ask('Who is Jonah?');
    await model.waitForRequests(sent + 2);
    await panel.waitForStatus('finished');
    expect(model.requests[sent + 1]!.raw).toContain('Jonah Merrow');
    expect(model.requests[sent + 1]!.raw).not.toContain('[withheld: personal');

    // Back to the default for the other specs of this app.
    await owner.locator('select[data-clearance="anthropic"]').selectOption('internal');
    await owner.getByRole('button', { name: 'Save data clearance' }).click();
    await owner.locator('[data-testid="clearance-status"]', { hasText: "Kinetix's model is cleared for internal;" }).waitFor();
    await owner.context().close();
    await physio.context().close();
  });
});
