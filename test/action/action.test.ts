/**
 * The GitHub Action as a runner runs it: the committed bundle (bundle/action.mjs) copied without node_modules,
 * started with `node` and the runner's environment (INPUT_* variables with hyphens kept, GITHUB_EVENT_PATH,
 * GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_API_URL), against the fake GitHub on loopback, which checks each
 * REST request against GitHub's OpenAPI description and keeps annotations as GitHub does (appended per update).
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RULES } from '../../rules/index.js';
import { FakeGitHub } from '../support/fake-github.js';
import { example } from '../support/probot.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';

const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as {
  inputs: Record<string, { default?: string }>;
  runs: { using: string; main: string };
};

/** The Action as a release ships it: its metadata, the bundle, and the files the bundle reads; no node_modules. */
let installed: string;
beforeAll(() => {
  installed = mkdtempSync(join(tmpdir(), 'cgk-action-install-'));
  for (const file of ['action.yml', 'package.json', 'baseline.yaml', 'bundle/action.mjs'])
    cpSync(join(ROOT, file), join(installed, file));
  for (const rule of RULES)
    cpSync(join(ROOT, 'rules', rule.id, 'README.md'), join(installed, 'rules', rule.id, 'README.md'));
});

let fake: FakeGitHub;
let server: Server | undefined;
afterEach(async () => {
  expect(fake.violations).toEqual([]);
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

interface RunnerResult {
  code: number;
  stdout: string;
  stderr: string;
  summary: string;
  outputs: Record<string, string>;
  workspace: string;
}

/** Start the Action as the runner does, with defaults for every input not given (as action.yml declares them). */
async function runAction(
  files: Record<string, string>,
  inputs: Record<string, string> = {},
  extraEnv: Record<string, string> = {},
): Promise<RunnerResult> {
  const workspace = mkdtempSync(join(tmpdir(), 'cgk-action-ws-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(workspace, path, '..'), { recursive: true });
    writeFileSync(join(workspace, path), text);
  }
  const runnerTemp = mkdtempSync(join(tmpdir(), 'cgk-runner-'));
  const payload = example('pull_request', 'opened') as { pull_request: { head: { sha: string } } };
  payload.pull_request.head.sha = 'a'.repeat(40);
  const eventPath = join(runnerTemp, 'event.json');
  writeFileSync(eventPath, JSON.stringify(payload));
  const summary = join(runnerTemp, 'summary.md');
  const output = join(runnerTemp, 'output.txt');
  const { port } = await fake.listen(0).then((listening) => ((server = listening.server), listening));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: runnerTemp,
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    GITHUB_REPOSITORY: 'octo-org/trainer',
    GITHUB_EVENT_NAME: 'pull_request',
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_SHA: 'b'.repeat(40),
    GITHUB_API_URL: `http://127.0.0.1:${port}/api/v3`,
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_OUTPUT: output,
    ...extraEnv,
  };
  for (const [name, declared] of Object.entries(action.inputs)) {
    const value =
      inputs[name] ?? (declared.default === '${{ github.token }}' ? 'ghs_jobtoken' : (declared.default ?? ''));
    env[`INPUT_${name.toUpperCase()}`] = value;
  }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(installed, action.runs.main)],
      { cwd: workspace, env, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
        resolve({
          code: error ? Number((error as { code?: number }).code ?? 1) : 0,
          stdout,
          stderr,
          summary: read(summary),
          outputs: Object.fromEntries(
            read(output)
              .split('\n')
              .filter(Boolean)
              .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
          ),
          workspace,
        });
      },
    );
  });
}

const MISMATCH = codeBlock`
  FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
  RUN pip install torch==2.3.0+cu118 --index-url https://download.pytorch.org/whl/cu118
`;

