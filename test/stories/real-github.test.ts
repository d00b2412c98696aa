/**
 * The App where most users are, as user stories from webhook to check run, against a fake GitHub that answers as
 * GitHub documents (GraphQL partial errors, fork payloads, appended annotations, 100-item pages). Each story was a
 * failure of the App before (issue 13): the fake now gives GitHub's real answers, and these tests hold the App to them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import type { AppDeps } from '../../src/github/deps.js';
import { BOT_LOGIN, FakeGitHub } from '../support/fake-github.js';
import { setup, teardown, type LogLine } from '../support/probot.js';
import {
  baselinePush,
  checkRunPayload,
  checkSuitePayload,
  commentPayload,
  FULL,
  OWNER,
  pullScenario,
  type Scenario,
} from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

const DOCKERFILE = codeBlock`
  FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
  COPY requirements.txt .
  RUN pip install -r requirements.txt
`;
/** Five findings: two errors on line 3 with a safe fix each (a version and a label on one line). */
const FIVE = codeBlock`
  --index-url https://download.pytorch.org/whl/cu124
  torch==2.5.1+cu124
  torchvision==0.17.0+cu118
  torchaudio==2.1.0
`;

let fake: FakeGitHub;
let probot: Probot;
let deps: AppDeps;
let logs: LogLine[];

beforeEach(() => {
  fake = new FakeGitHub();
  ({ probot, deps, logs } = setup(fake));
});

afterEach(() => {
  expect(fake.violations, "every request matches GitHub's API description").toEqual([]);
  teardown();
});

let delivered = 0;
const receive = (name: string, payload: Record<string, unknown>, id = `${name}-${++delivered}`) =>
  probot.receive({ id, name, payload } as never);
const calls = () => fake.requests.map((request) => `${request.method} ${request.path}`);
const latest = (scenario: Scenario) => fake.runsOn(scenario.headSha).at(-1)!;
const titles = (annotations: unknown[]) =>
  (annotations as { title: string; start_line: number }[]).map(
    (annotation) => `${annotation.title}@${annotation.start_line}`,
  );

describe('no organisation layer is not an error', () => {
  it('a PR in an organisation without a .github repository gets the normal check in 3 calls plus the token', async () => {
    const scenario = pullScenario(fake, {
      head: { Dockerfile: DOCKERFILE, 'requirements.txt': FIVE },
      changed: ['Dockerfile', 'requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(titles(run.annotations)).toEqual(
      expect.arrayContaining(['companion-mismatch@3', 'cuda-mismatch@3', 'companion-mismatch@4']),
    );
    expect(run.output?.summary).toContain('Baseline: bundled baseline.yaml');
    // GitHub really answered NOT_FOUND for octo-org/.github, and the check went on.
    const graphql = fake.requests.find((request) => request.path === '/graphql')!;
    expect((graphql.body as { query: string }).query).toContain('org: repository(owner: $owner, name: ".github")');
    expect(calls().filter((call) => !call.endsWith('/reviews'))).toEqual([
      'POST /app/installations/42/access_tokens',
      `GET /repos/${FULL}/pulls/7/files`,
      'POST /graphql',
      `POST /repos/${FULL}/check-runs`,
    ]);
  });

  it('a repository owned by a user account (no .github repository) is checked the same way', async () => {
    const scenario = pullScenario(fake, {
      repo: 'octocat/trainer',
      user: true,
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario)).toMatchObject({
      conclusion: 'failure',
      output: expect.objectContaining({ title: expect.stringMatching(/errors?/) }),
    });
  });

  it('an installation on selected repositories that leaves out .github runs without the organisation layer', async () => {
    const scenario = pullScenario(fake, {
      org: {
        'cuda-gatekeeper.yml': codeBlock`
          cuda:
            allowed: ["11.8"]
        `,
      },
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
    });
    fake.selected = new Set([FULL]);
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(run.output?.title).not.toContain('could not check');
    expect(titles(run.annotations)).not.toContain('cuda-not-allowed@2');
  });

  it('/cuda-check baseline answers without a .github repository', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'] });
    await receive('issue_comment', commentPayload(fake, scenario, '/cuda-check baseline'));
    expect(fake.pull(FULL, 7)!.comments[0]!.body).toContain('### Effective CUDA baseline');
  });

  it('a baseline GitHub refuses to show (SAML SSO) fails the check closed, with every cause', async () => {
    const scenario = pullScenario(fake, {
      org: {
        'cuda-gatekeeper.yml': codeBlock`
          cuda:
            allowed: ["12.4"]
        `,
      },
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
    });
    fake.forbidden.set(
      `${OWNER}/.github`,
      'Resource protected by organization SAML enforcement. You must grant your Personal Access token access to this organization.',
    );
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(run).toMatchObject({
      conclusion: 'failure',
      output: expect.objectContaining({ title: 'cuda-gatekeeper could not check this pull request' }),
    });
    expect(run.output?.summary).toContain(
      'Resource protected by organization SAML enforcement. You must grant your Personal Access token access to this organization. (FORBIDDEN)',
    );
    expect(run.actions).toBeUndefined();
  });

  it('a README-only pull request gets success without reading a file', async () => {
    const scenario = pullScenario(fake, { head: { 'README.md': '# hello\n' }, changed: ['README.md'] });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario)).toMatchObject({
      conclusion: 'success',
      output: expect.objectContaining({ title: 'No CUDA-relevant files changed' }),
    });
    expect(calls()).toEqual([
      'POST /app/installations/42/access_tokens',
      `GET /repos/${FULL}/pulls/7/files`,
      `POST /repos/${FULL}/check-runs`,
    ]);
  });
});

