/** Real files made larger the way they grow (test/growth.test.ts): more pins, more stages, more dependencies. */
import type { FileKind } from '../../src/parsers/facts.js';

export type Scalable = Extract<FileKind, 'requirements' | 'dockerfile' | 'conda'>;
export const SCALABLE: readonly FileKind[] = ['requirements', 'dockerfile', 'conda'];

/** `copies` copies of a file of `kind`, as one file. */
export function scaled(kind: Scalable, text: string, copies: number): string {
  const body = text.endsWith('\n') ? text : `${text}\n`;
  if (kind === 'requirements') return body.repeat(copies);
  if (kind === 'dockerfile') {
    // Stage names get the copy's number, so `FROM base AS app` + `COPY --from=base` stay within their own copy.
    const names = [...body.matchAll(/^\s*FROM\s.*?\bAS\s+([A-Za-z0-9_.-]+)/gim)].map((match) => match[1]!);
    if (names.length === 0) return body.repeat(copies);
    const name = new RegExp(`(?<![\\w.-])(${names.map((n) => n.replace(/[.]/g, '\\.')).join('|')})(?![\\w.-])`, 'g');
    return Array.from({ length: copies }, (_, i) => body.replace(name, `$1_${i}`)).join('');
  }
  // conda: the dependency list's items, repeated where the list is.
  const lines = body.split('\n');
  const start = lines.findIndex((line) => /^dependencies\s*:\s*$/.test(line));
  if (start < 0) return body;
  let end = start + 1;
  while (end < lines.length && (/^\s+\S/.test(lines[end]!) || /^-\s/.test(lines[end]!) || lines[end] === '')) end++;
  const items = lines.slice(start + 1, end);
  return [
    ...lines.slice(0, start + 1),
    ...Array.from({ length: copies }, () => items).flat(),
    ...lines.slice(end),
  ].join('\n');
}
