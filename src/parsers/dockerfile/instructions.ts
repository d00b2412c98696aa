import { DockerfileParser, type Instruction, type Property } from 'dockerfile-ast';
import type { SourceText, Span } from '../source.js';

/** A word of an instruction with its file offsets. */
export interface InstructionArg {
  readonly value: string;
  readonly start: number;
  readonly end: number;
}

/** One `KEY=value` (or `ARG KEY`) of an ARG or ENV instruction; value is null when there is none. */
export interface InstructionProperty {
  readonly name: string;
  readonly nameSpan: Span;
  readonly value: string | null;
  readonly valueSpan: Span | null;
}

/** What the Dockerfile parser needs to know about one instruction, however it was read. */
export interface InstructionView {
  /** As written (`run`, `RUN`). */
  readonly keyword: string;
  /** From the keyword to the end of the last argument. */
  readonly span: Span;
  /** 1-based first and last line. */
  readonly fromLine: number;
  readonly toLine: number;
  /** Arguments after the leading `--flag`s. */
  args(): readonly InstructionArg[];
  /** Value of the leading `--name=value` flag; null for a flag without a value; undefined when absent. */
  flag(name: string): string | null | undefined;
  /** ARG/ENV properties. */
  properties(): readonly InstructionProperty[];
  /** JSON-form arguments of COPY/ADD (`["a", "b"]`), with the quotes. */
  jsonStrings(): readonly InstructionArg[];
}

export interface ReadDockerfile {
  readonly escape: string;
  readonly instructions: readonly InstructionView[];
}

/**
 * Split a Dockerfile into instructions. Almost every Dockerfile is read by a single linear scan: lines, `\`
 * continuations, comment lines, blank-separated words, and heredocs (their bodies end where dockerfile-ast ends
 * them). A FROM/ARG/ENV/COPY/ADD with quotes, backslashes, continuation lines, JSON or a heredoc is read by
 * dockerfile-ast on its own; a file with an escape directive, CR line breaks or unusual whitespace is read by
 * dockerfile-ast whole. Both give the same views for every file the scan accepts: test/parsers/dockerfile-scan.test.ts
 * checks that on every fixture, the corpus, and generated and mutated Dockerfiles. The scan exists for speed:
 * dockerfile-ast builds a full syntax tree and was about two thirds of the Dockerfile parse time (`npm run bench`).
 */
export function readDockerfile(text: string, source: SourceText): ReadDockerfile {
  const scanned = scanPlainDockerfile(text);
  return scanned ? { escape: '\\', instructions: scanned } : readWithDockerfileAst(text, source);
}

/** The dockerfile-ast reading: the reference for every file. */
export function readWithDockerfileAst(text: string, source: SourceText): ReadDockerfile {
  const { text: forAst, escape } = dockerDirectives(text);
  const dockerfile = DockerfileParser.parse(forAst);
  return {
    escape,
    instructions: viewsOf(dockerfile, (position) => source.lineStart(position.line + 1) + position.character),
  };
}

/** Docker's parser directive line: `# name=value`, the name a letter then letters or digits (buildkit's parser). */
const DIRECTIVE = /^#[ \t]*([a-zA-Z][a-zA-Z0-9]*)[ \t]*=[ \t]*(.+?)[ \t]*$/;
const KNOWN_DIRECTIVES = new Set(['syntax', 'escape', 'check']);

/**
 * Docker's parser directives, as Docker reads them (docs.docker.com/reference/dockerfile/#parser-directives): lines
 * at the very top of the form `# directive=value`, each known directive once; the first line that is not one (a
 * comment, an unknown directive, a blank line, an instruction) ends them, and everything after that looks like one
 * is a comment. dockerfile-ast reads directives its own way (`# C=&a … >= 450` was two directives to it, and it then
 * skipped the next line: the FROM was lost). So it is given the text with the leading comment lines rewritten: the
 * escape directive Docker found (if any) on the first line, every other such line an empty comment. Lines keep
 * their number, and every instruction keeps its line and characters.
 */