describe('forks', () => {
  const fork = () =>
    pullScenario(fake, { fork: 'someone/trainer', head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'] });

  it('offers no Apply fixes button and says why in the run', async () => {
    const scenario = fork();
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(run.actions).toBeUndefined();
    expect(run.output?.summary).toContain('This pull request comes from the fork `someone/trainer`');
    expect(run.external_id).toMatch(/^cuda-gatekeeper:pr=7:verdict=[0-9a-f]{16}$/);
  });

  it('"Re-run" works though GitHub lists no pull request: the run names it', async () => {
    const scenario = fork();
    await receive('pull_request', scenario.payload);
    const payload = checkRunPayload(fake, scenario, latest(scenario), 'rerequested');
    expect((payload.check_run as { pull_requests: unknown[] }).pull_requests).toEqual([]);
    await receive('check_run', payload);
    expect(fake.runsOn(scenario.headSha)).toHaveLength(2);
  });

  it('"Re-run all checks" works though GitHub lists no pull request: our run in the suite names it', async () => {
    const scenario = fork();
    await receive('pull_request', scenario.payload);
    await receive('check_suite', checkSuitePayload(fake, scenario, 'rerequested'));
    expect(fake.runsOn(scenario.headSha)).toHaveLength(2);
    expect(calls()).toContain(`GET /repos/${FULL}/check-suites/${fake.suiteId(FULL, scenario.headSha)}/check-runs`);
  });

  it('check_suite.requested for a fork push is left to pull_request.synchronize (one run per push)', async () => {
    const scenario = fork();
    await receive('check_suite', checkSuitePayload(fake, scenario, 'requested'));
    await receive('pull_request', { ...scenario.payload, action: 'synchronize' });
    expect(fake.runsOn(scenario.headSha)).toHaveLength(1);
  });
});

describe('re-checks never duplicate an annotation', () => {
  it('synchronize and check_suite.requested for one push give one run', async () => {
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
      action: 'synchronize',
    });
    await Promise.all([
      receive('pull_request', scenario.payload),
      receive('check_suite', checkSuitePayload(fake, scenario, 'requested')),
    ]);
    expect(fake.runsOn(scenario.headSha)).toHaveLength(1);
    expect(fake.runsOn(scenario.headSha)[0]!.updates).toBe(0);
  });

  it('three re-runs of five findings: every run shows exactly the five', async () => {
    const scenario = pullScenario(fake, {
      org: {
        'cuda-gatekeeper.yml': codeBlock`
          driver:
            minimum: "550.54.15"
        `,
      },
      head: { 'requirements.txt': FIVE },
      changed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    const first = latest(scenario).annotations.length;
    await receive('check_run', checkRunPayload(fake, scenario, latest(scenario), 'rerequested'));
    await receive('check_suite', checkSuitePayload(fake, scenario, 'rerequested'));
    await receive('issue_comment', commentPayload(fake, scenario, '/cuda-check'));
    const runs = fake.runsOn(scenario.headSha);
    expect(runs).toHaveLength(4);
    for (const run of runs) expect(run.annotations).toHaveLength(first);
    expect(new Set(titles(latest(scenario).annotations)).size).toBe(first);
  });

  it('never creates a run in progress (a process that dies cannot leave one behind)', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'] });
    fake.fail({ method: 'POST', path: /^\/graphql$/, status: 502 });
    await receive('pull_request', scenario.payload);
    expect(fake.checkRuns.every((run) => run.status === 'completed')).toBe(true);
  });
});

describe('the baseline preview is the config pull request’s verdict', () => {
  const configPull = (text: string) => {
    fake.addRepo(`${OWNER}/.github`, {
      'cuda-gatekeeper.yml': codeBlock`
        cuda:
          allowed: ["12.1", "12.4"]
      `,
    });
    fake.addRepo(`${OWNER}/trainer`, {
      'requirements.txt': codeBlock`
        --index-url https://download.pytorch.org/whl/cu121
        torch==2.3.0+cu121
      `,
    });
    return pullScenario(fake, {
      repo: `${OWNER}/.github`,
      head: { 'cuda-gatekeeper.yml': text },
      changed: ['cuda-gatekeeper.yml'],
      number: 9,
    });
  };
  const preview = async (scenario: Scenario) => {
    await deps.fanout.idle();
    return latest(scenario);
  };

  it('on open, Re-run, Re-run all checks and /cuda-check, never the plain file check, and no second run on reopen', async () => {
    const scenario = configPull(codeBlock`
      cuda:
        allowed: ["12.4"]
    `);
    await receive('pull_request', scenario.payload);
    const opened = await preview(scenario);
    expect(opened).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      output: expect.objectContaining({ title: 'Would newly fail 1 repository or pull request' }),
    });
    await receive('pull_request', { ...scenario.payload, action: 'reopened' });
    await preview(scenario);
    expect(fake.runsOn(scenario.headSha)).toHaveLength(1);
    await receive('check_run', checkRunPayload(fake, scenario, opened, 'rerequested'));
    await receive('check_suite', checkSuitePayload(fake, scenario, 'rerequested'));
    await receive('issue_comment', commentPayload(fake, scenario, '/cuda-check'));
    await preview(scenario);
    const runs = fake.runsOn(scenario.headSha);
    expect(runs).toHaveLength(4);
    for (const run of runs) expect(run.output?.title).toBe('Would newly fail 1 repository or pull request');
    // Each preview run was created completed: none could be left in progress by a process that died mid-preview.
    const creates = fake.requests.filter(
      (request) => request.method === 'POST' && request.path.endsWith('/check-runs'),
    );
    expect(creates.map((request) => (request.body as { status?: string }).status)).toEqual(
      creates.map(() => 'completed'),
    );
  });

  it('is computed again, not replaced, after another baseline change lands', async () => {
    const scenario = configPull(codeBlock`
      cuda:
        allowed: ["12.4"]
    `);
    await receive('pull_request', scenario.payload);
    await preview(scenario);
    // Another config pull request lands first: the current baseline already forbids 12.1, so this one breaks nothing
    // new.
    await receive(
      'push',
      baselinePush(
        fake,
        OWNER,
        codeBlock`
          cuda:
            allowed: ["12.4", "12.6"]
        `,
      ),
    );
    const again = await preview(scenario);
    expect(again.output?.title).toMatch(/^Breaks nothing/);
    expect(fake.runsOn(scenario.headSha).map((run) => run.output?.title)).not.toContain(
      'No CUDA-relevant files changed',
    );
  });
});

