/** How the gate splits a repository's files for its rules. */
import type { ParsedFile } from '../parsers/facts.js';
import { groupBy, positions, UnionFind } from '../util/collections.js';
import type { Link } from './links.js';

/** Files per batch: enough to spread each rule's fixed cost, few enough to stay in the caches. */
const BATCH_FILES = 256;

/**
 * The files grouped into batches of whole connected components (files joined by includes in either direction), in
 * their original order as far as possible. All the rules read one batch's facts before the next batch is built, so
 * they stay in the CPU caches instead of every rule walking the whole repository (docs/performance.md).
 */
export function fileBatches(
  files: readonly ParsedFile[],
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
  size = BATCH_FILES,
): ParsedFile[][] {
  const indexOf = new Map(files.map((file, i) => [file, i]));
  const sets = new UnionFind(files.length);
  files.forEach((file, i) => {
    for (const link of links.get(file) ?? []) sets.join(i, indexOf.get(link.to)!);
  });
  const components = groupBy(positions(files.length), (i) => sets.find(i));
  const out: ParsedFile[][] = [];
  let current: ParsedFile[] = [];
  for (const members of components.values()) {
    for (const i of members) current.push(files[i]!);
    if (current.length >= size) {
      out.push(current);
      current = [];
    }
  }
  if (current.length > 0) out.push(current);
  return out;
}
