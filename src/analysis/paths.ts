import { posix } from 'node:path';

/** Normalise a repository path (posix, no leading `./`); undefined when it escapes the repository root. */
export function normalizeRepoPath(path: string): string | undefined {
  const normalized = posix.normalize(path.replace(/\\/g, '/'));
  if (normalized.startsWith('../') || normalized === '..' || posix.isAbsolute(normalized)) return undefined;
  return normalized === '.' ? '' : normalized.replace(/^\.\//, '');
}

export function dirname(path: string): string {
  const index = path.lastIndexOf('/');
  return index < 0 ? '' : path.slice(0, index);
}

export function joinRepo(...parts: string[]): string | undefined {
  return normalizeRepoPath(posix.join(...parts.filter((part) => part !== '')) || '.');
}
