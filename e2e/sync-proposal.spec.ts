/**
 * A change waiting for an owner travels between devices, in Chromium against the real HQ
 * (sync/hq.ts as a child process with its own Postgres) and two app instances (two devices, each
 * its own SQLite file): on the clinic laptop the admin raises a fee by 25 % (a change that needs an
 * owner); the owner, on their own laptop, sees it on Approvals with who proposed it, when and on
 * which device, approves it there; HQ applies it; the clinic laptop then shows it as applied under
 * "Recently decided", with nothing left waiting.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { DEMO_PIN, launchBrowser, screenshot, startApp } from './fixtures/app';
import type { RunningHq } from './fixtures/hq';
import { enrolReviewer, havePostgres, startHq } from './fixtures/hq';
import { contractCall, goTo, waitForPage } from './pages/app';
import { EMAIL, signedIn } from './pages/forms';

let hq: RunningHq;
let laptop: RunningApp;
let ownerLaptop: RunningApp;
let browser: Browser;
/** A token of an HQ desk's own device (the spec's direct line to HQ). */
let desk = '';

/** HQ's row of `table` `id` as the shape log holds it now (followed from its snapshot to up-to-date). */
async function hqRow(table: string, id: string): Promise<Record<string, unknown> | null> {
  let offset = '-1';
  let handle: string | null = null;
  let row: Record<string, unknown> | null = null;
  for (let i = 0; i < 50; i++) {
    const q = new URLSearchParams({ table, offset, where: `id = '${id}'` });
    if (handle) q.set('handle', handle);
    const res = await fetch(`${hq.url}/v1/shape?${q.toString()}`, { headers: { authorization: `Bearer ${desk}` } });
    expect(res.status).toBe(200);
    handle = res.headers.get('electric-handle');
    offset = res.headers.get('electric-offset') ?? offset;
    for (const m of (await res.json()) as { value?: Record<string, unknown> }[]) if (m.value) row = { ...(row ?? {}), ...m.value };
    if (res.headers.has('electric-up-to-date')) return row;
  }
  throw new Error(`the ${table} shape did not reach up-to-date`);
}

/** Read `table` `id` at HQ until `ok(row)` holds (HQ's shape log follows its commits with a lag), bounded. */
async function hqRowUntil(table: string, id: string, ok: (row: Record<string, unknown> | null) => boolean): Promise<Record<string, unknown> | null> {
  const deadline = Date.now() + 30_000;
  let row = await hqRow(table, id);
  while (!ok(row) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    row = await hqRow(table, id);
  }
  return row;
}

async function indicator(p: Page, attr: string, value: string): Promise<void> {
  await p.locator(`a.sync-indicator[${attr}="${value}"]`).waitFor({ timeout: 60_000 });
}

beforeAll(async () => {
  if (!havePostgres) return;
  hq = await startHq();
  [laptop, ownerLaptop] = await Promise.all([startApp(), startApp()]);
  browser = await launchBrowser();
  desk = await enrolReviewer(hq, EMAIL('owner'), DEMO_PIN, 'HQ desk');
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await laptop?.stop();
  await ownerLaptop?.stop();
  await hq?.stop();
});

describe.skipIf(!havePostgres)('a change waiting for an owner, across devices', () => {
  it("the admin's fee rise on the clinic laptop is approved by the owner on their own laptop; the clinic laptop sees it applied", async () => {
    const admin = await signedIn(browser, laptop, 'admin');
    const adminCode = await hq.enrolmentCode(EMAIL('admin'));
    expect(
      (await contractCall(admin, 'sync.enrol', { hqUrl: hq.url, email: EMAIL('admin'), pin: DEMO_PIN, code: adminCode, deviceName: 'Clinic laptop E2E' })).ok,
    ).toBe(true);
    expect((await contractCall(admin, 'sync.now', {})).ok).toBe(true);
    const owner = await signedIn(browser, ownerLaptop, 'owner');
    const ownerCode = await hq.enrolmentCode(EMAIL('owner'));
    expect(
      (await contractCall(owner, 'sync.enrol', { hqUrl: hq.url, email: EMAIL('owner'), pin: DEMO_PIN, code: ownerCode, deviceName: 'Owner laptop E2E' })).ok,
    ).toBe(true);
    expect((await contractCall(owner, 'sync.now', {})).ok).toBe(true);

    // 1. The admin raises a fee by 25 % on the clinic laptop: it needs an owner, and waits.
    const items = await contractCall<{ items: { id: string; price_cents: number; version: number }[] }>(admin, 'verb.call', {
      verb: 'rates.listItems',
      input: {},
    });
    const fee = items.value!.items[0]!;
    const price = Math.round(fee.price_cents * 1.25);
    const r = await contractCall<{ status: string; proposal: { id: string; status: string } }>(admin, 'forms.submit', {
      verb: 'rates.updateItem',
      input: { id: fee.id, price_cents: price },
      expected_versions: { [fee.id]: fee.version },
    });
    expect(r.value).toMatchObject({ status: 'review', proposal: { status: 'needs_owner' } });
    const id = r.value!.proposal.id;
    expect((await contractCall(admin, 'sync.now', {})).ok).toBe(true);
    await indicator(admin, 'data-pending', '0');

    // 2. The owner's laptop syncs: Approvals shows it, with who, from which device, and the diff.
    expect((await contractCall(owner, 'sync.now', {})).ok).toBe(true);
    await goTo(owner, '#/approvals', 'approvals');
    const card = owner.locator(`section[data-proposal="${id}"][data-status="needs_owner"]`);
    await card.waitFor({ timeout: 30_000 });
    const text = (await card.textContent()) ?? '';
    expect(text).toMatch(/Proposed by .+ on a form in the app, on the device Clinic laptop E2E/);
    await screenshot(owner, 'sync-proposal-01-owner-sees-laptop-proposal');
    await card.locator('button.primary').click();
    await owner.locator(`tr[data-proposal="${id}"][data-status="applied"]`).waitFor({ timeout: 30_000 });

    // 3. It reaches HQ, applied once.
    expect((await contractCall(owner, 'sync.now', {})).ok).toBe(true);
    await indicator(owner, 'data-pending', '0');
    const row = await hqRowUntil('rate_item', fee.id, (x) => Number(x?.price_cents) === price);
    expect(Number(row?.price_cents)).toBe(price);
    expect(Number(row?.version)).toBe(fee.version + 1);
    const proposal = await hqRowUntil('hq_proposal', id, (x) => x?.status === 'applied');
    expect(proposal).toMatchObject({ status: 'applied', device_name: 'Clinic laptop E2E', decided_device_name: 'Owner laptop E2E' });

    // 4. The clinic laptop learns the outcome: applied, nothing waiting, the fee at its new price.
    expect((await contractCall(admin, 'sync.now', {})).ok).toBe(true);
    await goTo(admin, '#/approvals', 'approvals');
    await admin.locator(`tr[data-proposal="${id}"][data-status="applied"]`).waitFor({ timeout: 30_000 });
    expect(await admin.locator(`section[data-proposal="${id}"]`).count()).toBe(0);
    await screenshot(admin, 'sync-proposal-02-laptop-sees-applied');
    const after = await contractCall<{ items: { id: string; price_cents: number }[] }>(admin, 'verb.call', { verb: 'rates.listItems', input: {} });
    expect(after.value!.items.find((i) => i.id === fee.id)?.price_cents).toBe(price);
    await waitForPage(admin, 'approvals');
    await owner.context().close();
    await admin.context().close();
  });
});
