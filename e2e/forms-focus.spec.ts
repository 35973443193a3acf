/**
 * Focus in the form dialogs (components/Form.tsx FormDialog), in Chromium: Escape returns focus
 * to the control that opened the dialog; after the service refuses the input, focus moves to the
 * first field it named, which is aria-invalid and has the service's message linked through
 * aria-describedby. Checked on the Fees item form and the Record vitals form.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, startApp } from './fixtures/app';
import { contractCall, goTo } from './pages/app';
import { field, form, pageErrors, signedIn, waitForForm } from './pages/forms';

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

/** What has focus: its data-action, the field it sits in, aria-invalid, and the texts aria-describedby points at. */
async function focused(page: Page) {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    const ids = (el?.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean);
    return {
      action: el?.getAttribute('data-action') ?? null,
      field: el?.closest('[data-field]')?.getAttribute('data-field') ?? null,
      invalid: el?.getAttribute('aria-invalid') ?? null,
      described: ids.map((id) => document.getElementById(id)?.textContent ?? ''),
      inDialog: Boolean(el?.closest('dialog')),
    };
  });
}

describe('form dialog focus', () => {
  it('Fees: Escape returns focus to the Edit button that opened the dialog', async () => {
    const page = await signedIn(browser, app, 'physio');
    const s = await contractCall<{ folders: { items: { code: string }[] }[] }>(page, 'verb.call', { verb: 'rates.schedule', input: {} });
    const code = s.value!.folders.find((f) => f.items.length)!.items[0]!.code;
    await goTo(page, '#/fees', 'fees');
    const opener = page.locator(`tr[data-rate-item="${code}"] [data-action="edit-item"]`).first();
    await opener.focus();
    await page.keyboard.press('Enter');
    await waitForForm(page, 'rate-item-edit', 'idle');
    expect((await focused(page)).inDialog).toBe(true);
    await page.keyboard.press('Escape');
    await page.locator('dialog.form-dialog').waitFor({ state: 'detached' });
    expect(await focused(page)).toMatchObject({ action: 'edit-item', inDialog: false });
    expect(await page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-rate-item'))).toBe(code);
    await page.context().close();
  });

  it('Fees: after a saved edit the page re-renders the row, and focus goes back to its Edit button, not <body>', async () => {
    const page = await signedIn(browser, app, 'physio');
    const s = await contractCall<{ folders: { items: { code: string; name: string }[] }[] }>(page, 'verb.call', { verb: 'rates.schedule', input: {} });
    const item = s.value!.folders.find((f) => f.items.length > 1)!.items[1]!;
    await goTo(page, '#/fees', 'fees');
    await page.locator(`tr[data-rate-item="${item.code}"] [data-action="edit-item"]`).first().click();
    await waitForForm(page, 'rate-item-edit', 'idle');
    await field(page, 'rate-item-edit', 'name').locator('input').fill(`${item.name} (focus check)`);
    await page.keyboard.press('Enter');
    await page.locator('[data-saved="true"]').waitFor();
    await page.locator('dialog.form-dialog').waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.activeElement !== document.body);
    const where = await focused(page);
    expect(where, JSON.stringify(await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 200)))).toMatchObject({
      action: 'edit-item',
      inDialog: false,
    });
    expect(await page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-rate-item'))).toBe(item.code);
    await page.context().close();
  });

  it("Record vitals: a refused value takes focus, with the service's message linked; Escape goes back to the opener", async () => {
    const page = await signedIn(browser, app, 'physio');
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 1, offset: 3 } });
    const id = list.value!.athletes[0]!.id;
    await goTo(page, `#/athletes/${id}/wellness`, 'athlete-wellness');
    await page.locator('[data-action="record-vitals"]').click();
    await waitForForm(page, 'vitals-add', 'idle');
    await field(page, 'vitals-add', 'hrv_rmssd_ms').locator('input').fill('71.5');
    await field(page, 'vitals-add', 'resting_hr_bpm').locator('input').fill('300');
    // Submit from the HRV field, so focus has somewhere to move from.
    await field(page, 'vitals-add', 'hrv_rmssd_ms').locator('input').focus();
    await form(page, 'vitals-add').locator('button[type="submit"]').click();
    await waitForForm(page, 'vitals-add', 'error');
    await page.waitForFunction(() => document.activeElement?.closest('[data-field]')?.getAttribute('data-field') === 'resting_hr_bpm');
    const f = await focused(page);
    expect(f).toMatchObject({ field: 'resting_hr_bpm', invalid: 'true' });
    expect(f.described.join(' ')).toMatch(/at most 220/);
    await page.keyboard.press('Escape');
    await page.locator('dialog.form-dialog').waitFor({ state: 'detached' });
    expect(await focused(page)).toMatchObject({ action: 'record-vitals', inDialog: false });
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();
  });
});
