import { isScalar, parseDocument, type Document, type Node, type YAMLError } from 'yaml';
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
