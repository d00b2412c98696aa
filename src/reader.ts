/**
 * Reading a repository: the files asked for, then the files their includes lead to (`-r` lines, the files a
 * Dockerfile copies and installs), each read and parsed once. The CLI (a checkout on disk), the App (blobs read
 * from GitHub) and tests (texts in memory) all read through here, so an include leads to the same file, with the
 * same kind, whoever reads.
 */
import { posix } from 'node:path';
import { includeCandidates } from './analysis/links.js';
import { groupBy, positions, UnionFind } from './util/collections.js';
import type { FileKind, ParsedFile } from './parsers/facts.js';
import { formatByName, isLockKind } from './parsers/formats.js';
import { isExplicitSpec } from './parsers/conda/parse.js';
import { classifyPath, lockCompanions, parseFile, sniffKind, type ParseOptions } from './parsers/index.js';
import {
  KUSTOMIZATION_NAMES,
  kustomizePatches,
  servingIndex,
  type KustomizePatch,
  type ServingIndex,
} from './parsers/kubernetes/parse.js';

/** The longest file checked: 1 MiB, as GitHub's web editor and most tools treat larger text as generated. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** The longest lock file checked: a large project's real locks are 1–10 MB, and they are read at over 20 MB/s. */
export const MAX_LOCK_BYTES = 32 * 1024 * 1024;

/**
 * The longest Kubernetes manifest checked: an operator's install bundle with its CRDs is one file of 1–2 MB
 * (volcano-sh/volcano's installer/volcano-development.yaml, 1.1 MB), read at about 10 MB/s.
 */
export const MAX_MANIFEST_BYTES = 8 * 1024 * 1024;

/** The longest file of this kind (named by `path` when the kind is not known yet) that is checked. */
export function maxBytes(path: string, kind: FileKind | undefined): number {
  const known = kind ?? classifyPath(path);
  return isLockKind(known) ? MAX_LOCK_BYTES : known === 'kubernetes' ? MAX_MANIFEST_BYTES : MAX_FILE_BYTES;
}

/** A file to check: its repository path, the parser for it and its text. */
export interface SourceFile {
  readonly path: string;
  readonly kind: FileKind;
  readonly text: string;
}

/** A path to read and the parser to read it with; without a kind, the file's content decides (sniffKind). */
export interface Listed {
  readonly path: string;
  readonly kind?: FileKind;
}

/**
 * Where a repository's files come from: a checkout on disk (the CLI), blobs from GitHub (the App), or texts in memory.
 */
export interface RepositoryReader {
  /**
   * The file at a repository path, read as `kind` (or as its content says, see `sourceOf`); undefined when it
   * cannot be checked (the reader keeps the reason).
   */
  read(path: string, kind: FileKind | undefined): SourceFile | undefined;
  /** Whether a repository path names a file: an include is followed to its first candidate that does. */
  isFile(path: string): boolean;
}

/** A file as read, parsed once, with the path each of its includes leads to. */
export interface ReadFile {
  readonly source: SourceFile;
  readonly parsed: ParsedFile;
  /**
   * For each of `parsed.includes`, its first candidate path that is a file of the repository (read already, or
   * queued to be read), if any. When that file is read, it is the file gate() links the include to.
   */
  readonly links: readonly (string | undefined)[];
}

/**
 * The kind of a file an include leads to. `pip install -r` and `conda install --file` read any name as a
 * requirements list, and `conda env create -f` reads YAML: so a name we do not recognise is a requirements file
 * unless it ends in .yml/.yaml; a file COPY renames is read by the name it is installed by (`target`). A Dockerfile is
 * included only by a manifest (a `dockerfile` include), read as one.
 */
export function includedKind(path: string, target?: string): FileKind {
  // The name the installer reads it by, where it names a format: `COPY pyproject_other.toml ./pyproject.toml` then
  // `pip install .` reads a pyproject.toml (FastVideo's ROCm Dockerfile).
  const named = target === undefined ? undefined : formatByName(target.slice(target.lastIndexOf('/') + 1));
  if (named && named.units !== 'stages') return named.kind;
  const format = formatByName(path);
  if (format && format.units !== 'stages') return format.kind;
  return /\.ya?ml$/i.test(path) ? 'conda' : 'requirements';
}

