/**
 * Durable fan-out on Redis (BullMQ), used when REDIS_URL is set. Several App replicas share one queue:
 * jobs survive restarts and crashes (a job whose worker died is picked up again once its lock expires),
 * retries back off exponentially, GitHub rate limits pause the queue instead of failing jobs, and jobs are
 * keyed (installation, repository, head commit, baseline) so duplicates collapse. Re-running a job is
 * harmless: checks update the commit's existing check run, migrations update their one pull request.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Probot } from 'probot';
import { jobKey, type AddOptions, type Fanout, type FanoutJob, type JobRunner } from './jobs.js';
import type { GitHub, Logger } from './types.js';

export const QUEUE_NAME = 'cuda-gatekeeper';

/** How long a delivery may wait for Redis to store it before it is answered 503 (GitHub waits 10 s). */
export const STORE_DEADLINE_MS = 2000;

export interface DurableOptions {
  readonly redisUrl: string;
  readonly concurrency?: number;
  /** How long a job's lock lasts; a crashed worker's job is retried after it expires. */
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
  /** Where Redis errors go (once per change of state, never a raw stack trace per retry). */
  readonly log?: Logger;
}

/**
 * Redis's state as the logs say it: one line when it goes away (with the error), one when it is back. ioredis and
 * BullMQ emit an `error` for every reconnection attempt; left unhandled, each is a multi-line stack trace on stderr.
 */
export class RedisHealth {
  private down = false;
  constructor(private readonly log?: Logger) {}

  watch(emitter: { on(event: string, listener: (...args: unknown[]) => void): unknown }, what: string): void {
    emitter.on('error', (error: unknown) => {
      if (this.down) return;
      this.down = true;
      this.log?.error(
        { redis: what, err: { message: (error as Error)?.message ?? String(error) } },
        'Redis is unreachable; durable work waits for it',
      );
    });
    emitter.on('ready', () => {
      if (!this.down) return;
      this.down = false;
      this.log?.info({ redis: what }, 'Redis is reachable again');
    });
  }
}

/** BullMQ in native ESM takes client instances; workers need `maxRetriesPerRequest: null`. */
function connection(url: string, health: RedisHealth, what: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  health.watch(redis, what);
  return redis;
}

/**
 * Whether a Redis server keeps what it acknowledged across a crash, from CONFIG GET. Only the append-only file is
 * durable ("Redis persistence", redis.io/docs/latest/operate/oss_and_stack/management/persistence): RDB snapshots
 * are taken every few minutes at best (the default `save 3600 1 300 100 60 10000`), and "you can lose several
 * minutes of data" (measured here: 31 of 60 accepted deliveries after a SIGKILL). With AOF, `appendfsync everysec`
 * (the default) can lose up to a second of writes if the host fails; `always` loses none, at a cost per write.
 */
export type Persistence =
  | { readonly durable: true; readonly fsync: string; readonly loses: string }
  | { readonly durable: false; readonly why: string }
  | { readonly unknown: string };

export async function redisPersistence(url: string): Promise<Persistence> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true, enableOfflineQueue: false });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const [, appendonly] = (await redis.config('GET', 'appendonly')) as string[];
    const [, save] = (await redis.config('GET', 'save')) as string[];
    if (appendonly === 'yes') {
      const [, fsync = 'everysec'] = (await redis.config('GET', 'appendfsync')) as string[];
      const loses =
        fsync === 'always'
          ? 'nothing acknowledged'
          : fsync === 'no'
            ? 'what the operating system had not yet written (about 30 s on Linux)'
            : 'up to one second of deliveries';
      return { durable: true, fsync, loses };
    }
    if ((save ?? '').trim() !== '')
      return {
        durable: false,
        why: `appendonly is "no" and only RDB snapshots are kept (save "${save}"): a crash loses every delivery since the last snapshot, minutes of them; set appendonly yes`,
      };
    return { durable: false, why: 'appendonly is "no" and save is empty: a restart of Redis loses every queued job' };
  } catch (error) {
    return { unknown: `CONFIG GET is not allowed or Redis did not answer (${(error as Error).message})` };
  } finally {
    redis.disconnect();
  }
}

/**
 * How long GitHub asks us to wait after a rate-limited response, or undefined when the error is no rate limit.
 * GitHub's rule ("Rate limits for the REST API", Exceeding the rate limit): a 403 or 429 with `retry-after`: that
 * many seconds; with `x-ratelimit-remaining: 0`: until `x-ratelimit-reset` (UTC epoch seconds); a message that
 * says "secondary rate limit" with neither header: at least one minute.
 */
