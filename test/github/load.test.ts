/**
 * The server under load and under attack (issue 26), probed from outside: the real server process (`npm start`'s
 * entry) on loopback, a fake GitHub behind it, and a real `redis-server` where the durable queue is on.
 *
 * - A 202 is a promise: with Redis every accepted delivery is stored before the answer, so a restart checks them
 *   all; without, the backlog is bounded and the rest get 503; after SIGTERM new deliveries get 503, not a refused
 *   connection; exit 0 when the drain completes.
 * - Redis that keeps nothing on disk is said at start (or refused); its outages are one log line, not a stack trace
 *   per retry.
 * - Unverified bodies cannot make the server hold gigabytes.
 * - The public snippet API runs on its own thread and budget: a heavy request fails alone, and the server answers.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeGitHub } from '../support/fake-github.js';
import { privateKey } from '../support/probot.js';
import { freePort, SECRET, sendWebhook, startApp, waitFor, type RunningApp } from '../support/server.js';
import { pullScenario, type Scenario } from '../support/scenario.js';
import { startRedis, type RunningRedis } from '../support/redis.js';

const ROOT = join(import.meta.dirname, '..', '..');
const stops: (() => void)[] = [];
afterAll(() => {
  for (const stop of stops.reverse()) stop();
});

async function github(latencyMs = 0): Promise<{ fake: FakeGitHub; port: number }> {
  const fake = new FakeGitHub(false);
  const listening = await fake.listen(latencyMs);
  stops.push(() => listening.server.close());
  return { fake, port: listening.port };
}

async function app(githubPort: number, env: Record<string, string> = {}): Promise<RunningApp> {
  const running = await startApp(githubPort, env);
  stops.push(() => running.process.kill('SIGKILL'));
  return running;
}

async function redisServer(settings?: readonly string[]): Promise<RunningRedis> {
  const redis = await startRedis(settings);
  stops.push(redis.stop);
  return redis;
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
const completedOn = (fake: FakeGitHub, scenario: Scenario) =>
  fake.checkRuns.filter((run) => run.head_sha === scenario.headSha && run.status === 'completed');
const pulls = (fake: FakeGitHub, count: number, from: number) =>
  Array.from({ length: count }, (_, i) =>
    pullScenario(fake, {
      head: { [`svc${i}/requirements.txt`]: 'torch==2.3.0+cu121\n' },
      changed: [`svc${i}/requirements.txt`],
      number: from + i,
    }),
  );

describe('a 202 is a promise', () => {
  it('without Redis: past the backlog a delivery gets 503; every 202 ends in a check run; SIGTERM answers 503, then exits 0', async () => {
    const { fake, port } = await github(150); // a slow GitHub: the backlog fills
    const server = await app(port, { WEBHOOK_BACKLOG: '5', DRAIN_TIMEOUT_MS: '60000' });
    const scenarios = pulls(fake, 40, 1000);
    const answers = await Promise.all(
      scenarios.map((scenario, i) => sendWebhook(server.port, 'pull_request', scenario.payload, `burst-${i}`)),
    );
    const accepted = scenarios.filter((_, i) => answers[i]!.status === 202);
    const refused = answers.filter((answer) => answer.status === 503);
    expect(accepted.length).toBeGreaterThanOrEqual(5);
    expect(refused.length).toBeGreaterThan(0);
    expect(accepted.length + refused.length).toBe(40);
    const exited = exitOf(server.process);
    server.process.kill('SIGTERM');
    await waitFor(() => (/draining: no new work is taken/.test(server.output()) ? true : undefined));
    // Draining: still listening, and a new delivery is told to come back.
    const late = await sendWebhook(server.port, 'pull_request', scenarios[0]!.payload, 'late-1');
    expect(late.status).toBe(503);
    expect(await exited).toBe(0);
    for (const scenario of accepted) expect(completedOn(fake, scenario)).toHaveLength(1);
  }, 120_000);

  it('with Redis: every delivery answered 202 is stored first, and a restarted server checks them all', async () => {
    const redis = await redisServer(['--appendonly', 'yes']);
    const { fake, port } = await github(40);
    const first = await app(port, { REDIS_URL: redis.url, DRAIN_TIMEOUT_MS: '12000' });
    const scenarios = pulls(fake, 12, 2000);
    const answers = await Promise.all(
      scenarios.map((scenario, i) => sendWebhook(first.port, 'pull_request', scenario.payload, `durable-${i}`)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(scenarios.map(() => 202));
    // Probot throttles writes (1 s apart): most are still queued when SIGTERM comes.
    const exited = exitOf(first.process);
    first.process.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) console.log(first.output().slice(-3000));
    expect(code).toBe(0);
    expect(fake.checkRuns.length).toBeLessThan(12); // the drain handed the rest back to Redis
    await app(port, { REDIS_URL: redis.url });
    await waitFor(
      () => (scenarios.every((scenario) => completedOn(fake, scenario).length > 0) ? true : undefined),
      90_000,
      () => `${fake.checkRuns.length} runs`,
    );
    for (const scenario of scenarios) expect(completedOn(fake, scenario)).toHaveLength(1);
  }, 150_000);
});

describe('no lost deliveries: what failed is asked for again', () => {
  /** The App's webhook URL on the fake, as the App's settings would name it. */
  const hookOf = (server: RunningApp) => ({
    url: `http://127.0.0.1:${server.port}/api/github/webhooks`,
    secret: SECRET,
  });

  it('deliveries GitHub could not make while the App was down are redelivered once it starts', async () => {
    const { fake, port } = await github();
    const scenarios = pulls(fake, 3, 4000);
    // Nothing listens yet: GitHub records "failed to connect" and does not try again by itself.
    for (const [i, scenario] of scenarios.entries())
      expect(await fake.send('pull_request', scenario.payload, `while-down-${i}`)).toBe(502);
    const server = await app(port, { REDELIVER_INTERVAL_MINUTES: '0.05' });
    fake.hook = hookOf(server);
    await waitFor(
      () => (scenarios.every((scenario) => completedOn(fake, scenario).length > 0) ? true : undefined),
      60_000,
      () => `${fake.checkRuns.length} runs; ${server.output().slice(-2000)}`,
    );
    for (const scenario of scenarios) expect(completedOn(fake, scenario)).toHaveLength(1);
  }, 90_000);

  it('without Redis: deliveries refused past the backlog are redelivered, and every pull request is checked', async () => {
    const { fake, port } = await github(150); // a slow GitHub: the backlog fills
    const server = await app(port, { WEBHOOK_BACKLOG: '5', REDELIVER_INTERVAL_MINUTES: '0.1' });
    fake.hook = hookOf(server);
    const scenarios = pulls(fake, 15, 5000);
    const codes = await Promise.all(
      scenarios.map((scenario, i) => fake.send('pull_request', scenario.payload, `burst-${i}`)),
    );
    expect(codes.filter((code) => code === 503).length).toBeGreaterThan(0);
    await waitFor(
      () => (scenarios.every((scenario) => completedOn(fake, scenario).length > 0) ? true : undefined),
      100_000,
      () => `${fake.checkRuns.length} runs`,
    );
    for (const scenario of scenarios) expect(completedOn(fake, scenario)).toHaveLength(1);
  }, 120_000);

  it('without Redis, at the defaults: SIGTERM right after a burst loses no accepted delivery, and the refused ones are redelivered after the restart', async () => {
    const { fake, port } = await github(40);
    const first = await app(port, {}); // GitHub's pace (1 s between writes), the default drain window
    fake.hook = hookOf(first);
    const scenarios = pulls(fake, 20, 7000);
    const codes = await Promise.all(
      scenarios.map((scenario, i) => fake.send('pull_request', scenario.payload, `term-${i}`)),
    );
    const accepted = scenarios.filter((_, i) => codes[i] === 202);
    expect(accepted.length).toBeGreaterThan(0);
    const exited = exitOf(first.process);
    first.process.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) console.log(first.output().slice(-3000));
    expect(code).toBe(0);
    // Every accepted delivery was checked before the exit.
    for (const scenario of accepted) expect(completedOn(fake, scenario)).toHaveLength(1);
    // The refused ones are failed deliveries at GitHub: the next server's scan asks for them again.
    const second = await app(port, { REDELIVER_INTERVAL_MINUTES: '0.1' });
    fake.hook = hookOf(second);
    await waitFor(
      () => (scenarios.every((scenario) => completedOn(fake, scenario).length > 0) ? true : undefined),
      120_000,
      () => `${fake.checkRuns.length} runs`,
    );
    for (const scenario of scenarios) expect(completedOn(fake, scenario)).toHaveLength(1);
  }, 200_000);

  it('with Redis down, a delivery is answered 503 within 2 s (GitHub waits 10 s), not held', async () => {
    const redis = await redisServer(['--appendonly', 'yes']);
    const { fake, port } = await github();
    const server = await app(port, { REDIS_URL: redis.url });
    redis.process.kill('SIGKILL');
    await exitOf(redis.process);
    const [scenario] = pulls(fake, 1, 6000);
    const started = Date.now();
    const answer = await sendWebhook(server.port, 'pull_request', scenario!.payload, 'redis-down');
    expect(answer.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(4000);
  }, 60_000);
});

