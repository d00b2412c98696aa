import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { ParsedFile } from '../facts.js';
import { classifyPath } from '../parsers/index.js';
import { listed, readRepository, type RepositoryReader } from '../reader.js';

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

export interface Walked {
  /** Checkable files, in walk order (directories sorted by name). */
  readonly paths: readonly string[];
  /** Inputs that do not exist inside the root. */
  readonly missing: string[];
  /** Paths reached without passing a symbolic link: their real path is the root's real path joined with them. */
  readonly plain: ReadonlySet<string>;
}

/** Walk files and directories (skipping VCS, dependency and build folders), returning checkable paths. */
export function walk(root: string, inputs: readonly string[]): Walked {
  const paths = new Set<string>();
  const plain = new Set<string>();
  const missing: string[] = [];
  const realRoot = realpathSync.native(root);
  const add = (repoPath: string, viaLink: boolean): void => {
    paths.add(repoPath);
    if (!viaLink) plain.add(repoPath);
  };
  /** An entry found while walking: its type comes with the directory listing, so most need no lstat. */
  const visitEntry = (directory: string, repoDirectory: string, entry: Dirent, viaLink: boolean): void => {
    const absolute = join(directory, entry.name);
    const repoPath = repoDirectory === '' ? entry.name : `${repoDirectory}/${entry.name}`;
    if (entry.isSymbolicLink()) return; // never follow links found while walking
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) visitDirectory(absolute, repoPath, viaLink);
    } else if (entry.isFile()) {
      if (classifyPath(repoPath)) add(repoPath, viaLink);
    } else if (!entry.isBlockDevice() && !entry.isCharacterDevice() && !entry.isFIFO() && !entry.isSocket()) {
      visit(absolute, false, viaLink); // a file system that does not report types
    }
  };
  const visitDirectory = (absolute: string, repoPath: string, viaLink: boolean): void => {
    const entries = readdirSync(absolute, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) visitEntry(absolute, repoPath, entry, viaLink);
  };
  const visit = (absolute: string, explicit: boolean, viaLink: boolean): void => {
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
    // An input may name a link, or a path through one; what the walk finds below it never does.
    const linked = viaLink || (explicit && realpathSync.native(absolute) !== (repoPath === '' ? realRoot : join(realRoot, repoPath)));
    if (stats.isDirectory()) {
      const name = absolute.split(sep).pop() ?? '';
      if (!explicit && SKIP_DIRS.has(name)) return;
      visitDirectory(absolute, repoPath, linked);
      return;
    }
    if (stats.isFile() && (explicit || classifyPath(repoPath))) add(repoPath, linked);
  };
  for (const input of inputs) visit(resolve(root, input), true, false);
  return { paths: [...paths], missing, plain };
}

/**
 * The files of a checkout: a path is read if it names a Dockerfile, requirements or conda file (or a .txt/.in/
 * .yml file an include leads to) inside the root, at most MAX_FILE_BYTES long and not binary. Links are
 * followed only to files inside the root. Every path it declines is added to `skipped` with the reason.
 * `walked` tells it what a walk has just seen: files whose includes need no stat, and plain paths whose real
 * path needs no lookup.
 */
export function diskReader(root: string, skipped: Skipped[], walked?: Pick<Walked, 'paths' | 'plain'>): RepositoryReader {
  const realRoot = realpathSync.native(root);
  const files = new Set(walked?.paths);
  const plain = walked?.plain ?? new Set<string>();
  return {
    read(path, kind) {
      const text = readInside(realRoot, root, path, plain.has(path), skipped);
      return text === undefined ? undefined : { path, kind, text };
    },
    isFile: (path) => files.has(path) || isFile(root, path),
  };
}

/**
 * Read and parse files, then follow `-r`/COPY links to files inside the root (never outside it). `walked` is the
 * walk the paths came from, when there is one (see diskReader).
 */
export function loadFiles(root: string, paths: readonly string[], followLinks = true, walked?: Pick<Walked, 'paths' | 'plain'>): Loaded {
  const skipped: Skipped[] = [];
  const files = [...readRepository(listed(paths), diskReader(root, skipped, walked), followLinks)].map((file) => file.parsed);
  return { files, skipped };
}

function isFile(root: string, path: string): boolean {
  try {
    return statSync(join(root, path)).isFile();
  } catch {
    return false;
  }
}

function readInside(realRoot: string, root: string, path: string, plain: boolean, skipped: Skipped[]): string | undefined {
  let real: string;
  try {
    real = plain ? join(realRoot, path) : realpathSync.native(join(root, path));
  } catch {
    skipped.push({ path, reason: 'cannot be read' });
    return undefined;
  }
  if (real !== realRoot && !real.startsWith(realRoot + sep)) {
    skipped.push({ path, reason: 'is a link to a file outside the repository' });
    return undefined;
  }
  let buffer: Buffer;
  let fd: number | undefined;
  try {
    fd = openSync(real, 'r');
    const size = fstatSync(fd).size;
    if (size > MAX_FILE_BYTES) {
      skipped.push({ path, reason: `is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB` });
      return undefined;
    }
    buffer = readAll(fd, size);
  } catch {
    skipped.push({ path, reason: 'cannot be read' });
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (buffer.includes(0)) {
    skipped.push({ path, reason: 'is binary' });
    return undefined;
  }
  return decoder.decode(buffer);
}

const decoder = new TextDecoder('utf-8', { fatal: false });

/** The whole file, read into a buffer of the size fstat gave (a file that grew meanwhile is read to its end). */
function readAll(fd: number, size: number): Buffer {
  const chunks: Buffer[] = [];
  let chunk = Buffer.allocUnsafe(Math.max(size, 1));
  let filled = 0;
  for (;;) {
    const read = readSync(fd, chunk, filled, chunk.length - filled, null);
    if (read === 0) break;
    filled += read;
    if (filled === chunk.length) {
      chunks.push(chunk);
      chunk = Buffer.allocUnsafe(64 * 1024);
      filled = 0;
    }
  }
  chunks.push(chunk.subarray(0, filled));
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}
