/** `/cuda-check` comments and the Apply fixes button, with real payloads and the spec-validating fake GitHub. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import { FakeGitHub } from '../support/fake-github.js';
import { example, setup, teardown } from '../support/probot.js';
import { FULL, OWNER, pullScenario, REPO, type Scenario } from './scenario.js';

const REQUIREMENTS = '--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121\ntorchvision==0.17.0+cu121\n';

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

/** @octokit/webhooks-examples has no comment on a pull request: derive one by adding issue.pull_request. */
function comment(scenario: Scenario, body: string, user = { login: 'octocat', type: 'User' }): Record<string, unknown> {
  const payload = example('issue_comment', 'created');
  Object.assign(payload.repository as object, { name: REPO, full_name: FULL });
  Object.assign((payload.repository as { owner: object }).owner, { login: OWNER });
  const issue = payload.issue as Record<string, unknown>;
  Object.assign(issue, { number: scenario.number, pull_request: { url: `https://api.github.com/repos/${FULL}/pulls/${scenario.number}`, html_url: '', diff_url: '', patch_url: '' } });
  Object.assign(payload.comment as object, { id: 555, body, user: { ...((payload.comment as { user: object }).user), ...user } });
  Object.assign(payload.sender as object, user);
  Object.assign(payload.installation as object, { id: 42 });
  return payload;
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
    await probot.receive({ id: 'c1', name: 'issue_comment', payload: comment(scenario, '/cuda-check explain cuda-mismatch') } as never);
    expect(botComments()).toHaveLength(1);
    expect(botComments()[0]!.body).toContain('### cuda-mismatch');
    expect(botComments()[0]!.body).toContain('## Why');
    await probot.receive({ id: 'c2', name: 'issue_comment', payload: comment(scenario, '/cuda-check explain no-such-rule') } as never);
    expect(botComments()).toHaveLength(1);
    expect(botComments()[0]!.body).toContain('There is no rule `no-such-rule`');
  });

  it('baseline shows the effective values and where each comes from', async () => {
    const scenario = pullScenario(fake, { org: { 'cuda-gatekeeper.yml': 'driver:\n  minimum: "550.54.14"\nlocked: ["driver.minimum"]\n' }, main: { '.github/cuda-gatekeeper.yml': 'cuda:\n  allowed: ["12.4"]\n' }, head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'c', name: 'issue_comment', payload: comment(scenario, '/cuda-check baseline') } as never);
    const body = botComments()[0]!.body;
    expect(body).toMatch(/\| `cuda\.allowed` \| `12\.4` \| octo-org\/trainer:\.github\/cuda-gatekeeper\.yml@\w{7} \|/);
    expect(body).toMatch(/\| `driver\.minimum` \| `550\.54\.14` \| octo-org\/\.github:cuda-gatekeeper\.yml@\w{7} \|/);
    expect(body).toContain('Locked by the organisation: `driver.minimum`');
  });

  it('plan answers with the upgrade plan', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'c', name: 'issue_comment', payload: comment(scenario, '/cuda-check plan 12.4') } as never);
    expect(botComments()[0]!.body).toContain('### Plan: move to CUDA 12.4');
    expect(botComments()[0]!.body).toContain('`torch==2.3.0+cu121` | `torch==2.4.1+cu124`');
  });

  it('unknown subcommands get a short help text', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'c', name: 'issue_comment', payload: comment(scenario, '/cuda-check frobnicate') } as never);
    expect(botComments()[0]!.body).toContain('unknown command `frobnicate`');
    expect(botComments()[0]!.body).toContain('| `/cuda-check fix` |');
  });

  it('ignores bots, including itself, and comments without a command', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'c1', name: 'issue_comment', payload: comment(scenario, '/cuda-check', { login: 'cuda-gatekeeper[bot]', type: 'Bot' }) } as never);
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
    await probot.receive({ id: 'c', name: 'issue_comment', payload: comment(scenario, '/cuda-check fix') } as never);
    expect(fake.commits).toEqual([expect.objectContaining({ branch: 'cuda-upgrade', repo: FULL, files: [{ path: 'requirements.txt', contents: REQUIREMENTS.replace('torchvision==0.17.0', 'torchvision==0.18.0') }] })]);
    expect(botComments()[0]!.body).toMatch(/Committed 1 safe fix to `cuda-upgrade`/);
  });
});

describe('the Apply fixes button', () => {
  function requestedAction(scenario: Scenario, headRepoUrl = `https://api.github.com/repos/${FULL}`): Record<string, unknown> {
    const payload = example('check_run', 'requested_action');
    Object.assign(payload.repository as object, { name: REPO, full_name: FULL });
    Object.assign((payload.repository as { owner: object }).owner, { login: OWNER });
    Object.assign(payload.check_run as object, { head_sha: scenario.headSha, pull_requests: [{ number: 7, url: '', id: 1, head: { ref: 'cuda-upgrade', sha: scenario.headSha, repo: { id: 2, url: headRepoUrl, name: REPO } }, base: { ref: 'main', sha: 'x', repo: { id: 1, url: `https://api.github.com/repos/${FULL}`, name: REPO } } }] });
    Object.assign(payload, { requested_action: { identifier: 'apply_fixes' } });
    Object.assign(payload.installation as object, { id: 42 });
    return payload;
  }

  it('commits the safe fixes when the branch is in the repository', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'] });
    await probot.receive({ id: 'a', name: 'check_run', payload: requestedAction(scenario) } as never);
    expect(fake.commits).toHaveLength(1);
    expect(fake.commits[0]!.files[0]!.contents).toContain('torchvision==0.18.0+cu121');
  });

  it('explains how to apply the suggestions for a fork', async () => {
    const scenario = pullScenario(fake, { head: { 'requirements.txt': REQUIREMENTS }, changed: ['requirements.txt'], fork: 'someone/trainer' });
    await probot.receive({ id: 'a', name: 'check_run', payload: requestedAction(scenario, 'https://api.github.com/repos/someone/trainer') } as never);
    expect(fake.commits).toEqual([]);
    expect(botComments()[0]!.body).toContain('comes from the fork someone/trainer');
  });
});
