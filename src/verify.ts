/**
 * Fixes verified before they are offered. A fix is safe only if applying it, alone and together with every other
 * safe fix of the report, gives files on which the gate finds nothing it did not find before (of any level, with
 * the same knowledge base and baseline). Every safe fix of a report is checked here, whoever offers it: the CLI's
 * `--fix` and its output, the App's Apply fixes button, review suggestions and `/cuda-check fix`, and the files
 * `plan --write` writes. A fix that fails keeps its edits as an unsafe suggestion and says what applying it gives.
 *
 * Only the files a fix touches, and the files joined to them by includes, are checked again: the rest of the
 * repository cannot change its findings.
 */
import type { ParsedFile } from './parsers/facts.js';
import type { Finding, Fix, Report, TextEdit } from './finding.js';
import { applyEdits } from './analysis/edits.js';
import { resolveLinks } from './analysis/links.js';
import { parseFile } from './parsers/index.js';
import { UnionFind } from './util/collections.js';

/** Checks a set of files as the report being verified was checked (same baseline, knowledge base and options). */
export type Regate = (files: readonly ParsedFile[]) => Report;

/**
 * The files joined by includes (either way) to any of `paths`, parsed: what a fix to those paths can change the
 * findings of. Undefined for a path that was not checked.
 */
export type LinkedFiles = (paths: ReadonlySet<string>) => readonly ParsedFile[] | undefined;

/** LinkedFiles over a list of parsed files: the components of their include links, worked out once. */
export function linkedWithin(files: readonly ParsedFile[]): LinkedFiles {
  let components: { readonly of: Map<string, number>; readonly members: Map<number, ParsedFile[]> } | undefined;
  const build = () => {
    const sets = new UnionFind(files.length);
    const indexOf = new Map(files.map((file, i) => [file, i]));
    for (const [from, links] of resolveLinks(files))
      for (const link of links) sets.join(indexOf.get(from)!, indexOf.get(link.to)!);
    const of = new Map<string, number>();
    const members = new Map<number, ParsedFile[]>();
    files.forEach((file, i) => {
      const root = sets.find(i);
      of.set(file.path, root);
      const list = members.get(root);
      if (list) list.push(file);
      else members.set(root, [file]);
    });
    return { of, members };
  };
  return (paths) => {
    components ??= build();
    const roots = new Set<number>();
    for (const path of paths) {
      const root = components.of.get(path);
      if (root === undefined) return undefined;
      roots.add(root);
    }
    return [...roots].flatMap((root) => components!.members.get(root)!);
  };
}

/** The report with every safe fix verified: those that add a finding become unsafe, with the reason. */
export function verifyFixes(report: Report, files: readonly ParsedFile[] | LinkedFiles, regate: Regate): Report {
  const safe = report.findings.filter((finding) => finding.fix?.safety === 'safe');
  if (safe.length === 0) return report;
  const linked = typeof files === 'function' ? files : linkedWithin(files);
  const verdicts = new Map<Finding, string>();
  const notes = new Map<Finding, string>();

  // Fixes whose files are joined by includes are judged together: group them by the files they make up.
  const groups = new Map<string, { files: ParsedFile[]; fixes: Finding[] }>();
  const pathsOf = onePerList((edits) => new Set(edits.map((edit) => edit.path)));
  for (const finding of safe) {
    const members = linked(pathsOf(finding.fix!.edits));
    if (!members) {
      verdicts.set(finding, 'edits a file that was not checked');
      continue;
    }
    const key = members.map((file) => file.path).join('\n');
    const group = groups.get(key) ?? { files: [...members], fixes: [] };
    group.fixes.push(finding);
    groups.set(key, group);
  }
  const byPath = new Map<string, Finding[]>();
  for (const finding of report.findings) {
    const list = byPath.get(finding.location.path);
    if (list) list.push(finding);
    else byPath.set(finding.location.path, [finding]);
  }
  // Groups whose files overlap (a fix that edits two groups) are merged, so each file is in one group.
  for (const group of mergeOverlapping([...groups.values()])) {
    // The report already holds the group's findings: a group is a whole component of linked files, which the
    // gate checks on its own, so gating it again would give the same ones (other files' and the baseline's aside).
    const paths = new Set(group.files.map((file) => file.path));
    const ours = (findings: readonly Finding[]): Finding[] =>
      findings.filter((finding) => paths.has(finding.location.path));
    const before = countFindings([...paths].flatMap((path) => byPath.get(path) ?? []));
    // Many findings offer one and the same edits (every pin of a torch family offers the move of the whole family,
    // every stage the edit of one shared ARG): the gate judges each distinct set of edits once.
    const judged = new Map<string, Finding | undefined>();
    const added = (fixes: readonly Finding[]): Finding | undefined => {
      const edits = merged(editsOf(fixes));
      if (!edits) return undefined;
      const key = editsKey(edits);
      if (judged.has(key)) return judged.get(key);
      const after = regate(group.files.map((file) => edited(file, edits)));
      const gives = newFinding(before, ours(after.findings));
      judged.set(key, gives);
      return gives;
    };
    verifyGroup(group.fixes, added, verdicts, notes);
  }
  if (verdicts.size === 0 && notes.size === 0) return report;
  return {
    ...report,
    findings: report.findings.map((finding) => {
      const verdict = verdicts.get(finding);
      if (verdict) return downgrade(finding, verdict);
      const note = notes.get(finding);
      return note ? { ...finding, fix: { ...finding.fix!, verification: note } } : finding;
    }),
  };
}

