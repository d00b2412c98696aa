/**
 * The path index (src/github/path-index.ts): what a push event says about a default branch, when an entry may
 * stand for a commit, and the store in memory (the Redis store: path-index-redis.test.ts, a system test).
 */
import { describe, expect, it } from 'vitest';
import { storeContract } from '../support/path-index-contract.js';
import {
  afterPush,
  branchPush,
  entryFromTree,
  MAX_AGE_MS,
  MemoryPathIndex,
  usablePaths,
} from '../../src/github/path-index.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const ZERO = '0'.repeat(40);

const payload = (extra: Record<string, unknown> = {}) => ({
  ref: 'refs/heads/main',
  before: A,
  after: B,
  forced: false,
  created: false,
  deleted: false,
  repository: { name: 'Trainer', default_branch: 'main', owner: { login: 'Octo-Org' } },
  commits: [
    { added: ['docker/Dockerfile', 'README.md'], modified: ['requirements.txt'], removed: [] },
    { added: [], modified: ['src/train.py'], removed: ['env/environment.yml'] },
  ],
  ...extra,
});

describe('what a push says', () => {
  it('names the relevant paths a push to the default branch touched, under the repository as GitHub compares names', () => {
    expect(branchPush(payload())).toEqual({
      repo: 'octo-org/trainer',
      push: { before: A, after: B, touched: ['docker/Dockerfile', 'requirements.txt', 'env/environment.yml'] },
    });
  });

  it('says nothing of a push to another branch, and lists no changes for a push that does not list them all', () => {
    expect(branchPush(payload({ ref: 'refs/heads/feature' }))).toBeUndefined();
    expect(branchPush(payload({ ref: 'refs/tags/v1' }))).toBeUndefined();
    for (const extra of [
      { forced: true },
      { created: true, before: ZERO },
      { deleted: true, after: ZERO },
      { commits: [] },
      { commits: Array.from({ length: 2048 }, () => ({ added: [], modified: ['a.py'], removed: [] })) },
    ])
      expect(branchPush(payload(extra))?.push.touched, JSON.stringify(extra).slice(0, 60)).toBeUndefined();
    // 2,047 commits are all listed.
    const listed = branchPush(
      payload({ commits: Array.from({ length: 2047 }, () => ({ added: ['Dockerfile'], modified: [], removed: [] })) }),
    );
    expect(listed?.push.touched).toEqual(['Dockerfile']);
  });

  it('moves an entry forward only from the commit it names, adding the touched paths', () => {
    const entry = entryFromTree(A, ['Dockerfile'], 1000);
    expect(afterPush(entry, { before: A, after: B, touched: ['requirements.txt', 'Dockerfile'] })).toEqual({
      ...entry,
      sha: B,
      paths: ['Dockerfile', 'requirements.txt'],
    });
    expect(afterPush(entry, { before: C, after: B, touched: [] })).toBeUndefined();
    expect(afterPush(entry, { before: A, after: B })).toBeUndefined();
    // A redelivered push (GitHub redelivers on request with the same payload) finds the entry already at its commit.
    const moved = afterPush(entry, { before: A, after: B, touched: ['requirements.txt'] })!;
    expect(afterPush(moved, { before: A, after: B, touched: ['requirements.txt'] })).toBe(moved);
    expect(afterPush(moved, { before: A, after: B })).toBe(moved);
  });

  it('stands for the very commit it names, by this version of the App, for at most a week', () => {
    const now = Date.now();
    const entry = entryFromTree(A, ['Dockerfile'], now);
    expect(usablePaths(entry, A, now)).toEqual(['Dockerfile']);
    expect(usablePaths(entry, B, now)).toBeUndefined();
    expect(usablePaths(entry, A, now + MAX_AGE_MS)).toBeUndefined();
    expect(usablePaths({ ...entry, version: '0.0.0-other' }, A, now)).toBeUndefined();
    expect(usablePaths(undefined, A, now)).toBeUndefined();
  });
});

describe('in memory', () => {
  storeContract(() => new MemoryPathIndex());

  it('forgets the least recently used repositories beyond its limit', async () => {
    const index = new MemoryPathIndex(2);
    for (const repo of ['o/a', 'o/b']) await index.put(repo, entryFromTree(A, [], Date.now()));
    await index.get('o/a');
    await index.put('o/c', entryFromTree(A, [], Date.now()));
    expect(await index.get('o/b')).toBeUndefined();
    expect(await index.get('o/a')).toBeDefined();
  });
});
