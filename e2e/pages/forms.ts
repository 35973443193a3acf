/** Page model of the entry forms (components/Form.tsx): named DOM states, never timers. */
import type { Page } from 'playwright-core';
import type { RunningApp } from '../fixtures/app';
import { newPage } from '../fixtures/app';
import type { Browser } from 'playwright-core';
import { SignInPage } from './app';

/** `role@kestrelvale.test`, the demo users. */
export const EMAIL = (role: string) => `${role}@kestrelvale.test`;

/** A signed-in page that records page errors (checked by {@link pageErrors}). */
export async function signedIn(browser: Browser, app: RunningApp, role: string): Promise<Page> {
  const { page } = await newPage(browser);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  (page as Page & { __errors?: string[] }).__errors = errors;
  const s = new SignInPage(page);
  await s.open(app.url);
  await s.signIn(EMAIL(role));
  return page;
}

/** Console and page errors seen so far. */
export function pageErrors(page: Page): string[] {
  return (page as Page & { __errors?: string[] }).__errors ?? [];
}

/** The form `name` (open dialog or inline). */
export function form(page: Page, name: string) {
  return page.locator(`form[data-form="${name}"]`);
}

/** Wait until form `name` reaches `state` (idle, saving, review, saved, waiting, error, conflict). */
export async function waitForForm(page: Page, name: string, state: string): Promise<void> {
  await page.waitForSelector(`form[data-form="${name}"][data-state="${state}"]`, { state: 'attached' });
}

/** The field wrapper of `field` in form `name`. */
export function field(page: Page, name: string, fieldName: string) {
  return form(page, name).locator(`[data-field="${fieldName}"]`);
}

/** The open review dialog. */
export function review(page: Page) {
  return page.locator('dialog.review-dialog[open]');
}
