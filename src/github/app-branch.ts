/**
 * The App's own branches (`cuda-gatekeeper/…`: migrations, upgrades) and the one pull request each opens. A branch
 * starts from the default branch each time (force-moved: it is the App's own, never a person's), takes its commits one
 * after another with createCommitOnBranch (each expecting the head the previous one made, so nothing is lost to a
 * concurrent push), and its open pull request is updated in place rather than opened twice. Default branches are never
 * pushed to.
 */
import { COMMIT_MUTATION } from './fixes.js';
import type { GitHub, RepoRef } from './types.js';

/** One commit: its message and the files as they read after it. */
export interface BranchCommit {
  readonly headline: string;
  readonly body: string;
  readonly files: readonly { readonly path: string; readonly contents: string }[];
}

/** Point `branch` at `from` (created where missing), then commit `commits` on it in order; the new head. */
export async function pushAppBranch(
  github: GitHub,
  { owner, repo }: RepoRef,
  branch: string,
  from: string,
  commits: readonly BranchCommit[],
): Promise<string> {
  try {
    await github.rest.git.updateRef({ owner, repo, ref: `heads/${branch}`, sha: from, force: true });
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status !== 422 && status !== 404) throw error;
    await github.rest.git.createRef({ owner, repo, ref: `refs/heads/${branch}`, sha: from });
  }
  let head = from;
  for (const commit of commits) {
    const answer = await github.graphql<{ createCommitOnBranch: { commit: { oid: string } } }>(COMMIT_MUTATION, {
      input: {
        branch: { repositoryNameWithOwner: `${owner}/${repo}`, branchName: branch },
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
  return head;
}

/** The branch's open pull request into `base`, updated (title and body) or opened; drafts only where opened. */
export async function openOrUpdatePull(
  github: GitHub,
  { owner, repo }: RepoRef,
  pull: {
    readonly branch: string;
    readonly base: string;
    readonly title: string;
    readonly body: string;
    readonly draft?: boolean;
  },
): Promise<{ readonly action: 'opened' | 'updated'; readonly number: number; readonly draft: boolean }> {
  const open = await github.rest.pulls.list({
    owner,
    repo,
    state: 'open',
    head: `${owner}:${pull.branch}`,
    per_page: 10,
  });
  const existing = open.data.find((candidate) => candidate.head.ref === pull.branch);
  if (existing) {
    await github.rest.pulls.update({ owner, repo, pull_number: existing.number, title: pull.title, body: pull.body });
    return { action: 'updated', number: existing.number, draft: existing.draft ?? false };
  }
  const created = await github.rest.pulls.create({
    owner,
    repo,
    head: pull.branch,
    base: pull.base,
    title: pull.title,
    body: pull.body,
    ...(pull.draft ? { draft: true } : {}),
  });
  return { action: 'opened', number: created.data.number, draft: pull.draft ?? false };
}
