import { FactSink, inContext, type IndexKind, type ContextDraft, type ParsedFile } from '../facts.js';
import { SourceText, type Span } from '../source.js';
import { Mapped, MappedBuilder } from '../mapped.js';
import { optionSpec, REQUIREMENTS_FILE_OPTIONS, splitOption } from '../pip-options.js';
import { isLocalProject, parsePythonRequirement, truncate, vcsBuild } from '../python-requirement.js';
import { findSuppressions } from '../suppressions.js';

/** Options that affect the whole pip run even when written in a requirements file. */
const INDEX_ROLES: Readonly<Record<string, IndexKind>> = {
  'index-url': 'index-url',
  'extra-index-url': 'extra-index-url',
  'find-links': 'find-links',
  'no-index': 'no-index',
};

interface Token {
  readonly text: string;
  readonly from: number; // index into the logical line
  readonly to: number;
}

/** Parse a pip requirements file (requirements*.txt, *.in). Never throws. */
export function parseRequirements(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  const context = addRequirementsContext(sink, 'requirements', { start: 0, end: text.length });
  for (const line of logicalLines(source)) parseRequirementLine(sink, line, context);
  sink.suppressions.push(...findSuppressions(source, continuationEnds(source)));
  return sink.finish(path, 'requirements', source);
}

export function addRequirementsContext(
  sink: FactSink,
  tool: ContextDraft['tool'],
  span: Span,
  extra: Partial<ContextDraft> = {},
): ContextDraft {
  const context: ContextDraft = {
    id: sink.contexts.length,
    tool,
    span,
    indexes: [],
    includes: [],
    channels: [],
    ...extra,
  };
  sink.contexts.push(context);
  return context;
}

/** Parse one logical requirements line (continuations joined, comment removed) into the sink. */
export function parseRequirementLine(sink: FactSink, line: Mapped, context: ContextDraft): void {
  const text = line.text;
  const start = text.search(/\S/);
  if (start < 0) return;
  // Most lines are a requirement alone, without an option (a token that starts with "-"): no need to split them.
  const tokens = text[start] === '-' || /\s-/.test(text) ? tokenize(text) : undefined;
  if (tokens?.[0]!.text.startsWith('-')) {
    const options = shlexTokens(text, tokens[0]!.from);
    if (typeof options === 'number') return unclosedQuote(sink, line, options);
    parseOptions(sink, line, options ?? tokens, context, undefined);
    return;
  }
  const optionIndex = tokens
    ? tokens.findIndex((token) => token.text.startsWith('-') && token.from > 0 && /\s/.test(text[token.from - 1] ?? ''))
    : -1;
  const requirementEnd = optionIndex < 0 ? line.length : tokens![optionIndex]!.from;
  const requirement = line.slice(0, requirementEnd).trim();
  // A local project (`.`, `./pkg[extra]`, `../lib`): pip installs what its own metadata asks for.
  if (isLocalProject(requirement.text)) return;
  if (requirement.text.includes('${')) {
    // pip substitutes ${NAME} from the environment of the install (requirements-file-format, "Using environment
    // variables").
    sink.unresolved.push({
      span: requirement.site(0, requirement.length),
      text: requirement.text,
      reason: `${/\$\{[^}]*\}/.exec(requirement.text)?.[0] ?? '${…}'} comes from the environment pip runs in`,
    });
    return;
  }
  const result = parsePythonRequirement(requirement);
  if (!result.ok) {
    sink.problems.push({ span: result.span, message: result.message });
    return;
  }
  let hashes = 0;
  const options = optionIndex >= 0 ? shlexTokens(text, tokens![optionIndex]!.from) : undefined;
  if (typeof options === 'number') return unclosedQuote(sink, line, options);
  if (optionIndex >= 0)
    hashes = parseOptions(
      sink,
      line,
      options ?? tokens!.slice(optionIndex),
      context,
      `pip ignores index options written on a requirement line (here after ${truncate(requirement.text, 30)}); put them on a line of their own`,
    );
  sink.packages.push(inContext(result.fact, context.id, hashes));
  const vcs = vcsBuild(result.fact);
  if (vcs) sink.unresolved.push({ span: result.fact.span, text: requirement.text, reason: vcs });
}

