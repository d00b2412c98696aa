/**
 * Builds repositories, pull requests and the matching webhook payloads on a FakeGitHub. Payloads start from real
 * examples (@octokit/webhooks-examples) and are filled in as GitHub fills them: a pull request from a fork has
 * `head.repo` of the fork, and check_suite / check_run payloads list no pull request for it ("When the check
 * suite's head_branch is in a forked repository it will be null and the pull_requests array will be empty":
 * docs.github.com/en/webhooks/webhook-events-and-payloads#check_suite).
 */
import { createHash } from 'node:crypto';
import type { CheckRun, FakeFile, FakeGitHub } from './fake-github.js';
import { example } from './probot.js';

export const OWNER = 'octo-org';
export const REPO = 'trainer';
export const FULL = `${OWNER}/${REPO}`;

export interface Scenario {
  readonly repo: string;
  readonly headSha: string;
  readonly number: number;
  /** owner/name of the head branch's repository (a fork's, for fork pull requests). */
  readonly headRepo: string;
  readonly payload: Record<string, unknown>;
}

/** Unified diff that adds every line of `text` (what GitHub returns for a new file). */
export function addedPatch(text: string): string {
  const lines = text.replace(/\n$/, '').split('\n');
  return `@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join('\n')}`;
}

/** The repository part of a payload, as GitHub gives it for `full` (its id is the fake's). */
function repositoryOf(fake: FakeGitHub, full: string): Record<string, unknown> {
  const [owner, name] = full.split('/') as [string, string];
  const repo = fake.repos.get(full.toLowerCase());
  return {
    id: repo?.id ?? 1,
    name,
    full_name: full,
    default_branch: repo?.defaultBranch ?? 'main',
    owner: { login: owner, type: repo?.ownerType ?? 'Organization' },
  };
}

function withRepository(payload: Record<string, unknown>, fake: FakeGitHub, full: string): Record<string, unknown> {
  const repository = payload.repository as Record<string, unknown>;
  const ours = repositoryOf(fake, full);
  Object.assign(repository, { ...ours, owner: { ...(repository.owner as object), ...(ours.owner as object) } });
  Object.assign(payload.installation as object, { id: 42 });
  return payload;
}

export interface PullOptions {
  main?: Record<string, string>;
  head: Record<string, string>;
  changed: readonly string[];
  number?: number;
  /** The fork the head branch lives in (owner/name). */
  fork?: string;
  removed?: readonly string[];
  org?: Record<string, string>;
  /** The repository (default octo-org/trainer). */
  repo?: string;
  /** The owner is a user account, not an organisation. */
  user?: boolean;
  action?: 'opened' | 'synchronize' | 'reopened';
}

export function pullScenario(fake: FakeGitHub, options: PullOptions): Scenario {
  const full = options.repo ?? FULL;
  const owner = full.split('/')[0]!;
  const main = options.main ?? {};
  if (!fake.repos.has(full.toLowerCase())) fake.addRepo(full, main, 'main', options.user ? 'User' : 'Organization');
  if (options.org && !fake.repos.has(`${owner}/.github`)) fake.addRepo(`${owner}/.github`, options.org);
  const removed = new Set(options.removed ?? []);
  const tree = Object.fromEntries(Object.entries({ ...main, ...options.head }).filter(([path]) => !removed.has(path)));
  const headSha = fake.commit(tree);
  const number = options.number ?? 7;
  const files: FakeFile[] = [
    ...options.changed.map((filename) => ({
      filename,
      status: filename in main ? ('modified' as const) : ('added' as const),
      patch: addedPatch(options.head[filename] ?? ''),
    })),
    ...[...removed].map((filename) => ({ filename, status: 'removed' as const })),
  ];
  const headRepo = options.fork ?? full;
  fake.addPull(full, { number, headSha, headRef: 'cuda-upgrade', headRepo, files });
  const payload = withRepository(example('pull_request', 'opened'), fake, full);
  const pr = payload.pull_request as Record<string, unknown>;
  Object.assign(pr, { number });
  const headRepository = options.fork
    ? { ...repositoryOf(fake, options.fork), id: 999_999, fork: true }
    : repositoryOf(fake, full);
  Object.assign(pr.head as object, {
    sha: headSha,
    ref: 'cuda-upgrade',
    repo: { ...(((pr.head as Record<string, unknown>).repo as object) ?? {}), ...headRepository },
  });
  Object.assign(pr.base as object, {
    sha: fake.pull(full, number)!.baseSha,
    repo: { ...(((pr.base as Record<string, unknown>).repo as object) ?? {}), ...repositoryOf(fake, full) },
  });
  Object.assign(pr, { changed_files: files.length, state: 'open' });
  Object.assign(payload, { number, action: options.action ?? 'opened' });
  return { repo: full, headSha, number, headRepo, payload };
}

