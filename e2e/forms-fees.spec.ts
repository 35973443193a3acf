/**
 * Fee forms in Chromium: Edit an item (applied at once, money shown as money), and a folder's
 * bulk price change of more than 20 % that is reviewed as money and then waits for an owner, who
 * approves it in Approvals; a role without rates.write is offered no form.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, screenshot, startApp } from './fixtures/app';
import { contractCall, goTo } from './pages/app';
import { field, form, review, signedIn, waitForForm } from './pages/forms';

let app: RunningApp;
let browser: Browser;

beforeAll(async () => {
  app = await startApp();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

interface Schedule {
  folders: { id: string; name: string; items: { id: string; code: string; name: string; price_cents: number }[] }[];
}

describe('fee forms', () => {
  it('a physio edits an item price, and a +30 % folder change waits for an owner who approves it', async () => {
    const page = await signedIn(browser, app, 'physio');
    const before = await contractCall<Schedule>(page, 'verb.call', { verb: 'rates.schedule', input: {} });
    // A folder whose prices stay within $1–$10,000 after +30 % (and after the item edit).
    const folder = before.value!.folders.find((f) => f.items.length >= 2 && f.items.every((i) => i.price_cents * 1.4 <= 1_000_000 && i.price_cents >= 100))!;
    const item = folder.items[0]!;
    await goTo(page, '#/fees', 'fees');
    await page.locator(`tr[data-rate-item="${item.code}"] [data-action="edit-item"]`).first().click();
    await waitForForm(page, 'rate-item-edit', 'idle');
    const newPrice = Math.round(item.price_cents * 1.05) / 100;
    await field(page, 'rate-item-edit', 'price_cents').locator('input').fill(newPrice.toFixed(2));
    await form(page, 'rate-item-edit').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]').waitFor();
    await goTo(page, '#/fees', 'fees');
    expect(await page.locator(`tr[data-rate-item="${item.code}"]`).first().textContent()).toContain(`$${newPrice.toFixed(2)}`);

    await page.locator(`section[data-folder="${folder.name}"] [data-action="bulk-rates"]`).click();
    await waitForForm(page, 'rates-bulk', 'idle');
    await field(page, 'rates-bulk', 'pct').locator('input').fill('30');
    await form(page, 'rates-bulk').locator('button[type="submit"]').click();
    await review(page).waitFor();
    expect(await review(page).getAttribute('data-status')).toBe('needs_owner');
    // Money as money, the policy's reason once.
    expect(await review(page).textContent()).toMatch(/\$\d[\d,]*\.\d\d/);
    expect(await review(page).locator('.policy-reason').count()).toBe(1);
    await screenshot(page, 'form-16-fees-bulk-needs-owner');
    await review(page).getByRole('button', { name: 'Leave it for an owner' }).click();
    await form(page, 'rates-bulk').locator('[data-waiting="true"]').waitFor();
    const mid = await contractCall<Schedule>(page, 'verb.call', { verb: 'rates.schedule', input: {} });
    expect(mid.value!.folders.find((f) => f.id === folder.id)!.items[1]!.price_cents).toBe(folder.items[1]!.price_cents);
    await page.context().close();

    const owner = await signedIn(browser, app, 'owner');
    await goTo(owner, '#/approvals', 'approvals');
    const card = owner.locator('section[data-proposal][data-status="needs_owner"]').first();
    expect(await card.textContent()).toMatch(/on a form in the app/);
    await card.getByRole('button', { name: 'Approve' }).click();
    await owner
      .locator('section[data-proposal][data-status="needs_owner"]')
      .first()
      .waitFor({ state: 'detached' })
      .catch(() => undefined);
    await goTo(owner, '#/approvals', 'approvals');
    const after = await contractCall<Schedule>(owner, 'verb.call', { verb: 'rates.schedule', input: {} });
    expect(after.value!.folders.find((f) => f.id === folder.id)!.items[1]!.price_cents).toBe(Math.round(folder.items[1]!.price_cents * 1.3));
    await owner.context().close();
  });

  it('a price with a space inside or a comma decimal is refused at the field in dollars words; the limit reads in dollars', async () => {
    const page = await signedIn(browser, app, 'owner');
    const s = await contractCall<Schedule>(page, 'verb.call', { verb: 'rates.schedule', input: {} });
    const item = s.value!.folders.find((f) => f.items.length)!.items[0]!;
    await goTo(page, '#/fees', 'fees');
    await page.locator(`tr[data-rate-item="${item.code}"] [data-action="edit-item"]`).first().click();
    await waitForForm(page, 'rate-item-edit', 'idle');
    const price = field(page, 'rate-item-edit', 'price_cents');
    for (const typed of ['45 50', '61,50', '']) {
      await price.locator('input').fill(typed);
      await form(page, 'rate-item-edit').locator('button[type="submit"]').click();
      await waitForForm(page, 'rate-item-edit', 'error');
      expect(await price.locator('.field-error').textContent(), typed).toMatch(/Enter a price in dollars, e\.g\. 61\.50/);
    }
    await price.locator('input').fill('0.50');
    await form(page, 'rate-item-edit').locator('button[type="submit"]').click();
    await waitForForm(page, 'rate-item-edit', 'error');
    expect(await price.locator('.field-error').textContent()).toBe('Too small: at least $1.00.');
    const after = await contractCall<Schedule>(page, 'verb.call', { verb: 'rates.schedule', input: {} });
    expect(after.value!.folders.flatMap((f) => f.items).find((i) => i.id === item.id)!.price_cents).toBe(item.price_cents);
    await page.context().close();
  });

  it('a change waiting for an owner: Escape leaves it waiting (one copy), Withdraw declines it', async () => {
    const page = await signedIn(browser, app, 'physio');
    const before = await contractCall<Schedule>(page, 'verb.call', { verb: 'rates.schedule', input: {} });
    const folder = before.value!.folders.find((f) => f.items.length >= 1 && f.items.every((i) => i.price_cents * 1.5 <= 1_000_000 && i.price_cents >= 100))!;
    const waiting = async () => {
      const l = await contractCall<{ id: string; status: string; summary: string }[]>(page, 'proposals.list', { limit: 500 });
      return l.value!.filter((p) => p.summary.includes(folder.name));
    };
    const start = await waiting();
    const bulk = async (pct: string) => {
      await goTo(page, '#/fees', 'fees');
      await page.locator(`section[data-folder="${folder.name}"] [data-action="bulk-rates"]`).click();
      await waitForForm(page, 'rates-bulk', 'idle');
      await field(page, 'rates-bulk', 'pct').locator('input').fill(pct);
      await form(page, 'rates-bulk').locator('button[type="submit"]').click();
      await review(page).waitFor();
      expect(await review(page).getAttribute('data-status')).toBe('needs_owner');
    };
    await bulk('40');
    await page.keyboard.press('Escape');
    await form(page, 'rates-bulk').locator('[data-waiting="true"]').waitFor();
    const afterEscape = await waiting();
    expect(afterEscape.filter((p) => p.status === 'needs_owner')).toHaveLength(start.filter((p) => p.status === 'needs_owner').length + 1);
    await page.keyboard.press('Escape');
    await page.locator('dialog.form-dialog').waitFor({ state: 'detached' });

    await bulk('45');
    await review(page).getByRole('button', { name: 'Withdraw' }).click();
    await review(page).waitFor({ state: 'detached' });
    const afterWithdraw = await waiting();
    // The withdrawn one is declined; only the first still waits for an owner.
    expect(afterWithdraw.filter((p) => p.status === 'needs_owner')).toHaveLength(afterEscape.filter((p) => p.status === 'needs_owner').length);
    expect(afterWithdraw.filter((p) => p.status === 'declined')).toHaveLength(start.filter((p) => p.status === 'declined').length + 1);
    await page.context().close();
  });

  it('a physio adds a folder and an item to it with the keyboard; a look-alike code is refused at its field', async () => {
    const page = await signedIn(browser, app, 'physio');
    await goTo(page, '#/fees', 'fees');
    await page.locator('[data-action="add-folder"]').click();
    await waitForForm(page, 'rate-folder-add', 'idle');
    await page.keyboard.type('Insurer B');
    await page.keyboard.press('Enter');
    await page.locator('[data-saved="true"]').waitFor();
    const section = page.locator('section[data-folder="Insurer B"]');
    await section.waitFor();
    await section.locator('[data-action="add-item"]').click();
    await waitForForm(page, 'rate-item-add', 'idle');
    await field(page, 'rate-item-add', 'code').locator('input').fill('INB\u2011001');
    await field(page, 'rate-item-add', 'name').locator('input').fill('Initial assessment');
    await field(page, 'rate-item-add', 'item_type').locator('select').selectOption('assessment');
    await field(page, 'rate-item-add', 'price_cents').locator('input').fill('85.00');
    await screenshot(page, 'form-16c-fees-add-item');
    await form(page, 'rate-item-add').locator('button[type="submit"]').click();
    await waitForForm(page, 'rate-item-add', 'error');
    expect(await field(page, 'rate-item-add', 'code').locator('.field-error').textContent()).toMatch(/letters A–Z, digits/);
    await field(page, 'rate-item-add', 'code').locator('input').fill('INB-001');
    await form(page, 'rate-item-add').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]').waitFor();
    await section.locator('tr[data-rate-item="INB-001"]').waitFor();
    expect(await section.locator('tr[data-rate-item="INB-001"]').textContent()).toContain('$85.00');
    await page.context().close();
  });

  it('a coach (no rates.write) is offered no fee form', async () => {
    const page = await signedIn(browser, app, 'doctor');
    await goTo(page, '#/fees', 'fees');
    expect(await page.locator('[data-action="add-folder"], [data-action="add-item"]').count()).toBe(0);
    expect(await page.locator('[data-action="edit-item"]').count()).toBe(0);
    expect(await page.locator('[data-action="bulk-rates"]').count()).toBe(0);
    await page.context().close();
  });
});
