/** A fan-out worker process for the Redis crash test: Probot against the fake GitHub, BullMQ on REDIS_URL. */
import { pino } from 'pino';
import { Probot, ProbotOctokit } from 'probot';
import { DurableFanout } from '../../src/github/durable.js';
import { createDeps } from '../../src/github/deps.js';
import { runJob } from '../../src/github/runners.js';
import { privateKey } from './probot.js';

const probot = new Probot({
  appId: 1,
  privateKey: process.env.PRIVATE_KEY ?? privateKey(),
  baseUrl: process.env.GITHUB_BASE_URL,
  log: pino({ level: 'warn' }),
  Octokit: ProbotOctokit.defaults((options: Record<string, unknown>) => ({
    ...options,
    retry: { enabled: false },
    throttle: { ...(options.throttle as object), enabled: false },
  })),
});
const fanout = new DurableFanout({
  redisUrl: process.env.REDIS_URL!,
  concurrency: 2,
  lockDurationMs: 1500,
  stalledIntervalMs: 500,
});
const deps = createDeps({ appId: 1, fanout });
fanout.start(probot, (github, job) => runJob(github, job, deps, probot.log, { durable: true }), probot.log);
process.stdout.write('worker ready\n');
