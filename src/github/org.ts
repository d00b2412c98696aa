/**
 * The organisation baseline's lifecycle. A pull request to `<org>/.github` that changes `cuda-gatekeeper.yml` is
 * validated and previewed: which repositories and open pull requests would newly fail or pass. The preview is
 * that pull request's verdict on every path that checks it (opened, synchronize, Re-run, `/cuda-check`, the
 * re-checks after another baseline lands). A push of a new baseline to the default branch re-checks every open
 * pull request of the organisation, and queues migrations where the organisation baseline asks for them.
 */
import { renewToken } from './access.js';
import type { FleetTable } from '../finding.js';
import { loadBaseline } from '../baseline/load.js';
import type { Finding } from '../finding.js';
import { gate } from '../gate.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import type { ParsedFile } from '../parsers/facts.js';
import { invalidBaselineOutput, previewOutput, removedBaselineOutput, type PreviewOutcome } from '../render/preview.js';
import type { CheckOutput } from '../render/check-run.js';
import { RULE_IDS } from '../../rules/ids.js';
import { counted } from './calls.js';
import { sendCheck } from './check.js';
import {
  gateOptionsFor,
  layerBaselines,
  ORG_CONFIG_PATH,
  ORG_CONFIG_REPO,
  type ConfigBlob,
} from '../baseline/layers.js';
import { rememberRun, type AppDeps } from './deps.js';
import { partialQuery, problemsAt } from './graphql.js';
import {
  readBranch,
  readBranches,
  readPullsAgainst,
  repositoriesInfo,
  repositoryInfo,
  type OpenPull,
  type RepositoryInfo,
} from './repository.js';
import type { Skipped } from './files.js';
import { branchPush, type PathIndex } from './path-index.js';
import { newestRun, orgLayer, readOrgLayer, RUNS_FIELD, type Blob, type ExistingRun } from './read.js';
import { migrate } from './migrate.js';
import { describeError, sendFailure, serialized } from './pull-check.js';
import { runKey, type FanoutJob } from './jobs.js';
import type { GitHub, Logger, PullTarget } from './types.js';
import { bundledBaseline, today } from '../util/package-root.js';

type PreviewJob = Extract<FanoutJob, { kind: 'preview' }>;
type RecheckJob = Extract<FanoutJob, { kind: 'recheck-org' }>;
type MigrateJob = Extract<FanoutJob, { kind: 'migrate' }>;

const errorsOf = (findings: readonly Finding[]) => findings.filter((finding) => finding.severity === 'error').length;
const keysOf = (findings: readonly Finding[]) =>
  findings
    .map((finding) => `${finding.ruleId}@${finding.location.path}:${finding.location.start.line}:${finding.message}`)
    .sort()
    .join('\n');

/** The organisation baseline in effect and the one a config pull request proposes, on one day. */
interface BaselinePair {
  readonly current: ConfigBlob | null;
  readonly proposed: ConfigBlob;
  readonly today: string;
}

/** Where files come from: the repository, its own baseline file, and what the change deletes (a pull request's). */
interface Place {
  readonly owner: string;
  readonly repo: string;
  readonly repoConfig: ConfigBlob | undefined;
  readonly removed?: readonly string[];
}

/** The files gated under the current and under the proposed organisation baseline: errors before and after. */
function gateUnderBoth(files: readonly ParsedFile[], place: Place, baselines: BaselinePair) {
  const { owner, repo, repoConfig, removed = [] } = place;
  const run = (org: ConfigBlob | null) => {
    const resolved = layerBaselines(owner, repo, repoConfig, org, bundledBaseline());
    return gate(
      files,
      resolved.baseline,
      defaultKnowledgeBase(),
      gateOptionsFor(resolved, owner, repo, { today: baselines.today, removed }),
    );
  };
  const before = run(baselines.current);
  const after = run(baselines.proposed);
  const pools = newlyFailingPools(before.fleet, after.fleet);
  return {
    before: errorsOf(before.findings),
    after: errorsOf(after.findings),
    changed: keysOf(before.findings) !== keysOf(after.findings),
    ...(pools.length ? { pools } : {}),
  };
}

