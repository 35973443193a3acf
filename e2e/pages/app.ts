/** Page models: how a user drives each page, and the named DOM states tests wait for. */
import type { Page } from 'playwright-core';
import { DEMO_PIN } from '../fixtures/app';

/** Wait until `<main data-page=page>` reports `state` (ready, error, denied). */
export async function waitForPage(page: Page, name: string, state: 'ready' | 'denied' | 'error' = 'ready'): Promise<void> {
  await page.waitForSelector(`main[data-page="${name}"][data-state="${state}"]`, { state: 'attached' });
}

export class SignInPage {
  constructor(readonly page: Page) {}
  async open(url: string): Promise<void> {
    await this.page.goto(url);
    await waitForPage(this.page, 'signin');
  }
  /** Choose the user by email, type the PIN with the keyboard, press Enter. */
  async signIn(email: string, pin = DEMO_PIN): Promise<void> {
    await this.page.locator(`label.user-option[data-email="${email}"] input`).check();
    await this.page.locator('#pin').fill(pin);
    await this.page.keyboard.press('Enter');
    await this.page.waitForSelector('body[data-session="signedIn"]');
  }
}

export class AthletesPage {
  constructor(readonly page: Page) {}
  async open(): Promise<void> {
    await this.page.evaluate(() => (window.location.hash = '#/athletes'));
    await waitForPage(this.page, 'athletes');
  }
  async search(text: string): Promise<void> {
    await this.page.locator('input[type="search"]').fill(text);
  }
  async count(): Promise<string> {
    return (await this.page.locator('[data-testid="athlete-count"]').textContent()) ?? '';
  }
  async openAthlete(name: string): Promise<void> {
    await this.search(name);
    await this.page.locator(`[data-athlete-name="${name}"]`).first().waitFor();
    await this.page.locator('.vlist-scroller').focus();
    await this.page.keyboard.press('Enter');
    await waitForPage(this.page, 'athlete-overview');
  }
}

/** Open a route by hash and wait for its page. */
export async function goTo(page: Page, hash: string, name: string, state: 'ready' | 'denied' = 'ready'): Promise<void> {
  await page.evaluate((h) => (window.location.hash = h), hash);
  await waitForPage(page, name, state);
}

/** Call the contract from inside the page (same transport and token as the UI). */
export async function contractCall<T = unknown>(
  page: Page,
  op: string,
  input: unknown,
): Promise<{ ok: boolean; value?: T; error?: { code: string; message: string } }> {
  return page.evaluate(
    async ([o, i]) => {
      const token = document.querySelector('meta[name="ai-host-token"]')?.getAttribute('content') ?? '';
      const session = sessionStorage.getItem('ai-host-session') ?? '';
      const r = await fetch(`/api/call/${o as string}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-ai-token': token, 'x-ai-session': session },
        body: JSON.stringify(i),
      });
      return r.json();
    },
    [op, input] as const,
  );
}
