import type { Location, Position } from '../finding.js';

/** A text file with a line index, so offsets convert to positions in O(log n). */
export class SourceText {
  readonly path: string;
  readonly text: string;
  /**
   * Exactly as long as the file has lines, and no objects for the collector to visit: sources are kept all run. Made
   * when a position is first asked for: most files of a large check are said nothing about.
   */
  private starts: Int32Array | undefined;

  constructor(path: string, text: string) {
    this.path = path;
    this.text = text;
  }

  private get lineStarts(): Int32Array {
    return (this.starts ??= computeLineStarts(this.text));
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  position(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    const starts = this.lineStarts;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((starts[mid] ?? 0) <= clamped) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: clamped - (starts[low] ?? 0) + 1, offset: clamped };
  }

  location(start: number, end: number): Location {
    return { path: this.path, start: this.position(start), end: this.position(Math.max(start, end)) };
  }

  /** Offset of the first character of a 1-based line. */
  lineStart(line: number): number {
    return this.lineStarts[Math.max(0, Math.min(line - 1, this.lineStarts.length - 1))] ?? 0;
  }

  /** Offset just past the last character of a 1-based line, before its line break. */
  lineEnd(line: number): number {
    const next = line < this.lineStarts.length ? (this.lineStarts[line] ?? this.text.length) : this.text.length;
    let end = next;
    if (end > 0 && this.text[end - 1] === '\n') end--;
    if (end > 0 && this.text[end - 1] === '\r') end--;
    return Math.max(end, this.lineStart(line));
  }

  slice(start: number, end: number): string {
    return this.text.slice(start, end);
  }
}

/** Where each line starts: after a line feed, a CR LF or a lone CR. */
function computeLineStarts(text: string): Int32Array {
  if (!text.includes('\r')) {
    // Line feeds only (nearly every file): two searches for them, the first to size the table.
    let count = 1;
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++;
    const starts = new Int32Array(count);
    let line = 1;
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts[line++] = at + 1;
    return starts;
  }
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10) starts.push(i + 1);
    else if (code === 13 && text.charCodeAt(i + 1) !== 10) starts.push(i + 1);
  }
  return Int32Array.from(starts);
}

/** A span of a source: offsets into SourceText.text. */
export interface Span {
  readonly start: number;
  readonly end: number;
}
