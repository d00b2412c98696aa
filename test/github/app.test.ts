/**
 * The GitHub App with Probot, real webhook payloads and a spec-validating fake GitHub (through nock).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/util/package-root.js';
import { FakeGitHub } from '../support/fake-github.js';
import { setup, teardown, type LogLine } from '../support/probot.js';
import { checkRunPayload, checkSuitePayload, FULL, pullScenario } from '../support/scenario.js';
import type { Probot } from 'probot';
import { codeBlock } from '../support/code-block.js';

const DOCKERFILE = codeBlock`
  FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04
  COPY requirements.txt .
  RUN pip install -r requirements.txt
`;
const REQUIREMENTS = codeBlock`
  --extra-index-url https://download.pytorch.org/whl/cu121
  torch==2.3.0+cu121
  torchvision==0.17.0+cu121
`;
const CONFIG = codeBlock`
  cuda:
    allowed: ["12.1", "12.4"]
`;

let fake: FakeGitHub;
let probot: Probot;
let logs: LogLine[];

beforeEach(() => {
  fake = new FakeGitHub();
  ({ probot, logs } = setup(fake));
});

afterEach(() => {
  expect(fake.violations, "every request matches GitHub's API description").toEqual([]);
  teardown();
});

const calls = () => fake.requests.map((request) => `${request.method} ${request.path}`);

describe('pull request checks', () => {
  it('creates one completed check run with counts, a summary, annotations and an Apply fixes button, in 4 API calls', async () => {
    // The button needs an installation that may write contents (app.yml ships contents: read).
    fake.installationPermissions.contents = 'write';
    const scenario = pullScenario(fake, {
      main: { '.github/cuda-gatekeeper.yml': CONFIG },
      head: { Dockerfile: DOCKERFILE, 'requirements.txt': REQUIREMENTS },
      changed: ['Dockerfile', 'requirements.txt'],
    });
    await probot.receive({ id: 'delivery-1', name: 'pull_request', payload: scenario.payload } as never);

    expect(fake.checkRuns).toHaveLength(1);
    const run = fake.checkRuns[0]!;
    expect(run).toMatchObject({
      name: 'CUDA gatekeeper',
      head_sha: scenario.headSha,
      status: 'completed',
      conclusion: 'failure',
    });
    expect(run.output?.title).toBe('1 error');
    expect(run.output?.summary).toContain('| `requirements.txt` | 1 | 0 | 0 |');
    expect(run.output?.summary).toMatch(/Baseline: octo-org\/trainer:\.github\/cuda-gatekeeper\.yml@[0-9a-f]{7}/);
    expect(run.output?.summary).toMatch(/Knowledge base: data retrieved \d{4}-\d{2}-\d{2}/);
    expect(run.output?.summary).toContain(
      '```diff\n--- requirements.txt\n- torchvision==0.17.0+cu121\n+ torchvision==0.18.0+cu121',
    );
    expect(run.annotations).toEqual([
      expect.objectContaining({
        path: 'requirements.txt',
        start_line: 3,
        end_line: 3,
        start_column: 1,
        annotation_level: 'failure',
        title: 'companion-mismatch',
      }),
    ]);
    expect(run.actions).toEqual([expect.objectContaining({ identifier: 'apply_fixes', label: 'Apply fixes' })]);
    expect(calls().filter((call) => !call.includes('/reviews'))).toEqual([
      'POST /app/installations/42/access_tokens',
      `GET /repos/${FULL}/pulls/7/files`,
      'POST /graphql',
      `POST /repos/${FULL}/check-runs`,
    ]);
    const done = logs.find((line) => line.msg === 'check completed')!;
    // The token request, the file list, one GraphQL read, the check run, and the review with the suggestion.
    expect(done).toMatchObject({ deliveryId: 'delivery-1', repo: FULL, pr: 7, apiCalls: 5, suggestions: 1 });
    expect(JSON.stringify(logs)).not.toContain('BEGIN PRIVATE KEY');
  });

  it('posts safe one-line fixes on changed lines as one review with suggestion blocks, once', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'd1', name: 'pull_request', payload: scenario.payload } as never);
    const pull = fake.pull(FULL, 7)!;
    expect(pull.reviews).toHaveLength(1);
    expect(pull.reviews[0]!.comments).toEqual([
      {
        path: 'requirements.txt',
        line: 3,
        side: 'RIGHT',
        body: expect.stringContaining('```suggestion\ntorchvision==0.18.0+cu121\n```'),
      },
    ]);

    // The same commit again (a redelivery under a new id): the verdict is unchanged, so nothing is written.
    await probot.receive({
      id: 'd2',
      name: 'pull_request',
      payload: { ...scenario.payload, action: 'synchronize' },
    } as never);
    expect(pull.reviews).toHaveLength(1);
    expect(fake.checkRuns).toHaveLength(1);
    expect(fake.checkRuns[0]!.updates).toBe(0);
  });

  it('completes successfully in one check-run call when no CUDA-relevant file changed', async () => {
    const scenario = pullScenario(fake, {
      head: { 'README.md': '# hi\n', 'src/app.py': 'print(1)\n' },
      changed: ['README.md', 'src/app.py'],
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns).toEqual([
      expect.objectContaining({
        conclusion: 'success',
        output: expect.objectContaining({ title: 'No CUDA-relevant files changed' }),
      }),
    ]);
    expect(calls().filter((call) => call.includes('check-runs'))).toHaveLength(1);
  });

  it('checks a changed uv.lock with the Dockerfile that runs uv sync and the pyproject.toml beside it', async () => {
    const demo = (name: string) => readFileSync(join(packageRoot(), 'fixtures', 'repos', 'demo-uv', name), 'utf8');
    const main = { Dockerfile: demo('Dockerfile'), 'pyproject.toml': demo('pyproject.toml') };
    const scenario = pullScenario(fake, { main, head: { ...main, 'uv.lock': demo('uv.lock') }, changed: ['uv.lock'] });
    await probot.receive({ id: 'uv', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(
      (run.annotations as { path: string; start_line: number; title: string }[])
        .map((annotation) => `${annotation.path}:${annotation.start_line} ${annotation.title}`)
        .sort(),
    ).toEqual([
      'pyproject.toml:32 cuda-mismatch',
      'uv.lock:24 cuda-mismatch',
      'uv.lock:25 cuda-mismatch',
      'uv.lock:42 cuda-mismatch',
    ]);
    // The lock is never edited by the App: no Apply fixes for it.
    expect(JSON.stringify(run.actions ?? [])).not.toContain('Apply');
  });

  it('checks a changed pixi.lock with the Dockerfile that runs pixi install -e and the manifest beside it', async () => {
    const fixture = (name: string) =>
      readFileSync(join(packageRoot(), 'fixtures', 'rules', 'cuda-mismatch', 'pixi-lock-under-image', name), 'utf8');
    const main = { Dockerfile: fixture('Dockerfile'), 'pixi.toml': fixture('pixi.toml') };
    const scenario = pullScenario(fake, {
      main,
      head: { ...main, 'pixi.lock': fixture('pixi.lock') },
      changed: ['pixi.lock'],
    });
    await probot.receive({ id: 'pixi', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    const annotations = run.annotations as { path: string; start_line: number; title: string; raw_details?: string }[];
    expect(
      annotations.map((annotation) => `${annotation.path}:${annotation.start_line} ${annotation.title}`).sort(),
    ).toEqual([
      'pixi.lock:10 cuda-mismatch',
      'pixi.lock:12 cuda-mismatch',
      'pixi.lock:9 cuda-mismatch',
      'pixi.toml:13 cuda-mismatch',
    ]);
    // The lock's annotations say how a pixi.lock is changed; the App offers no edit of it.
    expect(annotations.find((annotation) => annotation.path === 'pixi.lock')!.raw_details).toContain(
      'then run pixi lock',
    );
    expect(JSON.stringify(run.actions ?? [])).not.toContain('Apply');
  });

  it('reads the lock beside a changed pyproject.toml, so its ranges are not taken for unpinned', async () => {
    const fixture = (name: string) =>
      readFileSync(join(packageRoot(), 'fixtures', 'rules', 'exact-pin', 'ok-pyproject-ranges', name), 'utf8');
    const main = { 'uv.lock': fixture('uv.lock'), '.github/cuda-gatekeeper.yml': fixture('baseline.yaml') };
    const scenario = pullScenario(fake, {
      main,
      head: { ...main, 'pyproject.toml': fixture('pyproject.toml') },
      changed: ['pyproject.toml'],
    });
    await probot.receive({ id: 'ranges', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(run.annotations ?? [])).not.toContain('exact-pin');
    // The same change in a repository without the lock: the ranges are what gets installed.
    const unlocked = pullScenario(fake, {
      main: { '.github/cuda-gatekeeper.yml': fixture('baseline.yaml') },
      head: { '.github/cuda-gatekeeper.yml': fixture('baseline.yaml'), 'pyproject.toml': fixture('pyproject.toml') },
      changed: ['pyproject.toml'],
      number: 8,
    });
    await probot.receive({ id: 'ranges-unlocked', name: 'pull_request', payload: unlocked.payload } as never);
    expect(JSON.stringify(fake.checkRuns.at(-1)!.annotations ?? [])).toContain('exact-pin');
  });

  it('reads files the change pulls in (an unchanged requirements file installed by the Dockerfile)', async () => {
    const scenario = pullScenario(fake, {
      main: {
        'requirements.txt': codeBlock`
          torch==2.1.0+cu118
          --extra-index-url https://download.pytorch.org/whl/cu118
        `,
      },
      head: { Dockerfile: DOCKERFILE },
      changed: ['Dockerfile'],
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]!.annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'requirements.txt', title: 'cuda-mismatch', annotation_level: 'failure' }),
      ]),
    );
    // requirements.txt next to a changed Dockerfile is read speculatively in the same request.
    expect(calls().filter((call) => call === 'POST /graphql')).toHaveLength(1);
  });

  it('follows less usual links with one more read', async () => {
    const dockerfile = codeBlock`
      FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04
      COPY deps/gpu.txt /tmp/gpu.txt
      RUN pip install -r /tmp/gpu.txt
    `;
    const scenario = pullScenario(fake, {
      main: {
        'docker/deps/gpu.txt': codeBlock`
          torch==2.1.0+cu118
          --extra-index-url https://download.pytorch.org/whl/cu118
        `,
      },
      head: { 'docker/Dockerfile': dockerfile },
      changed: ['docker/Dockerfile'],
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]!.annotations).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'docker/deps/gpu.txt', title: 'cuda-mismatch' })]),
    );
    expect(calls().filter((call) => call === 'POST /graphql')).toHaveLength(2);
  });

  it('checks a changed Kubernetes manifest on the pools it is pinned to, reading the Dockerfile that builds its image', async () => {
    const demo = (path: string) => readFileSync(join(packageRoot(), 'fixtures', 'repos', 'demo-fleet', path), 'utf8');
    const scenario = pullScenario(fake, {
      main: {
        '.github/cuda-gatekeeper.yml': demo('.github/cuda-gatekeeper.yml'),
        'trainer/Dockerfile': demo('trainer/Dockerfile'),
      },
      head: { 'trainer/Dockerfile': demo('trainer/Dockerfile'), 'k8s/train.yaml': demo('k8s/train.yaml') },
      changed: ['k8s/train.yaml'],
    });
    await probot.receive({ id: 'delivery-k8s', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    // The manifest's error, and the Dockerfile's own verdict (it runs only on h200), read with it.
    expect(run.annotations).toEqual([
      expect.objectContaining({
        path: 'k8s/train.yaml',
        start_line: 17,
        annotation_level: 'failure',
        title: 'driver-floor',
      }),
      expect.objectContaining({
        path: 'trainer/Dockerfile',
        start_line: 2,
        annotation_level: 'warning',
        title: 'driver-floor',
      }),
    ]);
    expect((run.annotations[0] as { message: string }).message).toContain(
      'which no pool it is scheduled on can run: a100-legacy (driver 550.127.05)',
    );
    // The pool table: the pinned job fails on its pool and is not scheduled elsewhere; the H200 job runs.
    expect(run.output?.summary).toContain(
      '| Unit | a100-legacy (550.127.05) | h200 (580.159.04) | dev-rtx4090 (570.172.08) |',
    );
    expect(run.output?.summary).toContain(
      '| `k8s/train.yaml`:17 (CronJob/nightly-finetune, container train) | ❌ fails [1] | — not scheduled [2] | — not scheduled [3] |',
    );
    expect(run.output?.summary).toContain('| `k8s/train.yaml`:41 (Job/eval, container eval) | — not scheduled');
    // The Dockerfile is named by the baseline, which the first read brings: one more read, whatever the manifest holds.
    expect(calls().filter((call) => call === 'POST /graphql')).toHaveLength(2);
  });

  it('fails closed on a changed YAML file GitHub will not show: it could be a manifest, so it is not a pass', async () => {
    const scenario = pullScenario(fake, {
      head: {
        'deploy/train.yaml': codeBlock`
          apiVersion: batch/v1
          kind: Job
        `,
      },
      changed: ['deploy/train.yaml'],
    });
    fake.refusedPaths.set('deploy/train.yaml', 'Resource protected by organization SAML enforcement.');
    await probot.receive({ id: 'delivery-refused', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run.output?.title).toMatch(
      /^1 file not checked \(deploy\/train\.yaml: could not be read to tell whether it is a Kubernetes manifest/,
    );
  });

  it('sends annotations in batches of 50 (120 library findings under the bundled default)', async () => {
    const lines = Array.from({ length: 120 }, (_, i) => `nvidia-lib${i}-cu11==1.0.${i}`);
    const scenario = pullScenario(fake, {
      head: {
        'requirements.txt': `torch==2.1.0+cu121\n--extra-index-url https://download.pytorch.org/whl/cu121\n${lines.join('\n')}\n`,
      },
      changed: ['requirements.txt'],
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run.annotations).toHaveLength(120);
    expect(run.updates).toBe(2);
    expect(
      fake.requests
        .filter((request) => request.path.includes('check-runs'))
        .map(
          (request) => ((request.body as { output?: { annotations?: unknown[] } }).output?.annotations ?? []).length,
        ),
    ).toEqual([50, 50, 20]);
  });

  it('reads the baseline from the default branch, never from the pull request', async () => {
    const scenario = pullScenario(fake, {
      main: {
        '.github/cuda-gatekeeper.yml': codeBlock`
          cuda:
            allowed: ["12.4"]
        `,
      },
      head: {
        '.github/cuda-gatekeeper.yml': codeBlock`
          cuda:
            allowed: ["12.1"]
        `,
        'requirements.txt': codeBlock`
          --index-url https://download.pytorch.org/whl/cu121
          torch==2.3.0+cu121
        `,
      },
      changed: ['.github/cuda-gatekeeper.yml', 'requirements.txt'],
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]!.annotations).toEqual(
      expect.arrayContaining([expect.objectContaining({ title: 'cuda-not-allowed' })]),
    );
  });

  it('reports an invalid repository baseline as policy-error with its position, without crashing', async () => {
    const scenario = pullScenario(fake, {
      main: {
        '.github/cuda-gatekeeper.yml': codeBlock`
          cuda:
            allowd: ["12.4"]
        `,
      },
      head: { 'requirements.txt': 'torch==2.3.0\n' },
      changed: ['requirements.txt'],
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]).toMatchObject({ conclusion: 'failure' });
    expect(fake.checkRuns[0]!.annotations).toEqual([
      expect.objectContaining({
        path: '.github/cuda-gatekeeper.yml',
        start_line: 2,
        title: 'policy-error',
        message: 'unknown key "allowd" in cuda',
      }),
    ]);
  });

  it('layers the organisation baseline and rejects weakening a locked key', async () => {
    const scenario = pullScenario(fake, {
      org: {
        'cuda-gatekeeper.yml': codeBlock`
          cuda:
            allowed: ["12.4"]
          locked: ["cuda.allowed"]
        `,
      },
      main: {
        '.github/cuda-gatekeeper.yml': codeBlock`
          _extends: .github
          cuda:
            allowed: ["12.1", "12.4"]
        `,
      },
      head: {
        'requirements.txt': codeBlock`
          --index-url https://download.pytorch.org/whl/cu121
          torch==2.3.0+cu121
        `,
      },
      changed: ['requirements.txt'],
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    const titles = (fake.checkRuns[0]!.annotations as { title: string; message: string }[]).map(
      (annotation) => `${annotation.title}: ${annotation.message}`,
    );
    expect(titles).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^policy-error: cuda\.allowed is locked by octo-org\/\.github:cuda-gatekeeper\.yml@[0-9a-f]{7}: it adds CUDA versions 12\.1$/,
        ),
        expect.stringMatching(/^cuda-not-allowed: /),
      ]),
    );
    expect(fake.checkRuns[0]!.output?.summary).toMatch(
      /Baseline: octo-org\/\.github:cuda-gatekeeper\.yml@\w{7} \+ octo-org\/trainer:\.github\/cuda-gatekeeper\.yml@\w{7}/,
    );
  });

  it('applies waivers from the organisation baseline, and reports expired ones', async () => {
    const scenario = pullScenario(fake, {
      org: {
        'cuda-gatekeeper.yml': codeBlock`
          waivers:
            - rule: companion-mismatch
              repo: trainer
              reason: torchvision is rebuilt in-house
              owner: ml-platform
              expires: 2999-12-31
            - rule: cuda-not-allowed
              repo: "*"
              reason: old exception
              owner: ml-platform
              expires: 2020-01-31
        `,
      },
      head: { 'requirements.txt': REQUIREMENTS },
      changed: ['requirements.txt'],
    });
    await probot.receive({ id: 'w', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect((run.annotations as { title: string }[]).map((annotation) => annotation.title)).not.toContain(
      'companion-mismatch',
    );
    expect(run.output?.summary).toContain('1 finding is waived by the baseline.');
    // A problem of the organisation's file is no annotation (this repository has no such path): the summary lists it,
    // linked.
    expect((run.annotations as { path: string }[]).map((annotation) => annotation.path)).not.toContain(
      'octo-org/.github/cuda-gatekeeper.yml',
    );
    expect(run.output?.summary).toMatch(
      /### Baseline problems[\s\S]*\[`octo-org\/\.github\/cuda-gatekeeper\.yml:7`\]\(https:\/\/github\.com\/octo-org\/\.github\/blob\/[0-9a-f]{40}\/cuda-gatekeeper\.yml#L7\): the waiver of cuda-not-allowed for \* expired on 2020-01-31 \(owner ml-platform\)/,
    );
    expect(fake.annotationProblems).toEqual([]);
  });

  it('re-runs on "Re-run all checks" and "Re-run" with a new run each, every annotation once per run', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'd1', name: 'pull_request', payload: scenario.payload } as never);
    await probot.receive({
      id: 'd2',
      name: 'check_suite',
      payload: checkSuitePayload(fake, scenario, 'rerequested'),
    } as never);
    await probot.receive({
      id: 'd3',
      name: 'check_run',
      payload: checkRunPayload(fake, scenario, fake.checkRuns.at(-1)!, 'rerequested'),
    } as never);
    expect(fake.checkRuns).toHaveLength(3);
    for (const run of fake.checkRuns) expect(run.annotations).toEqual(fake.checkRuns[0]!.annotations);
    expect(fake.checkRuns.every((run) => run.status === 'completed' && run.updates === 0)).toBe(true);
  });

  it('does not create a second check run for a redelivered webhook of the same head commit', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await Promise.all([
      probot.receive({ id: 'same', name: 'pull_request', payload: scenario.payload } as never),
      probot.receive({ id: 'same', name: 'pull_request', payload: scenario.payload } as never),
    ]);
    expect(fake.checkRuns).toHaveLength(1);
  });

  it('skips files over 1 MiB and binary files with a notice in the summary', async () => {
    const big = `torch==2.3.0\n${'# padding\n'.repeat(110_000)}`;
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': big, 'requirements-bin.txt': 'torch\0\0' },
      changed: ['requirements.txt', 'requirements-bin.txt'],
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]!.output?.summary).toContain('### Not checked');
    expect(fake.checkRuns[0]!.output?.summary).toContain('`requirements.txt`: 1 MiB, over the 1 MiB size limit');
    expect(fake.checkRuns[0]!.output?.summary).toContain('`requirements-bin.txt`: binary file');
  });
});

describe('a UTF-16 file (GitHub calls it binary)', () => {
  it('reads it whole through REST and checks it by its byte-order mark, one call more', async () => {
    // A requirements file a Windows editor saved as UTF-16LE: the bytes FF FE, then two bytes a character.
    const utf16 = String.fromCharCode(...Buffer.from(`\ufeff${REQUIREMENTS}`, 'utf16le'));
    const scenario = pullScenario(fake, { head: { 'requirements.txt': utf16 }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run.output?.summary).not.toContain('binary file');
    expect(run.annotations).toEqual([
      expect.objectContaining({ path: 'requirements.txt', start_line: 3, title: 'companion-mismatch' }),
    ]);
    expect(fake.requests.filter((request) => request.path.includes('/git/blobs/'))).toHaveLength(1);
  });
});

describe('faults: the check always ends completed with an explanation', () => {
  it.each([
    [500, /GitHub answered 500/],
    [502, /GitHub answered 502/],
    [403, /refused the request \(403/],
    [404, /404.*deleted/],
  ])('GitHub answering %i to the file list', async (status, explanation) => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.fail({
      method: 'GET',
      path: /\/pulls\/7\/files$/,
      status,
      ...(status === 403
        ? { headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 60) } }
        : {}),
    });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns).toEqual([
      expect.objectContaining({
        status: 'completed',
        conclusion: 'failure',
        output: expect.objectContaining({
          title: 'cuda-gatekeeper could not check this pull request',
          summary: expect.stringMatching(explanation),
        }),
      }),
    ]);
    expect(logs.some((line) => line.msg === 'check failed')).toBe(true);
  });

  it('a GraphQL error (a deleted branch) completes the check with the reason', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.fail({ method: 'POST', path: /^\/graphql$/, status: 502 });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]).toMatchObject({ status: 'completed', conclusion: 'failure' });
  });

  it('when even the failure cannot be reported, it logs and does not throw', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.fail({ path: /\/check-runs/, status: 503, times: 5 });
    await probot.receive({ id: 'd', name: 'pull_request', payload: scenario.payload } as never);
    expect(logs.some((line) => line.msg === 'could not report the failure on a check run')).toBe(true);
  });
});

describe('a change to the Dockerfile of an image a workload runs (issue 48)', () => {
  it('judges the manifests that run the image with the new Dockerfile: the CronJob on the R550 pool fails', async () => {
    const config = codeBlock`
      images:
        ghcr.io/acme/trainer: trainer/Dockerfile
      fleet:
        pools:
          - { name: a100-legacy, driver: "550.127.05", gpus: [A100], class: data-center, labels: { pool: a100-legacy } }
    `;
    const cronjob = codeBlock`
      apiVersion: batch/v1
      kind: CronJob
      metadata:
        name: nightly
      spec:
        schedule: "0 3 * * *"
        jobTemplate:
          spec:
            template:
              spec:
                nodeSelector:
                  pool: a100-legacy
                containers:
                  - name: train
                    image: ghcr.io/acme/trainer:2026.12
                    resources:
                      limits:
                        nvidia.com/gpu: 8
    `;
    const scenario = pullScenario(fake, {
      main: {
        '.github/cuda-gatekeeper.yml': config,
        'trainer/Dockerfile': 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n',
        'deploy/nightly.yaml': cronjob,
        '.github/workflows/ci.yml': 'on: push\njobs: {}\n',
      },
      head: { 'trainer/Dockerfile': 'FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04\n' },
      changed: ['trainer/Dockerfile'],
    });
    await probot.receive({ id: 'delivery-images', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns.at(-1)!;
    expect(run.conclusion).toBe('failure');
    expect(run.annotations).toContainEqual(
      expect.objectContaining({ path: 'deploy/nightly.yaml', title: 'driver-floor', annotation_level: 'failure' }),
    );
  });
});
