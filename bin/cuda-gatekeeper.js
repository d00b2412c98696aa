#!/usr/bin/env node
// The cuda-gatekeeper command: the CLI bundled into one file (bundle/cli.mjs, built by `npm run bundle` from
// src/cli/bin.ts and committed), so an install from a tarball, npx or a pre-commit hook needs no build step.
import module from 'node:module';
import v8 from 'node:v8';
import { isMainThread, MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

// A check allocates its heap's first few hundred megabytes within a second, and V8 sizes a new heap for a web
// page's script. Two sizes fit a check better (docs/performance.md): the old generation starting at 256 MB saves the
// full collections V8 makes while it grows there (about 8 % of a check of 10,000 small files), and young generations
// of up to 96 MB (semi-spaces of 32) copy fewer survivors of a large file's parse (about 8 % of a check of 10,000
// larger ones). V8 reads both when it makes an isolate, and a script's own isolate is made before the script runs:
// so the CLI runs on one worker thread made with them (the young size is the worker's resourceLimits; the old one has
// no such option, and is set as a V8 flag first), and the main thread only starts it and writes what it says. Sizes
// given on the command line or in NODE_OPTIONS are kept; CUDA_GATEKEEPER_MAIN_THREAD=1 runs the CLI on the main
// thread (profiling, debugging).
//
// The worker and the size cost about 60 ms of start (measured: a V8 flag set at run time alone adds 30), which a
// check of a thousand files earns back: so only the commands that read a tree (`check`, `plan`) take the worker,
// and not a check of what is staged or of standard input, which are the pre-commit hook's small checks.
const INITIAL_OLD_SPACE_MB = 256;
const YOUNG_GENERATION_MB = 96;

// From Node 22.1, keep V8's compiled code of the bundle between runs, as TypeScript's tsc does (in the system's
// temporary folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a run starts about 30 ms sooner. Node 20 has no such
// cache, and then this does nothing. The bundle is imported after it, so that its code is the code cached. The
// worker runs this as a script of its own (eval), which starts about 35 ms sooner than this module again.
const BUNDLE = new URL('../bundle/cli.mjs', import.meta.url).href;
const RUN_BUNDLE = `require('node:module').enableCompileCache?.(); import(${JSON.stringify(BUNDLE)});`;

const args = process.argv.slice(2);
const readsTree = (args[0] === 'check' || args[0] === 'plan') && !args.includes('--staged') && !args.includes('-');

if (isMainThread && readsTree && process.env.CUDA_GATEKEEPER_MAIN_THREAD !== '1') {
  const given = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  // V8 reads a flag's dashes and underscores alike.
  if (!/--initial[-_](old[-_]space|heap)[-_]size/.test(given))
    v8.setFlagsFromString(`--initial-old-space-size=${INITIAL_OLD_SPACE_MB}`);
  const young = /--(max[-_]semi[-_]space|semi[-_]space[-_]growth|max[-_]young)/.test(given)
    ? {}
    : { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } };
  // A reader that stops early (`cuda-gatekeeper rules | head`) closes the pipe: stop quietly, as Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  // Both standard streams on one port, in the order written (src/cli/bin.ts).
  const { port1: streams, port2 } = new MessageChannel();
  const write = ([descriptor, text]) => (descriptor === 2 ? process.stderr : process.stdout).write(text);
  streams.on('message', write);
  let failed = false;
  new Worker(RUN_BUNDLE, {
    eval: true,
    argv: args,
    workerData: { cudaGatekeeperStreams: port2 },
    transferList: [port2],
    ...young,
  })
    .on('error', (error) => {
      // The CLI answers every error it expects with a message and status 2; this is one it did not (out of memory).
      failed = true;
      process.stderr.write(`cuda-gatekeeper: stopped: ${error instanceof Error ? error.message : error}\n`);
      process.exitCode = 2;
    })
    .on('exit', (status) => {
      // What the worker wrote and the main thread has not yet taken, then its status.
      for (let message; (message = receiveMessageOnPort(streams)); ) write(message.message);
      streams.close();
      if (!failed) process.exitCode = status;
    });
} else {
  module.enableCompileCache?.();
  await import(BUNDLE);
}
