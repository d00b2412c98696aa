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
import type { AddOptions, Fanout, FanoutJob } from './jobs.js';
import type { GitHub, Logger } from './types.js';

export const QUEUE_NAME = 'cuda-gatekeeper';

export interface DurableOptions {
  readonly redisUrl: string;
  readonly concurrency?: number;
  /** How long a job's lock lasts; a crashed worker's job is retried after it expires. */
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
}

/** BullMQ in native ESM takes client instances; workers need `maxRetriesPerRequest: null`. */
function connection(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}

/**
 * How long GitHub asks us to wait after a rate-limited response, or undefined when the error is no rate limit.
 * GitHub's rule ("Rate limits for the REST API", Exceeding the rate limit): a 403 or 429 with `retry-after`: that
 * many seconds; with `x-ratelimit-remaining: 0`: until `x-ratelimit-reset` (UTC epoch seconds); a message that
 * says "secondary rate limit" with neither header: at least one minute.
 */
export function rateLimitWaitMs(error: unknown, now = Date.now()): number | undefined {
  const status = (error as { status?: number }).status;
  const headers = ((error as { response?: { headers?: Record<string, string | undefined> } }).response?.headers ?? {}) as Record<string, string | undefined>;
  if (status !== 403 && status !== 429) return undefined;
  const retryAfter = Number(headers['retry-after']);
  if (headers['retry-after'] && Number.isFinite(retryAfter)) return Math.max(0, retryAfter) * 1000;
  if (headers['x-ratelimit-remaining'] === '0' && headers['x-ratelimit-reset']) return Math.max(0, Number(headers['x-ratelimit-reset']) * 1000 - now);
  const message = String((error as Error).message ?? '');
  if (/secondary rate limit|rate limit exceeded/i.test(message) || status === 429) return 60_000;
  return undefined;
}

export class DurableFanout implements Fanout {
  readonly queue: Queue<FanoutJob>;
  private worker?: Worker<FanoutJob>;

  constructor(private readonly options: DurableOptions) {
    this.queue = new Queue<FanoutJob>(QUEUE_NAME, { connection: connection(options.redisUrl) });
  }

  /**
   * Queue a job; a job with the same key that is still waiting, delayed or running is not added twice (false). A
   * finished job with the key (BullMQ keeps completed jobs an hour and failed ones a day, and silently ignores an
   * add with a stored id) is removed first: the same work asked for again is done again, and the answer is true.
   * So a baseline that goes A → B → A (a force-push back to A's commit) re-checks under A a second time.
   */
  async add(key: string, job: FanoutJob, _github?: GitHub, options: AddOptions = {}): Promise<boolean> {
    const jobId = key.replace(/:/g, '_');
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
  startWorker(probot: Probot, run: (github: GitHub, job: FanoutJob) => Promise<void>, log: Logger): Worker<FanoutJob> {
    const worker = new Worker<FanoutJob>(
      QUEUE_NAME,
      async (job: Job<FanoutJob>) => {
        const github = (await probot.auth(job.data.installationId)) as GitHub;
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
        connection: connection(this.options.redisUrl),
        concurrency: this.options.concurrency ?? 4,
        lockDuration: this.options.lockDurationMs ?? 30_000,
        stalledInterval: this.options.stalledIntervalMs ?? 30_000,
        maxStalledCount: 3,
      },
    );
    worker.on('failed', (job, error) => log.warn({ job: job?.id, attempts: job?.attemptsMade, err: { message: error.message } }, 'fan-out job failed'));
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }
}