/**
 * The pools on which some unit fails under the proposed baseline and did not under the current one (or the pool is
 * new).
 */
function newlyFailingPools(before: FleetTable | undefined, after: FleetTable | undefined): string[] {
  if (!after) return [];
  const failedBefore = new Set<string>();
  for (const row of before?.rows ?? [])
    row.cells.forEach((cell, i) => {
      if (cell.tier === 'fails') failedBefore.add(`${row.path}\0${row.unit}\0${before!.pools[i]!.name}`);
    });
  const pools = new Set<string>();
  for (const row of after.rows)
    row.cells.forEach((cell, i) => {
      const pool = after.pools[i]!.name;
      if (cell.tier === 'fails' && !failedBefore.has(`${row.path}\0${row.unit}\0${pool}`)) pools.add(pool);
    });
  return [...pools];
}

/**
 * The proposed baseline (head of the pull request), the current one (default branch) and our newest run on the head.
 */
async function previewInputs(
  github: GitHub,
  target: PullTarget,
  appId: number,
): Promise<{ proposed: string | null; current: ConfigBlob | null; existing?: ExistingRun }> {
  const query = `query CudaGatekeeperPreview($owner: String!, $name: String!, $head: GitObjectID!, $appId: Int!) {
  org: repository(owner: $owner, name: $name) {
    proposed: object(expression: ${JSON.stringify(`${target.headSha}:${ORG_CONFIG_PATH}`)}) { ... on Blob { text byteSize isBinary } }
    config: object(expression: ${JSON.stringify(`HEAD:${ORG_CONFIG_PATH}`)}) { ... on Blob { text byteSize isBinary } }
    defaultBranchRef { target { oid } }
    head: object(oid: $head) { ... on Commit { ${RUNS_FIELD} } }
  }
}`;
  type Answer = {
    org: {
      proposed: Blob | null;
      config: Blob | null;
      defaultBranchRef: { target: { oid: string } | null } | null;
      head: Parameters<typeof newestRun>[0];
    } | null;
  };
  const { data, problems } = await partialQuery<Answer>(github, query, {
    owner: target.owner,
    name: target.repo,
    head: target.headSha,
    appId,
  });
  const layer = orgLayer(data.org, problemsAt(problems, 'org', 'config'));
  const existing = newestRun(data.org?.head ?? null);
  return {
    proposed: data.org?.proposed?.text ?? null,
    current: layer.state === 'found' ? layer.config : null,
    ...(existing ? { existing } : {}),
  };
}

