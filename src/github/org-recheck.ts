/**
 * A new organisation baseline on the default branch of `<org>/.github` (a push), or an installation change that changes
 * which baseline applies: every open pull request of the organisation is checked again, and migrations are queued
 * where the baseline asks for them.
 */
import { renewToken } from './access.js';
import { layerBaselines, ORG_CONFIG_PATH, ORG_CONFIG_REPO } from '../baseline/layers.js';
import type { AppDeps } from './deps.js';
import { repositoriesInfo, type OpenPull } from './repository.js';
import { branchPush } from './path-index.js';
import { readOrgLayer } from './read.js';
import type { FanoutJob } from './jobs.js';
import type { GitHub, Logger, PullTarget } from './types.js';
import { bundledBaseline } from '../util/package-root.js';
import { organisationRepositories } from './org.js';

type RecheckJob = Extract<FanoutJob, { kind: 'recheck-org' }>;

/**
 * After a new organisation baseline lands: re-check every open pull request of the installation's repositories
 * under `owner` (config pull requests are previewed again), and queue migrations when the organisation baseline
 * asks for them. Jobs are keyed by the baseline's commit, so each new commit re-checks again.
 */
export async function recheckOrganisation(
  github: GitHub,
  deps: AppDeps,
  log: Logger,
  { owner, installationId, deliveryId }: Pick<RecheckJob, 'owner' | 'installationId' | 'deliveryId'>,
): Promise<number> {
  deps.orgCache.invalidate(installationId, owner);
  const layer = await readOrgLayer(github, owner);
  if (layer.state === 'unavailable') {
    log.warn(
      { deliveryId, owner, reason: layer.reason },
      'the organisation baseline could not be read; open pull requests are not re-checked',
    );
    return 0;
  }
  const orgConfig = layer.state === 'found' ? layer.config : null;
  const commit = orgConfig?.commit || 'none';
  const migrations = layerBaselines(owner, ORG_CONFIG_REPO, undefined, orgConfig, bundledBaseline()).baseline.migration
    .pullRequests;
  // Config pull requests are re-checked too: their preview compares with the new baseline.
  const repos = await organisationRepositories(github, owner, true);
  let queued = 0;
  // Open pull requests of 25 repositories per GraphQL request (heads only); a repository with more than 100 open
  // pull requests is listed in full through REST.
  const infos = await repositoriesInfo(
    github,
    owner,
    repos.map((repo) => repo.name),
    { pulls: 100, files: false },
  );
  for (const repo of repos) {
    if (migrations && repo.name !== ORG_CONFIG_REPO) {
      await deps.fanout.add(
        {
          kind: 'migrate',
          installationId,
          owner,
          repo: repo.name,
          defaultBranch: repo.default_branch,
          deliveryId,
          baselineCommit: commit,
        },
        github,
      );
    }
    const info = infos.get(repo.name);
    if (info instanceof Error) {
      log.warn(
        { deliveryId, repo: `${owner}/${repo.name}`, err: { message: info.message } },
        'open pull requests could not be listed; not re-checked',
      );
      continue;
    }
    const pulls: readonly Pick<OpenPull, 'number' | 'headSha' | 'headRef' | 'headRepo' | 'baseSha'>[] = info?.morePulls
      ? (await github.paginate(github.rest.pulls.list, { owner, repo: repo.name, state: 'open', per_page: 100 })).map(
          (pull) => ({
            number: pull.number,
            headSha: pull.head.sha,
            headRef: pull.head.ref,
            headRepo: pull.head.repo?.full_name ?? '(deleted fork)',
            baseSha: pull.base.sha,
          }),
        )
      : (info?.pulls ?? []);
    for (const pull of pulls) {
      const target: PullTarget = {
        owner,
        repo: repo.name,
        number: pull.number,
        headSha: pull.headSha,
        headRef: pull.headRef,
        headRepo: pull.headRepo,
        installationId,
        baseSha: pull.baseSha,
      };
      if (
        await deps.fanout.add(
          { kind: 'check-pull', installationId, target, deliveryId, trigger: 'event', baselineCommit: commit },
          github,
        )
      )
        queued++;
    }
  }
  log.info({ deliveryId, owner, repositories: repos.length, queued, migrations }, 'organisation re-check queued');
  return queued;
}

/**
 * The organisation re-check a push asks for: a push to the config repository's default branch that touches the
 * baseline.
 */
