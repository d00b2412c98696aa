/** The App's reader over a commit's blobs (src/github/files.ts): what it asks GitHub for. */
import { describe, expect, it } from 'vitest';
import { CommitFiles } from '../../src/github/files.js';
import type { BlobAnswer } from '../../src/github/read.js';

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

  it('a lock file up to 32 MiB that GraphQL truncated or may have (over 1 MiB) is read whole; past 32 MiB, or any other file past 1 MiB, is not checked', () => {
    const MiB = 1024 * 1024;
    const blob = (byteSize: number, extra: object = {}) => ({
      text: 'version = 1\n',
      byteSize,
      isBinary: false,
      oid: 'a'.repeat(40),
      ...extra,
    });
    const files = new CommitFiles(
      new Map<string, BlobAnswer>([
        ['uv.lock', blob(2 * MiB)],
        ['small/uv.lock', blob(100, { isTruncated: true })],
        ['huge/pixi.lock', blob(33 * MiB)],
        ['requirements.txt', blob(2 * MiB)],
        ['no-sha/poetry.lock', { text: 'x', byteSize: 2 * MiB, isBinary: false, isTruncated: true }],
        ['whole/uv.lock', blob(2 * MiB, { whole: true })],
      ]),
    );
    for (const path of ['uv.lock', 'small/uv.lock', 'huge/pixi.lock', 'requirements.txt', 'no-sha/poetry.lock'])
      expect(files.read(path, undefined)).toBeUndefined();
    expect(files.takeWhole()).toEqual([
      ['uv.lock', 'a'.repeat(40)],
      ['small/uv.lock', 'a'.repeat(40)],
    ]);
    expect(Object.fromEntries(files.skipped)).toEqual({
      'huge/pixi.lock': '33 MiB, over the 32 MiB size limit',
      'requirements.txt': '2 MiB, over the 1 MiB size limit',
      'no-sha/poetry.lock': 'GitHub gave only part of it',
    });
    expect(files.read('whole/uv.lock', undefined)?.text).toBe('version = 1\n');
  });
});
