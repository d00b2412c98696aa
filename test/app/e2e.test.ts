/**
 * End to end: the real server process (npm start's entry), HMAC-signed webhooks over HTTP, and a local fake
 * GitHub on 127.0.0.1 that validates every request against GitHub's API description.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeGitHub } from '../support/fake-github.js';
import { privateKey } from '../support/probot.js';
import { FULL, pullScenario } from './scenario.js';

const SECRET = 'e2e-webhook-secret';
const ROOT = join(import.meta.dirname, '..', '..');
let fake: FakeGitHub;
let github: Server;
let app: ChildProcess;
let port: number;
let output = '';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return free;
}

async function waitFor<T>(probe: () => T | undefined, ms = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() - started > ms) throw new Error(`timed out; app output:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function send(name: string, payload: unknown, secret = SECRET): Promise<Response> {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return fetch(`http://127.0.0.1:${port}/api/github/webhooks`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-github-event': name, 'x-github-delivery': `e2e-${Math.random()}`, 'x-hub-signature-256': signature } });
}

beforeAll(async () => {
  fake = new FakeGitHub();
  const listening = await fake.listen();
  github = listening.server;
  port = await freePort();
  app = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, APP_ID: '1', PRIVATE_KEY: privateKey(), WEBHOOK_SECRET: SECRET, PORT: String(port), HOST: '127.0.0.1', GHE_HOST: `127.0.0.1:${listening.port}`, GHE_PROTOCOL: 'http', NODE_ENV: 'production', LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  app.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  app.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(() => (/Listening on|listening/i.test(output) ? true : undefined));
}, 30_000);

afterAll(async () => {
  app?.kill('SIGTERM');
  await new Promise((resolve) => github?.close(resolve));
});

describe('the App server', () => {
  it('checks a pull request from a signed webhook: check run, annotations, review suggestion', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': '--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121\ntorchvision==0.17.0+cu121\n' }, changed: ['requirements.txt'] });
    const response = await send('pull_request', scenario.payload);
    expect(response.status).toBeLessThan(300);
    const run = await waitFor(() => fake.checkRuns.find((candidate) => candidate.head_sha === scenario.headSha));
    expect(run).toMatchObject({ name: 'CUDA gatekeeper', status: 'completed', conclusion: 'failure' });
    expect(run.annotations).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'requirements.txt', title: 'companion-mismatch' })]));
    await waitFor(() => (fake.pull(FULL, 7)!.reviews.length ? true : undefined));
    expect(fake.pull(FULL, 7)!.reviews[0]!.comments[0]!.body).toContain('```suggestion');
    expect(fake.violations).toEqual([]);
    expect(output).not.toContain('BEGIN PRIVATE KEY');
    expect(output).not.toContain(SECRET);
  }, 30_000);

  it('rejects a webhook with a wrong signature and runs nothing', async () => {
    const before = fake.requests.length;
    const scenario = pullScenario(fake, { head: { 'requirements.txt': 'torch==2.3.0\n' }, changed: ['requirements.txt'], number: 8 });
    const response = await send('pull_request', scenario.payload, 'wrong-secret');
    expect(response.status).toBeGreaterThanOrEqual(400);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fake.requests.length).toBe(before);
  });
});
