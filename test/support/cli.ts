/** The command line, for tests: in this process with its output captured, or as a process of its own. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { run, type Io } from '../../src/cli/main.js';

export interface CliResult {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** The CLI's bin, as npm installs it: for a shell command line (`sh -c`, script(1)). */
export const CLI_BIN = join(import.meta.dirname, '..', '..', 'bin', 'cuda-gatekeeper.js');

/**
 * `cuda-gatekeeper <argv>` in `cwd`, run in this process (`run` of src/cli/main.ts), with `stdin` as standard input
 * and, with `threadScript`, worker threads for a large tree.
 */
export function runCli(
  cwd: string,
  argv: readonly string[],
  stdin?: string,
  io: Pick<Io, 'threadScript'> = {},
): CliResult {
  let out = '';
  let err = '';
  const code = run([...argv], {
    cwd,
    out: (text) => (out += text),
    err: (text) => (err += text),
    ...(stdin !== undefined ? { stdin: () => stdin } : {}),
    ...io,
  });
  return { code, out, err };
}

/** `cuda-gatekeeper <argv>` in `cwd`, in this process. */
export function cli(cwd: string, ...argv: string[]): CliResult {
  return runCli(cwd, argv);
}

/** A process's exit status and output. */
export interface ProcessResult {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/**
 * `bin/cuda-gatekeeper.js <args>` as a process of its own (what a shell runs): in `cwd` (default: this one), with
 * `input` on file descriptor 0 and `env` as its environment (default: this process's). A process that cannot start,
 * is killed (past `timeout` ms) or dies of a signal throws: it never stands as a result a test could compare.
 */
export function binProcess(
  args: readonly string[],
  {
    timeout = 20_000,
    ...options
  }: {
    readonly cwd?: string;
    readonly input?: string;
    readonly env?: NodeJS.ProcessEnv;
    readonly timeout?: number;
  } = {},
): ProcessResult {
  const result = spawnSync(process.execPath, [CLI_BIN, ...args], {
    ...options,
    encoding: 'utf8',
    timeout,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error || result.status === null)
    throw new Error(
      `cuda-gatekeeper ${args.join(' ')} did not finish: ${result.error?.message ?? `killed by ${result.signal}`}`,
    );
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** `bin/cuda-gatekeeper.js <args>` in `cwd`, as a process of its own. */
export function cliProcess(cwd: string, ...args: string[]): ProcessResult {
  return binProcess(args, { cwd });
}
