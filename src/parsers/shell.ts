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

/** `&`, `|`, `;`, `(`, `)` and a line break: they end a simple command. */
function isOperator(code: number): boolean {
  return code === 38 || code === 124 || code === 59 || code === 40 || code === 41 || code === 10;
}

/** What ends an unquoted word: a blank, an operator, or a redirection. */
function endsWord(code: number): boolean {
  return code === 32 || code === 9 || code === 13 || isOperator(code) || code === 62 || code === 60;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

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
    const code = text.charCodeAt(i);
    if (code === 32 || code === 9 || code === 13) {
      i++;
      continue;
    }
    if (isOperator(code)) {
      endCommand();
      i++;
      continue;
    }
    if (code === 35) {
      // `#`: a comment to the end of the line.
      while (i < text.length && text.charCodeAt(i) !== 10) i++;
      continue;
    }
    const following = text.charCodeAt(i + 1);
    if (code === 62 || code === 60 || (isDigit(code) && (following === 62 || following === 60))) {
      // Redirection (`>`, `2>`, `&>`, `<`): skip the operator; its target word is not an argument.
      while (i < text.length && isRedirectionChar(text.charCodeAt(i))) i++;
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
  // Built only for words with quotes, escapes or expansions; a plain word is a slice of the script.
  let out: MappedBuilder | undefined;
  let i = startIndex;
  let quote = 0; // the char code of the open quote, 0 outside quotes
  let unresolved: string | undefined;
  // Runs of ordinary characters are copied as one piece; only quotes, escapes and `$` break a run.
  let runStart = i;
  const push = (piece: Mapped): void => (out ??= new MappedBuilder()).pushMapped(piece);
  const flush = (to: number): void => {
    if (to > runStart) push(script.slice(runStart, to));
  };

  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (quote === 0) {
      if (endsWord(code)) break;
      if (code === 34 || code === 39) {
        flush(i);
        quote = code;
        runStart = ++i;
        continue;
      }
      if (code === 92 && i + 1 < text.length) {
        flush(i);
        runStart = i + 1;
        i += 2;
        continue;
      }
    } else if (code === quote) {
      flush(i);
      quote = 0;
      runStart = ++i;
      continue;
    } else if (quote === 34 && code === 92 && i + 1 < text.length && escapableInDoubleQuotes(text.charCodeAt(i + 1))) {
      flush(i);
      runStart = i + 1;
      i += 2;
      continue;
    }
    if (code === 36 && quote !== 39) {
      const expansion = readExpansion(script, i, resolve, braces);
      if (expansion) {
        flush(i);
        if ('unresolved' in expansion) {
          unresolved ??= expansion.unresolved;
          push(script.slice(i, expansion.next));
        } else {
          push(expansion.value);
        }
        i = expansion.next;
        runStart = i;
        continue;
      }
    }
    i++;
  }
  if (i === startIndex) return { next: i + 1 };
  const plain = out === undefined && runStart === startIndex;
  if (!plain) flush(i);
  const mapped = plain ? script.slice(startIndex, i) : (out ?? new MappedBuilder()).build();
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

/** `0-9 < > & | -`: the characters of a redirection operator. */
function isRedirectionChar(code: number): boolean {
  return isDigit(code) || code === 60 || code === 62 || code === 38 || code === 124 || code === 45;
}

/** `"`, `\\`, `$` and a backquote: what a backslash escapes inside double quotes. */
function escapableInDoubleQuotes(code: number): boolean {
  return code === 34 || code === 92 || code === 36 || code === 96;
}
