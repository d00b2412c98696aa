/** The App's reader over a commit's blobs (src/github/files.ts): what it asks GitHub for. */
import { describe, expect, it } from 'vitest';
import { CommitFiles } from '../../src/github/files.js';

describe('CommitFiles', () => {
  it('asks for every path it does not know, when the tree is not known', () => {
    const files = new CommitFiles();
    expect(files.isFile('svc/pyproject.toml')).toBe(false);
    expect(files.takeWanted()).toEqual(['svc/pyproject.toml']);
  });

  it("with the commit's whole tree, a path outside it is no file and is never read (a preview of 1,000 repositories: 200 reads fewer)", () => {
    const files = new CommitFiles(new Map(), new Set(['Dockerfile', 'pyproject.toml']));
    expect(files.isFile('sam2/pyproject.toml')).toBe(false);
    expect(files.read('sam2/pyproject.toml', 'pyproject')).toBeUndefined();
    expect(files.isFile('pyproject.toml')).toBe(false); // in the tree, not read yet: asked for
    expect(files.takeWanted()).toEqual(['pyproject.toml']);
  });
});
