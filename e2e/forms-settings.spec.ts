/**
 * Settings forms in Chromium. Users: an owner adds a user (a bad email named next to its field,
 * nothing lost; the role list holds only what an owner may grant), sets their PIN, and the new
 * person signs in; an admin is offered only the admin role, no actions on clinical accounts and
 * only Budget / Deactivate on an athlete account (an owner adds, links and sets the PIN of athlete
 * accounts; the service refuses the admin), and deactivates an admin account (gone from the
 * sign-in picker). Devices: register
 * (the key shown once), Replace key (a new key, the old last four gone), Revoke. A physio (no
 * settings.manage, user.manage or device.manage) is offered none of it and refused by the service.
 * Reports: a doctor generates an athlete summary (keyboard, a missing athlete named at its field,
 * the report opened at once and listed without a reload, at 1024 px nothing cut off); an analyst
 * is offered only the squad workload report and does not see the clinical one; an admin (no
 * report.generate) sees no Reports card and is refused by the service. A super admin is offered
 * no Set / Reset PIN on a doctor's or the owner's account (whoever sets a PIN can sign in as it).
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

  it('a signed-in window whose account is deactivated returns to sign-in at its next action, with the reason, never the old user’s shell (issue 13 re-review minor)', async () => {
    const owner = await signedIn(browser, app, 'owner');
    const coach = await signedIn(browser, app, 'coach');
    await goTo(coach, '#/athletes', 'athletes');
    const people = await contractCall<{ people: { id: string; role: string }[] }>(owner, 'session.people', {});
    const coachId = people.value!.people.find((p) => p.role === 'coach')!.id;
    const setActive = (active: boolean) =>
      contractCall(owner, 'verb.call', { verb: 'users.update', input: { id: coachId, active }, idempotency_key: `e2e-coach-active-${active}-${Date.now()}` });
    expect((await setActive(false)).ok).toBe(true);
    try {
      // the coach's next action: before, the page showed "Signed out" inside the coach's shell and nav
      await coach.evaluate(() => (window.location.hash = '#/squads'));
      await coach.locator('body[data-session="signedOut"]').waitFor();
      expect(await coach.locator('.whoami').count()).toBe(0);
      expect(await coach.locator('[role="alert"][data-error-code="Unauthenticated"]').textContent()).toMatch(/Signed out.*changed since you signed in/);
      await screenshot(coach, 'form-25-session-ended');
    } finally {
      expect((await setActive(true)).ok).toBe(true);
    }
    await owner.context().close();
    await coach.context().close();
  });

  it('an admin grants only the admin role (athlete accounts are an owner’s), has no actions on clinical accounts, and deactivates an admin account', async () => {
    const owner = await signedIn(browser, app, 'owner');
    const made = await contractCall(owner, 'forms.submit', {
      verb: 'users.create',
      input: { email: 'office.temp@kestrelvale.test', display_name: 'Office Temp', role: 'admin' },
    });
    expect(made.ok).toBe(true);
    // The owner may make it an athlete account; without the athlete record the service names the missing link at its field.
    // The labels name their selects (a screen reader reads "Role", "Athlete record").
    await goTo(owner, '#/settings', 'settings');
    await owner.locator('tr[data-user="office.temp@kestrelvale.test"] [data-action="change-role"]').click();
    await waitForForm(owner, 'user-role', 'idle');
    await form(owner, 'user-role').getByLabel('Role', { exact: true }).selectOption('athlete');
    await form(owner, 'user-role').getByLabel('Athlete record', { exact: true }).waitFor();
    await owner.getByRole('button', { name: 'Save role' }).click();
    await waitForForm(owner, 'user-role', 'error');
    expect(await field(owner, 'user-role', 'linked_athlete_id').locator('.field-error').textContent()).toBeTruthy();
    await screenshot(owner, 'form-25-change-role-validation');
    await owner.context().close();

    const page = await signedIn(browser, app, 'admin');
    await goTo(page, '#/settings', 'settings');
    expect(await page.locator('[data-section="users"] [data-note="athlete-accounts"]').textContent()).toMatch(/An owner adds athlete accounts/);
    await page.locator('[data-action="add-user"]').click();
    await waitForForm(page, 'user-add', 'idle');
    expect(await roleOptions(page, 'user-add')).toEqual(['admin']);
    await page.getByRole('button', { name: 'Cancel' }).click();
    // No actions on a doctor's account, nor on one's own; on an athlete account, Budget and Deactivate only.
    expect(await page.locator('tr[data-user="doctor@kestrelvale.test"] [data-action]').count()).toBe(0);
    expect(await page.locator('tr[data-user="admin@kestrelvale.test"] [data-action]').count()).toBe(0);
    const athleteActions = await page
      .locator('tr[data-user="athlete@kestrelvale.test"] [data-action]')
      .evaluateAll((bs) => bs.map((b) => b.getAttribute('data-action')));
    expect(athleteActions).toEqual(['set-budget', 'deactivate-user']);
    const temp = page.locator('tr[data-user="office.temp@kestrelvale.test"]');
    await temp.locator('[data-action="change-role"]').click();
    await waitForForm(page, 'user-role', 'idle');
    expect(await roleOptions(page, 'user-role')).toEqual(['admin']);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await temp.locator('[data-action="deactivate-user"]').click();
    await waitForForm(page, 'user-deactivate', 'idle');
    expect(await form(page, 'user-deactivate').textContent()).toMatch(/Nothing is deleted/);
    await page.getByRole('button', { name: 'Deactivate user' }).click();
    await page.locator('[data-saved="true"]', { hasText: 'Update user Office Temp' }).waitFor();
    await page.locator('tr[data-user="office.temp@kestrelvale.test"] [data-user-status]', { hasText: 'deactivated' }).waitFor();
    const users = await contractCall<{ users: { id: string; email: string }[] }>(page, 'session.users', {});
    expect(users.value!.users.map((u) => u.email)).not.toContain('office.temp@kestrelvale.test');
    // The service refuses what the form does not offer: a clinical role, an athlete account, an athlete account's PIN.
    const r = await contractCall(page, 'forms.submit', {
      verb: 'users.create',
      input: { email: 'sneaky@kestrelvale.test', display_name: 'Sneaky', role: 'doctor' },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    const me = await contractCall<{ users: { id: string; linked_athlete_id: string | null; email: string }[] }>(page, 'verb.call', {
      verb: 'users.list',
      input: {},
    });
    const athleteAccount = me.value!.users.find((u) => u.email === 'athlete@kestrelvale.test')!;
    const mine = await contractCall(page, 'forms.submit', {
      verb: 'users.create',
      input: { email: 'mine@kestrelvale.test', display_name: 'Mine', role: 'athlete', linked_athlete_id: athleteAccount.linked_athlete_id },
    });
    expect(mine).toMatchObject({ ok: false, error: { code: 'Forbidden', message: expect.stringMatching(/Ask an owner/) } });
    expect(await contractCall(page, 'admin.setPin', { user_id: athleteAccount.id, pin: '9999' })).toMatchObject({
      ok: false,
      error: { code: 'Forbidden', message: expect.stringMatching(/Ask an owner/) },
    });
    await page.context().close();
  });
});

describe('super admin', () => {
  it('lands on Settings (not the Athletes page it cannot read) and may grant every staff role (athlete accounts stay with an owner) but sets no clinician’s or owner’s PIN', async () => {
    const page = await signedIn(browser, app, 'super_admin');
    await waitForPage(page, 'settings');
    expect(await page.evaluate(() => window.location.hash)).toBe('#/settings');
    await page.locator('[data-action="add-user"]').click();
    await waitForForm(page, 'user-add', 'idle');
    expect(await roleOptions(page, 'user-add')).toContain('super_admin');
    expect(await page.locator('[data-section="devices"]').count()).toBe(0);
    await screenshot(page, 'form-27-super-admin-landing');
    await page.getByRole('button', { name: 'Cancel' }).click();
    // Whoever sets a PIN can sign in as that account: a super admin (no clinical reads) manages a
    // doctor's or the owner's account but is offered no Set / Reset PIN on it, and the service refuses it.
    const actions = (email: string) => page.locator(`tr[data-user="${email}"] [data-action]`).evaluateAll((bs) => bs.map((b) => b.getAttribute('data-action')));
    expect(await actions('doctor@kestrelvale.test')).toContain('change-role');
    expect(await actions('doctor@kestrelvale.test')).not.toContain('set-pin');
    expect(await actions('owner@kestrelvale.test')).not.toContain('set-pin');
    const users = await contractCall<{ users: { id: string; email: string }[] }>(page, 'session.users', {});
    for (const email of ['doctor@kestrelvale.test', 'owner@kestrelvale.test']) {
      const u = users.value!.users.find((x) => x.email === email)!;
      expect(await contractCall(page, 'admin.setPin', { user_id: u.id, pin: '9999' })).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    }
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

  it('a physio is offered only the Reports card of Settings and is refused the rest by the service', async () => {
    const page = await signedIn(browser, app, 'physio');
    await waitForPage(page, 'athletes');
    await goTo(page, '#/settings', 'settings');
    await page.locator('[data-section="reports"]').waitFor();
    expect(await page.locator('[data-action="add-user"], [data-action="register-device"], [data-form="budget"], [data-action="edit-org"]').count()).toBe(0);
    expect(await page.locator('[data-section="users"], [data-section="devices"], #assistant-settings').count()).toBe(0);
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

/** True when nothing is wider than the viewport and no card is wider than itself (no hidden or scrolled-off column). */
async function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(
    () =>
      document.documentElement.scrollWidth <= window.innerWidth && [...document.querySelectorAll('section.card')].every((c) => c.scrollWidth <= c.clientWidth),
  );
}

