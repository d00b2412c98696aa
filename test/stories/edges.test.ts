/**
 * The App at GitHub's edges (issue 25), as user stories against the fake GitHub, which answers as the cited GitHub
 * pages say (test/support/fake-github.ts): a required check never says success about files it did not see, a run
 * describes the commit it is posted on, rate limits and outages never erase a verdict, only people who may write
 * get a commit, and the organisation's baseline reaches every installation that can see it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import type { AppDeps } from '../../src/github/deps.js';
import { packageRoot } from '../../src/util/package-root.js';
import { FakeGitHub } from '../support/fake-github.js';
import { example, setup, teardown } from '../support/probot.js';
import {
  addedPatch,
  checkRunPayload,
  commentPayload,
  FULL,
  OWNER,
  pullScenario,
  type Scenario,
} from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

const GOOD = codeBlock`
  --index-url https://download.pytorch.org/whl/cu124
  torch==2.5.1+cu124
  torchvision==0.20.1+cu124
`;
const BROKEN = codeBlock`
  --index-url https://download.pytorch.org/whl/cu118
  torch==2.3.0+cu118
`;
const IMAGE = codeBlock`
  FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
  COPY requirements.txt .
  RUN pip install -r requirements.txt
`;
/** A safe fix on line 3 (torchvision of another torch). */
const FIXABLE = codeBlock`
  --index-url https://download.pytorch.org/whl/cu121
  torch==2.3.0+cu121
  torchvision==0.17.0+cu121
`;

let fake: FakeGitHub;
let probot: Probot;
let deps: AppDeps;

beforeEach(() => {
  fake = new FakeGitHub();
  ({ probot, deps } = setup(fake));
});

afterEach(() => {
  expect(fake.violations, "every request matches GitHub's API description").toEqual([]);
  expect(fake.annotationProblems, 'every annotation is on a line of a file of its commit').toEqual([]);
  teardown();
});

let delivered = 0;
const receive = (name: string, payload: Record<string, unknown>, id = `${name}-${++delivered}`) =>
  probot.receive({ id, name, payload } as never);
const calls = () => fake.requests.map((request) => `${request.method} ${request.path}`);
const runs = (scenario: Scenario) => fake.runsOn(scenario.headSha);
const latest = (scenario: Scenario) => runs(scenario).at(-1)!;
const paths = (annotations: unknown[]) =>
  (annotations as { path: string; start_line: number }[]).map(
    (annotation) => `${annotation.path}:${annotation.start_line}`,
  );

