/**
 * The tree a YAML lock file is read into: mappings (pairs in document order, duplicates kept), sequences and
 * scalars with their text and where it maps to the file. Both readers build it: the line scanner for the plain
 * layout lock writers emit (yaml-block-scan.ts) and, for anything else, the `yaml` package's document
 * (`fromYaml`), so the lock parsers read one shape whichever read the file.
 */
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { Mapped, MappedBuilder } from './mapped.js';
import type { SourceText, Span } from './source.js';
import { scalarText } from './yaml-text.js';

export interface LockScalar {
  readonly kind: 'scalar';
  /** The scalar's text as YAML reads it; undefined for null (`~`, `null`, nothing). */
  readonly value: string | undefined;
  /** The file offset where `value` is copied character for character, or -1: it maps to start..end as a whole. */
  readonly at: number;
  readonly start: number;
  readonly end: number;
}
export interface LockPair {
  /** The key when YAML reads it as a string, else undefined (`1:`, `true:`, `null:`). */
  readonly key: string | undefined;
  readonly keyStart: number;
  readonly keyEnd: number;
  readonly value: LockNode;
}
export interface LockMap {
  readonly kind: 'map';
  readonly pairs: readonly LockPair[];
}
export interface LockSeq {
  readonly kind: 'seq';
  readonly items: readonly LockNode[];
}
export type LockNode = LockMap | LockSeq | LockScalar;

/** Null, an absent value or an item left unread: one node, whose spans are never read. */
export const NONE: LockScalar = { kind: 'scalar', value: undefined, at: -1, start: 0, end: 0 };

/** Nodes deeper than this are not converted (no lock parser reads below the sixth level). */
const MAX_DEPTH = 64;

/**
 * The lock tree of a `yaml` node (aliases already resolved: a node met twice is converted once, so a document whose
 * aliases share nodes costs its size, not its expansion).
 */
export function fromYaml(node: unknown, source: SourceText): LockNode {
  const seen = new Map<unknown, LockNode>();
  const convert = (value: unknown, depth: number): LockNode => {
    if (!value || depth > MAX_DEPTH) return NONE;
    const known = seen.get(value);
    if (known) return known;
    let made: LockNode;
    if (isMap(value))
      made = {
        kind: 'map',
        pairs: value.items.map((pair) => {
          const key = pair.key as Node | null;
          const range = key?.range;
          return {
            key: isScalar(key) && typeof key.value === 'string' ? key.value : undefined,
            keyStart: range?.[0] ?? 0,
            keyEnd: range?.[1] ?? 0,
            value: convert(pair.value, depth + 1),
          };
        }),
      };
    else if (isSeq(value)) made = { kind: 'seq', items: value.items.map((item) => convert(item, depth + 1)) };
    else {
      const text = scalarText(value as Node, source);
      const range = (value as Node).range ?? [0, 0];
      made = text ? { kind: 'scalar', value: text.text, at: text.plainOffset, start: range[0], end: range[1] } : NONE;
    }
    seen.set(value, made);
    return made;
  };
  return convert(node, 0);
}

/** The value at `key` of a mapping node (the first pair with that key, as YAML's `get`). */
export function get(node: LockNode | undefined, key: string): LockNode | undefined {
  if (node?.kind !== 'map') return undefined;
  for (const pair of node.pairs) if (pair.key === key) return pair.value;
  return undefined;
}

/** The items of a sequence node. */
export function items(node: LockNode | undefined): readonly LockNode[] {
  return node?.kind === 'seq' ? node.items : [];
}

/** The pairs of a mapping node whose keys are strings, as [key, key span, value]. */
export function entries(node: LockNode | undefined): [string, Span, LockNode][] {
  if (node?.kind !== 'map') return [];
  const out: [string, Span, LockNode][] = [];
  for (const pair of node.pairs)
    if (pair.key !== undefined) out.push([pair.key, { start: pair.keyStart, end: pair.keyEnd }, pair.value]);
  return out;
}

/** A scalar's text mapped to the file (exactly where it is written plainly, else to the scalar as a whole). */
export function text(node: LockNode | undefined): Mapped | undefined {
  if (node?.kind !== 'scalar' || node.value === undefined) return undefined;
  if (node.at >= 0) return Mapped.of(node.value, node.at);
  const builder = new MappedBuilder();
  builder.pushSegment(node.value, -1, { start: node.start, end: node.end });
  return builder.build();
}
