import type { CopyFact, IncludeFact, ParsedFile } from '../parsers/facts.js';
import { formatOf } from '../parsers/formats.js';
import { posix } from 'node:path';
import { dirname, joinRepo } from './paths.js';
import { StageTree } from './stages.js';

/**
 * Where a file that another file pulls in lives in the repository, in order of preference. Requirements
 * includes are relative to the including file. A Dockerfile's `pip install -r X` names a path inside the
 * image, so it is traced back through the stage's COPY instructions to the build context, which is assumed
 * to be the Dockerfile's directory (then each directory above it, up to the repository root). Paths that leave
 * the repository are dropped.
 */
export function includeCandidates(file: ParsedFile, include: IncludeFact): string[] {
  const base = dirname(file.path);
  // `-r file:requirements.txt` (a conda pip: list, a requirements file) names a local path; a file a RUN copied over
  // the one installed is read where that copy came from.
  const target = (include.copiedFrom ?? include.target).replace(/^file:(?!\/\/)/i, '');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return [];
  // A manifest names the Dockerfile that builds an image by its path from the repository root.
  if (include.kind === 'dockerfile') return unique([joinRepo(target)]);
  // Only a Dockerfile's paths come through COPY from its build context.
  if (formatOf(file.kind).units !== 'stages') return unique([joinRepo(base, target)]);

  const stage = file.contexts[include.context]?.stage ?? 0;
  const contexts = contextDirectories(base);
  // A file of a folder the stage cloned is the clone's: no COPY brought it (one of a file of the same name elsewhere
  // would match it by name), and after a `cd` into the clone a relative path is not the build context's. A Dockerfile
  // may clone its own repository (aibrix's, ColossalAI's): the file at the same path below a folder of the build
  // context (`python/aibrix_kvcache/requirements/build.txt`) is that repository's, as no other repository's path is
  // likely to be; a bare name (`requirements.txt`, which apex's clone has as the checkout does) says nothing.
  if (include.cloned)
    return include.cloned.path.includes('/')
      ? unique(contexts.map((context) => joinRepo(context, include.cloned!.path)))
      : [];
  const candidates: (string | undefined)[] = [];
  const copies = CopyIndex.of(file);
  // In the stage's WORKDIR first (`COPY . /workspace/workflow`, `WORKDIR /workspace/workflow/optimization`, `pip
  // install -r requirements.txt`: optimization/requirements.txt); then the path as written, matched as before.
  if (include.workdir !== undefined)
    for (const relative of copies.sourcesOf(stage, inWorkdir(include, target)))
      for (const context of contexts) candidates.push(joinRepo(context, relative));
  // A local project's folder is the WORKDIR's where it is known (`WORKDIR /app/sub`, `pip install .`): not the same
  // name elsewhere in what the stage copied (the project at the build context's root).
  if (!(include.copiedOnly && include.workdir !== undefined))
    for (const relative of copies.sourcesOf(stage, target))
      for (const context of contexts) candidates.push(joinRepo(context, relative));
  if (!target.startsWith('/') && !include.copiedOnly)
    for (const context of contexts) candidates.push(joinRepo(context, target));
  return unique(candidates);
}

/** An include's path in its stage's WORKDIR, worked out once (the reader, the links and the rules each ask). */
function inWorkdir(include: IncludeFact, target: string): string {
  let path = IN_WORKDIR.get(include);
  if (path === undefined) IN_WORKDIR.set(include, (path = posix.join(include.workdir!, inImage(target))));
  return path;
}

const IN_WORKDIR = new WeakMap<IncludeFact, string>();

/**
 * The folders a Dockerfile's build context may be, nearest first: its own folder, each folder above it, the
 * repository root. `docker build -f resources/docker/Dockerfile .` builds from the root of a checkout, and a monorepo's
 * `docker build -f services/api/docker/Dockerfile services/api` from a folder in between; the root is also the
 * folder checked, which need not be the checkout's root (`cuda-gatekeeper check checkout` from the folder above).
 * Where a COPY source is in none of them, the build itself fails.
 */