async function waitFor<T>(probe: () => T | undefined, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('1. more changed files than GitHub lists', () => {
  /** 3,049 unrelated files, then (3,050th) a Dockerfile that installs a cu118 wheel on a CUDA 12.4 image. */
  function bigPull(): Scenario {
    const head: Record<string, string> = {};
    const changed: string[] = [];
    for (let i = 0; i < 3049; i++) {
      head[`docs/page-${String(i).padStart(4, '0')}.md`] = `page ${i}\n`;
      changed.push(`docs/page-${String(i).padStart(4, '0')}.md`);
    }
    head['zz/Dockerfile'] = codeBlock`
      FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
      RUN pip install torch==2.3.0+cu118 --extra-index-url https://download.pytorch.org/whl/cu118
    `;
    changed.push('zz/Dockerfile');
    return pullScenario(fake, { head, changed });
  }

  it('finds the broken Dockerfile past the 3,000th file through the trees of head and merge base', async () => {
    const scenario = bigPull();
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(run.conclusion).toBe('failure');
    expect(paths(run.annotations)).toContain('zz/Dockerfile:2');
    expect(calls().filter((call) => call.includes('/git/trees/'))).toHaveLength(2);
    expect(calls().filter((call) => call.includes('/compare/'))).toHaveLength(1);
  }, 30_000);

  it('says which limit was hit, and fails, when the tree is too large to list too', async () => {
    const scenario = bigPull();
    fake.treeLimit = 1000;
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(run.conclusion).toBe('failure');
    expect(run.output?.title).toMatch(
      /not every changed file was seen \(GitHub lists at most 3,000 changed files and the head commit's tree is larger/,
    );
    expect(run.output?.title).not.toMatch(/^No CUDA/);
  }, 30_000);
});

describe('2. a run describes the commit it is posted on', () => {
  it('a push that lands before the files are listed does not lend commit C the file list of the newer commit', async () => {
    // C breaks requirements.txt; the push after it (C') only touches the README, so GitHub's list for C' lacks it.
    const scenario = pullScenario(fake, {
      main: { Dockerfile: IMAGE, 'requirements.txt': GOOD },
      head: { 'requirements.txt': BROKEN },
      changed: ['requirements.txt'],
    });
    fake.push(FULL, 7, { Dockerfile: IMAGE, 'requirements.txt': GOOD, 'README.md': '# hi\n' }, [
      { filename: 'README.md', status: 'added', patch: addedPatch('# hi\n') },
    ]);
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(run).toMatchObject({ head_sha: scenario.headSha, conclusion: 'failure' });
    expect(paths(run.annotations)).toContain('requirements.txt:2');
    // The exact pair was compared, and the blobs were read at C.
    expect(calls()).toContain(`GET /repos/${FULL}/compare/${fake.pull(FULL, 7)!.baseSha}...${scenario.headSha}`);
  });

  it('the common pull request still costs one list of files and no comparison', async () => {
    const scenario = pullScenario(fake, {
      main: { Dockerfile: IMAGE },
      head: { 'requirements.txt': GOOD },
      changed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    expect(calls().some((call) => call.includes('/compare/'))).toBe(false);
  });
});

describe('3. a file that could not be checked', () => {
  const demo = (name: string) => readFileSync(join(packageRoot(), 'fixtures', 'repos', 'demo-uv', name), 'utf8');

  it('is named with its reason in the title, and fails the run', async () => {
    const padded = `torch==2.3.0\n${'# padding\n'.repeat(140_000)}`;
    const scenario = pullScenario(fake, { head: { 'requirements.txt': padded }, changed: ['requirements.txt'] });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario)).toMatchObject({
      conclusion: 'failure',
      output: expect.objectContaining({
        title: '1 file not checked (requirements.txt: 1.3 MiB, over the 1 MiB size limit)',
      }),
    });
  });

  it('a lock file over 1 MiB is read whole through REST and checked', async () => {
    const lock = `${demo('uv.lock')}${'# padding\n'.repeat(140_000)}`;
    const scenario = pullScenario(fake, {
      main: { 'pyproject.toml': demo('pyproject.toml'), Dockerfile: demo('Dockerfile') },
      head: { 'uv.lock': lock },
      changed: ['uv.lock'],
    });
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(run.conclusion).toBe('failure');
    expect(run.output?.title).not.toContain('not checked');
    expect(paths(run.annotations)).toContain('uv.lock:24');
    // GraphQL gave the start of the blob (isTruncated); the whole came from "Get a blob", once.
    expect(calls().filter((call) => call.includes('/git/blobs/'))).toHaveLength(1);
  });
});

describe('4. rate limits and outages never erase a verdict', () => {
  const failing = () => pullScenario(fake, { head: { 'requirements.txt': FIXABLE }, changed: ['requirements.txt'] });

  it('a Re-run that meets a secondary rate limit leaves the verdict, then posts the real one once GitHub allows', async () => {
    const scenario = failing();
    await receive('pull_request', scenario.payload);
    const verdict = latest(scenario);
    expect(verdict.conclusion).toBe('failure');
    fake.secondaryRateLimit(/\/pulls\/7\/files$/, 1);
    await receive('check_run', checkRunPayload(fake, scenario, verdict, 'rerequested'));
    // Nothing replaced the verdict while GitHub asked us to wait.
    expect(latest(scenario).id).toBe(verdict.id);
    expect(runs(scenario).map((run) => run.output?.title)).not.toContain(
      'cuda-gatekeeper could not check this pull request',
    );
    // After retry-after (1 s), the re-run happens and says it waited.
    const again = await waitFor(() => (runs(scenario).length > 1 ? latest(scenario) : undefined));
    expect(again).toMatchObject({
      conclusion: 'failure',
      output: expect.objectContaining({ title: verdict.output?.title }),
    });
    expect(again.output?.summary).toContain("GitHub's rate limit held this check back");
  }, 20_000);

  it('a long wait keeps the verdict and schedules the re-check', async () => {
    const scenario = failing();
    await receive('pull_request', scenario.payload);
    const verdict = latest(scenario);
    fake.secondaryRateLimit(/\/pulls\/7\/files$/, 3600);
    await receive('check_run', checkRunPayload(fake, scenario, verdict, 'rerequested'));
    expect(runs(scenario)).toHaveLength(1);
    expect((deps.fanout as { delayedCount?: number }).delayedCount).toBe(1);
  });

  it('with no verdict yet, a rate-limited first check says when it will run, and fails closed meanwhile', async () => {
    const scenario = failing();
    fake.secondaryRateLimit(/\/pulls\/7\/files$/, 3600);
    await receive('pull_request', scenario.payload);
    expect(latest(scenario)).toMatchObject({ conclusion: 'failure' });
    expect(latest(scenario).output?.summary).toMatch(
      /GitHub's rate limit stops this check until \d\d:\d\d UTC; it runs again then by itself/,
    );
  });

  it('an outage during a Re-run leaves the verdict in place and retries', async () => {
    const scenario = failing();
    await receive('pull_request', scenario.payload);
    const verdict = latest(scenario);
    fake.fail({ method: 'GET', path: /\/pulls\/7\/files$/, status: 502 });
    await receive('check_run', checkRunPayload(fake, scenario, verdict, 'rerequested'));
    expect(latest(scenario).id).toBe(verdict.id);
    expect((deps.fanout as { delayedCount?: number }).delayedCount).toBe(1);
  });
});

describe('5. Apply fixes commits only for people who may write', () => {
  it('a click by someone without write access commits nothing and says why', async () => {
    fake.installationPermissions.contents = 'write';
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIXABLE }, changed: ['requirements.txt'] });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario).actions).toEqual([expect.objectContaining({ identifier: 'apply_fixes' })]);
    fake.permissions.set('drive-by', 'read');
    await receive(
      'check_run',
      checkRunPayload(fake, scenario, latest(scenario), 'requested_action', {
        sender: { login: 'drive-by', type: 'User' },
      }),
    );
    expect(fake.commits).toEqual([]);
    expect(fake.pull(FULL, 7)!.comments.at(-1)!.body).toContain('Sorry @drive-by, only people with write access');
    // The same click by a maintainer commits.
    fake.permissions.set('maintainer', 'maintain');
    await receive(
      'check_run',
      checkRunPayload(fake, scenario, latest(scenario), 'requested_action', {
        sender: { login: 'maintainer', type: 'User' },
      }),
    );
    expect(fake.commits).toHaveLength(1);
  });
});

