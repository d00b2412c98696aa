/**
 * Durable fan-out on Redis (BullMQ), used when REDIS_URL is set. Several App replicas share one queue:
 * jobs survive restarts and crashes (a job whose worker died is picked up again once its lock expires),
 * retries back off exponentially, and jobs are keyed (installation, repository, head commit, baseline
 * commit) so duplicates collapse. A re-run of a job is harmless: checkPull updates the commit's existing
 * check run instead of creating another.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Probot } from 'probot';
import { checkPull, type AppDeps } from './handlers.js';
import type { GitHub, Logger, PullTarget } from './types.js';

export const QUEUE_NAME = 'cuda-gatekeeper';

export interface CheckJob {
  readonly target: PullTarget;
  readonly deliveryId: string;
  readonly skipUnchanged: boolean;
}

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

export class DurableFanout {
  readonly queue: Queue<CheckJob>;
  private worker?: Worker<CheckJob>;

  constructor(private readonly options: DurableOptions) {
    this.queue = new Queue<CheckJob>(QUEUE_NAME, { connection: connection(options.redisUrl) });
  }

  /** Queue a pull-request check; a job with the same key that is still waiting or running is not added twice. */
  async addCheck(key: string, job: CheckJob): Promise<void> {
    await this.queue.add('check-pull', job, { jobId: key.replace(/:/g, '_'), attempts: 5, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: { age: 3600, count: 10_000 }, removeOnFail: { age: 24 * 3600 } });
  }

  /** Run jobs in this process (every replica both produces and works). */
  startWorker(probot: Probot, deps: AppDeps, log: Logger): Worker<CheckJob> {
    this.worker = new Worker<CheckJob>(
      QUEUE_NAME,
      async (job: Job<CheckJob>) => {
        const github = (await probot.auth(job.data.target.installationId)) as GitHub;
        await checkPull(github, job.data.target, deps, log, job.data.deliveryId, { skipUnchanged: job.data.skipUnchanged, throwOnFailure: true });
      },
      {
        connection: connection(this.options.redisUrl),
        concurrency: this.options.concurrency ?? 4,
        lockDuration: this.options.lockDurationMs ?? 30_000,
        stalledInterval: this.options.stalledIntervalMs ?? 30_000,
        maxStalledCount: 3,
      },
    );
    this.worker.on('failed', (job, error) => log.warn({ job: job?.id, attempts: job?.attemptsMade, err: { message: error.message } }, 'fan-out job failed'));
    return this.worker;
  }

  async close(): Promise<void> {
    await this.worker?.close();
    await this.queue.close();
  }
}
