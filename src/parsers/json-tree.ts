/**
 * JSON (RFC 8259) read into the tree the TOML readers give (toml-tree.ts: tables, arrays, strings mapped to the file,
 * booleans, every other value as its span), so a JSON lock (Pipfile.lock) is read with the same `lookup` and
 * `stringAt`. Strict as `JSON.parse` is: the same texts are refused (test/parsers/json-tree.test.ts checks both
 * ways), each with one positioned problem. One loop with its own stack: deep nesting cannot overflow the call stack.
 * A key given twice keeps its last value, as `JSON.parse` does.
 */
import type { ParseProblem } from './facts.js';
import { Mapped, MappedBuilder } from './mapped.js';
import type { Span } from './source.js';
import { LONG_STRING, newTable, type TomlString, type TomlTable, type TomlValue } from './toml-tree.js';

class JsonError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

/** An object or array being read, with the key its next value goes under. */
interface Open {
  readonly node: TomlValue & { kind: 'table' | 'array' };
  key?: TomlString;
}

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/** The document's top-level object, or undefined with one positioned problem (`what` names the file). */
export function readJsonRoot(text: string, problems: ParseProblem[], what: string): TomlTable | undefined {
  try {
    const root = readJson(text);
    if (root.kind === 'table') return root;
    problems.push({ span: root.span, message: `${what} must be a JSON object` });
  } catch (error) {
    if (!(error instanceof JsonError)) throw error;
    const start = Math.min(error.at, text.length);
    problems.push({ span: { start, end: Math.min(start + 1, text.length) }, message: `JSON: ${error.message}` });
  }
  return undefined;
}

/** The whole text as one JSON value; throws a JsonError at the first character that is not JSON. */
export function readJson(text: string): TomlValue {
  let i = skip(text, 0);
  const stack: Open[] = [];
  let done: TomlValue | undefined;
  for (;;) {
    // A value starts here (the top one, an array item, or an object member's after its colon).
    const value = readScalarOrOpen(text, i, stack);
    i = value.end;
    let finished: TomlValue | undefined = value.node;
    // Close what ends here, and place each finished value in the container around it.
    for (;;) {
      if (finished === undefined) break; // a container was opened: its first value (or its end) comes next
      const parent = stack[stack.length - 1];
      if (!parent) {
        done = finished;
        break;
      }
      place(parent, finished);
      i = skip(text, i);
      const c = text.charCodeAt(i);
      const close = parent.node.kind === 'table' ? 0x7d : 0x5d;
      if (c === 0x2c) {
        i = skip(text, i + 1);
        if (parent.node.kind === 'table') i = readKey(text, i, parent);
        break;
      }
      if (c !== close)
        throw new JsonError(
          `expected "," or "${parent.node.kind === 'table' ? '}' : ']'}" ${found(text, i)}`,
          Number.isNaN(c) ? text.length : i,
        );
      i += 1;
      stack.pop();
      (parent.node.span as { end: number }).end = i;
      finished = parent.node;
    }
    if (done) break;
  }
  i = skip(text, i);
  if (i < text.length) throw new JsonError(`unexpected ${found(text, i)} after the value`, i);
  return done;
}

function place(parent: Open, value: TomlValue): void {
  if (parent.node.kind === 'array') {
    parent.node.items.push(value);
    return;
  }
  const key = parent.key!;
  parent.node.entries.set(key.value, value); // a repeated key: the last value, in the first one's place
  // The key's characters without its quotes, where it has no escapes (as a TOML key's span is).
  const offset = key.mapped.plainOffset;
  parent.node.keySpans.set(key.value, offset >= 0 ? { start: offset, end: offset + key.value.length } : key.span);
  parent.key = undefined;
}

/**
 * A scalar at `i` (its node and end), or an object or array opened there (no node: it is pushed on the stack, with
 * its first key read, or closed at once when empty).
 */
