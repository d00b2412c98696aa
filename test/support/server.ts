/** Start the real App server (src/main.ts, as `npm start` runs it) against a fake GitHub on 127.0.0.1. */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { appEnv, freePort } from './app-env.js';
import { FakeGitHub } from './fake-github.js';

export { freePort, SECRET, sendWebhook } from './app-env.js';
const ROOT = join(import.meta.dirname, '..', '..');

export interface RunningApp {
  readonly process: ChildProcess;
  readonly port: number;
  output(): string;
  rssMb(): number;
  stop(): void;
}

/** The probe's first value that is not undefined, looked for every 50 ms; past `ms`, an error with `describe()`. */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  ms = 20_000,
  describe = () => '',
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function startApp(githubPort: number, extraEnv: Record<string, string> = {}): Promise<RunningApp> {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: appEnv(port, githubPort, extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(
    () => (/listening/i.test(output) ? true : undefined),
    30_000,
    () => output,
  );
  return {
    process: child,
    port,
    output: () => output,
    rssMb: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
    stop: () => void child.kill('SIGTERM'),
  };
}

export interface AppServer {
  readonly fake: FakeGitHub;
  readonly app: RunningApp;
}

/**
 * The spacing of the App's writes against the fake GitHub: GitHub asks for a second between writes (src/github/
 * octokit.ts), the fake for none, and a test that waited real seconds between writes would only be slow.
 */
export const FAKE_PACE_ENV = { GITHUB_WRITE_INTERVAL_MS: '10' };

/**
 * For a test file: a fake GitHub on loopback and the real App server against it (at FAKE_PACE_ENV's pace unless
 * `extraEnv` says otherwise), started once and stopped after.
 */
export function useAppServer(extraEnv: Record<string, string> = {}): AppServer {
  const context = {} as { fake: FakeGitHub; app: RunningApp; github?: Server };
  beforeAll(async () => {
    context.fake = new FakeGitHub();
    const listening = await context.fake.listen();
    context.github = listening.server;
    const env: Record<string, string> = { ...FAKE_PACE_ENV, ...extraEnv };
    context.app = await startApp(listening.port, env);
    // The App scans its failed deliveries a second after it starts (scheduleRedelivery, src/github/redeliver.ts):
    // every test starts after that scan, so none counts its request among those its own deliveries made (a test that
    // ran within that second once saw it: a flake on a fast machine).
    if (env.REDELIVER_INTERVAL_MINUTES !== '0')
      await waitFor(
        () => context.fake.requests.find((request) => request.path === '/app/hook/deliveries'),
        20_000,
        context.app.output,
      );
  }, 40_000);
  afterAll(async () => {
    context.app?.stop();
    await new Promise((resolve) => (context.github ? context.github.close(resolve) : resolve(undefined)));
  });
  return context;
}
