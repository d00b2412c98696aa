/**
 * The path index on a real Redis server (started here on loopback; .ci/run installs Debian's redis-server),
 * including a Redis that goes away. A system test: `npm run test:system`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type RunningRedis } from '../support/redis.js';
import { storeContract } from '../support/path-index-contract.js';
import { entryFromTree, MAX_AGE_MS, RedisPathIndex } from '../../src/github/path-index.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

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
    const log = {
      warn: (_: unknown, message: string) => logged.push(message),
      info: (_: unknown, message: string) => logged.push(message),
    };
    const index = new RedisPathIndex('redis://127.0.0.1:1', log as never);
    opened.push(index);
    await index.put('o/r', entryFromTree(A, ['Dockerfile'], Date.now()));
    expect(await index.get('o/r')).toBeUndefined();
    await index.pushed('o/r', { before: A, after: B, touched: [] });
    expect(logged).toEqual(['the path index could not be written; trees are read instead']);
  });
});