describe('6. a read-only installation gets no dead button', () => {
  it('offers no Apply fixes, says how to enable it, and answers /cuda-check fix plainly', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIXABLE }, changed: ['requirements.txt'] });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario).actions).toBeUndefined();
    expect(latest(scenario).output?.summary).toContain('**Contents: Read and write**');
    fake.permissions.set('octocat', 'write');
    await receive('issue_comment', commentPayload(fake, scenario, '/cuda-check fix'));
    const answer = fake.pull(FULL, 7)!.comments.at(-1)!.body;
    expect(answer).toContain('may read contents but not write them');
    expect(answer).not.toContain('Resource not accessible by integration');
    expect(fake.commits).toEqual([]);
  });
});

describe('7. closed and merged pull requests', () => {
  it('/cuda-check fix on a merged pull request says it is merged', async () => {
    fake.installationPermissions.contents = 'write';
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIXABLE }, changed: ['requirements.txt'] });
    fake.pull(FULL, 7)!.state = 'merged';
    fake.permissions.set('octocat', 'write');
    await receive('issue_comment', commentPayload(fake, scenario, '/cuda-check fix'));
    expect(fake.pull(FULL, 7)!.comments.at(-1)!.body).toContain('This pull request is merged');
    expect(fake.commits).toEqual([]);
  });

  it('a Re-run on a closed pull request offers no Apply fixes', async () => {
    fake.installationPermissions.contents = 'write';
    const scenario = pullScenario(fake, { head: { 'requirements.txt': FIXABLE }, changed: ['requirements.txt'] });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario).actions).toBeDefined();
    fake.pull(FULL, 7)!.state = 'closed';
    await receive('check_run', checkRunPayload(fake, scenario, latest(scenario), 'rerequested'));
    expect(runs(scenario)).toHaveLength(2);
    expect(latest(scenario).actions).toBeUndefined();
    expect(latest(scenario).output?.summary).toContain('This pull request is closed');
  });
});

