/**
 * The tree a TOML document is read into (toml.ts with toml-eslint-parser, toml-scan.ts for the lock layout): tables,
 * arrays, strings mapped to the file, booleans, and every other value as its span.
 */
import type { Mapped } from './mapped.js';
import type { Span } from './source.js';

export type TomlValue =
  | {
      readonly kind: 'table';
      readonly span: Span;
      readonly entries: Map<string, TomlValue>;
      readonly keySpans: Map<string, Span>;
    }
  | { readonly kind: 'array'; readonly span: Span; readonly items: TomlValue[] }
  | { readonly kind: 'string'; readonly span: Span; readonly value: string; readonly mapped: Mapped }
  | { readonly kind: 'boolean'; readonly span: Span; readonly value: boolean }
  | { readonly kind: 'other'; readonly span: Span };

export type TomlTable = Extract<TomlValue, { kind: 'table' }>;
export type TomlString = Extract<TomlValue, { kind: 'string' }>;

/** An empty table at `span`. */
export function newTable(span: Span): TomlTable {
  return { kind: 'table', span, entries: new Map(), keySpans: new Map() };
}

/** Strings longer than this are not read (an inlined readme or licence): toml-eslint-parser cannot take them whole. */
export const LONG_STRING = 16 * 1024;