describe('settings: reports', () => {
  it('a doctor generates an athlete summary with the keyboard (a missing athlete named at its field); it opens at once and is listed', async () => {
    const page = await signedIn(browser, app, 'doctor');
    await page.setViewportSize({ width: 1024, height: 768 });
    await waitForPage(page, 'athletes');
    await page.locator('nav a', { hasText: 'Settings' }).click();
    await waitForPage(page, 'settings');
    // A doctor holds report.generate but not user, device or settings management.
    expect(await page.locator('[data-section="reports"]').count()).toBe(1);
    expect(await page.locator('[data-section="users"], [data-section="devices"], #assistant-settings').count()).toBe(0);
    await page.locator('[data-action="generate-report"]').focus();
    await page.keyboard.press('Enter');
    await waitForForm(page, 'report-generate', 'idle');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('kind');
    const kinds = await field(page, 'report-generate', 'kind')
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(kinds).toEqual(['athlete_summary', 'rtp_status', 'squad_workload']);
    // No athlete chosen: the service's typed error sits next to the Athlete field; nothing saved.
    await field(page, 'report-generate', 'as_of').locator('input').focus();
    await page.keyboard.press('Enter');
    await waitForForm(page, 'report-generate', 'error');
    expect(await field(page, 'report-generate', 'athlete_id').locator('.field-error').textContent()).toBe(
      'Choose the athlete: an athlete summary report is about one athlete.',
    );
    expect(await form(page, 'report-generate').locator('[data-error-code="Validation"]').textContent()).toContain('Athlete: Choose the athlete');
    await screenshot(page, 'form-28-generate-report-validation');
    const athlete = field(page, 'report-generate', 'athlete_id').locator('select');
    await athlete.selectOption({ index: 1 });
    const name = (await athlete.locator('option:checked').textContent())!;
    await field(page, 'report-generate', 'as_of').locator('input').fill('2026-11-30');
    await field(page, 'report-generate', 'as_of').locator('input').focus();
    await page.keyboard.press('Enter');
    // Applied at once: the new report opens, from the stored Markdown.
    const open = page.locator('dialog[data-report-open][open]');
    await open.waitFor();
    expect(await open.locator('h2').first().textContent()).toBe(`Athlete summary: ${name} (2026-11-30)`);
    expect(await open.textContent()).toMatch(/Injuries[\s\S]*Return to play[\s\S]*Workload[\s\S]*Wellness/);
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'form-29-report-open');
    await page.keyboard.press('Escape');
    await open.waitFor({ state: 'detached' });
    await page.locator('[data-saved="true"]', { hasText: `Generate report: Athlete summary: ${name}` }).waitFor();
    // Listed without a reload, newest first, and opens again from the list.
    const row = page.locator(`tr[data-report="Athlete summary: ${name} (2026-11-30)"]`);
    await row.waitFor();
    expect(await page.locator('tr[data-report]').first().getAttribute('data-report')).toBe(`Athlete summary: ${name} (2026-11-30)`);
    await row.locator('[data-action="open-report"]').click();
    await open.waitFor();
    expect(await open.textContent()).toContain('Injuries');
    await open.locator('[data-action="close-report"]').click();
    await open.waitFor({ state: 'detached' });
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();
  });

  it('an analyst is offered only the squad workload report; an admin (no report.generate) sees no Reports card and is refused', async () => {
    const page = await signedIn(browser, app, 'analyst');
    await goTo(page, '#/settings', 'settings');
    await page.locator('[data-action="generate-report"]').click();
    await waitForForm(page, 'report-generate', 'idle');
    const kinds = await field(page, 'report-generate', 'kind')
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(kinds).toEqual(['squad_workload']);
    await field(page, 'report-generate', 'squad_id').locator('select').selectOption({ label: 'U19' });
    await page.getByRole('button', { name: 'Generate report' }).last().click();
    const open = page.locator('dialog[data-report-open][open]');
    await open.waitFor();
    expect(await open.locator('h2').first().textContent()).toMatch(/^U19 workload as of \d{4}-\d{2}-\d{2}$/);
    expect(await open.locator('table th').allTextContents()).toContain('ACWR');
    await open.locator('[data-action="close-report"]').click();
    // The doctor's athlete summary (clinical detail) is not listed for an analyst.
    const titles = await page.locator('tr[data-report]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-report')));
    expect(titles.some((t) => t!.startsWith('U19 workload'))).toBe(true);
    expect(titles.some((t) => t!.startsWith('Athlete summary'))).toBe(false);
    await page.context().close();

    const admin = await signedIn(browser, app, 'admin');
    await goTo(admin, '#/settings', 'settings');
    await admin.locator('[data-section="users"]').waitFor();
    expect(await admin.locator('[data-section="reports"], [data-action="generate-report"]').count()).toBe(0);
    const squads = await contractCall<{ id: string; name: string }[]>(admin, 'verb.call', { verb: 'squads.list', input: {} });
    const u19 = squads.value!.find((s) => s.name === 'U19')!;
    expect(await contractCall(admin, 'forms.submit', { verb: 'reports.generate', input: { kind: 'squad_workload', squad_id: u19.id } })).toMatchObject({
      ok: false,
      error: { code: 'Forbidden' },
    });
    expect(await contractCall(admin, 'verb.call', { verb: 'reports.list', input: {} })).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    await admin.context().close();
  });
});

