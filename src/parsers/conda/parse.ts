import { isMap, isScalar, isSeq, parseDocument, type Node, type Pair } from 'yaml';
import { FactSink, inContext, type ParsedFile } from '../../facts.js';
import { SourceText } from '../../source.js';
import { addRequirementsContext, parseRequirementLine } from '../requirements/parse.js';
import { findSuppressions } from '../suppressions.js';
import { scalarText } from '../yaml-text.js';
import { parseMatchSpec } from './match-spec.js';
import type { Mapped } from '../mapped.js';

/** Parse a conda environment file (environment.yml, conda.yaml, …). Never throws. */
export function parseCondaEnvironment(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  sink.suppressions.push(...findSuppressions(source));
  const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false, strict: false, keepSourceTokens: false });
  for (const error of doc.errors) {
    const start = Math.min(error.pos[0], text.length);
    const end = Math.min(Math.max(error.pos[1], start), text.length);
    sink.problems.push({ span: { start, end }, message: `YAML: ${firstLine(error.message)}` });
  }
  const root = doc.contents;
  if (!root) return sink.finish(path, 'conda', source);
  if (!isMap(root)) {
    const [start, end] = root.range ?? [0, 0];
    sink.problems.push({ span: { start, end }, message: 'a conda environment file must be a mapping with "channels" and "dependencies"' });
    return sink.finish(path, 'conda', source);
  }

  const channels: string[] = [];
  const channelsNode = valueOf(root.items, 'channels');
  const context = addRequirementsContext(sink, 'conda-env', { start: 0, end: text.length }, { channels });
  if (channelsNode && isSeq(channelsNode)) {
    for (const item of channelsNode.items) {
      const value = scalarText(item as Node, source);
      if (!value || value.text.trim() === '') continue;
      channels.push(value.text);
      const span = value.site(0, value.length);
      const fact = { kind: 'conda-channel' as const, url: value.text, urlSpan: value.origin(0, value.length) ?? span, span, context: context.id };
      sink.indexes.push(fact);
      (context.indexes as typeof fact[]).push(fact);
    }
  }

  const dependencies = valueOf(root.items, 'dependencies');
  if (dependencies && !isSeq(dependencies)) {
    const [start, end] = dependencies.range ?? [0, 0];
    sink.problems.push({ span: { start, end }, message: '"dependencies" must be a list' });
  }
  if (!dependencies || !isSeq(dependencies)) return sink.finish(path, 'conda', source);

  for (const item of dependencies.items) {
    const node = item as Node;
    if (isMap(node)) {
      const pip = valueOf(node.items, 'pip');
      if (pip && isSeq(pip)) {
        const [start, end] = node.range ?? [0, 0];
        const pipContext = addRequirementsContext(sink, 'conda-env-pip', { start, end });
        for (const entry of pip.items) {
          const value = scalarText(entry as Node, source);
          if (value) parseRequirementLine(sink, stripComment(value), pipContext);
        }
      }
      continue;
    }
    const value = scalarText(node, source);
    if (!value) continue;
    const spec = stripComment(value);
    if (spec.length === 0) continue;
    const result = parseMatchSpec(spec);
    if (result.ok) sink.packages.push(inContext(result.fact, context.id));
    else sink.problems.push({ span: result.span, message: result.message });
  }
  return sink.finish(path, 'conda', source);
}

function valueOf(items: readonly Pair[], key: string): Node | undefined {
  for (const pair of items) {
    const k = pair.key;
    if ((isScalar(k) && k.value === key) || k === key) return (pair.value ?? undefined) as Node | undefined;
  }
  return undefined;
}

function stripComment(value: Mapped): Mapped {
  const hash = /(^|\s)#/.exec(value.text);
  return (hash ? value.slice(0, hash.index) : value).trim();
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}
