/**
 * Answers to one pure question, by key. The keys come from user files (versions, URLs, image tags), so the table
 * is emptied once it holds `limit` answers instead of growing for the life of a process.
 */
export class Answers<T> {
  private readonly table = new Map<string, T>();

  constructor(private readonly limit = 4096) {}

  get size(): number {
    return this.table.size;
  }

  /** The answer for `key`, computed by `compute` (called with `self` as `this`) the first time it is asked. */
  of<S>(key: string, compute: (this: S, key: string) => T, self?: S): T {
    const known = this.table.get(key);
    if (known !== undefined || this.table.has(key)) return known as T;
    if (this.table.size >= this.limit) this.table.clear();
    const value = compute.call(self as S, key);
    this.table.set(key, value);
    return value;
  }
}

/**
 * A pure function of a string, remembered (see Answers). For answers that depend on the knowledge base, use
 * `kb.memoized` instead.
 */
export function memoize<T>(compute: (key: string) => T, limit = 4096): (key: string) => T {
  const answers = new Answers<T>(limit);
  return (key) => answers.of(key, compute);
}