function readScalarOrOpen(
  text: string,
  i: number,
  stack: Open[],
): { readonly node: TomlValue | undefined; readonly end: number } {
  const c = text.charCodeAt(i);
  if (c === 0x7b || c === 0x5b) {
    const start = i;
    i = skip(text, i + 1);
    const node: TomlValue & { kind: 'table' | 'array' } =
      c === 0x7b ? newTable({ start, end: start }) : { kind: 'array', span: { start, end: start }, items: [] };
    if (text.charCodeAt(i) === (c === 0x7b ? 0x7d : 0x5d)) {
      (node.span as { end: number }).end = i + 1;
      return { node, end: i + 1 };
    }
    const open: Open = { node };
    stack.push(open);
    if (c === 0x7b) i = readKey(text, i, open);
    return { node: undefined, end: i };
  }
  if (c === 0x22) {
    const string = readString(text, i);
    return { node: string, end: string.span.end };
  }
  for (const [word, node] of LITERALS)
    if (text.startsWith(word, i)) {
      const span = { start: i, end: i + word.length };
      return {
        node: node === undefined ? { kind: 'other', span } : { kind: 'boolean', span, value: node },
        end: span.end,
      };
    }
  NUMBER.lastIndex = i;
  const number = NUMBER.exec(text);
  if (number)
    return { node: { kind: 'other', span: { start: i, end: i + number[0].length } }, end: i + number[0].length };
  throw new JsonError(`expected a value ${found(text, i)}`, Number.isNaN(c) ? text.length : i);
}

const LITERALS: readonly (readonly [string, boolean | undefined])[] = [
  ['true', true],
  ['false', false],
  ['null', undefined],
];

/** A member's key and its colon at `i`; returns where its value starts. */
function readKey(text: string, i: number, open: Open): number {
  if (text.charCodeAt(i) !== 0x22) throw new JsonError(`expected a key in double quotes ${found(text, i)}`, i);
  const key = readString(text, i);
  open.key = key;
  i = skip(text, key.span.end);
  if (text.charCodeAt(i) !== 0x3a) throw new JsonError(`expected ":" after the key ${found(text, i)}`, i);
  return skip(text, i + 1);
}

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** A string at `i` (its opening quote). */
function readString(text: string, i: number): TomlString {
  const start = i;
  let from = i + 1;
  let value = '';
  let escaped = false;
  for (i = from; ; i++) {
    const c = text.charCodeAt(i);
    if (Number.isNaN(c)) throw new JsonError('a string is not closed', start);
    if (c === 0x22) break;
    if (c < 0x20) throw new JsonError('a control character in a string (write it as an escape)', i);
    if (c !== 0x5c) continue;
    value += text.slice(from, i);
    const next = text[i + 1];
    if (next === 'u') {
      const hex = text.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonError('"\\u" needs four hexadecimal digits', i);
      value += String.fromCharCode(Number.parseInt(hex, 16));
      i += 5;
    } else {
      const replacement = next === undefined ? undefined : ESCAPES[next];
      if (replacement === undefined) throw new JsonError(`"\\${next ?? ''}" is not a JSON escape`, i);
      value += replacement;
      i += 1;
    }
    escaped = true;
    from = i + 1;
  }
  value += text.slice(from, i);
  const span: Span = { start, end: i + 1 };
  let mapped: Mapped;
  if (escaped || i - start - 1 > LONG_STRING) {
    const builder = new MappedBuilder();
    builder.pushSegment(value, -1, span);
    mapped = builder.build();
  } else mapped = Mapped.of(value, start + 1);
  return { kind: 'string', span, value, mapped };
}

function skip(text: string, i: number): number {
  while (WHITESPACE.has(text.charCodeAt(i))) i++;
  return i;
}

function found(text: string, i: number): string {
  if (i >= text.length) return 'at the end of the file';
  const c = text.codePointAt(i)!;
  return `but found ${c < 0x20 || c === 0x7f ? `the control character U+${c.toString(16).padStart(4, '0').toUpperCase()}` : `"${String.fromCodePoint(c)}"`}`;
}
