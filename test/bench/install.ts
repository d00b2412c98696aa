/**
 * Install benchmark (issue 30): the CLI's npm package as `npm install -g` installs it — packed by
 * scripts/pack-cli.mjs, installed into a fresh prefix from the tarball (no registry needed: it has no
 * dependencies) — and the pre-commit hook's install (`language: script`: nothing). Three runs; the median time,
 * the installed size and the number of packages. Part of `npm run bench`; writes bench-results/install.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { packageRoot } from '../../src/util/package-root.js';

function bytesUnder(path: string): number {
  const stats = statSync(path);
  return stats.isDirectory()
    ? readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0)
    : stats.size;
}

function main(): void {
  const root = packageRoot();
  const work = mkdtempSync(join(tmpdir(), 'cgk-bench-install-'));
  const tarball = execFileSync(
    process.execPath,
    [join(root, 'scripts', 'pack-cli.mjs'), '--out', join(work, 'package'), '--pack'],
    {
      encoding: 'utf8',
    },
  ).trim();
  const runs: number[] = [];
  let installedBytes = 0;
  let packages = 0;
  for (let i = 0; i < 3; i++) {
    const prefix = join(work, `prefix-${i}`);
    const started = performance.now();
    const log = execFileSync(
      'npm',
      ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
      { encoding: 'utf8' },
    );
    runs.push((performance.now() - started) / 1000);
    installedBytes = bytesUnder(join(prefix, 'lib', 'node_modules'));
    packages = Number(/added (\d+) package/.exec(log)?.[1] ?? 0);
  }
  const median = [...runs].sort((a, b) => a - b)[1]!;
  const result = {
    tarballBytes: statSync(tarball).size,
    installSeconds: Math.round(median * 100) / 100,
    installedMiB: Math.round((installedBytes / 1024 / 1024) * 100) / 100,
    packages,
    preCommitInstall: 'language: script — nothing installed',
    goal: { seconds: 3, MiB: 3 },
  };
  mkdirSync(join(root, 'bench-results'), { recursive: true });
  writeFileSync(join(root, 'bench-results', 'install.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(
    `install: npm install -g of the CLI package ${result.installSeconds} s (median of 3), ${result.installedMiB} MiB installed, ${packages} package, tarball ${Math.round(result.tarballBytes / 1024)} KiB\n`,
  );
}

main();
