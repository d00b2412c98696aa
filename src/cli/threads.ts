/**
 * `check` on every core: a large tree is cut into parts, directory by directory in walk order, one per core; the
 * main thread checks the first part while worker threads check the others, and the reports are merged
 * (Checker.merge). The result is the one-thread check's: files joined by includes are checked together, so when a
 * part read a file another part holds (`-r ../common/requirements.txt`), or two parts read the same file, those
 * parts are joined and checked again as one, until no part reaches into another (test/cli/threads.test.ts compares
 * both on the corpus).
 *
 * The CLI is synchronous: the main thread waits for the workers with Atomics.wait on a shared flag per worker and
 * takes their answers with receiveMessageOnPort (nodejs.org/api/worker_threads.html), so no event loop turn is
 * needed. A worker is the CLI's own script started again (bin.ts hands over to threadMain there).
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import {
  isMainThread,
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  workerData,
  type MessagePort,
} from 'node:worker_threads';
import { dirname } from '../analysis/paths.js';
import { Checker } from '../gate.js';
import type { Listed, SourceFile } from '../reader.js';
import { UnionFind } from '../util/collections.js';
import { checkTree, type TreeJob, type TreeResult } from './check-tree.js';
import type { Skipped } from './discover.js';

/** Trees smaller than this are checked on one thread: starting a worker (≈ 0.2 s to load the CLI) costs more. */
export const THREAD_MIN_FILES = 1500;
/**
 * Fewer cores than this: one thread. One check thread already keeps about 1.3 cores busy (V8 marks and sweeps on
 * helper threads), so on two cores a second check thread only competes with them (docs/performance.md).
 */
export const THREAD_MIN_CORES = 4;
/** The longest the main thread waits for a worker to start its part (a script that fails to load never does). */
const START_TIMEOUT_MS = 10_000;
/** The longest the main thread waits for a started worker's answer (one that crashed never answers). */
const WORKER_TIMEOUT_MS = 30 * 60 * 1000;
/** The start flag's value when the worker's script loaded, or failed to, without starting its part. */
const NOT_STARTED = 2;
/**
 * A worker's first code (CommonJS, as `eval` workers run): load the CLI's script, whose threadMain starts the part
 * while it loads. If the load ends, or fails, and the part was not started, say so at once (the start flag and a
 * message), so the main thread does not wait START_TIMEOUT_MS for a worker that will never start.
 */
const START = `
const { workerData } = require('node:worker_threads');
const thread = workerData.cudaGatekeeperThread;
const flag = new Int32Array(thread.done);
const notStarted = (why) => {
  if (Atomics.compareExchange(flag, 1, 0, ${NOT_STARTED}) !== 0) return;
  thread.port.postMessage({ error: why });
  Atomics.notify(flag, 1);
};
import(workerData.cudaGatekeeperScript).then(
  () => notStarted('its script ended without starting a check'),
  (error) => notStarted('its script could not be loaded: ' + (error && error.message ? error.message : String(error))),
);
`;

/**
 * How many threads a check of `files` files uses: one per core from four cores and 1,500 files; CUDA_GATEKEEPER_THREADS
 * sets it.
 */
export function threadsFor(files: number, env: NodeJS.ProcessEnv = process.env): number {
  const asked = env.CUDA_GATEKEEPER_THREADS === undefined ? undefined : Number(env.CUDA_GATEKEEPER_THREADS);
  if (asked !== undefined && Number.isInteger(asked) && asked >= 1) return Math.max(1, Math.min(asked, 64, files));
  const cores = availableParallelism();
  if (files < THREAD_MIN_FILES || cores < THREAD_MIN_CORES) return 1;
  return Math.min(cores, 64);
}

interface ThreadMessage {
  readonly result?: TreeResult;
  readonly error?: string;
}

interface ThreadData {
  readonly job: TreeJob;
  readonly port: MessagePort;
  readonly done: SharedArrayBuffer;
}

/** In a worker started by checkOnThreads: check its job, answer, and return true; elsewhere return false. */
export function threadMain(): boolean {
  const data = (workerData as { cudaGatekeeperThread?: ThreadData } | null)?.cudaGatekeeperThread;
  if (isMainThread || !data) return false;
  const flag = new Int32Array(data.done);
  Atomics.store(flag, 1, 1);
  Atomics.notify(flag, 1);
  try {
    data.port.postMessage({ result: checkTree(data.job) } satisfies ThreadMessage);
  } catch (error) {
    data.port.postMessage({
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    } satisfies ThreadMessage);
  } finally {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    data.port.close();
  }
  return true;
}

