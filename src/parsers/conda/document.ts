import { isAlias, isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair } from 'yaml';
import type { SourceText, Span } from '../source.js';
import { Mapped } from '../mapped.js';
import { scalarText, yamlProblem } from '../yaml-text.js';

/** A `dependencies` entry: a spec string, the `pip:` list, or anything else (ignored). */
export type CondaItem =
  | { readonly kind: 'scalar'; readonly value: Mapped | undefined }
  | { readonly kind: 'pip'; readonly span: Span; readonly entries: readonly (Mapped | undefined)[] }
  | { readonly kind: 'other' };

/** What the conda parser needs from an environment file, however it was read. */
export interface CondaDocument {
  readonly errors: readonly { readonly span: Span; readonly message: string }[];
  /**
   * `empty` (no content), `map`, or the span of a root that is not a mapping, and whether it is a list of mappings
   * (`records`: a file of records under an environment's name, never an environment).
   */
  readonly root: 'empty' | 'map' | { readonly notMap: Span; readonly records?: boolean };
  /** Items of `channels` when it is a list. */
  readonly channels: readonly (Mapped | undefined)[] | undefined;
  /** Items of `dependencies` when it is a list, or the span of a value that is not one. */
  readonly dependencies: readonly CondaItem[] | { readonly notList: Span } | undefined;
}

/**
 * Read an environment file. Files in the plain block-YAML subset environment files are written in are read
 * by a line scan; anything else (flow collections, quotes, anchors, tags, block scalars, multi-line scalars,
 * tabs, CR line breaks, values YAML resolves to numbers, booleans or null, duplicate keys) by the yaml
 * package. Both give the same document for every file the scan accepts: test/parsers/conda-scan.test.ts checks that
 * on the fixtures, the corpus, and generated and mutated files. The scan exists for speed: it builds no
 * general YAML document (docs/performance.md).
 */
export function readCondaDocument(text: string, source: SourceText): CondaDocument {
  return scanPlainConda(text) ?? readWithYaml(text, source);
}

/** Aliases resolved per file at most this many times (YAML's "billion laughs" bound). */
const MAX_ALIASES = 200;

/** The yaml-package reading: the reference for every file. Aliases (`- *cuda`) are resolved to their anchors. */
export function readWithYaml(text: string, source: SourceText): CondaDocument {
  const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false, strict: false, keepSourceTokens: false });
  const errors = doc.errors.map((error) => yamlProblem(error, text));
  let aliases = 0;
  /** A node, or the node its alias names; an alias that names nothing (or one too many) is a positioned error. */
  const resolved = (node: Node | null | undefined): Node | undefined => {
    if (!node || !isAlias(node)) return node ?? undefined;
    const [start, end] = node.range ?? [0, 0];
    if (++aliases > MAX_ALIASES) {
      if (aliases === MAX_ALIASES + 1)
        errors.push({ span: { start, end }, message: `YAML: more than ${MAX_ALIASES} aliases; the rest are not read` });
      return undefined;
    }
    const target = node.resolve(doc as Document) as Node | undefined;
    if (!target) errors.push({ span: { start, end }, message: `YAML: the alias *${node.source} names no anchor` });
    return target;
  };
  /** A scalar, through an alias: the anchor's value (findings and edits point at the anchor). */
  const scalar = (node: Node | null | undefined): Mapped | undefined => scalarText(resolved(node), source);
  const root = resolved(doc.contents as Node | null);
  if (!root) return { errors, root: 'empty', channels: undefined, dependencies: undefined };
  if (!isMap(root)) {
    const [start, end] = root.range ?? [0, 0];
    const records = isSeq(root) && root.items.length > 0 && root.items.every((item) => isMap(resolved(item as Node)));
    return {
      errors,
      root: { notMap: { start, end }, ...(records ? { records } : {}) },
      channels: undefined,
      dependencies: undefined,
    };
  }
  const channelsNode = resolved(valueOf(root.items, 'channels'));
  const channels =
    channelsNode && isSeq(channelsNode) ? channelsNode.items.map((item) => scalar(item as Node)) : undefined;
  const dependenciesNode = resolved(valueOf(root.items, 'dependencies'));
  let dependencies: CondaDocument['dependencies'];
  if (dependenciesNode && !isSeq(dependenciesNode)) {
    const [start, end] = dependenciesNode.range ?? [0, 0];
    dependencies = { notList: { start, end } };
  } else if (dependenciesNode) {
    dependencies = dependenciesNode.items.map((item): CondaItem => {
      const node = resolved(item as Node);
      if (!node || !isMap(node)) return { kind: 'scalar', value: scalar(item as Node) };
      const pip = resolved(valueOf(node.items, 'pip'));
      if (!pip || !isSeq(pip)) return { kind: 'other' };
      const [start, end] = node.range ?? [0, 0];
      return { kind: 'pip', span: { start, end }, entries: pip.items.map((entry) => scalar(entry as Node)) };
    });
  }
  return { errors, root: 'map', channels, dependencies };
}

