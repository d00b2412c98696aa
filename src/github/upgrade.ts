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
import { COMMIT_MUTATION } from './fixes.js';
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
export interface UpgradeCommit {
  readonly headline: string;
  readonly body: string;
  readonly files: readonly { readonly path: string; readonly contents: string }[];
}

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
  const commits = upgradeCommits(result, branch.texts);
  const name = upgradeBranch(result.cuda);
  // The app's own branch starts from the default branch each time (force-moved, as the migration branch is).
  try {
    await github.rest.git.updateRef({ owner, repo, ref: `heads/${name}`, sha: info.headSha, force: true });
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status !== 422 && status !== 404) throw error;
    await github.rest.git.createRef({ owner, repo, ref: `refs/heads/${name}`, sha: info.headSha });
  }
  let head = info.headSha;
  for (const commit of commits) {
    const answer = await github.graphql<{ createCommitOnBranch: { commit: { oid: string } } }>(COMMIT_MUTATION, {
      input: {
        branch: { repositoryNameWithOwner: `${owner}/${repo}`, branchName: name },
        expectedHeadOid: head,
        message: { headline: commit.headline, body: commit.body },
        fileChanges: {
          additions: commit.files.map((file) => ({
            path: file.path,
            contents: Buffer.from(file.contents, 'utf8').toString('base64'),
          })),
        },
      },
    });
    head = answer.createCommitOnBranch.commit.oid;
  }
  const draft = result.held.length > 0 || result.locks.length > 0;
  const asked = `Asked for by @${request.requester}${request.from ? ` in #${request.from}` : ''}.`;
  const why = draft
    ? `\n\nOpened as a draft: ${[
        result.held.length ? `${result.held.length} unit${result.held.length === 1 ? '' : 's'} could not move` : '',
        result.locks.length ? `lock files must be regenerated` : '',
      ]
        .filter(Boolean)
        .join(' and ')} (below); mark it ready once done.`
    : '';
  const body = `${UPGRADE_MARKER}\n${asked}${why}\n\n${planMarkdown(result, { for: 'pull' })}`;
  const title = `Move to CUDA ${result.cuda}`;
  const open = await github.rest.pulls.list({ owner, repo, state: 'open', head: `${owner}:${name}`, per_page: 10 });
  const existing = open.data.find((pull) => pull.head.ref === name);
  if (existing) {
    await github.rest.pulls.update({ owner, repo, pull_number: existing.number, title, body });
    return { action: 'updated', number: existing.number, draft: existing.draft ?? false, plan: result };
  }
  const created = await github.rest.pulls.create({ owner, repo, head: name, base: defaultBranch, title, body, draft });
  return { action: 'opened', number: created.data.number, draft, plan: result };
}