/** Every repository of the installation under `owner` but the config repository (archived ones left out). */
export async function organisationRepositories(github: GitHub, owner: string, withConfig = false) {
  const repos = await github.paginate(github.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
  return repos.filter(
    (repo) =>
      !repo.archived &&
      (withConfig || repo.name !== ORG_CONFIG_REPO) &&
      repo.owner.login.toLowerCase() === owner.toLowerCase(),
  );
}

/** Repositories previewed together: their branches and pull requests are read in shared requests, then compared. */
export const PREVIEW_GROUP = 100;

interface Previewed {
  readonly repo: { readonly name: string; readonly html_url: string };
  readonly info: RepositoryInfo;
}

const gapsOf = (skipped: readonly Skipped[]) => skipped.map((entry) => `\`${entry.path}\` ${entry.reason}`);

/** One preview under way: the organisation, both baselines, the path index, and what could not be read so far. */
interface PreviewRun {
  readonly github: GitHub;
  readonly owner: string;
  readonly baselines: BaselinePair;
  readonly index: PathIndex | undefined;
  readonly unreadable: { name: string; reason: string }[];
}

/**
 * Evaluate a group of repositories' default branches and open pull requests under both baselines. Their paths
 * come from the path index where it holds the branch's commit (else from its tree), their files are read
 * together, a request per READ_CHUNK files; a repository or pull request that could not be read is listed in
 * `unreadable` with why.
 */
async function previewGroup(
  { github, owner, baselines, index, unreadable }: PreviewRun,
  group: readonly Previewed[],
): Promise<PreviewOutcome[]> {
  const run = (files: readonly ParsedFile[], entry: Previewed, removed: readonly string[] = []) =>
    gateUnderBoth(files, { owner, repo: entry.repo.name, repoConfig: entry.info.repoConfig, removed }, baselines);
  const branches = await readBranches(
    github,
    owner,
    group.map((entry) => ({ repo: entry.repo.name, sha: entry.info.headSha })),
    index,
  );
  const pulls = group.flatMap((entry, i) => {
    const branch = branches[i]!;
    if (branch instanceof Error) return [];
    return entry.info.pulls
      .filter((pull) => pull.changed.length > 0 || pull.removed.length > 0)
      .map((pull) => ({ entry, repo: entry.repo.name, pull, branch }));
  });
  const pullReads = await readPullsAgainst(github, owner, pulls);
  const outcomes: PreviewOutcome[] = [];
  group.forEach((entry, i) => {
    const branch = branches[i]!;
    if (branch instanceof Error) {
      unreadable.push({ name: entry.repo.name, reason: describeError(branch) });
      return;
    }
    const gaps = [...(branch.truncated ? ['GitHub cut the file tree short'] : []), ...gapsOf(branch.skipped)];
    outcomes.push({
      name: entry.repo.name,
      url: entry.repo.html_url,
      ...run(branch.files, entry),
      ...(gaps.length ? { incomplete: gaps.join('; ') } : {}),
    });
    pulls.forEach((item, j) => {
      if (item.entry !== entry) return;
      const read = pullReads[j]!;
      const name = `${entry.repo.name}#${item.pull.number}`;
      if (read instanceof Error) {
        unreadable.push({ name, reason: describeError(read) });
        return;
      }
      const skipped = gapsOf(read.skipped);
      outcomes.push({
        name,
        url: item.pull.url,
        ...run(read.files, entry, item.pull.removed),
        ...(skipped.length ? { incomplete: skipped.join('; ') } : {}),
      });
    });
  });
  return outcomes;
}

/** The preview's verdict for the config pull request's head commit. */
async function previewVerdict(
  github: GitHub,
  target: PullTarget,
  { proposed, current }: { readonly proposed: string | null; readonly current: ConfigBlob | null },
  { index, log }: { readonly index: PathIndex | undefined; readonly log: Logger },
): Promise<CheckOutput> {
  if (proposed === null) return removedBaselineOutput(ORG_CONFIG_PATH);
  const loaded = loadBaseline(ORG_CONFIG_PATH, proposed, RULE_IDS);
  if (loaded.problems.length > 0) return invalidBaselineOutput(ORG_CONFIG_PATH, loaded.source, loaded.problems);
  const baselines = {
    current,
    proposed: { text: proposed, commit: target.headSha },
    today: today(),
  };
  const repos = await organisationRepositories(github, target.owner);
  const outcomes: PreviewOutcome[] = [];
  const unreadable: { name: string; reason: string }[] = [];
  const run: PreviewRun = { github, owner: target.owner, baselines, index, unreadable };
  // One GraphQL request per 25 repositories for their heads, baseline files and open pull requests.
  const infos = await repositoriesInfo(
    github,
    target.owner,
    repos.map((repo) => repo.name),
  );
  for (let from = 0; from < repos.length; from += PREVIEW_GROUP) {
    const group: Previewed[] = [];
    for (const repo of repos.slice(from, from + PREVIEW_GROUP)) {
      const info = infos.get(repo.name);
      if (info instanceof Error) {
        // One repository GitHub will not show does not sink the preview: it is listed as not evaluated.
        unreadable.push({ name: repo.name, reason: describeError(info) });
        log.warn(
          { repo: `${target.owner}/${repo.name}`, err: { message: info.message } },
          'preview could not read a repository',
        );
      } else if (info) group.push({ repo, info });
    }
    outcomes.push(...(await previewGroup(run, group)));
  }
  return previewOutput(outcomes, repos.length, unreadable);
}

/**
 * Validate and preview a config pull request, and post the verdict as its check run (see check.ts for the run model).
 */
export async function previewConfigPull(
  github: GitHub,
  deps: AppDeps,
  log: Logger,
  { target, trigger, deliveryId }: Pick<PreviewJob, 'target' | 'trigger' | 'deliveryId'>,
): Promise<void> {
  const key = runKey(target);
  const where = { deliveryId, repo: `${target.owner}/${target.repo}`, pr: target.number };
  await serialized(deps, key, trigger, (effective) =>
    counted(github, async (calls) => {
      try {
        const inputs = await previewInputs(github, target, deps.appId);
        const output = await previewVerdict(github, target, inputs, { index: deps.paths, log });
        const known = deps.runs.get(key);
        const existing = known && (!inputs.existing || known.id >= inputs.existing.id) ? known : inputs.existing;
        const sent = await sendCheck(github, target, output, {
          ...(existing ? { existing } : {}),
          trigger: effective,
          applyFixes: false,
        });
        if (sent.posted) rememberRun(deps, key, { id: sent.id, externalId: sent.externalId });
        log.info(
          { ...where, conclusion: output.conclusion, posted: sent.posted, apiCalls: calls() },
          'baseline preview completed',
        );
        return sent.posted ? 'posted' : 'unchanged';
      } catch (error) {
        log.error(
          { ...where, apiCalls: calls(), err: { message: (error as Error).message } },
          'baseline preview failed',
        );
        await sendFailure(github, deps, log, {
          target,
          reason: `The baseline preview failed: ${describeError(error)}`,
          where,
        });
        return 'failed';
      }
    }),
  );
}

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

/** A repository's default branch checked under the organisation baseline and its own file (sweeps, migrations). */
export async function evaluateDefaultBranch(
  github: GitHub,
  owner: string,
  repo: string,
  orgConfig: ConfigBlob | null,
  index?: PathIndex,
) {
  const info = await repositoryInfo(github, { owner, repo }, 1);
  const resolved = layerBaselines(owner, repo, info?.repoConfig, orgConfig, bundledBaseline());
  if (!info)
    return {
      resolved,
      headSha: '',
      report: gate([], resolved.baseline, defaultKnowledgeBase()),
      texts: new Map<string, string>(),
      files: 0,
      parsed: [],
    };
  const branch = await readBranch(github, { owner, repo }, info.headSha, index);
  const options = gateOptionsFor(resolved, owner, repo, { today: today() });
  const report = gate(branch.files, resolved.baseline, defaultKnowledgeBase(), options);
  return {
    resolved,
    headSha: info.headSha,
    report,
    texts: branch.texts,
    files: branch.files.length,
    parsed: branch.files,
    options,
  };
}

/** Open or update the repository's migration pull request when the organisation baseline asks for them. */
export async function migrateIfEnabled(
  github: GitHub,
  log: Logger,
  { owner, repo, defaultBranch }: Pick<MigrateJob, 'owner' | 'repo' | 'defaultBranch'>,
  index?: PathIndex,
): Promise<void> {
  const layer = await readOrgLayer(github, owner);
  if (layer.state !== 'found') return;
  if (
    !layerBaselines(owner, ORG_CONFIG_REPO, undefined, layer.config, bundledBaseline()).baseline.migration.pullRequests
  )
    return;
  const evaluated = await evaluateDefaultBranch(github, owner, repo, layer.config, index);
  if (evaluated.report.counts.error === 0) return;
  const result = await migrate(github, {
    owner,
    repo,
    defaultBranch,
    headSha: evaluated.headSha,
    report: evaluated.report,
    texts: evaluated.texts,
    baselineOrigin: evaluated.resolved.origin,
    files: evaluated.parsed,
    baseline: evaluated.resolved.baseline,
    ...(evaluated.options ? { gateOptions: evaluated.options } : {}),
  });
  log.info({ repo: `${owner}/${repo}`, ...result }, 'migration pull request');
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
