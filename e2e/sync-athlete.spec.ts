/**
 * An athlete enrolling their own device, against the real HQ (sync/hq.ts as a child process with
 * its own Postgres): on the Sync page an athlete may enrol with their own email only (another
 * account's email is refused before anything reaches HQ), and a device enrolled by an athlete
 * (`npm run cli -- enrol` on a new file, then `sync`) holds that athlete's account and rows only:
 * the sync pass receives one account and one athlete, and the app opened on it offers that one
 * account at sign-in and lists that one athlete. (e2e is black-box: it reads the device through
 * the CLI's report and the app, never its SQLite file.)
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { DEMO_PIN, launchBrowser, newPage, screenshot, startApp } from './fixtures/app';
import type { RunningHq } from './fixtures/hq';
import { havePostgres, startHq } from './fixtures/hq';
import { SignInPage, contractCall, goTo } from './pages/app';
import { EMAIL, signedIn } from './pages/forms';

const run = promisify(execFile);
let hq: RunningHq;
let browser: Browser;
const apps: RunningApp[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  if (!havePostgres) return;
  hq = await startHq();
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  for (const a of apps) await a.stop();
  await hq?.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

describe.skipIf(!havePostgres)("an athlete's own device", () => {
  it('on the Sync page an athlete enrols with their own email only', async () => {
    const app = await startApp();
    apps.push(app);
    const page = await signedIn(browser, app, 'athlete');
    await goTo(page, '#/sync', 'sync');
    const enrolForm = page.locator('form[data-form="sync-enrol"]');
    await enrolForm.waitFor();
    expect(await enrolForm.locator('input[name="email"]').inputValue()).toBe(EMAIL('athlete'));
    await enrolForm.locator('input[name="hqUrl"]').fill(hq.url);
    // Another account's email: refused here (the device would hold that account's records).
    await enrolForm.locator('input[name="email"]').fill(EMAIL('physio'));
    await enrolForm.locator('input[name="pin"]').fill(DEMO_PIN);
    await enrolForm.locator('input[name="code"]').fill('AAAA-BBBB-CCCC'); // never reaches HQ
    await enrolForm.locator('[data-action="enrol"]').click();
    await page.locator('.error-note[data-error-code="Forbidden"]', { hasText: 'own email only' }).waitFor({ timeout: 30_000 });
    expect((await contractCall<{ enrolled: boolean }>(page, 'sync.status', {})).value!.enrolled).toBe(false);
    // Their own: enrolled.
    await enrolForm.locator('input[name="email"]').fill(EMAIL('athlete'));
    await enrolForm.locator('input[name="pin"]').fill(DEMO_PIN);
    await enrolForm.locator('input[name="code"]').fill(await hq.enrolmentCode(EMAIL('athlete')));
    await enrolForm.locator('[data-action="enrol"]').click();
    await page.locator('a.sync-indicator[data-sync-indicator="online"]').waitFor({ timeout: 60_000 });
    const status = await contractCall<{ enrolled: boolean; device_id: string }>(page, 'sync.status', {});
    expect(status.value).toMatchObject({ enrolled: true, device_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(await page.content()).not.toContain('aihq_');
    await screenshot(page, 'sync-athlete-01-enrolled');
    await page.context().close();
  });

  it("a device an athlete enrolled holds that athlete's account and rows only", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ai-e2e-athlete-'));
    dirs.push(dir);
    const file = join(dir, 'athlete.sqlite');
    const tsx = resolve('node_modules/.bin/tsx');
    const code = await hq.enrolmentCode(EMAIL('athlete'));
    await run(
      tsx,
      ['main/cli/index.ts', 'enrol', '--db', file, '--hq', hq.url, '--as', EMAIL('athlete'), '--pin', DEMO_PIN, '--code', code, '--name', 'Athlete phone E2E'],
      { timeout: 120_000 },
    );
    const synced = await run(tsx, ['main/cli/index.ts', 'sync', '--db', file], { timeout: 180_000 });
    // What arrived (the pass's report): the athlete's own user and athlete row; tables without an
    // athlete column, and clinical tables the athlete role does not read, are never requested.
    const report = JSON.parse(synced.stdout) as { pulled: Record<string, number>; forbidden: string[] };
    expect(report.pulled.app_user).toBe(1);
    expect(report.pulled.athlete).toBe(1);
    for (const t of ['injury', 'rtp_entry', 'squad', 'rate_item', 'training_session']) {
      expect(report.forbidden, t).toContain(t);
      expect(report.pulled[t] ?? 0, t).toBe(0);
    }

    // The app opened on that file: one account to sign in with, one athlete.
    const app = await startApp({ args: ['--db', file] });
    apps.push(app);
    const { page } = await newPage(browser);
    const s = new SignInPage(page);
    await s.open(app.url);
    expect(await page.locator('label.user-option').count()).toBe(1);
    await s.signIn(EMAIL('athlete'));
    await page.locator('a.sync-indicator').waitFor({ timeout: 30_000 });
    const me = await contractCall<{ linked_athlete_id: string }>(page, 'session.me', {});
    const list = await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 50 } });
    expect(list.value!.athletes.map((a) => a.id)).toEqual([me.value!.linked_athlete_id]);
    expect((await contractCall<{ enrolled: boolean }>(page, 'sync.status', {})).value!.enrolled).toBe(true);
    await screenshot(page, 'sync-athlete-02-own-device');
    await page.context().close();
  });
});
