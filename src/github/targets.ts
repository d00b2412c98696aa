/**
 * Which pull requests an event is about. `pull_request` payloads carry the pull request. `check_suite` and
 * `check_run` payloads list matching pull requests, but GitHub leaves the list empty when the head branch lives in
 * a fork: "When the check suite's head_branch is in a forked repository it will be null and the pull_requests array
 * will be empty" (docs.github.com/en/webhooks/webhook-events-and-payloads#check_suite; the same for check_run).
 * Then the pull request comes from the `external_id` of our run: the run's own for check_run, or of our run in
 * the suite for check_suite (GET /repos/{owner}/{repo}/check-suites/{id}/check-runs). The pull requests GitHub
 * associates with a commit (GET …/commits/{sha}/pulls) are no help for forks: the base repository answers `[]` for
 * a commit that only a fork's branch has (observed, not documented: TooTallNate/nx.js#410, kolibri#14719).
 */
import { CHECK_NAME } from '../render/check-run.js';
import { parseExternalId } from './check.js';
import { GitHubReadError, partialQuery, problemsAt } from './graphql.js';
import type { GitHub, PullTarget, RepoRef } from './types.js';

interface RepositoryPayload {
  readonly repository: {
    readonly id?: number;
    readonly name: string;
    readonly full_name?: string;
    readonly owner: { readonly login: string };
  };
  readonly installation?: { readonly id: number };
}

type PullPayload = {
  number: number;
  head: { sha: string; ref: string; repo: { full_name: string } | null };
  base?: { sha?: string };
  changed_files?: number;
};

export function targetFromPull(payload: RepositoryPayload, pull: PullPayload): PullTarget {
  const owner = payload.repository.owner.login;
  const repo = payload.repository.name;
  // A pull request whose fork was deleted has head.repo null: it is still not this repository.
  return {
    owner,
    repo,
    number: pull.number,
    headSha: pull.head.sha,
    headRef: pull.head.ref,
    headRepo: pull.head.repo?.full_name ?? '(deleted fork)',
    installationId: payload.installation?.id ?? 0,
    ...(pull.base?.sha ? { baseSha: pull.base.sha } : {}),
    ...(typeof pull.changed_files === 'number' ? { changedFiles: pull.changed_files } : {}),
  };
}

/** A pull request as check_suite and check_run payloads list it: repositories only as ids and API URLs. */
export interface ListedPull {
  readonly number: number;
  readonly head: {
    readonly ref: string;
    readonly sha: string;
    readonly repo: { readonly id: number; readonly url: string };
  };
  readonly base: { readonly sha?: string; readonly repo: { readonly id: number; readonly url: string } };
}

const REPO_URL = /\/repos\/([^/]+\/[^/]+)$/;

/**
 * A merge queue's branch: `gh-readonly-queue/<base branch>/pr-<number>-<sha>` ("Managing a merge queue": the queue
 * builds each group's commit on a temporary branch with this prefix; the merge_group payload's `head_ref` is
 * `refs/heads/gh-readonly-queue/main/pr-104-929f…`, @octokit/webhooks-examples).
 */
const QUEUE_BRANCH = /^(?:refs\/heads\/)?gh-readonly-queue\/(.+)\/pr-\d+-[0-9a-f]{40}$/;

/** The base branch of a merge queue's branch; undefined for any other branch. */
export function queueBase(branch: string | null | undefined): string | undefined {
  return QUEUE_BRANCH.exec(branch ?? '')?.[1];
}

/**
 * A merge queue's commit to check: `merge_group.checks_requested` names its head and the base commit it was built
 * on (docs.github.com/en/webhooks/webhook-events-and-payloads#merge_group: head_sha "The SHA of the merge group",
 * base_sha "The SHA of the merge group's parent commit"); a check suite of the queue branch names only the branch,
 * whose base branch is then the other side of the comparison.
 */
