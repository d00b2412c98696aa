/**
 * What every path index store must do (test/github/path-index.test.ts in memory, path-index-redis.test.ts on Redis).
 */
import { expect, it } from 'vitest';
import { entryFromTree, type PathIndex } from '../../src/github/path-index.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

export /** The behaviour both stores share. */
function storeContract(make: () => PathIndex) {
  it('keeps an entry, moves it over a push that follows from it, and forgets it over one that does not', async () => {
    const index = make();
    const entry = entryFromTree(A, ['Dockerfile', 'odd\nname/requirements.txt'], Date.now());
    await index.put('o/r', entry);
    expect(await index.get('o/r')).toEqual(entry);
    await index.pushed('o/r', { before: A, after: B, touched: ['requirements.txt', 'Dockerfile'] });
    expect(await index.get('o/r')).toEqual({
      ...entry,
      sha: B,
      paths: ['Dockerfile', 'odd\nname/requirements.txt', 'requirements.txt'],
    });
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
