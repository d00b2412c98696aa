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

/** Disjoint sets over 0 … count-1 (union-find with path compression); `add` makes room for one more item. */
export class UnionFind {
  private readonly parent: number[];

  constructor(count = 0) {
    this.parent = positions(count);
  }

  /** A new item in a set of its own; returns its number (the count so far). */
  add(): number {
    return this.parent.push(this.parent.length) - 1;
  }

  /** The representative of i's set. */
  find(i: number): number {
    let root = i;
    while (this.parent[root] !== root) root = this.parent[root]!;
    while (this.parent[i] !== root) {
      const next = this.parent[i]!;
      this.parent[i] = root;
      i = next;
    }
    return root;
  }

  /** Joins the sets of a and b; returns the representative of the joined set. */
  join(a: number, b: number): number {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[rb] = ra;
    return ra;
  }
}

/**
 * A record's own value for a key written in a file or a request, never one its prototype lends (`constructor`,
 * `toString`): `record[key]` would give those functions.
 */
export function ownValue<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
