/**
 * App benchmark: API calls and wall time per pull request for 1, 20, 300 and 3,000 changed files, and
 * webhook-to-completed-check latency (p50/p99) for a 20-file pull request, against the loopback fake GitHub
 * at zero and at 50 ms simulated latency. Part of `npm run bench`; writes bench-results/app.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { Probot, ProbotOctokit } from 'probot';
import { cudaGatekeeper } from '../../src/app.js';
import { packageRoot } from '../../src/util/package-root.js';
import { createDeps } from '../../src/github/deps.js';
import { gatekeeperOctokit, GITHUB_PACE } from '../../src/github/octokit.js';
import { FakeGitHub } from '../support/fake-github.js';
import { privateKey } from '../support/probot.js';
import { addedPatch, pullScenario } from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

const DOCKERFILE = codeBlock`
  FROM nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04
  COPY requirements.txt .
  RUN pip install -r requirements.txt
`;
const REQUIREMENTS = codeBlock`
  --extra-index-url https://download.pytorch.org/whl/cu124
  torch==2.5.1+cu124
  torchvision==0.20.1+cu124
  numpy==1.26.4
`;

function changeSet(n: number): { head: Record<string, string>; changed: string[] } {
  const head: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    // One changed file in ten is CUDA-relevant, as in a typical monorepo pull request.
    if (i % 10 === 0) {
      const dir = `svc${i}`;
      head[i % 20 === 0 ? `${dir}/Dockerfile` : `${dir}/requirements.txt`] = i % 20 === 0 ? DOCKERFILE : REQUIREMENTS;
    } else head[`src/module_${i}.py`] = `print(${i})\n`;
  }
  return { head, changed: Object.keys(head) };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
}

async function main(): Promise<void> {
  const results: Record<string, unknown> = {};
  const perSize: { files: number; relevant: number; calls: number; callsFirst: number; ms: number; rssMb: number }[] =
    [];
  let maxRss = 0;
  for (const latency of [0, 50]) {
    const fake = new FakeGitHub(false);
    const { server, port } = await fake.listen(latency);
    const probot = new Probot({
      appId: 1,
      privateKey: privateKey(),
      baseUrl: `http://127.0.0.1:${port}/api/v3`,
      log: pino({ level: 'silent' }),
      Octokit: ProbotOctokit.defaults((options: Record<string, unknown>) => ({
        ...options,
        retry: { enabled: false },
        throttle: { ...(options.throttle as object), enabled: false },
      })),
    });
    await probot.load(cudaGatekeeper(createDeps({ appId: 1 })));
    let number = 1;
    const run = async (n: number): Promise<{ calls: number; ms: number }> => {
      const { head, changed } = changeSet(n);
      const scenario = pullScenario(fake, {
        main: { 'svc0/requirements.txt': REQUIREMENTS },
        head,
        changed,
        number: number++,
      });
      for (const file of fake.pull('octo-org/trainer', scenario.number)!.files)
        Object.assign(file, { patch: addedPatch(head[file.filename] ?? '') });
      const before = fake.requests.length;
      const started = performance.now();
      await probot.receive({ id: `bench-${number}`, name: 'pull_request', payload: scenario.payload } as never);
      const ms = performance.now() - started;
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
      return { calls: fake.requests.length - before, ms };
    };
    if (latency === 0) {
      const first = await run(1); // includes the installation token request
      for (const n of [1, 20, 300, 3000]) {
        const measured = await run(n);
        perSize.push({
          files: n,
          relevant: changeSet(n).changed.filter((path) => !path.endsWith('.py')).length,
          calls: measured.calls,
          callsFirst: n === 1 ? first.calls : measured.calls,
          ms: Math.round(measured.ms),
          rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
        });
      }
    }
    const latencies: number[] = [];
    const rounds = latency === 0 ? 100 : 30;
    const started = performance.now();
    for (let i = 0; i < rounds; i++) latencies.push((await run(20)).ms);
    results[`latency${latency}ms`] = {
      pullRequests: rounds,
      files: 20,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      perSecond: Math.round((rounds / (performance.now() - started)) * 1000 * 10) / 10,
    };
    if (fake.violations.length)
      throw new Error(`fake GitHub saw invalid requests: ${fake.violations.slice(0, 3).join('; ')}`);
    await new Promise((resolve) => server.close(resolve));
  }
  results.perPullRequest = perSize;
  results.burst = await burst(30);
  // RSS of this one process, which also holds the fake GitHub and every pull request it serves.
  results.rssAfter3000Mb = perSize.find((row) => row.files === 3000)?.rssMb;
  results.maxRssMb = Math.round(maxRss / 2 ** 20);

  const rows = [
    ['changed files', 'relevant', 'API calls', 'wall ms'],
    ...perSize.map((row) => [
      String(row.files),
      String(row.relevant),
      `${row.calls}${row.files === 1 ? ` (${row.callsFirst} with the token request)` : ''}`,
      String(row.ms),
    ]),
  ];
  process.stdout.write(
    `\nApp: API calls and time per pull request (loopback fake GitHub)\n${rows.map((row) => row.map((cell, i) => cell.padEnd(i === 2 ? 34 : 14)).join('')).join('\n')}\n`,
  );
  for (const key of ['latency0ms', 'latency50ms']) {
    const value = results[key] as { p50: number; p99: number; perSecond: number };
    process.stdout.write(
      `webhook → completed check, 20 files, ${key === 'latency0ms' ? '0 ms' : '50 ms'} API latency: p50 ${value.p50} ms, p99 ${value.p99} ms, ${value.perSecond} PR/s\n`,
    );
  }
  process.stdout.write(
    `RSS right after the 3,000-file pull request: ${String(results.rssAfter3000Mb)} MiB; highest RSS sampled after any pull request: ${String(results.maxRssMb)} MiB (App and fake GitHub in one process)\n`,
  );
  const b = results.burst as Awaited<ReturnType<typeof burst>>;
  process.stdout.write(
    `burst of ${b.pullRequests} pull_request.opened at GitHub's pace (1 s between writes): first verdict ${b.firstS} s, median ${b.medianS} s, last ${b.lastS} s after the burst; ${b.callsPerPullRequest} API calls per pull request\n`,
  );
  mkdirSync(join(packageRoot(), 'bench-results'), { recursive: true });
  writeFileSync(join(packageRoot(), 'bench-results', 'app.json'), `${JSON.stringify(results, null, 2)}\n`);
}

/**
 * `count` pull requests opened at once, at GitHub's real pace (one second between writes): when each verdict lands,
 * counted from the burst, and the API calls per pull request.
 */