function valueOf(items: readonly Pair[], key: string): Node | undefined {
  for (const pair of items) {
    const k = pair.key;
    if ((isScalar(k) && k.value === key) || k === key) return (pair.value ?? undefined) as Node | undefined;
  }
  return undefined;
}

interface Line {
  readonly start: number;
  /** Offset of the first non-blank character. */
  readonly at: number;
  /** End of the content before any comment, trailing blanks trimmed. */
  readonly end: number;
  /** Offset just after the line break (or the end of the text). */
  readonly next: number;
}

/** A key, `:`, and either nothing or a blank and a value. */
const KEY = /^([A-Za-z_][A-Za-z0-9_.-]*):(?=$| )/;
/** Plain scalars that YAML 1.2's core schema resolves to something other than a string. */
const NOT_A_STRING =
  /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?\.?[0-9].*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/**
 * The line scan of the plain subset, or undefined when the file is outside it. Accepted: top-level
 * `key: value` and `key:` with a block list (or, for keys we ignore, a block of `key: value` lines);
 * list items that are one plain scalar, or `pip:` with a block list of plain scalars; comments; blank lines.
 */
export function scanPlainConda(text: string): CondaDocument | undefined {
  if (/[\r\t\ufeff]/.test(text)) return undefined;
  const lines: Line[] = [];
  for (let start = 0; start < text.length; ) {
    let next = text.indexOf('\n', start);
    next = next < 0 ? text.length : next + 1;
    const lineEnd = text.charCodeAt(next - 1) === 10 ? next - 1 : next;
    let at = start;
    while (at < lineEnd && text.charCodeAt(at) === 32) at++;
    if (at < lineEnd && text.charCodeAt(at) !== 35 /* # */) {
      let end = commentStart(text, at, lineEnd);
      while (end > at && text.charCodeAt(end - 1) === 32) end--;
      lines.push({ start, at, end, next });
    }
    start = next;
  }
  if (lines.length === 0) return undefined;

  const seen = new Set<string>();
  let channels: (Mapped | undefined)[] | undefined;
  let dependencies: CondaItem[] | undefined;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.at !== line.start) return undefined;
    const content = text.slice(line.at, line.end);
    const key = KEY.exec(content);
    if (!key || seen.has(key[1]!)) return undefined;
    seen.add(key[1]!);
    i++;
    if (content.length > key[0].length) {
      // `key: value` on one line: a plain scalar, or for channels and dependencies a one-line `[a, b]` list.
      const valueStart = line.at + key[0].length + 1;
      if (key[1] === 'channels' || key[1] === 'dependencies') {
        const items = flowItems(text, valueStart, line.end);
        if (!items) return undefined;
        if (key[1] === 'channels') channels = items;
        else dependencies = items.map((value) => ({ kind: 'scalar', value }));
      } else if (plainScalar(text, valueStart, line.end) === undefined) {
        return undefined;
      }
      continue;
    }
    const block: Line[] = [];
    while (
      i < lines.length &&
      (lines[i]!.at > lines[i]!.start ||
        text.startsWith('- ', lines[i]!.at) ||
        (text.charCodeAt(lines[i]!.at) === 45 && lines[i]!.end === lines[i]!.at + 1))
    )
      block.push(lines[i++]!);
    if (block.length === 0) return undefined;
    if (key[1] === 'channels' || key[1] === 'dependencies') {
      const items = listItems(text, block, key[1] === 'dependencies');
      if (!items) return undefined;
      if (key[1] === 'channels') {
        if (items.some((item) => item.kind !== 'scalar')) return undefined;
        channels = items.map((item) => (item as { value: Mapped }).value);
      } else {
        dependencies = items;
      }
    } else if (!plainBlock(text, block)) {
      return undefined;
    }
  }
  return { errors: [], root: 'map', channels, dependencies };
}