describe('GitHub Action (the bundle, as a runner runs it)', () => {
  it('is a prebuilt node24 action whose inputs are the ones the code reads', () => {
    fake = new FakeGitHub();
    expect(action.runs).toEqual({ using: 'node24', main: 'bundle/action.mjs' });
    const source = readFileSync(join(ROOT, 'src', 'action', 'main.ts'), 'utf8');
    const read = new Set([...source.matchAll(/input\(io, '([a-z-]+)'\)/g)].map((match) => match[1]!));
    expect([...read].sort()).toEqual(Object.keys(action.inputs).sort());
  });

  it('posts a check run with every annotation in batches of 50, a job summary, SARIF and outputs; fails on errors', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    // 60 services, each with a Dockerfile whose wheel does not match its image: 120+ findings.
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++) files[`svc${i}/Dockerfile`] = MISMATCH;
    const result = await runAction(files);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const sarif = JSON.parse(readFileSync(join(result.workspace, 'cuda-gatekeeper.sarif'), 'utf8')) as {
      runs: { results: unknown[] }[];
    };
    const findings = sarif.runs[0]!.results.length;
    expect(findings).toBeGreaterThan(100);
    expect(fake.checkRuns).toHaveLength(1);
    const run = fake.checkRuns[0]!;
    expect(run).toMatchObject({
      name: 'CUDA gatekeeper (Action)',
      head_sha: 'a'.repeat(40),
      status: 'completed',
      conclusion: 'failure',
    });
    expect(run.annotations).toHaveLength(findings);
    const posts = fake.requests.filter((request) => request.path.includes('/check-runs'));
    expect(posts.map((request) => request.method)).toEqual([
      'POST',
      ...Array.from({ length: Math.ceil(findings / 50) - 1 }, () => 'PATCH'),
    ]);
    expect(result.summary).toContain('## CUDA gatekeeper:');
    expect(result.summary).toContain('svc0/Dockerfile');
    expect(result.outputs).toMatchObject({ conclusion: 'failure', 'sarif-file': 'cuda-gatekeeper.sarif' });
    expect(Number(result.outputs.errors)).toBeGreaterThan(0);
    expect(result.outputs['check-run-url']).toMatch(/^https?:\/\//);
    // The annotations are on the check run, not repeated as workflow commands.
    expect(result.stdout).not.toContain('::error file=');
  });

  it('without checks: write (a fork pull request gets a read-only token) it falls back to workflow commands', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    // GitHub's answer to a GITHUB_TOKEN without the permission
    // (docs.github.com/en/rest/checks/runs#create-a-check-run).
    fake.fail({
      method: 'POST',
      path: /\/check-runs$/,
      status: 403,
      body: {
        message: 'Resource not accessible by integration',
        documentation_url: 'https://docs.github.com/rest/checks/runs#create-a-check-run',
        status: '403',
      },
      times: 1,
    });
    const result = await runAction({ Dockerfile: MISMATCH });
    expect(result.code).toBe(1);
    expect(fake.checkRuns).toHaveLength(0);
    expect(result.stdout).toMatch(
      /^::warning::cuda-gatekeeper could not create its check run: the token may not create check runs/m,
    );
    expect(result.stdout).toMatch(/^::error file=Dockerfile,line=2,.*title=cuda-mismatch::/m);
    expect(result.summary).toContain('## CUDA gatekeeper:');
  });

  it('fail-on never: exit 0 and a neutral check; fail-on warning fails on warnings', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    const never = await runAction({ Dockerfile: MISMATCH }, { 'fail-on': 'never' });
    expect(never.code).toBe(0);
    expect(fake.checkRuns[0]).toMatchObject({ conclusion: 'neutral' });
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    const warning = await runAction({ 'requirements.txt': 'torch>=2.0\n' }, { 'fail-on': 'warning' });
    expect(warning.code).toBe(1);
    expect(fake.checkRuns[1]).toMatchObject({ conclusion: 'failure' });
  });

  it('an invalid baseline: exit 2, the positioned error, no SARIF file and no check run', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    const result = await runAction(
      {
        Dockerfile: MISMATCH,
        'policy.yml': codeBlock`
          cuda:
            allowed: ["12.7"]
        `,
      },
      { baseline: 'policy.yml' },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'policy.yml:2:13: error: cuda.allowed lists CUDA 12.7, which NVIDIA never released [policy-error]',
    );
    // Issue 30: the problem is an annotation on the baseline file at its position, with the summary and outputs.
    expect(result.stdout).toMatch(
      /^::error file=policy\.yml,line=2,col=13,title=cuda-gatekeeper%3A invalid baseline::cuda.allowed lists CUDA 12.7/m,
    );
    expect(result.summary).toContain('## CUDA gatekeeper: the baseline is invalid');
    expect(result.summary).toContain('`policy.yml:2:13`: cuda.allowed lists CUDA 12.7');
    expect(result.outputs).toMatchObject({ conclusion: 'failure', errors: '1' });
    expect(existsSync(join(result.workspace, 'cuda-gatekeeper.sarif'))).toBe(false);
    expect(fake.checkRuns).toHaveLength(0);
  });

  it('sarif-file in a folder that does not exist: the folder is made, and annotations, summary and outputs follow', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    const result = await runAction({ Dockerfile: MISMATCH }, { 'sarif-file': 'reports/x.sarif' });
    expect(result.code).toBe(1);
    expect(JSON.parse(readFileSync(join(result.workspace, 'reports', 'x.sarif'), 'utf8'))).toMatchObject({
      version: '2.1.0',
    });
    expect(result.outputs).toMatchObject({ 'sarif-file': 'reports/x.sarif', conclusion: 'failure' });
    expect(fake.checkRuns).toHaveLength(1);
  });

  it('the summary shows each fix once, with the findings it fixes, and advice for the Action (no Apply fixes, no /cuda-check)', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    const result = await runAction({
      Dockerfile: codeBlock`
        FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04
        COPY requirements.txt .
        RUN pip install -r requirements.txt
      `,
      'requirements.txt': codeBlock`
        --extra-index-url https://download.pytorch.org/whl/cu118
        torch==2.3.0+cu118
        torchvision==0.18.0+cu118
      `,
    });
    expect(result.code).toBe(1);
    const diffs = result.summary.match(/```diff\n[\s\S]*?```/g) ?? [];
    expect(diffs.length).toBeGreaterThan(0);
    expect(new Set(diffs).size).toBe(diffs.length);
    expect(result.summary).not.toContain('Apply fixes');
    expect(result.summary).not.toContain('/cuda-check');
    expect(result.summary).toContain('cuda-gatekeeper check --fix');
  });

  it('format github without a check run writes each annotation once', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    fake.fail({
      method: 'POST',
      path: /\/check-runs$/,
      status: 403,
      body: { message: 'Resource not accessible by integration', status: '403' },
      times: 1,
    });
    const result = await runAction({ Dockerfile: MISMATCH }, { format: 'github' });
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n').filter((line) => line.startsWith('::error file=Dockerfile,line=2'));
    expect(lines.length).toBeGreaterThan(0);
    expect(new Set(lines).size).toBe(lines.length);
  });
  it('a SARIF file that cannot be written: a warning, and no sarif-file output naming a file that is not there', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    // A folder where the file should go: the write fails.
    const result = await runAction({ Dockerfile: MISMATCH, 'out.sarif/keep': '' }, { 'sarif-file': 'out.sarif' });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('::warning::cuda-gatekeeper could not write the SARIF file out.sarif');
    expect(result.outputs['sarif-file']).toBeUndefined();
    expect(result.outputs.conclusion).toBe('failure');
  });

  it('sarif-file "" writes no SARIF', async () => {
    fake = new FakeGitHub();
    fake.addRepo('octo-org/trainer', {});
    const result = await runAction({ Dockerfile: MISMATCH }, { 'sarif-file': '' });
    expect(result.code).toBe(1);
    expect(existsSync(join(result.workspace, 'cuda-gatekeeper.sarif'))).toBe(false);
    expect(result.outputs['sarif-file']).toBeUndefined();
  });
});

