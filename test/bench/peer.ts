/**
 * The peer ratio: `../shared/bench/compare.sh` (Renovate 39's own extractors against our CLI, alternating, same run,
 * whole process) when that bench is installed beside the project; otherwise it says how to install it. Two trees of
 * 10,000 files, each file a byte-for-byte copy of a real one: the shared bench's (its 35 real files) and one built the
 * same way from fixtures/bench-corpus (264 recent, larger real files; SOURCES.tsv says where each comes from). Each is
 * measured with our check on one thread and on all cores. Part of `npm run bench`; writes bench-results/peer.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/package-root.js';

const ROOT = packageRoot();
const BENCH = join(ROOT, '..', 'shared', 'bench');
const LARGER = join(ROOT, 'bench-results', 'bench-corpus-10k');

interface Row {
  readonly tree: string;
  readonly threads: number;
  readonly oursSeconds: number;
  readonly renovateSeconds: number;
  readonly ratio: number;
}

function compare(tree: string, corpus: string | undefined, threads: number): Row | undefined {
  const command = `cd {DIR} && node ${join(ROOT, 'bin', 'cuda-gatekeeper.js')} check . --format json --baseline none > /dev/null`;
  const run = spawnSync(join(BENCH, 'compare.sh'), [command], {
    cwd: BENCH,
    encoding: 'utf8',
    env: {
      ...process.env,
      RUNS: process.env.RUNS ?? '3',
      CUDA_GATEKEEPER_THREADS: String(threads),
      ...(corpus ? { CORPUS: corpus } : {}),
    },
    maxBuffer: 64 * 2 ** 20,
  });
  const table = run.stdout
    .split('\n')
    .filter((line) => /^(corpus:|tool\s|ours\s+[\d.]|renovate\s+[\d.]|ratio\s)/.test(line));
  const ours = /^ours\s+([\d.]+)/m.exec(run.stdout)?.[1];
  const renovate = /^renovate\s+([\d.]+)/m.exec(run.stdout)?.[1];
  if (run.status !== 0 || !ours || !renovate) {
    process.stdout.write(`\npeer, ${tree}: compare.sh failed (exit ${run.status}): ${run.stderr.slice(-500)}\n`);
    process.exitCode = 1;
    return undefined;
  }
  const ratio = Math.round((Number(renovate) / Number(ours)) * 100) / 100;
  process.stdout.write(
    `\npeer, ${tree}, ${threads === 1 ? 'one thread' : `all ${threads} cores`}: CUDA_GATEKEEPER_THREADS=${threads}${corpus ? ` CORPUS=${corpus}` : ''} ../shared/bench/compare.sh '${command}'\n${table.join('\n')}\ncuda-gatekeeper is ${ratio}× faster than Renovate's extractors here (goal: 4×)\n`,
  );
  return { tree, threads, oursSeconds: Number(ours), renovateSeconds: Number(renovate), ratio };
}

function main(): void {
  if (!existsSync(join(BENCH, 'compare.sh')) || !existsSync(join(BENCH, 'node_modules'))) {
    process.stdout.write(
      `\npeer (Renovate's extractors): not measured: run \`cd ${BENCH} && npm ci\` once (needs ../shared/bench)\n`,
    );
    return;
  }
  if (!existsSync(LARGER)) {
    const built = spawnSync('node', [join(BENCH, 'make-corpus.mjs'), LARGER, '10000'], {
      encoding: 'utf8',
      env: { ...process.env, CORPUS_SOURCES: join(ROOT, 'fixtures', 'bench-corpus') },
    });
    if (built.status !== 0) {
      process.stdout.write(`\npeer: could not build ${LARGER}: ${built.stderr.slice(-500)}\n`);
      process.exitCode = 1;
      return;
    }
  }
  const cores = availableParallelism();
  const rows: Row[] = [];
  for (const [tree, corpus] of [
    ['the shared tree (../shared/bench/corpus-10k)', undefined],
    ['larger real files (fixtures/bench-corpus, 10,000 files)', LARGER],
  ] as const)
    for (const threads of [...new Set([1, cores])]) {
      const row = compare(tree, corpus, threads);
      if (row) rows.push(row);
    }
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench-results', 'peer.json'), `${JSON.stringify(rows, null, 2)}\n`);
}

main();
