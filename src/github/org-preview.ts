/**
 * The preview of a pull request to `<org>/.github` that changes `cuda-gatekeeper.yml`: the proposed baseline is
 * validated, and every repository's default branch and open pull requests are judged under both baselines, to say
 * which would newly fail or pass. It is that pull request's verdict on every path that checks it (opened,
 * synchronize, Re-run, `/cuda-check`, the re-checks after another baseline lands).
 */
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
import { gateOptionsFor, layerBaselines, ORG_CONFIG_PATH, type ConfigBlob } from '../baseline/layers.js';
import { rememberRun, type AppDeps } from './deps.js';
import { partialQuery, problemsAt } from './graphql.js';
import {
  readBranches,
  readPullsAgainst,
  repositoriesInfo,
  type BranchFiles,
  type RepositoryInfo,
} from './repository.js';
import type { Skipped } from './files.js';
import type { PathIndex } from './path-index.js';
import { newestRun, orgLayer, RUNS_FIELD, type Blob, type ExistingRun } from './read.js';
import { describeError, sendFailure, serialized } from './pull-check.js';
import { runKey, type FanoutJob } from './jobs.js';
import type { GitHub, Logger, PullTarget } from './types.js';
import { bundledBaseline, today } from '../util/package-root.js';
import { organisationRepositories } from './org.js';

type PreviewJob = Extract<FanoutJob, { kind: 'preview' }>;

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
  /** Whether a path is known to be no file of the commit read (missing-include's notices, as its own check has). */
  readonly noFile?: ((path: string) => boolean) | undefined;
}

/** The files gated under the current and under the proposed organisation baseline: errors before and after. */
function gateUnderBoth(files: readonly ParsedFile[], place: Place, baselines: BaselinePair) {
  const { owner, repo, repoConfig, removed = [], noFile } = place;
  const run = (org: ConfigBlob | null) => {
    const resolved = layerBaselines(owner, repo, repoConfig, org, bundledBaseline());
    return gate(
      files,
      resolved.baseline,
      defaultKnowledgeBase(),
      gateOptionsFor(resolved, owner, repo, { today: baselines.today, removed, noFile }),
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
  const run = (
    { files, noFile }: Pick<BranchFiles, 'files' | 'noFile'>,
    entry: Previewed,
    removed: readonly string[] = [],
  ) =>
    gateUnderBoth(
      files,
      { owner, repo: entry.repo.name, repoConfig: entry.info.repoConfig, removed, noFile },
      baselines,
    );
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
      ...run(branch, entry),
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
        ...run(read, entry, item.pull.removed),
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
