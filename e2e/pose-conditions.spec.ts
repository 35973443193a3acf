/**
 * Pose metrics tab in Chromium: a condition every reading of a session carries (here the
 * camera timing corrected, and the view differs from the declared layout) is said once above the
 * session's table, not on each of its 40 rows; a condition of one reading stays on that row; and
 * "View differs from declared layout" next to "Trustworthy" always comes with the explanation.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningApp } from './fixtures/app';
import { launchBrowser, screenshot, startApp } from './fixtures/app';
import { contractCall, goTo } from './pages/app';
import { signedIn } from './pages/forms';

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

const SHARED = { code: 'camera_offset_corrected', detail: 'camera 2 ran 3 frames behind; its timing was corrected before triangulation' };
const COVERAGE = { code: 'low_coverage', detail: 'only 62 % of frames had a valid reading (trustworthy needs 80 %)' };

function reading(i: number, extra: Record<string, unknown> = {}) {
  return {
    joint: ['knee_flexion', 'hip_flexion', 'knee_frontal_projection_angle', 'hip_abduction', 'trunk_lateral_lean'][i % 5],
    side: i % 2 ? 'left' : 'right',
    statistic: ['peak', 'min', 'range', 'mean'][Math.floor(i / 10) % 4],
    value_deg: 40 + i,
    omitted_reason: null,
    camera_count: 4,
    camera_mode: '4 calibrated cameras',
    view_obliquity_deg: 10,
    obliquity_band: 'sagittal',
    view_matches_declared: false,
    coverage: 0.95,
    trustworthy: true,
    sagittal_ratio: 0.8,
    frames: 300,
    conditions: [SHARED],
    ...extra,
  };
}

describe('pose tab conditions', () => {
  it('says a session-wide condition once, keeps a one-reading condition on its row, and explains declared vs trustworthy', async () => {
    const page = await signedIn(browser, app, 'physio');
    const a = (await contractCall<{ athletes: { id: string }[] }>(page, 'verb.call', { verb: 'athletes.list', input: { limit: 1 } })).value!.athletes[0]!;
    const metrics = Array.from({ length: 40 }, (_, i) =>
      i === 7 ? reading(i, { coverage: 0.62, trustworthy: false, conditions: [SHARED, COVERAGE] }) : reading(i),
    );
    const r = await contractCall(page, 'verb.call', {
      verb: 'capture.recordSession',
      input: {
        athlete_id: a.id,
        recorded_at: new Date(Date.now() - 3600_000).toISOString(),
        trial_name: 'Drop jump',
        fps: 30,
        frame_count: 300,
        camera_count: 4,
        source: 'video',
        metrics,
      },
    });
    expect(r.error).toBeUndefined();
    await goTo(page, `#/athletes/${a.id}/pose`, 'athlete-pose');
    const session = page.locator('section[data-capture]', { hasText: 'Drop jump' });
    expect(await session.locator('tbody tr').count()).toBe(40);
    // Once per session …
    expect(await session.locator('[data-session-condition="camera_offset_corrected"]').count()).toBe(1);
    expect(await session.locator('[data-session-condition="camera_offset_corrected"]').textContent()).toContain('camera 2 ran 3 frames behind');
    expect(await session.locator('tbody [data-condition="camera_offset_corrected"]').count()).toBe(0);
    expect(await session.getByText('View differs from declared layout').count()).toBe(1);
    // … with the explanation, since the readings are trustworthy.
    expect(await session.locator('[data-session-condition="view_differs_from_declared"]').textContent()).toMatch(/Trustworthy is judged from the view/);
    // A condition of one reading stays on that row.
    expect(await session.locator('tbody [data-condition="low_coverage"]').count()).toBe(1);
    expect(await session.locator('.reading-conditions li').count()).toBe(1);
    await screenshot(page, 'pose-01-conditions-once');
    await page.context().close();
  });
});
