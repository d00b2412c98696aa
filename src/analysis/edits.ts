import type { TextEdit } from '../finding.js';
import type { ParsedFile } from '../parsers/facts.js';
import type { Span } from '../parsers/source.js';

/** An edit of `span`, but only if the file really holds `expected` there (so a fix never corrupts text). */
export function replaceExact(file: ParsedFile, span: Span, expected: string, text: string): TextEdit | undefined {
  if (span.end < span.start || file.source.text.slice(span.start, span.end) !== expected) return undefined;
  return { path: file.path, range: [span.start, span.end], text };
}

/** A value as the file holds it: its characters live at `span`. */
export interface Located {
  readonly span: Span;
  readonly value: string;
}

/** Replace `value[from, to)` of a value located in the file, but only if the file really holds it there. */
export function replaceWithin(
  file: ParsedFile,
  { span, value }: Located,
  [from, to]: readonly [number, number],
  text: string,
): TextEdit | undefined {
  if (file.source.text.slice(span.start, span.end) !== value) return undefined;
  return { path: file.path, range: [span.start + from, span.start + to], text };
}

/** The text with the edits applied, in one pass (linear in the text and the edits, however many there are). */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  // Of overlapping edits the later-in-file one is kept: walk from the end, then join the kept ones in order.
  const sorted = [...edits].sort((a, b) => b.range[0] - a.range[0]);
  const kept: TextEdit[] = [];
  let lastStart = Number.POSITIVE_INFINITY;
  for (const edit of sorted) {
    // The same edit twice (two pins of one file that each add the index it lacks) is made once.
    const last = kept.at(-1);
    if (last && last.range[0] === edit.range[0] && last.range[1] === edit.range[1] && last.text === edit.text) continue;
    if (edit.range[1] > lastStart) continue;
    kept.push(edit);
    lastStart = edit.range[0];
  }
  const parts: string[] = [];
  let at = 0;
  for (let i = kept.length - 1; i >= 0; i--) {
    const edit = kept[i]!;
    parts.push(text.slice(at, edit.range[0]), edit.text);
    at = edit.range[1];
  }
  parts.push(text.slice(at));
  return parts.join('');
}
