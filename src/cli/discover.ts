import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
  type Dirent,
} from 'node:fs';
import ignore, { type Ignore } from 'ignore';
import { join, relative, resolve, sep } from 'node:path';
import { dirname } from '../analysis/paths.js';
import type { FileKind, ParsedFile } from '../parsers/facts.js';
import {
  classifyPath,
  isLfsPointer,
  kindByContent,
  LFS_POINTER,
  yamlByContent,
  type ParseOptions,
} from '../parsers/index.js';
import {
  listed,
  maxBytes,
  MAX_MANIFEST_BYTES,
  readRepository,
  servingOf,
  sourceOf,
  type RepositoryReader,
} from '../reader.js';
import { utf16Text } from '../util/utf16.js';
import { trackedPaths, type Tracked } from './git-index.js';

const SKIP_DIRS = new Set([
  '.git',
  'node_modules',
  '.hg',
  '.svn',
  '.venv',
  'venv',
  '__pycache__',
  '.tox',
  '.mypy_cache',
  'dist',
  // Not `build`: repositories keep sources there (kubernetes-sigs/lws docs/examples/tensorrt-llm/build/Dockerfile);
  // a build's output is left out by the .gitignore that ignores it.
  'site-packages',
]);

export interface Skipped {
  readonly path: string;
  readonly reason: string;
  /** The file was checked under another path (a link to it): this path is skipped, nothing went unchecked. */
  readonly duplicate?: boolean;
}

export interface Loaded {
  readonly files: ParsedFile[];
  readonly skipped: Skipped[];
}

/** A repository-relative posix path for an absolute path under root, or undefined if it is outside. */
export function toRepoPath(root: string, absolute: string): string | undefined {
  const rel = relative(root, absolute);
  if (rel === '' || rel.startsWith('..') || rel.split(sep)[0] === '..' || resolve(root, rel) !== absolute)
    return rel === '' ? '' : undefined;
  return rel.split(sep).join('/');
}

export interface Walked {
  /** Checkable files, in walk order (directories sorted by name). */
  readonly paths: readonly string[];
  /** Paths the walk could not read (an unreadable directory, a looping or dangling link named on the command line). */
  readonly unreadable: readonly { readonly path: string; readonly reason: string; readonly named: boolean }[];
  /** The kind of each path, by name or (for YAML files in environment folders) by content; none: read the content. */
  readonly kinds: ReadonlyMap<string, FileKind>;
  /** Inputs that do not exist inside the root. */
  readonly missing: string[];
  /** Paths reached without passing a symbolic link: their real path is the root's real path joined with them. */
  readonly plain: ReadonlySet<string>;
  /** What the walk listed, checkable or not: include candidates are looked up here before the disk (see diskReader). */
  readonly listing: Listing;
}

/**
 * The walk's directory listings: every regular file it saw, and the directories it listed whole with every entry's
 * type known. A path in such a directory that is not among its regular files, and that no entry there names but for
 * case or Unicode form, is no file (the directory's listing said so without a stat); anywhere else, and wherever a
 * case-insensitive file system may answer otherwise, only the disk can say.
 */
export interface Listing {
  readonly regular: ReadonlySet<string>;
  readonly complete: ReadonlySet<string>;
  /** Every entry of the complete directories, folded (see `folded`). */
  readonly folded: ReadonlySet<string>;
}

/** A path as a case-insensitive, normalising file system (macOS, Windows) may match it. */
function folded(path: string): string {
  return path.normalize('NFC').toLowerCase();
}

/**
 * Whether the listing says `path` is a regular file; undefined where only the disk can say. Below the nearest folder
 * listed whole, a path is no file when that folder has no entry on its way (`svc/requirements/cuda.txt` where `svc/`
 * has no `requirements`), or the entry there is a regular file, which has nothing below it.
 */
export function listedFile(listing: Listing, path: string): boolean | undefined {
  if (listing.regular.has(path)) return true;
  // `..`, `.` and absolute paths are the disk's to resolve.
  if (path.startsWith('/') || /(^|\/)\.\.?(\/|$)/.test(path)) return undefined;
  let entry = path;
  for (;;) {
    const folder = dirname(entry);
    if (listing.complete.has(folder)) {
      if (!listing.folded.has(folded(entry))) return false;
      return entry !== path && listing.regular.has(entry) ? false : undefined;
    }
    if (folder === '') return undefined;
    entry = folder;
  }
}

