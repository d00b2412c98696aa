import { includeCandidates } from './analysis/links.js';
import { groupBy, UnionFind } from './collections.js';
import type { FileKind, ParsedFile } from './facts.js';
import type { Finding, Report } from './finding.js';
import { Checker, type GateOptions, type PartialReport } from './gate.js';
import type { Baseline } from './baseline/schema.js';
import type { KnowledgeBase } from './knowledge/index.js';
import { parseFile } from './parsers/index.js';

/** A file to check: its repository path, the parser for it and its text. */
export interface SourceFile {
  readonly path: string;
  readonly kind: FileKind;
  readonly text: string;
}

export interface RepositoryOptions extends GateOptions {
  /** Files parsed between two checks of the groups that are complete (default 16: measured fastest of 4–256). */
  readonly windowFiles?: number;
}

/**
 * The same report as `gate()` over every file of a repository, without holding every file's facts at once.
 *
 * Files are parsed in order. Every include is resolved when its file is parsed (against all the repository's
 * paths, as gate() resolves them), and files joined by includes form groups. A group is checked, and its facts
 * dropped, as soon as every file it includes has been parsed; files laid out project by project are checked a
 * few at a time while their facts are still young. Memory then holds the texts, the findings and a window of
 * facts instead of every fact of the repository (`npm run bench`: peak RSS of a 10,000-file run 124 MiB
 * instead of 177 MiB).
 *
 * A group can only be judged on its own if no file parsed later includes one of its files. When one does (say
 * `services/api/Dockerfile` installs a top-level `requirements.txt` checked earlier), the whole joined group is
 * parsed again at the end and checked together, and the earlier findings for its files are dropped. So the
 * report is exactly gate()'s (test/stream.test.ts compares them); the order of the files only decides how
 * much is parsed twice.
 */
export function gateRepository(sources: readonly SourceFile[], baseline: Baseline, kb: KnowledgeBase, options: RepositoryOptions = {}): Report {
  const checker = new Checker(baseline, kb, options);
  const count = sources.length;
  const indexOf = new Map<string, number>();
  for (const [i, source] of sources.entries()) indexOf.set(source.path, i);
  if (indexOf.size !== count) throw new Error('gateRepository: every file must have a path of its own');

  const groups = new Groups(count);
  /** Parsed files not yet checked, by index. */
  const held = new Map<number, ParsedFile>();
  /** Included files of each file, by index. */
  const includes: number[][] = [];
  /** Whether a file has been checked, and the findings about it. */
  const checked = new Uint8Array(count);
  const findingsOf = new Map<number, Finding[]>();
  const waivedOf = new Map<number, Finding[]>();
  const record = (into: Map<number, Finding[]>, findings: readonly Finding[]): void => {
    for (const finding of findings) {
      const at = indexOf.get(finding.location.path)!;
      const list = into.get(at);
      if (list) list.push(finding);
      else into.set(at, [finding]);
    }
  };

  const check = (files: readonly ParsedFile[]): void => {
    const part = checker.checkFiles(files);
    for (const file of files) checked[indexOf.get(file.path)!] = 1;
    record(findingsOf, part.findings);
    record(waivedOf, part.waived);
  };

  const window = Math.max(1, options.windowFiles ?? 16);
  for (let start = 0; start < count; start += window) {
    const end = Math.min(count, start + window);
    for (let i = start; i < end; i++) {
      const source = sources[i]!;
      const parsed = parseFile(source.path, source.text, source.kind);
      held.set(i, parsed);
      const targets: number[] = [];
      for (const include of parsed.includes) {
        // gate() links an include to its first candidate path that is one of the files checked.
        const candidate = includeCandidates(parsed, include).find((path) => indexOf.has(path));
        const target = candidate === undefined ? undefined : indexOf.get(candidate)!;
        if (target === undefined || target === i) continue;
        targets.push(target);
        // A file checked already is joined by a later one: its group's findings are not final.
        if (checked[target]) groups.spoil(target);
        groups.join(i, target);
      }
      includes[i] = targets;
    }
    // Check the groups whose files and includes are all parsed and that no checked file belongs to.
    const members = groupBy([...held.keys()], (i) => groups.find(i));
    const ready: ParsedFile[] = [];
    for (const [root, files] of members) {
      if (groups.spoiled(root) || files.some((i) => includes[i]!.some((target) => target >= end))) continue;
      for (const i of files) {
        ready.push(held.get(i)!);
        held.delete(i);
      }
    }
    if (ready.length > 0) check(ready);
  }

  // Spoiled groups: parse again what was checked, drop its findings, and check each whole group once.
  const again: ParsedFile[] = [];
  for (let i = 0; i < count; i++) {
    if (!groups.spoiled(groups.find(i))) continue;
    if (checked[i]) {
      findingsOf.delete(i);
      waivedOf.delete(i);
      const source = sources[i]!;
      again.push(parseFile(source.path, source.text, source.kind));
    } else {
      again.push(held.get(i)!);
      held.delete(i);
    }
  }
  if (again.length > 0) check(again);
  // Nothing is held now: after the last window every include is parsed, so every group was ready or spoiled.

  const files: PartialReport = { findings: [...findingsOf.values()].flat(), waived: [...waivedOf.values()].flat() };
  return checker.report(count, [checker.checkPolicy(), files]);
}

/** Groups of linked files, with a "spoiled" mark that follows every merge. */
class Groups extends UnionFind {
  private readonly marks: Uint8Array;

  constructor(count: number) {
    super(count);
    this.marks = new Uint8Array(count);
  }

  override join(a: number, b: number): number {
    const marked = this.marks[this.find(a)]! | this.marks[this.find(b)]!;
    const root = super.join(a, b);
    this.marks[root] = marked;
    return root;
  }

  spoil(i: number): void {
    this.marks[this.find(i)] = 1;
  }

  spoiled(root: number): boolean {
    return this.marks[root] === 1;
  }
}
