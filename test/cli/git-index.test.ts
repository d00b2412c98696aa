/**
 * A file git tracks is checked whatever a `.gitignore` says (text-generation-webui tracks
 * `extensions/*\/requirements.txt` that its .gitignore matches): the walk reads the tracked paths from `.git/index`,
 * as git writes it. The indexes here are real ones, written by git itself in each format version it has.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { walk } from '../../src/cli/discover.js';
import { parseGitIndex, trackedPaths } from '../../src/cli/git-index.js';

const hasGit = spawnSync('git', ['--version']).status === 0;

function git(root: string, ...args: string[]): void {
  const result = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd: root,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
}

/** A checkout whose .gitignore matches a file git tracks (added with -f) and a folder that holds one. */
function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), 'cgk-git-'));
  git(root, 'init', '-q');
  mkdirSync(join(root, 'extensions', 'tts'), { recursive: true });
  mkdirSync(join(root, 'out', 'kept'), { recursive: true });
  mkdirSync(join(root, 'out', 'built'), { recursive: true });
  writeFileSync(join(root, '.gitignore'), 'extensions/*/requirements.txt\nout/\n');
  writeFileSync(join(root, 'requirements.txt'), 'torch==2.6.0\n');
  writeFileSync(join(root, 'extensions', 'tts', 'requirements.txt'), 'torch==2.6.0+cu121\n');
  writeFileSync(join(root, 'out', 'kept', 'requirements.txt'), 'numpy\n');
  writeFileSync(join(root, 'out', 'built', 'requirements.txt'), 'numpy\n');
  git(root, 'add', '.gitignore', 'requirements.txt');
  git(root, 'add', '-f', 'extensions/tts/requirements.txt', 'out/kept/requirements.txt');
  return root;
}

describe.runIf(hasGit)('files git tracks that a .gitignore matches', () => {
  it('are walked, and the ignored files git does not track are not', () => {
    const root = checkout();
    expect(walk(root, ['.']).paths).toEqual([
      'extensions/tts/requirements.txt',
      'out/kept/requirements.txt',
      'requirements.txt',
    ]);
  });

  it.each([2, 3, 4])('are read from an index of version %i', (version) => {
    const root = checkout();
    git(root, 'update-index', '--index-version', String(version));
    // Version 3 is written with extended flags only where an entry needs them: intent-to-add gives one.
    if (version === 3) {
      writeFileSync(join(root, 'new.txt'), 'x\n');
      git(root, 'add', '-N', 'new.txt');
    }
    expect(readFileSync(join(root, '.git', 'index')).readUInt32BE(4)).toBe(version);
    const tracked = trackedPaths(root)!;
    expect([...tracked.files].sort()).toEqual(
      [
        '.gitignore',
        'extensions/tts/requirements.txt',
        ...(version === 3 ? ['new.txt'] : []),
        'out/kept/requirements.txt',
        'requirements.txt',
      ].sort(),
    );
    expect([...tracked.folders].sort()).toEqual(['extensions', 'extensions/tts', 'out', 'out/kept']);
  });

  it('gives up, rather than guess, on a file that is no index or is cut short', () => {
    const root = checkout();
    const index = readFileSync(join(root, '.git', 'index'));
    expect(parseGitIndex(index)).toHaveLength(4);
    expect(parseGitIndex(index.subarray(0, 40))).toBeUndefined();
    expect(parseGitIndex(Buffer.from('not an index at all'))).toBeUndefined();
    // Without an index (a `git archive` export, a `.git` file of a worktree) what is tracked is not known: ignored
    // folders are passed over, but an ignored file is checked (an export holds only what was committed: opencompass
    // ignores `*.txt` and commits requirements/runtime.txt).
    const plain = mkdtempSync(join(tmpdir(), 'cgk-nogit-'));
    writeFileSync(join(plain, '.gitignore'), 'ignored/\n*.txt\n');
    mkdirSync(join(plain, 'ignored'));
    mkdirSync(join(plain, 'requirements'));
    writeFileSync(join(plain, 'ignored', 'requirements.txt'), 'numpy\n');
    writeFileSync(join(plain, 'requirements', 'runtime.txt'), 'torch>=1.13.1\n');
    expect(trackedPaths(plain)).toBeUndefined();
    expect(walk(plain, ['.']).paths).toEqual(['requirements/runtime.txt']);
  });
});
