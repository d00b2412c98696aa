/** The organisation baseline's lifecycle: config pull requests are validated and previewed; merges re-check. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import type { AppDeps } from '../../src/github/deps.js';
import type { Fanout } from '../../src/github/jobs.js';
import { MemoryPathIndex, type BranchPush, type PathEntry, type PathIndex } from '../../src/github/path-index.js';
import { FakeGitHub } from '../support/fake-github.js';
import { example, setup, teardown } from '../support/probot.js';
import { addedPatch, baselinePush, configPull as sharedConfigPull } from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

const OWNER = 'octo-org';
const OLD = codeBlock`
  cuda:
    allowed: ["12.1", "12.4"]
`;
let fake: FakeGitHub;
let probot: Probot;
let deps: AppDeps;

/** The App's path index, which a reference preview looks past: as if it were empty (nothing found, nothing kept). */
class BypassableIndex implements PathIndex {
  bypass = false;
  private readonly inner = new MemoryPathIndex();
  get(repo: string) {
    return this.bypass ? Promise.resolve(undefined) : this.inner.get(repo);
  }
  put(repo: string, entry: PathEntry) {
    return this.bypass ? Promise.resolve() : this.inner.put(repo, entry);
  }
  pushed(repo: string, push: BranchPush) {
    return this.inner.pushed(repo, push);
  }
}
let index: BypassableIndex;

