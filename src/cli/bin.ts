/** The `cuda-gatekeeper` command's process: arguments, standard streams, and colour (see colorWanted). */
import { fileURLToPath } from 'node:url';
import { colorWanted, runAsync } from './main.js';
import { threadMain } from './threads.js';

// A worker thread of a large check (threads.ts) runs its part and answers; the process is the CLI otherwise.
if (!threadMain()) cli();

function cli(): void {
  // A reader that stops early (`cuda-gatekeeper rules | head`) closes the pipe: stop quietly, as Unix tools do,
  // with the status the command had.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }

  void runAsync(process.argv.slice(2), {
    cwd: process.cwd(),
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    // CUDA_GATEKEEPER_PROGRESS_AFTER_MS: when the progress line starts (tests set 0).
    ...(process.stderr.isTTY === true
      ? { progress: { afterMs: Number(process.env.CUDA_GATEKEEPER_PROGRESS_AFTER_MS ?? 1000) } }
      : {}),
    color: colorWanted(process.env, process.stdout.isTTY === true),
    threadScript: fileURLToPath(import.meta.url),
  }).then((status) => (process.exitCode = status));
}
