/** The `cuda-gatekeeper` command's process: arguments, standard streams, colour on a terminal unless NO_COLOR. */
import { run } from './main.js';

process.exitCode = run(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  // no-color.org: NO_COLOR set to anything but the empty string turns colour off.
  color: process.stdout.isTTY === true && !process.env.NO_COLOR,
});
