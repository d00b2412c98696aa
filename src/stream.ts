/** Checking a whole repository as it is read, a window of files at a time (the CLI's `check`). */
import { includeCandidates, resolveLinks } from './analysis/links.js';
import { dirname } from './analysis/paths.js';
import { groupBy, UnionFind } from './util/collections.js';
import type { ParsedFile } from './parsers/facts.js';
import type { Report } from './finding.js';
import { Checker, type GateOptions, type PartialReport } from './gate.js';
import type { Baseline } from './baseline/schema.js';
import type { KnowledgeBase } from './knowledge/index.js';
import { parseFile, type ParseOptions } from './parsers/index.js';
import { readRepository, type Listed, type ReadFile, type RepositoryReader, type SourceFile } from './reader.js';
import type { LinkedFiles } from './verify.js';
import type { ServingIndex } from './parsers/kubernetes/parse.js';

export interface RepositoryOptions extends GateOptions {
  /** Files read between two checks of the groups that are complete (default 16; docs/performance.md says why). */
  readonly windowFiles?: number;
  /** Read the files that includes lead to, as well as the files given (default true). */
  readonly follow?: boolean;
  /** Told after each file read: how many so far, of how many given (the CLI's progress line on a terminal). */
  readonly progress?: (done: number, given: number) => void;
  /** The repository's serving index (servingOf in reader.ts), which every manifest is parsed with. */
  readonly serving?: ServingIndex;
}

export interface RepositoryCheck {
  readonly report: Report;
  /** Every file read, in the order read: the files given first, then the files includes led to. */
  readonly sources: readonly SourceFile[];
  /** Files parsed a second time because a file read later joined their group after it was checked. */
  readonly parsedAgain: number;
  /** The files joined by includes to some paths, parsed again on demand (to verify fixes; see verify.ts). */
  readonly linked?: LinkedFiles;
}

/**
 * Read a repository (see readRepository) and check it: the same report as gate() over every file read, with
 * each file parsed once as it is read, and without holding every file's facts at once.
 *
 * Files joined by includes form groups. A group is checked, and its facts dropped, as soon as every file its
 * includes lead to has been read; files laid out project by project are checked a few at a time while their
 * facts are still young. Memory then holds the texts, the findings and a window of facts instead of every fact
 * of the repository (`npm run bench` reports the peak).
 *
 * A group can only be judged on its own if no file read later includes one of its files. Such files nearly
 * always sit beside the group's files, and files are read directory by directory, so a group with a file read
 * in the last window waits while that file's directory is still being read. When a later file joins a checked
 * group anyway (say `services/api/Dockerfile` installs a top-level `requirements.txt` checked earlier), the
 * whole joined group is parsed again at the end and checked together, and the earlier findings for its files
 * are dropped (`parsedAgain` counts those files). An include whose file could not be read (binary, too large, a
 * link out of the repository) is linked at the end, as gate() links it: to its first candidate among the files
 * read. So the report is exactly gate()'s (test/stream.test.ts compares them); the order of the files only
 * decides how much is parsed twice.
 */
