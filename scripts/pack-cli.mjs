#!/usr/bin/env node
/**
 * The CLI's npm package, generated: the committed bundle (bundle/cli.mjs, which needs no node_modules), its bin,
 * and the files it reads at run time (the bundled baseline, the rules' READMEs for SARIF help, the baseline's
 * JSON Schema), with a package.json that has no dependencies. The repository's own package.json is the App's
 * (probot, redis, …): publishing it would make every `npm install -g cuda-gatekeeper` install all of those.
 *
 *   node scripts/pack-cli.mjs [--out DIR] [--pack]
 *
 * writes the package to DIR (default dist/cli-package) and, with --pack, runs `npm pack` there and prints the
 * tarball's path. The release workflow publishes that tarball (npm publish --provenance).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string' }, pack: { type: 'boolean', default: false } } });
const out = resolve(values.out ?? join(root, 'dist', 'cli-package'));

const app = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const rules = readdirSync(join(root, 'rules'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(root, 'rules', entry.name, 'README.md')))
  .map((entry) => `rules/${entry.name}/README.md`);
const files = [
  'bin/cuda-gatekeeper.js',
  'bundle/cli.mjs',
  'baseline.yaml',
  'schema/baseline.schema.json',
  'README.md',
  'CHANGELOG.md',
  'LICENSE',
  ...rules,
];

/**
 * A rule's README without its generated Examples section, as src/rule.ts's withoutExamples gives it to SARIF (the
 * package ships what SARIF's help carries; the examples stay in the repository, linked).
 */
function withoutExamples(readme, ruleId) {
  const url = `https://github.com/cuda-gatekeeper/cuda-gatekeeper/blob/main/rules/${ruleId}/README.md`;
  return readme.replace(
    /<!-- examples:start[^>]*-->[\s\S]*?<!-- examples:end -->/,
    `The examples (each fixture of the rule with its findings) are in [the rule's README](${url}#examples).`,
  );
}

/**
 * The CHANGELOG's release sections, without the development log that precedes the first release (most of the file,
 * growing each working session): the package's users read what each version changed; the log stays in the
 * repository, linked.
 */
function withoutDevelopmentLog(changelog) {
  const url = 'https://github.com/cuda-gatekeeper/cuda-gatekeeper/blob/main/CHANGELOG.md';
  return changelog.replace(
    /^## Before 0\.1\.0: the development log\n[\s\S]*$/m,
    `## Before 0.1.0: the development log\n\nThe log of the work before the first release is in [the repository's CHANGELOG](${url}).\n`,
  );
}

rmSync(out, { recursive: true, force: true });
for (const file of files) {
  if (!existsSync(join(root, file)))
    throw new Error(`pack-cli: ${file} is missing (run npm run bundle and npm run docs first)`);
  mkdirSync(dirname(join(out, file)), { recursive: true });
  const readme = /^rules\/([^/]+)\/README\.md$/.exec(file);
  if (readme) writeFileSync(join(out, file), withoutExamples(readFileSync(join(root, file), 'utf8'), readme[1]));
  else if (file === 'CHANGELOG.md')
    writeFileSync(join(out, file), withoutDevelopmentLog(readFileSync(join(root, file), 'utf8')));
  else cpSync(join(root, file), join(out, file));
}

const manifest = {
  name: app.name,
  version: app.version,
  description: app.description,
  license: app.license,
  type: 'module',
  engines: app.engines,
  bin: { 'cuda-gatekeeper': 'bin/cuda-gatekeeper.js' },
  repository: app.repository,
  homepage: app.homepage,
  bugs: app.bugs,
  keywords: ['cuda', 'pytorch', 'docker', 'conda', 'pip', 'lint', 'pre-commit', 'gpu'],
  files: ['bin', 'bundle/cli.mjs', 'baseline.yaml', 'schema', 'rules/*/README.md', 'CHANGELOG.md'],
};
for (const key of Object.keys(manifest)) if (manifest[key] === undefined) delete manifest[key];
writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

if (values.pack) {
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', dirname(out)], {
    cwd: out,
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .at(-1);
  process.stdout.write(`${join(dirname(out), name)}\n`);
} else {
  process.stdout.write(`${out}\n`);
}