function contextDirectories(base: string): string[] {
  const directories = [base];
  for (let at = base; at !== ''; ) directories.push((at = dirname(at)));
  return directories;
}

interface CopiedSource {
  /** Position in file order: the copy's index among the file's copies, then the source's within the copy. */
  readonly order: number;
  readonly copy: CopyFact;
  readonly source: string;
  /** The earlier stage a `COPY --from` copies out of (the source is a path there); undefined: the build context. */
  readonly from: number | undefined;
}

/**
 * Copies of one source to one destination, wherever they are in the file: for any path they give the same answer,
 * so a stage needs only the first of them it sees. The stages that see one of them are the subtrees of the
 * topmost owners (`roots`: disjoint intervals of the stage tree's entry numbers, searched by halving).
 */
interface SameCopies {
  readonly entries: CopiedSource[];
  roots?: { readonly enter: number; readonly exit: number; readonly entry: CopiedSource }[];
}

/**
 * The COPY instructions of a Dockerfile, indexed so that the copies that may have put a file at a path are found
 * without walking every copy of every stage above: file sources by their name and their destination, globs and
 * directories apart, and copies of the same source to the same destination once. A stage sees the copies of the
 * stages it builds on. A file of thousands of chained stages, each copying and installing a requirements file,
 * walked every copy above each install: quadratic; now each lookup costs the logarithm of the number of copies of
 * one kind. A `COPY --from` of an earlier stage of the file leads to what that stage had at the source path (`COPY
 * requirements.txt /src/` in a builder, `COPY --from=builder /src/requirements.txt /app/` in the image); one from an
 * image leads nowhere.
 */
class CopyIndex {
  private readonly same = new Map<string, SameCopies>();
  private readonly byName = new Map<string, SameCopies[]>();
  private readonly byDestination = new Map<string, SameCopies[]>();
  private readonly patterns: SameCopies[] = [];
  private readonly directories: SameCopies[] = [];
  private readonly enter: number[] = [];
  private readonly exit: number[] = [];
  private readonly answers = new Map<string, readonly string[]>();

  private static readonly cache = new WeakMap<ParsedFile, CopyIndex>();

  static of(file: ParsedFile): CopyIndex {
    let index = CopyIndex.cache.get(file);
    if (!index) CopyIndex.cache.set(file, (index = new CopyIndex(file)));
    return index;
  }

  private constructor(file: ParsedFile) {
    let order = 0;
    for (const copy of file.copies) {
      // A copy from an image (no stage of the file) leads nowhere; one from a stage, to what that stage had.
      if (copy.fromStage !== undefined && copy.fromIndex === undefined) continue;
      const from = copy.fromIndex;
      for (const { path } of copy.sources) {
        const entry: CopiedSource = { order: order++, copy, source: path, from };
        const key = `${from ?? ''}\u0000${path}\u0000${copy.destination}`;
        const known = this.same.get(key);
        if (known) {
          known.entries.push(entry);
          continue;
        }
        const group: SameCopies = { entries: [entry] };
        this.same.set(key, group);
        if (isDirectorySource(path)) this.directories.push(group);
        else if (/[*?[]/.test(path)) this.patterns.push(group);
        else {
          push(this.byName, baseName(path), group);
          push(this.byDestination, inImage(copy.destination), group);
          const absolute = absoluteDestination(copy);
          if (absolute !== undefined) push(this.byDestination, absolute, group);
        }
      }
    }
    // Entry and exit numbers of a depth-first walk of the stage tree: a is an ancestor of b (or b itself) when
    // a's interval holds b's. Parents come earlier in the file, so one pass in order builds the children lists.
    const tree = StageTree.of(file);
    const children: number[][] = Array.from({ length: tree.stageCount }, () => []);
    const roots: number[] = [];
    for (let stage = 0; stage < tree.stageCount; stage++) {
      const parent = tree.parent(stage);
      if (parent === undefined) roots.push(stage);
      else children[parent]!.push(stage);
    }
    let clock = 0;
    const stack: [number, number][] = roots.reverse().map((root) => [root, 0]);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [stage, next] = top;
      if (next === 0) this.enter[stage] = clock++;
      const kids = children[stage]!;
      if (next < kids.length) {
        top[1] = next + 1;
        stack.push([kids[next]!, 0]);
      } else {
        this.exit[stage] = clock++;
        stack.pop();
      }
    }
  }

