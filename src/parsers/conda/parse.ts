import { FactSink, inContext, type ParsedFile } from '../facts.js';
import { SourceText } from '../source.js';
import { addRequirementsContext, parseRequirementLine } from '../requirements/parse.js';
import { findSuppressions } from '../suppressions.js';
import { readCondaDocument } from './document.js';
import { parseMatchSpec } from './match-spec.js';
import type { Mapped } from '../mapped.js';

/** Parse a conda environment file (environment.yml, conda.yaml, …). Never throws. */
export function parseCondaEnvironment(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  sink.suppressions.push(...findSuppressions(source));
  const doc = readCondaDocument(text, source);
  for (const error of doc.errors) sink.problems.push(error);
  if (doc.root === 'empty') return sink.finish(path, 'conda', source);
  if (doc.root !== 'map') {
    sink.problems.push({
      span: doc.root.notMap,
      message: 'a conda environment file must be a mapping with "channels" and "dependencies"',
    });
    return sink.finish(path, 'conda', source);
  }

  const channels: string[] = [];
  const context = addRequirementsContext(sink, 'conda-env', { start: 0, end: text.length }, { channels });
  for (const value of doc.channels ?? []) {
    if (!value || value.text.trim() === '') continue;
    channels.push(value.text);
    const span = value.site(0, value.length);
    const fact = {
      kind: 'conda-channel' as const,
      url: value.text,
      urlSpan: value.origin(0, value.length) ?? span,
      span,
      context: context.id,
    };
    sink.addIndex(context, fact);
  }

  const dependencies = doc.dependencies;
  if (dependencies && 'notList' in dependencies) {
    sink.problems.push({ span: dependencies.notList, message: '"dependencies" must be a list' });
    return sink.finish(path, 'conda', source);
  }
  for (const item of dependencies ?? []) {
    if (item.kind === 'pip') {
      const pipContext = addRequirementsContext(sink, 'conda-env-pip', item.span);
      for (const value of item.entries) if (value) parseRequirementLine(sink, stripComment(value), pipContext);
      continue;
    }
    if (item.kind !== 'scalar' || !item.value) continue;
    const spec = stripComment(item.value);
    if (spec.length === 0) continue;
    const result = parseMatchSpec(spec);
    if (result.ok) sink.packages.push(inContext(result.fact, context.id));
    else sink.problems.push({ span: result.span, message: result.message });
  }
  return sink.finish(path, 'conda', source);
}

function stripComment(value: Mapped): Mapped {
  const hash = /(^|\s)#/.exec(value.text);
  return (hash ? value.slice(0, hash.index) : value).trim();
}
