/**
 * Pipfile.lock: what `pipenv sync` and `pipenv install --deploy` install, resolved
 * (pipenv.pypa.io/en/latest/pipfile/: "Records exact versions and hashes of all resolved dependencies", JSON):
 *
 *   {
 *     "_meta": {"sources": [{"name": "pypi", "url": "https://pypi.org/simple", "verify_ssl": true},
 *                           {"name": "pytorch", "url": "https://download.pytorch.org/whl/cu121", …}], …},
 *     "default": {"torch": {"hashes": […], "index": "pytorch", "markers": "…", "version": "==2.3.1+cu121"}, …},
 *     "develop": {…},
 *     "docs": {…}                      # a named category (pipenv 2022.10.9 and later)
 *   }
 *
 * Selections, as the commands that install them name them: "the project" (`default`, what `pipenv sync` installs),
 * "dev" (`default` and `develop`: `--dev`), "category X" (one named category alone: `--categories X`). A package
 * comes from the source its `index` names, else from the first source (Pipenv's default index); each source is one
 * install context with the source's URL as its index. Entries whose markers cannot hold on Linux are left out; git,
 * path and file entries are built, not taken from an index. The lock is never edited (gate.ts): `pipenv lock`
 * writes it.
 */
import { FactSink, type PackageFact, type ParsedFile } from '../facts.js';
import { readJsonRoot } from '../json-tree.js';
import { holdsOnLinux } from '../markers.js';
import { fileRequirement, WHEEL_URL } from '../pipfile/parse.js';
import { SourceText } from '../source.js';
import { addSelection, lockedPip } from '../locked.js';
import { lookup, stringAt, textSpan, type TomlString, type TomlTable } from '../toml.js';

/** What the lock's categories are called in it, and the selection each is read into. */
const DEFAULT = 'default';
const DEVELOP = 'develop';

interface Locked {
  readonly fact: PackageFact;
  /** The source it comes from (undefined: the default index). */
  readonly source?: TomlString;
}

export function parsePipfileLock(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  const root = readJsonRoot(text, sink.problems, 'Pipfile.lock');
  if (!root) return sink.finish(path, 'pipfile-lock', source);

  const sources = new Map<string, TomlString>();
  const list = lookup(root, '_meta', 'sources');
  for (const entry of list?.kind === 'array' ? list.items : []) {
    if (entry.kind !== 'table') continue;
    const name = stringAt(entry, 'name');
    const url = stringAt(entry, 'url');
    if (name && url && !sources.has(name.value)) sources.set(name.value, url);
  }
  const defaultSource = sources.values().next().value;

  const categories = new Map<string, Locked[]>();
  for (const [category, table] of root.entries) {
    if (category === '_meta' || table.kind !== 'table') continue;
    const locked: Locked[] = [];
    for (const [name, value] of table.entries) {
      if (value.kind !== 'table') continue;
      const entry = readEntry(text, name, table.keySpans.get(name) ?? value.span, value, sources, defaultSource, sink);
      if (entry) locked.push(entry);
    }
    categories.set(category, locked);
  }
  const of = (category: string) => categories.get(category) ?? [];
  const selections: [string, readonly Locked[]][] = [['the project', of(DEFAULT)]];
  if (categories.has(DEVELOP)) selections.push(['dev', [...of(DEFAULT), ...of(DEVELOP)]]);
  for (const category of categories.keys())
    if (category !== DEFAULT && category !== DEVELOP) selections.push([`category ${category}`, of(category)]);

  for (const [selection, chosen] of selections) {
    // A name locked in two categories of one selection is installed once: the first (default's) is read.
    const seen = new Set<string>();
    addSelection(
      sink,
      selection,
      chosen.filter((entry) => !seen.has(entry.fact.name) && seen.add(entry.fact.name)),
    );
  }
  return sink.finish(path, 'pipfile-lock', source);
}

function readEntry(
  text: string,
  rawName: string,
  nameSpan: { start: number; end: number },
  table: TomlTable,
  sources: ReadonlyMap<string, TomlString>,
  defaultSource: TomlString | undefined,
  sink: FactSink,
): Locked | undefined {
  if (!holdsOnLinux(stringAt(table, 'markers')?.value)) return undefined;
  // A wheel's URL (`"file": "https://download.pytorch.org/whl/cu102/torch-1.11.0%2Bcu102-…whl"`) is that wheel, as
  // `torch @ URL` is to pip; a git, path or other file entry is built from there, not taken from an index
  // (pipenv.pypa.io/en/latest/specifiers/).
  const file = stringAt(table, 'file');
  if (file && WHEEL_URL.test(file.value)) {
    const fact = fileRequirement(text, rawName, nameSpan, file, sink);
    return fact ? { fact } : undefined;
  }
  if (['git', 'path', 'file', 'hg', 'svn', 'bzr'].some((key) => table.entries.has(key))) return undefined;
  const version = stringAt(table, 'version');
  if (!version) return undefined;
  const pinned = /^(\s*===?\s*)(\S+)\s*$/.exec(version.value);
  if (!pinned) {
    sink.problems.push({
      span: version.span,
      message: `${rawName}: a locked version is "==X", not "${version.value}"`,
    });
    return undefined;
  }
  const index = stringAt(table, 'index');
  if (index && !sources.has(index.value)) {
    sink.problems.push({
      span: index.span,
      message: `${rawName}: no source in _meta.sources is named "${index.value}"`,
    });
    return undefined;
  }
  const value = pinned[2]!;
  const whole = textSpan(version);
  const versionSpan =
    whole === version.span
      ? whole
      : { start: whole.start + pinned[1]!.length, end: whole.start + pinned[1]!.length + value.length };
  const from = index ? sources.get(index.value) : defaultSource;
  return {
    fact: lockedPip(rawName, nameSpan, value, versionSpan),
    ...(from ? { source: from } : {}),
  };
}
