import { posix } from 'node:path';

/** Normalise a repository path (posix, no leading `./`); undefined when it escapes the repository root. */
export function normalizeRepoPath(path: string): string | undefined {
  if (isNormal(path)) return path;
  const normalized = posix.normalize(path.replace(/\\/g, '/'));
  if (normalized.startsWith('../') || normalized === '..' || posix.isAbsolute(normalized)) return undefined;
  return normalized === '.' ? '' : normalized.replace(/^\.\//, '');
}

export function dirname(path: string): string {
  const index = path.lastIndexOf('/');
  return index < 0 ? '' : path.slice(0, index);
}

export function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

export function joinRepo(...parts: string[]): string | undefined {
  const present = parts.filter((part) => part !== '');
  // Most joins are of clean paths (`services/api` and `requirements.txt`): nothing to normalise.
  const joined = present.join('/');
  if (isNormal(joined)) return joined;
  return normalizeRepoPath(posix.join(...present) || '.');
}

/**
 * Segments of one or more characters other than `/` and `\`, none of them `.` or `..`, joined by single
 * slashes: a path that normalising leaves as it is. (Linear: a segment ends only at a slash.)
 */
const NORMAL = /^(?!\.\.?(?:\/|$))[^/\\]+(?:\/(?!\.\.?(?:\/|$))[^/\\]+)*$/;

/** Whether normalizeRepoPath would return `path` unchanged; checked first because most paths are. */
function isNormal(path: string): boolean {
  return NORMAL.test(path);
}
