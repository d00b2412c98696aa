/**
 * A pure function of a string, remembered. The keys come from user files (versions, URLs), so the table is
 * emptied once it holds `limit` entries instead of growing without bound. For answers that depend on the
 * knowledge base, use `kb.memoized` instead.
 */
export function memoize<T>(compute: (key: string) => T, limit = 4096): (key: string) => T {
  const answers = new Map<string, T>();
  return (key) => {
    const known = answers.get(key);
    if (known !== undefined || answers.has(key)) return known as T;
    if (answers.size >= limit) answers.clear();
    const value = compute(key);
    answers.set(key, value);
    return value;
  };
}
