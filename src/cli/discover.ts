import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { ParsedFile } from '../facts.js';
import { classifyPath } from '../parsers/index.js';
import { readRepository, type RepositoryReader } from '../stream.js';

export const MAX_FILE_BYTES = 1024 * 1024;
const SKIP_DIRS = new Set(['.git', 'node_modules', '.hg', '.svn', '.venv', 'venv', '__pycache__', '.tox', '.mypy_cache', 'dist', 'build', 'site-packages']);

export interface Skipped {
  readonly path: string;
  readonly reason: string;
}

export interface Loaded {
  readonly files: ParsedFile[];
  readonly skipped: Skipped[];
}

/** A repository-relative posix path for an absolute path under root, or undefined if it is outside. */
export function toRepoPath(root: string, absolute: string): string | undefined {
  const rel = relative(root, absolute);
  if (rel === '' || rel.startsWith('..') || rel.split(sep)[0] === '..' || resolve(root, rel) !== absolute) return rel === '' ? '' : undefined;
  return rel.split(sep).join('/');
}

/** Walk files and directories (skipping VCS, dependency and build folders), returning checkable paths. */
export function walk(root: string, inputs: readonly string[]): { paths: string[]; missing: string[] } {
  const paths = new Set<string>();
  const missing: string[] = [];
  const visit = (absolute: string, explicit: boolean): void => {
    let stats;
    try {
      stats = lstatSync(absolute);
    } catch {
      if (explicit) missing.push(absolute);
      return;
    }
    if (stats.isSymbolicLink() && !explicit) return; // never follow links found while walking
    if (stats.isSymbolicLink()) stats = statSync(absolute);
    const repoPath = toRepoPath(root, absolute);
    if (repoPath === undefined) {
      if (explicit) missing.push(absolute);
      return;
    }
    if (stats.isDirectory()) {
      const name = absolute.split(sep).pop() ?? '';
      if (!explicit && SKIP_DIRS.has(name)) return;
      for (const entry of readdirSync(absolute).sort()) visit(join(absolute, entry), false);
      return;
    }
    if (stats.isFile() && (explicit || classifyPath(repoPath))) paths.add(repoPath);
  };
  for (const input of inputs) visit(resolve(root, input), true);
  return { paths: [...paths], missing };
}

/**
 * The files of a checkout: a path is read if it names a Dockerfile, requirements or conda file (or a .txt/.in/
 * .yml file an include leads to) inside the root, at most MAX_FILE_BYTES long and not binary. Links are
 * followed only to files inside the root. Every path it declines is added to `skipped` with the reason.
 */
export function diskReader(root: string, skipped: Skipped[]): RepositoryReader {
  const realRoot = realpathSync(root);
  return {
    read(path) {
      const kind = classifyPath(path) ?? guessKind(path);
      if (!kind) {
        skipped.push({ path, reason: 'not a Dockerfile, requirements or conda environment file' });
        return undefined;
      }
      const text = readInside(realRoot, root, path, skipped);
      return text === undefined ? undefined : { path, kind, text };
    },
    isFile: (path) => isFile(root, path),
  };
}

/** Read and parse files, then follow `-r`/COPY links to files inside the root (never outside it). */
export function loadFiles(root: string, paths: readonly string[], followLinks = true): Loaded {
  const skipped: Skipped[] = [];
  const files = [...readRepository(paths, diskReader(root, skipped), followLinks)].map((file) => file.parsed);
  return { files, skipped };
}

function guessKind(path: string): 'requirements' | 'conda' | undefined {
  if (/\.(txt|in)$/i.test(path)) return 'requirements';
  if (/\.ya?ml$/i.test(path)) return 'conda';
  return undefined;
}

function isFile(root: string, path: string): boolean {
  try {
    return statSync(join(root, path)).isFile();
  } catch {
    return false;
  }
}

function readInside(realRoot: string, root: string, path: string, skipped: Skipped[]): string | undefined {
  const absolute = join(root, path);
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch {
    skipped.push({ path, reason: 'cannot be read' });
    return undefined;
  }
  if (real !== realRoot && !real.startsWith(realRoot + sep)) {
    skipped.push({ path, reason: 'is a link to a file outside the repository' });
    return undefined;
  }
  const size = statSync(real).size;
  if (size > MAX_FILE_BYTES) {
    skipped.push({ path, reason: `is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB` });
    return undefined;
  }
  const buffer = readFileSync(real);
  if (buffer.includes(0)) {
    skipped.push({ path, reason: 'is binary' });
    return undefined;
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(buffer);
}
