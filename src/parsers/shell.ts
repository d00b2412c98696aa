import type { ArgOrigin } from '../facts.js';
import type { Span } from '../source.js';
import { MappedBuilder, type Mapped } from './mapped.js';

/** A shell word after quote removal and parameter expansion, still mapped to the file. */
export interface Word {
  readonly text: string;
  readonly mapped: Mapped;
  /** Where the word is written (annotation position). */
  readonly span: Span;
  /** Set when the word contains a `$VAR` whose value is not known at build-file level. */
  readonly unresolved?: string;
}

export type Command = readonly Word[];

/** What a `$NAME` expands to, where it is known. */
export interface Variable {
  readonly value: Mapped;
  /** Where the value is defined (ARG/ENV), for edits that must go to the definition. */
  readonly defined?: Span;
}

export type Resolver = (name: string) => Variable | { readonly unresolved: string } | undefined;

const OPERATOR_CHARS = new Set(['&', '|', ';', '(', ')', '\n']);

/**
 * Split a (continuation-joined) shell script into simple commands. Not a full POSIX parser: it knows quotes,
 * escapes, `$VAR`/`${VAR}`/`${VAR:-default}`, comments, command separators and redirections, which is what
 * package-manager invocations in build files use. It never throws.
 */
export function splitCommands(script: Mapped, resolve: Resolver): Command[] {
  const text = script.text;
  const commands: Command[] = [];
  let current: Word[] = [];
  let i = 0;
  let skipNextWord = false;
  const braces = new ClosingBraces(text);

  const endCommand = (): void => {
    if (current.length > 0) commands.push(current);
    current = [];
  };

  while (i < text.length) {
    const ch = text[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
      continue;
    }
    if (OPERATOR_CHARS.has(ch)) {
      endCommand();
      i++;
      continue;
    }
    if (ch === '#' ) {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (ch === '>' || ch === '<' || (/[0-9]/.test(ch) && (text[i + 1] === '>' || text[i + 1] === '<'))) {
      // Redirection: skip the operator; its target word is not an argument.
      while (i < text.length && /[0-9<>&|-]/.test(text[i]!)) i++;
      skipNextWord = true;
      continue;
    }
    const { word, next } = readWord(script, i, resolve, braces);
    i = next;
    if (skipNextWord) {
      skipNextWord = false;
      continue;
    }
    if (word) current.push(word);
  }
  endCommand();
  return commands;
}

function readWord(script: Mapped, startIndex: number, resolve: Resolver, braces: ClosingBraces): { word?: Word; next: number } {
  const text = script.text;
  const out = new MappedBuilder();
  let i = startIndex;
  let quote: '"' | "'" | undefined;
  let unresolved: string | undefined;
  // Runs of ordinary characters are copied as one piece; only quotes, escapes and `$` break a run.
  let runStart = i;
  const flush = (to: number): void => {
    if (to > runStart) out.pushMapped(script.slice(runStart, to));
  };

  while (i < text.length) {
    const ch = text[i]!;
    if (!quote) {
      if (ch === ' ' || ch === '\t' || ch === '\r' || OPERATOR_CHARS.has(ch) || ch === '>' || ch === '<') break;
      if (ch === '"' || ch === "'") {
        flush(i);
        quote = ch;
        runStart = ++i;
        continue;
      }
      if (ch === '\\' && i + 1 < text.length) {
        flush(i);
        runStart = i + 1;
        i += 2;
        continue;
      }
    } else if (ch === quote) {
      flush(i);
      quote = undefined;
      runStart = ++i;
      continue;
    } else if (quote === '"' && ch === '\\' && i + 1 < text.length && /["\\$`]/.test(text[i + 1]!)) {
      flush(i);
      runStart = i + 1;
      i += 2;
      continue;
    }
    if (ch === '$' && quote !== "'") {
      const expansion = readExpansion(script, i, resolve, braces);
      if (expansion) {
        flush(i);
        if ('unresolved' in expansion) {
          unresolved ??= expansion.unresolved;
          out.pushMapped(script.slice(i, expansion.next));
        } else {
          out.pushMapped(expansion.value);
        }
        i = expansion.next;
        runStart = i;
        continue;
      }
    }
    i++;
  }
  if (i === startIndex) return { next: i + 1 };
  // A word of one run of ordinary characters (most words) is a slice of the script; no pieces to assemble.
  const plain = out.length === 0 && runStart === startIndex;
  if (!plain) flush(i);
  const mapped = plain ? script.slice(startIndex, i) : out.build();
  const word: Word = {
    text: mapped.text,
    mapped,
    span: script.site(startIndex, i),
    ...(unresolved ? { unresolved } : {}),
  };
  return { word, next: i };
}

type Expansion = { value: Mapped; next: number } | { unresolved: string; next: number };

/**
 * The `}` that closes a `${` at or after a position. It remembers its last answer: a search from `from` that
 * found the first `}` at `close` answers every position between them, so a script full of unclosed `${` is
 * searched once rather than once per `${`.
 */
class ClosingBraces {
  private from = -1;
  private close = -1;

  constructor(private readonly text: string) {}

  after(from: number): number {
    if (this.from < 0 || from < this.from || (this.close >= 0 && from > this.close)) {
      this.from = from;
      this.close = this.text.indexOf('}', from);
    }
    return this.close;
  }
}

function readExpansion(script: Mapped, at: number, resolve: Resolver, braces: ClosingBraces): Expansion | undefined {
  const text = script.text;
  let name: string;
  let next: number;
  let fallback: Mapped | undefined;
  if (text[at + 1] === '{') {
    const close = braces.after(at + 2);
    if (close < 0) return undefined;
    const body = text.slice(at + 2, close);
    const match = /^([A-Za-z_][A-Za-z0-9_]*)(?::?-(.*))?$/s.exec(body);
    if (!match) return { unresolved: `\${${body}} uses shell features that are only evaluated at build time`, next: close + 1 };
    name = match[1]!;
    if (match[2] !== undefined) fallback = script.slice(at + 2 + body.indexOf('-') + 1, close);
    next = close + 1;
  } else {
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(at + 1, at + 65));
    if (!match) return undefined;
    name = match[0];
    next = at + 1 + name.length;
  }
  const reference = script.site(at, next);
  const found = resolve(name);
  if (found && 'value' in found && found.value.length > 0) return { value: viaArg(found.value, { name, reference }), next };
  if (fallback) return { value: fallback, next };
  if (found && 'unresolved' in found) return { unresolved: found.unresolved, next };
  return { unresolved: `$${name} is not defined by an ARG or ENV in this build stage`, next };
}

function viaArg(value: Mapped, origin: ArgOrigin): Mapped {
  const builder = new MappedBuilder();
  for (const seg of value.pieces()) {
    builder.pushSegment(value.text.slice(seg.from, seg.to), seg.origin, origin.reference, origin);
  }
  return builder.build();
}
