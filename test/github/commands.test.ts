/** `/cuda-check` comments and the Apply fixes button, with real payloads and the spec-validating fake GitHub. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import { FakeGitHub } from '../support/fake-github.js';
import { setup, teardown } from '../support/probot.js';
import { checkRunPayload, commentPayload, FULL, pullScenario, type Scenario } from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

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
  expect(fake.violations).toEqual([]);
  teardown();
});

function comment(scenario: Scenario, body: string, user = { login: 'octocat', type: 'User' }): Record<string, unknown> {
  return commentPayload(fake, scenario, body, user);
}

const botComments = () => fake.pull(FULL, 7)!.comments;

describe('/cuda-check commands', () => {
  it('/cuda-check re-runs the check and acknowledges with a reaction', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'c1', name: 'issue_comment', payload: comment(scenario, '/cuda-check') } as never);
    expect(fake.reactions).toEqual([{ commentId: 555, content: 'eyes' }]);
    expect(fake.checkRuns).toHaveLength(1);
  });

  it('explain answers with the rule documentation and keeps one comment, updated in place', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({
      id: 'c1',
      name: 'issue_comment',
      payload: comment(scenario, '/cuda-check explain cuda-mismatch'),
    } as never);
    expect(botComments()).toHaveLength(1);
    expect(botComments()[0]!.body).toContain('### cuda-mismatch');
    expect(botComments()[0]!.body).toContain('## Why');
    await probot.receive({
      id: 'c2',
      name: 'issue_comment',
      payload: comment(scenario, '/cuda-check explain no-such-rule'),
    } as never);
    expect(botComments()).toHaveLength(1);
    expect(botComments()[0]!.body).toContain('There is no rule `no-such-rule`');
  });

  it('baseline shows the effective values and where each comes from', async () => {
    const scenario = pullScenario(fake, {
      org: {
        'cuda-gatekeeper.yml': codeBlock`
          driver:
            minimum: "550.54.14"
          locked: ["driver.minimum"]
        `,
      },
      main: {
        '.github/cuda-gatekeeper.yml': codeBlock`
          cuda:
            allowed: ["12.4"]
        `,
      },
      head: { 'requirements.txt': REQUIREMENTS },
      changed: ['requirements.txt'],
    });
    await probot.receive({
      id: 'c',
      name: 'issue_comment',
      payload: comment(scenario, '/cuda-check baseline'),
    } as never);
    const body = botComments()[0]!.body;
    expect(body).toMatch(/\| `cuda\.allowed` \| `12\.4` \| octo-org\/trainer:\.github\/cuda-gatekeeper\.yml@\w{7} \|/);
    expect(body).toMatch(/\| `driver\.minimum` \| `550\.54\.14` \| octo-org\/\.github:cuda-gatekeeper\.yml@\w{7} \|/);
    expect(body).toContain('Locked by the organisation: `driver.minimum`');
  });

  it('plan answers with the upgrade plan', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({
      id: 'c',
      name: 'issue_comment',
      payload: comment(scenario, '/cuda-check plan 12.4'),
    } as never);
    expect(botComments()[0]!.body).toContain('### Plan: move to CUDA 12.4');
    expect(botComments()[0]!.body).toContain('`torch==2.3.0+cu121` | `torch==2.4.1+cu124`');
  });

  it('unknown subcommands get a short help text', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({
      id: 'c',
      name: 'issue_comment',
      payload: comment(scenario, '/cuda-check frobnicate'),
    } as never);
    expect(botComments()[0]!.body).toContain('unknown command `frobnicate`');
    expect(botComments()[0]!.body).toContain('| `/cuda-check fix` |');
  });

  it('ignores bots, including itself, and comments without a command', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({
      id: 'c1',
      name: 'issue_comment',
      payload: comment(scenario, '/cuda-check', { login: 'cuda-gatekeeper[bot]', type: 'Bot' }),
    } as never);
    await probot.receive({ id: 'c2', name: 'issue_comment', payload: comment(scenario, 'looks good to me') } as never);
    expect(fake.requests).toEqual([]);
  });

  it('fix refuses politely without write permission', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.permissions.set('octocat', 'read');
    await probot.receive({ id: 'c', name: 'issue_comment', payload: comment(scenario, '/cuda-check fix') } as never);
    expect(botComments()[0]!.body).toContain('only people with write access');
    expect(fake.commits).toEqual([]);
  });

  it('fix commits the safe fixes to the branch for a writer', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.permissions.set('octocat', 'write');
    fake.installationPermissions.contents = 'write';
    await probot.receive({ id: 'c', name: 'issue_comment', payload: comment(scenario, '/cuda-check fix') } as never);
    expect(fake.commits).toEqual([
      expect.objectContaining({
        branch: 'cuda-upgrade',
        repo: FULL,
        files: [
          { path: 'requirements.txt', contents: REQUIREMENTS.replace('torchvision==0.17.0', 'torchvision==0.18.0') },
        ],
      }),
    ]);
    expect(botComments()[0]!.body).toMatch(/Committed 1 safe fix to `cuda-upgrade`/);
  });
});

describe('the Apply fixes button', () => {
  /** The button on our run: pull_requests lists the pull request, except for a fork (GitHub lists none). */
  async function requestedAction(scenario: Scenario): Promise<Record<string, unknown>> {
    await probot.receive({ id: 'opened', name: 'pull_request', payload: scenario.payload } as never);
    return checkRunPayload(fake, scenario, fake.checkRuns.at(-1)!, 'requested_action');
  }

  it('commits the safe fixes when the branch is in the repository', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    fake.installationPermissions.contents = 'write';
    fake.permissions.set('octocat', 'write');
    await probot.receive({ id: 'a', name: 'check_run', payload: await requestedAction(scenario) } as never);
    expect(fake.commits).toHaveLength(1);
    expect(fake.commits[0]!.files[0]!.contents).toContain('torchvision==0.18.0+cu121');
  });

  it('explains how to apply the suggestions for a fork', async () => {
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': REQUIREMENTS },
      changed: ['requirements.txt'],
      fork: 'someone/trainer',
    });
    fake.installationPermissions.contents = 'write';
    fake.permissions.set('octocat', 'write');
    // A fork's run offers no button (nothing can be pushed there); an old run's button still gets an answer.
    expect(fake.checkRuns.at(-1)?.actions).toBeUndefined();
    await probot.receive({ id: 'a', name: 'check_run', payload: await requestedAction(scenario) } as never);
    expect(fake.commits).toEqual([]);
    expect(botComments()[0]!.body).toContain('comes from the fork someone/trainer');
  });
});