/** Returns the number of `--hash` options seen. */
function parseOptions(
  sink: FactSink,
  line: Mapped,
  tokens: readonly Token[],
  context: ContextDraft,
  ignoredReason: string | undefined,
): number {
  let hashes = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (!token.text.startsWith('-')) {
      sink.problems.push({
        span: line.site(token.from, token.to),
        message: `unexpected "${truncate(token.text)}": an option line holds options only`,
      });
      continue;
    }
    const { name, inlineValue, valueOffset } = splitOption(token.text);
    const spec = optionSpec(name);
    if (!REQUIREMENTS_FILE_OPTIONS.has(name)) {
      // pip stops at it ("no such option"); its value, where it takes one, is not a requirement either.
      sink.problems.push({
        span: line.site(token.from, token.to),
        message: `pip does not accept ${name} in a requirements file (only -i, --extra-index-url, --no-index, -f, -r, -c, -e, --pre, --trusted-host, --only-binary, --no-binary, --prefer-binary, --require-hashes, --use-feature and, on a requirement, --hash, --config-settings, --global-option); pass it on the command line or in pip.conf`,
      });
      if (spec.takesValue && inlineValue === undefined) i++;
      continue;
    }
    let value: { text: string; from: number; to: number } | undefined;
    if (spec.takesValue) {
      if (inlineValue !== undefined) value = shellWord(inlineValue, token.from + valueOffset);
      else if (tokens[i + 1]) {
        const next = tokens[++i]!;
        value = shellWord(next.text, next.from);
      } else {
        sink.problems.push({ span: line.site(token.from, token.to), message: `option ${name} needs a value` });
        continue;
      }
    }
    if (name === '--hash') hashes++;
    if (spec.role === 'pre' && !ignoredReason)
      sink.options.push({ name, span: line.site(token.from, token.to), context: context.id });
    const span = line.site(token.from, value ? value.to : token.to);
    const indexKind = INDEX_ROLES[spec.role];
    if (indexKind) {
      const url = value?.text ?? '';
      const urlSpan = value ? (line.origin(value.from, value.to) ?? line.site(value.from, value.to)) : span;
      const fact = {
        kind: indexKind,
        url,
        urlSpan,
        span,
        context: context.id,
        ...(ignoredReason ? { ignoredReason } : {}),
      };
      sink.indexes.push(fact);
      if (!ignoredReason) (context.indexes as (typeof fact)[]).push(fact);
      continue;
    }
    if ((spec.role === 'requirement' || spec.role === 'constraint') && value) {
      const fact = {
        kind: spec.role,
        target: value.text,
        targetSpan: line.origin(value.from, value.to) ?? line.site(value.from, value.to),
        span,
        context: context.id,
      };
      sink.addInclude(context, fact);
      continue;
    }
    if (spec.role === 'editable' && value) {
      const target = line.slice(value.from, value.to);
      if (isLocalProject(value.text)) continue; // a local project
      const result = parsePythonRequirement(target);
      if (result.ok) sink.packages.push(inContext(result.fact, context.id, 0));
    }
  }
  return hashes;
}

/**
 * One option value as pip reads it: pip splits the options of a line with `shlex.split` (pip's req_file.py,
 * break_args_options and then the option parser), so `-i 'https://…'` and `--extra-index-url="https://…"` name
 * the URL without its quotes. The span is the text inside the quotes when the word is one quoted string, so that
 * an edit keeps them. (A quoted value holding spaces is split at them: rare, and no URL has one.)
 */