export function baselinePushed(
  payload: {
    repository: { name: string; default_branch?: string; owner?: { login: string } | null };
    ref: string;
    installation?: { id: number };
    after: string;
    commits: readonly { added?: string[]; modified?: string[]; removed?: string[] }[];
  },
  deliveryId: string,
): Extract<FanoutJob, { kind: 'recheck-org' }> | undefined {
  const { repository, ref, installation, commits } = payload;
  if (
    repository.name !== ORG_CONFIG_REPO ||
    ref !== `refs/heads/${repository.default_branch}` ||
    !installation ||
    !repository.owner
  )
    return undefined;
  // A push GitHub lists no commits for (a force push, more than 2,048 commits) may have touched it: re-check.
  const touched =
    commits.length === 0 ||
    commits.some((commit) =>
      [...(commit.added ?? []), ...(commit.modified ?? []), ...(commit.removed ?? [])].includes(ORG_CONFIG_PATH),
    );
  return touched
    ? {
        kind: 'recheck-org',
        installationId: installation.id,
        owner: repository.owner.login,
        deliveryId,
        baselineCommit: payload.after,
      }
    : undefined;
}

/**
 * Queue the organisation re-check a job asks for (none: nothing to do); the cached organisation layer is dropped
 * first. When it cannot be queued (Redis is down), the delivery fails, never silently: the durable queue retries
 * the stored delivery, and a failed delivery can be redelivered from the App's settings.
 */
async function queueOrgRecheck(
  github: GitHub,
  job: Extract<FanoutJob, { kind: 'recheck-org' }> | undefined,
  deps: AppDeps,
  log: Logger,
): Promise<void> {
  if (!job) return;
  deps.orgCache.invalidate(job.installationId, job.owner);
  await deps.fanout.add(job, github).catch((error: Error) => {
    log.error(
      { deliveryId: job.deliveryId, owner: job.owner, err: { message: error.message } },
      'could not queue the organisation re-check',
    );
    throw error;
  });
}

/**
 * A push: one to a default branch moves that repository's path index entry forward (or drops it), and one that
 * lands a new organisation baseline re-checks the organisation.
 */
export async function onPush(
  github: GitHub,
  payload: Parameters<typeof baselinePushed>[0] & Parameters<typeof branchPush>[0],
  deps: AppDeps,
  log: Logger,
  deliveryId: string,
): Promise<void> {
  const pushed = branchPush(payload);
  if (pushed) await deps.paths.pushed(pushed.repo, pushed.push);
  await queueOrgRecheck(github, baselinePushed(payload, deliveryId), deps, log);
}

/**
 * The `installation` and `installation_repositories` events (installationChanged says which re-check the organisation).
 */
export async function onInstallationChange(
  context: {
    readonly name: string;
    readonly id: string;
    readonly payload: Parameters<typeof installationChanged>[0];
    readonly octokit: unknown;
    readonly log: Logger;
  },
  deps: AppDeps,
): Promise<void> {
  const event = context.name === 'installation_repositories' ? 'installation_repositories' : 'installation';
  const action = context.payload.action;
  const installation = context.payload.installation;
  if (event === 'installation' && action === 'suspend') {
    // A suspended installation's organisation baseline is forgotten: it is read again once the App is back.
    const owner = (installation?.account as { readonly login?: string } | null | undefined)?.login;
    if (installation && owner) deps.orgCache.invalidate(installation.id, owner);
    return;
  }
  // The cached token was created with the old permissions (or before the suspension): a new one, at once.
  if (event === 'installation' && (action === 'new_permissions_accepted' || action === 'unsuspend'))
    await renewToken(context.octokit as GitHub).catch((error: Error) =>
      context.log.warn({ err: { message: error.message } }, 'could not renew the installation token'),
    );
  return queueOrgRecheck(
    context.octokit as GitHub,
    installationChanged(context.payload, event, context.id),
    deps,
    context.log,
  );
}

/**
 * An installation's repositories changed (`installation_repositories`) or the installation itself did
 * (`installation`: created, new permissions accepted, unsuspended). When the organisation's `.github` joins or
 * leaves what the installation can see, the organisation layer changes at once: the cached "no organisation
 * layer" is dropped and open pull requests are checked again, as after a baseline merge.
 */
export function installationChanged(
  payload: {
    readonly action?: string;
    readonly installation?: { readonly id: number; readonly account?: object | null };
    readonly repositories_added?: readonly { readonly name?: string }[];
    readonly repositories_removed?: readonly { readonly name?: string }[];
  },
  event: 'installation' | 'installation_repositories',
  deliveryId: string,
): Extract<FanoutJob, { kind: 'recheck-org' }> | undefined {
  const installation = payload.installation;
  const account = installation?.account as { readonly login?: string; readonly slug?: string } | null | undefined;
  // An enterprise installation's account has a slug, not a login: it owns no .github repository of an organisation.
  const owner = account?.login;
  if (!installation || !owner) return undefined;
  const names = [...(payload.repositories_added ?? []), ...(payload.repositories_removed ?? [])].map(
    (repo) => repo.name,
  );
  const affects =
    event === 'installation_repositories'
      ? names.includes(ORG_CONFIG_REPO)
      : ['created', 'new_permissions_accepted', 'unsuspend'].includes(payload.action ?? '');
  return affects ? { kind: 'recheck-org', installationId: installation.id, owner, deliveryId } : undefined;
}