describe('a check never claims what it did not do', () => {
  it('a CUDA file it could not check fails the run, saying which and why (neutral would pass branch protection)', async () => {
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': `torch==2.5.1\n${'# padding\n'.repeat(110_000)}` },
      changed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario)).toMatchObject({
      conclusion: 'failure',
      output: expect.objectContaining({
        title: '1 file not checked (requirements.txt: 1 MiB, over the 1 MiB size limit)',
      }),
    });
    expect(latest(scenario).output?.summary).toContain('`requirements.txt`: 1 MiB, over the 1 MiB size limit');
  });

  it('a baseline that says unchecked: neutral makes such a run neutral, never success', async () => {
    const scenario = pullScenario(fake, {
      main: { '.github/cuda-gatekeeper.yml': 'unchecked: neutral\n' },
      head: { 'requirements.txt': `torch==2.5.1\n${'# padding\n'.repeat(110_000)}` },
      changed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario)).toMatchObject({
      conclusion: 'neutral',
      output: expect.objectContaining({ title: expect.stringMatching(/^1 file not checked/) }),
    });
  });

  it('an organisation that locks unchecked: fail cannot be made neutral by a repository', async () => {
    const scenario = pullScenario(fake, {
      org: {
        'cuda-gatekeeper.yml': codeBlock`
          unchecked: fail
          locked: ["unchecked"]
        `,
      },
      main: { '.github/cuda-gatekeeper.yml': 'unchecked: neutral\n' },
      head: { 'requirements.txt': `torch==2.5.1\n${'# padding\n'.repeat(110_000)}` },
      changed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario).conclusion).toBe('failure');
    expect(titles(latest(scenario).annotations)).toContain('policy-error@1');
  });

  it('a requirements file deleted while the Dockerfile still installs it is an error on the Dockerfile', async () => {
    const scenario = pullScenario(fake, {
      main: { Dockerfile: DOCKERFILE, 'requirements.txt': 'torch==2.5.1\n' },
      head: {},
      changed: [],
      removed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario)).toMatchObject({ conclusion: 'failure' });
    expect(latest(scenario).annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: 'Dockerfile',
          start_line: 3,
          title: 'missing-include',
          annotation_level: 'failure',
          message: 'requirements.txt is deleted by this change, but this line still installs it',
        }),
      ]),
    );
  });

  it('an install of a file the head commit does not have is a notice that it is not checked, not a silent pass', async () => {
    const scenario = pullScenario(fake, {
      main: { Dockerfile: DOCKERFILE, 'requirements.txt': 'torch==2.5.1\n' },
      head: {
        Dockerfile: codeBlock`
          FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
          RUN git clone --depth 1 https://github.com/example/serving.git && pip install -r serving/requirements.txt
        `,
      },
      changed: ['Dockerfile'],
    });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario)).toMatchObject({ conclusion: 'success' });
    expect(latest(scenario).annotations).toEqual([
      expect.objectContaining({
        path: 'Dockerfile',
        start_line: 2,
        title: 'missing-include',
        annotation_level: 'notice',
        message: expect.stringContaining(
          'serving/requirements.txt is installed here, but it is a file of the clone of https://github.com/example/serving.git',
        ),
      }),
    ]);
  });

  it('a requirements file changed alone is checked with the Dockerfile that installs it', async () => {
    const scenario = pullScenario(fake, {
      main: {
        'docker/Dockerfile': codeBlock`
          FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
          COPY requirements.txt .
          RUN pip install -r requirements.txt
        `,
      },
      head: {
        'requirements.txt': codeBlock`
          --index-url https://download.pytorch.org/whl/cu118
          torch==2.3.0+cu118
        `,
      },
      changed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    expect(titles(latest(scenario).annotations)).toContain('cuda-mismatch@2');
    expect(latest(scenario).annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'requirements.txt', title: 'cuda-mismatch', annotation_level: 'failure' }),
      ]),
    );
  });
});