describe('settings: per-user assistant budget', () => {
  it('an owner sets a coach’s monthly budget with the keyboard (out of range named at the field, nothing saved); an admin is refused a doctor’s', async () => {
    const page = await signedIn(browser, app, 'owner');
    await page.setViewportSize({ width: 1024, height: 768 });
    await goTo(page, '#/settings', 'settings');
    const row = page.locator('tr[data-user="coach@kestrelvale.test"]');
    await row.waitFor();
    expect(await row.locator('[data-user-budget]').textContent()).toBe('no cap');
    await row.locator('[data-action="set-budget"]').focus();
    await page.keyboard.press('Enter');
    await waitForForm(page, 'user-budget', 'idle');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('budget_cap_usd');
    expect(await field(page, 'user-budget', 'budget_cap_usd').locator('label').textContent()).toBe('Monthly assistant budget (USD)');
    await page.keyboard.type('250000');
    await page.keyboard.press('Enter');
    await waitForForm(page, 'user-budget', 'error');
    expect(await field(page, 'user-budget', 'budget_cap_usd').locator('.field-error').textContent()).toBe('Too large: at most 100000.');
    expect(await form(page, 'user-budget').locator('[data-error-code="Validation"] li').allTextContents()).toEqual([
      'Monthly assistant budget (USD): Too large: at most 100000.',
    ]);
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'form-30-user-budget-validation');
    const settings = () =>
      contractCall<{ users: { display_name: string; role: string; cap_usd: number | null }[] }>(page, 'settings.assistant', {}).then(
        (r) => r.value!.users.find((u) => u.role === 'coach')!.cap_usd,
      );
    expect(await settings()).toBeNull();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('150');
    await page.keyboard.press('Enter');
    await page.locator('[data-saved="true"]', { hasText: 'Update user' }).waitFor();
    // Listed without a reload, and the cap the assistant's budget check reads.
    await page.locator('tr[data-user="coach@kestrelvale.test"] [data-user-budget]', { hasText: '$150.00' }).waitFor();
    expect(await settings()).toBe(150);
    expect(await fitsWidth(page)).toBe(true);
    // Emptying the field removes the personal cap.
    await page.locator('tr[data-user="coach@kestrelvale.test"] [data-action="set-budget"]').click();
    await waitForForm(page, 'user-budget', 'idle');
    await field(page, 'user-budget', 'budget_cap_usd').locator('input').fill('');
    await page.keyboard.press('Enter');
    await page.locator('tr[data-user="coach@kestrelvale.test"] [data-user-budget]', { hasText: 'no cap' }).waitFor();
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();

    const admin = await signedIn(browser, app, 'admin');
    const users = await contractCall<{ users: { id: string; email: string; version: number }[] }>(admin, 'verb.call', { verb: 'users.list', input: {} });
    const doctor = users.value!.users.find((u) => u.email === 'doctor@kestrelvale.test')!;
    expect(await contractCall(admin, 'forms.submit', { verb: 'users.update', input: { id: doctor.id, budget_cap_usd: 5 } })).toMatchObject({
      ok: false,
      error: { code: 'Forbidden' },
    });
    await admin.context().close();
  });
});