beforeEach(() => {
  fake = new FakeGitHub();
  index = new BypassableIndex();
  ({ probot, deps } = setup(fake, { deps: { paths: index } }));
  fake.addRepo(`${OWNER}/.github`, { 'cuda-gatekeeper.yml': OLD });
  fake.addRepo(`${OWNER}/trainer`, {
    'requirements.txt': codeBlock`
      --index-url https://download.pytorch.org/whl/cu121
      torch==2.3.0+cu121
    `,
  });
  fake.addRepo(`${OWNER}/serving`, { Dockerfile: 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n' });
  const head = fake.commit({
    'requirements.txt': codeBlock`
      --index-url https://download.pytorch.org/whl/cu124
      torch==2.5.1+cu124
    `,
  });
  fake.addPull(`${OWNER}/trainer`, {
    number: 3,
    headSha: head,
    headRef: 'upgrade',
    headRepo: `${OWNER}/trainer`,
    files: [{ filename: 'requirements.txt', status: 'modified', patch: addedPatch('torch==2.5.1+cu124') }],
  });
});

afterEach(() => {
  expect(fake.violations).toEqual([]);
  teardown();
});

const configPull = (text: string) => sharedConfigPull(fake, OWNER, text);

const previewRun = () => fake.checkRuns.find((run) => run.repo === `${OWNER}/.github`)!;

describe('a pull request to the organisation baseline', () => {
  it('previews the blast radius: repositories and open pull requests that newly fail', async () => {
    await probot.receive({
      id: 'p1',
      name: 'pull_request',
      payload: configPull(codeBlock`
        cuda:
          allowed: ["12.4"]
      `),
    } as never);
    await deps.fanout.idle();
    const run = previewRun();
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run.output?.title).toBe('Would newly fail 1 repository or pull request');
    expect(run.output?.summary).toContain(
      '| [trainer](https://github.test/octo-org/trainer) | newly fails | 0 | 1 | |',
    );
    expect(run.output?.summary).not.toContain('[serving]');
    expect(run.output?.text).toContain('| [serving](https://github.test/octo-org/serving) | unchanged | 0 | 0 |');
    expect(run.output?.text).toContain('| [trainer#3](https://github.test/octo-org/trainer/pull/3) | unchanged |');
  });

  it('counts pools as well as repositories: a fleet whose old pool cannot run an image says so by pool', async () => {
    fake.addRepo(`${OWNER}/inference`, { Dockerfile: 'FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04\n' });
    const fleet = codeBlock`
      cuda:
        allowed: ["12.1", "12.4", "13.0"]
      fleet:
        pools:
          - { name: a100-legacy, driver: "550.127.05", gpus: [A100], class: data-center }
          - { name: h200, driver: "580.159.04", gpus: [H200], class: data-center }
    `;
    await probot.receive({ id: 'p-pools', name: 'pull_request', payload: configPull(fleet) } as never);
    await deps.fanout.idle();
    const run = previewRun();
    // CUDA 13.0 runs on h200 only: a warning for the repository, and a failure on the a100-legacy pool.
    expect(run.output?.summary).toContain('- would newly fail on pool **a100-legacy**: 1 repository or pull request');
    expect(run.output?.summary).not.toContain('pool **h200**');
  });

  it('is neutral when the change breaks nothing', async () => {
    await probot.receive({
      id: 'p2',
      name: 'pull_request',
      payload: configPull(codeBlock`
        cuda:
          allowed: ["12.1", "12.4", "12.6"]
      `),
    } as never);
    await deps.fanout.idle();
    expect(previewRun()).toMatchObject({
      conclusion: 'neutral',
      output: expect.objectContaining({ title: 'Breaks nothing (0 newly pass, 0 change findings)' }),
    });
  });

  it('fails with positioned annotations when the new baseline is invalid', async () => {
    await probot.receive({
      id: 'p3',
      name: 'pull_request',
      payload: configPull(
        codeBlock`
          cuda:
            allowed: ["12.4"]
          waivers:
            - rule: exact-pin
              repo: trainer
              reason: legacy
        `,
      ),
    } as never);
    await deps.fanout.idle();
    expect(previewRun()).toMatchObject({ conclusion: 'failure' });
    expect(previewRun().annotations).toEqual([
      expect.objectContaining({
        path: 'cuda-gatekeeper.yml',
        start_line: 4,
        title: 'policy-error',
        message: 'waivers.0.owner is required',
      }),
      expect.objectContaining({ message: 'waivers.0.expires is required' }),
    ]);
  });
});

describe('the preview reads through the path index', () => {
  const treeReads = () => fake.requests.filter((request) => request.path.includes('/git/trees/')).length;
  let pushes = 0;
  /**
   * A push to `repo`'s default branch: its head becomes `files`, and the event lists `commits` (as GitHub sends it).
   */
  async function push(
    repo: string,
    files: Record<string, string>,
    commits: { added?: string[]; modified?: string[]; removed?: string[] }[],
    extra = {},
  ) {
    const state = fake.repos.get(`${OWNER}/${repo}`)!;
    const before = state.head;
    state.head = fake.commit(files);
    const payload = example('push');
    Object.assign(payload, {
      ref: 'refs/heads/main',
      before,
      after: state.head,
      created: false,
      deleted: false,
      forced: false,
      commits: commits.map((commit, i) => ({ id: `c${i}`, added: [], modified: [], removed: [], ...commit })),
      ...extra,
    });
    Object.assign(payload.repository as object, {
      name: repo,
      full_name: `${OWNER}/${repo}`,
      default_branch: 'main',
      owner: { login: OWNER, name: OWNER },
    });
    Object.assign(payload.installation as object, { id: 42 });
    await probot.receive({ id: `push-${++pushes}`, name: 'push', payload } as never);
  }
  /** The preview of a config pull request proposing `text`: its run's output and the trees it listed. */
  async function preview(text: string) {
    const trees = treeReads();
    const payload = configPull(text);
    await probot.receive({ id: `preview-${text.length}-${pushes}-${trees}`, name: 'pull_request', payload } as never);
    await deps.fanout.idle();
    const headSha = (payload.pull_request as { head: { sha: string } }).head.sha;
    const run = fake.checkRuns.find(
      (candidate) => candidate.repo === `${OWNER}/.github` && candidate.head_sha === headSha,
    )!;
    return { output: run.output, trees: treeReads() - trees };
  }
  /** The same preview with an empty index: every tree is read (the reference). */
  async function withoutIndex(text: string) {
    index.bypass = true;
    try {
      return await preview(`${text}# fresh\n`);
    } finally {
      index.bypass = false;
    }
  }
  const STRICT = codeBlock`
    cuda:
      allowed: ["12.4"]
  `;

  it('lists each tree once, then follows pushes: the same verdict as listing every tree, with no tree read', async () => {
    const first = await preview(STRICT);
    expect(first.trees).toBe(2); // trainer and serving; the index is empty
    const again = await preview(`${STRICT}# again\n`);
    expect(again.trees).toBe(0);
    expect(again.output?.text).toBe(first.output?.text);

    // A push adds a Dockerfile on CUDA 12.1 to serving: the index learns the path from the event.
    const image = 'FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04\n';
    await push('serving', { Dockerfile: 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n', 'legacy/Dockerfile': image }, [
      { added: ['legacy/Dockerfile'] },
    ]);
    const pushed = await preview(`${STRICT}# pushed\n`);
    expect(pushed.trees).toBe(0);
    expect(pushed.output?.summary).toContain(
      '| [serving](https://github.test/octo-org/serving) | newly fails | 0 | 1 | |',
    );
    const reference = await withoutIndex(STRICT);
    expect(reference.trees).toBe(2);
    expect(pushed.output?.text).toBe(reference.output?.text);

    // A push that removes it: the index still names the path; the read finds no file there, and says nothing of it.
    await push('serving', { Dockerfile: 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n' }, [
      { removed: ['legacy/Dockerfile'] },
    ]);
    const removed = await preview(`${STRICT}# removed\n`);
    expect(removed.trees).toBe(0);
    expect(removed.output?.text).toBe(first.output?.text);
    expect(removed.output?.summary).not.toContain('Not evaluated');
  });

  it('lists the tree again where a push does not say every change (forced, a new branch, too many commits, a missed push)', async () => {
    await preview(STRICT);
    const files = {
      'requirements.txt': codeBlock`
        --index-url https://download.pytorch.org/whl/cu121
        torch==2.3.0+cu121
      `,
      'ops/Dockerfile': 'FROM nvidia/cuda:12.1.1-base-ubuntu22.04\n',
    };
    // A forced push lists only the commits it adds: the entry is dropped, and the tree read again.
    await push('trainer', files, [{ modified: ['README.md'] }], { forced: true });
    const forced = await preview(`${STRICT}# forced\n`);
    expect(forced.trees).toBe(1);
    expect(forced.output?.text).toBe((await withoutIndex(`${STRICT}# forced\n`)).output?.text);
    // GitHub lists at most 2,048 commits: a push listing that many may have more.
    await push(
      'trainer',
      files,
      Array.from({ length: 2048 }, () => ({ modified: ['README.md'] })),
    );
    expect((await preview(`${STRICT}# many\n`)).trees).toBe(1);
    // A push the App never saw: the entry names an older commit, so it is not used.
    fake.repos.get(`${OWNER}/trainer`)!.head = fake.commit({
      ...files,
      'requirements-dev.txt': 'torch==2.3.0+cu121\n',
    });
    const missed = await preview(`${STRICT}# missed\n`);
    expect(missed.trees).toBe(1);
    expect(missed.output?.text).toBe((await withoutIndex(`${STRICT}# missed\n`)).output?.text);
    // A push to another branch says nothing about the default branch.
    const other = example('push');
    Object.assign(other, {
      ref: 'refs/heads/feature',
      before: 'a'.repeat(40),
      after: 'b'.repeat(40),
      commits: [{ id: 'x', added: ['Dockerfile'], modified: [], removed: [] }],
    });
    Object.assign(other.repository as object, {
      name: 'trainer',
      full_name: `${OWNER}/trainer`,
      default_branch: 'main',
      owner: { login: OWNER, name: OWNER },
    });
    await probot.receive({ id: 'push-feature', name: 'push', payload: other } as never);
    expect((await preview(`${STRICT}# other branch\n`)).trees).toBe(0);
  });
});

describe('after the baseline is merged', () => {
  it('re-checks every open pull request, posting only where the result changed', async () => {
    const open = example('pull_request', 'opened');
    Object.assign(open.repository as object, {
      name: 'trainer',
      full_name: `${OWNER}/trainer`,
      default_branch: 'main',
    });
    Object.assign((open.repository as { owner: object }).owner, { login: OWNER });
    const pull = fake.pull(`${OWNER}/trainer`, 3)!;
    Object.assign(open.pull_request as object, { number: 3 });
    Object.assign((open.pull_request as { head: object }).head, {
      sha: pull.headSha,
      ref: 'upgrade',
      repo: { full_name: `${OWNER}/trainer` },
    });
    Object.assign(open.installation as object, { id: 42 });
    await probot.receive({ id: 'o1', name: 'pull_request', payload: open } as never);
    expect(fake.checkRuns).toHaveLength(1);
    const before = fake.checkRuns[0]!;
    expect(before.conclusion).toBe('success');

    const push = example('push');
    const merge = (text: string) => {
      fake.addRepo(`${OWNER}/.github`, {});
      fake.repos.get(`${OWNER}/.github`)!.head = fake.commit({ 'cuda-gatekeeper.yml': text });
      Object.assign(push, {
        ref: 'refs/heads/main',
        after: fake.repos.get(`${OWNER}/.github`)!.head,
        commits: [{ id: 'c', added: [], removed: [], modified: ['cuda-gatekeeper.yml'] }],
      });
      Object.assign(push.repository as object, {
        name: '.github',
        full_name: `${OWNER}/.github`,
        default_branch: 'main',
        owner: { login: OWNER, name: OWNER },
      });
      Object.assign(push.installation as object, { id: 42 });
    };

    merge(codeBlock`
      cuda:
        allowed: ["12.1", "12.4"]
      # comment only
    `);
    await probot.receive({ id: 'm1', name: 'push', payload: push } as never);
    await deps.fanout.idle();
    expect(fake.checkRuns).toHaveLength(1); // nothing changed, nothing posted
    expect(before.updates).toBe(0);

    // A new verdict is a new run: the old run's annotations cannot be taken back.
    merge(codeBlock`
      cuda:
        allowed: ["12.1"]
    `);
    await probot.receive({ id: 'm2', name: 'push', payload: push } as never);
    await deps.fanout.idle();
    expect(fake.checkRuns).toHaveLength(2);
    expect(fake.checkRuns[1]).toMatchObject({ conclusion: 'failure', updates: 0 });
    expect(fake.checkRuns[1]!.annotations).toEqual(
      expect.arrayContaining([expect.objectContaining({ title: 'cuda-not-allowed' })]),
    );
  });
});

describe('a re-check that cannot be queued', () => {
  it('fails the delivery (so the durable queue retries it), and says so', async () => {
    // The durable queue's add rejects while Redis is unreachable (ioredis: maxRetriesPerRequest, then an error).
    const down: Fanout = {
      add: () => Promise.reject(new Error('Reached the max retries per request limit')),
      start: () => undefined,
      idle: () => Promise.resolve(),
    };
    const { probot: app, logs } = setup(fake, { deps: { fanout: down } });
    const push = baselinePush(
      fake,
      OWNER,
      codeBlock`
        cuda:
          allowed: ["12.4"]
      `,
    );
    Object.assign(push.installation as object, { id: 42 });
    await expect(app.receive({ id: 'down-1', name: 'push', payload: push } as never)).rejects.toThrow(/max retries/);
    expect(logs.map((line) => line.msg)).toContain('could not queue the organisation re-check');
  });
});

describe('migration pull requests (migration.pullRequests: true)', () => {
  it('opens one pull request per non-conforming repository with the safe fixes, and updates it in place', async () => {
    // Migration pull requests push a branch: the installation must be granted contents: write (app.yml says so).
    fake.installationPermissions.contents = 'write';
    fake.addRepo(`${OWNER}/vision`, {
      'requirements.txt': codeBlock`
        --index-url https://download.pytorch.org/whl/cu121
        torch==2.3.0+cu121
        torchvision
      `,
    });
    const push = example('push');
    const merge = (text: string, id: string) => {
      fake.repos.get(`${OWNER}/.github`)!.head = fake.commit({ 'cuda-gatekeeper.yml': text });
      Object.assign(push, {
        ref: 'refs/heads/main',
        after: `${fake.repos.get(`${OWNER}/.github`)!.head}${id}`,
        commits: [{ id: 'c', added: [], removed: [], modified: ['cuda-gatekeeper.yml'] }],
      });
      Object.assign(push.repository as object, {
        name: '.github',
        full_name: `${OWNER}/.github`,
        default_branch: 'main',
        owner: { login: OWNER, name: OWNER },
      });
      Object.assign(push.installation as object, { id: 42 });
    };
    merge(
      codeBlock`
        pinning:
          python: exact
        migration:
          pullRequests: true
      `,
      'a',
    );
    await probot.receive({ id: 'm1', name: 'push', payload: push } as never);
    await deps.fanout.idle();
    expect(fake.createdPulls.map((pull) => [pull.repo, pull.head, pull.base])).toEqual([
      [`${OWNER}/vision`, 'cuda-gatekeeper/baseline-migration', 'main'],
    ]);
    expect(fake.createdPulls[0]!.body).toContain('- Pin torchvision to 0.18.0');
    expect(fake.commits.at(-1)).toMatchObject({
      repo: `${OWNER}/vision`,
      branch: 'cuda-gatekeeper/baseline-migration',
      files: [
        {
          path: 'requirements.txt',
          contents: codeBlock`
            --index-url https://download.pytorch.org/whl/cu121
            torch==2.3.0+cu121
            torchvision==0.18.0
          `,
        },
      ],
    });
    expect(fake.branches.get(`${OWNER}/vision#main`)).toBeUndefined(); // the default branch is never pushed to

    merge(
      codeBlock`
        pinning:
          python: exact
        migration:
          pullRequests: true
        prerelease: forbid
      `,
      'b',
    );
    await probot.receive({ id: 'm2', name: 'push', payload: push } as never);
    await deps.fanout.idle();
    expect(fake.createdPulls).toHaveLength(1);
  });

  it('are off by default', async () => {
    fake.addRepo(`${OWNER}/vision`, {
      'requirements.txt': codeBlock`
        torch==2.3.0
        torchvision
      `,
    });
    const push = example('push');
    fake.repos.get(`${OWNER}/.github`)!.head = fake.commit({
      'cuda-gatekeeper.yml': codeBlock`
        pinning:
          python: exact
      `,
    });
    Object.assign(push, {
      ref: 'refs/heads/main',
      after: 'x1',
      commits: [{ id: 'c', added: [], removed: [], modified: ['cuda-gatekeeper.yml'] }],
    });
    Object.assign(push.repository as object, {
      name: '.github',
      full_name: `${OWNER}/.github`,
      default_branch: 'main',
      owner: { login: OWNER, name: OWNER },
    });
    Object.assign(push.installation as object, { id: 42 });
    await probot.receive({ id: 'm3', name: 'push', payload: push } as never);
    await deps.fanout.idle();
    expect(fake.createdPulls).toEqual([]);
  });
});

describe("a migration the planner makes (cuda.allowed no longer has the repository's CUDA)", () => {
  it('moves the repository to the newest allowed CUDA, one verified commit per unit, with the plan in the body', async () => {
    fake.installationPermissions.contents = 'write';
    fake.addRepo(`${OWNER}/trainer`, {
      Dockerfile: codeBlock`
        FROM nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04
        RUN pip install torch==2.5.1 torchvision==0.20.1 --index-url https://download.pytorch.org/whl/cu124
      `,
    });
    await probot.receive({
      id: 'm1',
      name: 'push',
      payload: baselinePush(
        fake,
        OWNER,
        codeBlock`
          cuda:
            allowed: ["12.6", "12.8"]
          migration:
            pullRequests: true
        `,
      ),
    } as never);
    await deps.fanout.idle();
    // Both repositories on CUDA 12.4 (serving's bare image too) get a pull request that moves them.
    expect(fake.createdPulls.map((pull) => [pull.repo, pull.head]).sort()).toEqual([
      [`${OWNER}/serving`, 'cuda-gatekeeper/baseline-migration'],
      [`${OWNER}/trainer`, 'cuda-gatekeeper/baseline-migration'],
    ]);
    const pull = fake.createdPulls.find((candidate) => candidate.repo === `${OWNER}/trainer`)!;
    expect(pull.body).toContain('Move to CUDA 12.8, the newest CUDA the baseline allows');
    expect(pull.body).toContain('### Plan: move to CUDA 12.8');
    const commits = fake.commits.filter(
      (commit) => commit.branch === 'cuda-gatekeeper/baseline-migration' && commit.repo === `${OWNER}/trainer`,
    );
    expect(commits.map((commit) => commit.message.headline)).toEqual(['Move Dockerfile stage 1 to CUDA 12.8']);
    expect(commits[0]!.files[0]!.contents).toContain('FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04');
    expect(commits[0]!.files[0]!.contents).toContain('torch==2.7.1 torchvision==0.22.1');
    expect(commits[0]!.files[0]!.contents).toContain('whl/cu128');
  });
});

describe('the drift sweep', () => {
  it('re-evaluates default branches and keeps one compliance issue per repository up to date', async () => {
    const { sweepInstallation } = await import('../../src/github/sweep.js');
    fake.repos.get(`${OWNER}/.github`)!.head = fake.commit({
      'cuda-gatekeeper.yml': codeBlock`
        cuda:
          allowed: ["12.4"]
        sweep:
          issues: repository
      `,
    });
    const github = (await probot.auth(42)) as never;
    const rows = await sweepInstallation(
      github,
      OWNER,
      { info: () => undefined, warn: () => undefined, error: () => undefined },
      '2026-11-30',
    );
    expect(rows.map((row) => [row.repo, row.errors > 0])).toEqual([
      ['trainer', true],
      ['serving', false],
    ]);
    expect(fake.issues).toEqual([
      expect.objectContaining({
        repo: `${OWNER}/trainer`,
        title: 'CUDA compliance',
        state: 'open',
        body: expect.stringContaining('cuda-not-allowed'),
      }),
    ]);
    // The repository is fixed; the next sweep closes its issue.
    fake.repos.get(`${OWNER}/trainer`)!.head = fake.commit({
      'requirements.txt': codeBlock`
        --index-url https://download.pytorch.org/whl/cu124
        torch==2.5.1+cu124
      `,
    });
    await sweepInstallation(
      github,
      OWNER,
      { info: () => undefined, warn: () => undefined, error: () => undefined },
      '2026-12-01',
    );
    expect(fake.issues).toHaveLength(1);
    expect(fake.issues[0]).toMatchObject({ state: 'closed', body: expect.stringContaining('conforms') });
  });

  it('says what a default branch installs from outside the repository, as its pull requests are told', async () => {
    const { sweepInstallation } = await import('../../src/github/sweep.js');
    fake.addRepo(`${OWNER}/vision`, {
      Dockerfile: codeBlock`
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        COPY requirements-serve.txt /app/
        RUN pip install -r /app/requirements-serve.txt
        RUN pip install -r /app/requirements-gpu.txt
      `,
      'requirements-serve.txt': 'numpy==1.26.4\n',
    });
    const rows = await sweepInstallation(
      (await probot.auth(42)) as never,
      OWNER,
      { info: () => undefined, warn: () => undefined, error: () => undefined },
      '2026-11-30',
    );
    const vision = rows.find((row) => row.repo === 'vision')!;
    expect(
      vision.report.findings
        .filter((finding) => finding.ruleId === 'missing-include')
        .map((finding) => [finding.location.start.line, finding.severity, finding.message]),
    ).toEqual([
      [
        4,
        'notice',
        expect.stringContaining('/app/requirements-gpu.txt is installed here, but no COPY of the stage brings it'),
      ],
    ]);
  });

  it('or one dashboard issue in the config repository', async () => {
    const { sweepInstallation } = await import('../../src/github/sweep.js');
    fake.repos.get(`${OWNER}/.github`)!.head = fake.commit({
      'cuda-gatekeeper.yml': codeBlock`
        cuda:
          allowed: ["12.4"]
        sweep:
          issues: dashboard
      `,
    });
    await sweepInstallation(
      (await probot.auth(42)) as never,
      OWNER,
      { info: () => undefined, warn: () => undefined, error: () => undefined },
      '2026-11-30',
    );
    expect(fake.issues).toEqual([
      expect.objectContaining({
        repo: `${OWNER}/.github`,
        state: 'open',
        body: expect.stringContaining('| [trainer](https://github.test/octo-org/trainer) | 1 | 0 |'),
      }),
    ]);
  });
});

describe('a fleet change previewed with the workloads it moves (issue 48)', () => {
  it('fails when a pool driver goes down under a Job pinned to it, counting the default branch and an open PR', async () => {
    const pool = (driver: string) => codeBlock`
      cuda:
        allowed: ["12.1", "12.4"]
      fleet:
        pools:
          - { name: v100-legacy, driver: "${driver}", gpus: [V100], class: data-center, labels: { pool: v100-legacy } }
    `;
    fake.addRepo(`${OWNER}/.github`, { 'cuda-gatekeeper.yml': pool('550.127.05') });
    const job = (name: string) => codeBlock`
      apiVersion: batch/v1
      kind: Job
      metadata:
        name: ${name}
      spec:
        template:
          spec:
            nodeSelector:
              pool: v100-legacy
            containers:
              - name: ${name}
                image: nvidia/cuda:12.4.1-runtime-ubuntu22.04
                resources:
                  limits:
                    nvidia.com/gpu: 1
    `;
    // A manifest is YAML read by its content: a name says nothing of it.
    fake.addRepo(`${OWNER}/batch`, { 'deploy/nightly.yaml': job('nightly') });
    const head = fake.commit({ 'deploy/nightly.yaml': job('nightly'), 'deploy/eval.yaml': job('eval') });
    fake.addPull(`${OWNER}/batch`, {
      number: 5,
      headSha: head,
      headRef: 'eval',
      headRepo: `${OWNER}/batch`,
      files: [{ filename: 'deploy/eval.yaml', status: 'added', patch: addedPatch(job('eval')) }],
    });
    // R470 runs no CUDA 12 code: both Jobs newly fail on the pool (and so do the other repositories' CUDA 12 files).
    await probot.receive({ id: 'p-fleet', name: 'pull_request', payload: configPull(pool('470.256.02')) } as never);
    await deps.fanout.idle();
    const run = previewRun();
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run.output?.title).toBe('Would newly fail 5 repositories and pull requests');
    expect(run.output?.summary).toContain(
      '- would newly fail on pool **v100-legacy**: 5 repositories and pull requests',
    );
    expect(run.output?.summary).toContain('[batch](https://github.test/octo-org/batch) | newly fails');
    expect(run.output?.summary).toContain('[batch#5](https://github.test/octo-org/batch/pull/5) | newly fails');
  });
});
