import { defineConfig } from 'vitest/config';

/**
 * End-to-end specs (`npm run e2e`): the built renderer in headless Debian Chromium driven by
 * playwright-core, against the web host on a temporary seeded database. Separate from the unit
 * suite (vitest.config.ts) so `npm test` never starts a browser.
 */
export default defineConfig({
  test: {
    include: ['e2e/**/*.spec.ts'],
    globalSetup: ['e2e/fixtures/global-setup.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