export function rateLimitWaitMs(error: unknown, now = Date.now()): number | undefined {
  const status = (error as { status?: number }).status;
  const headers = ((error as { response?: { headers?: Record<string, string | undefined> } }).response?.headers ??
    {}) as Record<string, string | undefined>;
  if (status !== 403 && status !== 429) return undefined;
  const retryAfter = Number(headers['retry-after']);
  if (headers['retry-after'] && Number.isFinite(retryAfter)) return Math.max(0, retryAfter) * 1000;
  if (headers['x-ratelimit-remaining'] === '0' && headers['x-ratelimit-reset'])
    return Math.max(0, Number(headers['x-ratelimit-reset']) * 1000 - now);
  const message = String((error as Error).message ?? '');
  if (/secondary rate limit|rate limit exceeded/i.test(message) || status === 429) return 60_000;
  return undefined;
}

export class DurableFanout implements Fanout {
  readonly queue: Queue<FanoutJob>;
  private worker?: Worker<FanoutJob>;

  private readonly health: RedisHealth;

  constructor(private readonly options: DurableOptions) {
    this.health = new RedisHealth(options.log);
    this.queue = new Queue<FanoutJob>(QUEUE_NAME, { connection: connection(options.redisUrl, this.health, 'queue') });
    this.health.watch(this.queue as never, 'queue');
  }

  /**
   * Store a webhook delivery for the workers; resolves once Redis holds it (then the server answers 202), and
   * rejects after STORE_DEADLINE_MS (the server answers 503, GitHub records a failed delivery, and the redelivery
   * scan asks for it again): GitHub waits 10 s for an answer, and ioredis would hold the command until Redis is back.
   */
  async store(delivery: { readonly id: string; readonly name: string; readonly payload: unknown }): Promise<void> {
    const installationId = (delivery.payload as { installation?: { id?: number } }).installation?.id ?? 0;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not store the delivery within ${STORE_DEADLINE_MS / 1000} s`)),
        STORE_DEADLINE_MS,
      );
    });
    try {
      await Promise.race([this.add({ kind: 'delivery', installationId, ...delivery }), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Queue a job; a job with the same key that is still waiting, delayed or running is not added twice (false). A
   * finished job with the key (BullMQ keeps completed jobs an hour and failed ones a day, and silently ignores an
   * add with a stored id) is removed first: the same work asked for again is done again, and the answer is true.
   * So a baseline that goes A → B → A (a force-push back to A's commit) re-checks under A a second time.
   */
  async add(job: FanoutJob, _github?: GitHub, options: AddOptions = {}): Promise<boolean> {
    const jobId = jobKey(job).replace(/:/g, '_');
    const existing = await this.queue.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
      await existing.remove().catch(() => undefined);
    }
    const added = await this.queue.add(job.kind, job, {
      jobId,
      ...(options.delayMs && options.delayMs > 0 ? { delay: Math.ceil(options.delayMs) } : {}),
      attempts: 5,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: { age: 3600, count: 10_000 },
      removeOnFail: { age: 24 * 3600 },
    });
    // Only when the job stored under the id is the one just added was it queued (another producer may have won).
    const stored = await this.queue.getJob(jobId);
    return added.id === jobId && stored !== undefined && stored.timestamp === added.timestamp;
  }

  /** Resolves when no job is waiting, delayed or running. */
  async idle(): Promise<void> {
    for (;;) {
      const counts = await this.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if (Object.values(counts).every((count) => count === 0)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Run jobs in this process (every replica both produces and works). */
  start(probot: Probot, run: JobRunner, log: Logger): void {
    const worker = new Worker<FanoutJob>(
      QUEUE_NAME,
      async (job: Job<FanoutJob>) => {
        // A stored delivery is handed to Probot, which authenticates its own handlers.
        const github = (
          job.data.kind === 'delivery' ? undefined : await probot.auth(job.data.installationId)
        ) as GitHub;
        try {
          await run(github, job.data);
        } catch (error) {
          const wait = rateLimitWaitMs(error);
          if (wait !== undefined) {
            // Pause the queue until GitHub's limit resets; the job is retried without losing an attempt.
            log.warn({ job: job.id, waitMs: wait }, 'GitHub rate limit: pausing the fan-out queue');
            await worker.rateLimit(wait);
            throw Worker.RateLimitError();
          }
          throw error;
        }
      },
      {
        connection: connection(this.options.redisUrl, this.health, 'worker'),
        concurrency: this.options.concurrency ?? 4,
        lockDuration: this.options.lockDurationMs ?? 30_000,
        stalledInterval: this.options.stalledIntervalMs ?? 30_000,
        maxStalledCount: 3,
      },
    );
    worker.on('failed', (job, error) =>
      log.warn({ job: job?.id, attempts: job?.attemptsMade, err: { message: error.message } }, 'fan-out job failed'),
    );
    this.health.watch(worker as never, 'worker');
    this.worker = worker;
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }
}
