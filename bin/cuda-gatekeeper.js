#!/usr/bin/env node
// The cuda-gatekeeper command: the CLI bundled into one file (bundle/cli.mjs, built by `npm run bundle` from
// src/cli/bin.ts and committed), so an install from a tarball, npx or a pre-commit hook needs no build step.
import module from 'node:module';

// From Node 22.1, keep V8's compiled code of the bundle between runs, as TypeScript's tsc does (in the system's
// temporary folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a run starts about 30 ms sooner. Node 20 has no such
// cache, and then this does nothing. The bundle is imported after it, so that its code is the code cached.
module.enableCompileCache?.();
await import('../bundle/cli.mjs');
