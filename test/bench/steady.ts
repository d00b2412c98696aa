/**
 * A check's steady state (not part of `npm run bench`): the working directory's tree walked once and checked RUNS
 * times (default 3) in one process, each check timed, as the CLI's `check . --baseline none` checks it on one
 * thread. The first check pays V8's warm-up; the later ones show what the parsers and the gate cost once every hot
 * function is optimised (docs/performance.md). `cd <tree> && node <project>/dist/test/bench/steady.js`
 */
import { checkTree } from '../../src/cli/check-tree.js';
import { listingData, walk } from '../../src/cli/discover.js';

const root = process.cwd();
const runs = Number(process.env.RUNS ?? 3);
const walked = walk(root, ['.']);
const job = {
  cwd: root,
  repository: 'steady',
  today: new Date().toISOString().slice(0, 10),
  list: walked.paths.map((path) => ({ path, kind: walked.kinds.get(path) })),
  walked: { paths: walked.paths, plain: [...walked.plain], listing: listingData(walked.listing) },
};
for (let run = 1; run <= runs; run++) {
  const start = performance.now();
  const result = checkTree(job);
  const ms = performance.now() - start;
  process.stdout.write(
    `check ${run}: ${ms.toFixed(0)} ms, ${job.list.length} files, ${result.report.findings.length} findings\n`,
  );
}
