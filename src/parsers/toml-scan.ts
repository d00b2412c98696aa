/**
 * A scanner for the TOML that lock writers emit (uv.lock, poetry.lock): `[table]` and `[[array]]` headers with bare or
 * simply quoted keys, `key = value` with one-line strings, booleans, numbers, arrays over several lines and one-line
 * inline tables, comments. It builds the same tree `readToml` builds from toml-eslint-parser, with the same spans, at a
 * fraction of the cost (`test/parsers/lock-scan.test.ts` checks both on real locks and mutated ones).
 *
 * It declines (returns undefined) whatever it is not certain to read exactly as the parser does: CR and control
 * characters, multi-line strings, `\u` escapes, strings longer than LONG_STRING, dotted keys in a pair, dates and
 * times, inline tables over several lines or with a trailing comma, and anything the parser would reject (a key
 * set twice, a table defined twice, a header through a value). The caller then reads the file with the parser,
 * which stays the reference and says where the file is wrong.
 */
import { Mapped, MappedBuilder } from './mapped.js';
import type { Span } from './source.js';
import { LONG_STRING, newTable, type TomlTable, type TomlValue } from './toml-tree.js';

/** Characters TOML forbids outside strings or this scanner does not read: CR, C0 controls but tab and LF, DEL, BOM. */
// eslint-disable-next-line no-control-regex -- matching the control characters TOML forbids is the point
const UNREAD = /[\x00-\x08\x0b-\x1f\x7f\ufeff]/;
/** A surrogate code unit; with the `u` flag, one that is not half of a pair (the parser rejects it: not Unicode). */
const SURROGATE = /[\ud800-\udfff]/;
const LONE_SURROGATE = /\p{Cs}/u;
const BARE = /[A-Za-z0-9_-]/;
const TOKEN = /[0-9A-Za-z_+.:-]/;

/**
 * A file that ends in a `0` token: toml-eslint-parser gives a `0` value at the very end of the file an empty span
 * (its range ends where it starts; `1`, `10` or `0` before a newline are right), so the scanner, which gives the
 * token's span, declines it rather than differ.
 */
function endsInLoneZero(text: string): boolean {
  return text.endsWith('0') && (text.length === 1 || !TOKEN.test(text[text.length - 2]!));
}
const INTEGER =
  /^[+-]?(?:0|[1-9](?:_?[0-9])*)$|^0x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*$|^0o[0-7](?:_?[0-7])*$|^0b[01](?:_?[01])*$/;
