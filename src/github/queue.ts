/**
 * In-process job queue for fan-out work (config previews, organisation re-checks): bounded concurrency, and
 * jobs keyed by what they do (installation, repository, head commit, baseline commit) so duplicates collapse
 * while one is queued or running. Webhook handlers enqueue and return; `idle()` lets tests wait.
 */
export class JobQueue {
  private readonly pending: { key: string; run: () => Promise<void> }[] = [];
  private readonly keys = new Set<string>();
  private running = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly concurrency = 4,
    private readonly onError: (key: string, error: unknown) => void = () => undefined,
  ) {}

  /** Queue a job; returns false when an identical job is already queued or running. */
  add(key: string, run: () => Promise<void>): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    this.pending.push({ key, run });
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
      const job = this.pending.shift()!;
      this.running++;
      job
        .run()
        .catch((error: unknown) => this.onError(job.key, error))
        .finally(() => {
          this.running--;
          this.keys.delete(job.key);
          this.pump();
          if (this.size === 0) for (const resolve of this.waiters.splice(0)) resolve();
        });
    }
  }
}