describe('8. the organisation baseline on every installation', () => {
  const ORG = {
    'cuda-gatekeeper.yml': codeBlock`
      cuda:
        allowed: ["11.8"]
    `,
  };

  it('while .github is outside a selected-repository installation, the summary and /cuda-check baseline say so', async () => {
    const scenario = pullScenario(fake, {
      org: ORG,
      head: { 'requirements.txt': GOOD },
      changed: ['requirements.txt'],
    });
    fake.selected = new Set([FULL]);
    await receive('pull_request', scenario.payload);
    expect(latest(scenario).output?.summary).toContain('The organisation baseline cannot be seen.');
    await receive('issue_comment', commentPayload(fake, scenario, '/cuda-check baseline'));
    expect(fake.pull(FULL, 7)!.comments.at(-1)!.body).toContain(`\`${OWNER}/.github\` is not one of them`);
  });

  it('adding .github to the installation takes effect at once: open pull requests are checked again under it', async () => {
    const scenario = pullScenario(fake, {
      org: ORG,
      head: { 'requirements.txt': GOOD },
      changed: ['requirements.txt'],
    });
    fake.selected = new Set([FULL]);
    await receive('pull_request', scenario.payload);
    expect(latest(scenario).conclusion).toBe('success');
    // The installation now sees .github (installation_repositories.added).
    fake.selected.add(`${OWNER}/.github`);
    const payload = example('installation_repositories', 'added');
    Object.assign(payload.installation as object, {
      id: 42,
      account: { ...(payload.installation as { account: object }).account, login: OWNER },
    });
    Object.assign(payload, {
      repositories_added: [{ id: 1, node_id: 'R', name: '.github', full_name: `${OWNER}/.github`, private: false }],
    });
    await receive('installation_repositories', payload);
    await deps.fanout.idle();
    const rechecked = latest(scenario);
    expect(rechecked.conclusion).toBe('failure');
    expect(JSON.stringify(rechecked.annotations)).toContain('cuda-not-allowed');
  });
});

describe('9. annotations only where GitHub can show them', () => {
  it("an organisation baseline's problem is in the summary with a link, never an annotation on a path this repository lacks", async () => {
    const scenario = pullScenario(fake, {
      org: {
        'cuda-gatekeeper.yml': codeBlock`
          cuda:
            alowed: ["12.4"]
        `,
      },
      head: { 'requirements.txt': GOOD },
      changed: ['requirements.txt'],
    });
    await receive('pull_request', scenario.payload);
    const run = latest(scenario);
    expect(paths(run.annotations).some((path) => path.startsWith(`${OWNER}/.github`))).toBe(false);
    expect(run.output?.summary).toMatch(
      /### Baseline problems[\s\S]*\(https:\/\/github\.com\/octo-org\/\.github\/blob\/[0-9a-f]{40}\/cuda-gatekeeper\.yml#L2\)/,
    );
  });

  it('a problem at the very end of a file is annotated on its last line', async () => {
    // The unclosed array is reported where the text ends: after the last newline, a line GitHub does not show.
    const scenario = pullScenario(fake, {
      head: {
        'pyproject.toml': codeBlock`
          [project]
          dependencies = ["torch==2.3.0+cu118"
        `,
      },
      changed: ['pyproject.toml'],
    });
    await receive('pull_request', scenario.payload);
    expect(paths(latest(scenario).annotations)).toContain('pyproject.toml:2');
    // (afterEach: no annotation past a file's last line)
  });
});

describe('10. API calls stay small', () => {
  it('a pull request that changes only uv.lock is checked in 4 calls (token, file list, one read, the run)', async () => {
    const demo = (name: string) => readFileSync(join(packageRoot(), 'fixtures', 'repos', 'demo-uv', name), 'utf8');
    const main = { Dockerfile: demo('Dockerfile'), 'pyproject.toml': demo('pyproject.toml') };
    const scenario = pullScenario(fake, { main, head: { ...main, 'uv.lock': demo('uv.lock') }, changed: ['uv.lock'] });
    await receive('pull_request', scenario.payload);
    expect(latest(scenario).conclusion).toBe('failure');
    expect(calls().filter((call) => !call.endsWith('/reviews'))).toEqual([
      'POST /app/installations/42/access_tokens',
      `GET /repos/${FULL}/pulls/7/files`,
      'POST /graphql',
      `POST /repos/${FULL}/check-runs`,
    ]);
  });
});
