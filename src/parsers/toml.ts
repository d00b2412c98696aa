/**
 * TOML read with toml-eslint-parser (an AST with the range of every key and value) into a small tree of tables,
 * arrays and strings that keeps each value's node, so facts can point at the exact characters. Dotted keys, [table]
 * and [[array of tables]] headers and inline tables all land in the same tree, as TOML defines
 * (toml.io/en/v1.0.0). A document that is not TOML is one positioned problem; nothing here throws.
 */
import { parseTOML, type AST } from 'toml-eslint-parser';
import { Mapped, MappedBuilder } from './mapped.js';
import type { ParseProblem } from './facts.js';
import type { Span } from './source.js';
import { scanToml } from './toml-scan.js';
import { LONG_STRING, newTable, type TomlString, type TomlTable, type TomlValue } from './toml-tree.js';

export { LONG_STRING, newTable, type TomlString, type TomlTable, type TomlValue } from './toml-tree.js';

export type TomlDocument =
  | { readonly ok: true; readonly root: TomlTable }
  | { readonly ok: false; readonly message: string; readonly span: Span };

/** What converting a document needs: its text, and the starts of the strings left unread (blankLongStrings). */
interface Reading {
  readonly text: string;
  readonly unread: ReadonlySet<number>;
}

const keyName = (key: AST.TOMLBare | AST.TOMLQuoted): string => (key.type === 'TOMLBare' ? key.name : key.value);

/**
 * A string's text, mapped to the file: exact for strings written without escapes, else pointing at the whole string.
 */
function stringValue(node: AST.TOMLStringValue, text: string): Mapped {
  const [start, end] = node.range;
  const quote = node.multiline ? 3 : 1;
  const raw = text.slice(start + quote, end - quote);
  if (!node.multiline && raw === node.value) return Mapped.of(node.value, start + quote);
  const builder = new MappedBuilder();
  builder.pushSegment(node.value, -1, { start, end });
  return builder.build();
}

function convert(node: AST.TOMLContentNode, reading: Reading): TomlValue {
  const span = { start: node.range[0], end: node.range[1] };
  if (node.type === 'TOMLArray')
    return { kind: 'array', span, items: node.elements.map((element) => convert(element, reading)) };
  if (node.type === 'TOMLInlineTable') {
    const inline = newTable(span);
    for (const pair of node.body) insert(inline, pair, reading);
    return inline;
  }
  // A string too long to read (see blankLongStrings) holds no fact: its value here is only the filler.
  if (node.type === 'TOMLValue' && node.kind === 'string' && reading.unread.has(span.start))
    return { kind: 'other', span };
  if (node.type === 'TOMLValue' && node.kind === 'string')
    return { kind: 'string', span, value: node.value, mapped: stringValue(node, reading.text) };
  if (node.type === 'TOMLValue' && node.kind === 'boolean') return { kind: 'boolean', span, value: node.value };
  return { kind: 'other', span };
}

/** The table at `path` below `from`, made where missing (a later header may reopen a dotted key's table). */
function tableAt(from: TomlTable, path: readonly (string | number)[], span: Span): TomlTable {
  let current = from;
  for (const part of path) {
    if (typeof part === 'number') {
      // [[x]] appends a table to the array at x: the path's number is its index.
      continue;
    }
    let next = current.entries.get(part);
    if (!next || next.kind !== 'table') {
      if (next?.kind === 'array') {
        const last = next.items.at(-1);
        if (last?.kind === 'table') {
          current = last;
          continue;
        }
      }
      next = newTable(span);
      current.entries.set(part, next);
      current.keySpans.set(part, span);
    }
    current = next;
  }
  return current;
}

function insert(into: TomlTable, pair: AST.TOMLKeyValue, reading: Reading): void {
  const names = pair.key.keys.map(keyName);
  const owner = tableAt(into, names.slice(0, -1), { start: pair.range[0], end: pair.range[1] });
  const last = names.at(-1)!;
  owner.entries.set(last, convert(pair.value, reading));
  owner.keySpans.set(last, { start: pair.key.range[0], end: pair.key.range[1] });
}

/**
 * The text with every string longer than LONG_STRING replaced by an empty string and spaces to its length, and the
 * spans of those strings. toml-eslint-parser builds a string's value with one call that spreads all its characters,
 * which overflows the stack past roughly 100,000: valid TOML with an inlined readme was "not valid TOML". No fact
 * comes from such a string; offsets stay as they are (positions come from offsets in the original text, so the line
 * breaks of a multi-line string can become spaces).
 */