const FLOAT =
  /^[+-]?(?:0|[1-9](?:_?[0-9])*)(?:\.[0-9](?:_?[0-9])*(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[eE][+-]?[0-9](?:_?[0-9])*)$|^[+-]?(?:inf|nan)$/;
const ESCAPES: Readonly<Record<string, string>> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' };

class Decline extends Error {}
const decline = (): never => {
  throw new Decline();
};

/** The document's root table, or undefined when the scanner does not read it (the parser then does). Never throws. */
export function scanToml(text: string, omit?: ReadonlySet<string>): TomlTable | undefined {
  if (UNREAD.test(text) || (SURROGATE.test(text) && LONE_SURROGATE.test(text)) || endsInLoneZero(text))
    return undefined;
  try {
    return new Scanner(text, omit).document();
  } catch (error) {
    if (error instanceof Decline) return undefined;
    throw error;
  }
}

class Scanner {
  private i = 0;
  /** Tables a `[header]` defined (a second definition is an error), arrays `[[headers]]` made, values pairs set. */
  private readonly defined = new Set<TomlValue>();
  private readonly arrayTables = new Set<TomlValue>();
  private readonly values = new Set<TomlValue>();

  /** `omit`: keys whose values are read (and so checked) but not built: each is an `other` value at its span. */
  constructor(
    private readonly text: string,
    private readonly omit?: ReadonlySet<string>,
  ) {}

  document(): TomlTable {
    const text = this.text;
    const root = newTable({ start: 0, end: text.length });
    let target = root;
    for (;;) {
      this.skipBlank();
      if (this.i >= text.length) return root;
      if (text.charCodeAt(this.i) !== 91) {
        this.pair(target);
        this.endOfLine();
        continue;
      }
      const start = this.i;
      const array = text.charCodeAt(start + 1) === 91;
      this.i += array ? 2 : 1;
      const path: string[] = [];
      for (;;) {
        path.push(this.key().name);
        const c = text.charCodeAt(this.i);
        if (c === 46) this.i++;
        else if (c === 93) break;
        else decline();
      }
      this.i++;
      if (array && text.charCodeAt(this.i++) !== 93) decline();
      let end = this.i;
      this.endOfLine();
      // The table's pairs, read before it is placed: its span (header to last pair) is the parser's.
      const pairs: { name: string; keySpan: Span; value: TomlValue }[] = [];
      for (;;) {
        this.skipBlank();
        if (this.i >= text.length || text.charCodeAt(this.i) === 91) break;
        const read = this.read();
        pairs.push(read);
        end = read.value.span.end;
        this.endOfLine();
      }
      const span = { start, end };
      target = array ? this.arrayTable(root, path, span) : this.standardTable(root, path, span);
      for (const pair of pairs) this.set(target, pair.name, pair.keySpan, pair.value);
    }
  }

  /** `[[a.b]]`: a new table appended to the array at a.b (made where missing), as readToml places it. */
  private arrayTable(root: TomlTable, path: readonly string[], span: Span): TomlTable {
    const parent = this.walk(root, path.slice(0, -1), span);
    const name = path.at(-1)!;
    let list = parent.entries.get(name);
    if (!list) {
      list = { kind: 'array', span, items: [] };
      this.arrayTables.add(list);
      parent.entries.set(name, list);
      parent.keySpans.set(name, span);
    } else if (!this.arrayTables.has(list)) decline();
    const made = newTable(span);
    (list as Extract<TomlValue, { kind: 'array' }>).items.push(made);
    return made;
  }

  /** `[a.b]`: the table at a.b, defined once. */
  private standardTable(root: TomlTable, path: readonly string[], span: Span): TomlTable {
    const parent = this.walk(root, path.slice(0, -1), span);
    const name = path.at(-1)!;
    const existing = parent.entries.get(name);
    if (existing && (existing.kind !== 'table' || this.defined.has(existing) || this.values.has(existing))) decline();
    const made = (existing as TomlTable | undefined) ?? newTable(span);
    if (!existing) {
      parent.entries.set(name, made);
      parent.keySpans.set(name, span);
    }
    this.defined.add(made);
    return made;
  }

  /** The table at `path` (through the last table of an array of tables), made where missing. */
  private walk(from: TomlTable, path: readonly string[], span: Span): TomlTable {
    let current = from;
    for (const part of path) {
      const next = current.entries.get(part);
      if (!next) {
        const made = newTable(span);
        current.entries.set(part, made);
        current.keySpans.set(part, span);
        current = made;
      } else if (this.values.has(next)) decline();
      else if (next.kind === 'array') current = (next.items.at(-1) as TomlTable | undefined) ?? decline();
      else if (next.kind === 'table') current = next;
      else decline();
    }
    return current;
  }

  private set(into: TomlTable, name: string, keySpan: Span, value: TomlValue): void {
    if (into.entries.has(name)) decline();
    into.entries.set(name, value);
    into.keySpans.set(name, keySpan);
  }

  /** `key = value` into a table. */
  private pair(into: TomlTable): void {
    const read = this.read();
    this.set(into, read.name, read.keySpan, read.value);
  }

  private read(): { name: string; keySpan: Span; value: TomlValue } {
    const key = this.key();
    this.spaces();
    if (this.text.charCodeAt(this.i) !== 61) decline(); // a dotted key, or no `=`
    this.i++;
    this.spaces();
    if (this.omit?.has(key.name)) {
      const start = this.i;
      this.skipValue();
      return { name: key.name, keySpan: key.span, value: { kind: 'other', span: { start, end: this.i } } };
    }
    const value = this.value();
    return { name: key.name, keySpan: key.span, value };
  }

  /** A bare key, or a quoted one without escapes. */
  private key(): { name: string; span: Span } {
    const text = this.text;
    const start = this.i;
    const c = text[start];
    if (c === '"' || c === "'") {
      const close = text.indexOf(c, start + 1);
      const newline = text.indexOf('\n', start + 1);
      if (close < 0 || (newline >= 0 && newline < close)) decline();
      const name = text.slice(start + 1, close);
      if (c === '"' && name.includes('\\')) decline();
      this.i = close + 1;
      return { name, span: { start, end: this.i } };
    }
    let end = start;
    while (end < text.length && BARE.test(text[end]!)) end++;
    if (end === start) decline();
    this.i = end;
    return { name: text.slice(start, end), span: { start, end } };
  }

  private value(): TomlValue {
    const text = this.text;
    const start = this.i;
    const c = text[start];
    if (c === '"' || c === "'") return this.string(c);
    if (c === '[') {
      const items: TomlValue[] = [];
      this.array(() => items.push(this.value()));
      return this.made({ kind: 'array', span: { start, end: this.i }, items });
    }
    if (c === '{') {
      const inline = newTable({ start, end: start });
      this.inlineTable(() => this.pair(inline));
      return this.made({ ...inline, span: { start, end: this.i } });
    }
    let end = start;
    while (end < text.length && TOKEN.test(text[end]!)) end++;
    const token = text.slice(start, end);
    this.i = end;
    const span = { start, end };
    if (token === 'true' || token === 'false') return { kind: 'boolean', span, value: token === 'true' };
    if (INTEGER.test(token) || FLOAT.test(token)) return { kind: 'other', span };
    return decline(); // dates and times, or not TOML
  }

  /** A value read as value() reads it, declining what it declines, without building tables and arrays. */
  private skipValue(): void {
    const c = this.text[this.i];
    if (c === '[') this.array(() => this.skipValue());
    else if (c === '{') {
      const keys = new Set<string>();
      this.inlineTable(() => {
        const key = this.key();
        if (keys.has(key.name)) decline();
        keys.add(key.name);
        this.spaces();
        if (this.text.charCodeAt(this.i) !== 61) decline();
        this.i++;
        this.spaces();
        this.skipValue();
      });
    } else this.value();
  }

  /** `[ item, … ]` from its `[` to after its `]`, over lines and comments; `item` reads each item. */
  private array(item: () => void): void {
    const text = this.text;
    this.i++;
    for (;;) {
      this.skipBlank();
      if (text[this.i] === ']') break;
      item();
      this.skipBlank();
      if (text[this.i] === ',') this.i++;
      else if (text[this.i] !== ']') decline();
    }
    this.i++;
  }

  /** `{ k = v, … }` from its `{` to after its `}`: one line, no trailing comma (TOML 1.0); `pair` reads each pair. */
  private inlineTable(pair: () => void): void {
    const text = this.text;
    this.i++;
    this.spaces();
    if (text[this.i] !== '}')
      for (;;) {
        pair();
        this.spaces();
        const next = text[this.i];
        if (next === '}') break;
        if (next !== ',') decline();
        this.i++;
        this.spaces();
        if (text[this.i] === '}') decline(); // a trailing comma: TOML 1.1, not 1.0
      }
    this.i++;
  }

  /** A one-line basic or literal string. */
  private string(quote: string): TomlValue {
    const text = this.text;
    const start = this.i;
    if (text.startsWith(quote.repeat(3), start)) decline();
    const close = quote.charCodeAt(0);
    let value = '';
    let escaped = false;
    let from = start + 1;
    let i = from;
    // The common string (no escape) in two searches; one with escapes character by character.
    const end = text.indexOf(quote, from);
    if (end < 0 || this.next('\n', from) < end) decline();
    if (close !== 34 || this.next('\\', from) > end) i = end;
    else
      for (;;) {
        const c = text.charCodeAt(i);
        if (c === close) break;
        if (c === 10 || Number.isNaN(c)) decline();
        if (c === 92) {
          const replacement = ESCAPES[text[i + 1]!] ?? decline();
          value += text.slice(from, i) + replacement;
          escaped = true;
          i += 2;
          from = i;
          continue;
        }
        i++;
      }
    value += text.slice(from, i);
    if (i - (start + 1) > LONG_STRING) decline();
    this.i = i + 1;
    const span = { start, end: this.i };
    let mapped: Mapped;
    if (escaped) {
      const builder = new MappedBuilder();
      builder.pushSegment(value, -1, span);
      mapped = builder.build();
    } else mapped = Mapped.of(value, start + 1);
    return { kind: 'string', span, value, mapped };
  }

  /**
   * Where the next `char` (a line break or a backslash) is at or after `from`, past the end when none: remembered, so
   * each is searched for once.
   */
  private readonly found = new Map<string, number>();
  private next(char: string, from: number): number {
    let at = this.found.get(char);
    if (at === undefined || at < from) {
      at = this.text.indexOf(char, from);
      if (at < 0) at = this.text.length;
      this.found.set(char, at);
    }
    return at;
  }

  private made<T extends TomlValue>(value: T): T {
    this.values.add(value);
    return value;
  }

  private spaces(): void {
    const text = this.text;
    while (text[this.i] === ' ' || text[this.i] === '\t') this.i++;
  }

  /** Spaces, comments and line breaks. */
  private skipBlank(): void {
    const text = this.text;
    for (;;) {
      const c = text[this.i];
      if (c === ' ' || c === '\t' || c === '\n') this.i++;
      else if (c === '#') {
        const end = text.indexOf('\n', this.i);
        this.i = end < 0 ? text.length : end;
      } else return;
    }
  }

  /** After a pair or a header: spaces, an optional comment, then a line break or the end. */
  private endOfLine(): void {
    this.spaces();
    const text = this.text;
    if (text[this.i] === '#') {
      const end = text.indexOf('\n', this.i);
      this.i = end < 0 ? text.length : end;
    }
    if (this.i < text.length && text[this.i] !== '\n') decline();
  }
}