/** Run the jobs: the first on this thread, the rest on workers running `script`; results in the jobs' order. */
function runJobs(script: string, jobs: readonly TreeJob[]): TreeResult[] {
  const started = jobs.slice(1).map((job) => {
    const { port1, port2 } = new MessageChannel();
    // [0]: answered, [1]: started.
    const done = new SharedArrayBuffer(8);
    const worker = new Worker(START, {
      eval: true,
      workerData: {
        cudaGatekeeperThread: { job, port: port2, done } satisfies ThreadData,
        cudaGatekeeperScript: pathToFileURL(script).href,
      },
      transferList: [port2],
      // Young generations as large as bin/cuda-gatekeeper.js gives the CLI's own thread: semi-spaces of 32 MB copy
      // fewer survivors of a large file's parse (docs/performance.md).
      resourceLimits: { maxYoungGenerationSizeMb: 96 },
    });
    worker.unref();
    return { port: port1, flag: new Int32Array(done) };
  });
  const first = jobs.length > 0 ? [checkTree(jobs[0]!)] : [];
  const rest = started.map(({ port, flag }) => {
    if (Atomics.wait(flag, 1, 0, START_TIMEOUT_MS) === 'timed-out')
      throw new Error('a worker thread did not start within 10 seconds');
    if (Atomics.load(flag, 1) === NOT_STARTED) {
      const message = receiveMessageOnPort(port)?.message as ThreadMessage | undefined;
      port.close();
      throw new Error(`a worker thread did not start: ${message?.error ?? 'it gave no reason'}`);
    }
    if (Atomics.wait(flag, 0, 0, WORKER_TIMEOUT_MS) === 'timed-out')
      throw new Error('a worker thread did not answer within 30 minutes');
    const message = receiveMessageOnPort(port)?.message as ThreadMessage | undefined;
    port.close();
    if (!message?.result) throw new Error(`a worker thread failed: ${message?.error ?? 'it answered nothing'}`);
    return message.result;
  });
  return [...first, ...rest];
}

/** The walk's files cut into `count` parts of about equal size, each ending where a directory ends. */
export function cutIntoParts(files: readonly Listed[], count: number): Listed[][] {
  const parts: Listed[][] = [];
  let at = 0;
  for (let part = 0; part < count && at < files.length; part++) {
    let end = part === count - 1 ? files.length : Math.max(at + 1, Math.round(((part + 1) * files.length) / count));
    while (end < files.length && dirname(files[end]!.path) === dirname(files[end - 1]!.path)) end++;
    parts.push(files.slice(at, end));
    at = end;
  }
  return parts;
}

/**
 * Check `files` on `threads` threads, with the one-thread check's result. `job` gives everything but the list.
 */
export function checkOnThreads(
  script: string,
  files: readonly Listed[],
  threads: number,
  job: Omit<TreeJob, 'list'>,
): { report: TreeResult['report']; sources: SourceFile[]; skipped: Skipped[]; parsedAgain: number } {
  let parts = cutIntoParts(files, threads);
  let results = runJobs(
    script,
    parts.map((list) => ({ ...job, list })),
  );
  for (;;) {
    const joined = joinedParts(parts, results);
    if (joined.length === parts.length) break;
    // Parts that reached into each other are checked again as one; the others keep their results.
    const again = joined.filter((members) => members.length > 1);
    const fresh = runJobs(
      script,
      again.map((members) => ({ ...job, list: members.flatMap((index) => parts[index]!) })),
    );
    const next: { part: Listed[]; result: TreeResult }[] = joined.map((members) =>
      members.length > 1
        ? { part: members.flatMap((index) => parts[index]!), result: fresh[again.indexOf(members)]! }
        : { part: parts[members[0]!]!, result: results[members[0]!]! },
    );
    parts = next.map((entry) => entry.part);
    results = next.map((entry) => entry.result);
  }
  // Sources as one thread reads them: the files given, in walk order, then those includes led to.
  const order = new Map(files.map((file, i) => [file.path, i]));
  const sources = results.flatMap((result) => result.sources);
  const given = sources
    .filter((source) => order.has(source.path))
    .sort((a, b) => order.get(a.path)! - order.get(b.path)!);
  const led = sources.filter((source) => !order.has(source.path));
  return {
    report: Checker.merge(results.map((result) => result.report)),
    sources: [...given, ...led],
    skipped: results.flatMap((result) => result.skipped),
    parsedAgain: results.reduce((sum, result) => sum + result.parsedAgain, 0),
  };
}

/**
 * The parts that must be checked together, as lists of part indices in order: a part that read (or tried to read)
 * a file of another part's list, or a file another part read too, joins it.
 */
function joinedParts(parts: readonly (readonly Listed[])[], results: readonly TreeResult[]): number[][] {
  const owner = new Map<string, number>();
  parts.forEach((part, index) => part.forEach((file) => owner.set(file.path, index)));
  const union = new UnionFind(parts.length);
  const readBy = new Map<string, number>();
  results.forEach((result, index) => {
    for (const path of [...result.sources.map((source) => source.path), ...result.skipped.map((skip) => skip.path)]) {
      const listedIn = owner.get(path);
      if (listedIn !== undefined && listedIn !== index) union.join(index, listedIn);
      const other = readBy.get(path);
      if (other !== undefined && other !== index) union.join(index, other);
      readBy.set(path, index);
    }
  });
  const groups = new Map<number, number[]>();
  for (let index = 0; index < parts.length; index++) {
    const root = union.find(index);
    const group = groups.get(root) ?? [];
    group.push(index);
    groups.set(root, group);
  }
  return [...groups.values()];
}
