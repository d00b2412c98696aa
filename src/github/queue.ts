/**
 * The in-process fan-out queue: bounded concurrency, and jobs keyed by what they do (`jobKey`) so duplicates
 * collapse while one is queued or running. Webhook handlers enqueue and return; jobs run once the App has started
 * the queue; `idle()` lets tests wait.
 */
import type { Probot } from 'probot';
import { jobKey, type AddOptions, type Fanout, type FanoutJob, type JobRunner } from './jobs.js';
import type { GitHub, Logger } from './types.js';

export class JobQueue implements Fanout {
  private readonly pending: { key: string; job: FanoutJob; github: GitHub }[] = [];
  private readonly keys = new Set<string>();
  private running = 0;
  /** Jobs waiting for their delay (GitHub's rate limit) before they are queued. */
  private readonly delayed = new Map<string, NodeJS.Timeout>();
  private readonly waiters: (() => void)[] = [];

  private worker?: { readonly run: JobRunner; readonly log: Logger };

  constructor(private readonly concurrency = 4) {}

  start(_probot: Probot, run: JobRunner, log: Logger): void {
    this.worker = { run, log };
    this.pump();
  }

  async add(job: FanoutJob, github: GitHub, options: AddOptions = {}): Promise<boolean> {
    const key = jobKey(job);
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    if (options.delayMs && options.delayMs > 0) {
      const timer = setTimeout(() => {
        this.delayed.delete(key);
        this.pending.push({ key, job, github });
        this.pump();
      }, options.delayMs);
      // A delayed job does not keep the process alive; a drain reports it (`delayedCount`).
      timer.unref();
      this.delayed.set(key, timer);
      return true;
    }
    this.pending.push({ key, job, github });
    this.pump();
    return true;
  }

  /** Jobs queued or running (delayed ones are not: they are GitHub's wait, not work in hand). */
  get size(): number {
    return this.pending.length + this.running;
  }

  /** Jobs waiting out a delay. */
  get delayedCount(): number {
    return this.delayed.size;
  }

  idle(): Promise<void> {
    return this.size === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  private pump(): void {
    const worker = this.worker;
    while (worker && this.running < this.concurrency && this.pending.length > 0) {
      const { key, job, github } = this.pending.shift()!;
      this.running++;
      worker
        .run(github, job)
        .catch((error: unknown) =>
          worker.log.error({ job: key, err: { message: (error as Error).message } }, `${job.kind} job failed`),
        )
        .finally(() => {
          this.running--;
          this.keys.delete(key);
          this.pump();
          if (this.size === 0) for (const resolve of this.waiters.splice(0)) resolve();
        });
    }
  }
}