/** The listings of two walks of one checkout, as one. */
export function joinListings(a: Listing, b: Listing): Listing {
  return {
    regular: new Set([...a.regular, ...b.regular]),
    complete: new Set([...a.complete, ...b.complete]),
    folded: new Set([...a.folded, ...b.folded]),
  };
}

/** A walk that listed nothing: every question goes to the disk. */
export const NO_LISTING: Listing = { regular: new Set(), complete: new Set(), folded: new Set() };

type ListingData = { readonly [K in keyof Listing]: readonly string[] };

/** The listing as plain arrays (it crosses to worker threads) and back. */
export function listingData(listing: Listing): ListingData {
  return { regular: [...listing.regular], complete: [...listing.complete], folded: [...listing.folded] };
}
export function listingFrom(data: ListingData): Listing {
  return { regular: new Set(data.regular), complete: new Set(data.complete), folded: new Set(data.folded) };
}

/** What the walk leaves out and adds, beside its file names: `.gitignore` files and the baseline's `files`. */
export interface WalkFilters {
  /** gitignore-style patterns of more files to check (their kind is read from their content). */
  readonly include?: readonly string[];
  /** gitignore-style patterns of files not to check. */
  readonly exclude?: readonly string[];
  /** Respect the `.gitignore` files of the checkout (default true). */
  readonly gitignore?: boolean;
}

/** The `.gitignore` rules in force in a directory: each file's rules, with the directory they are relative to. */
type IgnoreLevels = readonly { readonly base: string; readonly rules: Ignore }[];

function ignoredBy(levels: IgnoreLevels, repoPath: string, directory: boolean): boolean {
  for (const level of levels) {
    if (level.base !== '' && !repoPath.startsWith(`${level.base}/`)) continue;
    const relative = level.base === '' ? repoPath : repoPath.slice(level.base.length + 1);
    if (level.rules.ignores(directory ? `${relative}/` : relative)) return true;
  }
  return false;
}

/**
 * `directory/path` for a normalised absolute directory and a normalised relative path (a walk's entry name, a
 * repository path): what `join` gives, without its normalising pass (the walk makes one per entry).
 */
function under(directory: string, path: string): string {
  return directory.endsWith('/') ? directory + path : `${directory}/${path}`;
}

/** The rules of `<directory>/.gitignore` added to `levels` (when there is one). */
function withGitignore(levels: IgnoreLevels, absoluteDirectory: string, repoDirectory: string): IgnoreLevels {
  let text: string;
  try {
    text = readFileSync(join(absoluteDirectory, '.gitignore'), 'utf8');
  } catch {
    return levels;
  }
  return [...levels, { base: repoDirectory, rules: ignore().add(text) }];
}

/**
 * Walk files and directories, returning checkable paths: files named as Dockerfiles, requirements or conda files
 * (YAML files in environment folders by content) and files the baseline's `files.include` names. Skipped: VCS,
 * dependency and build folders, what `.gitignore` files ignore (unless git tracks it: git-index.ts), and
 * `files.exclude`. A file named on the command line is always checked.
 */