/** A block list whose items all start at one indentation. */
function listItems(text: string, block: readonly Line[], allowPip: boolean): CondaItem[] | undefined {
  const indent = block[0]!.at - block[0]!.start;
  const items: CondaItem[] = [];
  for (let j = 0; j < block.length; ) {
    const line = block[j]!;
    if (line.at - line.start !== indent || !text.startsWith('- ', line.at)) return undefined;
    const valueStart = line.at + 2;
    if (allowPip && text.startsWith('pip:', valueStart) && line.end === valueStart + 4) {
      // `- pip:` and its own list, indented at least to the column of `pip`.
      const nested: Line[] = [];
      j++;
      while (j < block.length && block[j]!.at - block[j]!.start >= indent + 2) nested.push(block[j++]!);
      if (nested.length === 0) return undefined;
      const entries = listItems(text, nested, false);
      if (!entries || entries.some((entry) => entry.kind !== 'scalar')) return undefined;
      // The yaml package counts comment lines indented into the `pip:` mapping as part of it: leave those to it.
      const end = nested.at(-1)!.next;
      if (indentedCommentFollows(text, end, indent + 2)) return undefined;
      items.push({
        kind: 'pip',
        span: { start: valueStart, end },
        entries: entries.map((entry) => (entry as { value: Mapped }).value),
      });
      continue;
    }
    const value = plainScalar(text, valueStart, line.end);
    if (value === undefined) return undefined;
    items.push({ kind: 'scalar', value: Mapped.of(value, valueStart) });
    j++;
  }
  return items;
}

/**
 * Where ` #` starts a comment within [from, to), or `to`; it only looks inside the line, so a file costs linear time.
 */
function commentStart(text: string, from: number, to: number): number {
  for (let i = from; i < to - 1; i++) if (text.charCodeAt(i) === 32 && text.charCodeAt(i + 1) === 35) return i;
  return to;
}

/** Whether a comment line indented at least `column` comes after `from` before the next content line. */
function indentedCommentFollows(text: string, from: number, column: number): boolean {
  for (let start = from; start < text.length; ) {
    let next = text.indexOf('\n', start);
    next = next < 0 ? text.length : next + 1;
    let at = start;
    while (at < next && text.charCodeAt(at) === 32) at++;
    const code = text.charCodeAt(at);
    if (code === 35 /* # */) {
      if (at - start >= column) return true;
    } else if (at < next && code !== 10) {
      return false;
    }
    start = next;
  }
  return false;
}

/** `[a, b]` on one line, items plain scalars without flow indicators. */
function flowItems(text: string, start: number, end: number): Mapped[] | undefined {
  if (text.charCodeAt(start) !== 91 /* [ */ || text.charCodeAt(end - 1) !== 93 /* ] */) return undefined;
  const items: Mapped[] = [];
  let from = start + 1;
  const close = end - 1;
  if (/^ *$/.test(text.slice(from, close))) return items;
  while (from <= close) {
    let comma = text.indexOf(',', from);
    if (comma < 0 || comma > close) comma = close;
    let a = from;
    let b = comma;
    while (a < b && text.charCodeAt(a) === 32) a++;
    while (b > a && text.charCodeAt(b - 1) === 32) b--;
    const value = plainScalar(text, a, b);
    if (value === undefined || /[[\]{},#]/.test(value)) return undefined;
    items.push(Mapped.of(value, a));
    from = comma + 1;
  }
  return items;
}

/** `key: value` lines at one indentation (e.g. `variables:`), read only to be sure they are plain. */
function plainBlock(text: string, block: readonly Line[]): boolean {
  const indent = block[0]!.at - block[0]!.start;
  return block.every((line) => {
    if (line.at - line.start !== indent) return false;
    const key = KEY.exec(text.slice(line.at, line.end));
    return (
      key !== null &&
      line.end > line.at + key[0].length &&
      plainScalar(text, line.at + key[0].length + 1, line.end) !== undefined
    );
  });
}

/** The text of a one-line plain scalar that YAML reads as exactly that string, or undefined. */
function plainScalar(text: string, start: number, end: number): string | undefined {
  if (start >= end || text.charCodeAt(start) === 32) return undefined;
  const value = text.slice(start, end);
  // Indicators that start something other than a plain scalar, and `: ` / a final `:` that make a mapping.
  if (
    /^[?:,[\]{}#&*!|>'"%@`]/.test(value) ||
    /^-(?:$| )/.test(value) ||
    /: |:$/.test(value) ||
    NOT_A_STRING.test(value)
  )
    return undefined;
  return value;
}
