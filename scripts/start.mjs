// `npm start`: the GitHub App's server (src/main.ts). From a fresh clone `dist/` does not exist, so the server is
// compiled first (tsc, about 20 s once); later starts reuse the build unless a source file is newer than it.
// The container image runs `node dist/src/main.js` directly (its build step compiled it).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'src', 'main.js');

/** The newest modification time of the TypeScript sources the server is compiled from. */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') || entry.name.endsWith('.json'))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const built = existsSync(entry) ? statSync(entry).mtimeMs : 0;
const sources = Math.max(newestSource(join(root, 'src')), newestSource(join(root, 'rules')));
if (built < sources) {
  process.stderr.write(
    built
      ? 'cuda-gatekeeper: sources changed since the last build; compiling…\n'
      : 'cuda-gatekeeper: compiling the server (first start)…\n',
  );
  const tsc = spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')],
    {
      stdio: 'inherit',
    },
  );
  if (tsc.status !== 0) {
    process.stderr.write(
      existsSync(join(root, 'node_modules', 'typescript'))
        ? 'cuda-gatekeeper: the build failed (see above)\n'
        : 'cuda-gatekeeper: TypeScript is not installed: run `npm ci` first\n',
    );
    process.exit(1);
  }
}
await import(pathToFileURL(entry).href);
