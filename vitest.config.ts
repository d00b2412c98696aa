import { defineConfig } from 'vitest/config';

/**
 * Two projects. `unit` (`npm test`): the engine, rules, parsers, CLI and the App against the fake GitHub; it needs
 * nothing but Node. `system` (`npm run test:system`): what needs a browser, a Redis server, pre-commit, a fresh
 * clone or many thousands of generated cases (the fuzz suites at their default sample). CI runs both
 * (`npm run test:all`).
 */
const SYSTEM = [
  'test/web/browser.test.ts', // Chromium
  'test/cli/pre-commit.test.ts', // pre-commit
  'test/github/redis.test.ts', // redis-server
  'test/github/path-index-redis.test.ts',
  'test/github/load.test.ts', // the server process, redis-server, 1,000 deliveries
  'test/github/flood.test.ts', // the server process, 1,000 deliveries
  'test/github/start.test.ts', // npm start from a fresh clone
  'test/boundaries.test.ts', // ESLint over probe files
  'test/fuzz.test.ts',
  'test/parsers/mapped.test.ts',
  'test/parsers/dockerfile-scan.test.ts',
  'test/parsers/conda-scan.test.ts',
  'test/analysis/paths.test.ts',
  'test/parsers/lock-scan.test.ts',
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