  /** The first copy of a kind that `stage` sees (it is that copy's stage or builds on it), if any. */
  private firstSeen(group: SameCopies, stage: number): CopiedSource | undefined {
    const enter = this.enter[stage];
    const exit = this.exit[stage];
    if (enter === undefined || exit === undefined) return group.entries.find((entry) => entry.copy.stage === stage);
    if (!group.roots) {
      // The topmost owners: a stage's ancestors come earlier in the file, so the first entry of a subtree is its root.
      const owners = group.entries
        .map((entry) => ({ enter: this.enter[entry.copy.stage] ?? -1, exit: this.exit[entry.copy.stage] ?? -1, entry }))
        .filter((owner) => owner.enter >= 0)
        .sort((a, b) => a.enter - b.enter || a.entry.order - b.entry.order);
      const roots: NonNullable<SameCopies['roots']> = [];
      for (const owner of owners) {
        const last = roots.at(-1);
        if (last && owner.enter <= last.exit) continue; // inside the last root's subtree
        roots.push(owner);
      }
      group.roots = roots;
    }
    const roots = group.roots;
    let low = 0;
    let high = roots.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (roots[middle]!.enter <= enter) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    const root = found >= 0 ? roots[found]! : undefined;
    return root && exit <= root.exit ? root.entry : undefined;
  }

  /** The source-relative paths of what the copies `stage` sees may have put at `target`, in file order. */
  sourcesOf(stage: number, target: string): readonly string[] {
    const key = `${stage}\u0000${target}`;
    const known = this.answers.get(key);
    if (known) return known;
    const groups = new Set([
      ...(this.byName.get(baseName(target)) ?? []),
      ...(this.byDestination.get(inImage(target)) ?? []),
      ...this.patterns,
      ...this.directories,
    ]);
    const seen: CopiedSource[] = [];
    for (const group of groups) {
      const entry = this.firstSeen(group, stage);
      if (entry) seen.push(entry);
    }
    seen.sort((a, b) => a.order - b.order);
    const out: string[] = [];
    for (const entry of seen)
      for (const relative of pathsInsideCopy(entry.copy, entry.source, target)) {
        // From an earlier stage: what that stage had there (each step goes to an earlier stage, so it ends).
        if (entry.from === undefined) out.push(relative);
        else out.push(...this.sourcesOf(entry.from, relative));
      }
    this.answers.set(key, out);
    return out;
  }
}

/**
 * A relative COPY destination as a path in the image, where the stage's WORKDIR at the COPY is known (`COPY . .` under
 * `WORKDIR /app` writes to /app); a destination that names a folder keeps its trailing slash.
 */
function absoluteDestination(copy: CopyFact): string | undefined {
  if (copy.workdir === undefined || copy.destination.startsWith('/')) return undefined;
  let known = ABSOLUTE.get(copy);
  if (known === undefined) ABSOLUTE.set(copy, (known = joinDestination(copy.workdir, copy.destination)));
  return known;
}

/** Each copy's destination in the image, worked out once (asked once per path an install names). */
const ABSOLUTE = new WeakMap<CopyFact, string>();

function joinDestination(workdir: string, destination: string): string {
  const folder = destination === '.' || destination.endsWith('/');
  const joined = posix.join(workdir, destination);
  return folder && !joined.endsWith('/') ? `${joined}/` : joined;
}

/** A path in the image as COPY and pip write it, without the `./` that names the working directory (mlrun's
 * `COPY … ./mlrun-image-requirements.txt` and `pip install -r mlrun-image-requirements.txt` are one file). */
