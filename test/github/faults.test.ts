/**
 * Fault injection with the production Octokit (bounded retries and rate-limit handling ON): at each API step
 * the check run still ends completed with an explanation, retries are bounded and honour Retry-After, and no
 * duplicate check runs appear. The Octokit runs at a pace a hundred times GitHub's (10 ms between writes, a
 * Retry-After second of 10 ms), so the tests wait on the same limiter and retry logic without waiting real seconds.
 */
import type { Probot } from 'probot';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatekeeperOctokit, GITHUB_PACE, type Pace } from '../../src/github/octokit.js';
import { FakeGitHub } from '../support/fake-github.js';
import { setup, teardown, type LogLine } from '../support/probot.js';
import { pullScenario } from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

const REQUIREMENTS = codeBlock`
  --extra-index-url https://download.pytorch.org/whl/cu121
  torch==2.3.0+cu121
  torchvision==0.17.0+cu121
`;
const PACE: Pace = {
  writeMs: GITHUB_PACE.writeMs / 100,
  notificationMs: GITHUB_PACE.notificationMs / 100,
  secondMs: GITHUB_PACE.secondMs / 100,
};
let fake: FakeGitHub;
let probot: Probot;
let logs: LogLine[];
const warnings = () => logs.filter((line) => line.level >= 40).map((line) => line.msg);

beforeEach(() => {
  fake = new FakeGitHub();
  ({ probot, logs } = setup(fake, {
    Octokit: gatekeeperOctokit(PACE),
  }));
});

afterEach(() => {
  expect(fake.violations).toEqual([]);
  teardown();
});

async function run(): Promise<void> {
  const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
  await probot.receive({ id: 'f', name: 'pull_request', payload: scenario.payload } as never);
}

const STEPS = [
  ['the file list', 'GET', /\/pulls\/7\/files$/],
  ['the GraphQL read', 'POST', /^\/graphql$/],
  ['the check-run create', 'POST', /\/check-runs$/],
] as const;

describe.each(STEPS)('faults at %s', (_step, method, path) => {
  it.each([500, 502, 503])('%i is retried (at most twice) and then succeeds', async (status) => {
    fake.fail({ method, path, status, times: 2 });
    await run();
    expect(fake.checkRuns).toEqual([
      expect.objectContaining({
        status: 'completed',
        conclusion: 'failure',
        output: expect.objectContaining({ title: '1 error' }),
      }),
    ]);
  });

  it('a persistent 503 fails after bounded retries and the check explains it', async () => {
    fake.fail({ method, path, status: 503, times: 3 });
    await run();
    const attempts = fake.requests.filter((request) => request.method === method && path.test(request.path)).length;
    expect(attempts).toBeLessThanOrEqual(3 + (method === 'POST' && String(path).includes('check-runs') ? 1 : 0));
    if (String(path).includes('check-runs')) {
      expect(fake.checkRuns.length).toBeLessThanOrEqual(1);
    } else {
      expect(fake.checkRuns).toEqual([
        expect.objectContaining({
          conclusion: 'failure',
          output: expect.objectContaining({
            title: 'cuda-gatekeeper could not check this pull request',
            summary: expect.stringContaining('503'),
          }),
        }),
      ]);
    }
  });

  it('a connection reset is retried', async () => {
    fake.fail({ method, path, status: 0, times: 1 });
    await run();
    expect(fake.checkRuns).toEqual([
      expect.objectContaining({ status: 'completed', output: expect.objectContaining({ title: '1 error' }) }),
    ]);
  });
});

describe('rate limits', () => {
  it('a secondary rate limit with Retry-After: 1 is retried after waiting, and the check completes', async () => {
    fake.fail({
      method: 'GET',
      path: /\/pulls\/7\/files$/,
      status: 403,
      body: { message: 'You have exceeded a secondary rate limit' },
      headers: { 'retry-after': '1' },
    });
    const started = performance.now();
    await run();
    // Retry-After: 1 is one second of the pace: the retry waited for it (a lower bound, which no machine's speed
    // can break).
    expect(performance.now() - started).toBeGreaterThanOrEqual(PACE.secondMs);
    expect(fake.checkRuns).toEqual([
      expect.objectContaining({ output: expect.objectContaining({ title: '1 error' }) }),
    ]);
    expect(warnings().some((message) => /rate limited on GET .*retrying in 1 s/.test(message))).toBe(true);
  });

  it('a primary rate limit that resets in an hour is not waited for: the check completes with the reason', async () => {
    fake.fail({
      method: 'GET',
      path: /\/pulls\/7\/files$/,
      status: 403,
      body: { message: 'API rate limit exceeded' },
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600) },
    });
    await run();
    expect(fake.checkRuns).toEqual([
      expect.objectContaining({
        conclusion: 'failure',
        output: expect.objectContaining({ summary: expect.stringMatching(/rate limit/) }),
      }),
    ]);
    expect(warnings().some((message) => /giving up \(asked to wait 3\d{3} s/.test(message))).toBe(true);
  });

  it('422 on the review does not lose the check run', async () => {
    fake.fail({ method: 'POST', path: /\/reviews$/, status: 422, body: { message: 'Validation Failed' } });
    await run();
    expect(fake.checkRuns).toHaveLength(1);
    expect(fake.checkRuns[0]!.conclusion).toBe('failure');
  });

  it('404 for a branch deleted mid-run completes the check with an explanation', async () => {
    fake.fail({ method: 'POST', path: /^\/graphql$/, status: 404 });
    await run();
    expect(fake.checkRuns).toEqual([expect.objectContaining({ status: 'completed' })]);
    expect(fake.checkRuns[0]!.output?.summary).toMatch(/404.*deleted/);
  });
});

describe('the durable queue pauses on GitHub rate limits', async () => {
  const { rateLimitWaitMs } = await import('../../src/github/durable.js');
  it.each([
    [{ status: 403, response: { headers: { 'retry-after': '30' } } }, 30_000],
    [{ status: 429, response: { headers: { 'retry-after': '2' } } }, 2_000],
    [{ status: 403, response: { headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1060' } } }, 60_000],
    [{ status: 403, response: { headers: {} } }, undefined],
    [{ status: 500, response: { headers: { 'retry-after': '5' } } }, undefined],
  ])('%o → wait %s ms', (error, wait) => {
    expect(rateLimitWaitMs(error, 1_000_000)).toBe(wait);
  });
});
