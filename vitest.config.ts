import { defineConfig } from 'vitest/config';

// Two projects: the server suite (real PostgreSQL started once by the global setup) and the web app's component
// tests (happy-dom), so `npm test` runs both.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll's own default (1 s) is shorter than a browser or an agent may take on a loaded 2-core CI machine;
    // a poll that is given its own timeout keeps it.
    expect: { poll: { timeout: 10_000 } },
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