function shellWord(raw: string, from: number): { text: string; from: number; to: number } {
  if (!/['"\\]/.test(raw)) return { text: raw, from, to: from + raw.length };
  const quoted = /^(['"])([^'"\\]*)\1$/.exec(raw);
  if (quoted) return { text: quoted[2]!, from: from + 1, to: from + raw.length - 1 };
  let text = '';
  let quote = '';
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i]!;
    if (quote === "'") {
      if (char === "'") quote = '';
      else text += char;
    } else if (char === '\\' && i + 1 < raw.length && (quote === '' || '\\"$`'.includes(raw[i + 1]!))) text += raw[++i];
    else if (char === quote) quote = '';
    else if (quote === '' && (char === "'" || char === '"')) quote = char;
    else text += char;
  }
  return { text, from, to: from + raw.length };
}

/** pip stops at a line whose options shlex cannot split: said at the quote, and nothing of the line is read. */
function unclosedQuote(sink: FactSink, line: Mapped, at: number): void {
  sink.problems.push({
    span: line.site(at, at + 1),
    message:
      line.text[at] === '\\'
        ? 'this backslash escapes nothing, so pip cannot split the line\'s options (shlex: "No escaped character") and stops'
        : 'this quote is never closed, so pip cannot split the line\'s options (shlex: "No closing quotation") and stops',
  });
}

/** Whitespace-separated tokens, as pip finds where a line's options begin (option values: shellWord). */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const re = /\S+/g;
  for (let match = re.exec(text); match; match = re.exec(text))
    tokens.push({ text: match[0], from: match.index, to: match.index + match[0].length });
  return tokens;
}

/**
 * The options of a line from `from` on, split as pip splits them (`shlex.split` of the options part, pip's
 * req_file.py `break_args_options`): a quoted string is part of its word, spaces and all (`-e "pkg[extra] @
 * git+https://…"`, one value). Undefined where the line has no quote (the plain split is the same); the offset of a
 * quote that is never closed, or of a backslash that ends the line, where shlex fails.
 */
function shlexTokens(text: string, from: number): Token[] | number | undefined {
  if (!/['"\\]/.test(text.slice(from))) return undefined;
  const tokens: Token[] = [];
  const re = /(?:[^\s'"\\]|\\.|"(?:[^"\\]|\\.)*"|'[^']*')+|(['"\\])/gy;
  let at = from;
  while (at < text.length) {
    while (at < text.length && /\s/.test(text[at]!)) at++;
    if (at >= text.length) break;
    re.lastIndex = at;
    const match = re.exec(text);
    if (!match || match[1] !== undefined) return at;
    tokens.push({ text: match[0], from: at, to: at + match[0].length });
    at += match[0].length;
  }
  return tokens;
}

/** Lines joined at trailing backslashes, with `#` comments (at line start or after whitespace) removed. */
export function* logicalLines(source: SourceText, firstLine = 1, lastLine = source.lineCount): Generator<Mapped> {
  const text = source.text;
  let builder = new MappedBuilder();
  let open = false;
  for (let line = firstLine; line <= lastLine; line++) {
    const start = source.lineStart(line);
    const end = source.lineEnd(line);
    let content = text.slice(start, end);
    if (line === 1 && content.charCodeAt(0) === 0xfeff) content = content.slice(1);
    const offset = end - content.length;
    // Most lines have neither a "#" nor a backslash: no expression needs to run on them.
    const comment = commentAt(content);
    const body = comment >= 0 ? content.slice(0, comment) : content;
    const continued =
      comment < 0 && body.includes('\\') && /\\\s*$/.test(body) ? body.replace(/\\\s*$/, '') : undefined;
    if (continued !== undefined) {
      builder.pushSegment(continued, offset);
      open = true;
      continue;
    }
    if (!open) {
      // The common case: one physical line, mapped as a single piece.
      const lead = body.length - body.trimStart().length;
      const trimmed = body.trim();
      if (trimmed.length > 0) yield Mapped.of(trimmed, offset + lead);
      continue;
    }
    builder.pushSegment(body, offset);
    const mapped = builder.build().trim();
    if (mapped.length > 0) yield mapped;
    builder = new MappedBuilder();
    open = false;
  }
  if (open) {
    const mapped = builder.build().trim();
    if (mapped.length > 0) yield mapped;
  }
}

/** Where a line's comment starts: a `#` at the start or after white space (`/(^|\s)#/`, without a match array); -1. */
function commentAt(content: string): number {
  let at = content.indexOf('#');
  while (at > 0 && !WHITE_SPACE.test(content[at - 1]!)) at = content.indexOf('#', at + 1);
  return at;
}

const WHITE_SPACE = /\s/;

/**
 * The last line of the logical line each line starts (continued by a trailing backslash); built on first use, in one
 * pass.
 */
function continuationEnds(source: SourceText): (line: number) => number {
  let ends: Int32Array | undefined;
  return (line) => {
    if (!ends) {
      ends = new Int32Array(source.lineCount + 2);
      ends[source.lineCount] = source.lineCount;
      for (let at = source.lineCount - 1; at >= 1; at--)
        ends[at] = /\\\s*$/.test(source.text.slice(source.lineStart(at), source.lineEnd(at))) ? ends[at + 1]! : at;
    }
    return line >= 1 && line <= source.lineCount ? ends[line]! : line;
  };
}
