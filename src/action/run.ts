/** The Action's process (bundle/action.mjs): the runner's environment in, the exit status out. */
import { escapeData } from '../render/github.js';
import { action } from './main.js';

action({
  env: process.env,
  cwd: process.env.GITHUB_WORKSPACE || process.cwd(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}).then(
  (status) => (process.exitCode = status),
  (error: unknown) => {
    process.stdout.write(
      `::error::${escapeData(`cuda-gatekeeper failed: ${error instanceof Error ? error.message : String(error)}`)}\n`,
    );
    process.exitCode = 2;
  },
);