export function gateRepository(
  files: readonly Listed[],
  reader: RepositoryReader,
  baseline: Baseline,
  kb: KnowledgeBase,
  options: RepositoryOptions = {},
): RepositoryCheck {
  const checker = new Checker(baseline, options.images ? kb.withImages(options.images) : kb, options);
  const sources: SourceFile[] = [];
  const indexOf = new Map<string, number>();
  const groups = new Groups();
  /** Files read and not yet checked, by index, with the path each include leads to. */
  const held = new Map<number, Pick<ReadFile, 'parsed' | 'links'>>();
  /** Files read, by path of a file one of their includes leads to that is not read (yet). */
  const waiting = new Map<string, number[]>();
  /** How many of a held file's includes lead to files not read (yet). */
  const unread = new Map<number, number>();
  /** What each check found, in the order checked. */
  const parts: PartialReport[] = [];
  /** Link file i to the file at index `to`, which has been read. */
  const link = (i: number, to: number): void => {
    if (to === i) return;
    // A file read and no longer held has been checked: joined by a later one, its group's findings are not final.
    if (!held.has(to)) groups.spoil(to);
    groups.join(i, to);
  };

  const window = Math.max(1, options.windowFiles ?? 16);
  const parse = { images: baseline.images, ...(options.serving ? { serving: options.serving } : {}) };
  const given = files.length;
  for (const { source, parsed, links } of readRepository(files, reader, options.follow ?? true, parse)) {
    const i = groups.add();
    sources.push(source);
    options.progress?.(sources.length, given);
    indexOf.set(source.path, i);
    held.set(i, { parsed, links });
    for (const from of waiting.get(source.path) ?? []) {
      link(from, i);
      unread.set(from, unread.get(from)! - 1);
    }
    waiting.delete(source.path);
    for (const path of links) {
      if (path === undefined) continue;
      const to = indexOf.get(path);
      if (to !== undefined) link(i, to);
      else {
        const from = waiting.get(path);
        if (from) from.push(i);
        else waiting.set(path, [i]);
        unread.set(i, (unread.get(i) ?? 0) + 1);
      }
    }
    if (sources.length % window !== 0) continue;
    // Check the groups whose includes all lead to files read, and that no checked file belongs to. A file that
    // joins a group nearly always sits beside one of its files, and files are read directory by directory: so a
    // group with a file read in this window, in the directory being read, waits for the next window.
    const ready: number[] = [];
    const here = dirname(source.path);
    const recent = sources.length - window;
    for (const [root, members] of groupBy([...held.keys()], (at) => groups.find(at))) {
      if (
        groups.spoiled(root) ||
        members.some((at) => unread.get(at) || (at >= recent && dirname(sources[at]!.path) === here))
      )
        continue;
      ready.push(...members);
    }
    if (ready.length === 0) continue;
    // Their links are the ones followed while reading: every file they lead to was read and is held with them.
    // (gate() would find the same ones: a candidate before the one followed was neither read nor a file.)
    const followed = new Map(ready.map((at) => [held.get(at)!.parsed, held.get(at)!.links]));
    for (const at of ready) held.delete(at);
    const files = [...followed.keys()];
    parts.push(
      checker.checkFiles(
        files,
        resolveLinks(files, (file, k) => followed.get(file)![k]),
      ),
    );
  }

  // Includes whose file was never read: gate() links them to their first candidate among the files read.
  for (const from of new Set([...waiting.values()].flat())) {
    const { parsed } = held.get(from)!;
    for (const include of parsed.includes) {
      const path = includeCandidates(parsed, include).find((candidate) => indexOf.has(candidate));
      if (path !== undefined) link(from, indexOf.get(path)!);
    }
  }
  // What is left: the files still held, and the spoiled groups, whose checked files are parsed again and whose
  // earlier findings are dropped. Each group is checked whole, once.
  const rest: ParsedFile[] = [];
  const again = new Set<string>();
  for (const [i, source] of sources.entries()) {
    const file = held.get(i);
    if (file) rest.push(file.parsed);
    else if (groups.spoiled(groups.find(i))) {
      again.add(source.path);
      rest.push(parseFile(source.path, source.text, source.kind, parse));
    }
  }
  // Every finding is about a file of its own check, so the earlier findings of the files checked again are
  // those with their paths.
  const final =
    again.size === 0
      ? parts
      : parts.map(
          (part): PartialReport => ({
            findings: part.findings.filter((finding) => !again.has(finding.location.path)),
            waived: part.waived.filter((finding) => !again.has(finding.location.path)),
            ...(part.verdicts ? { verdicts: part.verdicts.filter((verdict) => !again.has(verdict.path)) } : {}),
          }),
        );
  if (rest.length > 0) final.push(checker.checkFiles(rest));
  return {
    report: checker.report(sources.length, [checker.checkPolicy(), ...final]),
    sources,
    parsedAgain: again.size,
    linked: linkedSources(sources, indexOf, groups, parse),
  };
}

/** LinkedFiles over the groups of a repository read: each group's files parsed once, when a fix first needs them. */
function linkedSources(
  sources: readonly SourceFile[],
  indexOf: ReadonlyMap<string, number>,
  groups: UnionFind,
  parse: ParseOptions,
): LinkedFiles {
  let members: Map<number, number[]> | undefined;
  const parsed = new Map<number, ParsedFile>();
  return (paths) => {
    members ??= groupBy(
      sources.map((_, i) => i),
      (i) => groups.find(i),
    );
    const roots = new Set<number>();
    for (const path of paths) {
      const at = indexOf.get(path);
      if (at === undefined) return undefined;
      roots.add(groups.find(at));
    }
    return [...roots].flatMap((root) =>
      members!.get(root)!.map((i) => {
        let file = parsed.get(i);
        if (!file) {
          const source = sources[i]!;
          file = parseFile(source.path, source.text, source.kind, parse);
          parsed.set(i, file);
        }
        return file;
      }),
    );
  };
}

/** Groups of linked files, with a "spoiled" mark that follows every merge. */
class Groups extends UnionFind {
  private readonly marks: boolean[] = [];

  override add(): number {
    this.marks.push(false);
    return super.add();
  }

  override join(a: number, b: number): number {
    const marked = this.marks[this.find(a)]! || this.marks[this.find(b)]!;
    const root = super.join(a, b);
    this.marks[root] = marked;
    return root;
  }

  spoil(i: number): void {
    this.marks[this.find(i)] = true;
  }

  spoiled(root: number): boolean {
    return this.marks[root]!;
  }
}
