/**
 * The App on GitHub's remaining paths (issue 41): each story drives Probot with the payloads GitHub sends and a fake
 * GitHub that answers as the cited page documents; each failed on the code before it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import { FakeGitHub } from '../support/fake-github.js';
import { example, setup, teardown } from '../support/probot.js';
import {
  checkRunPayload,
  checkSuitePayload,
  commentPayload,
  editedPayload,
  FULL,
  mergeGroupPayload,
  pullScenario,
  queueBranch,
  type Scenario,
} from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

/** A cu118 wheel on a CUDA 12.6 image: `cuda-mismatch`, an error. */
const BROKEN = codeBlock`
  FROM nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04
  RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu118
`;

/** A torchvision that does not belong to its torch: `companion-mismatch`, with a safe fix. */
const REQUIREMENTS = codeBlock`
  --extra-index-url https://download.pytorch.org/whl/cu121
  torch==2.3.0+cu121
  torchvision==0.17.0+cu121
`;

let fake: FakeGitHub;
let probot: Probot;

beforeEach(() => {
  fake = new FakeGitHub();
  ({ probot } = setup(fake));
});

afterEach(() => {
  expect(fake.violations, "every request matches GitHub's API description").toEqual([]);
  teardown();
});

const calls = () => fake.requests.map((request) => `${request.method} ${request.path}`);

describe('a retargeted pull request', () => {
  /**
   * A pull request against `dev`, where the broken Dockerfile already is: against `dev` it changes only the README.
   */
  function stacked(): { scenario: Scenario; devSha: string } {
    const scenario = pullScenario(fake, {
      main: { 'README.md': 'trainer\n' },
      head: { 'README.md': 'trainer, now on CUDA 12.6\n', Dockerfile: BROKEN },
      changed: ['README.md'],
    });
    const devSha = fake.commit({ 'README.md': 'trainer\n', Dockerfile: BROKEN });
    fake.branches.set(`${FULL.toLowerCase()}#dev`, devSha);
    fake.retarget(FULL, 7, 'dev');
    Object.assign((scenario.payload.pull_request as { base: object }).base, { ref: 'dev', sha: devSha });
    return { scenario, devSha };
  }

  it('is checked again against its new base: the Dockerfile it now brings into main fails', async () => {
    const { scenario, devSha } = stacked();
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns.map((run) => run.conclusion)).toEqual(['success']);

    // Edit → base: dev → main. GitHub sends `edited` with `changes.base`, and nothing else.
    fake.retarget(FULL, 7, 'main');
    const before = fake.requests.length;
    await probot.receive({
      id: 'retargeted',
      name: 'pull_request',
      payload: editedPayload(fake, scenario, { ref: 'dev', sha: devSha }),
    } as never);
    expect(fake.requests.length).toBeGreaterThan(before);
    const newest = fake.runsOn(scenario.headSha).at(-1)!;
    expect(newest.conclusion).toBe('failure');
    expect(newest.annotations).toEqual([
      expect.objectContaining({ path: 'Dockerfile', start_line: 2, title: 'cuda-mismatch' }),
    ]);
  });

  it('a title or body edit costs no API call', async () => {
    const { scenario } = stacked();
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    const before = fake.requests.length;
    await probot.receive({ id: 'title', name: 'pull_request', payload: editedPayload(fake, scenario) } as never);
    expect(fake.requests.length).toBe(before);
  });
});

