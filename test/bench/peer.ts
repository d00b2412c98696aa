/**
 * The peer ratio: `../shared/bench/compare.sh` (Renovate 39's own extractors against our CLI on the 10,000-file
 * tree of real files, alternating, same run) when that bench is installed beside the project; otherwise it says how
 * to install it. Part of `npm run bench`; writes bench-results/peer.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/package-root.js';

const ROOT = packageRoot();
const BENCH = join(ROOT, '..', 'shared', 'bench');

function main(): void {
  if (!existsSync(join(BENCH, 'compare.sh')) || !existsSync(join(BENCH, 'node_modules'))) {
    process.stdout.write(
      `\npeer (Renovate's extractors): not measured: run \`cd ${BENCH} && npm ci\` once (needs ../shared/bench)\n`,
    );
    return;
  }
  const command = `cd {DIR} && node ${join(ROOT, 'bin', 'cuda-gatekeeper.js')} check . --format json --baseline none > /dev/null`;
  const run = spawnSync(join(BENCH, 'compare.sh'), [command], {
    cwd: BENCH,
    encoding: 'utf8',
    env: { ...process.env, RUNS: process.env.RUNS ?? '3' },
    maxBuffer: 64 * 2 ** 20,
  });
  const table = run.stdout
    .split('\n')
    .filter((line) => /^(corpus:|tool\s|ours\s+[\d.]|renovate\s+[\d.]|ratio\s)/.test(line));
  const ours = /^ours\s+([\d.]+)/m.exec(run.stdout)?.[1];
  const renovate = /^renovate\s+([\d.]+)/m.exec(run.stdout)?.[1];
  if (run.status !== 0 || !ours || !renovate) {
    process.stdout.write(
      `\npeer (Renovate's extractors): compare.sh failed (exit ${run.status}): ${run.stderr.slice(-500)}\n`,
    );
    process.exitCode = 1;
    return;
  }
  const ratio = Math.round((Number(renovate) / Number(ours)) * 100) / 100;
  process.stdout.write(
    `\npeer: ../shared/bench/compare.sh (median wall time, whole process)\n${table.join('\n')}\ncuda-gatekeeper is ${ratio}× faster than Renovate's extractors on this machine (goal: 10×)\n`,
  );
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench-results', 'peer.json'),
    `${JSON.stringify({ oursSeconds: Number(ours), renovateSeconds: Number(renovate), ratio }, null, 2)}\n`,
  );
}

main();
