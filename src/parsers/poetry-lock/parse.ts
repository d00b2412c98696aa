/**
 * poetry.lock: every package `poetry install` installs, resolved
 * (python-poetry.org/docs/basic-usage/#installing-with-poetrylock):
 *
 *   [[package]]
 *   name = "torch"
 *   version = "2.0.1+cu118"
 *   groups = ["main"]                 # Poetry 2; older locks say category = "main"
 *   markers = "extra == \"cuda\""     # Poetry 2, where the package is not always installed
 *   [package.source]
 *   type = "legacy"
 *   url = "https://download.pytorch.org/whl/cu118"
 *   reference = "torchcu118"
 *
 * Selections, named as the pyproject's: "the project" (the main group), "group G" (main and G), "extra X"
 * (main and the packages whose marker asks for X). Packages whose marker cannot hold on Linux are left out, and
 * a name locked twice in one selection (a CPU and a CUDA torch, told apart by markers this does not judge) is left
 * out of it rather than guessed. A package's source URL is its index. The lock is never edited (gate.ts).
 */
import { FactSink, type PackageFact, type ParsedFile } from '../facts.js';
import { holdsOnLinux, markerExtras } from '../markers.js';
import { normalizePythonName } from '../python-requirement.js';
import { SourceText } from '../source.js';
import { addSelection, lockedPip } from '../locked.js';
import { lookup, readTomlRoot, stringAt, textSpan, type TomlString, type TomlTable } from '../toml.js';

interface Locked {
  readonly fact: PackageFact;
  readonly groups: readonly string[];
  readonly extras: readonly string[];
  readonly source?: TomlString;
}

/** What a lock lists that no check reads: the files of each package (most of a large lock's bytes). */
const UNREAD_KEYS: ReadonlySet<string> = new Set(['files']);

export function parsePoetryLock(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  const root = readTomlRoot(text, sink.problems, UNREAD_KEYS);
  if (!root) return sink.finish(path, 'poetry-lock', source);
  // Older locks list the extras at the end (`[extras] cuda = ["torch"]`) and mark their packages optional.
  const extrasOf = new Map<string, string[]>();
  const extrasTable = lookup(root, 'extras');
  if (extrasTable?.kind === 'table')
    for (const [extra, names] of extrasTable.entries)
      for (const item of names.kind === 'array' ? names.items : [])
        if (item.kind === 'string') {
          const key = normalizePythonName(item.value.split(/[\s[(<>=!~;]/)[0]!);
          extrasOf.set(key, [...(extrasOf.get(key) ?? []), extra]);
        }
  const list = lookup(root, 'package');
  const locked: Locked[] = [];
  for (const table of list?.kind === 'array' ? list.items : []) {
    if (table.kind !== 'table') continue;
    const entry = readEntry(table, extrasOf);
    if (entry) locked.push(entry);
  }
  const groups = new Set(locked.flatMap((entry) => entry.groups).filter((group) => group !== 'main'));
  const extras = new Set(locked.flatMap((entry) => entry.extras));
  const selections: { name: string; holds: (entry: Locked) => boolean }[] = [
    { name: 'the project', holds: (entry) => entry.groups.includes('main') && entry.extras.length === 0 },
    ...[...groups].map((group) => ({
      name: `group ${group}`,
      holds: (entry: Locked) =>
        (entry.groups.includes('main') || entry.groups.includes(group)) && entry.extras.length === 0,
    })),
    // `poetry install --only G`: the group without the main one.
    ...[...groups].map((group) => ({
      name: `only group ${group}`,
      holds: (entry: Locked) => entry.groups.includes(group) && entry.extras.length === 0,
    })),
    ...[...extras].map((extra) => ({
      name: `extra ${extra}`,
      holds: (entry: Locked) =>
        entry.groups.includes('main') && (entry.extras.length === 0 || entry.extras.includes(extra)),
    })),
  ];
  for (const selection of selections) {
    const chosen = locked.filter(selection.holds);
    const count = new Map<string, number>();
    for (const entry of chosen) count.set(entry.fact.name, (count.get(entry.fact.name) ?? 0) + 1);
    addSelection(
      sink,
      selection.name,
      chosen.filter((entry) => count.get(entry.fact.name) === 1),
    );
  }
  return sink.finish(path, 'poetry-lock', source);
}

function readEntry(table: TomlTable, extrasOf: ReadonlyMap<string, readonly string[]>): Locked | undefined {
  const name = stringAt(table, 'name');
  const version = stringAt(table, 'version');
  if (!name || !version) return undefined;
  const markers = stringAt(table, 'markers')?.value;
  const optional = table.entries.get('optional');
  const extras = [
    ...markerExtras(markers),
    ...(optional?.kind === 'boolean' && optional.value ? (extrasOf.get(normalizePythonName(name.value)) ?? []) : []),
  ];
  if (!holdsOnLinux(markers)) return undefined;
  const groupList = table.entries.get('groups');
  const category = stringAt(table, 'category')?.value;
  const groups =
    groupList?.kind === 'array'
      ? groupList.items.flatMap((item) => (item.kind === 'string' ? [item.value] : []))
      : [category === 'dev' ? 'dev' : 'main'];
  const origin = table.entries.get('source');
  // A git, url, file or directory source is no index build: Poetry fetches or builds the package from there, a
  // direct reference whose address is the source's `url` (a repository, an archive, a path).
  const type = origin?.kind === 'table' ? stringAt(origin, 'type')?.value : undefined;
  const url = origin?.kind === 'table' ? stringAt(origin, 'url') : undefined;
  const direct = type && type !== 'legacy' ? url : undefined;
  return {
    fact: lockedPip(name.value, textSpan(name), version.value, textSpan(version), direct ? { url: direct } : {}),
    groups,
    extras,
    ...(url && !direct ? { source: url } : {}),
  };
}