/** Why a file whose name does not say what it is, and whose content does not either, is not checked. */
export const UNKNOWN_KIND =
  'cannot tell what kind of file this is: a Dockerfile, a requirements file, a conda environment, a Kubernetes manifest, a project or lock file (its name does not say, and neither does its content); name the kind with --type';

/** A file read as `kind`, or as its content says when no kind is given; a string is the reason it cannot be read. */
export function sourceOf(path: string, text: string, kind: FileKind | undefined): SourceFile | string {
  const known = kind ?? sniffKind(text);
  return known ? { path, kind: known, text } : UNKNOWN_KIND;
}

/**
 * The paths given as files to read with the parser their names call for, or the kind `kinds` gives (what a walk
 * read in a YAML file's content); paths neither decides are left out.
 */
export function listed(paths: readonly string[], kinds?: ReadonlyMap<string, FileKind>): Listed[] {
  const out: Listed[] = [];
  for (const path of paths) {
    const kind = kinds?.get(path) ?? classifyPath(path);
    if (kind) out.push({ path, kind });
  }
  return out;
}

/**
 * Read and parse `files` in order, then the files their includes lead to, each once. An include is followed to
 * its first candidate path that is a file; with `follow` off, nothing beyond `files` is read and an include leads
 * to its first candidate among `files`.
 */
export function* readRepository(
  files: readonly Listed[],
  reader: RepositoryReader,
  follow = true,
  parse: ParseOptions = {},
): Generator<ReadFile> {
  const queue: Listed[] = [...files];
  /** Every path queued: true once it has been taken from the queue (read, or found unreadable). */
  const taken = new Map<string, boolean>();
  for (const file of queue) taken.set(file.path, false);
  for (let next = 0; next < queue.length; next++) {
    const { path, kind } = queue[next]!;
    if (taken.get(path)) continue;
    taken.set(path, true);
    const read = reader.read(path, kind);
    if (!read) continue;
    // A file a conda command installs (`micromamba create -f env.lock`) that is conda's explicit spec, whatever its
    // name: conda packages, not pip requirements.
    const source =
      read.kind === 'requirements' && isExplicitSpec(read.text) ? { ...read, kind: 'conda' as const } : read;
    const parsed = parseFile(source.path, source.text, source.kind, parse);
    const links = parsed.includes.map((include) => {
      const link = includeCandidates(parsed, include).find(
        (candidate) => taken.get(candidate) === true || (follow ? reader.isFile(candidate) : taken.has(candidate)),
      );
      if (link !== undefined && !taken.has(link)) {
        taken.set(link, false);
        queue.push({
          path: link,
          kind: include.kind === 'dockerfile' ? 'dockerfile' : includedKind(link, include.target),
        });
      }
      return link;
    });
    // A manifest's lock files beside it: read with it, so exact-pin can see that they pin it (lockCompanions).
    for (const lock of lockCompanions(path, source.kind)) {
      if (!follow || taken.has(lock) || !reader.isFile(lock)) continue;
      taken.set(lock, false);
      queue.push({ path: lock, kind: includedKind(lock) });
    }
    yield { source, parsed, links };
  }
}

/** A reader over texts in memory (tests, benchmarks, callers that fetched the files themselves). */
export function sourceReader(sources: readonly SourceFile[]): RepositoryReader {
  const byPath = new Map<string, SourceFile>();
  for (const source of sources) {
    if (byPath.has(source.path)) throw new Error(`sourceReader: two files have the path ${source.path}`);
    byPath.set(source.path, source);
  }
  return { read: (path) => byPath.get(path), isFile: (path) => byPath.has(path) };
}

/**
 * The files that belong with a change: every file joined by includes (either way), or as a manifest and its lock
 * files, to a changed file or to a file that includes a deleted one. A requirements file changed on its own is
 * checked with the Dockerfile that installs it, as a check of the whole repository would check it.
 */
export function affectedFiles(
  files: readonly ParsedFile[],
  changed: ReadonlySet<string>,
  removed: ReadonlySet<string> = new Set(),
): ParsedFile[] {
  return affectedIndices(files.map(outlineOf), changed, removed).map((i) => files[i]!);
}

/**
 * What deciding a change's files needs of one file: its path, its kind, and each include's candidate paths. Much
 * smaller than its facts: a large checkout is outlined file by file as it is read (the CLI's `check <file>`).
 */
