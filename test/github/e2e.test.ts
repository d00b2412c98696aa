/**
 * End to end: the real server process (npm start's entry), HMAC-signed webhooks over HTTP, and a local fake
 * GitHub on 127.0.0.1 that validates every request against GitHub's API description.
 */
import { describe, expect, it } from 'vitest';
import { SECRET, sendWebhook, waitFor, useAppServer } from '../support/server.js';
import { checkRunPayload, FULL, OWNER, pullScenario, type Scenario } from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

const server = useAppServer();

describe('the App server', () => {
  it('checks a pull request from a signed webhook: check run, annotations, review suggestion', async () => {
    const { fake, app } = server;
    const scenario = pullScenario(fake, {
      head: {
        'requirements.txt': codeBlock`
          --extra-index-url https://download.pytorch.org/whl/cu121
          torch==2.3.0+cu121
          torchvision==0.17.0+cu121
        `,
      },
      changed: ['requirements.txt'],
    });
    const response = await sendWebhook(app.port, 'pull_request', scenario.payload, 'e2e-1');
    expect(response.status).toBeLessThan(300);
    const run = await waitFor(
      () => fake.checkRuns.find((candidate) => candidate.head_sha === scenario.headSha),
      20_000,
      app.output,
    );
    expect(run).toMatchObject({ name: 'CUDA gatekeeper', status: 'completed', conclusion: 'failure' });
    expect(run.annotations).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'requirements.txt', title: 'companion-mismatch' })]),
    );
    await waitFor(() => (fake.pull(FULL, 7)!.reviews.length ? true : undefined), 20_000, app.output);
    expect(fake.pull(FULL, 7)!.reviews[0]!.comments[0]!.body).toContain('```suggestion');
    expect(fake.violations).toEqual([]);
    expect(app.output()).not.toContain('BEGIN PRIVATE KEY');
    expect(app.output()).not.toContain(SECRET);
  }, 30_000);

  it('rejects a webhook with a wrong signature and runs nothing', async () => {
    const { fake, app } = server;
    const before = fake.requests.length;
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': 'torch==2.3.0\n' },
      changed: ['requirements.txt'],
      number: 8,
    });
    const response = await sendWebhook(app.port, 'pull_request', scenario.payload, 'e2e-2', 'wrong-secret');
    expect(response.status).toBeGreaterThanOrEqual(400);
    // A rightly signed delivery after it: once its check run is there, anything the refused one started would be
    // too (deliveries are handled in the order they arrive).
    const after = pullScenario(fake, {
      head: { 'requirements.txt': 'torch==2.3.0\n' },
      changed: ['requirements.txt'],
      number: 9,
    });
    await sendWebhook(app.port, 'pull_request', after.payload, 'e2e-2-after');
    await waitFor(() => fake.checkRuns.find((run) => run.head_sha === after.headSha && run.status === 'completed'));
    expect(
      fake.requests
        .slice(before)
        .filter((request) => !/\/pulls\/9\b|\/check-runs|graphql|access_tokens/.test(request.path)),
    ).toEqual([]);
    expect(fake.checkRuns.filter((run) => run.head_sha === scenario.headSha)).toEqual([]);
  });
});

/** The user stories of issue 13 against the real server process: signed webhooks in, check runs out. */
describe('the App server on real GitHub answers', () => {
  const FIVE = codeBlock`
    --index-url https://download.pytorch.org/whl/cu124
    torch==2.5.1+cu124
    torchvision==0.17.0+cu118
    torchaudio==2.1.0
  `;
  let delivery = 0;
  const send = (name: string, payload: unknown) => sendWebhook(server.app.port, name, payload, `story-${++delivery}`);
  const runs = (scenario: Scenario, count: number) =>
    waitFor(
      () => {
        const found = server.fake.runsOn(scenario.headSha);
        return found.length >= count ? found : undefined;
      },
      20_000,
      server.app.output,
    );

  it('an organisation without a .github repository: the normal check, annotated on the right lines', async () => {
    const scenario = pullScenario(server.fake, {
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
      number: 21,
    });
    expect((await send('pull_request', scenario.payload)).status).toBeLessThan(300);
    const [run] = await runs(scenario, 1);
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run!.annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'requirements.txt', start_line: 3, title: 'companion-mismatch' }),
      ]),
    );
    expect(server.fake.violations).toEqual([]);
  }, 30_000);

  it('a repository owned by a user account', async () => {
    const scenario = pullScenario(server.fake, {
      repo: 'octocat/trainer',
      user: true,
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
      number: 22,
    });
    await send('pull_request', scenario.payload);
    const [run] = await runs(scenario, 1);
    expect(run!.conclusion).toBe('failure');
    expect(run!.output?.title).not.toContain('could not check');
  }, 30_000);

  it('a fork: no Apply fixes button, and Re-run works though GitHub lists no pull request', async () => {
    const scenario = pullScenario(server.fake, {
      fork: 'someone/trainer',
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
      number: 23,
    });
    await send('pull_request', scenario.payload);
    const [first] = await runs(scenario, 1);
    expect(first!.actions).toBeUndefined();
    expect(first!.output?.summary).toContain('comes from the fork `someone/trainer`');
    await send('check_run', checkRunPayload(server.fake, scenario, first!, 'rerequested'));
    const both = await runs(scenario, 2);
    expect(both[1]!.annotations).toEqual(first!.annotations);
  }, 30_000);

  it('re-run three times: every run shows each annotation once', async () => {
    const scenario = pullScenario(server.fake, {
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
      number: 24,
    });
    await send('pull_request', scenario.payload);
    const [first] = await runs(scenario, 1);
    for (let i = 2; i <= 4; i++) {
      await send(
        'check_run',
        checkRunPayload(server.fake, scenario, server.fake.runsOn(scenario.headSha).at(-1)!, 'rerequested'),
      );
      await runs(scenario, i);
    }
    for (const run of server.fake.runsOn(scenario.headSha)) expect(run.annotations).toEqual(first!.annotations);
  }, 60_000);

  it('a config pull request: the preview, and the preview again on Re-run', async () => {
    server.fake.addRepo(`${OWNER}/.github`, {
      'cuda-gatekeeper.yml': codeBlock`
        cuda:
          allowed: ["12.1", "12.4"]
      `,
    });
    server.fake.addRepo(`${OWNER}/legacy`, {
      'requirements.txt': codeBlock`
        --index-url https://download.pytorch.org/whl/cu121
        torch==2.3.0+cu121
      `,
    });
    const scenario = pullScenario(server.fake, {
      repo: `${OWNER}/.github`,
      head: {
        'cuda-gatekeeper.yml': codeBlock`
          cuda:
            allowed: ["12.4"]
        `,
      },
      changed: ['cuda-gatekeeper.yml'],
      number: 25,
    });
    await send('pull_request', scenario.payload);
    const [preview] = await runs(scenario, 1);
    expect(preview!.output?.title).toMatch(/^Would newly fail/);
    await send('check_run', checkRunPayload(server.fake, scenario, preview!, 'rerequested'));
    const again = await runs(scenario, 2);
    expect(again[1]!.output?.title).toBe(preview!.output?.title);
    expect(server.fake.checkRuns.every((run) => run.status === 'completed')).toBe(true);
  }, 60_000);
});
