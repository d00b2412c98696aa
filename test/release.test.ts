/**
 * The release as users meet it (issue 30): the workflows are valid GitHub workflows (checked against the
 * workflow schema by action-validator, a dev-only tool), the CLI's npm package has no dependencies and works
 * from a global install with nothing else, and the release notes are the version's CHANGELOG section.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateWorkflow } from '@action-validator/core';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/harness.js';
import { withoutExamples } from '../src/rule.js';

const workflows = readdirSync(join(ROOT, '.github', 'workflows')).filter((name) => /\.ya?ml$/.test(name));

function bytesUnder(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.size;
  return readdirSync(path).reduce((sum, name) => sum + bytesUnder(join(path, name)), 0);
}

describe('the release', () => {
  it.each(workflows)('%s is a valid workflow (the workflow schema)', (name) => {
    const { errors } = validateWorkflow(readFileSync(join(ROOT, '.github', 'workflows', name), 'utf8'));
    expect(errors).toEqual([]);
  });

  it("the README's workflow snippets are valid workflows", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const snippets = [...readme.matchAll(/```yaml\n(# \.github\/workflows\/[\s\S]*?)```/g)].map((match) => match[1]!);
    expect(snippets.length).toBeGreaterThan(0);
    for (const snippet of snippets) expect(validateWorkflow(snippet).errors, snippet).toEqual([]);
  });

  it('runs on version tags, tests first, and publishes with provenance, the image and the Action tag', () => {
    const release = parse(readFileSync(join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8')) as {
      on: { push: { tags: string[] } };
      jobs: Record<
        string,
        { needs?: string | string[]; permissions?: Record<string, string>; steps: { run?: string }[] }
      >;
    };
    expect(release.on.push.tags).toEqual(['v[0-9]+.[0-9]+.[0-9]+']);
    expect(release.jobs.npm!.needs).toBe('test');
    expect(release.jobs.npm!.permissions).toMatchObject({ 'id-token': 'write' });
    expect(
      release.jobs.npm!.steps.some((step) => step.run?.includes('npm publish') && step.run.includes('--provenance')),
    ).toBe(true);
    expect(release.jobs.image!.permissions).toMatchObject({ packages: 'write' });
    expect(release.jobs.action!.needs).toEqual(['npm', 'image']);
  });

  it("the release notes are the version's CHANGELOG section", () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const workflow = readFileSync(join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8');
    const awk = /awk (-v v="## \$\{version\}" '[^']+') CHANGELOG\.md/.exec(workflow)?.[1];
    expect(awk).toBeDefined();
    const notes = execFileSync('sh', ['-c', `version=${version}; awk ${awk} CHANGELOG.md`], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(notes).toContain('The first release: one engine');
    expect(notes).not.toMatch(/^## /m);
    // The version's section only: not the development log that follows it.
    expect(notes).not.toContain('(issue 32)');
    expect(Buffer.byteLength(notes)).toBeLessThan(8 * 1024);
  });

  it('publishes by trusted publishing: no npm token, OIDC, an npm that supports it', () => {
    const workflow = readFileSync(join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8');
    expect(workflow).not.toMatch(/NODE_AUTH_TOKEN|secrets\.NPM_TOKEN/);
    const npm = /npm install -g npm@(\d+)\.(\d+)\.(\d+)/.exec(workflow);
    expect(npm).not.toBeNull();
    const [major, minor, patch] = npm!.slice(1).map(Number) as [number, number, number];
    expect(major * 1e6 + minor * 1e3 + patch).toBeGreaterThanOrEqual(11 * 1e6 + 5 * 1e3 + 1); // 11.5.1
  });

  it("the packed CLI names the workflow's repository, and npm publish --dry-run accepts it", () => {
    const work = mkdtempSync(join(tmpdir(), 'cgk-publish-'));
    const tarball = execFileSync(
      process.execPath,
      [join(ROOT, 'scripts', 'pack-cli.mjs'), '--out', join(work, 'package'), '--pack'],
      { encoding: 'utf8' },
    ).trim();
    const manifest = JSON.parse(readFileSync(join(work, 'package', 'package.json'), 'utf8')) as {
      repository?: { url?: string };
    };
    // npm refuses a provenance publish whose repository.url does not match the repository the workflow runs in.
    expect(manifest.repository?.url).toBe('git+https://github.com/cuda-gatekeeper/cuda-gatekeeper.git');
    const dry = spawnSync('npm', ['publish', tarball, '--dry-run', '--access', 'public'], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, npm_config_registry: 'https://registry.npmjs.org/' },
    });
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stderr + dry.stdout).toContain('cuda-gatekeeper');
  });

  it('the CLI package has no dependencies and works from a global install with nothing else installed', () => {
    const work = mkdtempSync(join(tmpdir(), 'cgk-release-'));
    const tarball = execFileSync(
      process.execPath,
      [join(ROOT, 'scripts', 'pack-cli.mjs'), '--out', join(work, 'package'), '--pack'],
      {
        encoding: 'utf8',
      },
    ).trim();
    const manifest = JSON.parse(readFileSync(join(work, 'package', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.bin).toEqual({ 'cuda-gatekeeper': 'bin/cuda-gatekeeper.js' });
    const prefix = join(work, 'prefix');
    // --offline: a package without dependencies needs nothing from the registry.
    const installed = spawnSync(
      'npm',
      ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
      { encoding: 'utf8' },
    );
    expect(installed.status, installed.stderr).toBe(0);
    expect(installed.stdout + installed.stderr).toContain('added 1 package');
    expect(bytesUnder(join(prefix, 'lib', 'node_modules', 'cuda-gatekeeper'))).toBeLessThan(3 * 1024 * 1024);
    // The CHANGELOG's release sections; the development log before the first release stays in the repository.
    const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
    const releases = changelog.slice(0, changelog.indexOf('## Before 0.1.0'));
    const packed = readFileSync(join(work, 'package', 'CHANGELOG.md'), 'utf8');
    expect(packed.startsWith(releases)).toBe(true);
    expect(packed.length).toBeLessThan(releases.length + 400);
    // The rules' READMEs as SARIF's help carries them: pack-cli strips the examples as src/rule.ts does.
    expect(readFileSync(join(work, 'package', 'rules', 'cuda-mismatch', 'README.md'), 'utf8')).toBe(
      withoutExamples(readFileSync(join(ROOT, 'rules', 'cuda-mismatch', 'README.md'), 'utf8'), 'cuda-mismatch'),
    );
    const bin = join(prefix, 'bin', 'cuda-gatekeeper');
    const demo = spawnSync(bin, ['check', '.'], { cwd: join(ROOT, 'fixtures', 'repos', 'demo'), encoding: 'utf8' });
    expect(demo.status, demo.stderr).toBe(1);
    expect(demo.stdout).toMatch(/error: .*\[cuda-mismatch\]/);
    const sarif = spawnSync(bin, ['check', '.', '--format', 'sarif'], {
      cwd: join(ROOT, 'fixtures', 'repos', 'demo'),
      encoding: 'utf8',
    });
    expect(
      (JSON.parse(sarif.stdout) as { runs: { tool: { driver: { rules: { help?: unknown }[] } } }[] }).runs[0]!.tool
        .driver.rules[0]!.help,
    ).toBeDefined();
    expect(spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim()).toBe(manifest.version);
  });
});