export interface FileOutline {
  readonly path: string;
  readonly kind: FileKind;
  readonly candidates: readonly (readonly string[])[];
}

export function outlineOf(file: ParsedFile): FileOutline {
  return {
    path: file.path,
    kind: file.kind,
    candidates: file.includes.map((include) => includeCandidates(file, include)),
  };
}

/**
 * affectedFiles over outlines: the positions of the files that belong with the change, in order. An include leads to
 * its first candidate among the files, as gate() links it (resolveLinks).
 */
export function affectedIndices(
  files: readonly FileOutline[],
  changed: ReadonlySet<string>,
  removed: ReadonlySet<string> = new Set(),
): number[] {
  const sets = new UnionFind(files.length);
  const byPath = new Map(files.map((file, i) => [file.path, i]));
  files.forEach((file, i) => {
    for (const candidates of file.candidates) {
      const to = candidates.find((candidate) => byPath.has(candidate));
      if (to !== undefined && to !== file.path) sets.join(i, byPath.get(to)!);
    }
    // A manifest and its lock go together: a change to either is checked with both.
    for (const lock of lockCompanions(file.path, file.kind)) {
      const at = byPath.get(lock);
      if (at !== undefined) sets.join(i, at);
    }
  });
  const seeds = new Set<number>();
  files.forEach((file, i) => {
    if (
      changed.has(file.path) ||
      (removed.size > 0 && file.candidates.some((candidates) => candidates.some((path) => removed.has(path))))
    )
      seeds.add(sets.find(i));
  });
  const components = groupBy(positions(files.length), (i) => (seeds.has(sets.find(i)) ? sets.find(i) : undefined));
  return [...components.values()].flat().sort((a, b) => a - b);
}

/**
 * The serving index of the manifests among `files` (src/parsers/kubernetes/parse.ts): KServe runtimes that GPU
 * InferenceServices of other files name. Each manifest is read once for it, and its text not kept.
 */
export function servingOf(files: readonly Listed[], reader: RepositoryReader): ServingIndex | undefined {
  /** Folders of manifests that ask for GPUs and name no image: kustomize patches, where a kustomization is beside. */
  const folders = new Set<string>();
  const listed = new Map(files.map((file) => [file.path, file.kind] as const));
  const index = servingIndex(
    (function* () {
      for (const file of files) {
        if (file.kind !== 'kubernetes') continue;
        const source = reader.read(file.path, file.kind);
        if (!source) continue;
        if (source.text.includes('nvidia.com/') && !/^[ \t-]*image[ \t]*:/m.test(source.text))
          folders.add(posix.dirname(file.path));
        yield source;
      }
    })(),
  );
  const patches: Record<string, KustomizePatch> = {};
  for (const folder of folders)
    for (const name of KUSTOMIZATION_NAMES) {
      const path = folder === '.' ? name : `${folder}/${name}`;
      const source = reader.isFile(path) === true ? reader.read(path, 'kubernetes') : undefined;
      if (!source) continue;
      // Only files checked with the patch: the notice says the image is judged there.
      const checked = (other: string): boolean => listed.has(other);
      const textOf = (other: string): string | undefined => reader.read(other, listed.get(other))?.text;
      Object.assign(patches, kustomizePatches(source, checked, textOf));
      break;
    }
  if (Object.keys(patches).length === 0) return index;
  return { ...index, runtimes: index?.runtimes ?? {}, services: index?.services ?? {}, patches };
}

/**
 * The files a serving index pairs with `path`: the runtimes its services name, or the services that name its
 * runtimes. A check of some files checks their partners with them, as it does the files their includes join.
 */
export function servingPartners(index: ServingIndex | undefined, path: string): string[] {
  if (!index) return [];
  const out = new Set<string>();
  for (const [runtime, services] of Object.entries(index.services)) {
    const definers = index.runtimes[runtime] ?? [];
    if (services.some((service) => service.path === path)) for (const other of definers) out.add(other);
    if (definers.includes(path)) for (const service of services) out.add(service.path);
  }
  // A kustomize patch is judged by the resources it merges into.
  for (const resource of index.patches?.[path]?.resources ?? []) out.add(resource);
  out.delete(path);
  return [...out];
}