/**
 * Fixes of one group verified one by one (each alone, then together); the rest in blocks, together. Each check alone
 * costs a re-check of the whole group, so a group's cost grows with its fixes times its size up to this count: kept
 * small, so that a file twice as large costs twice as much to verify (test/growth.test.ts), not four times.
 */
export const ALONE_PER_GROUP = 8;
/**
 * Re-checks spent on the blocks of one group beyond those: a bound, so that verification stays linear. Halving finds a
 * failing fix in a block of n with about 2·log2(n) re-checks: 16 find two or three among a hundred. Where most fixes
 * fail (a file of conflicting pins), the budget runs out early and the rest are not offered as safe, instead of a
 * re-check per fix.
 */
export const BLOCK_BUDGET = 16;

/**
 * Verify the safe fixes of one group of linked files. Re-checking the group costs as much as the group is large, so
 * re-checking it once per fix is quadratic in a file with hundreds of fixes (docs/performance.md). The first
 * ALONE_PER_GROUP fixes are checked alone and then together, as always; the others are checked together with those
 * kept, in blocks that are halved where a block adds a finding (group testing: a few re-checks per failing fix). A fix
 * kept from a block is safe together with the other safe fixes of the group, which is how `--fix`, Apply fixes and
 * `plan --write` apply them; its verification says it was not checked alone. Where the budget runs out, the fixes left
 * are not offered as safe.
 */
function verifyGroup(
  fixes: readonly Finding[],
  added: (fixes: readonly Finding[]) => Finding | undefined,
  verdicts: Map<Finding, string>,
  notes: Map<Finding, string>,
): void {
  const candidates: Finding[] = [];
  const mergedOnce = onePerList(merged);
  for (const finding of fixes) {
    if (mergedOnce(finding.fix!.edits)) candidates.push(finding);
    else verdicts.set(finding, 'its edits overlap');
  }
  const alone = candidates.slice(0, ALONE_PER_GROUP);
  const rest = candidates.slice(ALONE_PER_GROUP);
  const accepted: Finding[] = [];
  for (const finding of alone) {
    const gives = added([finding]);
    if (gives) verdicts.set(finding, describe(gives));
    else accepted.push(finding);
  }
  // Together: where two fixes that are each safe conflict, keep the earlier ones and judge each later one with them.
  let kept: Finding[] = accepted;
  if (accepted.length >= 2 && !(merged(editsOf(accepted)) && !added(accepted))) {
    kept = [];
    for (const finding of accepted) {
      const together = [...kept, finding];
      if (!merged(editsOf(together))) {
        verdicts.set(finding, 'its edits overlap those of another safe fix');
        continue;
      }
      const gives = added(together);
      if (gives) verdicts.set(finding, `${describe(gives)} together with the other safe fixes`);
      else kept.push(finding);
    }
  }
  if (rest.length === 0) return;
  const note = `safe together with the other safe fixes of these files; with more than ${ALONE_PER_GROUP} in one group, not checked alone`;
  let budget = BLOCK_BUDGET;
  const blocks: Finding[][] = [rest];
  while (blocks.length > 0) {
    const block = blocks.shift()!;
    if (budget <= 0) {
      for (const finding of block)
        verdicts.set(
          finding,
          `could not be verified (more than ${ALONE_PER_GROUP + rest.length - 1} fixes in one group)`,
        );
      continue;
    }
    budget--;
    const together = [...kept, ...block];
    const overlaps = !merged(editsOf(together));
    const gives = overlaps ? undefined : added(together);
    if (!gives && !overlaps) {
      kept = together;
      for (const finding of block) notes.set(finding, note);
      continue;
    }
    if (block.length === 1) {
      verdicts.set(
        block[0]!,
        overlaps
          ? 'its edits overlap those of another safe fix'
          : `${describe(gives!)} together with the other safe fixes`,
      );
      continue;
    }
    const half = Math.ceil(block.length / 2);
    blocks.unshift(block.slice(0, half), block.slice(half));
  }
}

/**
 * The edits of some fixes, each list of edits once. Findings often share one list (a unit's fix, offered by each of
 * its claims; a family move, by each pin): 2,400 pins sharing a 2,400-edit fix made 5.8 million edits to sort here.
 */
function editsOf(fixes: readonly Finding[]): TextEdit[] {
  const lists = new Set<readonly TextEdit[]>();
  for (const finding of fixes) lists.add(finding.fix!.edits);
  return lists.size === 1 ? [...lists.values().next().value!] : [...lists].flat();
}

/** `work` over a list of edits, done once per list (findings share lists: see editsOf). */
function onePerList<T>(work: (edits: readonly TextEdit[]) => T): (edits: readonly TextEdit[]) => T {
  const done = new Map<readonly TextEdit[], T>();
  return (edits) => {
    if (done.has(edits)) return done.get(edits)!;
    const result = work(edits);
    done.set(edits, result);
    return result;
  };
}

