/**
 * Athlete entry forms in Chromium: Add athlete (keyboard, typed validation next to the field, the
 * new row in the list without a reload), Edit athlete with a stale-form conflict that shows the
 * current values and never overwrites silently, Deactivate (soft delete wording), and a role
 * without athlete.write offered no form and refused by the service.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, screenshot, startApp } from './fixtures/app';
import { AthletesPage, contractCall, goTo, waitForPage } from './pages/app';
import { field, form, pageErrors, review, signedIn, waitForForm } from './pages/forms';

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

describe('athlete forms', () => {
  it('a physio adds an athlete with the keyboard; a missing field is named next to it; the new row is listed', async () => {
    const page = await signedIn(browser, app, 'physio');
    await waitForPage(page, 'athletes');
    await page.locator('[data-action="add-athlete"]').focus();
    await page.keyboard.press('Enter');
    await waitForForm(page, 'athlete-add', 'idle');
    // Focus starts in the first field.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('name');
    await page.keyboard.type('Rowan Ashby-Keel');
    await field(page, 'athlete-add', 'date_of_birth').locator('input').fill('2006-04-17');
    await field(page, 'athlete-add', 'position').locator('input').fill('Full back');
    // Sex left unchosen: the service's typed error sits next to that field; nothing saved.
    await page.keyboard.press('Enter');
    await waitForForm(page, 'athlete-add', 'error');
    expect(await field(page, 'athlete-add', 'sex').locator('.field-error').textContent()).toBeTruthy();
    expect(await field(page, 'athlete-add', 'sex').locator('select').getAttribute('aria-invalid')).toBe('true');
    expect(await field(page, 'athlete-add', 'name').locator('.field-error').count()).toBe(0);
    await screenshot(page, 'form-01-add-athlete-validation');
    await field(page, 'athlete-add', 'sex').locator('select').selectOption('female');
    await field(page, 'athlete-add', 'squad_id').locator('select').selectOption({ label: 'U19' });
    // Enter in a text field submits the form.
    await field(page, 'athlete-add', 'position').locator('input').focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-saved="true"]', { hasText: 'Add athlete Rowan Ashby-Keel' }).waitFor();
    expect(await form(page, 'athlete-add').count()).toBe(0);
    await waitForPage(page, 'athletes');
    await new AthletesPage(page).search('Rowan Ashby');
    await page.locator('[data-athlete-name="Rowan Ashby-Keel"]').waitFor();
    expect(await page.locator('[data-athlete-name="Rowan Ashby-Keel"]').textContent()).toMatch(/U19.*Full back.*active/);
    // A page write reads as the person, not "via Assistant".
    const me = await contractCall<{ display_name: string }>(page, 'session.me', {});
    const act = await contractCall<{ activity: { actor_name: string; summary: string; via_assistant: boolean }[] }>(page, 'verb.call', {
      verb: 'activity.list',
      input: { limit: 1 },
    });
    expect(act.value!.activity[0]).toMatchObject({ actor_name: me.value!.display_name, summary: 'Add athlete Rowan Ashby-Keel', via_assistant: false });
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();
  });

  it('a stale edit form is refused with the current values; saving again after checking them applies', async () => {
    const page = await signedIn(browser, app, 'physio');
    const list = await contractCall<{ athletes: { id: string; name: string; position: string | null }[] }>(page, 'verb.call', {
      verb: 'athletes.list',
      input: { limit: 5 },
    });
    const a = list.value!.athletes[1]!;
    await goTo(page, `#/athletes/${a.id}`, 'athlete-overview');
    await page.locator('[data-action="edit-athlete"]').click();
    await waitForForm(page, 'athlete-edit', 'idle');
    await screenshot(page, 'form-02-edit-athlete');
    // Meanwhile a doctor (another session) changes the same athlete's position.
    const doctor = await signedIn(browser, app, 'doctor');
    const other = await contractCall(doctor, 'forms.submit', { verb: 'athletes.update', input: { id: a.id, position: 'Goalkeeper' } });
    expect(other.ok).toBe(true);
    await doctor.context().close();
    await field(page, 'athlete-edit', 'position').locator('input').fill('Winger');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await waitForForm(page, 'athlete-edit', 'conflict');
    expect(await form(page, 'athlete-edit').locator('[data-error-code="Conflict"]').textContent()).toMatch(
      /changed this record after you opened the form\. Nothing was written/,
    );
    await field(page, 'athlete-edit', 'position').locator('[data-current="position"]').waitFor();
    expect(await field(page, 'athlete-edit', 'position').locator('[data-current="position"]').textContent()).toBe('Now stored: Goalkeeper');
    expect(await field(page, 'athlete-edit', 'position').locator('input').inputValue()).toBe('Winger');
    await screenshot(page, 'form-03-edit-athlete-conflict');
    const stored = await contractCall<{ position: string }>(page, 'verb.call', { verb: 'athletes.get', input: { id: a.id } });
    expect(stored.value!.position).toBe('Goalkeeper');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('[data-saved="true"]').waitFor();
    await waitForPage(page, 'athlete-overview');
    expect(await page.locator('.facts').textContent()).toContain('Winger');
    await page.context().close();
  });

  it("saving again after a conflict keeps the other user's change to a field this user did not touch", async () => {
    const page = await signedIn(browser, app, 'physio');
    const list = await contractCall<{ athletes: { id: string; position: string | null; notes: string | null }[] }>(page, 'verb.call', {
      verb: 'athletes.list',
      input: { limit: 5 },
    });
    const a = list.value!.athletes[3]!;
    await goTo(page, `#/athletes/${a.id}`, 'athlete-overview');
    await page.locator('[data-action="edit-athlete"]').click();
    await waitForForm(page, 'athlete-edit', 'idle');
    // Another session changes the position; this form changes only the notes.
    const doctor = await signedIn(browser, app, 'doctor');
    expect((await contractCall(doctor, 'forms.submit', { verb: 'athletes.update', input: { id: a.id, position: 'Goalkeeper T1' } })).ok).toBe(true);
    await doctor.context().close();
    await field(page, 'athlete-edit', 'notes').locator('textarea').fill('Notes from the second tab');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await waitForForm(page, 'athlete-edit', 'conflict');
    // The untouched field now shows what is stored; the user's own edit stays.
    await page.waitForFunction(() => (document.querySelector('[data-field="position"] input') as HTMLInputElement | null)?.value === 'Goalkeeper T1');
    expect(await field(page, 'athlete-edit', 'notes').locator('textarea').inputValue()).toBe('Notes from the second tab');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('[data-saved="true"]').waitFor();
    const after = await contractCall<{ position: string; notes: string }>(page, 'verb.call', { verb: 'athletes.get', input: { id: a.id } });
    expect(after.value).toMatchObject({ position: 'Goalkeeper T1', notes: 'Notes from the second tab' });
    await page.context().close();
  });

  it('deactivate says nothing is deleted and marks the athlete deactivated', async () => {
    const page = await signedIn(browser, app, 'doctor');
    const list = await contractCall<{ athletes: { id: string; name: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 5 } });
    const a = list.value!.athletes[2]!;
    await goTo(page, `#/athletes/${a.id}`, 'athlete-overview');
    await page.locator('[data-action="deactivate-athlete"]').click();
    await waitForForm(page, 'athlete-deactivate', 'idle');
    expect(await form(page, 'athlete-deactivate').textContent()).toMatch(/Nothing is deleted/);
    await field(page, 'athlete-deactivate', 'reason').locator('input').fill('Left the club');
    await screenshot(page, 'form-04-deactivate-athlete');
    await page.getByRole('button', { name: 'Deactivate athlete' }).click();
    // The summary names the athlete only; the reason a person typed lives in its own field, shown on the page.
    await page.locator('[data-saved="true"]', { hasText: `Deactivate athlete ${a.name}` }).waitFor();
    await waitForPage(page, 'athlete-overview');
    expect(await page.locator('.facts .badge').textContent()).toBe('deactivated');
    await page.locator('.facts dd.record-text', { hasText: 'Left the club' }).waitFor();
    await page.context().close();
  });

  it('Undo asks for one confirmation saying what is reverted; undoing again reads "already done", not an error', async () => {
    const page = await signedIn(browser, app, 'physio');
    const made = await contractCall<{ status: string }>(page, 'forms.submit', { verb: 'squads.create', input: { name: 'U15', season: '2026/27' } });
    expect(made.value!.status).toBe('applied');
    await goTo(page, '#/activity', 'activity');
    const row = page.locator('tr[data-activity]').filter({ has: page.locator('th', { hasText: /^Create squad U15$/ }) });
    await row.locator('[data-action="undo"]').click();
    await review(page).waitFor();
    expect(await review(page).locator('[data-confirm]').textContent()).toMatch(/^Confirm: Undo/);
    expect(await review(page).locator('[data-diff-field="deleted_at"]').textContent()).toMatch(/Removed/);
    await screenshot(page, 'form-17-undo-confirm');
    await review(page).locator('[data-confirm]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Done: Undo' }).waitFor();
    await waitForPage(page, 'activity');
    // The original change again (not the newer "Undo: …" row).
    await page
      .locator('tr[data-activity]')
      .filter({ has: page.locator('th', { hasText: /^Create squad U15$/ }) })
      .locator('[data-action="undo"]')
      .click();
    await page.locator('form[data-form="undo"] [data-already="true"]').waitFor();
    expect(await page.locator('form[data-form="undo"] [role="alert"]').count()).toBe(0);
    await page.context().close();
  });

  it('an analyst (no athlete.write) is offered no athlete form and is refused by the service', async () => {
    const page = await signedIn(browser, app, 'analyst');
    await waitForPage(page, 'athletes');
    expect(await page.locator('[data-action="add-athlete"]').count()).toBe(0);
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 1 } });
    await goTo(page, `#/athletes/${list.value!.athletes[0]!.id}`, 'athlete-overview');
    expect(await page.locator('[data-action="edit-athlete"]').count()).toBe(0);
    const r = await contractCall(page, 'forms.submit', { verb: 'athletes.create', input: { name: 'Nope', date_of_birth: '2000-01-01', sex: 'male' } });
    expect(r).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    await page.context().close();
  });
});
