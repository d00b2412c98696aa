/** Items grouped by a key, each group in the items' order; items whose key is undefined are left out. */
export function groupBy<T, K>(items: readonly T[], key: (item: T) => K | undefined): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const at = key(item);
    if (at === undefined) continue;
    const group = groups.get(at);
    if (group) group.push(item);
    else groups.set(at, [item]);
  }
  return groups;
}

/** The positions 0 … length-1, for grouping or sorting items by position. */
export function positions(length: number): number[] {
  return Array.from({ length }, (_, i) => i);
}
