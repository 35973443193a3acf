/**
 * Squad entry forms in Chromium: Add squad (a missing season named next to its field, nothing
 * saved, then the new squad listed without a reload), Rename with a stale-form conflict that shows
 * the current name, Move athletes (several rows: reviewed as a table, one row dropped, only the
 * kept athletes moved), and a role without athlete.write (coach) offered no squad form and refused
 * by the service.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, screenshot, startApp } from './fixtures/app';
import { contractCall, goTo, waitForPage } from './pages/app';
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

interface SquadRow {
  id: string;
  name: string;
  season: string;
  athlete_count: number;
}

describe('squad forms', () => {
  it('a physio adds a squad: a cleared season is named next to its field, nothing saved; then the squad is listed', async () => {
    const page = await signedIn(browser, app, 'physio');
    await goTo(page, '#/squads', 'squads');
    await page.locator('[data-action="add-squad"]').click();
    await waitForForm(page, 'squad-add', 'idle');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('name');
    await page.keyboard.type('U16 Girls');
    await field(page, 'squad-add', 'season').locator('input').fill('');
    await page.keyboard.press('Enter');
    await waitForForm(page, 'squad-add', 'error');
    expect(await field(page, 'squad-add', 'season').locator('.field-error').textContent()).toBeTruthy();
    expect(await field(page, 'squad-add', 'name').locator('.field-error').count()).toBe(0);
    // Nothing lost: the typed name is still there.
    expect(await field(page, 'squad-add', 'name').locator('input').inputValue()).toBe('U16 Girls');
    const before = await contractCall<SquadRow[]>(page, 'verb.call', { verb: 'squads.list', input: {} });
    expect(before.value!.some((s) => s.name === 'U16 Girls')).toBe(false);
    await screenshot(page, 'form-20-add-squad-validation');
    await field(page, 'squad-add', 'season').locator('input').fill('2026/27');
    await page.keyboard.press('Enter');
    await page.locator('[data-saved="true"]', { hasText: 'Create squad U16 Girls' }).waitFor();
    await waitForPage(page, 'squads');
    await page.locator('tr[data-squad="U16 Girls"]').waitFor();
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();
  });

  it('a stale rename is refused with the current name; saving again after seeing it applies', async () => {
    const page = await signedIn(browser, app, 'doctor');
    const made = await contractCall<{ changeset: { changes: { id: string }[] } }>(page, 'forms.submit', {
      verb: 'squads.create',
      input: { name: 'U14', season: '2026/27' },
    });
    const id = made.value!.changeset.changes[0]!.id;
    await goTo(page, '#/squads', 'squads');
    await page.locator('tr[data-squad="U14"] [data-action="rename-squad"]').click();
    await waitForForm(page, 'squad-edit', 'idle');
    // Meanwhile a physio renames it.
    const physio = await signedIn(browser, app, 'physio');
    expect((await contractCall(physio, 'forms.submit', { verb: 'squads.update', input: { id, name: 'U14 Boys' } })).ok).toBe(true);
    await physio.context().close();
    await field(page, 'squad-edit', 'name').locator('input').fill('U14 Academy');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await waitForForm(page, 'squad-edit', 'conflict');
    await field(page, 'squad-edit', 'name').locator('[data-current="name"]').waitFor();
    expect(await field(page, 'squad-edit', 'name').locator('[data-current="name"]').textContent()).toBe('Now stored: U14 Boys');
    expect(await field(page, 'squad-edit', 'name').locator('input').inputValue()).toBe('U14 Academy');
    await screenshot(page, 'form-21-rename-squad-conflict');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('[data-saved="true"]', { hasText: 'Update squad U14 Boys' }).waitFor();
    await page.locator('tr[data-squad="U14 Academy"]').waitFor();
    await page.context().close();
  });

  it('moving five athletes is reviewed as a table; a dropped row stays in its squad', async () => {
    const page = await signedIn(browser, app, 'physio');
    const squads = (await contractCall<SquadRow[]>(page, 'verb.call', { verb: 'squads.list', input: {} })).value!;
    const from = squads.find((s) => s.athlete_count >= 5)!;
    const made = await contractCall<{ changeset: { changes: { id: string }[] } }>(page, 'forms.submit', {
      verb: 'squads.create',
      input: { name: 'Rehab group', season: '2026/27' },
    });
    const target = made.value!.changeset.changes[0]!.id;
    const members = (
      await contractCall<{ athletes: { id: string; name: string }[] }>(page, 'verb.call', {
        verb: 'athletes.list',
        input: { squad_id: from.id, status: 'active', limit: 5 },
      })
    ).value!.athletes;
    await goTo(page, '#/squads', 'squads');
    await page.locator(`tr[data-squad="${from.name}"] [data-action="move-from"]`).click();
    await waitForForm(page, 'squad-move', 'idle');
    await field(page, 'squad-move', 'squad_id').locator('select').selectOption({ label: 'Rehab group' });
    // Nothing ticked: the service's message sits next to the athlete list.
    await page.getByRole('button', { name: /^Move athletes$/ }).click();
    await waitForForm(page, 'squad-move', 'error');
    expect(await field(page, 'squad-move', 'athlete_ids').locator('.field-error').textContent()).toBe('Tick at least one athlete.');
    for (const a of members) await form(page, 'squad-move').locator(`[data-move-athlete="${a.name}"] input`).check();
    await screenshot(page, 'form-22-move-athletes');
    await page.getByRole('button', { name: 'Move 5 athletes to Rehab group' }).click();
    await review(page).waitFor();
    const table = review(page).locator('table.bulk');
    expect(await table.getAttribute('data-bulk-rows')).toBe('5');
    const dropped = members[4]!;
    await table.locator(`tr[data-record="${dropped.name}"] input[type="checkbox"]`).uncheck();
    await screenshot(page, 'form-23-move-athletes-review');
    await review(page).locator('[data-confirm]').click();
    await page.locator('[data-saved="true"]', { hasText: 'Move 5 athletes to Rehab group — 1 of 5 rows left out' }).waitFor();
    await waitForPage(page, 'squads');
    expect(await page.locator('tr[data-squad="Rehab group"] td.num').textContent()).toBe('4');
    const moved = (
      await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { squad_id: target, limit: 50 } })
    ).value!.athletes.map((a) => a.id);
    expect(moved.sort()).toEqual(
      members
        .slice(0, 4)
        .map((a) => a.id)
        .sort(),
    );
    const kept = (await contractCall<{ squad_id: string }>(page, 'verb.call', { verb: 'athletes.get', input: { id: dropped.id } })).value!;
    expect(kept.squad_id).toBe(from.id);
    await page.context().close();
  });

  it('a coach (no athlete.write) is offered no squad form and is refused by the service', async () => {
    const page = await signedIn(browser, app, 'coach');
    await goTo(page, '#/squads', 'squads');
    expect(await page.locator('[data-action="add-squad"]').count()).toBe(0);
    expect(await page.locator('[data-action="rename-squad"]').count()).toBe(0);
    expect(await page.locator('[data-action="move-athletes"], [data-action="move-from"]').count()).toBe(0);
    // The coach still logs loads (workload.write).
    expect(await page.locator('[data-action="log-load"]').count()).toBeGreaterThan(0);
    const r = await contractCall(page, 'forms.submit', { verb: 'squads.create', input: { name: 'Nope', season: '2026/27' } });
    expect(r).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    await page.context().close();
  });
});
