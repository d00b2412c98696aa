/**
 * Gates off the request path: a few worker threads run the pull requests' gates, so a heavy one never blocks the
 * server's event loop (webhooks must be answered within 10 s; /healthz stays quick) and one installation cannot
 * stall another. Each gate has a time budget: past it, its worker is stopped and replaced, and the caller gets a
 * GateBudgetError to report (the check says the files could not be checked in time). And a size budget: files
 * over MAX_GATE_BYTES in all are not gated at all.
 */
import { Worker } from 'node:worker_threads';
import type { Report } from '../finding.js';
import type { GateJob } from './gate-job.js';

export const MAX_GATE_BYTES = 8 * 1024 * 1024;

export class GateBudgetError extends Error {}

interface Pending {
  readonly job: GateJob;
  readonly resolve: (report: Report) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  busy?: { id: number; pending: Pending; timer: NodeJS.Timeout };
}

export class GatePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private next = 0;
  private closed = false;

  constructor(
    private readonly size = 2,
    private readonly timeoutMs = 30_000,
  ) {}

  run(job: GateJob): Promise<Report> {
    const bytes = job.sources.reduce((sum, source) => sum + Buffer.byteLength(source.text), 0);
    if (bytes > MAX_GATE_BYTES)
      return Promise.reject(
        new GateBudgetError(
          `the files to check are ${Math.round(bytes / 1024 / 1024)} MiB together, more than the ${MAX_GATE_BYTES / 1024 / 1024} MiB a check reads`,
        ),
      );
    if (this.closed) return Promise.reject(new Error('the gate pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.pump();
    });
  }

  /** Stop the workers (jobs still queued are rejected). */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error('the gate pool is closed'));
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((candidate) => !candidate.busy);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const pending = this.queue.shift()!;
      const id = this.next++;
      const timer = setTimeout(() => {
        // Over budget: the thread cannot be interrupted, so it is stopped and replaced.
        this.slots.splice(this.slots.indexOf(slot!), 1);
        void slot!.worker.terminate();
        pending.reject(new GateBudgetError(`the check did not finish within ${Math.round(this.timeoutMs / 1000)} s`));
        this.pump();
      }, this.timeoutMs);
      slot.busy = { id, pending, timer };
      slot.worker.postMessage({ id, job: pending.job });
    }
  }

  private spawn(): Slot {
    // Built, the worker is gate-worker.js; run from source (tests, tsx), the .ts file is loaded through tsx, which a
    // worker thread has to register for itself.
    const script = new URL(`./gate-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
    const worker = script.pathname.endsWith('.ts')
      ? new Worker(
          new URL(
            `data:text/javascript,${encodeURIComponent(`import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); await import(${JSON.stringify(script.href)});`)}`,
          ),
        )
      : new Worker(script);
    const slot: Slot = { worker };
    worker.on('message', (message: { id: number; report?: Report; error?: string }) => {
      const busy = slot.busy;
      if (!busy || busy.id !== message.id) return;
      clearTimeout(busy.timer);
      slot.busy = undefined;
      if (message.report) busy.pending.resolve(message.report);
      else busy.pending.reject(new Error(message.error ?? 'the gate failed'));
      this.pump();
    });
    worker.on('error', (error) => {
      const busy = slot.busy;
      const at = this.slots.indexOf(slot);
      if (at >= 0) this.slots.splice(at, 1);
      if (busy) {
        clearTimeout(busy.timer);
        busy.pending.reject(error);
      }
      this.pump();
    });
    // Idle workers do not keep the process alive.
    worker.unref();
    this.slots.push(slot);
    return slot;
  }
}
