import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { includeCandidates } from '../analysis/links.js';
import type { ParsedFile } from '../facts.js';
import { classifyPath, parseFile } from '../parsers/index.js';
import type { SourceFile } from '../stream.js';

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

/** Read and parse files, then follow `-r`/COPY links to files inside the root (never outside it). */
export function loadFiles(root: string, paths: readonly string[], followLinks = true): Loaded {
  const files: ParsedFile[] = [];
  const skipped = readFollowingLinks(root, paths, followLinks, (_, parsed) => files.push(parsed));
  return { files, skipped };
}

/**
 * The files loadFiles reads, in the same order, as texts. Each is parsed once here to follow its includes and
 * its facts are let go: gateRepository parses them again a group at a time, so a large repository is never held
 * in memory as facts.
 */
export function loadSources(root: string, paths: readonly string[], followLinks = true): { sources: SourceFile[]; skipped: Skipped[] } {
  const sources: SourceFile[] = [];
  const skipped = readFollowingLinks(root, paths, followLinks, (source) => sources.push(source));
  return { sources, skipped };
}

function readFollowingLinks(root: string, paths: readonly string[], followLinks: boolean, take: (source: SourceFile, parsed: ParsedFile) => void): Skipped[] {
  const skipped: Skipped[] = [];
  const seen = new Set<string>();
  const realRoot = realpathSync(root);
  const queue = [...paths];
  for (let next = 0; next < queue.length; next++) {
    const path = queue[next]!;
    if (seen.has(path)) continue;
    seen.add(path);
    const kind = classifyPath(path) ?? guessKind(path);
    if (!kind) {
      skipped.push({ path, reason: 'not a Dockerfile, requirements or conda environment file' });
      continue;
    }
    const text = readInside(realRoot, root, path, skipped);
    if (text === undefined) continue;
    const parsed = parseFile(path, text, kind);
    take({ path, kind, text }, parsed);
    if (!followLinks) continue;
    for (const include of parsed.includes) {
      for (const candidate of includeCandidates(parsed, include)) {
        if (seen.has(candidate)) break;
        if (isFile(root, candidate)) {
          queue.push(candidate);
          break;
        }
      }
    }
  }
  return skipped;
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