async function burst(count: number): Promise<{
  pullRequests: number;
  firstS: number;
  medianS: number;
  lastS: number;
  callsPerPullRequest: number;
}> {
  const fake = new FakeGitHub(false);
  const { server, port } = await fake.listen(0);
  const probot = new Probot({
    appId: 1,
    privateKey: privateKey(),
    baseUrl: `http://127.0.0.1:${port}/api/v3`,
    log: pino({ level: 'silent' }),
    Octokit: gatekeeperOctokit(GITHUB_PACE),
  });
  await probot.load(cudaGatekeeper(createDeps({ appId: 1 })));
  // The one-file pull request of the table above, thirty times.
  const scenarios = Array.from({ length: count }, (_, i) =>
    pullScenario(fake, { main: { 'svc0/requirements.txt': REQUIREMENTS }, ...changeSet(1), number: 100 + i }),
  );
  const started = performance.now();
  const landed = await Promise.all(
    scenarios.map(async (scenario, i) => {
      await probot.receive({ id: `burst-${i}`, name: 'pull_request', payload: scenario.payload } as never);
      return (performance.now() - started) / 1000;
    }),
  );
  await new Promise((resolve) => server.close(resolve));
  const seconds = (value: number) => Math.round(value * 10) / 10;
  return {
    pullRequests: count,
    firstS: seconds(Math.min(...landed)),
    medianS: seconds(percentile(landed, 50)),
    lastS: seconds(Math.max(...landed)),
    callsPerPullRequest: Math.round((fake.requests.length / count) * 100) / 100,
  };
}

await main();
