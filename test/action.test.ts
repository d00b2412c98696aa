/** The GitHub Action and the pre-commit hook definitions, exercised the way GitHub and pre-commit run them. */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { classifyPath } from '../src/parsers/index.js';
import { ROOT } from './harness.js';

describe('GitHub Action', () => {
  const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as {
    inputs: Record<string, unknown>;
    runs: { using: string; steps: { run?: string; env?: Record<string, string> }[] };
  };

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js'))) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT });
  }, 120_000);

  it('declares its inputs and passes every one to the check step', () => {
    expect(Object.keys(action.inputs).sort()).toEqual(['baseline', 'baseline-ref', 'changed-since', 'paths', 'sarif']);
    expect(action.runs.using).toBe('composite');
    const check = action.runs.steps.find((step) => step.run?.includes('action/run.sh'))!;
    expect(Object.keys(check.env!).sort()).toEqual(['INPUT_BASELINE', 'INPUT_BASELINE_REF', 'INPUT_CHANGED_SINCE', 'INPUT_PATHS', 'INPUT_SARIF']);
  });

  it('writes annotations and a SARIF file, and fails on error-level findings', () => {
    const workspace = mkdtempSync(join(tmpdir(), 'cgk-action-'));
    cpSync(join(ROOT, 'fixtures', 'repos', 'demo'), workspace, { recursive: true });
    const output = join(workspace, 'github-output.txt');
    const result = spawnSync('bash', [join(ROOT, 'action', 'run.sh')], {
      cwd: workspace,
      encoding: 'utf8',
      env: {
        ...process.env,
        GITHUB_ACTION_PATH: ROOT,
        GITHUB_OUTPUT: output,
        INPUT_PATHS: '.',
        INPUT_BASELINE: 'baseline.yaml',
        INPUT_CHANGED_SINCE: '',
        INPUT_SARIF: 'out.sarif',
      },
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^::error file=requirements\.txt,line=3,col=1,.*title=companion-mismatch::/m);
    const sarif = JSON.parse(readFileSync(join(workspace, 'out.sarif'), 'utf8')) as { version: string; runs: { results: unknown[] }[] };
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.runs[0]!.results.length).toBeGreaterThan(0);
    expect(readFileSync(output, 'utf8')).toBe('sarif=out.sarif\n');
  });

  it("stops with the CLI's message on an invalid baseline", () => {
    const workspace = mkdtempSync(join(tmpdir(), 'cgk-action-'));
    const result = spawnSync('bash', [join(ROOT, 'action', 'run.sh')], {
      cwd: workspace,
      encoding: 'utf8',
      env: { ...process.env, GITHUB_ACTION_PATH: ROOT, INPUT_BASELINE: 'missing.yml' },
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('cannot read baseline missing.yml');
  });
});

describe('pre-commit hook', () => {
  const hooks = parse(readFileSync(join(ROOT, '.pre-commit-hooks.yaml'), 'utf8')) as { id: string; entry: string; files: string; language: string }[];

  it('runs the check command on the files the CLI checks', () => {
    const hook = hooks.find((candidate) => candidate.id === 'cuda-gatekeeper')!;
    expect(hook).toMatchObject({ entry: 'cuda-gatekeeper check', language: 'node' });
    const files = new RegExp(hook.files);
    for (const path of [
      'Dockerfile',
      'docker/Dockerfile.gpu',
      'train.Dockerfile',
      'requirements.txt',
      'requirements-dev.in',
      'requirements/base.txt',
      'environment.yml',
      'conda-env.yaml',
      'src/main.py',
      'README.md',
      'docker-compose.yml',
      'notes.txt',
    ]) {
      expect(files.test(path), path).toBe(classifyPath(path) !== undefined);
    }
  });
});
