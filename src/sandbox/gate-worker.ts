/** A worker thread that runs gate jobs (see gate-pool.ts): one message in, one answer out. */
import { parentPort } from 'node:worker_threads';
import { runWorkerJob, type WorkerJob } from './gate-job.js';

parentPort!.on('message', ({ id, job }: { id: number; job: WorkerJob }) => {
  try {
    parentPort!.postMessage({ id, result: runWorkerJob(job) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});

// Loaded: the pool's budget for a job starts when it is handed to a thread that is ready, not while one starts.
parentPort!.postMessage({ ready: true });
