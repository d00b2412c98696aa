/**
 * A line scanner for the plain block YAML that lock writers emit (pixi's serde_yaml, conda-lock's ruamel): block
 * mappings and sequences, one-line plain and quoted scalars, `{}` and `[]`, comments. It reads a 5 MB pixi.lock in
 * tens of milliseconds where the `yaml` document parser takes seconds, and builds the same tree `readLockYaml`
 * makes from that parser (`test/parsers/lock-scan.test.ts` checks both on real locks and mutated ones).
 *
 * It declines (returns undefined) everything it is not certain to read exactly as YAML 1.2 does: tabs, CR, control
 * characters, a byte-order mark, directives and document markers, anchors, aliases, tags, block scalars, flow
 * collections other than `{}`/`[]`, multi-line scalars, double-quoted escapes, compact nested sequences,
 * indentation YAML would reject, a root that is not a mapping. The caller then reads the file with the `yaml`
 * package, which stays the reference (and says where the file is wrong).
 */
import type { LockMap, LockNode, LockPair, LockScalar, LockSeq } from './lock-tree.js';
import { NONE } from './lock-tree.js';

/** Nesting deeper than this is left to the full parser (lock files nest five or six levels). */
const MAX_DEPTH = 64;
/** YAML limits an implicit key to 1,024 characters (YAML 1.2 §7.4.2). */
const MAX_KEY = 1024;

