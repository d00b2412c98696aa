/** The `cuda-gatekeeper` command's process: arguments, standard streams, and colour (see colorWanted). */
import { colorWanted, run } from './main.js';

// A reader that stops early (`cuda-gatekeeper rules | head`) closes the pipe: stop quietly, as Unix tools do,
// with the status the command had.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = run(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  color: colorWanted(process.env, process.stdout.isTTY === true),
});
