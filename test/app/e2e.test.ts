/**
 * End to end: the real server process (npm start's entry), HMAC-signed webhooks over HTTP, and a local fake
 * GitHub on 127.0.0.1 that validates every request against GitHub's API description.
 */
import { describe, expect, it } from 'vitest';
import { SECRET, sendWebhook, waitFor, useAppServer } from '../support/server.js';
import { FULL, pullScenario } from './scenario.js';

const server = useAppServer();

describe('the App server', () => {
  it('checks a pull request from a signed webhook: check run, annotations, review suggestion', async () => {
    const { fake, app } = server;
    const scenario = pullScenario(fake, { head: { 'requirements.txt': '--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121\ntorchvision==0.17.0+cu121\n' }, changed: ['requirements.txt'] });
    const response = await sendWebhook(app.port, 'pull_request', scenario.payload, 'e2e-1');
    expect(response.status).toBeLessThan(300);
    const run = await waitFor(() => fake.checkRuns.find((candidate) => candidate.head_sha === scenario.headSha), 20_000, app.output);
    expect(run).toMatchObject({ name: 'CUDA gatekeeper', status: 'completed', conclusion: 'failure' });
    expect(run.annotations).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'requirements.txt', title: 'companion-mismatch' })]));
    await waitFor(() => (fake.pull(FULL, 7)!.reviews.length ? true : undefined), 20_000, app.output);
    expect(fake.pull(FULL, 7)!.reviews[0]!.comments[0]!.body).toContain('```suggestion');
    expect(fake.violations).toEqual([]);
    expect(app.output()).not.toContain('BEGIN PRIVATE KEY');
    expect(app.output()).not.toContain(SECRET);
  }, 30_000);

  it('rejects a webhook with a wrong signature and runs nothing', async () => {
    const { fake, app } = server;
    const before = fake.requests.length;
    const scenario = pullScenario(fake, { head: { 'requirements.txt': 'torch==2.3.0\n' }, changed: ['requirements.txt'], number: 8 });
    const response = await sendWebhook(app.port, 'pull_request', scenario.payload, 'e2e-2', 'wrong-secret');
    expect(response.status).toBeGreaterThanOrEqual(400);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.requests.length).toBe(before);
  });
});
