/** Dotted numeric versions (`550.54.14`, `12.4`): shared by the parsers and the knowledge base, dependency-free. */

/** Compare dotted numeric versions (`550.54.14`, `12.4`); missing parts count as 0. Non-numeric parts compare as 0. */
export function compareDotted(a: string, b: string): number {
  if (a === b) return 0;
  const fast = compareDigitsAndDots(a, b);
  if (fast !== undefined) return fast;
  const pa = a.split('.');
  const pb = b.split('.');
  const length = Math.max(pa.length, pb.length);
  for (let i = 0; i < length; i++) {
    const x = Number.parseInt(pa[i] ?? '0', 10) || 0;
    const y = Number.parseInt(pb[i] ?? '0', 10) || 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** compareDotted for strings of digits and dots only, without allocating; undefined for anything else. */
function compareDigitsAndDots(a: string, b: string): number | undefined {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let x = 0;
    let y = 0;
    for (; i < a.length; i++) {
      const code = a.charCodeAt(i);
      if (code === 46) break;
      if (code < 48 || code > 57) return undefined;
      x = x * 10 + (code - 48);
    }
    for (; j < b.length; j++) {
      const code = b.charCodeAt(j);
      if (code === 46) break;
      if (code < 48 || code > 57) return undefined;
      y = y * 10 + (code - 48);
    }
    if (x !== y) return x < y ? -1 : 1;
    i++;
    j++;
  }
  return 0;
}