describe('GitHub Action against a GitHub that does not answer (issue 30)', () => {
  it('an API that accepts the connection and never answers: the request times out, the job still reports', async () => {
    fake = new FakeGitHub();
    const { createServer } = await import('node:http');
    const silent = createServer(() => undefined); // accepts, reads, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    // The run ends (the API never would): the request gave up after GITHUB_REQUEST_TIMEOUT_MS, as its message says.
    const result = await runAction(
      { Dockerfile: MISMATCH },
      {},
      { GITHUB_API_URL: `http://127.0.0.1:${port}/api/v3`, GITHUB_REQUEST_TIMEOUT_MS: '1000' },
    );
    silent.closeAllConnections();
    silent.close();
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /could not create its check run: GitHub at http:\/\/127\.0\.0\.1:\d+\/api\/v3 did not answer within 1 s/,
    );
    expect(result.stdout).toMatch(/^::error file=Dockerfile,line=2,/m);
    expect(result.summary).toContain('## CUDA gatekeeper:');
  });

  it('a refused connection is said as such, not as "GitHub answered 500"', async () => {
    fake = new FakeGitHub();
    const { createServer } = await import('node:http');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await runAction({ Dockerfile: MISMATCH }, {}, { GITHUB_API_URL: `http://127.0.0.1:${port}/api/v3` });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`the connection to http://127.0.0.1:${port}/api/v3 was refused`);
    expect(result.stdout).not.toContain('answered 500');
  });
});