describe('merge queues', () => {
  /** Pull request #7 brings the broken Dockerfile; the queue builds its commit on main's head. */
  function queued(): { headSha: string; baseSha: string } {
    fake.installationPermissions.contents = 'write';
    const baseSha = fake.addRepo(FULL, { 'README.md': 'trainer\n' });
    const headSha = fake.commit({ 'README.md': 'trainer\n', Dockerfile: BROKEN });
    fake.branches.set(`${FULL.toLowerCase()}#${queueBranch({ headSha, number: 7 })}`, headSha);
    return { headSha, baseSha };
  }

  it("checks the queue's commit against the base it was built on and reports on it, so the queue is not left waiting", async () => {
    const { headSha, baseSha } = queued();
    await probot.receive({
      id: 'group',
      name: 'merge_group',
      payload: mergeGroupPayload(fake, FULL, { headSha, baseSha, number: 7 }),
    } as never);
    expect(fake.checkRuns).toHaveLength(1);
    const run = fake.checkRuns[0]!;
    expect(run).toMatchObject({ head_sha: headSha, status: 'completed', conclusion: 'failure' });
    expect(run.annotations).toEqual([expect.objectContaining({ path: 'Dockerfile', title: 'cuda-mismatch' })]);
    // A queue's commit has no pull request: no review, no button (nothing may be committed to the queue's branch).
    expect(run.actions ?? []).toEqual([]);
    expect(run.output?.summary).toContain("**Merge queue.** This is the queue's commit for `main`");
    expect(calls()).toEqual([
      'POST /app/installations/42/access_tokens',
      `GET /repos/${FULL}/compare/${baseSha}...${headSha}`,
      'POST /graphql',
      `POST /repos/${FULL}/check-runs`,
    ]);
  });

  it("the queue branch's check suite (no pull request listed) is checked the same way, and both events give one run", async () => {
    const { headSha, baseSha } = queued();
    const suite = checkSuitePayload(
      fake,
      { repo: FULL, headSha, number: 7, headRepo: FULL, payload: {} },
      'requested',
    ) as { check_suite: Record<string, unknown> };
    Object.assign(suite.check_suite, { head_branch: queueBranch({ headSha, number: 7 }), pull_requests: [] });
    await probot.receive({ id: 'suite', name: 'check_suite', payload: suite } as never);
    expect(fake.checkRuns.map((run) => [run.head_sha, run.conclusion])).toEqual([[headSha, 'failure']]);
    expect(calls()).toContain(`GET /repos/${FULL}/compare/main...${headSha}`);

    await probot.receive({
      id: 'group',
      name: 'merge_group',
      payload: mergeGroupPayload(fake, FULL, { headSha, baseSha, number: 7 }),
    } as never);
    expect(fake.checkRuns).toHaveLength(1);
  });
});

describe('code is not a command', () => {
  /** A maintainer explains the command; GitHub renders each of these as code or a quote, not as a command. */
  const explanations = [
    'To apply the fixes yourself, comment:\n\n```\n/cuda-check fix\n```\n',
    'To apply the fixes yourself, comment `/cuda-check fix` on this pull request.',
    '> /cuda-check fix\n\nPlease do not run that on a contributor branch.',
    'Run it like this:\n\n    /cuda-check fix\n',
    '~~~markdown\n/cuda-check fix\n~~~',
    '<!--\n/cuda-check fix\n-->\nNot yet.',
  ];

  /** A maintainer (write access, on an installation that may commit) comments `body` on the pull request. */
  async function maintainerComments(body: string): Promise<void> {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.permissions.set('maintainer', 'write');
    fake.installationPermissions.contents = 'write';
    await probot.receive({
      id: 'c',
      name: 'issue_comment',
      payload: commentPayload(fake, scenario, body, { login: 'maintainer', type: 'User' }),
    } as never);
  }

  it.each(explanations)('a writer explaining the command in %j commits nothing', async (body) => {
    await maintainerComments(body);
    expect(fake.commits).toEqual([]);
    expect(fake.requests).toEqual([]);
  });

  it('a command on its own line after some prose is still a command', async () => {
    await maintainerComments('Thanks! Fixing the pins:\n/cuda-check fix');
    expect(fake.commits).toHaveLength(1);
  });
});

