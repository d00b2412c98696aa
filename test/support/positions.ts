/** Positions in a parsed file, for assertions that read as the editor shows them. */
import type { ParsedFile } from '../../src/parsers/facts.js';

/** The `line:column` of an offset (1-based, as editors and the reports show it). */
export function at(file: ParsedFile, offset: number): string {
  const position = file.source.position(offset);
  return `${position.line}:${position.column}`;
}

/** The file's text at a span. */
export function text(file: ParsedFile, span: { start: number; end: number }): string {
  return file.source.text.slice(span.start, span.end);
}