/** A pull request as check_suite and check_run payloads list it (none for a fork). */
function listedPulls(fake: FakeGitHub, scenario: Scenario): unknown[] {
  if (scenario.headRepo.toLowerCase() !== scenario.repo.toLowerCase()) return [];
  const repo = repositoryOf(fake, scenario.repo) as { id: number; name: string };
  const ref = { id: repo.id, url: `https://api.github.com/repos/${scenario.repo}`, name: repo.name };
  return [
    {
      url: `https://api.github.com/repos/${scenario.repo}/pulls/${scenario.number}`,
      id: scenario.number,
      number: scenario.number,
      head: { ref: 'cuda-upgrade', sha: scenario.headSha, repo: ref },
      base: { ref: 'main', sha: fake.pull(scenario.repo, scenario.number)?.baseSha ?? '0'.repeat(40), repo: ref },
    },
  ];
}

/** check_suite.requested (every push) or .rerequested ("Re-run all checks"). */
export function checkSuitePayload(
  fake: FakeGitHub,
  scenario: Scenario,
  action: 'requested' | 'rerequested',
): Record<string, unknown> {
  const payload = withRepository(example('check_suite', action), fake, scenario.repo);
  const fork = scenario.headRepo.toLowerCase() !== scenario.repo.toLowerCase();
  Object.assign(payload.check_suite as object, {
    id: fake.suiteId(scenario.repo, scenario.headSha),
    head_sha: scenario.headSha,
    after: scenario.headSha,
    head_branch: fork ? null : 'cuda-upgrade',
    pull_requests: listedPulls(fake, scenario),
  });
  return payload;
}

/** check_run.rerequested ("Re-run") or .requested_action (a button) for one of our runs. */
export function checkRunPayload(
  fake: FakeGitHub,
  scenario: Scenario,
  run: CheckRun,
  action: 'rerequested' | 'requested_action',
  {
    identifier = 'apply_fixes',
    sender = { login: 'octocat', type: 'User' },
  }: {
    /** The button's identifier (requested_action). */
    readonly identifier?: string;
    /** Whoever clicked. */
    readonly sender?: { readonly login: string; readonly type: string };
  } = {},
): Record<string, unknown> {
  const payload = withRepository(example('check_run', action), fake, scenario.repo);
  // `sender` is whoever clicked (Re-run or a button).
  Object.assign(payload.sender as object, sender);
  Object.assign(payload.check_run as object, {
    id: run.id,
    name: run.name,
    head_sha: run.head_sha,
    external_id: run.external_id ?? '',
    check_suite: {
      ...(payload.check_run as { check_suite: object }).check_suite,
      id: run.suiteId,
      head_sha: run.head_sha,
    },
    pull_requests: listedPulls(fake, scenario),
  });
  if (action === 'requested_action') Object.assign(payload, { requested_action: { identifier } });
  return payload;
}

/**
 * A comment on the pull request (webhooks-examples has none on a pull request: derived by adding issue.pull_request).
 */
export function commentPayload(
  fake: FakeGitHub,
  scenario: Scenario,
  body: string,
  user = { login: 'octocat', type: 'User' },
): Record<string, unknown> {
  const payload = withRepository(example('issue_comment', 'created'), fake, scenario.repo);
  const issue = payload.issue as Record<string, unknown>;
  Object.assign(issue, {
    number: scenario.number,
    pull_request: {
      url: `https://api.github.com/repos/${scenario.repo}/pulls/${scenario.number}`,
      html_url: '',
      diff_url: '',
      patch_url: '',
    },
  });
  Object.assign(payload.comment as object, {
    id: 555,
    body,
    user: { ...(payload.comment as { user: object }).user, ...user },
  });
  Object.assign(payload.sender as object, user);
  return payload;
}

