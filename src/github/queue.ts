/**
 * The in-process fan-out queue: bounded concurrency, and jobs keyed by what they do so duplicates collapse while
 * one is queued or running. Webhook handlers enqueue and return; `idle()` lets tests wait.
 */
import type { Fanout, FanoutJob, JobRunner } from './jobs.js';
import type { GitHub } from './types.js';

export class JobQueue implements Fanout {
  private readonly pending: { key: string; job: FanoutJob; github: GitHub }[] = [];
  private readonly keys = new Set<string>();
  private running = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly runner: JobRunner,
    private readonly onError: (key: string, job: FanoutJob, error: unknown) => void,
    private readonly concurrency = 4,
  ) {}

  async add(key: string, job: FanoutJob, github: GitHub): Promise<boolean> {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    this.pending.push({ key, job, github });
    this.pump();
    return true;
  }

  get size(): number {
    return this.pending.length + this.running;
  }

  idle(): Promise<void> {
    return this.size === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.pending.length > 0) {
      const { key, job, github } = this.pending.shift()!;
      this.running++;
      this.runner(github, job)
        .catch((error: unknown) => this.onError(key, job, error))
        .finally(() => {
          this.running--;
          this.keys.delete(key);
          this.pump();
          if (this.size === 0) for (const resolve of this.waiters.splice(0)) resolve();
        });
    }
  }
}
