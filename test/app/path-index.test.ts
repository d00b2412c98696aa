/**
 * The path index (src/github/path-index.ts): what a push event says about a default branch, when an entry may
 * stand for a commit, and the two stores: in memory, and on a real Redis server (started here on loopback;
 * .ci/run installs Debian's redis-server), including a Redis that goes away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RunningRedis } from '../support/redis.js';
import { afterPush, branchPush, entryFromTree, MAX_AGE_MS, MemoryPathIndex, RedisPathIndex, usablePaths, type PathIndex } from '../../src/github/path-index.js';

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
    const listed = branchPush(payload({ commits: Array.from({ length: 2047 }, () => ({ added: ['Dockerfile'], modified: [], removed: [] })) }));
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

/** The behaviour both stores share. */
function storeContract(make: () => PathIndex) {
  it('keeps an entry, moves it over a push that follows from it, and forgets it over one that does not', async () => {
    const index = make();
    const entry = entryFromTree(A, ['Dockerfile', 'odd\nname/requirements.txt'], Date.now());
    await index.put('o/r', entry);
    expect(await index.get('o/r')).toEqual(entry);
    await index.pushed('o/r', { before: A, after: B, touched: ['requirements.txt', 'Dockerfile'] });
    expect(await index.get('o/r')).toEqual({ ...entry, sha: B, paths: ['Dockerfile', 'odd\nname/requirements.txt', 'requirements.txt'] });
    await index.pushed('o/r', { before: A, after: B, touched: ['requirements.txt'] }); // redelivered: already at B
    expect((await index.get('o/r'))?.sha).toBe(B);
    await index.pushed('o/r', { before: A, after: C, touched: [] }); // out of order: B is the entry's commit
    expect(await index.get('o/r')).toBeUndefined();
    await index.put('o/r', entryFromTree(B, [], Date.now()));
    await index.pushed('o/r', { before: B, after: C }); // forced
    expect(await index.get('o/r')).toBeUndefined();
    await index.pushed('o/unknown', { before: A, after: B, touched: ['Dockerfile'] });
    expect(await index.get('o/unknown')).toBeUndefined();
  });

  it('keeps an empty path list as empty', async () => {
    const index = make();
    await index.put('o/empty', entryFromTree(A, [], Date.now()));
    await index.pushed('o/empty', { before: A, after: B, touched: [] });
    expect((await index.get('o/empty'))?.paths).toEqual([]);
    await index.pushed('o/empty', { before: B, after: C, touched: ['Dockerfile'] });
    expect((await index.get('o/empty'))?.paths).toEqual(['Dockerfile']);
  });
}

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

let redis: RunningRedis | undefined;
let url = '';
const opened: RedisPathIndex[] = [];

describe('on Redis', () => {
  beforeAll(async () => {
    redis = await startRedis();
    url = redis.url;
  }, 30_000);
  afterAll(() => {
    for (const index of opened) index.close();
    redis?.stop();
  });
  const open = (prefix = `test:${Math.random()}:`) => {
    const index = new RedisPathIndex(url, undefined, prefix);
    opened.push(index);
    return index;
  };

  storeContract(() => open());

  it('is shared: what one replica writes, another reads and moves forward, and the entry expires with its tree', async () => {
    const prefix = `shared:${Math.random()}:`;
    const [one, two] = [open(prefix), open(prefix)];
    const builtAt = Date.now() - MAX_AGE_MS + 60_000;
    await one.put('o/r', entryFromTree(A, ['Dockerfile'], builtAt));
    await two.pushed('o/r', { before: A, after: B, touched: ['Dockerfile'] });
    expect((await one.get('o/r'))?.sha).toBe(B);
    const { Redis } = await import('ioredis');
    const raw = new Redis(url);
    const ttl = await raw.pttl(`${prefix}o/r`);
    raw.disconnect();
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000); // the push kept the expiry of the tree it came from
  });

  it('answers "no entry" and drops writes while Redis is unreachable, and never throws', async () => {
    const logged: string[] = [];
    const log = { warn: (_: unknown, message: string) => logged.push(message), info: (_: unknown, message: string) => logged.push(message) };
    const index = new RedisPathIndex('redis://127.0.0.1:1', log as never);
    opened.push(index);
    await index.put('o/r', entryFromTree(A, ['Dockerfile'], Date.now()));
    expect(await index.get('o/r')).toBeUndefined();
    await index.pushed('o/r', { before: A, after: B, touched: [] });
    expect(logged).toEqual(['the path index could not be written; trees are read instead']);
  });
});
