import { FactSink, inContext, packageFact, type ParsedFile } from '../facts.js';
import { SourceText } from '../source.js';
import { addRequirementsContext, parseRequirementLine } from '../requirements/parse.js';
import { findSuppressions } from '../suppressions.js';
import { readCondaDocument } from './document.js';
import { parseMatchSpec } from './match-spec.js';
import { Mapped } from '../mapped.js';
import { condaPackageFromUrl } from '../locks.js';

/** Parse a conda environment file (environment.yml, conda.yaml, …). Never throws. */
export function parseCondaEnvironment(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  sink.suppressions.push(...findSuppressions(source));
  if (isExplicitSpec(text)) return parseExplicitSpec(path, text, source, sink);
  const doc = readCondaDocument(text, source);
  for (const error of doc.errors) sink.problems.push(error);
  if (doc.root === 'empty') return sink.finish(path, 'conda', source);
  // A list of records (determined's schemas/test_cases/v0/environment.yaml: JSON-schema test cases) under an
  // environment's name is no environment file, mistyped or not: conda reads only a mapping. Nothing to check.
  if (doc.root !== 'map' && doc.root.records) return sink.finish(path, 'conda', source);
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

/**
 * conda's explicit spec file (`conda list --explicit`, conda-lock's `--kind explicit` render, `conda-linux-64.lock`):
 * a line `@EXPLICIT`, then one package URL a line (`…/linux-64/pytorch-2.0.1-py3.11_cuda11.8_cudnn8.7.0_0.tar.bz2`,
 * with `#md5`), which `conda create --file` and `micromamba create -f` install as they are, without solving
 * (docs.conda.io, "Building identical conda environments").
 */
export function isExplicitSpec(text: string): boolean {
  return text.includes('@EXPLICIT') && EXPLICIT.test(text);
}

const EXPLICIT = /^@EXPLICIT[ \t]*\r?$/m;

function parseExplicitSpec(path: string, text: string, source: SourceText, sink: FactSink): ParsedFile {
  const channels: string[] = [];
  const context = addRequirementsContext(sink, 'conda-env', { start: 0, end: text.length }, { channels });
  let start = 0;
  while (start <= text.length) {
    const lineFeed = text.indexOf('\n', start);
    const end = lineFeed < 0 ? text.length : lineFeed;
    const line = text.slice(start, end).replace(/\r$/, '');
    const body = line.trim();
    if (body !== '' && !body.startsWith('#') && !EXPLICIT.test(body)) {
      const at = start + line.indexOf(body);
      const fact = /^[a-z][a-z0-9+.-]*:\/\//i.test(body) ? condaPackageFromUrl(Mapped.of(body, at)) : undefined;
      if (fact) {
        sink.packages.push(packageFact({ ...fact, context: context.id }));
        if (fact.channel && !channels.includes(fact.channel)) channels.push(fact.channel);
      } else
        sink.problems.push({
          span: { start: at, end: at + body.length },
          message: `an explicit spec (@EXPLICIT) lists package file URLs (…/<subdir>/<name>-<version>-<build>.conda), not "${body.slice(0, 60)}"`,
        });
    }
    start = end + 1;
  }
  return sink.finish(path, 'conda', source);
}
