/**
 * Gates off the request path: a few worker threads run the pull requests' gates, so a heavy one never blocks the
 * server's event loop (webhooks must be answered within 10 s; /healthz stays quick) and one installation cannot
 * stall another. Each gate has a time budget: past it, its worker is stopped and replaced, and the caller gets a
 * GateBudgetError to report (the check says the files could not be checked in time). And a size budget: files
 * over MAX_GATE_BYTES in all are not gated at all.
 */
import { Worker } from 'node:worker_threads';
import type { Report } from '../finding.js';
import type { SnippetRequest, SnippetResult } from '../web/snippet.js';
import { SnippetRefused, type SnippetRunner } from '../web/handler.js';
import { runGateJob, type GateJob, type WorkerJob } from './gate-job.js';

export const MAX_GATE_BYTES = 8 * 1024 * 1024;

export class GateBudgetError extends Error {}

/** A budget as people say it: whole seconds, or milliseconds below one second. */
function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** The pool's queue is full: the work is refused at once (the caller answers 503), never queued without bound. */
export class GateBusyError extends Error {}

interface Pending {
  readonly job: WorkerJob;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly queued: number;
}

interface Slot {
  worker: Worker;
  /** The thread has loaded the engine (its first message). */
  ready: boolean;
  busy?: { id: number; pending: Pending; timer: NodeJS.Timeout };
}

export interface PoolOptions {
  /** Jobs waiting beyond this many are refused (GateBusyError). Default: no bound (the App's own checks). */
  readonly maxQueue?: number;
  /** While this says so, no job of this pool starts (the snippet pool waits for the pull-request gates). */
  readonly yieldTo?: () => boolean;
  /** How long a job may wait to start before it is refused (GateBusyError); default: as long as it takes. */
  readonly maxWaitMs?: number;
}

/** What runs a pull request's gate: the worker threads (GatePool), or the calling thread (InlineGates). */
export interface Gates {
  /** The gate's verified report; rejects with GateBudgetError when the files are over the size or time budget. */
  run(job: GateJob): Promise<Report>;
  /** Whether a gate is running or waiting. */
  readonly busy: boolean;
  close(): Promise<void>;
}

/** Files over MAX_GATE_BYTES in all are not gated at all, on a thread or not. */
function overSize(job: GateJob): GateBudgetError | undefined {
  const bytes = job.sources.reduce((sum, source) => sum + Buffer.byteLength(source.text), 0);
  if (bytes <= MAX_GATE_BYTES) return undefined;
  return new GateBudgetError(
    `the files to check are ${Math.round(bytes / 1024 / 1024)} MiB together, more than the ${MAX_GATE_BYTES / 1024 / 1024} MiB a check reads`,
  );
}

/**
 * The same jobs on the calling thread, under the size budget but without a time budget (nothing can stop a
 * synchronous gate): for tests and one-off tools. The server runs GatePool.
 */
export class InlineGates implements Gates {
  readonly busy = false;

  async run(job: GateJob): Promise<Report> {
    const refused = overSize(job);
    if (refused) throw refused;
    return runGateJob(job);
  }

  async close(): Promise<void> {}
}

export class GatePool implements Gates {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private next = 0;
  private closed = false;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly size = 2,
    private readonly timeoutMs = 30_000,
    private readonly options: PoolOptions = {},
  ) {}

  /** Whether a job is running or waiting. */
  get busy(): boolean {
    return this.queue.length > 0 || this.slots.some((slot) => slot.busy);
  }

  /** A pull request's gate, within the time and size budget. */
  run(job: GateJob): Promise<Report> {
    const refused = overSize(job);
    if (refused) return Promise.reject(refused);
    return this.submit({ kind: 'pull', job }) as Promise<Report>;
  }

  /** A pasted file's check (the self-service page and its API), within this pool's budget. */
  snippet(request: SnippetRequest): Promise<SnippetResult> {
    return this.submit({ kind: 'snippet', request }) as Promise<SnippetResult>;
  }

  private submit(job: WorkerJob): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the gate pool is closed'));
    if (this.options.maxQueue !== undefined && this.queue.length >= this.options.maxQueue)
      return Promise.reject(new GateBusyError(`${this.queue.length} checks are already waiting`));
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject, queued: Date.now() });
      this.pump();
    });
  }

  /** Stop the workers (jobs still queued are rejected). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    for (const pending of this.queue.splice(0)) pending.reject(new Error('the gate pool is closed'));
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }

  private pump(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    const { maxWaitMs, yieldTo } = this.options;
    if (maxWaitMs !== undefined) {
      const now = Date.now();
      for (const pending of this.queue.filter((candidate) => now - candidate.queued > maxWaitMs)) {
        this.queue.splice(this.queue.indexOf(pending), 1);
        pending.reject(new GateBusyError(`the check waited ${duration(maxWaitMs)} for a free thread`));
      }
    }
    if (this.queue.length > 0 && yieldTo?.()) {
      // Someone else's work goes first: look again shortly.
      this.retry = setTimeout(() => this.pump(), 50);
      this.retry.unref();
      return;
    }
    while (this.queue.length > 0) {
      const slot = this.slots.find((candidate) => candidate.ready && !candidate.busy);
      if (!slot) {
        // A thread still starting takes the next job when it is ready; start another if more wait than start.
        const starting = this.slots.filter((candidate) => !candidate.ready).length;
        if (this.slots.length < this.size && starting < this.queue.length) this.spawn();
        return;
      }
      const pending = this.queue.shift()!;
      const id = this.next++;
      const timer = setTimeout(() => {
        // Over budget: the thread cannot be interrupted, so it is stopped and replaced.
        this.slots.splice(this.slots.indexOf(slot), 1);
        void slot.worker.terminate();
        pending.reject(new GateBudgetError(`the check did not finish within ${duration(this.timeoutMs)}`));
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
    const slot: Slot = { worker, ready: false };
    worker.on('message', (message: { id?: number; ready?: boolean; result?: unknown; error?: string }) => {
      if (message.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      const busy = slot.busy;
      if (!busy || busy.id !== message.id) return;
      clearTimeout(busy.timer);
      slot.busy = undefined;
      if (message.result !== undefined) busy.pending.resolve(message.result);
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

/**
 * The self-service page's and API's checks on a pool of their own: past its budget the request fails (422), not the
 * server; with its queue full, or while it waits too long, it is refused with 503 and Retry-After.
 */
export function snippetRunner(pool: GatePool): SnippetRunner {
  return async (request) => {
    try {
      return await pool.snippet(request);
    } catch (error) {
      if (error instanceof GateBudgetError)
        throw new SnippetRefused(
          422,
          `${error.message}: this file is too much for the page; check it with the command line`,
        );
      if (error instanceof GateBusyError)
        throw new SnippetRefused(503, `the server is busy (${error.message}); try again in a few seconds`);
      throw error;
    }
  };
}
