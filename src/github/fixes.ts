/** Committing safe fixes to a pull request branch with one GraphQL createCommitOnBranch mutation. */
import type { FixCommit } from '../analysis/safe-fixes.js';
import { fixCommitMessage } from '../render/github-prose.js';
import type { GitHub, PullTarget } from './types.js';

export const COMMIT_MUTATION = `mutation CudaGatekeeperFix($input: CreateCommitOnBranchInput!) {
  createCommitOnBranch(input: $input) { commit { oid url } }
}`;

export function isFork(target: PullTarget): boolean {
  return target.headRepo.toLowerCase() !== `${target.owner}/${target.repo}`.toLowerCase();
}

/** Commit the fixes on the head branch; fails (and changes nothing) if the branch moved since the check. */
export async function commitFixes(github: GitHub, target: PullTarget, commit: FixCommit): Promise<string> {
  const result = await github.graphql<{ createCommitOnBranch: { commit: { oid: string } } }>(COMMIT_MUTATION, {
    input: {
      branch: { repositoryNameWithOwner: target.headRepo, branchName: target.headRef },
      expectedHeadOid: target.headSha,
      message: fixCommitMessage(commit.titles),
      fileChanges: {
        additions: commit.files.map((file) => ({
          path: file.path,
          contents: Buffer.from(file.contents, 'utf8').toString('base64'),
        })),
      },
    },
  });
  return result.createCommitOnBranch.commit.oid;
}
