import { defineConfig } from 'vitest/config';

/**
 * Two projects. `unit` (`npm test`): the engine, rules, parsers, CLI and the App against the fake GitHub; it needs
 * nothing but Node. `system` (`npm run test:system`): what needs a browser, a Redis server, pre-commit, a fresh
 * clone or many thousands of generated cases (the fuzz suites at their default sample). CI runs both
 * (`npm run test:all`).
 */
const SYSTEM = [
  'test/browser.test.ts', // Chromium
  'test/pre-commit.test.ts', // pre-commit
  'test/app/redis.test.ts', // redis-server
  'test/app/path-index-redis.test.ts',
  'test/app/load.test.ts', // the server process, redis-server, 1,000 deliveries
  'test/app/start.test.ts', // npm start from a fresh clone
  'test/boundaries.test.ts', // ESLint over probe files
  'test/fuzz.test.ts',
  'test/mapped.test.ts',
  'test/dockerfile-scan.test.ts',
  'test/conda-scan.test.ts',
  'test/paths.test.ts',
  'test/lock-scan.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    pool: 'threads',
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: SYSTEM } },
      { extends: true, test: { name: 'system', include: SYSTEM } },
    ],
  },
});