describe('suggestions, messages, comments, fan-out', () => {
  it('one review suggestion per line, carrying every safe edit of the line', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'] });
    await receive('pull_request', scenario.payload);
    const comments = fake.pull(FULL, 7)!.reviews.flatMap((review) => review.comments);
    const lines = comments.map((comment) => comment.line);
    expect(new Set(lines).size).toBe(lines.length);
    const line3 = comments.find((comment) => comment.line === 3)!;
    expect(line3.body).toContain('```suggestion\ntorchvision==0.20.1+cu124\n```');
  });

  it('a failure shows every error GitHub gave, not the first line', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'] });
    fake.fail({
      method: 'POST',
      path: /^\/graphql$/,
      status: 200,
      body: {
        errors: [
          { type: 'INTERNAL', message: 'Something went wrong while executing your query.' },
          { type: 'TIMEOUT', message: 'The query took too long.' },
        ],
      },
    });
    await receive('pull_request', scenario.payload);
    const summary = latest(scenario).output?.summary ?? '';
    expect(summary).toContain('Something went wrong while executing your query.');
    expect(summary).toContain('The query took too long.');
  });

  it('finds its own comment after 100 other comments and updates it', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'] });
    const pull = fake.pull(FULL, 7)!;
    pull.comments.push({ id: 1, body: '<!-- cuda-gatekeeper:comment -->\nold answer', login: BOT_LOGIN });
    for (let i = 0; i < 150; i++) pull.comments.push({ id: 10 + i, body: `comment ${i}`, login: 'octocat' });
    await receive('issue_comment', commentPayload(fake, scenario, '/cuda-check help'));
    expect(pull.comments.filter((comment) => comment.body.includes('cuda-gatekeeper:comment'))).toHaveLength(1);
    expect(pull.comments[0]!.body).toContain('/cuda-check explain');
  });

  it('a baseline merge with migration pull requests off reads no repository for migrations', async () => {
    fake.addRepo(`${OWNER}/vision`, { 'requirements.txt': 'torch==2.3.0\n' });
    await receive(
      'push',
      baselinePush(
        fake,
        OWNER,
        codeBlock`
          pinning:
            python: exact
        `,
      ),
    );
    await deps.fanout.idle();
    expect(calls().filter((call) => call.includes('/git/trees/'))).toEqual([]);
  });

  it('counts each job’s own API calls when jobs share one Octokit', async () => {
    const a = pullScenario(fake, { head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'], number: 1 });
    const b = pullScenario(fake, { head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'], number: 2 });
    const github = (await probot.auth(42)) as never;
    const { checkPull } = await import('../../src/github/pull-check.js');
    const log = {
      info: (o: object, msg?: string) => logs.push({ level: 30, msg: msg ?? '', ...o }),
      warn: () => undefined,
      error: () => undefined,
    };
    for (const scenario of [a, b]) {
      const target = {
        owner: OWNER,
        repo: 'trainer',
        number: scenario.number,
        headSha: scenario.headSha,
        headRef: 'cuda-upgrade',
        headRepo: FULL,
        installationId: 42,
      };
      await checkPull(github, deps, log, { target, trigger: 'event', deliveryId: `job-${scenario.number}` });
    }
    const counts = logs.filter((line) => line.msg === 'check completed').map((line) => line.apiCalls);
    // The first job also makes the installation-token request; before, each job's hook counted every job's calls.
    expect(counts).toEqual([5, 4]); // (token,) file list, GraphQL read, check run, review
  });

  it('a delivery that failed runs again when it is redelivered', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIVE }, changed: ['requirements.txt'] });
    fake.fail({ method: 'GET', path: /\/pulls\/7\/files$/, status: 502 });
    await receive('pull_request', scenario.payload, 'delivery-x');
    expect(latest(scenario).conclusion).toBe('failure');
    expect(latest(scenario).output?.title).toBe('cuda-gatekeeper could not check this pull request');
    await receive('pull_request', scenario.payload, 'delivery-x');
    expect(latest(scenario).output?.title).not.toBe('cuda-gatekeeper could not check this pull request');
    // And a delivery that succeeded is not run twice.
    const runs = fake.checkRuns.length;
    await receive('pull_request', scenario.payload, 'delivery-x');
    expect(fake.checkRuns).toHaveLength(runs);
  });
});

describe('the files people name', () => {
  it('a changed YAML file that is a conda environment by content is checked; the baseline’s files.exclude is honoured', async () => {
    const env = codeBlock`
      name: gpu
      channels:
        - pytorch
        - nvidia
      dependencies:
        - pytorch=2.1.2
        - pytorch-cuda=12.6
    `;
    const scenario = pullScenario(fake, {
      main: {
        '.github/cuda-gatekeeper.yml': codeBlock`
          files:
            exclude: ["vendor/"]
        `,
      },
      head: {
        'packages/env.gpu.yml': env,
        'deploy/values.yaml': 'replicas: 2\n',
        'vendor/requirements.txt': 'torch==2.3.0+cu999\n',
      },
      changed: ['packages/env.gpu.yml', 'deploy/values.yaml', 'vendor/requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    const paths = new Set((latest(scenario).annotations as { path: string }[]).map((annotation) => annotation.path));
    expect([...paths]).toEqual(['packages/env.gpu.yml']);
  });
});
