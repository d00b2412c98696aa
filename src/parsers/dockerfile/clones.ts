/**
 * Folders a Dockerfile's RUN instructions clone a repository into (`RUN git clone https://github.com/org/tool.git &&
 * pip install -r tool/requirements.txt`): a file installed from such a folder is the clone's, never a file the
 * build context's COPY brought, however alike their names.
 */
import { posix } from 'node:path';
import type { Command } from '../shell.js';
import { stripPrefixes } from '../installers.js';

/**
 * `git clone` options whose value may be the next word (git-scm.com/docs/git-clone; `git` parses a long option's
 * required value from the next word as from `=`). Every other option of clone is a flag or takes its value with `=`.
 */
const CLONE_VALUES: ReadonlySet<string> = new Set([
  '-o',
  '--origin',
  '-b',
  '--branch',
  '-u',
  '--upload-pack',
  '--reference',
  '--reference-if-able',
  '--separate-git-dir',
  '--depth',
  '--shallow-since',
  '--shallow-exclude',
  '-c',
  '--config',
  '-j',
  '--jobs',
  '--filter',
  '--template',
  '--server-option',
  '--bundle-uri',
  '--revision',
]);

/** `git` options before the command whose value may be the next word (git-scm.com/docs/git; `--exec-path` takes
 * its value only with `=`). */
const GIT_VALUES: ReadonlySet<string> = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace']);

export interface Clone {
  /** The repository as written. */
  readonly url: string;
  /** The folder it is cloned into, as a path: relative to the RUN's working directory, or absolute. */
  readonly folder: string;
}

/**
 * The clone a command makes (`git clone [options] <repository> [<directory>]`, `git -C <path> clone …`), or undefined:
 * no clone, or a word the shell decides at build time (`$REPO`). Without a directory, git clones into the
 * repository's "humanish" name: `repo` for `…/repo.git` and `host:org/repo.git` (git-scm.com/docs/git-clone,
 * `<directory>`).
 */
export function cloneOf(command: Command): Clone | undefined {
  const words = stripPrefixes(command).map((word) => word.text);
  if (words[0] === undefined || posix.basename(words[0]) !== 'git') return undefined;
  let at = 1;
  let base = '';
  for (; at < words.length && words[at] !== 'clone'; at++) {
    const word = words[at]!;
    if (!word.startsWith('-')) return undefined; // another git command
    if (GIT_VALUES.has(word)) {
      if (word === '-C') base = posix.join(base, words[at + 1] ?? '');
      at++;
    }
  }
  const positional: string[] = [];
  for (at++; at < words.length; at++) {
    const word = words[at]!;
    if (word === '--') {
      positional.push(...words.slice(at + 1));
      break;
    }
    if (word.startsWith('-') && word.length > 1) {
      if (CLONE_VALUES.has(word)) at++;
      continue;
    }
    positional.push(word);
  }
  const [url, directory] = positional;
  if (url === undefined || /[$`]/.test(url) || (directory !== undefined && /[$`]/.test(directory))) return undefined;
  const folder = directory ?? humanish(url);
  if (!folder) return undefined;
  return { url, folder: normalFolder(posix.join(base, folder)) };
}

/** The last part of a repository's address, without `.git` (git's guess of a directory name). */
function humanish(url: string): string {
  const trimmed = url
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  return trimmed.slice(Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf(':')) + 1);
}

/** A folder's path without `.`, `..` and a trailing slash: '' for the working directory itself, '/' for the root. */
function normalFolder(path: string): string {
  const normal = posix.normalize(path);
  if (normal === '/' || normal === '.' || normal === './') return normal === '/' ? '/' : '';
  return normal.replace(/\/+$/, '').replace(/^\.\//, '');
}

/**
 * The clones of each stage (a later RUN of the stage still has the folder) and the folder a RUN's `cd` moved to:
 * which clone, if any, a path an install names is in.
 */
export class Clones {
  private readonly byStage = new Map<number, Clone[]>();
  /**
   * The RUN's working directory relative to the instruction's (`cd tool`), '' where it has not moved, undefined where
   * the shell decides it (`cd "$DIR"`, `cd` alone: the home folder, `cd -`).
   */
  private cwd: string | undefined = '';

  /**
   * A new RUN starts in the stage's working directory: its WORKDIR where the file says it (then clones and paths are
   * absolute, so `WORKDIR /app/tool` after a RUN in /app that cloned `tool` is inside the clone), else '' (paths
   * relative to the instructions' working directory).
   */
  startRun(workdir?: string): void {
    this.cwd = workdir === undefined ? '' : normalFolder(workdir);
    this.start = this.cwd;
    this.workdirKnown = workdir !== undefined;
  }

  /** Whether the RUN's WORKDIR is the file's (else the base image's, not known). */
  private workdirKnown = false;

  /** Where the RUN started (its WORKDIR, or ''). */
  private start = '';

  /**
   * A relative path an install names, where the RUN's `cd` moved from where it started: the path from the new folder
   * (absolute where the WORKDIR is known); null where the shell decides the folder; undefined where it has not moved.
   */
  moved(path: string): string | null | undefined {
    if (this.cwd === this.start || posix.isAbsolute(path)) return undefined;
    return this.resolve(path) ?? null;
  }

  add(stage: number, clone: Clone): void {
    const folder = this.resolve(clone.folder);
    if (folder === undefined) return;
    let list = this.byStage.get(stage);
    if (!list) this.byStage.set(stage, (list = []));
    list.push({ url: clone.url, folder });
    // Where no WORKDIR is known, a RUN runs in the base image's, `/` unless the base sets one (Dockerfile reference,
    // WORKDIR): `RUN git clone …/tool` then `WORKDIR /tool` is most likely inside the clone, and the build context's
    // file of the same name is not what it installs (nothing copied it there).
    if (!this.workdirKnown && folder !== '' && !posix.isAbsolute(folder))
      list.push({ url: clone.url, folder: `/${folder}` });
  }

  /** `cd [-L|-P] DIR`: where the RUN's next commands run. */
  cd(words: readonly string[]): void {
    const directory = words.slice(1).find((word) => !/^-[LPe@]+$/.test(word));
    this.cwd = directory === undefined || directory === '-' ? undefined : this.resolve(directory);
  }

  /**
   * The clone of the stage a path an install names lies in (after the RUN's `cd`), with the path inside it, or
   * undefined.
   */
  cloneOf(stage: number, target: string): { readonly url: string; readonly path: string } | undefined {
    const list = this.byStage.get(stage);
    const path = list && this.resolve(target);
    if (path === undefined) return undefined;
    const clone = list!.find((entry) => entry.folder !== '' && path.startsWith(`${entry.folder}/`));
    return clone && { url: clone.url, path: path.slice(clone.folder.length + 1) };
  }

  /** A path as the RUN's commands name it, from the instruction's working directory; undefined where not known. */
  private resolve(path: string): string | undefined {
    if (/[$`~]/.test(path)) return undefined;
    if (posix.isAbsolute(path)) return normalFolder(path);
    return this.cwd === undefined ? undefined : normalFolder(posix.join(this.cwd, path));
  }
}
