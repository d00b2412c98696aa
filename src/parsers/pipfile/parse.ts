/**
 * Pipfile: what `pipenv install` installs (pipenv.pypa.io/en/latest/pipfile/), as pip facts the rules already read.
 *
 *   [[source]]                      # the first source is the default index
 *   url = "https://pypi.org/simple"
 *   name = "pypi"
 *   [[source]]
 *   url = "https://download.pytorch.org/whl/cu121"
 *   name = "pytorch"
 *   [packages]
 *   torch = {version = "==2.3.1+cu121", index = "pytorch"}
 *   numpy = "*"
 *   [dev-packages]
 *
 * Pipenv maps every package to one index: the one its `index` names, else the default source, the first
 * ("Index-restricted packages": "all unspecified packages are resolved using the default index source", Pipenv's
 * indexes page, pipenv.pypa.io/en/latest/indexes/). Each index is one install context whose `--index-url` it is.
 * `[packages]`, `[dev-packages]` and named categories (`[gpu]`) are all read (`pipenv install --dev` installs the
 * second, `--categories gpu` the third): a CUDA build is judged wherever it is declared. A `file` entry that is a
 * wheel's URL installs that wheel (`name @ URL` to pip); git, path and other file entries are built, not taken from
 * an index. Pipfile.lock is read on its own (pipfile-lock/).
 */
import { FactSink, inContext, type IndexFact, type PackageFact, type ParsedFile } from '../facts.js';
import { holdsOnLinux } from '../markers.js';
import { MappedBuilder } from '../mapped.js';
import { parsePythonRequirement } from '../python-requirement.js';
import { addRequirementsContext } from '../requirements/parse.js';
import { SourceText, type Span } from '../source.js';
import type { TomlString as JsonOrTomlString } from '../toml-tree.js';
import { findSuppressions } from '../suppressions.js';
import { lookup, readTomlRoot, stringAt, textSpan, type TomlString } from '../toml.js';

/** PEP 508's environment markers, which a Pipfile entry may also write as keys of their own. */
const MARKER_KEYS = [
  'os_name',
  'sys_platform',
  'platform_machine',
  'platform_python_implementation',
  'platform_release',
  'platform_system',
  'platform_version',
  'python_version',
  'python_full_version',
  'implementation_name',
  'implementation_version',
];

const PYPI: Pick<IndexFact, 'url'> = { url: 'https://pypi.org/simple' };

/** The Pipfile's tables that hold no packages: its sources, its Python, its scripts and Pipenv's settings. */
const NOT_CATEGORIES: ReadonlySet<string> = new Set(['source', 'requires', 'scripts', 'pipenv']);

