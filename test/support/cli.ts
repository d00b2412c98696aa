/** The command line, for tests: in this process with its output captured, or as a process of its own. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { run } from '../../src/cli/main.js';

export interface CliResult {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'cuda-gatekeeper.js');

/**
 * `cuda-gatekeeper <argv>` in `cwd`, run in this process (`run` of src/cli/main.ts), with `stdin` as standard input.
 */
export function runCli(cwd: string, argv: readonly string[], stdin?: string): CliResult {
  let out = '';
  let err = '';
  const code = run([...argv], {
    cwd,
    out: (text) => (out += text),
    err: (text) => (err += text),
    ...(stdin !== undefined ? { stdin: () => stdin } : {}),
  });
  return { code, out, err };
}

/** `cuda-gatekeeper <argv>` in `cwd`, in this process. */
export function cli(cwd: string, ...argv: string[]): CliResult {
  return runCli(cwd, argv);
}

/** `bin/cuda-gatekeeper.js <args>` as a process of its own (what a shell runs); `code` is null when it was killed. */
export function cliProcess(cwd: string, ...args: string[]): { code: number | null; out: string; err: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: 20_000 });
  return { code: result.status, out: result.stdout, err: result.stderr };
}
