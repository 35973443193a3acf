/**
 * The day's clinical entry forms in Chromium: Record and Correct screening (typed validation next
 * to the field, the row visible after saving), Record vitals, and the wellness questionnaire that
 * starts from what is stored (no made-up defaults), asks "already submitted today — replace?"
 * before changing stored answers, and shows an athlete their own answers back.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, screenshot, startApp } from './fixtures/app';
import { contractCall, goTo, waitForPage } from './pages/app';
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

const SCALES = ['sleep', 'soreness', 'stress', 'mood', 'fatigue'] as const;

describe('screening, vitals and wellness forms', () => {
  it('a physio records a screening (a missing result is named next to its field), then corrects it', async () => {
    const page = await signedIn(browser, app, 'physio');
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 1, offset: 7 } });
    const id = list.value!.athletes[0]!.id;
    await goTo(page, `#/athletes/${id}/screenings`, 'athlete-screenings');
    await page.locator('[data-action="add-screening"]').click();
    await waitForForm(page, 'screening-add', 'idle');
    await field(page, 'screening-add', 'test').locator('select').selectOption('single_leg_hop');
    expect(await field(page, 'screening-add', 'unit').locator('input').inputValue()).toBe('cm');
    await field(page, 'screening-add', 'side').locator('select').selectOption('left');
    await form(page, 'screening-add').locator('button[type="submit"]').click();
    await waitForForm(page, 'screening-add', 'error');
    expect(await field(page, 'screening-add', 'value').locator('.field-error').textContent()).toBeTruthy();
    await field(page, 'screening-add', 'value').locator('input').fill('163');
    await field(page, 'screening-add', 'notes').locator('textarea').fill('Hop and stick, no valgus.');
    await screenshot(page, 'form-09-record-screening');
    await form(page, 'screening-add').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Record single leg hop (163 cm)' }).waitFor();
    await goTo(page, `#/athletes/${id}/screenings`, 'athlete-screenings');
    const row = page.locator('tr[data-screening]', { hasText: 'Hop and stick' });
    expect(await row.textContent()).toMatch(/Single leg hop.*Left.*163 cm/);
    await row.locator('[data-action="correct-screening"]').click();
    await waitForForm(page, 'screening-edit', 'idle');
    await field(page, 'screening-edit', 'value').locator('input').fill('168');
    await form(page, 'screening-edit').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Update single leg hop screening' }).waitFor();
    await goTo(page, `#/athletes/${id}/screenings`, 'athlete-screenings');
    expect(await page.locator('tr[data-screening]', { hasText: 'Hop and stick' }).textContent()).toContain('168 cm');

    // Vitals on the wellness tab.
    await goTo(page, `#/athletes/${id}/wellness`, 'athlete-wellness');
    await page.locator('[data-action="record-vitals"]').click();
    await waitForForm(page, 'vitals-add', 'idle');
    await field(page, 'vitals-add', 'resting_hr_bpm').locator('input').fill('300');
    await field(page, 'vitals-add', 'hrv_rmssd_ms').locator('input').fill('71.5');
    await form(page, 'vitals-add').locator('button[type="submit"]').click();
    await waitForForm(page, 'vitals-add', 'error');
    expect(await field(page, 'vitals-add', 'resting_hr_bpm').locator('.field-error').textContent()).toMatch(/at most 220/);
    await field(page, 'vitals-add', 'resting_hr_bpm').locator('input').fill('49');
    await screenshot(page, 'form-10-record-vitals');
    await form(page, 'vitals-add').locator('button[type="submit"]').click();
    // The demo seed records vitals every morning: the service refuses a second set that day and
    // names the stored one; it is sent again only once the user says it is a new measurement.
    const warning = form(page, 'vitals-add').locator('[data-duplicate-warning]');
    await warning.waitFor();
    expect(await warning.textContent()).toMatch(/already recorded for .*Resting heart rate \d+ bpm, HRV [\d.]+ ms \(set /);
    // The form speaks to the clinician: the API's acknowledgement field is not named.
    expect(await warning.textContent()).not.toMatch(/second_set_same_day|send it again/);
    expect(await form(page, 'vitals-add').locator('button[type="submit"]').isDisabled()).toBe(true);
    await screenshot(page, 'form-10b-vitals-same-day-warning');
    await form(page, 'vitals-add').locator('[data-action="confirm-new-measurement"]').check();
    await form(page, 'vitals-add').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Vitals for' }).waitFor();
    const today = new Date().toISOString().slice(0, 10);
    const vitals = await contractCall<{ vitals: { resting_hr_bpm: number; hrv_rmssd_ms: number }[] }>(page, 'verb.call', {
      verb: 'vitals.list',
      input: { athlete_id: id, from: today, to: today },
    });
    expect(vitals.value!.vitals).toContainEqual(expect.objectContaining({ resting_hr_bpm: 49, hrv_rmssd_ms: 71.5 }));
    // One small chart per measure, HR and HRV on their own axes.
    await waitForPage(page, 'athlete-wellness');
    expect(await page.locator('.small-multiples figure.chart').count()).toBe(7);
    await screenshot(page, 'form-11-wellness-small-multiples');
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();
  });

  it('an athlete submits wellness, reads the answers back pre-filled, and is asked before replacing them', async () => {
    const page = await signedIn(browser, app, 'athlete');
    const me = await contractCall<{ linked_athlete_id: string }>(page, 'session.me', {});
    const id = me.value!.linked_athlete_id;
    const today = new Date().toISOString().slice(0, 10);
    const stored = await contractCall<{ sleep: number } | null>(page, 'verb.call', { verb: 'wellness.getDay', input: { date: today } });
    expect(stored.ok).toBe(true);
    await goTo(page, `#/athletes/${id}/wellness`, 'athlete-wellness');
    const wf = page.locator('form[data-form="wellness"]');
    await page.locator('form[data-form="wellness"][data-stored]').waitFor();
    if (stored.value === null) {
      // Nothing stored: no scale is pre-set (never a default 3).
      expect(await wf.locator('input[type="radio"]:checked').count()).toBe(0);
      for (const s of SCALES) await wf.locator(`[data-field="${s}"] input[value="4"]`).check();
      await wf.locator('button[type="submit"]').click();
      await page.locator('[data-saved="true"]').waitFor();
      await goTo(page, `#/athletes/${id}/overview`, 'athlete-overview');
      await goTo(page, `#/athletes/${id}/wellness`, 'athlete-wellness');
      await page.locator('form[data-form="wellness"][data-stored="true"]').waitFor();
    }
    const now = await contractCall<Record<string, number>>(page, 'verb.call', { verb: 'wellness.getDay', input: { date: today } });
    // Read back: the form shows exactly the stored answers.
    await page.locator('form[data-form="wellness"][data-stored="true"]').waitFor();
    for (const s of SCALES) expect(await wf.locator(`[data-field="${s}"] input:checked`).getAttribute('value')).toBe(String(now.value![s]));
    expect(await wf.locator('[data-stored-note]').textContent()).toMatch(/Already submitted today/);
    // Change one answer: asked first, with what changes.
    const next = now.value!.sleep === 2 ? 1 : 2;
    await wf.locator(`[data-field="sleep"] input[value="${next}"]`).check();
    await wf.locator('button[type="submit"]').click();
    await page.locator('[data-replace-confirm]').waitFor();
    expect(await page.locator('[data-replace-confirm]').textContent()).toContain(`Already submitted today — replace?Sleep: ${now.value!.sleep} → ${next}`);
    await screenshot(page, 'form-12-wellness-replace');
    await page.locator('[data-replace-confirm] [data-action="replace"]').click();
    await page.locator('[data-saved="true"]').waitFor();
    const after = await contractCall<Record<string, number>>(page, 'verb.call', { verb: 'wellness.getDay', input: { date: today } });
    expect(after.value!).toMatchObject({ ...Object.fromEntries(SCALES.map((s) => [s, now.value![s]])), sleep: next });
    await page.context().close();
  });

  it('a wellness form opened empty is not silently replaced: a day saved meanwhile is a conflict, the stored row is loaded, Replace works once', async () => {
    const physio = await signedIn(browser, app, 'physio');
    const doctor = await signedIn(browser, app, 'doctor');
    const today = new Date().toISOString().slice(0, 10);
    // A new athlete: nothing stored for today (the demo seed fills every day up to today).
    const created = await contractCall<{ changeset: { changes: { id: string }[] } }>(physio, 'verb.call', {
      verb: 'athletes.create',
      input: { name: 'Stale Form Tester', date_of_birth: '2001-04-02', sex: 'female' },
    });
    const id = created.value!.changeset.changes[0]!.id;
    await goTo(physio, `#/athletes/${id}/wellness`, 'athlete-wellness');
    const wf = physio.locator('form[data-form="wellness"]');
    await physio.locator('form[data-form="wellness"][data-stored="false"]').waitFor();
    // A second clinician saves the day while the physio's empty form is open.
    const theirs = { athlete_id: id, date: today, sleep: 2, soreness: 2, stress: 2, mood: 2, fatigue: 2, notes: 'Doctor on call' };
    expect(await contractCall(doctor, 'verb.call', { verb: 'wellness.submit', input: theirs })).toMatchObject({ ok: true });
    for (const s of SCALES) await wf.locator(`[data-field="${s}"] input[value="4"]`).check();
    await wf.locator('button[type="submit"]').click();
    // Refused, the stored row loaded, and "replace?" compares with what the doctor saved.
    await waitForForm(physio, 'wellness', 'conflict');
    await physio.locator('form[data-form="wellness"][data-stored="true"] [data-replace-confirm]').waitFor();
    expect(await wf.textContent()).toMatch(/showed nothing stored/);
    expect(await physio.locator('[data-replace-confirm]').textContent()).toContain('Sleep: 2 → 4');
    for (const s of SCALES) expect(await wf.locator(`[data-field="${s}"] input:checked`).getAttribute('value')).toBe('4');
    const stillTheirs = await contractCall<Record<string, unknown>>(physio, 'verb.call', { verb: 'wellness.getDay', input: { athlete_id: id, date: today } });
    expect(stillTheirs.value).toMatchObject({ sleep: 2, notes: 'Doctor on call' });
    await screenshot(physio, 'form-12b-wellness-stale-conflict');
    await physio.locator('[data-replace-confirm] [data-action="replace"]').click();
    await physio.locator('[data-saved="true"]').waitFor();
    const after = await contractCall<Record<string, unknown>>(physio, 'verb.call', { verb: 'wellness.getDay', input: { athlete_id: id, date: today } });
    expect(after.value).toMatchObject({ sleep: 4, soreness: 4, stress: 4, mood: 4, fatigue: 4 });
    await physio.context().close();
    await doctor.context().close();
  });

  it('an analyst (no screening.write) is offered no screening form and is refused by the service', async () => {
    const page = await signedIn(browser, app, 'analyst');
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 1 } });
    const id = list.value!.athletes[0]!.id;
    await goTo(page, `#/athletes/${id}/screenings`, 'athlete-screenings');
    expect(await page.locator('[data-action="add-screening"]').count()).toBe(0);
    const r = await contractCall(page, 'forms.submit', {
      verb: 'screenings.create',
      input: { athlete_id: id, test: 'single_leg_hop', side: 'left', value: 150, unit: 'cm', date: '2026-01-05' },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    await page.context().close();
  });
});
