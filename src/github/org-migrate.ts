/** The migration job: a repository's migration pull request, when the organisation baseline asks for them. */
import { layerBaselines, ORG_CONFIG_REPO } from '../baseline/layers.js';
import type { PathIndex } from './path-index.js';
import { readOrgLayer } from './read.js';
import { migrate } from './migrate.js';
import type { FanoutJob } from './jobs.js';
import type { GitHub, Logger } from './types.js';
import { bundledBaseline } from '../util/package-root.js';
import { evaluateDefaultBranch } from './org.js';

type MigrateJob = Extract<FanoutJob, { kind: 'migrate' }>;

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
