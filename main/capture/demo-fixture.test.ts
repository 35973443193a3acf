/**
 * The demo club's capture fixture is what the pipeline makes of the demo trial today: regenerating
 * it gives the committed file byte for byte (so no number in it is hand-written or stale).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildDemoFixture, DEMO_FIXTURE_PATH } from './demo-fixture';
import { hasDemo, NO_DEMO } from './testing/paths';

// Skips where the shared data is absent, except in CI, where it must be there.
describe.skipIf(!hasDemo && process.env.CI !== 'true')(`demo capture fixture${hasDemo ? '' : ` (${NO_DEMO})`}`, () => {
  it('equals a fresh run of the pipeline on the demo trial (npm run capture:demo-fixture)', async () => {
    expect(await buildDemoFixture()).toBe(readFileSync(DEMO_FIXTURE_PATH, 'utf8'));
  }, 60_000);
});
