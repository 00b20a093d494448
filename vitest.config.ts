import { defineConfig } from 'vitest/config';

// Two projects: the server suite (real PostgreSQL started once by the global setup) and the web app's component
// tests (happy-dom), so `npm test` runs both.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './tests/support/summaryReporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'server',
          include: ['**/*.test.ts'],
          exclude: ['node_modules/**', '.eider/**', '.test-data/**', 'ui/**'],
          globalSetup: ['tests/support/globalSetup.ts'],
        },
      },
      'ui/vitest.config.ts',
    ],
  },
});