function inImage(path: string): string {
  return path.startsWith('./') ? path.replace(/^(?:\.\/+)+/, '') : path;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function baseName(path: string): string {
  return path.replace(/\/+$/, '').split('/').pop() ?? path;
}

/**
 * How a COPY source reads: a directory (`.`, `src/`), a file (a name with an extension, a glob), or either (a name
 * without an extension: `Pipfile` and `src` look alike, and only the build context tells).
 */
function sourceShape(source: string): 'directory' | 'file' | 'either' {
  if (source === '.' || source.endsWith('/')) return 'directory';
  return /\.[A-Za-z0-9]+$/.test(baseName(source)) || /[*?[]/.test(source) ? 'file' : 'either';
}

function isDirectorySource(source: string): boolean {
  return sourceShape(source) !== 'file';
}

/**
 * If `target` (a path in the image) was put there by COPY of `source`, the source-relative paths it may be: one, or
 * for a source that may be a file or a directory, the file first (`COPY gpu-test/Pipfile /code/gpu-test/` puts
 * `gpu-test/Pipfile` at `/code/gpu-test/Pipfile`; were it a directory, `gpu-test/Pipfile/Pipfile` would be there).
 */
function pathsInsideCopy(copy: CopyFact, source: string, target: string): string[] {
  const shape = sourceShape(source);
  const out: string[] = [];
  if (shape !== 'directory') {
    const asFile = fileInsideCopy(copy, source, target);
    if (asFile !== undefined) out.push(asFile);
  }
  if (shape !== 'file') {
    const dest = inImage(copy.destination).replace(/\/+$/, '');
    const absolute = absoluteDestination(copy)?.replace(/(.)\/+$/, '$1');
    const folder = source.replace(/\/+$/, '');
    if (!target.startsWith('/')) out.push(`${folder}/${inImage(target)}`);
    else if (target.startsWith(`${dest}/`)) out.push(`${folder}/${target.slice(dest.length + 1)}`);
    else if (absolute !== undefined && target.startsWith(absolute === '/' ? '/' : `${absolute}/`))
      out.push(`${folder}/${target.slice(absolute === '/' ? 1 : absolute.length + 1)}`);
  }
  return out;
}

/** The source-relative path of `target` if COPY of the file `source` put it there. */
function fileInsideCopy(copy: CopyFact, source: string, target: string): string | undefined {
  const destination = inImage(copy.destination);
  const absolute = absoluteDestination(copy);
  target = inImage(target);
  const sourceBase = baseName(source);
  const targetBase = target.split('/').pop() ?? target;
  if (
    targetBase === sourceBase ||
    target === destination ||
    target === absolute ||
    (destination.endsWith('/') && target === `${destination}${sourceBase}`)
  )
    return source;
  if (/[*?[]/.test(source) && globMatch(source.split('/').pop() ?? source, targetBase))
    return `${dirname(source)}/${targetBase}`.replace(/^\//, '');
  return undefined;
}

function globMatch(pattern: string, name: string): boolean {
  // Only * and ? are wildcards here; every other character (brackets included) is literal.
  const regex = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return regex.test(name);
}

function unique(paths: readonly (string | undefined)[]): string[] {
  return [...new Set(paths.filter((path): path is string => path !== undefined && path !== ''))];
}

export interface Link {
  readonly from: ParsedFile;
  readonly include: IncludeFact;
  readonly to: ParsedFile;
}

/**
 * Resolve every include of every file against the set of files we have: an include leads to its first candidate
 * among them, or to the path `leadsTo` names for it (the k-th include of a file) when the caller has followed it
 * already. A file never links to itself.
 */
export function resolveLinks(
  files: readonly ParsedFile[],
  leadsTo?: (file: ParsedFile, k: number) => string | undefined,
): Map<ParsedFile, Link[]> {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const links = new Map<ParsedFile, Link[]>();
  for (const file of files) {
    const list: Link[] = [];
    file.includes.forEach((include, k) => {
      const path = leadsTo
        ? leadsTo(file, k)
        : includeCandidates(file, include).find((candidate) => byPath.has(candidate));
      const to = path === undefined ? undefined : byPath.get(path);
      if (to && to !== file) list.push({ from: file, include, to });
    });
    links.set(file, list);
  }
  return links;
}
