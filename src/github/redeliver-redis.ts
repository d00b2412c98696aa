/** Redelivery scans shared by replicas on one Redis: one scan at a time (a lock), one bookmark. */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { KEPT_MS, type RedeliveryState } from './redeliver.js';

const LOCK = 'cuda-gatekeeper:redeliver:lock';
const SINCE = 'cuda-gatekeeper:redeliver:since';
const COUNT = 'cuda-gatekeeper:redeliver:count:';

/** Deletes the lock only when it is still ours (a lock that expired may be another replica's now). */
const UNLOCK = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export class RedisRedeliveryState implements RedeliveryState {
  private readonly redis: Redis;
  private readonly me = randomUUID();

  constructor(url: string) {
    // A scan waits for nothing: with Redis away, commands fail at once and the scan is skipped until the next.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    this.redis.on('error', () => undefined);
  }

  private async ready(): Promise<Redis> {
    if (this.redis.status === 'wait') await this.redis.connect();
    return this.redis;
  }

  async lock(ms: number): Promise<boolean> {
    return (await (await this.ready()).set(LOCK, this.me, 'PX', ms, 'NX')) === 'OK';
  }

  async unlock(): Promise<void> {
    await (await this.ready()).eval(UNLOCK, 1, LOCK, this.me);
  }

  async since(): Promise<number | undefined> {
    const value = await (await this.ready()).get(SINCE);
    return value === null ? undefined : Number(value);
  }

  async setSince(at: number): Promise<void> {
    await (await this.ready()).set(SINCE, String(at));
  }

  async redeliveries(guid: string): Promise<number> {
    return Number((await (await this.ready()).get(`${COUNT}${guid}`)) ?? 0);
  }

  async countRedelivery(guid: string): Promise<void> {
    const redis = await this.ready();
    await redis.incr(`${COUNT}${guid}`);
    await redis.pexpire(`${COUNT}${guid}`, KEPT_MS);
  }

  close(): void {
    this.redis.disconnect();
  }
}
