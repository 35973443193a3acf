/**
 * Device sync in Chromium, against the real HQ (sync/hq.ts as a child process: its own Postgres,
 * the demo club) reached through a link the spec can cut: an owner enrols the clinic laptop in
 * Settings → Sync; the shell's indicator reads not synced → online → offline with a pending
 * change; an edit made offline that HQ meanwhile changed comes back as a conflict with both
 * values side by side, which is discarded (HQ's value stays) and, a second time, re-planned in the
 * same form on the current row (our value reaches HQ, whose activity log names this device).
 */
import type { Browser, Page } from 'playwright-core';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { DEMO_PIN, launchBrowser, screenshot, startApp } from './fixtures/app';
import type { NetLink, RunningHq } from './fixtures/hq';
import { havePostgres, startHq, startLink, enrolReviewer } from './fixtures/hq';
import { contractCall, goTo, waitForPage } from './pages/app';
import { EMAIL, field, form, pageErrors, signedIn, waitForForm } from './pages/forms';

let hq: RunningHq;
let link: NetLink;
let app: RunningApp;
let browser: Browser;
let page: Page;
/** A token of the HQ reviewer's own device (the spec's direct line to HQ). */
let reviewer = '';

const DEVICE_NAME = 'Pitch laptop E2E';

async function hqFetch<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${hq.url}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${reviewer}`, ...(init.headers as Record<string, string>) },
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** HQ's current row of `table` `id` (through the shape proxy, as any device reads it). */
async function hqRow(table: string, id: string): Promise<Record<string, unknown> | null> {
  const { status, body } = await hqFetch<{ value?: Record<string, unknown> }[]>(
    `/v1/shape?table=${table}&offset=-1&where=${encodeURIComponent(`id = '${id}'`)}`,
  );
  expect(status).toBe(200);
  return body.find((m) => m.value)?.value ?? null;
}

/** The reviewer changes an athlete at HQ (another device's upload). */
async function changeAtHq(id: string, version: number, after: Record<string, unknown>): Promise<void> {
  const { status, body } = await hqFetch<{ results: { status: string }[] }>('/v1/changesets', {
    method: 'POST',
    body: JSON.stringify({
      changesets: [{ changeset_id: uuidv7(), verb: 'athletes.update', changes: [{ op: 'update', table: 'athlete', id, version, before: {}, after }] }],
    }),
  });
  expect(status).toBe(200);
  expect(body.results[0]!.status).toBe('applied');
}

async function indicator(p: Page, attr: string, value: string): Promise<void> {
  await p.locator(`a.sync-indicator[${attr}="${value}"]`).waitFor({ timeout: 60_000 });
}

/**
 * Cut the device's link to HQ and wait for the real condition, not a long timer: the device has
 * tried to reach HQ since the cut and been refused (or its open requests were cut). From then on
 * the shell must say offline within a few seconds: every failed request marks the device offline
 * (main/sync/shape-worker.ts posts each outcome), and one that HQ never answers fails at its
 * deadline (main/sync/fetch-deadline.ts).
 */
async function goOffline(p: Page): Promise<void> {
  const refused = link.refused();
  link.cut();
  await refused;
  await p.locator('a.sync-indicator[data-sync-indicator="offline"]').waitFor({ timeout: 10_000 });
}

async function athlete(p: Page, id: string): Promise<{ version: number; position: string | null; notes: string }> {
  const r = await contractCall<{ version: number; position: string | null; notes: string }>(p, 'verb.call', { verb: 'athletes.get', input: { id } });
  return r.value!;
}

beforeAll(async () => {
  if (!havePostgres) return;
  hq = await startHq();
  link = await startLink(hq.url);
  app = await startApp();
  browser = await launchBrowser();
  reviewer = await enrolReviewer(hq, EMAIL('doctor'), DEMO_PIN, 'HQ review desk');
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await link?.close();
  await hq?.stop();
});

describe.skipIf(!havePostgres)('device sync in the app', () => {
  it('an owner enrols the device in Settings → Sync; the shell shows online, then offline with a pending change', async () => {
    page = await signedIn(browser, app, 'owner');
    await waitForPage(page, 'athletes');
    await indicator(page, 'data-sync-indicator', 'local');
    expect(await page.locator('a.sync-indicator').textContent()).toMatch(/Not synced/);

    await goTo(page, '#/settings', 'settings');
    const enrolForm = page.locator('form[data-form="sync-enrol"]');
    await enrolForm.locator('input[name="hqUrl"]').fill(link.url);
    await enrolForm.locator('input[name="email"]').fill(EMAIL('owner'));
    await enrolForm.locator('input[name="pin"]').fill(DEMO_PIN);
    await enrolForm.locator('input[name="code"]').fill(await hq.enrolmentCode(EMAIL('owner')));
    await enrolForm.locator('input[name="deviceName"]').fill(DEVICE_NAME);
    await enrolForm.locator('[data-action="enrol"]').click();
    await page.locator('[data-sync-settings="enrolled"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-field="device-id"]').textContent()).toMatch(/^[0-9a-f-]{36}$/);
    expect(await page.locator('[data-field="hq-url"]').textContent()).toBe(link.url);
    // The PIN field is gone and the token never reaches the page.
    expect(await page.content()).not.toContain('aihq_');

    await indicator(page, 'data-sync-indicator', 'online');
    await page.locator('a.sync-indicator:not([data-last-sync=""]) [data-last-sync]:not([data-last-sync=""])').waitFor({ timeout: 60_000 });
    expect(await page.locator('a.sync-indicator').textContent()).toMatch(/Online.*0 pending.*0 conflicts.*Synced/);
    await page.locator('[data-action="sync-now"]').click();
    await page.locator('.ok-note', { hasText: 'Synced with HQ' }).waitFor({ timeout: 60_000 });
    await screenshot(page, 'sync-01-settings-enrolled');

    // Offline: the link to HQ is cut; a change made now waits in the outbox.
    await goOffline(page);
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 3 } });
    const id = list.value!.athletes[2]!.id;
    const r = await contractCall(page, 'verb.call', { verb: 'athletes.update', input: { id, position: 'Wing (offline)' } });
    expect(r.ok).toBe(true);
    await indicator(page, 'data-pending', '1');
    expect(await page.locator('a.sync-indicator').textContent()).toMatch(/Offline.*1 pending/);
    await screenshot(page, 'sync-02-shell-offline-pending');
    link.restore();
    await contractCall(page, 'sync.now', {});
    await indicator(page, 'data-pending', '0');
    expect((await hqRow('athlete', id))?.position).toBe('Wing (offline)');
  });

  it('a stale offline edit comes back as a conflict with both values; Discard keeps HQ’s', async () => {
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 3 } });
    const id = list.value!.athletes[0]!.id;
    const v = (await athlete(page, id)).version;
    await goOffline(page);
    expect((await contractCall(page, 'verb.call', { verb: 'athletes.update', input: { id, position: 'Ours (pitch side)' } })).ok).toBe(true);
    await changeAtHq(id, v, { position: 'Theirs (HQ)' });
    link.restore();
    await contractCall(page, 'sync.now', {});
    await indicator(page, 'data-conflicts', '1');

    await page.locator('a.sync-indicator').click();
    await waitForPage(page, 'sync');
    const card = page.locator('[data-conflict][data-reason="stale"]');
    await card.waitFor();
    expect(await card.locator('[data-field="reason"]').textContent()).toBe('Changed at HQ meanwhile');
    const row = card.locator('tr[data-field="position"]');
    expect(await row.locator('[data-side="ours"]').textContent()).toBe('Ours (pitch side)');
    expect(await row.locator('[data-side="hq"]').textContent()).toBe('Theirs (HQ)');
    expect(await page.locator('#conflicts-h + p').textContent()).toMatch(/RTP sign-offs are never merged automatically/);
    await screenshot(page, 'sync-03-conflict');
    // The record on this device already shows HQ's value.
    expect((await athlete(page, id)).position).toBe('Theirs (HQ)');

    await card.locator('[data-action="discard"]').click();
    const dialog = page.locator('dialog[data-dialog="discard"]');
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(/cannot be undone/);
    await dialog.locator('[data-action="confirm-discard"]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Discarded' }).waitFor();
    await page.locator('section[data-conflicts="0"]').waitFor();
    await indicator(page, 'data-conflicts', '0');
    expect((await athlete(page, id)).position).toBe('Theirs (HQ)');
    expect((await hqRow('athlete', id))?.position).toBe('Theirs (HQ)');
  });

  it('Re-plan opens the same form on the current row with our value; saving it reaches HQ, whose log names this device', async () => {
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 3 } });
    const id = list.value!.athletes[1]!.id;
    const v = (await athlete(page, id)).version;
    await goOffline(page);
    expect((await contractCall(page, 'verb.call', { verb: 'athletes.update', input: { id, notes: 'Ours: hamstring tight after sprints' } })).ok).toBe(true);
    await changeAtHq(id, v, { notes: 'Theirs: cleared by HQ' });
    link.restore();
    await contractCall(page, 'sync.now', {});
    await indicator(page, 'data-conflicts', '1');
    await goTo(page, '#/sync', 'sync');
    const card = page.locator('[data-conflict][data-reason="stale"]');
    await card.locator('[data-action="replan"]').click();
    await waitForForm(page, 'athlete-edit', 'idle');
    // Our value, on the row as HQ holds it now (the form saves against HQ's version).
    expect(await field(page, 'athlete-edit', 'notes').locator('textarea').inputValue()).toBe('Ours: hamstring tight after sprints');
    await screenshot(page, 'sync-04-replan-form');
    await form(page, 'athlete-edit').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Re-planned' }).waitFor({ timeout: 30_000 });
    await page.locator('section[data-conflicts="0"]').waitFor();
    await contractCall(page, 'sync.now', {});
    await indicator(page, 'data-pending', '0');
    await indicator(page, 'data-conflicts', '0');
    expect((await hqRow('athlete', id))?.notes).toBe('Ours: hamstring tight after sprints');
    // HQ review: the activity log says who, when, and from which device.
    const { body } = await hqFetch<{ value?: { record_id: string; actor_name: string; created_at: string } }[]>(
      `/v1/shape?table=activity&offset=-1&where=${encodeURIComponent(`record_id = '${id}'`)}`,
    );
    const lines = body.filter((m) => m.value).map((m) => m.value!);
    expect(lines.some((a) => a.actor_name.endsWith(`via Device ${DEVICE_NAME}`))).toBe(true);
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
  });

  it("on the enrolled device Settings shows the organisation's name and budget as HQ's: no Rename, no budget form, and the service refuses both", async () => {
    await goTo(page, '#/athletes', 'athletes');
    await goTo(page, '#/settings', 'settings');
    await page.locator('[data-testid="org-at-hq"]').waitFor();
    await page.locator('[data-testid="budget-at-hq"]').waitFor();
    expect(await page.locator('[data-action="edit-org"], [data-testid="budget-cap"]').count()).toBe(0);
    const org = await contractCall<{ version: number; set_at_hq: boolean }>(page, 'settings.organisation', {});
    expect(org.value!.set_at_hq).toBe(true);
    const r = await contractCall(page, 'settings.updateOrganisation', { name: 'Renamed on the device', expected_version: org.value!.version });
    expect(r).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
  });

  it('at 1024 px wide the shell indicator, the Sync page and Settings → Sync are not cut off', async () => {
    await page.setViewportSize({ width: 1024, height: 768 });
    for (const [hash, name] of [
      ['#/sync', 'sync'],
      ['#/settings', 'settings'],
    ] as const) {
      await goTo(page, hash, name);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, name).toBeLessThanOrEqual(0);
      const box = await page.locator('a.sync-indicator').boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(1024);
    }
    await screenshot(page, 'sync-05-settings-1024');
    await page.context().close();
  });
});