export function blankLongStrings(text: string): { readonly text: string; readonly blanked: readonly Span[] } {
  const blanked: Span[] = [];
  let out: string[] | undefined;
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === '#') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
      continue;
    }
    if (char !== '"' && char !== "'") {
      i++;
      continue;
    }
    const triple = text.startsWith(char.repeat(3), i);
    const open = triple ? 3 : 1;
    let j = i + open;
    let bodyEnd = -1;
    while (j < text.length) {
      const c = text[j]!;
      if (char === '"' && c === '\\') {
        j += 2;
        continue;
      }
      if (!triple && c === '\n') break; // an unterminated one-line string: the parser says so
      if (c === char && (!triple || text.startsWith(char.repeat(3), j))) {
        // A multi-line string may end in one or two quotes of its own before the closing three.
        let close = j;
        if (triple) while (close + 3 < text.length && text[close + 3] === char && close - j < 2) close++;
        bodyEnd = close;
        j = close + open;
        break;
      }
      j++;
    }
    if (bodyEnd < 0) {
      i = j;
      continue;
    }
    const bodyStart = i + open;
    if (bodyEnd - bodyStart > LONG_STRING) {
      out ??= [];
      out.push(text.slice(copied, i), '""', ' '.repeat(j - i - 2));
      copied = j;
      blanked.push({ start: i, end: j });
    }
    i = j;
  }
  if (!out) return { text, blanked };
  out.push(text.slice(copied));
  return { text: out.join(''), blanked };
}

/**
 * Read a TOML document into the tree: the lock layout by the scanner (toml-scan.ts), anything else by the parser.
 * `omit`: keys whose values the caller never reads (a lock's wheel lists); the scanner checks them but builds nothing.
 */
export function readToml(original: string, omit?: ReadonlySet<string>): TomlDocument {
  const scanned = scanToml(original, omit);
  return scanned ? { ok: true, root: scanned } : parseToml(original);
}

/** Read a TOML document into the tree with toml-eslint-parser (the reference the scanner is checked against). */
export function parseToml(original: string): TomlDocument {
  const { text, blanked } = blankLongStrings(original);
  let program: AST.TOMLProgram;
  try {
    program = parseTOML(text);
  } catch (error) {
    const index = typeof (error as { index?: unknown }).index === 'number' ? (error as { index: number }).index : 0;
    const message =
      error instanceof RangeError
        ? 'beyond what the TOML parser can read here (it ran out of stack)'
        : (error as Error).message;
    return {
      ok: false,
      message: `not valid TOML: ${message}`,
      span: { start: index, end: Math.min(text.length, index + 1) },
    };
  }
  const root = newTable({ start: 0, end: text.length });
  const reading: Reading = { text: original, unread: new Set(blanked.map((span) => span.start)) };
  for (const node of program.body[0]?.body ?? []) {
    if (node.type === 'TOMLKeyValue') {
      insert(root, node, reading);
      continue;
    }
    const span = { start: node.range[0], end: node.range[1] };
    const path = node.resolvedKey;
    let target: TomlTable;
    if (node.kind === 'array') {
      const parent = tableAt(root, path.slice(0, -2), span);
      const name = String(path.at(-2));
      let list = parent.entries.get(name);
      if (!list || list.kind !== 'array') {
        list = { kind: 'array', span, items: [] };
        parent.entries.set(name, list);
        parent.keySpans.set(name, span);
      }
      target = newTable(span);
      list.items.push(target);
    } else {
      target = tableAt(root, path, span);
    }
    for (const pair of node.body) insert(target, pair, reading);
  }
  return { ok: true, root };
}

/** A document's root table, or undefined when it is not TOML, with the one positioned problem that says why. */
export function readTomlRoot(
  text: string,
  problems: ParseProblem[],
  omit?: ReadonlySet<string>,
): TomlTable | undefined {
  const document = readToml(text, omit);
  if (document.ok) return document.root;
  problems.push({ span: document.span, message: document.message });
  return undefined;
}

/** The value at a path of keys, if every step is a table. */
export function lookup(from: TomlValue | undefined, ...path: readonly string[]): TomlValue | undefined {
  let current = from;
  for (const part of path) {
    if (current?.kind !== 'table') return undefined;
    current = current.entries.get(part);
  }
  return current;
}

/** A table's string value at `key`. */
export function stringAt(table: TomlTable, key: string): TomlString | undefined {
  const value = table.entries.get(key);
  return value?.kind === 'string' ? value : undefined;
}

/** Whether a table's `key` is the boolean `true`. */
export function isTrue(table: TomlTable, key: string): boolean {
  const value = table.entries.get(key);
  return value?.kind === 'boolean' && value.value;
}

/** The span of a string's text without its quotes (the whole string where it is written with escapes). */
export function textSpan(value: TomlString): Span {
  const offset = value.mapped.plainOffset;
  return offset >= 0 ? { start: offset, end: offset + value.value.length } : value.span;
}