export function queueTarget(
  payload: RepositoryPayload,
  group: { readonly headSha: string; readonly headRef: string; readonly baseSha?: string; readonly baseRef?: string },
): PullTarget | undefined {
  const baseRef = group.baseRef?.replace(/^refs\/heads\//, '') ?? queueBase(group.headRef);
  if (!baseRef) return undefined;
  return {
    owner: payload.repository.owner.login,
    repo: payload.repository.name,
    number: 0,
    headSha: group.headSha,
    headRef: group.headRef.replace(/^refs\/heads\//, ''),
    headRepo: payload.repository.full_name ?? `${payload.repository.owner.login}/${payload.repository.name}`,
    installationId: payload.installation?.id ?? 0,
    ...(group.baseSha ? { baseSha: group.baseSha } : {}),
    queue: { baseRef },
  };
}

/**
 * The pull request to check again after `pull_request.edited`: only a new base branch (`changes.base`) changes what
 * it brings in, and no synchronize or check suite follows one (GitHub also retargets a stacked pull request by
 * itself when its base branch is deleted after merging). A title or body edit: undefined.
 */
export function retargetedPull(
  payload: RepositoryPayload & { readonly changes?: { readonly base?: unknown }; readonly pull_request: PullPayload },
): PullTarget | undefined {
  return payload.changes?.base ? targetFromPull(payload, payload.pull_request) : undefined;
}

/** The merge queue's commit of `merge_group.checks_requested`; undefined without a repository in the payload. */
export function mergeGroupTarget(payload: {
  readonly repository?: RepositoryPayload['repository'];
  readonly installation?: { readonly id: number };
  readonly merge_group: {
    readonly head_sha: string;
    readonly head_ref: string;
    readonly base_sha: string;
    readonly base_ref: string;
  };
}): PullTarget | undefined {
  const { merge_group: group, repository } = payload;
  if (!repository) return undefined;
  return queueTarget(
    { repository, ...(payload.installation ? { installation: payload.installation } : {}) },
    { headSha: group.head_sha, headRef: group.head_ref, baseSha: group.base_sha, baseRef: group.base_ref },
  );
}

function fromListed(payload: RepositoryPayload, pull: ListedPull, headSha: string): PullTarget {
  const owner = payload.repository.owner.login;
  const repo = payload.repository.name;
  const headRepo =
    pull.head.repo.id === pull.base.repo.id ? `${owner}/${repo}` : (REPO_URL.exec(pull.head.repo.url)?.[1] ?? '(fork)');
  return {
    owner,
    repo,
    number: pull.number,
    headSha,
    headRef: pull.head.ref,
    headRepo,
    installationId: payload.installation?.id ?? 0,
    ...(pull.base.sha ? { baseSha: pull.base.sha } : {}),
    // A Re-run of a run on an older commit: the pull request's head is elsewhere now.
    ...(pull.head.sha && pull.head.sha !== headSha ? { superseded: true } : {}),
  };
}

const PULL_QUERY = `query CudaGatekeeperPull($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) { number state headRefOid headRefName baseRefOid changedFiles headRepository { nameWithOwner } }
  }
}`;

interface PullAnswer {
  repository: {
    pullRequest: {
      number: number;
      state: string;
      headRefOid: string;
      headRefName: string;
      baseRefOid: string;
      changedFiles: number;
      headRepository: { nameWithOwner: string } | null;
    } | null;
  } | null;
}

/**
 * A pull request by number (comments, fork re-runs), with its state (OPEN, CLOSED, MERGED); undefined when it does not
 * exist.
 */
export async function pullTarget(
  github: GitHub,
  repo: RepoRef,
  number: number,
  installationId: number,
  headSha?: string,
): Promise<(PullTarget & { readonly state: string }) | undefined> {
  const { data, problems } = await partialQuery<PullAnswer>(github, PULL_QUERY, {
    owner: repo.owner,
    name: repo.repo,
    number,
  });
  if (!data.repository)
    throw new GitHubReadError(`GitHub would not show ${repo.owner}/${repo.repo}`, problemsAt(problems, 'repository'));
  const pull = data.repository.pullRequest;
  if (!pull) return undefined;
  return {
    ...repo,
    number: pull.number,
    headSha: headSha ?? pull.headRefOid,
    headRef: pull.headRefName,
    headRepo: pull.headRepository?.nameWithOwner ?? '(deleted fork)',
    installationId,
    baseSha: pull.baseRefOid,
    // The count is of the current head; for an older commit it is not known.
    ...(headSha === undefined || headSha === pull.headRefOid
      ? { changedFiles: pull.changedFiles }
      : { superseded: true }),
    state: pull.state,
  };
}

/**
 * Where to look when a check payload lists no pull request: our run (check_run) or the suite of our runs (check_suite).
 */
export type CheckOrigin = (
  | { readonly run: { readonly external_id: string | null } }
  | { readonly suite: { readonly id: number } }
) & {
  /** The check suite's head branch (null for forks): a merge queue's branch is checked as the queue's commit. */
  readonly headBranch?: string | null;
};

/**
 * The open pull requests of this repository a check_suite or check_run event is about. Listed ones are taken as
 * they are (pull requests of other repositories with the same head are left out); with none listed, our run's
 * external_id names the pull request (at most one request to find the suite's runs, one for the pull request),
 * and failing that the commit's associated pull requests are asked for.
 */
export async function targetsOfCheck(
  github: GitHub,
  payload: RepositoryPayload,
  listed: readonly ListedPull[],
  headSha: string,
  origin: CheckOrigin,
): Promise<PullTarget[]> {
  const own = payload.repository.id;
  const mine = listed.filter((pull) => own === undefined || pull.base.repo.id === own);
  if (mine.length > 0) return mine.map((pull) => fromListed(payload, pull, headSha));
  const queued = origin.headBranch ? queueTarget(payload, { headSha, headRef: origin.headBranch }) : undefined;
  if (queued) return [queued];
  const repo = { owner: payload.repository.owner.login, repo: payload.repository.name };
  const installationId = payload.installation?.id ?? 0;
  let externalId: string | null | undefined;
  if ('run' in origin) externalId = origin.run.external_id;
  else {
    const runs = await github.rest.checks.listForSuite({
      ...repo,
      check_suite_id: origin.suite.id,
      check_name: CHECK_NAME,
      per_page: 100,
    });
    externalId = runs.data.check_runs
      .map((run) => run.external_id)
      .find((id) => parseExternalId(id).pull !== undefined);
  }
  const { pull } = parseExternalId(externalId);
  if (pull !== undefined && pull > 0) {
    const target = await pullTarget(github, repo, pull, installationId, headSha);
    return target ? [target] : [];
  }
  const associated = await github.rest.repos.listPullRequestsAssociatedWithCommit({
    ...repo,
    commit_sha: headSha,
    per_page: 100,
  });
  return associated.data
    .filter(
      (candidate) =>
        candidate.state === 'open' &&
        candidate.head.sha === headSha &&
        candidate.base.repo.full_name.toLowerCase() === `${repo.owner}/${repo.repo}`.toLowerCase(),
    )
    .map((candidate) => ({
      ...repo,
      number: candidate.number,
      headSha,
      headRef: candidate.head.ref,
      headRepo: candidate.head.repo?.full_name ?? '(deleted fork)',
      installationId,
      baseSha: candidate.base.sha,
    }));
}