describe('newly accepted permissions', () => {
  /** `installation.new_permissions_accepted` for installation 42 of octo-org (the webhooks-examples payload). */
  function accepted(): Record<string, unknown> {
    const payload = example('installation', 'new_permissions_accepted');
    Object.assign(payload.installation as object, {
      id: 42,
      account: { ...((payload.installation as { account: object }).account ?? {}), login: 'octo-org' },
      permissions: { ...fake.installationPermissions },
    });
    return payload;
  }

  it('take effect at once: the next run offers Apply fixes, and a click commits', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.permissions.set('octocat', 'write');
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]!.actions ?? []).toEqual([]);

    // The owner changes app.yml's contents: read to write and accepts it on the installation.
    fake.installationPermissions.contents = 'write';
    await probot.receive({ id: 'accepted', name: 'installation', payload: accepted() } as never);
    await probot.receive({
      id: 'rerun',
      name: 'check_run',
      payload: checkRunPayload(fake, scenario, fake.checkRuns[0]!, 'rerequested'),
    } as never);
    const newest = fake.checkRuns.at(-1)!;
    expect(newest.actions).toEqual([expect.objectContaining({ identifier: 'apply_fixes' })]);

    await probot.receive({
      id: 'click',
      name: 'check_run',
      payload: checkRunPayload(fake, scenario, newest, 'requested_action'),
    } as never);
    expect(fake.commits).toHaveLength(1);
  });

  it('a click on a replica that did not get the event still commits (one new token)', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.permissions.set('octocat', 'write');
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    fake.installationPermissions.contents = 'write';
    const tokens = fake.tokensIssued;
    await probot.receive({
      id: 'fix',
      name: 'issue_comment',
      payload: commentPayload(fake, scenario, '/cuda-check fix'),
    } as never);
    expect(fake.commits).toHaveLength(1);
    expect(fake.tokensIssued).toBe(tokens + 1);
  });
});

describe('small ones', () => {
  it('a baseline file named .yaml is said not to be read, in the summary', async () => {
    const scenario = pullScenario(fake, {
      main: { '.github/cuda-gatekeeper.yaml': 'cuda:\n  allowed: ["12.1"]\n' },
      head: { 'requirements.txt': REQUIREMENTS },
      changed: ['requirements.txt'],
    });
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]!.output?.summary).toContain(
      '**`.github/cuda-gatekeeper.yaml` is not read.** The baseline file is named `.yml` (`.github/cuda-gatekeeper.yml`)',
    );
  });

  it('tells "`.github` is not in the installation" from "`.github` has no baseline file"', async () => {
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': REQUIREMENTS },
      changed: ['requirements.txt'],
      org: { 'README.md': 'the organisation profile\n' },
    });
    fake.selected = new Set([FULL.toLowerCase(), 'octo-org/.github']);
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    const summary = fake.checkRuns[0]!.output?.summary ?? '';
    expect(summary).toContain('`octo-org/.github` is in this installation but has no `cuda-gatekeeper.yml`');
    expect(summary).not.toContain('cannot be seen');

    const other = new FakeGitHub();
    teardown();
    ({ probot } = setup(other));
    fake = other;
    const again = pullScenario(fake, {
      head: { 'requirements.txt': REQUIREMENTS },
      changed: ['requirements.txt'],
      org: { 'README.md': 'the organisation profile\n' },
    });
    fake.selected = new Set([FULL.toLowerCase()]);
    await probot.receive({ id: 'opened', name: 'pull_request', payload: again.payload } as never);
    expect(fake.checkRuns[0]!.output?.summary).toContain('**The organisation baseline cannot be seen.**');
  });

  it('a Re-run of a commit the pull request has moved past offers no Apply fixes', async () => {
    fake.installationPermissions.contents = 'write';
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    const old = fake.checkRuns[0]!;
    expect(old.actions).toEqual([expect.objectContaining({ identifier: 'apply_fixes' })]);
    // A new push (the same broken pins plus a README) moves the head; then someone re-runs the old commit's run.
    fake.push(FULL, 7, { 'requirements.txt': REQUIREMENTS, 'README.md': 'x\n' }, []);
    const payload = checkRunPayload(fake, scenario, old, 'rerequested');
    const listed = (payload.check_run as { pull_requests: { head: { sha: string } }[] }).pull_requests;
    listed[0]!.head.sha = fake.pull(FULL, 7)!.headSha;
    await probot.receive({ id: 'rerun', name: 'check_run', payload } as never);
    const rerun = fake.runsOn(scenario.headSha).at(-1)!;
    expect(rerun.id).not.toBe(old.id);
    expect(rerun.actions ?? []).toEqual([]);
    expect(`${rerun.output?.summary}\n${rerun.output?.text}`).toContain('a commit the pull request has moved past');
  });

  it('says "Checked 1 file."', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.checkRuns[0]!.output?.summary).toContain('Checked 1 file.');
  });
});

