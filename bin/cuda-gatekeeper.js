#!/usr/bin/env node
// The cuda-gatekeeper command: the CLI bundled into one file (bundle/cli.mjs, built by `npm run bundle` from
// src/cli/bin.ts and committed), so an install from a tarball, npx or a pre-commit hook needs no build step.
import '../bundle/cli.mjs';
