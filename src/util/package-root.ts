import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed package's root (works from src/ under tsx and from dist/ after a build). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'baseline.yaml'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the cuda-gatekeeper package root');
    dir = parent;
  }
  return dir;
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

export function bundledBaselinePath(): string {
  return join(packageRoot(), 'baseline.yaml');
}
