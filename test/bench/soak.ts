/**
 * Soak: the real server process (dist/src/main.js, as the image runs it) under ten minutes of mixed traffic at a
 * rate it keeps up with, against the loopback fake GitHub: pull-request webhooks (new commits and re-runs), snippet
 * checks through the public API, forged deliveries, /healthz. The server's RSS is sampled every 10 s; the run
 * fails (exit 1) when the second half's peak is more than 15 % (and 24 MiB) above the first half's: memory that
 * grows with the traffic, not with the work in hand.
 *
 *   npm run build && node dist/test/bench/soak.js            # 600 s (SOAK_SECONDS to change it)
 *
 * Writes bench-results/soak.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/package-root.js';
import { FakeGitHub } from '../support/fake-github.js';
import { appEnv, freePort, SECRET, sendWebhook } from '../support/app-env.js';
import { pullScenario } from '../support/scenario.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);

function webhook(port: number, name: string, payload: unknown, delivery: string, secret = SECRET): Promise<number> {
  return status(sendWebhook(port, name, payload, delivery, secret));
}

/** A response's status, or 0 when there was none. */
function status(response: Promise<Response>): Promise<number> {
  return response.then(
    (answer) => answer.status,
    () => 0,
  );
}

function snippet(port: number, text: string): Promise<number> {
  return status(
    fetch(`http://127.0.0.1:${port}/cuda-gatekeeper/api/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'requirements', text, baseline: 'none' }),
    }),
  );
}

async function main(): Promise<void> {
  const fake = new FakeGitHub(false);
  const { server: github, port: githubPort } = await fake.listen(5);
  const port = await freePort();
  const child = spawn(process.execPath, [join(packageRoot(), 'dist', 'src', 'main.js')], {
    env: appEnv(port, githubPort, { LOG_LEVEL: 'warn', SNIPPET_RATE_PER_MINUTE: '100000', SNIPPET_BURST: '1000' }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const samples: { second: number; rssMb: number }[] = [];
  const counts = { webhooks: 0, accepted: 0, snippets: 0, forged: 0, health: 0 };
  const started = Date.now();
  let tick = 0;
  const requirements = (i: number) =>
    `--extra-index-url https://download.pytorch.org/whl/cu12${i % 2 ? 1 : 4}\ntorch==2.${3 + (i % 3)}.0+cu121\ntorchvision==0.18.0\n`;
  while (Date.now() - started < SECONDS * 1000) {
    tick++;
    // Each second: a forged delivery and five health checks; every 2 s a snippet check; every 4 s a new commit on
    // a pull request (two events for it: the second writes nothing). Probot spaces the App's writes a second apart
    // (its throttling), and a check writes a run and a review: this is a rate the App keeps up with.
    const scenario = pullScenario(fake, {
      head: { [`svc${tick % 50}/requirements.txt`]: requirements(tick) },
      changed: [`svc${tick % 50}/requirements.txt`],
      number: 1 + (tick % 40),
    });
    const pull = tick % 4 === 0;
    const skip = Promise.resolve(-1);
    const statuses = await Promise.all([
      pull ? webhook(port, 'pull_request', scenario.payload, `soak-${tick}`) : skip,
      pull ? webhook(port, 'pull_request', { ...scenario.payload, action: 'synchronize' }, `soak-${tick}-sync`) : skip,
      webhook(port, 'pull_request', scenario.payload, `forged-${tick}`, 'not-the-secret'),
      tick % 2 === 0 ? snippet(port, requirements(tick)) : skip,
      ...Array.from({ length: 5 }, () => status(fetch(`http://127.0.0.1:${port}/healthz`))),
    ]);
    if (pull) counts.webhooks += 2;
    counts.accepted += statuses.slice(0, 2).filter((code) => code === 202).length;
    counts.forged += statuses[2] === 401 ? 1 : 0;
    counts.snippets += statuses[3] === 200 ? 1 : 0;
    counts.health += statuses.slice(4).filter((code) => code === 200).length;
    // The fake keeps every commit and run it was sent; it is not what is measured, so it forgets them.
    if (fake.checkRuns.length > 2000) fake.checkRuns.splice(0, 1000);
    if (tick % 10 === 0) {
      samples.push({ second: Math.round((Date.now() - started) / 1000), rssMb: Math.round(rss()) });
      process.stdout.write(
        `${samples.at(-1)!.second}s\tRSS ${samples.at(-1)!.rssMb} MiB\tchecks ${fake.checkRuns.length}\n`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, tick * 1000 - (Date.now() - started))));
  }
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  github.close();
  // A sample every 10 s: fewer than four cannot tell growth from noise, and that is said, not passed.
  if (samples.length < 4) {
    process.stdout.write(
      `\nSoak: ${SECONDS} s gives ${samples.length} memory samples (one per 10 s); run at least 40 s to judge memory\n`,
    );
    process.exit(1);
  }
  const half = Math.floor(samples.length / 2);
  const first = Math.max(...samples.slice(0, half).map((sample) => sample.rssMb));
  const second = Math.max(...samples.slice(half).map((sample) => sample.rssMb));
  const flat = second <= Math.max(first * 1.15, first + 24);
  const result = { seconds: SECONDS, counts, samples, firstHalfPeakMb: first, secondHalfPeakMb: second, flat };
  mkdirSync(join(packageRoot(), 'bench-results'), { recursive: true });
  writeFileSync(join(packageRoot(), 'bench-results', 'soak.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(
    `\nSoak, ${SECONDS} s of mixed traffic: ${counts.accepted}/${counts.webhooks} webhooks accepted, ${counts.snippets} snippet checks, ${counts.forged} forged refused, ${counts.health} health checks\nRSS peak: first half ${first} MiB, second half ${second} MiB: ${flat ? 'flat' : 'GROWING'}\n`,
  );
  if (!flat) {
    process.stderr.write(stderr);
    process.exit(1);
  }
}

await main();