describe('settings: organisation name', () => {
  it('a stale Settings tab cannot overwrite another administrator’s assistant settings: the budget gets the conflict, the switches show what is stored (issue 13 re-review)', async () => {
    const page = await signedIn(browser, app, 'admin');
    await goTo(page, '#/settings', 'settings');
    await page.locator('[data-tool-switch="list_squads"] input').waitFor();
    expect(await page.locator('[data-tool-switch="list_squads"] input').isChecked()).toBe(true);
    const before = await contractCall<{ version: number; org: { cap_usd: number | null } }>(page, 'settings.assistant', {});
    // Another administrator switches a tool off meanwhile.
    const other = await signedIn(browser, app, 'owner');
    expect(await contractCall(other, 'settings.updateAssistant', { disabled_tools: ['list_squads'], expected_version: before.value!.version })).toMatchObject({
      ok: true,
    });
    await other.context().close();
    // This tab, opened before, saves the budget: refused, nothing saved, told what changed.
    await page.locator('[data-testid="budget-cap"]').fill('45');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await page.locator('form[data-form="budget"][data-state="conflict"]').waitFor();
    const note = page.locator('[data-error-code="Conflict"]');
    expect(await note.textContent()).toMatch(/Changed since you opened this form.*the switched-off tools by .*Nothing was saved/);
    // The switches now show what is stored (saving them again would not silently switch the tool back on); the typed cap is kept.
    await page.locator('[data-tool-switch="list_squads"] input:not(:checked)').waitFor();
    expect(await page.locator('[data-testid="budget-cap"]').inputValue()).toBe('45');
    await note.scrollIntoViewIfNeeded();
    await screenshot(page, 'form-34-assistant-settings-conflict');
    const stored = await contractCall<{ org: { cap_usd: number | null }; tools: { name: string; disabled: boolean }[] }>(page, 'settings.assistant', {});
    expect(stored.value!.org.cap_usd).toBe(before.value!.org.cap_usd);
    // Saving again, now against the current settings, applies.
    await page.getByRole('button', { name: 'Save budget' }).click();
    await page.locator('.ok-note', { hasText: 'monthly budget' }).waitFor();
    const after = await contractCall<{ org: { cap_usd: number | null }; tools: { name: string; disabled: boolean }[] }>(page, 'settings.assistant', {});
    expect(after.value!.org.cap_usd).toBe(45);
    expect(after.value!.tools.find((t) => t.name === 'list_squads')?.disabled).toBe(true);
    await page.context().close();
  });

  it('an admin renames the organisation with the keyboard (an empty name named at its field); a stale form gets the name now stored; a physio is refused', async () => {
    const page = await signedIn(browser, app, 'admin');
    await page.setViewportSize({ width: 1024, height: 768 });
    await goTo(page, '#/settings', 'settings');
    const shown = page.locator('[data-org-name]');
    expect(await shown.textContent()).toBe('Kestrel Vale FC');
    await page.locator('[data-action="edit-org"]').focus();
    await page.keyboard.press('Enter');
    await waitForForm(page, 'org-name', 'idle');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('name');
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.press('Enter');
    await waitForForm(page, 'org-name', 'error');
    expect(await field(page, 'org-name', 'name').locator('.field-error').textContent()).toBe('Enter the organisation’s name.');
    expect(await form(page, 'org-name').locator('[data-error-code="Validation"] li').allTextContents()).toEqual([
      'Organisation name: Enter the organisation’s name.',
    ]);
    await screenshot(page, 'form-31-org-name-validation');
    await page.keyboard.type('Kestrel Vale Football Club');
    await page.keyboard.press('Enter');
    await page.locator('[data-saved="true"]', { hasText: 'Organisation renamed to Kestrel Vale Football Club' }).waitFor();
    expect(await shown.textContent()).toBe('Kestrel Vale Football Club');
    // The shell shows it at once; the session and the sign-in picker read it from the database.
    expect(await page.locator('.whoami').textContent()).toContain('· Kestrel Vale Football Club');
    const me = await contractCall<{ org_name: string }>(page, 'session.me', {});
    expect(me.value!.org_name).toBe('Kestrel Vale Football Club');

    // Stale: renamed in another tab while this form is open.
    await page.locator('[data-action="edit-org"]').click();
    await waitForForm(page, 'org-name', 'idle');
    const other = await signedIn(browser, app, 'owner');
    const cur = await contractCall<{ version: number }>(other, 'settings.organisation', {});
    expect(await contractCall(other, 'settings.updateOrganisation', { name: 'Kestrel Vale', expected_version: cur.value!.version })).toMatchObject({
      ok: true,
    });
    await other.context().close();
    await field(page, 'org-name', 'name').locator('input').fill('Kestrel Vale FC');
    await page.keyboard.press('Enter');
    await waitForForm(page, 'org-name', 'conflict');
    expect(await form(page, 'org-name').textContent()).toContain('Changed since you opened this form');
    await page.locator('[data-current="name"]', { hasText: 'Now stored: Kestrel Vale' }).waitFor();
    expect(await fitsWidth(page)).toBe(true);
    await screenshot(page, 'form-32-org-name-conflict');
    // Saving again after checking applies against the name now stored.
    await page.keyboard.press('Enter');
    await page.locator('[data-saved="true"]', { hasText: 'Organisation renamed to Kestrel Vale FC' }).waitFor();
    expect(await shown.textContent()).toBe('Kestrel Vale FC');
    expect(pageErrors(page).filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    await page.context().close();

    const physio = await signedIn(browser, app, 'physio');
    const v = await contractCall<{ version: number }>(physio, 'settings.organisation', {});
    expect(await contractCall(physio, 'settings.updateOrganisation', { name: 'Physio FC', expected_version: v.value!.version })).toMatchObject({
      ok: false,
      error: { code: 'Forbidden' },
    });
    await physio.context().close();
  });
});
