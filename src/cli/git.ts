import { execFileSync } from 'node:child_process';

export class GitError extends Error {}

export interface Changes {
  /** Files added or changed since REF (committed, staged, unstaged and untracked), relative to `cwd`. */
  readonly changed: readonly string[];
  /** Files deleted since REF (a rename counts as a deletion and an addition). */
  readonly removed: readonly string[];
}

/** What changed since REF in the working tree. */
export function changedSince(cwd: string, ref: string): Changes {
  const run = (args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim().split('\n')[0];
      throw new GitError(`git ${args[0]} failed${stderr ? `: ${stderr}` : ''}`);
    }
  };
  run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  const changed = run(['diff', '--name-only', '--relative', '--no-renames', '--diff-filter=ACMT', '-z', ref, '--']).split('\0');
  const removed = run(['diff', '--name-only', '--relative', '--no-renames', '--diff-filter=D', '-z', ref, '--']).split('\0');
  const untracked = run(['ls-files', '--others', '--exclude-standard', '-z']).split('\0');
  return { changed: [...new Set([...changed, ...untracked].filter(Boolean))], removed: removed.filter(Boolean) };
}
