import type { CopyFact, IncludeFact, ParsedFile } from '../parsers/facts.js';
import { dirname, joinRepo } from './paths.js';
import { groupBy } from '../util/collections.js';
import { StageTree } from './stages.js';

/**
 * Where a file that another file pulls in lives in the repository, in order of preference. Requirements
 * includes are relative to the including file. A Dockerfile's `pip install -r X` names a path inside the
 * image, so it is traced back through the stage's COPY instructions to the build context, which is assumed
 * to be the Dockerfile's directory (then the repository root). Paths that leave the repository are dropped.
 */
export function includeCandidates(file: ParsedFile, include: IncludeFact): string[] {
  const base = dirname(file.path);
  // `-r file:requirements.txt` (a conda pip: list, a requirements file) names a local path.
  const target = include.target.replace(/^file:(?!\/\/)/i, '');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return [];
  if (file.kind !== 'dockerfile') return unique([joinRepo(base, target)]);

  const stage = file.contexts[include.context]?.stage ?? 0;
  const candidates: (string | undefined)[] = [];
  for (const copy of copiesVisibleFrom(file, stage)) {
    for (const source of copy.sources) {
      const relative = pathInsideCopy(copy, source.path, target);
      if (relative === undefined) continue;
      candidates.push(joinRepo(base, relative), joinRepo(relative));
    }
  }
  if (!target.startsWith('/') && !include.copiedOnly) candidates.push(joinRepo(base, target), joinRepo(target));
  return unique(candidates);
}

const visibleCopies = new WeakMap<ParsedFile, (stage: number) => readonly CopyFact[]>();

/** COPY instructions of this stage and of the stages it builds on (not `COPY --from`), in file order. */
function copiesVisibleFrom(file: ParsedFile, stage: number): readonly CopyFact[] {
  let visible = visibleCopies.get(file);
  if (!visible) {
    const own = groupBy(
      file.copies.filter((copy) => !copy.fromStage),
      (copy) => copy.stage,
    );
    visibleCopies.set(file, (visible = StageTree.of(file).inherited((at) => own.get(at) ?? [])));
  }
  return visible(stage);
}

/** If `target` (a path in the image) was put there by COPY of `source`, the source-relative path of it. */
function pathInsideCopy(copy: CopyFact, source: string, target: string): string | undefined {
  const destination = copy.destination;
  const sourceBase = source.replace(/\/+$/, '').split('/').pop() ?? source;
  const targetBase = target.split('/').pop() ?? target;
  const sourceIsDir = source === '.' || source.endsWith('/') || !/\.[A-Za-z0-9]+$/.test(sourceBase);
  if (!sourceIsDir) {
    if (targetBase === sourceBase || target === destination || (destination.endsWith('/') && target === `${destination}${sourceBase}`)) return source;
    if (/[*?[]/.test(source) && globMatch(source.split('/').pop() ?? source, targetBase)) return `${dirname(source)}/${targetBase}`.replace(/^\//, '');
    return undefined;
  }
  const dest = destination.replace(/\/+$/, '');
  let relative = target;
  if (target.startsWith('/')) {
    if (!target.startsWith(`${dest}/`)) return undefined;
    relative = target.slice(dest.length + 1);
  }
  return `${source.replace(/\/+$/, '')}/${relative}`;
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
export function resolveLinks(files: readonly ParsedFile[], leadsTo?: (file: ParsedFile, k: number) => string | undefined): Map<ParsedFile, Link[]> {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const links = new Map<ParsedFile, Link[]>();
  for (const file of files) {
    const list: Link[] = [];
    file.includes.forEach((include, k) => {
      const path = leadsTo ? leadsTo(file, k) : includeCandidates(file, include).find((candidate) => byPath.has(candidate));
      const to = path === undefined ? undefined : byPath.get(path);
      if (to && to !== file) list.push({ from: file, include, to });
    });
    links.set(file, list);
  }
  return links;
}