/** A push to the default branch of `<owner>/.github` that lands a new organisation baseline. */
export function baselinePush(fake: FakeGitHub, owner: string, text: string): Record<string, unknown> {
  const full = `${owner}/.github`;
  if (!fake.repos.has(full.toLowerCase())) fake.addRepo(full, {});
  const repo = fake.repos.get(full.toLowerCase())!;
  repo.head = fake.commit({ 'cuda-gatekeeper.yml': text });
  const payload = withRepository(example('push'), fake, full);
  Object.assign(payload, {
    ref: 'refs/heads/main',
    after: repo.head,
    commits: [{ id: repo.head, added: [], removed: [], modified: ['cuda-gatekeeper.yml'] }],
  });
  Object.assign(payload.repository as object, { owner: { login: owner, name: owner } });
  return payload;
}

/**
 * Pull request #9 to `<owner>/.github` that changes the organisation baseline to `text` (a new head commit each
 * call, as a push to the pull request makes): its payload, for `opened` or `synchronize`.
 */
export function configPull(
  fake: FakeGitHub,
  owner: string,
  text: string,
  action: 'opened' | 'synchronize' = 'opened',
): Record<string, unknown> {
  const full = `${owner}/.github`;
  const headSha = fake.commit({ 'cuda-gatekeeper.yml': text });
  fake.addPull(full, {
    number: 9,
    headSha,
    headRef: 'policy',
    headRepo: full,
    files: [{ filename: 'cuda-gatekeeper.yml', status: 'modified', patch: addedPatch(text) }],
  });
  const payload = example('pull_request', action);
  Object.assign(payload.repository as object, { name: '.github', full_name: full, default_branch: 'main' });
  Object.assign((payload.repository as { owner: object }).owner, { login: owner });
  const pr = payload.pull_request as Record<string, unknown>;
  Object.assign(pr, { number: 9 });
  Object.assign(pr.head as object, { sha: headSha, ref: 'policy', repo: { full_name: full } });
  Object.assign(pr.base as object, {
    ref: 'main',
    sha: fake.repos.get(full.toLowerCase())?.head ?? (pr.base as { sha: string }).sha,
  });
  Object.assign(payload.installation as object, { id: 42 });
  return payload;
}

/**
 * `pull_request.edited` as GitHub sends it for a new base branch: `changes.base.ref.from` and `changes.base.sha.from`
 * name the old base, `pull_request.base` the new one (docs.github.com/en/webhooks/webhook-events-and-payloads,
 * pull_request "edited": "The title or body of a pull request was edited, or the base branch of a pull request was
 * changed"). webhooks-examples has no `edited` payload: derived from `opened`. Without `from`, a title edit.
 */
export function editedPayload(
  fake: FakeGitHub,
  scenario: Scenario,
  from?: { readonly ref: string; readonly sha: string },
  to = 'main',
): Record<string, unknown> {
  const payload = structuredClone(scenario.payload);
  const pr = payload.pull_request as Record<string, unknown>;
  Object.assign(pr.base as object, { ref: to, sha: fake.pull(scenario.repo, scenario.number)!.baseSha });
  Object.assign(payload, {
    action: 'edited',
    changes: from
      ? { base: { ref: { from: from.ref }, sha: { from: from.sha } } }
      : { title: { from: 'Upgrade CUDA (draft)' } },
  });
  return payload;
}

/**
 * `merge_group.checks_requested` for the queue's commit `headSha`, built on `baseSha` of `main` for pull request
 * `number` (the webhooks-examples payload, with this repository and installation).
 */
export function mergeGroupPayload(
  fake: FakeGitHub,
  full: string,
  group: { readonly headSha: string; readonly baseSha: string; readonly number: number },
): Record<string, unknown> {
  const payload = withRepository(example('merge_group', 'checks_requested'), fake, full);
  Object.assign(payload.merge_group as object, {
    head_sha: group.headSha,
    head_ref: `refs/heads/${queueBranch(group)}`,
    base_sha: group.baseSha,
    base_ref: 'refs/heads/main',
  });
  return payload;
}

/** The merge queue's branch for a group: `gh-readonly-queue/main/pr-<number>-<sha of the pull request's head>`. */
export function queueBranch(group: { readonly headSha: string; readonly number: number }): string {
  return `gh-readonly-queue/main/pr-${group.number}-${createHash('sha1').update(group.headSha).digest('hex')}`;
}
