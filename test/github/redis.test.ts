/**
 * Durable fan-out on a real Redis server (started here on loopback; .ci/run installs Debian's redis-server):
 * a worker is killed (SIGKILL) in the middle of re-checking 30 pull requests, a new worker takes over, and
 * every pull request ends with exactly one completed check run; no job is lost or failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import { DurableFanout } from '../../src/github/durable.js';
import type { Fanout, FanoutJob } from '../../src/github/jobs.js';
import { JobQueue } from '../../src/github/queue.js';
import { FakeGitHub } from '../support/fake-github.js';
import { privateKey } from '../support/probot.js';
import { startRedis, type RunningRedis } from '../support/redis.js';
import { waitFor } from '../support/server.js';
import { pullScenario, type Scenario } from '../support/scenario.js';

const ROOT = join(import.meta.dirname, '..', '..');
let redis: RunningRedis;
let redisUrl: string;
let fake: FakeGitHub;
let github: Server;
let githubPort: number;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  redisUrl = redis.url;
  fake = new FakeGitHub(false);
  const listening = await fake.listen(80); // slow GitHub, so the kill lands mid-fan-out
  github = listening.server;
  githubPort = listening.port;
}, 30_000);

afterAll(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  redis?.stop();
  await new Promise((resolve) => github?.close(resolve));
});

function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      REDIS_URL: redisUrl,
      GITHUB_BASE_URL: `http://127.0.0.1:${githubPort}/api/v3`,
      PRIVATE_KEY: privateKey(),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('worker ready') && resolve(child));
    child.on('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
}

describe('durable fan-out on Redis', () => {
  it('a killed worker loses nothing: a restarted worker finishes every pull request exactly once', async () => {
    const pulls: Scenario[] = Array.from({ length: 30 }, (_, i) =>
      pullScenario(fake, {
        head: { [`svc${i}/requirements.txt`]: `numpy==1.26.${i}\n` },
        changed: [`svc${i}/requirements.txt`],
        number: 200 + i,
      }),
    );
    const producer = new DurableFanout({ redisUrl });
    for (const scenario of pulls) {
      const target = {
        owner: 'octo-org',
        repo: 'trainer',
        number: scenario.number,
        headSha: scenario.headSha,
        headRef: 'cuda-upgrade',
        headRepo: 'octo-org/trainer',
        installationId: 42,
      };
      const job = {
        kind: 'check-pull' as const,
        installationId: 42,
        target,
        deliveryId: 'crash-test',
        trigger: 'event' as const,
        baselineCommit: 'b1',
      };
      expect(await producer.add(job)).toBe(true);
      // The same job again (a duplicate delivery): it collapses.
      expect(await producer.add({ ...job, deliveryId: 'crash-test-again' })).toBe(false);
    }
    const first = await startWorker();
    await waitFor(() => (fake.checkRuns.length >= 8 ? true : undefined), 60_000);
    first.kill('SIGKILL');
    const doneAtKill = fake.checkRuns.length;
    expect(doneAtKill).toBeLessThan(30);
    await startWorker();
    const completed = (scenario: Scenario) =>
      fake.checkRuns.filter((run) => run.head_sha === scenario.headSha && run.status === 'completed');
    await waitFor(
      () => (pulls.every((scenario) => completed(scenario).length > 0) ? true : undefined),
      90_000,
      () => `${fake.checkRuns.length} check runs`,
    );
    // The queue settled (nothing waiting, running or delayed): every job and follow-up has run, so the counts are
    // final.
    const settled = async () => {
      const counts = await producer.queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
      return (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0) === 0 ? counts : undefined;
    };
    const counts = await waitFor(settled, 60_000, () => 'the queue did not settle');
    for (const scenario of pulls)
      expect(fake.checkRuns.filter((run) => run.head_sha === scenario.headSha)).toHaveLength(1);
    expect(counts).toMatchObject({ completed: 30, failed: 0, waiting: 0, active: 0, delayed: 0 });
    await producer.close();
  }, 180_000);
});

/**
 * A baseline that goes A → B → A (a force-push back to A's commit) within the hour BullMQ keeps completed jobs: the
 * re-check under A must run again, and `add` must say it was queued. Against real Redis and in-process alike.
 */
describe('a job asked for again after it finished runs again', () => {
  const job = (delivery: string, baselineCommit: string): FanoutJob => ({
    kind: 'recheck-org',
    installationId: 42,
    owner: 'octo-org',
    deliveryId: delivery,
    baselineCommit,
  });
  const github = {} as never;
  const delivery = (queued: FanoutJob): string => ('deliveryId' in queued ? queued.deliveryId : '');
  const flip = async (fanout: Fanout & { idle(): Promise<void> }, runs: string[]) => {
    expect(await fanout.add(job('a1', 'commitA'), github)).toBe(true);
    await fanout.idle();
    expect(await fanout.add(job('b', 'commitB'), github)).toBe(true);
    await fanout.idle();
    expect(await fanout.add(job('a2', 'commitA'), github)).toBe(true);
    await fanout.idle();
    expect(runs).toEqual(['a1', 'b', 'a2']);
  };

  it('with REDIS_URL', async () => {
    // The crash test's workers would take these jobs too: stop them, and start from an empty queue.
    for (const worker of workers.splice(0)) worker.kill('SIGKILL');
    const fanout = new DurableFanout({ redisUrl, concurrency: 1 });
    await fanout.queue.obliterate({ force: true });
    const runs: string[] = [];
    const probot = { auth: async () => ({}) } as unknown as Probot;
    const log = {
      warn: () => undefined,
      info: () => undefined,
      error: () => undefined,
      debug: () => undefined,
    } as never;
    fanout.start(probot, async (_github, queued) => void runs.push(delivery(queued)), log);
    await flip(fanout, runs);
    // While a job with the key is still waiting, the same work is not queued twice.
    await fanout.queue.pause();
    expect(await fanout.add(job('c1', 'commitC'), github)).toBe(true);
    expect(await fanout.add(job('c2', 'commitC'), github)).toBe(false);
    await fanout.queue.resume();
    await fanout.idle();
    await fanout.close();
  }, 30_000);

  it('in-process', async () => {
    const runs: string[] = [];
    const queue = new JobQueue();
    queue.start({} as Probot, async (_github, queued) => void runs.push(delivery(queued)), {
      error: () => undefined,
    } as never);
    await flip(queue, runs);
  });
});
