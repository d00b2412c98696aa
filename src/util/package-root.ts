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

/** The bundled baseline.yaml as a host hands it to the pure baseline layer: its text and the package's version. */
export interface BundledBaseline {
  readonly text: string;
  readonly version: string;
}

let bundled: BundledBaseline | undefined;

/** The bundled baseline, read once per process. */
export function bundledBaseline(): BundledBaseline {
  bundled ??= { text: readFileSync(bundledBaselinePath(), 'utf8'), version: packageVersion() };
  return bundled;
}

/** Today's date, UTC (YYYY-MM-DD): the clock a host hands the gate (end-of-life dates, drift). */
export function today(): string {
  return new Date().toISOString().slice(0, 10);
}
