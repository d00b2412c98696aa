/** The App's image lookup cache in Redis (its own module: the CLI and the Action never load ioredis). */
import { Redis as RedisClient, type Redis } from 'ioredis';
import type { LookupCache } from './cache.js';

/**
 * The App's cache, shared by its replicas: Redis keys under one prefix, each with its expiry. Commands fail at once
 * while Redis is away (no offline queue), so a lookup never waits on it: a miss asks the registry.
 */
export class RedisCache implements LookupCache {
  private readonly redis: Pick<Redis, 'get' | 'set' | 'quit'>;

  constructor(
    redis: Pick<Redis, 'get' | 'set' | 'quit'> | string,
    private readonly prefix = 'cuda-gatekeeper:images:',
  ) {
    this.redis =
      typeof redis === 'string'
        ? new RedisClient(redis, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
        : redis;
    if (this.redis instanceof RedisClient) this.redis.on('error', () => undefined);
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      // Already gone.
    }
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return (await this.redis.get(this.prefix + key)) ?? undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, value: string, seconds: number): Promise<void> {
    try {
      await this.redis.set(this.prefix + key, value, 'EX', Math.max(1, Math.round(seconds)));
    } catch {
      // Redis away: the lookup was made; the next check makes it again.
    }
  }
}
