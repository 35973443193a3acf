/**
 * Injury and RTP forms in Chromium: record and update an injury, add and advance RTP stages (the
 * current stage highlighted, each with its dates), edit criteria and notes, the sign-off and
 * withdraw confirmation that says what will change, a coach told that the doctor has not cleared
 * the stage, and a role without injury.write offered no form and refused by the service.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, screenshot, startApp } from './fixtures/app';
import { contractCall, goTo } from './pages/app';
import { field, form, pageErrors, review, signedIn, waitForForm } from './pages/forms';

let app: RunningApp;
let browser: Browser;
let athleteId = '';

beforeAll(async () => {
  app = await startApp();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe('injury and RTP forms', () => {
  it('a physio records an injury, adds and advances RTP stages, and edits criteria', async () => {
    const page = await signedIn(browser, app, 'physio');
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 3, offset: 3 } });
    athleteId = list.value!.athletes[0]!.id;
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    const before = await page.locator('section[data-injury]').count();
    await page.locator('[data-action="add-injury"]').click();
    await waitForForm(page, 'injury-add', 'idle');
    await field(page, 'injury-add', 'body_part').locator('input').fill('calf');
    await field(page, 'injury-add', 'side').locator('select').selectOption('right');
    await field(page, 'injury-add', 'severity').locator('select').selectOption('moderate');
    await field(page, 'injury-add', 'mechanism').locator('select').selectOption('non_contact');
    await field(page, 'injury-add', 'clinician_notes').locator('textarea').fill('Felt a pull at 70 min, sprinting.');
    await screenshot(page, 'form-05-record-injury');
    await form(page, 'injury-add').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Record right calf injury' }).waitFor();
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    expect(await page.locator('section[data-injury]').count()).toBe(before + 1);
    const card = page.locator('section[data-injury]', { hasText: 'Right calf' }).first();

    // First stage.
    await card.locator('[data-action="add-stage"]').click();
    await waitForForm(page, 'rtp-add', 'idle');
    expect(await field(page, 'rtp-add', 'stage').locator('select').inputValue()).toBe('protection');
    await field(page, 'rtp-add', 'criteria_met').locator('textarea').fill('Pain-free walking');
    await form(page, 'rtp-add').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Add RTP entry (protection)' }).waitFor();
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    // Advance: the next stage is preset; the new stage becomes current.
    await card.locator('[data-action="advance-stage"]').click();
    await waitForForm(page, 'rtp-add', 'idle');
    expect(await field(page, 'rtp-add', 'stage').locator('select').inputValue()).toBe('rehabilitation');
    await page.getByRole('button', { name: 'Add stage' }).click();
    await page.locator('[data-saved="true"]', { hasText: 'Add RTP entry (rehabilitation)' }).waitFor();
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    expect(await card.locator('tr.current-stage th').textContent()).toMatch(/^Rehabilitation Current stage.*Started/);
    expect(await card.locator('tbody tr').count()).toBe(2);
    // Criteria and notes of the current stage.
    await card.locator('tr.current-stage [data-action="edit-stage"]').click();
    await waitForForm(page, 'rtp-edit', 'idle');
    await field(page, 'rtp-edit', 'criteria_met').locator('textarea').fill('Full ROM; 20 single-leg calf raises');
    await field(page, 'rtp-edit', 'notes').locator('textarea').fill('Progress to running when isometrics are pain-free.');
    await screenshot(page, 'form-06-rtp-stage');
    await page.getByRole('button', { name: 'Save stage' }).click();
    // The previous save's note is still on the page: wait for the dialog to close and the row to show the new criteria.
    await page.locator('dialog.form-dialog').waitFor({ state: 'detached' });
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    await card.locator('tr.current-stage td', { hasText: 'Full ROM; 20 single-leg calf raises' }).first().waitFor();
    expect(await card.locator('tr.current-stage td').first().textContent()).toBe('Full ROM; 20 single-leg calf raises');
    // Update the injury (status) through its form.
    await card.locator('[data-action="edit-injury"]').click();
    await waitForForm(page, 'injury-edit', 'idle');
    await field(page, 'injury-edit', 'severity').locator('select').selectOption('severe');
    await page.getByRole('button', { name: 'Save injury' }).click();
    await page.locator('[data-saved="true"]', { hasText: 'Update calf injury' }).waitFor();
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    await card.locator('.facts', { hasText: 'Severe' }).waitFor();
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();
  });

  it('sign-off and withdraw each ask for one confirmation that says what changes', async () => {
    const page = await signedIn(browser, app, 'physio');
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    const me = await contractCall<{ display_name: string }>(page, 'session.me', {});
    const cell = page.locator('section[data-injury]', { hasText: 'Right calf' }).first().locator('tr.current-stage td[data-signoff="physio"]');
    await cell.getByRole('button', { name: 'Sign as physio…' }).click();
    await review(page).waitFor();
    expect(await review(page).locator('[data-diff-field="physio_signoff_by"]').textContent()).toContain(`—→${me.value!.display_name}`);
    expect(await review(page).locator('[data-confirm]').textContent()).toMatch(/^Confirm: Sign physio RTP sign-off \(rehabilitation\)/);
    await screenshot(page, 'form-07-signoff-confirm');
    await review(page).locator('[data-confirm]').click();
    await cell.locator('.signer').waitFor();
    expect(await cell.locator('.signer').textContent()).toBe(me.value!.display_name);
    await cell.getByRole('button', { name: 'Withdraw…' }).click();
    await review(page).waitFor();
    expect(await review(page).locator('[data-review-note]').textContent()).toMatch(/withdraws the physio sign-off/);
    await review(page).locator('[data-confirm]').click();
    await cell.locator('.badge', { hasText: 'Not signed' }).waitFor();
    await page.context().close();
  });

  it('at 1024 px wide the injuries tab and its forms are not cut off', async () => {
    const page = await signedIn(browser, app, 'physio');
    await page.setViewportSize({ width: 1024, height: 768 });
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    const overflow = await page.evaluate(() => {
      const c = document.querySelector('.content')!;
      return c.scrollWidth - c.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await page.locator('section[data-injury] [data-action="add-stage"]').first().click();
    await waitForForm(page, 'rtp-add', 'idle');
    const box = await page.locator('dialog.form-dialog[open]').boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(1024);
    await screenshot(page, 'form-18-rtp-stage-1024');
    await page.context().close();
  });

  it('a coach signing before the doctor has cleared the stage is told so; cancelling writes nothing', async () => {
    const page = await signedIn(browser, app, 'coach');
    await goTo(page, `#/athletes/${athleteId}/injuries`, 'athlete-injuries');
    expect(await page.locator('[data-action="add-injury"]').count()).toBe(0);
    const cell = page.locator('section[data-injury]', { hasText: 'Right calf' }).first().locator('tr.current-stage td[data-signoff="coach"]');
    await cell.getByRole('button', { name: 'Sign as coach…' }).click();
    await review(page).waitFor();
    expect(await review(page).locator('[data-review-note]').textContent()).toMatch(/doctor has not cleared this stage yet/);
    await screenshot(page, 'form-08-coach-signoff-before-doctor');
    await review(page)
      .getByRole('button', { name: /Cancel/ })
      .click();
    await cell.locator('form[data-form="rtp-signoff"][data-state="idle"]').waitFor({ state: 'attached' });
    expect(await review(page).count()).toBe(0);
    expect(await cell.locator('.badge').textContent()).toBe('Not signed');
    const r = await contractCall(page, 'forms.submit', {
      verb: 'injuries.create',
      input: { athlete_id: athleteId, body_part: 'ankle', side: 'left', onset_date: '2026-01-02', severity: 'mild' },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    await page.context().close();
  });
});
