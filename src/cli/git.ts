import { execFileSync } from 'node:child_process';

export class GitError extends Error {}

/** Files changed since REF (committed, staged, unstaged and untracked), relative to `cwd`. */
export function changedSince(cwd: string, ref: string): string[] {
  const run = (args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim().split('\n')[0];
      throw new GitError(`git ${args[0]} failed${stderr ? `: ${stderr}` : ''}`);
    }
  };
  run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  const changed = run(['diff', '--name-only', '--relative', '--diff-filter=ACMRT', '-z', ref, '--']).split('\0');
  const untracked = run(['ls-files', '--others', '--exclude-standard', '-z']).split('\0');
  return [...new Set([...changed, ...untracked].filter(Boolean))];
}
