import { execFileSync } from 'node:child_process';

export class GitError extends Error {}

export interface Changes {
  /** Files added or changed since REF (committed, staged, unstaged and untracked), relative to `cwd`. */
  readonly changed: readonly string[];
  /** Files deleted since REF (a rename counts as a deletion and an addition). */
  readonly removed: readonly string[];
}

function git(cwd: string, args: readonly string[], maxBuffer = 64 * 1024 * 1024): string {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '')
      .trim()
      .split('\n')[0];
    throw new GitError(`git ${args[0]} failed${stderr ? `: ${stderr}` : ''}`);
  }
}

/** A ref as the user wrote it, refused when git would read it as an option (`--changed-since --x`). */
function commitOf(cwd: string, ref: string): void {
  if (ref === '' || ref.startsWith('-')) throw new GitError(`"${ref}" is not a git ref`);
  try {
    git(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  } catch {
    throw new GitError(`unknown git ref "${ref}"`);
  }
}

/** The text of `path` (relative to `cwd`) at git ref `ref`; undefined when the ref has no such file. */
export function fileAtRef(cwd: string, ref: string, path: string): string | undefined {
  commitOf(cwd, ref);
  try {
    return git(cwd, ['show', '--end-of-options', `${ref}:./${path}`], 256 * 1024);
  } catch {
    return undefined;
  }
}

/** What changed since REF in the working tree. */
export function changedSince(cwd: string, ref: string): Changes {
  const run = (args: string[]): string => git(cwd, args);
  commitOf(cwd, ref);
  const changed = run([
    'diff',
    '--name-only',
    '--relative',
    '--no-renames',
    '--diff-filter=ACMT',
    '-z',
    '--end-of-options',
    ref,
    '--',
  ]).split('\0');
  const removed = run([
    'diff',
    '--name-only',
    '--relative',
    '--no-renames',
    '--diff-filter=D',
    '-z',
    '--end-of-options',
    ref,
    '--',
  ]).split('\0');
  const untracked = run(['ls-files', '--others', '--exclude-standard', '-z']).split('\0');
  return { changed: [...new Set([...changed, ...untracked].filter(Boolean))], removed: removed.filter(Boolean) };
}

/**
 * The paths the index deletes (`git diff --cached --diff-filter=D`): what a commit removes, which pre-commit passes
 * to no hook (it passes the files that exist).
 */
export function stagedDeletions(cwd: string): string[] {
  try {
    git(cwd, ['rev-parse', '--is-inside-work-tree']);
  } catch {
    throw new GitError(`--staged needs a git repository, and ${cwd} is not in one`);
  }
  return git(cwd, ['diff', '--cached', '--name-only', '--relative', '--no-renames', '--diff-filter=D', '-z'])
    .split('\0')
    .filter(Boolean);
}
