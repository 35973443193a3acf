/**
 * HQ sign-in codes in the UI (issue 12, B3), in Chromium against the real HQ (sync/hq.ts as a child
 * process with its own Postgres) and two app instances (two devices, each its own SQLite file). A
 * PIN alone no longer signs anyone in to HQ: the owner enrols the clinic laptop with an
 * operator-issued code, then in Settings → Users gets a one-time code for the physio's account
 * (shown once, with its expiry); on a second device the physio's account is enrolled with that code;
 * the same code used again is refused by HQ and the device stays as it was. An admin, who may not
 * set a physio's PIN, is offered no code for that account.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { DEMO_PIN, launchBrowser, screenshot, startApp } from './fixtures/app';
import type { RunningHq } from './fixtures/hq';
import { havePostgres, startHq } from './fixtures/hq';
import { contractCall, goTo } from './pages/app';
import { EMAIL, signedIn } from './pages/forms';

const CODE = /^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/;

let hq: RunningHq;
let laptop: RunningApp;
let second: RunningApp;
let browser: Browser;

beforeAll(async () => {
  if (!havePostgres) return;
  hq = await startHq();
  laptop = await startApp();
  second = await startApp();
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await laptop?.stop();
  await second?.stop();
  await hq?.stop();
});

describe.skipIf(!havePostgres)('HQ sign-in codes', () => {
  it("the owner issues the physio's code in Settings → Users; a second device enrols with it once, never twice", async () => {
    // The clinic laptop: enrolled by the owner with the operator's code.
    const owner = await signedIn(browser, laptop, 'owner');
    const ownerCode = await hq.enrolmentCode(EMAIL('owner'));
    expect(ownerCode).toMatch(CODE);
    expect(
      (await contractCall(owner, 'sync.enrol', { hqUrl: hq.url, email: EMAIL('owner'), pin: DEMO_PIN, code: ownerCode, deviceName: 'Clinic laptop E2E' })).ok,
    ).toBe(true);

    // Settings → Users: "HQ sign-in code…" on the physio's row; nothing is issued until asked.
    await goTo(owner, '#/settings', 'settings');
    await owner.locator('[data-sync-settings="enrolled"]').waitFor({ timeout: 30_000 });
    const row = owner.locator(`tr[data-user="${EMAIL('physio')}"]`);
    await row.locator('[data-action="signin-code"]').click();
    const dialog = owner.locator('dialog[open] form[data-form="user-signin-code"]');
    await dialog.waitFor();
    expect(await dialog.locator('[data-field="signin-code"]').count()).toBe(0);
    await dialog.locator('button[type="submit"]').click();
    const shown = dialog.locator('[data-signin-code-once]');
    await shown.waitFor({ timeout: 30_000 });
    const code = (await shown.locator('[data-field="signin-code"]').textContent())!.trim();
    expect(code).toMatch(CODE);
    expect(await shown.getAttribute('data-user')).toBe(EMAIL('physio'));
    expect(await shown.locator('[data-field="signin-code-expires"]').textContent()).toMatch(/UTC$/);
    expect(await shown.textContent()).toMatch(/Settings → Sync/);
    await screenshot(owner, 'sync-signin-code-01-issued');
    await shown.locator('[data-action="signin-code-done"]').click();
    await dialog.waitFor({ state: 'detached' });

    // The second device: its owner enrols it as the physio's device, with the physio's email, PIN and that code.
    const other = await signedIn(browser, second, 'owner');
    await goTo(other, '#/settings', 'settings');
    const enrolForm = other.locator('form[data-form="sync-enrol"]');
    await enrolForm.locator('input[name="hqUrl"]').fill(hq.url);
    await enrolForm.locator('input[name="email"]').fill(EMAIL('physio'));
    await enrolForm.locator('input[name="pin"]').fill(DEMO_PIN);
    await enrolForm.locator('input[name="code"]').fill(code.toLowerCase()); // case does not matter
    await enrolForm.locator('[data-action="enrol"]').click();
    await other.locator('[data-sync-settings="enrolled"]').waitFor({ timeout: 30_000 });
    await other.locator('a.sync-indicator[data-sync-indicator="online"]').waitFor({ timeout: 60_000 });
    const enrolled = await contractCall<{ enrolled: boolean; device_id: string }>(other, 'sync.status', {});
    expect(enrolled.value).toMatchObject({ enrolled: true });
    const deviceId = enrolled.value!.device_id;

    // The same code again (Enrol again…): HQ refuses it, and the device keeps its enrolment.
    await other.locator('button', { hasText: 'Enrol again…' }).click();
    await enrolForm.locator('input[name="hqUrl"]').fill(hq.url);
    await enrolForm.locator('input[name="email"]').fill(EMAIL('physio'));
    await enrolForm.locator('input[name="pin"]').fill(DEMO_PIN);
    await enrolForm.locator('input[name="code"]').fill(code);
    await enrolForm.locator('[data-action="enrol"]').click();
    const refused = other.locator('[data-sync-settings] .error-note[data-error-code="Unauthenticated"]');
    await refused.waitFor({ timeout: 30_000 });
    expect(await refused.textContent()).toMatch(/HQ did not accept the email, PIN or sign-in code/);
    await screenshot(other, 'sync-signin-code-02-used-twice');
    expect((await contractCall<{ device_id: string }>(other, 'sync.status', {})).value!.device_id).toBe(deviceId);
    expect(await other.content()).not.toContain('aihq_');

    // The owner gets a code for another device of theirs on the laptop (Settings → Sync), and with
    // it signs in to HQ as themselves on the second device, which the physio's account enrolled.
    await owner.locator('[data-action="self-signin-code"]').click();
    const mine = owner.locator('[data-self-signin-code="shown"] [data-field="signin-code"]');
    await mine.waitFor({ timeout: 30_000 });
    const selfCode = (await mine.textContent())!.trim();
    expect(selfCode).toMatch(CODE);
    await screenshot(owner, 'sync-signin-code-03-self');
    await other.locator('button', { hasText: 'Cancel' }).click();
    const signIn = other.locator('form[data-form="owner-hq-signin"]');
    await signIn.locator('input[name="ownerPin"]').fill(DEMO_PIN);
    await signIn.locator('input[name="ownerCode"]').fill(selfCode);
    await signIn.locator('[data-action="owner-hq-signin"]').click();
    await other.locator('[data-owner-hq-signin="yes"]').waitFor({ timeout: 30_000 });

    // An admin may not set a physio's PIN, so is offered no code for that account either.
    const admin = await signedIn(browser, laptop, 'admin');
    await goTo(admin, '#/settings', 'settings');
    await admin.locator(`tr[data-user="${EMAIL('physio')}"]`).waitFor();
    expect(await admin.locator(`tr[data-user="${EMAIL('physio')}"] [data-action="signin-code"]`).count()).toBe(0);
  });
});
