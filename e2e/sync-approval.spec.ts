/**
 * Owner approvals HQ can verify, in Chromium against the real HQ (sync/hq.ts as a child process
 * with its own Postgres): on a clinic laptop the admin enrolled, the admin raises a fee by 25 %
 * (a change that needs an owner) and the owner, signed in on the laptop with their PIN only,
 * approves it: HQ cannot verify that approval, so the change comes back as an "Owner approval not
 * verified" conflict on the Sync page and HQ's fee is unchanged. The owner signs in to HQ as
 * themselves in Settings → Sync; the re-planned change, approved again, reaches HQ.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { DEMO_PIN, launchBrowser, screenshot, startApp } from './fixtures/app';
import type { RunningHq } from './fixtures/hq';
import { havePostgres, startHq, enrolReviewer } from './fixtures/hq';
import { contractCall, goTo, waitForPage } from './pages/app';
import { EMAIL, signedIn } from './pages/forms';

let hq: RunningHq;
let app: RunningApp;
let browser: Browser;
/** A token of an HQ desk's own device, signed in as the owner (the spec's direct line to HQ). */
let desk = '';

/** HQ's row of `table` `id` as the shape log holds it now: the shape is followed from its snapshot to up-to-date (Electric protocol). */
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

async function indicator(p: Page, attr: string, value: string): Promise<void> {
  await p.locator(`a.sync-indicator[${attr}="${value}"]`).waitFor({ timeout: 60_000 });
}

/** The admin raises fee `itemId` by 25 %: a change that needs an owner, stored for review. */
async function raiseFee(admin: Page, itemId: string): Promise<{ id: string; hash: string; price: number }> {
  const items = await contractCall<{ items: { id: string; price_cents: number; version: number }[] }>(admin, 'verb.call', {
    verb: 'rates.listItems',
    input: {},
  });
  const item = items.value!.items.find((i) => i.id === itemId)!;
  const price = Math.round(item.price_cents * 1.25);
  const r = await contractCall<{ status: string; proposal: { id: string; contentHash: string; status: string } }>(admin, 'forms.submit', {
    verb: 'rates.updateItem',
    input: { id: itemId, price_cents: price },
    expected_versions: { [itemId]: item.version },
  });
  expect(r.value).toMatchObject({ status: 'review', proposal: { status: 'needs_owner' } });
  return { id: r.value!.proposal.id, hash: r.value!.proposal.contentHash, price };
}

beforeAll(async () => {
  if (!havePostgres) return;
  hq = await startHq();
  app = await startApp();
  browser = await launchBrowser();
  desk = await enrolReviewer(hq, EMAIL('owner'), DEMO_PIN, 'HQ desk');
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await hq?.stop();
});

describe.skipIf(!havePostgres)('owner approval on a shared laptop', () => {
  it('is refused by HQ until the owner signs in to HQ as themselves on the laptop; then the re-planned change is applied', async () => {
    const admin = await signedIn(browser, app, 'admin');
    const adminCode = await hq.enrolmentCode(EMAIL('admin'));
    expect(
      (await contractCall(admin, 'sync.enrol', { hqUrl: hq.url, email: EMAIL('admin'), pin: DEMO_PIN, code: adminCode, deviceName: 'Clinic laptop E2E' })).ok,
    ).toBe(true);
    expect((await contractCall(admin, 'sync.now', {})).ok).toBe(true);
    const items = await contractCall<{ items: { id: string; price_cents: number }[] }>(admin, 'verb.call', { verb: 'rates.listItems', input: {} });
    const fee = items.value!.items[0]!;

    // The owner approves on this laptop, signed in with the PIN only.
    const first = await raiseFee(admin, fee.id);
    const owner = await signedIn(browser, app, 'owner');
    expect((await contractCall(owner, 'proposals.approve', { changeset_id: first.id, content_hash: first.hash })).ok).toBe(true);
    await contractCall(owner, 'sync.now', {});
    await indicator(owner, 'data-conflicts', '1');
    await goTo(owner, '#/sync', 'sync');
    const card = owner.locator('[data-conflict][data-reason="approval_unverified"]');
    await card.waitFor();
    expect(await card.locator('[data-field="reason"]').textContent()).toBe('Owner approval not verified');
    expect(await card.textContent()).toMatch(/cannot verify the owner's approval/);
    await screenshot(owner, 'sync-approval-01-unverified-conflict');
    expect(Number((await hqRow('rate_item', fee.id))?.price_cents)).toBe(fee.price_cents);

    // The owner signs in to HQ as themselves on this laptop (Settings → Sync): PIN + a sign-in code.
    await goTo(owner, '#/settings', 'settings');
    const signIn = owner.locator('form[data-form="owner-hq-signin"]');
    await signIn.locator('input[name="ownerPin"]').fill('0000');
    await signIn.locator('input[name="ownerCode"]').fill(await hq.enrolmentCode(EMAIL('owner')));
    await signIn.locator('[data-action="owner-hq-signin"]').click();
    await owner.locator('[data-owner-hq-signin="no"] .error-note[data-error-code="Unauthenticated"]').waitFor({ timeout: 30_000 });
    await signIn.locator('input[name="ownerPin"]').fill(DEMO_PIN);
    await signIn.locator('input[name="ownerCode"]').fill(await hq.enrolmentCode(EMAIL('owner')));
    await signIn.locator('[data-action="owner-hq-signin"]').click();
    await owner.locator('[data-owner-hq-signin="yes"]').waitFor({ timeout: 30_000 });
    expect(await owner.content()).not.toContain('aihq_');
    await screenshot(owner, 'sync-approval-02-owner-signed-in');

    // Re-planned on the current row and approved again: HQ verifies it and applies it.
    const second = await raiseFee(admin, fee.id);
    expect((await contractCall(owner, 'proposals.approve', { changeset_id: second.id, content_hash: second.hash })).ok).toBe(true);
    await contractCall(owner, 'sync.now', {});
    await indicator(owner, 'data-pending', '0');
    expect((await contractCall<{ conflicts: number }>(owner, 'sync.status', {})).value!.conflicts).toBe(1); // only the first one
    // HQ's shape log follows its commits through logical replication, which can lag: read until it shows the new price (bounded).
    const deadline = Date.now() + 30_000;
    let price = Number((await hqRow('rate_item', fee.id))?.price_cents);
    while (price !== second.price && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      price = Number((await hqRow('rate_item', fee.id))?.price_cents);
    }
    expect(price).toBe(second.price);

    // The refused one is still shown until discarded.
    await goTo(owner, '#/sync', 'sync');
    await card.locator('[data-action="discard"]').click();
    await owner.locator('dialog[data-dialog="discard"] [data-action="confirm-discard"]').click();
    await owner.locator('section[data-conflicts="0"]').waitFor();
    await waitForPage(owner, 'sync');
    await owner.context().close();
    await admin.context().close();
  });
});