export function walk(root: string, inputs: readonly string[], filters: WalkFilters = {}): Walked {
  const paths = new Set<string>();
  const plain = new Set<string>();
  const kinds = new Map<string, FileKind>();
  const missing: string[] = [];
  const unreadable: { path: string; reason: string; named: boolean }[] = [];
  const regular = new Set<string>();
  const complete = new Set<string>();
  const foldedEntries = new Set<string>();
  const realRoot = realpathSync.native(root);
  const gitignore = filters.gitignore ?? true;
  const excluded = filters.exclude?.length ? ignore().add([...filters.exclude]) : undefined;
  const included = filters.include?.length ? ignore().add([...filters.include]) : undefined;
  const add = (repoPath: string, viaLink: boolean, kind: FileKind | undefined): void => {
    paths.add(repoPath);
    if (kind) kinds.set(repoPath, kind);
    if (!viaLink) plain.add(repoPath);
  };
  /**
   * A file's kind by name, or for a YAML file no name claims (an environment, a manifest), by its content; a YAML
   * file that cannot be read to tell is taken without a kind, so its read fails and says why (never skipped silently).
   */
  const kindOf = (absolute: string, repoPath: string): FileKind | undefined | typeof UNTOLD => {
    const byName = classifyPath(repoPath);
    return byName ?? (yamlByContent(repoPath) ? kindInside(absolute, repoPath) : undefined);
  };
  /** What git tracks in the checkout, read once the first time a `.gitignore` pattern matches (null: not known). */
  let tracked: Tracked | null | undefined;
  /**
   * Whether a path a `.gitignore` ignores is checked all the same: a file git tracks is (`git add -f`: it is in every
   * clone), and, where no git index says what is tracked (a `git archive` export, a release tarball, a subfolder of a
   * checkout), every file: an export holds only what was committed, and an unchecked file is never a pass (opencompass
   * ignores `*.txt` and commits its requirements/*.txt). Ignored folders are still passed over there (build outputs).
   */
  const keptIgnored = (repoPath: string, directory: boolean): boolean => {
    if (tracked === undefined) tracked = trackedPaths(root) ?? null;
    if (tracked === null) return !directory;
    return (directory ? tracked.folders : tracked.files).has(repoPath);
  };
  const skipped = (levels: IgnoreLevels, repoPath: string, directory: boolean): boolean =>
    (excluded?.ignores(directory ? `${repoPath}/` : repoPath) ?? false) ||
    (gitignore && ignoredBy(levels, repoPath, directory) && !keptIgnored(repoPath, directory));
  /** A file found while walking: by its name, or because files.include names it (then its content decides). */
  const found = (absolute: string, repoPath: string, viaLink: boolean, levels: IgnoreLevels): void => {
    if (skipped(levels, repoPath, false)) return;
    const kind = kindOf(absolute, repoPath);
    if (kind || included?.ignores(repoPath)) add(repoPath, viaLink, kind === UNTOLD ? undefined : kind);
  };
  /** An entry found while walking: its type comes with the directory listing, so most need no lstat. */
  const visitEntry = (
    directory: string,
    repoDirectory: string,
    entry: Dirent,
    viaLink: boolean,
    levels: IgnoreLevels,
  ): void => {
    const absolute = under(directory, entry.name);
    const repoPath = repoDirectory === '' ? entry.name : `${repoDirectory}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !skipped(levels, repoPath, true))
        visitDirectory(absolute, repoPath, viaLink, levels);
    } else if (entry.isFile()) {
      found(absolute, repoPath, viaLink, levels);
    } else if (
      entry.isSymbolicLink() ||
      entry.isFIFO() ||
      entry.isCharacterDevice() ||
      entry.isBlockDevice() ||
      entry.isSocket()
    ) {
      // Never followed or opened here (a linked directory could loop). One whose name says it is a file we check is
      // handed to the reader, which follows a link only to a regular file inside the root and refuses anything else
      // with the reason: a requirements.txt that is a FIFO, a device or a link to one is not checked, and says so.
      const kind = classifyPath(repoPath);
      if (kind && !skipped(levels, repoPath, false)) add(repoPath, true, kind);
    } else {
      visit(absolute, false, viaLink, levels); // a file system that does not report types
    }
  };
  const visitDirectory = (
    absolute: string,
    repoPath: string,
    viaLink: boolean,
    outer: IgnoreLevels,
    named = false,
  ): void => {
    let listing: Dirent[];
    try {
      listing = readdirSync(absolute, { withFileTypes: true });
    } catch {
      unreadable.push({ path: absolute, reason: 'is a directory that cannot be read', named });
      return;
    }
    const entries = listing.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let typed = true;
    for (const entry of entries) {
      const path = repoPath === '' ? entry.name : `${repoPath}/${entry.name}`;
      if (entry.isFile()) regular.add(path);
      else if (!entry.isDirectory()) typed = false; // a link, a device, or a type the file system did not report
    }
    if (typed) {
      complete.add(repoPath);
      for (const entry of entries)
        foldedEntries.add(folded(repoPath === '' ? entry.name : `${repoPath}/${entry.name}`));
    }
    const levels =
      gitignore && entries.some((entry) => entry.name === '.gitignore')
        ? withGitignore(outer, absolute, repoPath)
        : outer;
    for (const entry of entries) visitEntry(absolute, repoPath, entry, viaLink, levels);
  };
  /** The .gitignore rules of the directories from the root down to (not including) `repoPath`'s own. */
  const levelsAbove = (repoPath: string): IgnoreLevels => {
    if (!gitignore) return [];
    let levels: IgnoreLevels = withGitignore([], root, '');
    const parts = repoPath.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++)
      levels = withGitignore(levels, join(root, ...parts.slice(0, i)), parts.slice(0, i).join('/'));
    return levels;
  };
  const visit = (absolute: string, explicit: boolean, viaLink: boolean, levels?: IgnoreLevels): void => {
    let stats;
    try {
      stats = lstatSync(absolute);
    } catch {
      if (explicit) missing.push(absolute);
      return;
    }
    if (stats.isSymbolicLink() && !explicit) return; // never follow links found while walking
    if (stats.isSymbolicLink()) {
      try {
        stats = statSync(absolute);
      } catch (error) {
        // A dangling link, or one that loops (ELOOP): named on the command line, it is a usage error.
        unreadable.push({
          path: absolute,
          reason:
            (error as NodeJS.ErrnoException).code === 'ELOOP'
              ? 'is a symbolic link that loops'
              : 'is a symbolic link to nothing',
          named: explicit,
        });
        return;
      }
    }
    const repoPath = toRepoPath(root, absolute);
    if (repoPath === undefined) {
      if (explicit) missing.push(absolute);
      return;
    }
    // An input may name a link, or a path through one; what the walk finds below it never does.
    let real: string;
    try {
      real = realpathSync.native(absolute);
    } catch {
      unreadable.push({ path: absolute, reason: 'cannot be read', named: explicit });
      return;
    }
    const linked = viaLink || (explicit && real !== (repoPath === '' ? realRoot : join(realRoot, repoPath)));
    if (stats.isDirectory()) {
      const name = absolute.split(sep).pop() ?? '';
      if (!explicit && SKIP_DIRS.has(name)) return;
      visitDirectory(
        absolute,
        repoPath,
        linked,
        levels ?? (repoPath === '' ? [] : levelsAbove(`${repoPath}/x`).filter((level) => level.base !== repoPath)),
        explicit,
      );
      return;
    }
    if (!stats.isFile()) {
      // Named on the command line (walks add such files above, by name): a FIFO, a device or a socket is no file to
      // check.
      if (explicit) unreadable.push({ path: absolute, reason: 'is not a regular file', named: true });
      return;
    }
    // A file named on the command line is always checked: by its name, or else by its content.
    if (explicit) {
      const kind = kindOf(absolute, repoPath);
      add(repoPath, linked, kind === UNTOLD ? undefined : kind);
    } else found(absolute, repoPath, linked, levels ?? []);
  };
  for (const input of inputs) visit(resolve(root, input), true, false);
  return {
    paths: [...paths],
    kinds,
    missing,
    unreadable,
    plain,
    listing: { regular, complete, folded: foldedEntries },
  };
}

/**
 * The files of a checkout: a path is read if it names a Dockerfile, requirements or conda file (or a .txt/.in/.yml
 * file an include leads to) inside the root, at most maxBytes long (32 MiB for locks, else 1 MiB) and not binary. Links
 * are followed only to files inside the root. Every path it declines is added to `skipped` with the reason. `walked`
 * tells it what a walk has just seen: files whose includes need no stat, and plain paths whose real path needs no
 * lookup.
 */
export function diskReader(
  root: string,
  skipped: Skipped[],
  walked?: Pick<Walked, 'paths' | 'plain'> & Partial<Pick<Walked, 'listing'>>,
): RepositoryReader {
  const realRoot = realpathSync.native(root);
  const files = new Set(walked?.paths);
  const plain = walked?.plain ?? new Set<string>();
  const listing = walked?.listing;
  /** Real path → the repository path it was read as: a file reached again through a link is read once. */
  const seen = new Map<string, string>();
  return {
    read(path, kind) {
      let real: string;
      try {
        real = plain.has(path) ? under(realRoot, path) : realpathSync.native(join(root, path));
      } catch {
        skipped.push({ path, reason: 'cannot be read' });
        return undefined;
      }
      const first = seen.get(real);
      if (first !== undefined && first !== path) {
        skipped.push({ path, reason: `is ${first} again, reached through a link`, duplicate: true });
        return undefined;
      }
      seen.set(real, path);
      const text = readRegularInside(realRoot, root, path, maxBytes(path, kind), plain.has(path));
      if (typeof text !== 'string') {
        skipped.push({ path, reason: text.reason });
        return undefined;
      }
      const source = sourceOf(path, text, kind);
      if (typeof source !== 'string') return source;
      skipped.push({ path, reason: source });
      return undefined;
    },
    isFile: (path) => files.has(path) || ((listing && listedFile(listing, path)) ?? isFile(root, path)),
  };
}

/**
 * Read and parse files, then follow `-r`/COPY links to files inside the root (never outside it). `walked` is the
 * walk the paths came from, when there is one (see diskReader).
 */
export function loadFiles(
  root: string,
  paths: readonly string[],
  followLinks = true,
  walked?: Pick<Walked, 'paths' | 'plain'> & Partial<Pick<Walked, 'kinds'>>,
  parse: ParseOptions = {},
): Loaded {
  const skipped: Skipped[] = [];
  // The walk knows the kinds a YAML file's content decided (a manifest, an environment in an envs/ folder).
  const list = listed(paths, walked?.kinds);
  const serving = parse.serving ?? servingOf(list, diskReader(root, [], walked));
  const files = [
    ...readRepository(list, diskReader(root, skipped, walked), followLinks, serving ? { ...parse, serving } : parse),
  ].map((file) => file.parsed);
  return { files, skipped };
}

/** A YAML file that could not be opened to read what it is. */
const UNTOLD = 'untold';
/** The buffer YAML files are read into to tell their kind: as much as a manifest may be long (MAX_MANIFEST_BYTES). */
let sniffBuffer: Buffer | undefined;

/**
 * What a YAML file makes itself, read as far as a manifest may be long (the App sees the whole blob too): a conda
 * environment (in an environment folder, say), a Kubernetes manifest (its workload may come after a large CRD), or
 * neither. A longer file is told by its first MAX_MANIFEST_BYTES; if that says manifest, its read then fails on the
 * size.
 */
function kindInside(absolute: string, repoPath: string): FileKind | undefined | typeof UNTOLD {
  let fd: number | undefined;
  try {
    fd = openSync(absolute, 'r');
    const buffer = (sniffBuffer ??= Buffer.allocUnsafe(MAX_MANIFEST_BYTES));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return kindByContent(repoPath, decoder.decode(buffer.subarray(0, read)));
  } catch {
    return UNTOLD;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isFile(root: string, path: string): boolean {
  try {
    return statSync(join(root, path)).isFile();
  } catch {
    return false;
  }
}

/**
 * A regular file inside the root, as text: never a link that leaves the root, a FIFO or device (opened without
 * blocking, then refused), a file over `maxBytes`, or a binary file. The reason otherwise.
 */
export function readRegularInside(
  realRoot: string,
  root: string,
  path: string,
  maxBytes: number,
  plain = false,
): string | { readonly reason: string } {
  let real: string;
  try {
    real = plain ? under(realRoot, path) : realpathSync.native(join(root, path));
  } catch (error) {
    return { reason: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : 'cannot be read' };
  }
  if (real !== realRoot && !real.startsWith(realRoot + sep))
    return { reason: 'is a link to a file outside the repository' };
  let buffer: Buffer;
  let fd: number | undefined;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer for ever.
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { reason: 'is not a regular file' };
    if (stat.size > maxBytes)
      return {
        reason:
          maxBytes >= 1024 * 1024
            ? `is larger than ${maxBytes / 1024 / 1024} MiB`
            : `is larger than ${maxBytes / 1024} KiB`,
      };
    buffer = readAll(fd, stat.size, maxBytes);
  } catch {
    return { reason: 'cannot be read' };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (buffer.includes(0)) return utf16Text(buffer) ?? { reason: 'is binary' };
  const text = decoder.decode(buffer);
  return isLfsPointer(text) ? { reason: LFS_POINTER } : text;
}

const decoder = new TextDecoder('utf-8', { fatal: false });

/** The whole file, read into a buffer of the size fstat gave (a file that grew meanwhile is read to its end). */
function readAll(fd: number, size: number, maxBytes = Number.POSITIVE_INFINITY): Buffer {
  const first = Buffer.allocUnsafe(Math.max(size, 1));
  let filled = 0;
  while (filled < first.length) {
    const read = readSync(fd, first, filled, first.length - filled, null);
    if (read === 0) return first.subarray(0, filled);
    filled += read;
  }
  // The size fstat gave has been read: a file that grew meanwhile is read on to its end (or the limit).
  const chunks: Buffer[] = [first];
  let total = filled;
  for (;;) {
    const read = readSync(fd, PROBE, 0, PROBE.length, null);
    if (read === 0) break;
    total += read;
    if (total > maxBytes) throw new Error('the file grew past the size limit while it was read');
    chunks.push(Buffer.from(PROBE.subarray(0, read)));
  }
  return chunks.length === 1 ? first : Buffer.concat(chunks);
}

/** One buffer for the end-of-file probe of every read (most files end where fstat said). */
const PROBE = Buffer.allocUnsafe(64 * 1024);
