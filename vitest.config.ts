import { defineConfig } from 'vitest/config';

/** Unit and integration tests sit beside the code (`*.test.ts`); e2e specs run separately. */
export default defineConfig({
  test: {
    include: [
      'models/**/*.test.ts',
      'scripts/**/*.test.ts',
      'main/**/*.test.ts',
      'sync/**/*.test.ts',
      'native/**/*.test.ts',
      'renderer/**/*.test.ts',
      'preload/**/*.test.ts',
    ],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
