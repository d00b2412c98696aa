/** Committing safe fixes to a pull request branch with one GraphQL createCommitOnBranch mutation. */
import { applyEdits } from '../analysis/edits.js';
import type { Report, TextEdit } from '../finding.js';
import type { GitHub, PullTarget } from './types.js';

export const COMMIT_MUTATION = `mutation CudaGatekeeperFix($input: CreateCommitOnBranchInput!) {
  createCommitOnBranch(input: $input) { commit { oid url } }
}`;

export interface FixCommit {
  readonly files: readonly { readonly path: string; readonly contents: string }[];
  readonly titles: readonly string[];
}

/** The new contents of every file the safe fixes touch (pure). */
export function safeFixContents(report: Report, texts: ReadonlyMap<string, string>): FixCommit {
  const byPath = new Map<string, TextEdit[]>();
  const titles: string[] = [];
  for (const finding of report.findings) {
    if (finding.fix?.safety !== 'safe') continue;
    titles.push(`${finding.fix.title} (${finding.ruleId}, ${finding.location.path}:${finding.location.start.line})`);
    for (const edit of finding.fix.edits) byPath.set(edit.path, [...(byPath.get(edit.path) ?? []), edit]);
  }
  const files = [...byPath].flatMap(([path, edits]) => {
    const text = texts.get(path);
    if (text === undefined) return [];
    const contents = applyEdits(text, dedupe(edits));
    return contents === text ? [] : [{ path, contents }];
  });
  return { files, titles };
}

function dedupe(edits: readonly TextEdit[]): TextEdit[] {
  const seen = new Set<string>();
  return edits.filter((edit) => {
    const key = `${edit.range[0]}:${edit.range[1]}:${edit.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function isFork(target: PullTarget): boolean {
  return target.headRepo.toLowerCase() !== `${target.owner}/${target.repo}`.toLowerCase();
}

/** Commit the fixes on the head branch; fails (and changes nothing) if the branch moved since the check. */
export async function commitFixes(github: GitHub, target: PullTarget, commit: FixCommit): Promise<string> {
  const message = `Apply cuda-gatekeeper safe fixes\n\n${commit.titles.map((title) => `- ${title}`).join('\n')}`;
  const result = await github.graphql<{ createCommitOnBranch: { commit: { oid: string } } }>(COMMIT_MUTATION, {
    input: {
      branch: { repositoryNameWithOwner: target.headRepo, branchName: target.headRef },
      expectedHeadOid: target.headSha,
      message: { headline: 'Apply cuda-gatekeeper safe fixes', body: message.split('\n').slice(2).join('\n') },
      fileChanges: { additions: commit.files.map((file) => ({ path: file.path, contents: Buffer.from(file.contents, 'utf8').toString('base64') })) },
    },
  });
  return result.createCommitOnBranch.commit.oid;
}