describe('local development: webhooks through a smee.io channel (WEBHOOK_PROXY_URL)', () => {
  /**
   * A smee.io channel as smee-client reads it: a text/event-stream of `message` events whose data is the delivery's
   * headers with its `body` (parsed JSON) and `query` (github.com/probot/smee.io; smee-client forwards each as a
   * POST of JSON.stringify(body) with those headers).
   */
  async function channel(): Promise<{ url: string; push: (event: Record<string, unknown>) => void }> {
    const streams: ServerResponse[] = [];
    const server = createHttpServer((req, res) => {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      res.write('event: ready\ndata: {}\n\n');
      streams.push(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(() => {
      for (const stream of streams) stream.destroy();
      server.close();
    });
    const port = (server.address() as AddressInfo).port;
    return {
      url: `http://127.0.0.1:${port}/channel`,
      push: (event) => {
        for (const stream of streams) stream.write(`data: ${JSON.stringify(event)}\n\n`);
      },
    };
  }

  it('the App relays the channel to itself: a signed delivery posted to the channel is checked', async () => {
    const smee = await channel();
    const { fake, port } = await github();
    const server = await app(port, { WEBHOOK_PROXY_URL: smee.url });
    await waitFor(() => (/Relaying webhooks from/.test(server.output()) ? true : undefined), 20_000, server.output);
    const [scenario] = pulls(fake, 1, 8000);
    const body = JSON.stringify(scenario!.payload);
    smee.push({
      'x-github-event': 'pull_request',
      'x-github-delivery': 'through-smee',
      'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      'content-type': 'application/json',
      host: 'smee.io',
      body: scenario!.payload,
      query: {},
      timestamp: Date.now(),
    });
    await waitFor(() => (completedOn(fake, scenario!).length > 0 ? true : undefined), 30_000, server.output);
    expect(completedOn(fake, scenario!)).toHaveLength(1);
  }, 60_000);
});

/** The server in production with REQUIRE_DURABLE_REDIS=1 on `redisUrl`, run to its exit (a refusal ends it). */
async function startRequiringDurable(redisUrl: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      APP_ID: '1',
      PRIVATE_KEY: privateKey(),
      WEBHOOK_SECRET: 'x'.repeat(20),
      PORT: String(await freePort()),
      REDIS_URL: redisUrl,
      REQUIRE_DURABLE_REDIS: '1',
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('a Redis that may lose jobs', () => {
  it('is refused with REQUIRE_DURABLE_REDIS=1, and warned about once without it', async () => {
    const redis = await redisServer(['--save', '', '--appendonly', 'no']);
    const { port } = await github();
    const refused = await startRequiringDurable(redis.url);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      'refusing to start: REQUIRE_DURABLE_REDIS=1, and Redis may lose jobs: appendonly is "no" and save is empty',
    );
    const warned = await app(port, { REDIS_URL: redis.url });
    expect(warned.output().match(/Redis may lose queued jobs on restart/g)).toHaveLength(1);
  }, 60_000);

  it('RDB snapshots alone are not durable: refused with REQUIRE_DURABLE_REDIS=1; with AOF, start says what a crash can lose', async () => {
    const snapshots = await redisServer(['--save', '3600 1 300 100 60 10000', '--appendonly', 'no']);
    const refused = await startRequiringDurable(snapshots.url);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('only RDB snapshots are kept');
    const aof = await redisServer(['--appendonly', 'yes', '--appendfsync', 'everysec']);
    const { port } = await github();
    const started = await app(port, { REDIS_URL: aof.url, REQUIRE_DURABLE_REDIS: '1' });
    expect(started.output()).toContain(
      'Redis keeps deliveries in its append-only file (appendfsync everysec): a crash of its host loses up to one second of deliveries; appendfsync always loses none',
    );
  }, 60_000);

  it('an outage is one line through the logger, not a stack trace per retry', async () => {
    const redis = await redisServer(['--appendonly', 'yes']);
    const { port } = await github();
    const server = await app(port, { REDIS_URL: redis.url });
    redis.process.kill('SIGKILL');
    await exitOf(redis.process);
    // Where Redis was, a listener that counts the App's reconnection attempts and hangs up on each: once there have
    // been many retries, the log must still say the outage once per connection.
    let attempts = 0;
    const listener = createServer((socket) => {
      attempts++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(redis.port, '127.0.0.1', resolve));
    stops.push(() => listener.close());
    await waitFor(
      () => (attempts >= 20 ? true : undefined),
      60_000,
      () => `${attempts} attempts`,
    );
    const output = server.output();
    expect(output).not.toMatch(/^\s+at /m); // no raw stack frames
    expect(output).not.toContain('Unhandled error event');
    const lines = output.split('\n').filter((line) => line.includes('Redis is unreachable'));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(3); // one per connection (queue, worker), not per retry
  }, 60_000);
});

describe('unverified bodies cannot fill the memory', () => {
  it('300 connections sending half-bodies of 1 MiB: most are refused, and RSS stays bounded', async () => {
    const { port } = await github();
    const server = await app(port, {
      // A budget of 8 MiB: measured, RSS grows by about 40 MiB plus twice the budget (malloc keeps the read buffers'
      // pages): 37-61 MiB here, and 100-160 MiB with the default 32 MiB on a loaded machine, which sat too near the
      // bound below. With a budget of 1 GiB (as good as none) this test fails.
      WEBHOOK_UNVERIFIED_BYTES: String(8 * 1024 * 1024),
      WEBHOOK_BODY_TIMEOUT_MS: '20000',
    });
    const before = server.rssMb();
    const sockets: Socket[] = [];
    const answers: string[] = [];
    const chunk = Buffer.alloc(1024 * 1024, 97);
    for (let i = 0; i < 300; i++) {
      const socket = connect(server.port, '127.0.0.1');
      socket.on('data', (data: Buffer) => answers.push(data.toString().split('\r\n')[0]!));
      socket.on('error', () => undefined);
      socket.write(
        `POST /api/github/webhooks HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-github-event: push\r\nx-github-delivery: d${i}\r\nx-hub-signature-256: sha256=${'0'.repeat(64)}\r\ncontent-length: ${4 * 1024 * 1024}\r\n\r\n`,
      );
      socket.write(chunk);
      sockets.push(socket);
    }
    // Once most are refused, what the server holds is what it took in: a bound against the 300 MiB sent, not a clock.
    await waitFor(() => (answers.filter((answer) => answer.includes('503')).length > 200 ? true : undefined));
    const grown = server.rssMb() - before;
    for (const socket of sockets) socket.destroy();
    const sentMb = (sockets.length * chunk.length) / 1024 / 1024;
    expect(grown).toBeLessThan(sentMb / 2);
    expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
  }, 60_000);
});

describe('the public snippet API', () => {
  it('behind one trusted proxy (TRUST_PROXY=1), a forged X-Forwarded-For does not escape the per-address limit', async () => {
    const { port } = await github();
    const server = await app(port, { TRUST_PROXY: '1', SNIPPET_BURST: '3', SNIPPET_RATE_PER_MINUTE: '1' });
    // The client writes its own X-Forwarded-For; the proxy appends the address it saw (10.0.0.7) to it.
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const answer = await fetch(`http://127.0.0.1:${server.port}/cuda-gatekeeper/api/check`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${i}, 10.0.0.7` },
        body: JSON.stringify({ files: [{ path: 'requirements.txt', text: 'torch==2.5.1\n' }] }),
      });
      await answer.arrayBuffer();
      statuses.push(answer.status);
    }
    expect(statuses.slice(0, 3).every((status) => status !== 429)).toBe(true);
    expect(statuses.slice(3)).toEqual([429, 429, 429, 429, 429]);
    // Another client behind the same proxy has its own bucket.
    const other = await fetch(`http://127.0.0.1:${server.port}/cuda-gatekeeper/api/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.0.0.8' },
      body: JSON.stringify({ files: [{ path: 'requirements.txt', text: 'torch==2.5.1\n' }] }),
    });
    expect(other.status).not.toBe(429);
  }, 60_000);

  /** 64 KiB of requirement lines with markers: far more gate work than a budget of 1 ms allows. */
  const heavy =
    `torch==2.5.1\n${Array.from({ length: 700 }, (_, i) => `torchvision==0.${i % 19}.0 ; python_version >= "3.8" and sys_platform == "linux"\n`).join('')}`.slice(
      0,
      64 * 1024 - 100,
    );
  const post = (port: number, body: unknown) =>
    fetch(`http://127.0.0.1:${port}/cuda-gatekeeper/api/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('runs off the main thread with its own budget: a heavy request fails alone, /healthz and webhooks answer meanwhile', async () => {
    const { fake, port } = await github();
    // A budget of 1 ms, which no check meets on any machine: every snippet is stopped, none hangs the server.
    const server = await app(port, { SNIPPET_TIMEOUT_MS: '1', SNIPPET_RATE_PER_MINUTE: '600', SNIPPET_BURST: '50' });
    const requests = Array.from({ length: 10 }, () =>
      post(server.port, { kind: 'requirements', text: heavy, baseline: 'none' }),
    );
    for (let i = 0; i < 10; i++) expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': 'torch==2.3.0+cu121\n' },
      changed: ['requirements.txt'],
      number: 3000,
    });
    expect((await sendWebhook(server.port, 'pull_request', scenario.payload, 'during-snippets')).status).toBe(202);
    const statuses = (await Promise.all(requests)).map((response) => response.status);
    // Over the budget: 422; the queue full: 503 with Retry-After. Never a hung server.
    expect(statuses.every((status) => status === 422 || status === 503)).toBe(true);
    expect(statuses).toContain(422);
    // The pull request's gate runs on the App's own threads and budget, untouched by the snippets'.
    await waitFor(() => completedOn(fake, scenario)[0], 30_000);
    expect(completedOn(fake, scenario)[0]!.output?.title).not.toMatch(/not checked|could not/);
    // The snippet threads stopped past their budget were replaced: the next request is judged (and stopped) again.
    const next = await post(server.port, { kind: 'requirements', text: 'torch==2.3.0+cu121\n', baseline: 'none' });
    expect(next.status).toBe(422);
    expect(await next.text()).toContain('did not finish within 1 ms');
  }, 90_000);

  it('a slow body is refused within seconds, a 429 closes its socket, and the form says why it did not check', async () => {
    const { port } = await github();
    const server = await app(port, { SNIPPET_RATE_PER_MINUTE: '1', SNIPPET_BURST: '1' });
    // A body that trickles: 408 from the App's own body timeout (its message says so), not Node's request timeout.
    const slow = await new Promise<{ status: string; text: string; closed: boolean }>((resolve) => {
      const socket = connect(server.port, '127.0.0.1');
      let text = '';
      socket.on('data', (data: Buffer) => (text += data.toString()));
      socket.on('close', () => resolve({ status: text.split('\r\n')[0]!, text, closed: true }));
      socket.write(
        'POST /cuda-gatekeeper/api/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"kind":',
      );
    });
    expect(slow.status).toMatch(/ 408 /);
    expect(slow.text).toContain('the request body did not arrive within 10 s');
    // The rate limit is spent: the next request is 429 and its socket is closed by the server.
    const limited = await new Promise<{ status: string; closed: boolean }>((resolve) => {
      const socket = connect(server.port, '127.0.0.1');
      let status = '';
      socket.on('data', (data: Buffer) => (status ||= data.toString().split('\r\n')[0]!));
      socket.on('close', () => resolve({ status, closed: true }));
      socket.write(
        'POST /cuda-gatekeeper/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 100000\r\n\r\nkind=',
      );
    });
    expect(limited).toEqual({ status: expect.stringMatching(/ 429 /), closed: true });
  }, 60_000);
});
