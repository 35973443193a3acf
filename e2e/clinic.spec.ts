/**
 * The clinic UI end to end: the built renderer in headless Chromium against the web host on a
 * fresh demo database. Each main page is screenshotted into artifacts/screenshots/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, newPage, screenshot, startApp } from './fixtures/app';
import { AthletesPage, SignInPage, contractCall, goTo, waitForPage } from './pages/app';

const EMAIL = (role: string) => `${role}@kestrelvale.test`;

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

async function signedIn(role: string): Promise<Page> {
  const { page } = await newPage(browser);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  (page as Page & { __errors?: string[] }).__errors = errors;
  const signIn = new SignInPage(page);
  await signIn.open(app.url);
  await signIn.signIn(EMAIL(role));
  return page;
}

function pageErrors(page: Page): string[] {
  return (page as Page & { __errors?: string[] }).__errors ?? [];
}

describe('clinic UI in Chromium', () => {
  it('shows the sign-in picker with every demo user and refuses a wrong PIN', async () => {
    const { page, context } = await newPage(browser);
    const s = new SignInPage(page);
    await s.open(app.url);
    expect(await page.locator('label.user-option').count()).toBeGreaterThanOrEqual(10);
    await screenshot(page, '01-sign-in');
    await page.locator(`label.user-option[data-email="${EMAIL('physio')}"] input`).check();
    await page.locator('#pin').fill('0000');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.pin-box [role="alert"][data-error-code="Unauthenticated"]');
    await context.close();
  });

  it('a physio browses athletes, an athlete record with every tab, squads, fees and activity', async () => {
    const page = await signedIn('physio');
    await waitForPage(page, 'athletes');
    const list = new AthletesPage(page);
    expect(await list.count()).toMatch(/^\d+ of \d+ athletes$/);
    await screenshot(page, '02-athletes');

    // Pick an athlete with an injury that has RTP entries, and give them a capture for the pose tab.
    const rtp = await contractCall<{ rtp_entries: { athlete_id: string; physio_signoff_by: string | null; doctor_signoff_by: string | null }[] }>(
      page,
      'verb.call',
      { verb: 'rtp.list', input: { limit: 200 } },
    );
    expect(rtp.ok).toBe(true);
    const entry = rtp.value!.rtp_entries.find((r) => r.doctor_signoff_by) ?? rtp.value!.rtp_entries[0]!;
    const athlete = await contractCall<{ name: string; id: string }>(page, 'verb.call', { verb: 'athletes.get', input: { id: entry.athlete_id } });
    const name = athlete.value!.name;
    const capture = await contractCall(page, 'verb.call', {
      verb: 'capture.recordSession',
      input: captureFor(entry.athlete_id),
      idempotency_key: 'e2e-capture-0001',
    });
    expect(capture.ok).toBe(true);

    await list.openAthlete(name);
    expect(await page.locator('h1').textContent()).toBe(name);
    await screenshot(page, '03-athlete-overview');

    await goTo(page, `#/athletes/${entry.athlete_id}/injuries`, 'athlete-injuries');
    expect(await page.locator('td[data-signoff] .badge').count()).toBeGreaterThan(0);
    expect(await page.locator('td.signed .signer').count()).toBeGreaterThan(0);
    await screenshot(page, '04-athlete-injuries-rtp');

    await goTo(page, `#/athletes/${entry.athlete_id}/screenings`, 'athlete-screenings');
    await screenshot(page, '05-athlete-screenings');
    await goTo(page, `#/athletes/${entry.athlete_id}/wellness`, 'athlete-wellness');
    expect(await page.locator('figure.chart').count()).toBeGreaterThanOrEqual(1);
    await screenshot(page, '06-athlete-wellness');
    await goTo(page, `#/athletes/${entry.athlete_id}/workload`, 'athlete-workload');
    expect(await page.locator('[data-acwr]').count()).toBe(2);
    // The coverage of both windows sits next to each ratio (issue 9 item 10).
    for (const text of await page.locator('[data-testid="acwr-coverage"]').allTextContents())
      expect(text).toMatch(/^[0-7]\/7 acute, ([0-9]|1[0-9]|2[0-8])\/28 chronic days with data$/);
    expect(await page.locator('[data-testid="acwr-coverage"]').count()).toBe(2);
    await screenshot(page, '07-athlete-workload-acwr');
    await goTo(page, `#/athletes/${entry.athlete_id}/pose`, 'athlete-pose');
    expect(await page.locator('tr[data-omitted="true"]').count()).toBe(2);
    expect(await page.locator('tr[data-metric="knee_flexion-left-peak"]').textContent()).toMatch(
      /112\.4°.*3 cameras · 3 calibrated cameras.*Sagittal \(12°\).*96%.*Trustworthy/,
    );
    await screenshot(page, '08-athlete-pose');

    await goTo(page, '#/squads', 'squads');
    expect(await page.locator('tr[data-squad="U19"]').count()).toBe(1);
    await screenshot(page, '09-squads');
    await goTo(page, '#/fees', 'fees');
    await screenshot(page, '10-fees');
    await goTo(page, '#/activity', 'activity');
    expect(await page.locator('tr[data-activity]').count()).toBeGreaterThan(0);
    await screenshot(page, '11-activity');
    await goTo(page, '#/help', 'help');
    await page.locator('input[type="search"]').fill('sign off return to play');
    await page.keyboard.press('Enter');
    await page.locator('section[data-covered="true"] li a').first().waitFor();
    await screenshot(page, '12-help');
    await page.locator('section[data-covered="true"] li a').first().click();
    await waitForPage(page, 'help-page');
    await screenshot(page, '12b-help-page');
    // A physio opens Settings for its Reports card only: none of the org's configuration.
    await goTo(page, '#/settings', 'settings');
    await page.locator('[data-section="reports"]').waitFor();
    expect(await page.locator('[data-section="users"], [data-section="devices"], #assistant-settings, form[data-form="sync-enrol"]').count()).toBe(0);
    expect(pageErrors(page)).toEqual([]);
    await page.context().close();
  });

  it('the athlete list is keyboard-usable: search, arrows, Enter', async () => {
    const page = await signedIn('coach');
    await waitForPage(page, 'athletes');
    await page.locator('select').selectOption({ label: 'U19' });
    const u19 = await page.locator('[data-testid="athlete-count"]').textContent();
    await page.locator('.vlist-scroller').focus();
    await page.keyboard.press('ArrowDown');
    const second = await page.locator('.vrow.active [data-athlete-name]').getAttribute('data-athlete-name');
    // ARIA: the listbox names the active option, which is rendered, selected and second in the set;
    // every option id on the page is unique.
    const aria = await page.evaluate(() => {
      const box = document.querySelector('.vlist-scroller[role="listbox"]')!;
      const active = document.getElementById(box.getAttribute('aria-activedescendant') ?? '');
      const ids = [...document.querySelectorAll('[role="option"]')].map((o) => o.id);
      return {
        role: active?.getAttribute('role'),
        selected: active?.getAttribute('aria-selected'),
        pos: active?.getAttribute('aria-posinset'),
        isActive: active?.classList.contains('active'),
        ids: ids.length,
        unique: new Set(ids).size,
      };
    });
    expect(aria).toMatchObject({ role: 'option', selected: 'true', pos: '2', isActive: true });
    expect(aria.unique).toBe(aria.ids);
    expect(aria.ids).toBeGreaterThan(2);
    await page.keyboard.press('End');
    const last = await page.locator('.vrow.active').getAttribute('aria-posinset');
    expect(last).toBe(await page.locator('.vrow.active').getAttribute('aria-setsize'));
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('.vrow.active [data-athlete-name]').getAttribute('data-athlete-name')).toBe(second);
    await page.keyboard.press('Enter');
    await waitForPage(page, 'athlete-overview');
    expect(await page.locator('h1').textContent()).toBe(second);
    expect(u19).toMatch(/^\d+ of/);
    await page.context().close();
  });

  it('a physio signs an RTP entry and sees their name as the signer', async () => {
    const page = await signedIn('physio');
    const rtp = await contractCall<{ rtp_entries: { id: string; athlete_id: string; physio_signoff_by: string | null }[] }>(page, 'verb.call', {
      verb: 'rtp.list',
      input: { limit: 200 },
    });
    const unsigned = rtp.value!.rtp_entries.find((r) => !r.physio_signoff_by);
    expect(unsigned).toBeDefined();
    await goTo(page, `#/athletes/${unsigned!.athlete_id}/injuries`, 'athlete-injuries');
    const cell = page.locator(`tr[data-rtp="${unsigned!.id}"] td[data-signoff="physio"]`);
    await cell.getByRole('button', { name: 'Sign as physio…' }).click();
    // One confirmation that says what will change, then the signature.
    await page.locator('dialog.review-dialog[open] [data-confirm]').click();
    await cell.locator('.signer').waitFor();
    const me = await contractCall<{ display_name: string }>(page, 'session.me', {});
    expect(await cell.locator('.signer').textContent()).toBe(me.value!.display_name);
    // The doctor's column offers no button to a physio.
    expect(await page.locator(`tr[data-rtp="${unsigned!.id}"] td[data-signoff="doctor"] button`).count()).toBe(0);
    await page.context().close();
  });

  it('an athlete user cannot reach injuries by navigation, by URL or through the API', async () => {
    const page = await signedIn('athlete');
    await waitForPage(page, 'athlete-overview');
    await screenshot(page, '13-athlete-user-home');
    const me = await contractCall<{ linked_athlete_id: string }>(page, 'session.me', {});
    const id = me.value!.linked_athlete_id;
    expect(await page.locator('nav.tabs a', { hasText: 'Injuries' }).count()).toBe(0);
    expect(await page.locator('a[data-nav="activity"]').count()).toBe(0);
    await goTo(page, `#/athletes/${id}/injuries`, 'athlete-injuries', 'denied');
    const api = await contractCall(page, 'verb.call', { verb: 'injuries.list', input: { athlete_id: id } });
    expect(api).toMatchObject({ ok: false, error: { code: 'Forbidden' } });
    // An athlete submits today's wellness questionnaire.
    await goTo(page, `#/athletes/${id}/wellness`, 'athlete-wellness');
    await page.locator('form[data-form="wellness"][data-stored]').waitFor();
    for (const scale of ['sleep', 'soreness', 'stress', 'mood', 'fatigue'])
      await page.locator(`.wellness-form [data-field="${scale}"] input[value="4"]`).check();
    await page.locator('.wellness-form button[type="submit"]').click();
    // Already submitted today (the demo data): the form asks before replacing.
    if ((await page.locator('form[data-form="wellness"]').getAttribute('data-stored')) === 'true')
      await page.locator('[data-replace-confirm] [data-action="replace"]').click();
    await page.locator('[data-saved="true"]').waitFor();
    await screenshot(page, '15-athlete-user-wellness');
    await page.context().close();
  });

  it('an owner sees settings: key status, budgets, tool switches and users', async () => {
    const page = await signedIn('owner');
    await goTo(page, '#/settings', 'settings');
    expect(await page.locator('[data-testid="key-status"]').textContent()).toMatch(/not configured/);
    expect(await page.locator('[data-tool-switch]').count()).toBeGreaterThan(40);
    expect(await page.locator('h2', { hasText: 'Users' }).count()).toBe(1);
    await screenshot(page, '14-settings');
    // Switch a tool off and see it persisted.
    await page.locator('[data-tool-switch="bulk_update_rates"] input').uncheck();
    await page.getByRole('button', { name: 'Save tool switches' }).click();
    await page.locator('.ok-note', { hasText: 'tool switches' }).waitFor();
    const s = await contractCall<{ tools: { name: string; disabled: boolean }[] }>(page, 'settings.assistant', {});
    expect(s.value!.tools.find((t) => t.name === 'bulk_update_rates')?.disabled).toBe(true);
    // Set the organisation's monthly assistant budget (settings.manage) and see it stored.
    await page.locator('[data-testid="budget-cap"]').fill('125.5');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await page.locator('.ok-note', { hasText: 'monthly budget' }).waitFor();
    const b = await contractCall<{ org: { cap_usd: number | null } }>(page, 'settings.assistant', {});
    expect(b.value!.org.cap_usd).toBe(125.5);
    // An amount out of range is refused with the field named, and the stored cap stays.
    await page.locator('[data-testid="budget-cap"]').fill('-3');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await page.locator('form[data-form="budget"][data-state="error"]').waitFor();
    expect(await page.locator('form[data-form="budget"] [data-field="budget_cap_usd"] .field-error').textContent()).toBe('Too small: at least 0.');
    expect(await page.locator('[data-error-code="Validation"] li').allTextContents()).toEqual(['Organisation monthly cap (USD): Too small: at least 0.']);
    await page.locator('form[data-form="budget"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'form-33-org-budget-validation');
    expect((await contractCall<{ org: { cap_usd: number | null } }>(page, 'settings.assistant', {})).value!.org.cap_usd).toBe(125.5);
    await page.context().close();
  });
});

/** A processed capture with trustworthy, untrustworthy and omitted readings. */
function captureFor(athleteId: string): Record<string, unknown> {
  const base = {
    camera_count: 3,
    camera_mode: '3 calibrated cameras',
    view_obliquity_deg: 12,
    obliquity_band: 'sagittal',
    view_matches_declared: true,
    coverage: 0.96,
    trustworthy: true,
    sagittal_ratio: 0.82,
    frames: 240,
    conditions: [] as { code: string; detail: string }[],
  };
  return {
    athlete_id: athleteId,
    recorded_at: new Date(Date.now() - 3600_000).toISOString(),
    trial_name: 'Overhead squat',
    fps: 30,
    frame_count: 240,
    camera_count: 3,
    source: 'video',
    metrics: [
      { ...base, joint: 'knee_flexion', side: 'left', statistic: 'peak', value_deg: 112.4, omitted_reason: null },
      { ...base, joint: 'knee_flexion', side: 'right', statistic: 'peak', value_deg: 109.8, omitted_reason: null, coverage: 0.93 },
      {
        ...base,
        joint: 'hip_flexion',
        side: 'left',
        statistic: 'peak',
        value_deg: null,
        omitted_reason: 'flexion_observability_gate',
        view_obliquity_deg: 71,
        obliquity_band: 'frontal',
        sagittal_ratio: 0.31,
        trustworthy: false,
      },
      {
        ...base,
        joint: 'ankle_dorsiflexion',
        side: 'left',
        statistic: 'peak',
        value_deg: null,
        omitted_reason: 'not_measurable_with_coco17',
        sagittal_ratio: null,
      },
      {
        ...base,
        joint: 'shoulder_flexion',
        side: 'right',
        statistic: 'range',
        value_deg: 88.1,
        omitted_reason: null,
        view_obliquity_deg: 34,
        obliquity_band: 'oblique',
        view_matches_declared: false,
        coverage: 0.62,
        trustworthy: false,
        conditions: [
          {
            code: 'low_coverage',
            detail: 'only 62 % of frames had a valid reading (trustworthy needs 80 %): keep the athlete in view of at least two cameras',
          },
          { code: 'camera_offset', detail: 'cameras out of step: cam_02 by 5 frames. Re-record with synchronised cameras, or process with --sync auto' },
        ],
      },
    ],
  };
}
