/** A worker thread that runs gate jobs (see gate-pool.ts): one message in, one answer out. */
import { parentPort } from 'node:worker_threads';
import { runGateJob, type GateJob } from './gate-job.js';

parentPort!.on('message', ({ id, job }: { id: number; job: GateJob }) => {
  try {
    parentPort!.postMessage({ id, report: runGateJob(job) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
