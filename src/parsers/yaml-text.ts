import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type YAMLError, type YAMLMap } from 'yaml';
import { FactSink, type ParseProblem } from './facts.js';
import { SourceText } from './source.js';
import { Mapped, MappedBuilder } from './mapped.js';
import { findSuppressions } from './suppressions.js';

/**
 * A YAML file of one document (a Compose file, a cog.yaml) as its reader starts it: its source, a sink holding its
 * suppressions, and the document, read leniently (duplicate keys kept, as the tools themselves read them). Where the
 * YAML does not parse, no document, and the sink holds the first problem, said to be the whole file's: nothing else
 * of it can be read.
 */
export function readYamlDocument(
  path: string,
  text: string,
): { readonly source: SourceText; readonly sink: FactSink; readonly doc?: Document } {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  sink.suppressions.push(...findSuppressions(source));
  const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false, strict: false });
  if (doc.errors.length === 0) return { source, sink, doc };
  sink.problems.push({ ...firstYamlProblem(doc.errors, text), whole: true });
  return { source, sink };
}

/**
 * The value of a YAML scalar as a Mapped string: plain and simply-quoted scalars map character for
 * character to the file (so they can be edited); anything else is mapped to the node as a whole.
 */
export function scalarText(node: Node | null | undefined, source: SourceText): Mapped | undefined {
  if (!node || !isScalar(node) || !node.range) return undefined;
  const value = node.value;
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
  const [start, end] = node.range;
  // Error recovery can leave ranges past the end of the text: such a node has no reliable position.
  if (start > source.text.length || end > source.text.length) return undefined;
  const raw = source.text.slice(start, end);
  const text = String(node.source ?? value);
  if (node.type === 'PLAIN' && raw === text) return Mapped.of(text, start);
  if ((node.type === 'QUOTE_SINGLE' || node.type === 'QUOTE_DOUBLE') && raw.length >= 2 && raw.slice(1, -1) === text)
    return Mapped.of(text, start + 1);
  const builder = new MappedBuilder();
  builder.pushSegment(String(value), -1, { start, end });
  return builder.build();
}

/**
 * A document's YAML errors as one problem: the first, with how many more the parser reported (one broken line often
 * makes dozens: a misindented `kind:` gave 25), so the file is said to be unreadable once, where it first is.
 */
export function firstYamlProblem(errors: readonly YAMLError[], text: string): ParseProblem {
  const first = yamlProblem(errors[0]!, text);
  const more = errors.length - 1;
  return more > 0
    ? { ...first, message: `${first.message} (and ${more} more YAML ${more === 1 ? 'problem' : 'problems'} after it)` }
    : first;
}

/** A YAML error as a positioned problem, kept inside the text (error recovery can point past its end). */
export function yamlProblem(error: YAMLError, text: string): ParseProblem {
  const start = Math.min(error.pos[0], text.length);
  const end = Math.min(Math.max(error.pos[1], start), text.length);
  return {
    span: { start, end },
    message: `YAML: ${error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
  };
}

/** The value of a mapping's key (a YAML document's `build`, `resources`), where the node is a mapping that has it. */
export function valueOf(node: Node | null | undefined, key: string): Node | undefined {
  if (!isMap(node)) return undefined;
  for (const pair of (node as YAMLMap).items)
    if (isScalar(pair.key) && String(pair.key.value) === key) return (pair.value as Node | null) ?? undefined;
  return undefined;
}

/** A sequence's items; none where the node is no sequence. */
export function listOf(node: Node | undefined): readonly Node[] {
  return isSeq(node) ? (node.items as Node[]) : [];
}

/**
 * A literal block scalar (`setup: |`, a script) as a Mapped string whose lines map to the file line by line, past the
 * block's indentation, so that a command of the script is positioned where it is written; any other scalar as
 * scalarText maps it.
 */
export function blockText(node: Node | null | undefined, source: SourceText): Mapped | undefined {
  if (!node || !isScalar(node) || node.type !== 'BLOCK_LITERAL' || typeof node.value !== 'string' || !node.range)
    return scalarText(node, source);
  const text = source.text;
  const [start, end] = node.range;
  let at = text.indexOf('\n', start) + 1;
  if (at <= 0 || at > end) return scalarText(node, source);
  const builder = new MappedBuilder();
  const lines = node.value.split('\n');
  for (const [i, line] of lines.entries()) {
    if (at > end && line !== '') return scalarText(node, source);
    const lineEnd = text.indexOf('\n', at) < 0 ? text.length : text.indexOf('\n', at);
    const written = text.slice(at, lineEnd).replace(/\r$/, '');
    if (line !== '' && !written.endsWith(line)) return scalarText(node, source);
    if (line !== '') builder.pushSegment(line, at + written.length - line.length);
    if (i < lines.length - 1) builder.pushSegment('\n', Math.min(lineEnd, text.length - 1));
    at = lineEnd + 1;
  }
  return builder.build();
}
