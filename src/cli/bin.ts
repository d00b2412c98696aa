/** The `cuda-gatekeeper` command's process: arguments, standard streams, and colour (see colorWanted). */
import { isatty } from 'node:tty';
import { fileURLToPath } from 'node:url';
import { workerData, type MessagePort } from 'node:worker_threads';
import { colorWanted, runAsync } from './main.js';
import { threadMain } from './threads.js';

// A worker thread of a large check (threads.ts) runs its part and answers; the process is the CLI otherwise.
if (!threadMain()) cli();

function cli(): void {
  // bin/cuda-gatekeeper.js runs the CLI on a worker thread and gives it one port for both standard streams: each
  // write is [descriptor, text], written in order by the main thread, so a progress line cleared on standard error
  // stays before the result on standard output (a worker's own process.stdout and process.stderr are two channels).
  const streams = (workerData as { cudaGatekeeperStreams?: MessagePort } | null)?.cudaGatekeeperStreams;
  if (!streams) {
    // A reader that stops early (`cuda-gatekeeper rules | head`) closes the pipe: stop quietly, as Unix tools do,
    // with the status the command had. (Behind bin/cuda-gatekeeper.js, its main thread does this.)
    for (const stream of [process.stdout, process.stderr]) {
      stream.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
        throw error;
      });
    }
  }

  void runAsync(process.argv.slice(2), {
    cwd: process.cwd(),
    out: streams ? (text) => streams.postMessage([1, text]) : (text) => process.stdout.write(text),
    err: streams ? (text) => streams.postMessage([2, text]) : (text) => process.stderr.write(text),
    // CUDA_GATEKEEPER_PROGRESS_AFTER_MS: when the progress line starts (tests set 0). Terminals are asked of the
    // descriptors: on a worker thread, process.stdout is a pipe to the main thread whatever descriptor 1 is.
    ...(isatty(2) ? { progress: { afterMs: Number(process.env.CUDA_GATEKEEPER_PROGRESS_AFTER_MS ?? 1000) } } : {}),
    color: colorWanted(process.env, isatty(1)),
    threadScript: fileURLToPath(import.meta.url),
  }).then((status) => (process.exitCode = status));
}
