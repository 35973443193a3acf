/**
 * Settings forms in Chromium. Users: an owner adds a user (a bad email named next to its field,
 * nothing lost; the role list holds only what an owner may grant), sets their PIN, and the new
 * person signs in; an admin is offered only admin and athlete roles and no actions on clinical
 * accounts, and deactivates an admin account (gone from the sign-in picker). Devices: register
 * (the key shown once), Replace key (a new key, the old last four gone), Revoke. A physio (no
 * settings.manage, user.manage or device.manage) is offered none of it and refused by the service.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, newPage, screenshot, startApp } from './fixtures/app';
import { SignInPage, contractCall, goTo, waitForPage } from './pages/app';
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

async function roleOptions(page: Page, formName: string): Promise<string[]> {
  return field(page, formName, 'role')
    .locator('option')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter(Boolean));
}

describe('settings: users', () => {
  it('an owner adds a user (bad email named at its field, nothing lost), sets a PIN, and the new person signs in', async () => {
    const page = await signedIn(browser, app, 'owner');
    await goTo(page, '#/settings', 'settings');
    await page.locator('[data-action="add-user"]').click();
    await waitForForm(page, 'user-add', 'idle');
    expect(await roleOptions(page, 'user-add')).toEqual([
      'owner',
      'admin',
      'doctor',
      'physio',
      'sports_scientist',
      'strength_coach',
      'coach',
      'analyst',
      'athlete',
    ]);
    await field(page, 'user-add', 'email').locator('input').fill('tamsin.vale-at-kestrel');
    await field(page, 'user-add', 'display_name').locator('input').fill('Tamsin Vale');
    await field(page, 'user-add', 'role').locator('select').selectOption('physio');
    await page.getByRole('button', { name: 'Add user' }).last().click();
    await waitForForm(page, 'user-add', 'error');
    expect(await field(page, 'user-add', 'email').locator('.field-error').textContent()).toBeTruthy();
    expect(await field(page, 'user-add', 'display_name').locator('.field-error').count()).toBe(0);
    expect(await field(page, 'user-add', 'display_name').locator('input').inputValue()).toBe('Tamsin Vale');
    await screenshot(page, 'form-24-add-user-validation');
    await field(page, 'user-add', 'email').locator('input').fill('tamsin.vale@kestrelvale.test');
    await page.getByRole('button', { name: 'Add user' }).last().click();
    await page.locator('[data-saved="true"]', { hasText: 'Add user Tamsin Vale (physio)' }).waitFor();
    const row = page.locator('tr[data-user="tamsin.vale@kestrelvale.test"]');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/Physio.*active.*not set/);
    // A PIN that is too short is named at the field; then a good one.
    await row.locator('[data-action="set-pin"]').click();
    await waitForForm(page, 'user-pin', 'idle');
    await field(page, 'user-pin', 'pin').locator('input').fill('12');
    await page.keyboard.press('Enter');
    await waitForForm(page, 'user-pin', 'error');
    expect(await field(page, 'user-pin', 'pin').locator('.field-error').textContent()).toBe('A PIN is 4 to 8 digits.');
    await field(page, 'user-pin', 'pin').locator('input').fill('482913');
    await page.keyboard.press('Enter');
    await page.locator('[data-saved="true"]', { hasText: 'PIN set for Tamsin Vale' }).waitFor();
    await page.locator('tr[data-user="tamsin.vale@kestrelvale.test"]', { hasText: 'set' }).waitFor();
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();

    const { page: fresh } = await newPage(browser);
    const s = new SignInPage(fresh);
    await s.open(app.url);
    await s.signIn('tamsin.vale@kestrelvale.test', '482913');
    const me = await contractCall<{ display_name: string; role: string }>(fresh, 'session.me', {});
    expect(me.value).toMatchObject({ display_name: 'Tamsin Vale', role: 'physio' });
    await fresh.context().close();
  });

  it('an admin grants only admin and athlete roles, has no actions on clinical accounts, and deactivates an admin account', async () => {
    const owner = await signedIn(browser, app, 'owner');
    const made = await contractCall(owner, 'forms.submit', {
      verb: 'users.create',
      input: { email: 'office.temp@kestrelvale.test', display_name: 'Office Temp', role: 'admin' },
    });
    expect(made.ok).toBe(true);
    await owner.context().close();

    const page = await signedIn(browser, app, 'admin');
    await goTo(page, '#/settings', 'settings');
    await page.locator('[data-action="add-user"]').click();
    await waitForForm(page, 'user-add', 'idle');
    expect(await roleOptions(page, 'user-add')).toEqual(['admin', 'athlete']);
    await page.getByRole('button', { name: 'Cancel' }).click();
    // No actions on a doctor's account, nor on one's own.
    expect(await page.locator('tr[data-user="doctor@kestrelvale.test"] [data-action]').count()).toBe(0);
    expect(await page.locator('tr[data-user="admin@kestrelvale.test"] [data-action]').count()).toBe(0);
    const temp = page.locator('tr[data-user="office.temp@kestrelvale.test"]');
    await temp.locator('[data-action="change-role"]').click();
    await waitForForm(page, 'user-role', 'idle');
    expect(await roleOptions(page, 'user-role')).toEqual(['admin', 'athlete']);
    // Athlete without the athlete record: the service names the missing link at its field.
    await field(page, 'user-role', 'role').locator('select').selectOption('athlete');
    await page.getByRole('button', { name: 'Save role' }).click();
    await waitForForm(page, 'user-role', 'error');
    expect(await field(page, 'user-role', 'linked_athlete_id').locator('.field-error').textContent()).toBeTruthy();
    await screenshot(page, 'form-25-change-role-validation');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await temp.locator('[data-action="deactivate-user"]').click();
    await waitForForm(page, 'user-deactivate', 'idle');
    expect(await form(page, 'user-deactivate').textContent()).toMatch(/Nothing is deleted/);
    await page.getByRole('button', { name: 'Deactivate user' }).click();
    await page.locator('[data-saved="true"]', { hasText: 'Update user Office Temp' }).waitFor();
    await page.locator('tr[data-user="office.temp@kestrelvale.test"] [data-user-status]', { hasText: 'deactivated' }).waitFor();
    const users = await contractCall<{ users: { email: string }[] }>(page, 'session.users', {});
    expect(users.value!.users.map((u) => u.email)).not.toContain('office.temp@kestrelvale.test');
    // The service refuses what the form does not offer.
    const r = await contractCall(page, 'forms.submit', {
      verb: 'users.create',
      input: { email: 'sneaky@kestrelvale.test', display_name: 'Sneaky', role: 'doctor' },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    await page.context().close();
  });
});

describe('settings: devices', () => {
  it('register shows the key once; Replace key issues a new one; Revoke leaves no key', async () => {
    const page = await signedIn(browser, app, 'admin');
    await goTo(page, '#/settings', 'settings');
    await page.locator('[data-action="register-device"]').click();
    await waitForForm(page, 'device-register', 'idle');
    await page.getByRole('button', { name: 'Register device' }).last().click();
    await waitForForm(page, 'device-register', 'error');
    expect(await field(page, 'device-register', 'name').locator('.field-error').textContent()).toBeTruthy();
    await field(page, 'device-register', 'name').locator('input').fill('Pitch camera 3');
    await field(page, 'device-register', 'kind').locator('select').selectOption('camera');
    await page.getByRole('button', { name: 'Register device' }).last().click();
    const first = (await page.locator('[data-api-key]').textContent())!;
    expect(first).toMatch(/^aik_[A-Za-z0-9_-]{40,}$/);
    await screenshot(page, 'form-26-device-key-once');
    await page.locator('[data-action="key-done"]').click();
    const row = page.locator('tr[data-device="Pitch camera 3"]');
    await row.waitFor();
    expect(await row.locator('[data-device-key]').textContent()).toBe(`…${first.slice(-4)}`);
    // Nowhere else on the page after closing.
    expect(await page.content()).not.toContain(first);

    await row.locator('[data-action="rotate-key"]').click();
    await waitForForm(page, 'device-rotate', 'idle');
    await form(page, 'device-rotate').getByRole('button', { name: 'Replace key', exact: true }).click();
    const second = (await page.locator('[data-api-key]').textContent())!;
    expect(second).toMatch(/^aik_/);
    expect(second).not.toBe(first);
    await page.locator('[data-action="key-done"]').click();
    await page.locator('tr[data-device="Pitch camera 3"] [data-device-key]', { hasText: second.slice(-4) }).waitFor();

    await page.locator('tr[data-device="Pitch camera 3"] [data-action="revoke-device"]').click();
    await waitForForm(page, 'device-revoke', 'idle');
    await form(page, 'device-revoke').getByRole('button', { name: 'Revoke key', exact: true }).click();
    await page.locator('[data-saved="true"]', { hasText: 'Revoke API key of Pitch camera 3' }).waitFor();
    await page.locator('tr[data-device="Pitch camera 3"] [data-device-key]', { hasText: 'revoked' }).waitFor();
    const list = await contractCall<{ devices: { name: string; api_key_last4: string | null }[] }>(page, 'verb.call', { verb: 'devices.list', input: {} });
    expect(list.value!.devices.find((d) => d.name === 'Pitch camera 3')!.api_key_last4).toBeNull();
    await page.context().close();
  });

  it('a physio is offered no settings forms and is refused by the service', async () => {
    const page = await signedIn(browser, app, 'physio');
    await waitForPage(page, 'athletes');
    expect(await page.locator('nav a', { hasText: 'Settings' }).count()).toBe(0);
    await goTo(page, '#/settings', 'settings', 'denied');
    expect(await page.locator('[data-action="add-user"], [data-action="register-device"]').count()).toBe(0);
    for (const [verb, input] of [
      ['users.create', { email: 'x@kestrelvale.test', display_name: 'X', role: 'coach' }],
      ['devices.register', { name: 'Cam', kind: 'camera' }],
    ] as const) {
      expect(await contractCall(page, 'forms.submit', { verb, input })).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    }
    const users = await contractCall<{ users: { id: string; email: string }[] }>(page, 'session.users', {});
    const coach = users.value!.users.find((u) => u.email === 'coach@kestrelvale.test')!;
    expect(await contractCall(page, 'admin.setPin', { user_id: coach.id, pin: '9999' })).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    await page.context().close();
  });
});
