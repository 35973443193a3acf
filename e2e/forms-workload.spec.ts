/**
 * Workload forms in Chromium: Log session load for one athlete (the service refuses a load on a day
 * that already has one, and the form's warning names what is stored), for a whole squad (per-athlete RPE, an athlete left out, then
 * reviewed as a compact table in which one more row is dropped before approving), Add training
 * session, and a role without workload.write offered no form and refused by the service.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, screenshot, startApp } from './fixtures/app';
import { formatDay } from '../models/format';
import { contractCall, goTo } from './pages/app';
import { field, form, review, signedIn, waitForForm } from './pages/forms';

let app: RunningApp;
let browser: Browser;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  app = await startApp();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

interface Load {
  athlete_id: string;
  duration_min: number;
  rpe: number;
  load_au: number;
}

/** Answer the duplicate-load warning "another session that day" and log it. */
async function logAnyway(page: Page, name: string): Promise<void> {
  await page.locator('[data-duplicate-warning] [data-action="confirm-second-session"]').check();
  await form(page, name).locator('button[type="submit"]').click();
}

describe('workload forms', () => {
  it('logging a second load for an athlete on the same day warns with what is stored', async () => {
    const page = await signedIn(browser, app, 'physio');
    const squads = await contractCall<{ id: string; name: string }[]>(page, 'verb.call', { verb: 'squads.list', input: {} });
    const u19 = squads.value!.find((s) => s.name === 'U19')!;
    const members = await contractCall<{ athletes: { id: string; name: string }[] }>(page, 'verb.call', {
      verb: 'athletes.list',
      input: { squad_id: u19.id, limit: 3 },
    });
    const a = members.value!.athletes[0]!;
    await goTo(page, `#/athletes/${a.id}/workload`, 'athlete-workload');
    const logOnce = async () => {
      await page.locator('[data-action="log-load"]').click();
      await waitForForm(page, 'load-athlete', 'idle');
      await field(page, 'load-athlete', 'duration_min').locator('input').fill('33');
      await field(page, 'load-athlete', 'rpe').locator('input').fill('4');
      await form(page, 'load-athlete').locator('button[type="submit"]').click();
    };
    await logOnce();
    // The demo data may already hold a load today: then the warning comes first.
    await Promise.race([page.locator('[data-duplicate-warning]').waitFor(), page.locator('[data-saved="true"]').waitFor()]);
    if (await page.locator('[data-duplicate-warning]').count()) await logAnyway(page, 'load-athlete');
    await page.locator('[data-saved="true"]', { hasText: `Log 1 session load for ${a.name} on ${formatDay(today)} (RPE 4 × 33 min = 132 AU)` }).waitFor();
    await goTo(page, `#/athletes/${a.id}/workload`, 'athlete-workload');
    await logOnce();
    await page.locator('[data-duplicate-warning]').waitFor();
    const warning = await page.locator('[data-duplicate-warning]').textContent();
    expect(warning).toContain(`${a.name} already has a load on`);
    expect(warning).toContain('33 min × RPE 4 = 132 AU');
    expect(warning).toMatch(/inflates ACWR/);
    const submitButton = form(page, 'load-athlete').locator('button[type="submit"]');
    expect(await submitButton.textContent()).toBe('Log anyway: a second session');
    // Until the user says it is another session, neither the button nor Enter logs it.
    expect(await submitButton.isDisabled()).toBe(true);
    await field(page, 'load-athlete', 'rpe').locator('input').press('Enter');
    await screenshot(page, 'form-13-load-duplicate-warning');
    await form(page, 'load-athlete').getByRole('button', { name: 'Cancel' }).click();
    const loads = await contractCall<{ loads: Load[] }>(page, 'verb.call', { verb: 'workload.listLoads', input: { athlete_id: a.id, from: today, to: today } });
    expect(loads.value!.loads.filter((l) => l.duration_min === 33)).toHaveLength(1);

    // Enter pressed quickly several times: the service answers the first press with the warning, the
    // presses after it are held by the unticked box, nothing is saved.
    await page.locator('[data-action="log-load"]').click();
    await waitForForm(page, 'load-athlete', 'idle');
    await field(page, 'load-athlete', 'duration_min').locator('input').fill('33');
    const rpe = field(page, 'load-athlete', 'rpe').locator('input');
    await rpe.fill('4');
    for (let i = 0; i < 4; i++) await rpe.press('Enter', { delay: 0 });
    await page.locator('[data-duplicate-warning]').waitFor();
    for (let i = 0; i < 3; i++) await rpe.press('Enter', { delay: 0 });
    expect(await form(page, 'load-athlete').locator('button[type="submit"]').isDisabled()).toBe(true);
    expect(await form(page, 'load-athlete').getAttribute('data-state')).not.toBe('saved');
    await form(page, 'load-athlete').getByRole('button', { name: 'Cancel' }).click();
    const after = await contractCall<{ loads: Load[] }>(page, 'verb.call', { verb: 'workload.listLoads', input: { athlete_id: a.id, from: today, to: today } });
    expect(after.value!.loads.filter((l) => l.duration_min === 33)).toHaveLength(1);
    await page.context().close();
  });

  it('a squad load with per-athlete RPE and an exclusion is reviewed as a table; a dropped row is not written', async () => {
    const page = await signedIn(browser, app, 'physio');
    await goTo(page, '#/squads', 'squads');
    await page.locator('tr[data-squad="U19"] [data-action="log-load"]').click();
    await waitForForm(page, 'load-squad', 'idle');
    const names = await page.locator('tr[data-load-athlete]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-load-athlete')!));
    expect(names.length).toBeGreaterThan(5);
    const [excluded, heavier, dropped] = [names[1]!, names[2]!, names[3]!];
    await field(page, 'load-squad', 'duration_min').locator('input').fill('47');
    await field(page, 'load-squad', 'rpe').locator('input').fill('6');
    await page.locator(`tr[data-load-athlete="${excluded}"] input[type="checkbox"]`).uncheck();
    // One row's RPE out of range: told at the per-athlete table (not at the session RPE) and by its label; nothing saved.
    await page.getByLabel(`RPE for ${heavier}`).fill('12');
    await form(page, 'load-squad').locator('button[type="submit"]').click();
    await Promise.race([page.locator('[data-duplicate-warning]').waitFor(), waitForForm(page, 'load-squad', 'error')]);
    if (await page.locator('[data-duplicate-warning]').count()) await logAnyway(page, 'load-squad');
    await waitForForm(page, 'load-squad', 'error');
    expect(await field(page, 'load-squad', 'per_athlete').locator('.field-error').textContent()).toBe('Too large: at most 10.');
    expect(await field(page, 'load-squad', 'rpe').locator('.field-error').count()).toBe(0);
    expect(await form(page, 'load-squad').locator('[data-error-code="Validation"] li').allTextContents()).toEqual([
      'Athletes in this load: Too large: at most 10.',
    ]);
    await page.getByLabel(`RPE for ${heavier}`).fill('8');
    await screenshot(page, 'form-14-squad-load');
    await form(page, 'load-squad').locator('button[type="submit"]').click();
    // Athletes with a load today (the first test, or the demo data): warned, then logged as a second session.
    await Promise.race([page.locator('[data-duplicate-warning]').waitFor(), review(page).waitFor()]);
    if (await page.locator('[data-duplicate-warning]').count()) await logAnyway(page, 'load-squad');
    await review(page).waitFor();
    const table = review(page).locator('table.bulk');
    expect(Number(await table.getAttribute('data-bulk-rows'))).toBe(names.length - 1);
    expect(await table.locator(`tr[data-record="${excluded}"]`).count()).toBe(0);
    expect(await table.locator(`tr[data-record="${heavier}"]`).textContent()).toMatch(/47.*8.*376/);
    await table.locator(`tr[data-record="${dropped}"] input[type="checkbox"]`).uncheck();
    await screenshot(page, 'form-15-squad-load-review');
    expect(await review(page).locator('[data-confirm]').textContent()).toMatch(/\(1 left out\)$/);
    await review(page).locator('[data-confirm]').click();
    await page.locator('[data-saved="true"]', { hasText: '1 of' }).waitFor();
    const loads = await contractCall<{ loads: Load[] }>(page, 'verb.call', { verb: 'workload.listLoads', input: { from: today, to: today, limit: 5000 } });
    const ids = await contractCall<{ athletes: { id: string; name: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 5000 } });
    const idOf = (n: string) => ids.value!.athletes.find((a) => a.name === n)!.id;
    const mine = loads.value!.loads.filter((l) => l.duration_min === 47);
    expect(mine).toHaveLength(names.length - 2);
    expect(mine.some((l) => l.athlete_id === idOf(excluded) || l.athlete_id === idOf(dropped))).toBe(false);
    expect(mine.find((l) => l.athlete_id === idOf(heavier))).toMatchObject({ rpe: 8, load_au: 376 });
    // Add a training session.
    await page.locator('[data-action="add-session"]').click();
    await waitForForm(page, 'session-add', 'idle');
    await field(page, 'session-add', 'squad_id').locator('select').selectOption({ label: 'U19' });
    await field(page, 'session-add', 'kind').locator('input').fill('gym');
    await field(page, 'session-add', 'duration_min').locator('input').fill('50');
    await form(page, 'session-add').locator('button[type="submit"]').click();
    await page.locator('[data-saved="true"]', { hasText: `Create gym session on ${formatDay(today)} for U19` }).waitFor();
    await page.context().close();
  });

  it('an analyst (no workload.write) is offered no load form and is refused by the service', async () => {
    const page = await signedIn(browser, app, 'analyst');
    await goTo(page, '#/squads', 'squads');
    expect(await page.locator('[data-action="log-load"]').count()).toBe(0);
    const squads = await contractCall<{ id: string }[]>(page, 'verb.call', { verb: 'squads.list', input: {} });
    const r = await contractCall(page, 'forms.submit', {
      verb: 'workload.logSessionLoads',
      input: { squad_id: squads.value![0]!.id, date: today, duration_min: 30, rpe: 3 },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    await page.context().close();
  });
});
