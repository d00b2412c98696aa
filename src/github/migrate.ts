/**
 * Migration pull requests (baseline key `migration.pullRequests`, off by default): when a new organisation
 * baseline makes a repository's default branch fail, open one pull request with the safe fixes applied and the
 * reasons in its body. At most one per repository, updated in place on the app's own branch; default
 * branches are never pushed to.
 */
import type { Report } from '../finding.js';
import { migrationBody } from '../render/github-prose.js';
import { safeFixContents } from '../analysis/safe-fixes.js';
import { COMMIT_MUTATION } from './fixes.js';
import type { GitHub } from './types.js';

export const MIGRATION_BRANCH = 'cuda-gatekeeper/baseline-migration';
export const MIGRATION_MARKER = '<!-- cuda-gatekeeper:migration -->';

export interface MigrationResult {
  readonly action: 'opened' | 'updated' | 'nothing to fix';
  readonly number?: number;
}

/** A repository's default branch as it was judged under the new baseline. */
export interface MigrationInput {
  readonly owner: string;
  readonly repo: string;
  readonly defaultBranch: string;
  /** The commit judged: the migration branch starts there. */
  readonly headSha: string;
  readonly report: Report;
  /** The texts the report's fixes apply to. */
  readonly texts: ReadonlyMap<string, string>;
  /** Where the new baseline comes from (`owner/.github:cuda-gatekeeper.yml@sha`), for the body. */
  readonly baselineOrigin: string;
}

export async function migrate(github: GitHub, input: MigrationInput): Promise<MigrationResult> {
  const { owner, repo, defaultBranch, headSha, report, texts, baselineOrigin } = input;
  const commit = safeFixContents(report, texts);
  if (commit.files.length === 0) return { action: 'nothing to fix' };
  // Our branch starts from the current default branch each time (force-moved: it is the app's own branch).
  try {
    await github.rest.git.updateRef({ owner, repo, ref: `heads/${MIGRATION_BRANCH}`, sha: headSha, force: true });
  } catch (error) {
    if ((error as { status?: number }).status !== 422 && (error as { status?: number }).status !== 404) throw error;
    await github.rest.git.createRef({ owner, repo, ref: `refs/heads/${MIGRATION_BRANCH}`, sha: headSha });
  }
  await github.graphql(COMMIT_MUTATION, {
    input: {
      branch: { repositoryNameWithOwner: `${owner}/${repo}`, branchName: MIGRATION_BRANCH },
      expectedHeadOid: headSha,
      message: {
        headline: 'Follow the organisation CUDA baseline',
        body: commit.titles.map((title) => `- ${title}`).join('\n'),
      },
      fileChanges: {
        additions: commit.files.map((file) => ({
          path: file.path,
          contents: Buffer.from(file.contents, 'utf8').toString('base64'),
        })),
      },
    },
  });
  const body = `${MIGRATION_MARKER}\n${migrationBody(report, commit.titles, baselineOrigin)}`;
  const open = await github.rest.pulls.list({
    owner,
    repo,
    state: 'open',
    head: `${owner}:${MIGRATION_BRANCH}`,
    per_page: 10,
  });
  const existing = open.data.find((pull) => pull.head.ref === MIGRATION_BRANCH);
  if (existing) {
    await github.rest.pulls.update({ owner, repo, pull_number: existing.number, body });
    return { action: 'updated', number: existing.number };
  }
  const created = await github.rest.pulls.create({
    owner,
    repo,
    head: MIGRATION_BRANCH,
    base: defaultBranch,
    title: 'Follow the organisation CUDA baseline',
    body,
  });
  return { action: 'opened', number: created.data.number };
}