export function parsePipfile(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  sink.suppressions.push(...findSuppressions(source));
  const root = readTomlRoot(text, sink.problems);
  if (!root) return sink.finish(path, 'pipfile', source);

  /** The sources by name, in order; the first is the default. */
  const sources = new Map<string, { url: TomlString; span: Span }>();
  const list = lookup(root, 'source');
  for (const entry of list?.kind === 'array' ? list.items : []) {
    if (entry.kind !== 'table') continue;
    const url = stringAt(entry, 'url');
    const name = stringAt(entry, 'name');
    if (!url || !name) {
      sink.problems.push({ span: entry.span, message: 'a [[source]] entry needs a url and a name' });
      continue;
    }
    if (!sources.has(name.value)) sources.set(name.value, { url, span: entry.span });
  }
  const defaultName = sources.keys().next().value;

  /** One context per index the packages come from, made when its first package is read. */
  const contexts = new Map<string, number>();
  const contextOf = (name: string | undefined): number => {
    const key = name ?? '';
    const known = contexts.get(key);
    if (known !== undefined) return known;
    const declared = name === undefined ? undefined : sources.get(name);
    const context = addRequirementsContext(sink, 'pip', declared?.span ?? { start: 0, end: 0 });
    const fact: IndexFact = declared
      ? {
          kind: 'index-url',
          url: declared.url.value,
          urlSpan: textSpan(declared.url),
          span: declared.url.span,
          context: context.id,
        }
      : { kind: 'index-url', ...PYPI, urlSpan: { start: 0, end: 0 }, span: { start: 0, end: 0 }, context: context.id };
    sink.indexes.push(fact);
    (context.indexes as IndexFact[]).push(fact);
    contexts.set(key, context.id);
    return context.id;
  };

  // `[packages]`, `[dev-packages]` and the named categories (`[gpu]`, installed by `pipenv install --categories gpu`;
  // pipenv.pypa.io/en/latest/pipfile/: every other table of the Pipfile is a category of its own).
  for (const [category, table] of root.entries) {
    if (NOT_CATEGORIES.has(category) || table.kind !== 'table') continue;
    for (const [name, value] of table.entries) {
      const nameSpan = table.keySpans.get(name) ?? value.span;
      let spec: TomlString | undefined;
      let index: string | undefined;
      let markers: string | undefined;
      if (value.kind === 'string') spec = value;
      else if (value.kind === 'table') {
        const file = stringAt(value, 'file');
        if (file && WHEEL_URL.test(file.value)) {
          // `torch = {file = "https://download.pytorch.org/whl/cu102/torch-1.11.0%2Bcu102-…whl"}`: that wheel, as
          // `torch @ URL` is to pip. A path, a git repository or an sdist is built from there, not read here.
          const fact = fileRequirement(text, name, nameSpan, file, sink);
          if (fact) sink.packages.push(inContext(fact, contextOf(defaultName), 0));
          continue;
        }
        if (['git', 'path', 'file', 'editable'].some((key) => value.entries.has(key))) continue;
        spec = stringAt(value, 'version');
        index = stringAt(value, 'index')?.value;
        // `markers = "os_name == 'nt'"`, and a marker variable as a key of its own: `sys_platform = "== 'win32'"`
        // (pipenv.pypa.io/en/latest/specifiers/, "Specifying basically anything").
        markers =
          [
            stringAt(value, 'markers')?.value,
            ...MARKER_KEYS.map((key) => {
              const condition = stringAt(value, key)?.value;
              return condition === undefined ? undefined : `${key} ${condition}`;
            }),
          ]
            .filter((marker): marker is string => marker !== undefined)
            .map((marker) => `(${marker})`)
            .join(' and ') || undefined;
      } else continue;
      if (!holdsOnLinux(markers)) continue;
      if (index !== undefined && !sources.has(index)) {
        sink.problems.push({ span: value.span, message: `${name}: no [[source]] is named "${index}"` });
        continue;
      }
      const builder = new MappedBuilder();
      const written = text.slice(nameSpan.start, nameSpan.end);
      builder.pushSegment(name, written === name ? nameSpan.start : -1, nameSpan);
      if (spec && spec.value.trim() !== '*') {
        // A bare version is pinned exactly (`version = "2.3.1+cu121"` is `==2.3.1+cu121` to pipenv).
        if (/^\s*[\d]/.test(spec.value)) builder.pushSegment('==', -1, spec.span);
        builder.pushMapped(spec.mapped);
      }
      const result = parsePythonRequirement(builder.build());
      if (!result.ok) {
        sink.problems.push({ span: result.span, message: result.message });
        continue;
      }
      sink.packages.push(inContext(result.fact, contextOf(index ?? defaultName), 0));
    }
  }
  return sink.finish(path, 'pipfile', source);
}

/** A wheel's address: what a `file` entry installs as is (a path or an sdist is built, and not read). */
export const WHEEL_URL = /^https?:\/\/[^\s]+\.whl(?:[?#]\S*)?$/i;

/**
 * A `file` entry's wheel as pip reads `name @ URL`, positioned at the entry's name and URL (a Pipfile's or a
 * Pipfile.lock's: both are read into the same tree). Undefined, with a problem, where it is not a requirement.
 */
export function fileRequirement(
  text: string,
  name: string,
  nameSpan: Span,
  url: JsonOrTomlString,
  sink: FactSink,
): PackageFact | undefined {
  const builder = new MappedBuilder();
  const written = text.slice(nameSpan.start, nameSpan.end);
  builder.pushSegment(name, written === name ? nameSpan.start : -1, nameSpan);
  builder.pushSegment(' @ ', -1, url.span);
  builder.pushMapped(url.mapped);
  const result = parsePythonRequirement(builder.build());
  if (result.ok) return result.fact;
  sink.problems.push({ span: result.span, message: result.message });
  return undefined;
}