/** A fix that failed verification: its edits stay on offer as an unsafe suggestion, with what applying them gives. */
function downgrade(finding: Finding, reason: string): Finding {
  const fix: Fix = { ...finding.fix!, safety: 'unsafe', verification: `Not safe: applying it ${reason}.` };
  return { ...finding, fix };
}

function describe(finding: Finding): string {
  return `gives ${finding.severity} ${finding.ruleId} "${finding.message}" in ${finding.location.path}`;
}

/** The file with the edits that fall in it applied (and parsed again), or the file itself. */
function edited(file: ParsedFile, edits: readonly TextEdit[]): ParsedFile {
  const own = edits.filter((edit) => edit.path === file.path);
  if (own.length === 0) return file;
  return parseFile(file.path, applyEdits(file.source.text, own), file.kind);
}

/** The edits with duplicates dropped (two findings may propose the same edit), or undefined when two overlap. */
export function merged(edits: readonly TextEdit[]): TextEdit[] | undefined {
  const unique = distinct(edits);
  return overlapping(unique) ? undefined : unique;
}

/** Pairs of distinct edits (neighbours in file order) that cannot both be applied as written. */
export function overlaps(edits: readonly TextEdit[]): [TextEdit, TextEdit][] {
  const pairs: [TextEdit, TextEdit][] = [];
  overlapping(distinct(edits), (pair) => pairs.push(pair));
  return pairs;
}

/** One key for a set of edits, whatever their order: `merged` edits never overlap, so file order is a total order. */
function editsKey(edits: readonly TextEdit[]): string {
  return [...edits].sort(inFileOrder).map(editKey).join('\u0001');
}

/** What an edit does, as one string: two edits with the same key are the same edit. */
function editKey(edit: TextEdit): string {
  return `${edit.path}\u0000${edit.range[0]}\u0000${edit.range[1]}\u0000${edit.text}`;
}

/** Edits by file, then by where they start and end. */
function inFileOrder(a: TextEdit, b: TextEdit): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : a.range[0] - b.range[0] || a.range[1] - b.range[1];
}

function distinct(edits: readonly TextEdit[]): TextEdit[] {
  const unique: TextEdit[] = [];
  const seen = new Set<string>();
  for (const edit of edits) {
    const key = editKey(edit);
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(edit);
  }
  return unique;
}

/**
 * Whether two edits overlap; with `each`, every overlapping neighbour pair is given to it (else the first ends the
 * walk).
 */
function overlapping(edits: readonly TextEdit[], each?: (pair: [TextEdit, TextEdit]) => void): boolean {
  const sorted = [...edits].sort(inFileOrder);
  let found = false;
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1]!;
    const edit = sorted[i]!;
    if (previous.path !== edit.path) continue;
    // Two insertions at one point, or ranges that share characters, cannot both be applied as written.
    if (
      edit.range[0] < previous.range[1] ||
      (edit.range[0] === previous.range[0] && edit.range[0] === previous.range[1])
    ) {
      found = true;
      if (!each) return true;
      each([previous, edit]);
    }
  }
  return found;
}

/** What a finding says, where, at which level: its position is left out, as edits move lines. */
function keyOf(finding: Finding): string {
  return `${finding.ruleId}\u0000${finding.severity}\u0000${finding.location.path}\u0000${finding.message}`;
}

function countFindings(findings: readonly Finding[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const finding of findings) counts.set(keyOf(finding), (counts.get(keyOf(finding)) ?? 0) + 1);
  return counts;
}

/** A finding of `after` that `before` did not have (as many times), if any. */
function newFinding(before: ReadonlyMap<string, number>, after: readonly Finding[]): Finding | undefined {
  const left = new Map(before);
  for (const finding of after) {
    const key = keyOf(finding);
    const count = left.get(key) ?? 0;
    if (count === 0) return finding;
    left.set(key, count - 1);
  }
  return undefined;
}

/** Groups that share a file become one (union by path), in the order they were first seen. */
function mergeOverlapping(
  groups: { files: ParsedFile[]; fixes: Finding[] }[],
): { files: ParsedFile[]; fixes: Finding[] }[] {
  const sets = new UnionFind(groups.length);
  const owner = new Map<string, number>();
  groups.forEach((group, i) => {
    for (const file of group.files) {
      const other = owner.get(file.path);
      if (other === undefined) owner.set(file.path, i);
      else sets.join(other, i);
    }
  });
  const merged = new Map<number, { files: ParsedFile[]; fixes: Finding[]; paths: Set<string> }>();
  groups.forEach((group, i) => {
    const root = sets.find(i);
    let target = merged.get(root);
    if (!target) merged.set(root, (target = { files: [], fixes: [], paths: new Set() }));
    for (const file of group.files) {
      if (target.paths.has(file.path)) continue;
      target.paths.add(file.path);
      target.files.push(file);
    }
    target.fixes.push(...group.fixes);
  });
  return [...merged.values()].map(({ files, fixes }) => ({ files, fixes }));
}
