/**
 * `/cuda-check upgrade X.Y`: the pull request no update bot opens. The planner (src/plan/plan.ts) moves the default
 * branch to CUDA X.Y, every move verified by the gate under the same baseline and fleet; this commits it on the
 * app's own branch (`cuda-gatekeeper/upgrade-cuda-X.Y`, from the default branch), one commit per unit that moves
 * together with each change's fact and source in the message, and opens a pull request whose body is the plan. A
 * plan that leaves something unmoved (a unit it could not move, a lock file to regenerate) opens as a draft. The
 * check runs on it like on any pull request.
 */
import { applyEdits } from '../analysis/edits.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { layerBaselines } from '../baseline/layers.js';
import { plan, PlanError, type Plan, type PlanStep } from '../plan/plan.js';
import { planMarkdown } from '../render/markdown.js';
import { openOrUpdatePull, pushAppBranch, type BranchCommit } from './app-branch.js';
import { readOrgLayer } from './read.js';
import { readBranch, repositoryInfo } from './repository.js';
import type { PathIndex } from './path-index.js';
import type { GitHub, RepoRef } from './types.js';
import { bundledBaseline } from '../util/package-root.js';

export const UPGRADE_MARKER = '<!-- cuda-gatekeeper:upgrade -->';

export function upgradeBranch(cuda: string): string {
  return `cuda-gatekeeper/upgrade-cuda-${cuda}`;
}

export type UpgradeResult =
  | { readonly action: 'opened' | 'updated'; readonly number: number; readonly draft: boolean; readonly plan: Plan }
  | { readonly action: 'nothing to move'; readonly plan: Plan }
  | { readonly action: 'refused'; readonly reason: string };

export interface UpgradeRequest extends RepoRef {
  readonly cuda: string;
  readonly defaultBranch: string;
  /** Who asked, and where (`#12`), for the pull request's body. */
  readonly requester: string;
  readonly from?: number;
}

/** One commit of the upgrade: the steps of the units that move together, and the files as they read after them. */
export type UpgradeCommit = BranchCommit;

/**
 * The plan's steps as commits, one per unit in the plan's order; a file two units edit is written by each with the
 * edits of both so far (the edits of one plan never overlap: the planner merged them).
 */
export function upgradeCommits(result: Plan, texts: ReadonlyMap<string, string>): UpgradeCommit[] {
  const units = [...new Set(result.steps.map((step) => step.unit))];
  const applied: PlanStep[] = [];
  return units.map((unit) => {
    const own = result.steps.filter((step) => step.unit === unit);
    applied.push(...own);
    const paths = [...new Set(own.flatMap((step) => (step.edits ?? []).map((edit) => edit.path)))].sort();
    const files = paths.map((path) => ({
      path,
      contents: applyEdits(
        texts.get(path) ?? '',
        applied.flatMap((step) => (step.edits ?? []).filter((edit) => edit.path === path)),
      ),
    }));
    return {
      headline: `Move ${unit} to CUDA ${result.cuda}`,
      body: [
        ...own.map(
          (step) =>
            `- ${step.location.path}:${step.location.start.line}: ${step.what}: ${step.from} -> ${step.to}${step.note ? ` (${step.note})` : ''}`,
        ),
        ...(result.torch && own.some((step) => step.what === 'torch')
          ? ['', `torch ${result.torch.version}+${result.torch.variant}: ${result.torch.source}`]
          : []),
        ...(result.driver && own.some((step) => /image/.test(step.what))
          ? ['', `Driver for CUDA ${result.driver.cuda}: >= ${result.driver.minimum} (${result.driver.source})`]
          : []),
        '',
        'Planned and verified by cuda-gatekeeper: the gate adds no error on the moved files.',
      ].join('\n'),
      files,
    };
  });
}

/** Plan the default branch's move to `cuda`, commit it on the app's branch, and open (or update) the pull request. */
export async function upgrade(github: GitHub, request: UpgradeRequest, index?: PathIndex): Promise<UpgradeResult> {
  const { owner, repo, cuda, defaultBranch } = request;
  const info = await repositoryInfo(github, { owner, repo }, 1);
  if (!info) return { action: 'refused', reason: `${owner}/${repo} has no commit to move yet` };
  // The baseline of the default branch and the organisation, never of a pull request.
  const layer = await readOrgLayer(github, owner);
  if (layer.state === 'unavailable')
    return { action: 'refused', reason: `the organisation baseline could not be read (${layer.reason})` };
  const resolved = layerBaselines(
    owner,
    repo,
    info.repoConfig,
    layer.state === 'found' ? layer.config : null,
    bundledBaseline(),
  );
  const branch = await readBranch(github, { owner, repo }, info.headSha, index);
  if (branch.truncated)
    return {
      action: 'refused',
      reason: "the repository's tree is too large to read whole, so a plan could miss files that carry a CUDA",
    };
  let result: Plan;
  try {
    result = plan(branch.files, cuda, defaultKnowledgeBase(), resolved.baseline);
  } catch (error) {
    if (error instanceof PlanError) return { action: 'refused', reason: error.message };
    throw error;
  }
  if (result.steps.length === 0) return { action: 'nothing to move', plan: result };
  const name = upgradeBranch(result.cuda);
  await pushAppBranch(github, { owner, repo }, name, info.headSha, upgradeCommits(result, branch.texts));
  // Files the read could not take (too large, binary, a link out of the repository) may carry a CUDA too.
  const unread = branch.skipped;
  const reasons = [
    result.held.length ? `${result.held.length} unit${result.held.length === 1 ? '' : 's'} could not move` : '',
    result.locks.length ? 'lock files must be regenerated' : '',
    unread.length ? `${unread.length} file${unread.length === 1 ? ' was' : 's were'} not read` : '',
  ].filter(Boolean);
  const asked = `Asked for by @${request.requester}${request.from ? ` in #${request.from}` : ''}.`;
  const why = reasons.length ? `\n\nOpened as a draft: ${reasons.join(', ')} (below); mark it ready once done.` : '';
  const notRead = unread.length
    ? `\n\n**Not read** (they may name a CUDA the plan did not move):\n${unread.map((file) => `- \`${file.path}\`: ${file.reason}`).join('\n')}`
    : '';
  const body = `${UPGRADE_MARKER}\n${asked}${why}\n\n${planMarkdown(result, { for: 'pull' })}${notRead}`;
  const pull = await openOrUpdatePull(
    github,
    { owner, repo },
    { branch: name, base: defaultBranch, title: `Move to CUDA ${result.cuda}`, body, draft: reasons.length > 0 },
  );
  return { ...pull, plan: result };
}