export function dockerDirectives(text: string): { readonly text: string; readonly escape: string } {
  const bom = text.startsWith('\uFEFF') ? 1 : 0;
  let escape = '\\';
  const seen = new Set<string>();
  let directives = true;
  let at = bom;
  const lines: { start: number; end: number; comment: boolean }[] = [];
  while (at < text.length) {
    const newline = text.indexOf('\n', at);
    const end = newline < 0 ? text.length : newline;
    const line = text.slice(at, end).replace(/\r$/, '');
    if (!/^[ \t]*#/.test(line)) break;
    lines.push({ start: at, end: at + line.length, comment: true });
    if (directives) {
      const match = DIRECTIVE.exec(line);
      const name = match?.[1]!.toLowerCase();
      if (!match || !KNOWN_DIRECTIVES.has(name!) || seen.has(name!)) directives = false;
      else {
        seen.add(name!);
        if (name === 'escape' && (match[2] === '\\' || match[2] === '`')) escape = match[2];
      }
    }
    if (newline < 0) break;
    at = newline + 1;
  }
  if (lines.length === 0) return { text, escape };
  const parts: string[] = [text.slice(0, bom)];
  let copied = bom;
  lines.forEach((line, i) => {
    parts.push(text.slice(copied, line.start), i === 0 && escape === '`' ? '# escape=`' : '#');
    copied = line.end;
  });
  parts.push(text.slice(copied));
  return { text: parts.join(''), escape };
}

/** dockerfile-ast's instructions of `text`, with positions made file offsets by `offsetOf`. */
function readInstructions(
  text: string,
  offsetOf: (position: { line: number; character: number }) => number,
): InstructionView[] {
  return viewsOf(DockerfileParser.parse(text), offsetOf);
}

function viewsOf(
  dockerfile: ReturnType<typeof DockerfileParser.parse>,
  offsetOf: (position: { line: number; character: number }) => number,
): InstructionView[] {
  const spanOf = (range: {
    start: { line: number; character: number };
    end: { line: number; character: number };
  }): Span => ({
    start: offsetOf(range.start),
    end: offsetOf(range.end),
  });
  const instructions = dockerfile.getInstructions().map((instruction): InstructionView => {
    const range = instruction.getRange();
    return {
      keyword: instruction.getKeyword(),
      span: spanOf(range),
      fromLine: range.start.line + 1,
      toLine: range.end.line + 1,
      args: () => instruction.getArguments().map((arg) => ({ value: arg.getValue(), ...spanOf(arg.getRange()) })),
      flag: (name) => {
        const flags =
          (
            instruction as unknown as { getFlags?(): { getName(): string; getValue(): string | null }[] }
          ).getFlags?.() ?? [];
        const found = flags.find((flag) => flag.getName() === name);
        return found ? found.getValue() : undefined;
      },
      properties: () => {
        const read = ((instruction as unknown as { getProperties?(): Property[] }).getProperties?.() ?? []).map(
          (property): InstructionProperty => {
            const valueRange = property.getValueRange();
            return {
              name: property.getName(),
              nameSpan: spanOf(property.getNameRange()),
              value: property.getValue(),
              valueSpan: valueRange ? spanOf(valueRange) : null,
            };
          },
        );
        return instruction.getKeyword().toUpperCase() === 'ARG' ? argNames(instruction, read, spanOf) : read;
      },
      jsonStrings: () =>
        (
          (
            instruction as Instruction & {
              getJSONStrings?(): { getValue(): string; getRange(): Parameters<typeof spanOf>[0] }[];
            }
          ).getJSONStrings?.() ?? []
        ).map((json) => ({
          value: json.getValue(),
          ...spanOf(json.getRange()),
        })),
    };
  });
  return instructions;
}

/** Whitespace other than blanks and line feeds, and BOMs: what counts as a separator there is dockerfile-ast's call. */
const UNUSUAL_SPACE = /[\f\v\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

const ESCAPE_DIRECTIVE = /^[ \t]*#[ \t]*escape[ \t]*=/im;

/**
 * The lines that may hold parser directives: the comment and blank lines before the first instruction (Docker reads
 * directives only there, and stops earlier, at the first comment that is not one).
 */
function directiveLines(text: string): string {
  let pos = 0;
  while (pos < text.length) {
    const end = text.indexOf('\n', pos);
    const lineEnd = end < 0 ? text.length : end;
    const first = skipBlanks(text, pos, lineEnd);
    if (first < lineEnd && text.charCodeAt(first) !== 35 /* # */) break;
    pos = lineEnd + 1;
  }
  return text.slice(0, pos);
}

/** Instructions whose arguments we read; the scan only accepts them on one line and without quotes or backslashes. */
const READ_ARGUMENTS = new Set(['FROM', 'COPY', 'ADD', 'ARG', 'ENV']);

/**
 * The linear scan of the plain subset, or undefined when the file is outside it. Outside means: anything
 * where Docker's rules need more than "lines, `\` continuations, comment lines, blank-separated words".
 */
export function scanPlainDockerfile(text: string): InstructionView[] | undefined {
  if (text.includes('\r') || UNUSUAL_SPACE.test(text) || ESCAPE_DIRECTIVE.test(directiveLines(text))) return undefined;
  const instructions: InstructionView[] = [];
  const length = text.length;
  let pos = 0;
  let line = 1;
  while (pos < length) {
    let lineEnd = text.indexOf('\n', pos);
    if (lineEnd < 0) lineEnd = length;
    const indent = skipBlanks(text, pos, lineEnd);
    if (indent === lineEnd || text.charCodeAt(indent) === 35 /* # */) {
      pos = lineEnd + 1;
      line++;
      continue;
    }
    // An instruction: a keyword, then arguments up to a line that does not end in the escape character.
    let keywordEnd = indent;
    while (keywordEnd < lineEnd && !isBlank(text.charCodeAt(keywordEnd))) keywordEnd++;
    const keyword = text.slice(indent, keywordEnd);
    if (!/^[A-Za-z]+$/.test(keyword) || skipBlanks(text, keywordEnd, lineEnd) === lineEnd) return undefined;
    const fromLine = line;
    let contentEnd = trimEnd(text, pos, lineEnd);
    let continued = text.charCodeAt(contentEnd - 1) === 92; /* \ */
    let lines = 1;
    let firstComment = -1;
    while (continued) {
      // `\\` at a line end, or `\ \` (an escaped blank before the continuation): dockerfile-ast ends the instruction
      // there, where Docker goes on to the next line (found by fuzz:ci on a real file); only the whole parse decides.
      let back = contentEnd - 2;
      while (back > pos && isBlank(text.charCodeAt(back))) back--;
      if (text.charCodeAt(back) === 92) return undefined;
      // Skip to the next line that is neither blank nor a comment; it continues the instruction.
      pos = lineEnd + 1;
      line++;
      if (pos >= length) return undefined; // a continuation at the end of the file
      lineEnd = text.indexOf('\n', pos);
      if (lineEnd < 0) lineEnd = length;
      const start = skipBlanks(text, pos, lineEnd);
      if (start === lineEnd || text.charCodeAt(start) === 35) {
        if (firstComment < 0 && start !== lineEnd) firstComment = start;
        continue;
      }
      contentEnd = trimEnd(text, pos, lineEnd);
      continued = text.charCodeAt(contentEnd - 1) === 92;
      lines++;
    }
    const upper = keyword.toUpperCase();
    // A heredoc's body follows the instruction's last line, to its terminator: dockerfile-ast's instruction holds it.
    const heredoc = HEREDOC_KEYWORDS.has(upper) && text.slice(keywordEnd, contentEnd).includes('<<');
    if (heredoc) {
      const { names, tabbed } = heredocsOf(text.slice(indent, lineEnd));
      let end = lineEnd;
      for (const name of names) end = heredocEnd(text, end, name, tabbed);
      for (let at = text.indexOf('\n', lineEnd); at >= 0 && at < end; at = text.indexOf('\n', at + 1)) line++;
      lineEnd = end;
    }
    // dockerfile-ast ends an instruction at the end of its last line, trailing blanks included.
    const span = { start: indent, end: lineEnd };
    if (READ_ARGUMENTS.has(upper)) {
      // A quote after a comment line inside a read instruction: dockerfile-ast's offsets there can run into the
      // next instruction, so only the whole-file parse says what it reads (found by fuzz:ci; rare in real files).
      if (firstComment >= 0 && /["']/.test(text.slice(firstComment, contentEnd))) return undefined;
      const quotes = upper === 'ARG' || upper === 'ENV' ? /\\/ : /["'\\]/; // ARG/ENV values may be quoted; see argProperties
      const plain =
        heredoc || lines > 1 || quotes.test(text.slice(keywordEnd, contentEnd))
          ? undefined
          : plainArguments(text, { keyword, upper, span, line: fromLine, from: keywordEnd, to: contentEnd });
      // Quotes, backslashes, continuation lines and heredocs in these instructions are dockerfile-ast's call: it reads
      // this one instruction, and the scan goes on (the file as a whole would cost a full syntax tree).
      instructions.push(plain ?? astInstruction(text, span, fromLine));
    } else {
      instructions.push(unreadInstruction(keyword, span, fromLine, line));
    }
    pos = lineEnd + 1;
    line++;
  }
  return instructions;
}

/** Instructions whose arguments may open heredocs (ONBUILD through the instruction it triggers). */
const HEREDOC_KEYWORDS = new Set(['RUN', 'COPY', 'ADD', 'ONBUILD']);

/**
 * The heredocs an instruction opens, as dockerfile-ast reads them (its parser's processHeredocs): every argument that
 * starts with `<<` and names one (`<<EOF`, `<<-EOF`, `<<"EOF"`, `<<'EOF'`), in order; `<<-` anywhere lets every
 * terminator be indented with tabs. The arguments are dockerfile-ast's own, from this one instruction's text.
 */
function heredocsOf(instructionText: string): { names: string[]; tabbed: boolean } {
  let instruction: Instruction | null | undefined = DockerfileParser.parse(instructionText).getInstructions()[0];
  if (instruction?.getKeyword() === 'ONBUILD')
    instruction = (
      instruction as Instruction & { getTriggerInstruction(): Instruction | null }
    ).getTriggerInstruction();
  const names: string[] = [];
  let tabbed = false;
  if (!instruction || !['ADD', 'COPY', 'RUN'].includes(instruction.getKeyword())) return { names, tabbed };
  for (const arg of instruction.getArguments()) {
    const value = arg.getValue();
    if (!value.startsWith('<<') || value.length <= 2) continue;
    if (value.startsWith('<<-')) tabbed = true;
    const name = heredocName(value);
    if (name !== null) names.push(name);
  }
  return { names, tabbed };
}

/** dockerfile-ast's Util.parseHeredocName: the terminator an argument names, or null. */
function heredocName(argument: string): string | null {
  let value = argument.slice(2);
  if (value.startsWith('-')) value = value.slice(1);
  if (value.startsWith('"')) {
    if (!value.endsWith('"')) return null;
    value = value.slice(1, -1);
  }
  if (value.startsWith("'")) {
    if (!value.endsWith("'")) return null;
    value = value.slice(1, -1);
  }
  return value.startsWith('<') ? null : value;
}

/**
 * Where a heredoc's terminator line ends (the offset of its line break), looking from `offset` (the line break before
 * the body): a line that is exactly `name`, after tabs when `tabbed` (dockerfile-ast's parseHeredoc); the end of the
 * text when no line is.
 */
function heredocEnd(text: string, offset: number, name: string, tabbed: boolean): number {
  let startWord = -1;
  let lineStart = true;
  for (let i = offset; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 32) lineStart = false;
    else if (code === 9) {
      if (!tabbed) lineStart = false;
    } else if (code === 10) {
      if (startWord !== -1 && text.slice(startWord, i) === name) return i;
      startWord = -1;
      lineStart = true;
    } else if (lineStart) {
      startWord = i;
      lineStart = false;
    }
  }
  return text.length;
}

/**
 * One instruction read by dockerfile-ast on its own: the text from its keyword to the end of its last line,
 * parsed, its positions moved back into the file. Instructions do not depend on each other in the plain subset
 * (no escape directive; a heredoc's body is part of its instruction's text), so this is what the whole-file parse
 * gives for it.
 */
function astInstruction(text: string, span: Span, fromLine: number): InstructionView {
  const snippet = text.slice(span.start, span.end);
  const lineStarts = [0];
  for (let i = snippet.indexOf('\n'); i >= 0; i = snippet.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const view = readInstructions(
    snippet,
    (position) => span.start + lineStarts[position.line]! + position.character,
  )[0]!;
  return { ...view, fromLine, toLine: fromLine + (view.toLine - view.fromLine) };
}

function unreadInstruction(keyword: string, span: Span, fromLine: number, toLine: number): InstructionView {
  return {
    keyword,
    span,
    fromLine,
    toLine,
    args: () => [],
    flag: () => undefined,
    properties: () => [],
    jsonStrings: () => [],
  };
}

/**
 * A one-line instruction as the scan found it: its keyword (as written and upper-cased), span and line, and text[from,
 * to) its arguments.
 */
interface OneLine {
  readonly keyword: string;
  readonly upper: string;
  readonly span: Span;
  readonly line: number;
  readonly from: number;
  readonly to: number;
}

/** A one-line FROM/COPY/ADD/ARG/ENV without quotes or backslashes. */
function plainArguments(text: string, { keyword, upper, span, line, from, to }: OneLine): InstructionView | undefined {
  const words: InstructionArg[] = [];
  let i = from;
  while (i < to) {
    i = skipBlanks(text, i, to);
    if (i >= to) break;
    const start = i;
    while (i < to && !isBlank(text.charCodeAt(i))) i++;
    words.push({ value: text.slice(start, i), start, end: i });
  }
  let flagCount = 0;
  while (flagCount < words.length && words[flagCount]!.value.startsWith('--')) flagCount++;
  const flags = words.slice(0, flagCount);
  const args = words.slice(flagCount);
  if (flags.some((flag) => flag.value === '--' || flag.value.startsWith('--=')) || args.length === 0) return undefined;
  if ((upper === 'COPY' || upper === 'ADD') && args[0]!.value.startsWith('[')) return undefined;
  // dockerfile-ast keeps looking for flags past a word that contains `--` and then drops leading words: its call.
  if (upper !== 'ARG' && upper !== 'ENV' && args.some((arg) => arg.value.includes('--'))) return undefined;
  let properties: InstructionProperty[] = [];
  if (upper === 'ARG' || upper === 'ENV') {
    if (flagCount > 0) return undefined;
    // Several words of an ARG with a bare one among them (`ARG A B`, two names to Docker) are dockerfile-ast's to read,
    // and argNames makes its reading Docker's.
    const read =
      upper === 'ARG'
        ? args.length === 1 || args.every((arg) => arg.value.includes('='))
          ? argProperties(args)
          : undefined
        : upper === 'ENV'
          ? envProperties(text, args)
          : undefined;
    if (!read) return undefined;
    properties = read;
  }
  const flag = (name: string): string | null | undefined => {
    for (const word of flags) {
      const eq = word.value.indexOf('=');
      const flagName = eq < 0 ? word.value.slice(2) : word.value.slice(2, eq);
      if (flagName === name) return eq < 0 ? null : word.value.slice(eq + 1);
    }
    return undefined;
  };
  return {
    keyword,
    span,
    fromLine: line,
    toLine: line,
    args: () => args,
    flag,
    properties: () => properties,
    jsonStrings: () => [],
  };
}

/** A build argument's name, as a shell variable's. */
const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An ARG's word that is a name, or a name with its default. */
const ARG_WORD = /^[A-Za-z_][A-Za-z0-9_]*(?:=|$)/;

/**
 * An ARG's names as Docker reads them: `ARG <name>[=<default value>] [<name>[=<default value>]...]`
 * (docs.docker.com/reference/dockerfile/#arg), each word a name or a name with its default. dockerfile-ast reads
 * `ARG A B` as ENV's legacy `NAME value` (A with the value "B"), which is two names without defaults to Docker
 * (vLLM's Dockerfile: `ARG PIP_INDEX_URL UV_INDEX_URL`).
 */
function argNames(
  instruction: Instruction,
  read: readonly InstructionProperty[],
  spanOf: (range: ReturnType<Instruction['getRange']>) => Span,
): readonly InstructionProperty[] {
  const args = instruction.getArguments();
  if (args.length === read.length || !args.every((arg) => ARG_WORD.test(arg.getValue()))) return read;
  const byName = new Map(read.map((property) => [property.name, property]));
  const out: InstructionProperty[] = [];
  for (const arg of args) {
    const text = arg.getValue();
    const eq = text.indexOf('=');
    const name = eq < 0 ? text : text.slice(0, eq);
    const own = byName.get(name);
    if (eq >= 0 && own) out.push(own);
    else if (eq < 0 && ARG_NAME.test(name)) {
      const span = spanOf(arg.getRange());
      out.push({ name, nameSpan: span, value: null, valueSpan: null });
    } else return read;
  }
  return out;
}

/**
 * `ARG NAME` or `ARG NAME=value …`, each word a name or a name with its default (`ARG A B` is two names, as Docker
 * reads it: argNames); an empty default or a name starting with `=` is left to dockerfile-ast.
 */
function argProperties(args: readonly InstructionArg[]): InstructionProperty[] | undefined {
  const properties: InstructionProperty[] = [];
  for (const arg of args) {
    const eq = arg.value.indexOf('=');
    if (eq === 0 || eq === arg.value.length - 1) return undefined;
    if (eq < 0) {
      if (/["']/.test(arg.value)) return undefined;
      properties.push({ name: arg.value, nameSpan: { start: arg.start, end: arg.end }, value: null, valueSpan: null });
      continue;
    }
    const name = arg.value.slice(0, eq);
    let value = arg.value.slice(eq + 1);
    if (/["']/.test(name)) return undefined;
    if (/["']/.test(value)) {
      // Only a value that is one quoted word (`A="8.0;8.6"`): dockerfile-ast gives the text inside the quotes.
      if (!/^(?:"[^"']*"|'[^"']*')$/.test(value)) return undefined;
      value = value.slice(1, -1);
    }
    properties.push({
      name,
      nameSpan: { start: arg.start, end: arg.start + eq },
      value,
      valueSpan: { start: arg.start + eq + 1, end: arg.end },
    });
  }
  return properties;
}

/** `ENV A=1 B=2` (every word a pair) or the legacy `ENV NAME value with words`. */
function envProperties(text: string, args: readonly InstructionArg[]): InstructionProperty[] | undefined {
  const first = args[0]!;
  if (first.value.includes('=')) {
    const pairs = argProperties(args);
    return pairs && pairs.every((pair) => pair.value !== null) ? pairs : undefined;
  }
  if (args.length < 2 || args.some((arg) => /["']/.test(arg.value))) return undefined;
  const last = args.at(-1)!;
  return [
    {
      name: first.value,
      nameSpan: { start: first.start, end: first.end },
      value: text.slice(args[1]!.start, last.end),
      valueSpan: { start: args[1]!.start, end: last.end },
    },
  ];
}

function isBlank(code: number): boolean {
  return code === 32 || code === 9;
}

function skipBlanks(text: string, from: number, to: number): number {
  let i = from;
  while (i < to && isBlank(text.charCodeAt(i))) i++;
  return i;
}

function trimEnd(text: string, from: number, to: number): number {
  let end = to;
  while (end > from && isBlank(text.charCodeAt(end - 1))) end--;
  return end;
}
