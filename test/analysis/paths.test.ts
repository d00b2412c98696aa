import { posix } from 'node:path';
import fc from 'fast-check';
import { assertProperty, expectShare } from '../support/property.js';
import { describe, expect, it } from 'vitest';
import { joinRepo, normalizeRepoPath } from '../../src/analysis/paths.js';
import { RUNS } from '../support/fuzz-inputs.js';

/** The definitions without the fast path for paths that are already normal: the model the fast path must match. */
function normalizeByPosix(path: string): string | undefined {
  const normalized = posix.normalize(path.replace(/\\/g, '/'));
  if (normalized.startsWith('../') || normalized === '..' || posix.isAbsolute(normalized)) return undefined;
  return normalized === '.' ? '' : normalized.replace(/^\.\//, '');
}

function joinByPosix(...parts: string[]): string | undefined {
  return normalizeByPosix(posix.join(...parts.filter((part) => part !== '')) || '.');
}

/** Paths built from the pieces that matter to normalising: dots, empty segments, backslashes, leading slashes. */
const piece = fc.constantFrom('a', 'b.txt', '.', '..', '', '.github', '..x', 'x..', 'a\\b', '\\', '...', ' ', 'c d');
const path = fc.array(piece, { maxLength: 6 }).map((pieces) => pieces.join('/'));

describe('repository paths', () => {
  it('normalizes as posix.normalize does, for any path', () => {
    let unchanged = 0;
    assertProperty(
      fc.property(path, (p) => {
        const normalized = normalizeRepoPath(p);
        expect(normalized).toBe(normalizeByPosix(p));
        if (p !== '' && normalized === p) unchanged++;
      }),
      { numRuns: RUNS },
    );
    // The fast path (paths already normal) is taken often enough for the comparison to test it: 0.227 of the
    // cases, measured as fastPathProperties measures its shares.
    expectShare(unchanged, RUNS, 0.227);
  });

  it('joins as posix.join does, for any parts', () => {
    assertProperty(
      fc.property(fc.array(path, { maxLength: 3 }), (parts) => {
        expect(joinRepo(...parts)).toBe(joinByPosix(...parts));
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps clean paths as they are and drops those that leave the repository', () => {
    expect(joinRepo('services/api', 'requirements.txt')).toBe('services/api/requirements.txt');
    expect(joinRepo('services/api', '../requirements.txt')).toBe('services/requirements.txt');
    expect(joinRepo('', './requirements.txt')).toBe('requirements.txt');
    expect(joinRepo('a', '../../x')).toBeUndefined();
    expect(joinRepo('a', '/etc/passwd')).toBe('a/etc/passwd');
    expect(normalizeRepoPath('/etc/passwd')).toBeUndefined();
    expect(normalizeRepoPath('.github/workflows/ci.yml')).toBe('.github/workflows/ci.yml');
    expect(normalizeRepoPath('a//b/')).toBe('a/b/');
    expect(normalizeRepoPath('')).toBe('');
  });
});