describe('symbolic links and submodules', () => {
  const DOCKERFILE = codeBlock`
    FROM nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04
    COPY requirements.txt .
    RUN pip install -r requirements.txt
  `;
  const CU118 = codeBlock`
    --index-url https://download.pytorch.org/whl/cu118
    torch==2.5.1
  `;
  const CU126 = codeBlock`
    --index-url https://download.pytorch.org/whl/cu126
    torch==2.6.0
  `;

  /** The pull request turns requirements.txt into a link (GitHub's diff of a link is its target path). */
  function linked(target: string, extra: Record<string, string> = {}): Scenario {
    const main = {
      Dockerfile: DOCKERFILE,
      'requirements.txt': CU126,
      'constraints/cu118.txt': CU118,
      ...extra,
    };
    const scenario = pullScenario(fake, { main, head: {}, changed: [] });
    const headSha = fake.push(
      FULL,
      7,
      { ...main, 'requirements.txt': target },
      [{ filename: 'requirements.txt', status: 'modified', patch: `@@ -1,2 +1 @@\n-x\n+${target}` }],
      { 'requirements.txt': '120000' },
    );
    const pr = scenario.payload.pull_request as { head: { sha: string }; changed_files: number };
    pr.head.sha = headSha;
    pr.changed_files = 1;
    return { ...scenario, headSha };
  }

  it('a requirements file turned into a link is read through to its target, as docker build reads it', async () => {
    const scenario = linked('constraints/cu118.txt');
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.runsOn(scenario.headSha).at(-1)!;
    expect(run.conclusion).toBe('failure');
    expect(run.output?.summary).toContain('`requirements.txt`');
    expect(JSON.stringify(run.annotations)).toContain('cuda-mismatch');
  });

  it('a link out of the repository is not followed: the file is not checked, and the check says why', async () => {
    const scenario = linked('../../etc/requirements.txt');
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.runsOn(scenario.headSha).at(-1)!;
    expect(run.conclusion).toBe('failure');
    expect(`${run.output?.summary}\n${run.output?.text}`).toContain(
      'a symbolic link to `../../etc/requirements.txt`, outside the repository: not followed',
    );
  });

  it('a moved submodule is named in the summary as not followed', async () => {
    const scenario = pullScenario(fake, { main: { 'README.md': 'x\n' }, head: {}, changed: [] });
    const headSha = fake.push(
      FULL,
      7,
      { 'README.md': 'x\n', 'third_party/megatron': '' },
      [
        {
          filename: 'third_party/megatron',
          status: 'modified',
          patch: `@@ -1 +1 @@\n-Subproject commit ${'a'.repeat(40)}\n+Subproject commit ${'b'.repeat(40)}`,
        },
      ],
      { 'third_party/megatron': '160000' },
    );
    Object.assign((scenario.payload.pull_request as { head: object }).head, { sha: headSha });
    Object.assign(scenario.payload.pull_request as object, { changed_files: 1 });
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    expect(fake.runsOn(headSha).at(-1)!.output?.summary).toContain(
      '**Submodules are not followed.** This change moves `third_party/megatron`',
    );
  });
});
