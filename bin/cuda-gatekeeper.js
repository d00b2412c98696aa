#!/usr/bin/env node
// The cuda-gatekeeper command. The TypeScript sources are compiled to dist/ by `npm run build`
// (also run by `npm ci`/`npm install` through the prepare script).
let cli;
try {
  cli = await import('../dist/src/cli/main.js');
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  process.stderr.write('cuda-gatekeeper: not built yet; run `npm run build` in the cuda-gatekeeper checkout\n');
  process.exit(2);
}

process.exitCode = cli.run(process.argv.slice(2), {
  cwd: process.cwd(),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  color: process.stdout.isTTY === true && !process.env.NO_COLOR,
});