/** Characters YAML forbids or this scanner does not read: tabs, CR, other C0 controls, DEL, a byte-order mark. */
// eslint-disable-next-line no-control-regex -- matching the control characters YAML forbids is the point
const UNREAD = /[\x00-\x09\x0b-\x1f\x7f\ufeff]/;
/** What YAML's core schema reads as null, a boolean, an integer or a float (yaml's schema/core). */
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const NOT_STRING =
  /^(?:~|[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE|0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$/;

/** Thrown inside the scanner when the text is not of the plain layout; caught once at the top. */
class Decline extends Error {}
const decline = (): never => {
  throw new Decline();
};

const SPACE = 32;
const HASH = 35;
const COLON = 58;
const DASH = 45;
const SINGLE = 39;
const DOUBLE = 34;
const BACKSLASH = 92;
/** Characters a plain scalar may not start with here: YAML's indicators (YAML 1.2 §5.3), quotes handled apart. */
const INDICATOR = new Set([...'-?:,[]{}#&*!|>%@`'].map((c) => c.charCodeAt(0)));

/** The text's block tree, or undefined when it is not plain block YAML with a mapping at its root. Never throws. */
export function scanBlockYaml(text: string): LockMap | undefined {
  if (UNREAD.test(text)) return undefined;
  try {
    return new Scanner(text).document();
  } catch (error) {
    if (error instanceof Decline) return undefined;
    throw error;
  }
}

class Scanner {
  /** Per content line (not blank, not a comment): where its content starts, its indentation, where it ends. */
  private readonly starts: number[] = [];
  private readonly indents: number[] = [];
  private readonly ends: number[] = [];
  private line = 0;

  constructor(private readonly text: string) {
    const length = text.length;
    for (let at = 0; at < length; ) {
      let end = text.indexOf('\n', at);
      if (end < 0) end = length;
      let content = at;
      while (content < end && text.charCodeAt(content) === SPACE) content++;
      if (content < end && text.charCodeAt(content) !== HASH) {
        // Directives and document markers start in the first column.
        if (content === at && (text.charCodeAt(at) === 37 || text.startsWith('---', at) || text.startsWith('...', at)))
          decline();
        this.starts.push(content);
        this.indents.push(content - at);
        this.ends.push(end);
      }
      at = end + 1;
    }
  }

  document(): LockMap {
    if (this.starts.length === 0 || this.indents[0] !== 0) decline();
    const root = this.map(0, this.starts[0]!, 0);
    if (this.line < this.starts.length) decline();
    return root;
  }

  private get more(): boolean {
    return this.line < this.starts.length;
  }

  /**
   * A block mapping at `indent` whose first key line's content starts at `first` (on a line of its own, or after a
   * `- ` on the current line), then every key line at that indentation.
   */
  private map(indent: number, first: number, depth: number): LockMap {
    if (depth > MAX_DEPTH) decline();
    const pairs: LockPair[] = [];
    let start = first;
    for (;;) {
      const end = this.ends[this.line]!;
      this.line++;
      pairs.push(this.pair(start, end, indent, depth));
      if (!this.more) break;
      const next = this.indents[this.line]!;
      if (next < indent) break;
      if (next > indent) decline();
      start = this.starts[this.line]!;
      if (this.isEntry(start)) decline();
    }
    return { kind: 'map', pairs };
  }

  /** A block sequence at `indent`: every `- ` line at that indentation. */
  private seq(indent: number, depth: number): LockSeq {
    if (depth > MAX_DEPTH) decline();
    const items: LockNode[] = [];
    while (this.more && this.indents[this.line] === indent && this.isEntry(this.starts[this.line]!)) {
      const at = this.starts[this.line]!;
      const end = this.ends[this.line]!;
      let content = at + 1;
      while (content < end && this.text.charCodeAt(content) === SPACE) content++;
      if (content === end || this.text.charCodeAt(content) === HASH) {
        // `-` alone: the item is the block below it, deeper than the dash, or nothing.
        this.line++;
        items.push(this.more && this.indents[this.line]! > indent ? this.block(depth + 1) : NONE);
        continue;
      }
      if (this.isEntry(content)) decline();
      const key = this.keyEnd(content, end);
      if (key >= 0) {
        items.push(this.map(content - (at - indent), content, depth + 1));
        continue;
      }
      this.line++;
      items.push(this.scalar(content, end));
      if (this.more && this.indents[this.line]! > indent) decline();
    }
    if (this.more && this.indents[this.line]! > indent) decline();
    return { kind: 'seq', items };
  }

  /** The block starting at the current line: a sequence or a mapping at its indentation. */
  private block(depth: number): LockNode {
    const indent = this.indents[this.line]!;
    const start = this.starts[this.line]!;
    if (this.isEntry(start)) return this.seq(indent, depth);
    if (this.keyEnd(start, this.ends[this.line]!) < 0) decline();
    return this.map(indent, start, depth);
  }

  /** One `key: value` (or `key:` with its block below) whose key starts at `start`; the line is already consumed. */
  private pair(start: number, end: number, indent: number, depth: number): LockPair {
    const text = this.text;
    const colon = this.keyEnd(start, end);
    if (colon < 0) decline();
    let key: string | undefined;
    let keyEnd = colon;
    const first = text.charCodeAt(start);
    if (first === SINGLE || first === DOUBLE) {
      key = this.quoted(start, colon).value;
    } else {
      const raw = text.slice(start, colon);
      if (raw.length > MAX_KEY || raw.charCodeAt(raw.length - 1) === SPACE) decline();
      key = NOT_STRING.test(raw) ? undefined : raw;
      keyEnd = colon;
    }
    let value = colon + 1;
    while (value < end && text.charCodeAt(value) === SPACE) value++;
    let node: LockNode;
    if (value === end || text.charCodeAt(value) === HASH) {
      if (!this.more) node = NONE;
      else {
        const next = this.indents[this.line]!;
        if (next > indent) node = this.block(depth + 1);
        else if (next === indent && this.isEntry(this.starts[this.line]!)) node = this.seq(indent, depth + 1);
        else node = NONE;
      }
    } else {
      node = this.scalar(value, end);
      if (this.more && this.indents[this.line]! > indent) decline();
    }
    return { key, keyStart: start, keyEnd, value: node };
  }

  /** Whether the content at `at` is a sequence entry (`- …` or `-` alone). */
  private isEntry(at: number): boolean {
    if (this.text.charCodeAt(at) !== DASH) return false;
    const next = this.text.charCodeAt(at + 1);
    return next === SPACE || next === 10 || Number.isNaN(next);
  }

  /**
   * Where the key of a key line ends (its `:`), or -1 when the content is no key line (a scalar). A quoted key
   * must be followed by its colon; a plain one ends at the first `: ` or line-ending `:` before any ` #`.
   */
  private keyEnd(start: number, end: number): number {
    const text = this.text;
    const first = text.charCodeAt(start);
    if (first === SINGLE || first === DOUBLE) {
      const close = this.quoted(start, end).end;
      if (
        close < end &&
        text.charCodeAt(close) === COLON &&
        (close + 1 === end || text.charCodeAt(close + 1) === SPACE)
      )
        return close;
      return -1;
    }
    if (INDICATOR.has(first)) decline();
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === COLON && (i + 1 === end || text.charCodeAt(i + 1) === SPACE)) return i;
      if (c === HASH && text.charCodeAt(i - 1) === SPACE) return -1;
    }
    return -1;
  }

  /** A quoted scalar starting at `start` that closes before `end`: its value, and where it ends (after the quote). */
  private quoted(start: number, end: number): { value: string; end: number; escaped: boolean } {
    const text = this.text;
    const quote = text.charCodeAt(start);
    if (quote === DOUBLE) {
      const close = text.indexOf('"', start + 1);
      if (close < 0 || close >= end) decline();
      const inner = text.slice(start + 1, close);
      if (inner.includes('\\')) decline();
      return { value: inner, end: close + 1, escaped: false };
    }
    let escaped = false;
    for (let i = start + 1; ; ) {
      const close = text.indexOf("'", i);
      if (close < 0 || close >= end) decline();
      if (text.charCodeAt(close + 1) === SINGLE && close + 1 < end) {
        escaped = true;
        i = close + 2;
        continue;
      }
      const inner = text.slice(start + 1, close);
      return { value: escaped ? inner.replaceAll("''", "'") : inner, end: close + 1, escaped };
    }
  }

  /** A one-line scalar value from `start` to the line's end (a trailing comment allowed), or `{}` / `[]`. */
  private scalar(start: number, end: number): LockNode {
    const text = this.text;
    const first = text.charCodeAt(start);
    let stop: number;
    let node: LockNode;
    if (first === SINGLE || first === DOUBLE) {
      const read = this.quoted(start, end);
      stop = read.end;
      node = {
        kind: 'scalar',
        value: read.value,
        at: read.escaped ? -1 : start + 1,
        start,
        end: stop,
      } satisfies LockScalar;
    } else if (
      (first === 123 && text.charCodeAt(start + 1) === 125) ||
      (first === 91 && text.charCodeAt(start + 1) === 93)
    ) {
      stop = start + 2;
      node = first === 123 ? { kind: 'map', pairs: [] } : { kind: 'seq', items: [] };
    } else {
      if (INDICATOR.has(first) || first === BACKSLASH) decline();
      stop = end;
      for (let i = start; i < end; i++) {
        const c = text.charCodeAt(i);
        if (c === HASH && text.charCodeAt(i - 1) === SPACE) {
          stop = i;
          break;
        }
        if (c === COLON && (i + 1 === end || text.charCodeAt(i + 1) === SPACE)) decline();
      }
      while (stop > start && text.charCodeAt(stop - 1) === SPACE) stop--;
      const raw = text.slice(start, stop);
      return NULL.test(raw) ? NONE : ({ kind: 'scalar', value: raw, at: start, start, end: stop } satisfies LockScalar);
    }
    // After a quoted scalar or an empty collection: spaces, then the line's end or a comment.
    let rest = stop;
    while (rest < end && text.charCodeAt(rest) === SPACE) rest++;
    if (rest < end && !(text.charCodeAt(rest) === HASH && rest > stop)) decline();
    return node;
  }
}
