#!/usr/bin/env node
import { run } from '../dist/src/cli/main.js';

process.exitCode = run(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  color: process.stdout.isTTY === true && !process.env.NO_COLOR,
});
