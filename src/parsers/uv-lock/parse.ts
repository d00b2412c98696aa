/**
 * uv.lock: exactly what `uv sync --frozen` installs, as pip facts at the lock's own lines.
 *
 * The lock lists every resolved package (`[[package]]`: name, version, `source = { registry = "…" }`) and, for the
 * project itself (`source = { virtual = "." }` or `{ editable = "." }`), its direct dependencies for the project
 * alone, per extra (`[package.optional-dependencies]`) and per dependency group (`[package.dev-dependencies]`),
 * each a reference `{ name, version?, source?, marker? }` (docs.astral.sh/uv/concepts/projects/layout/#the-lockfile).
 * Each selection is a variant with the same names as pyproject.toml's ("the project", "extra cu124", "group dev",
 * "only group dev"), holding the project's direct dependencies as locked; a reference that names no version and
 * matches several locked entries (one per platform or extra) is left out rather than guessed, and references whose
 * marker cannot hold on Linux are dropped. A package's index is its registry, written as that context's --index-url.
 *
 * The lock is never edited: the checks that would rewrite a version say which `uv lock` to run instead (gate.ts).
 */
import { FactSink, type PackageFact, type ParsedFile } from '../facts.js';
import { lockedPip } from '../locked.js';
import { activeExtras, evaluateMarker, MACHINES, type MarkerEnvironment } from '../markers.js';
import { normalizePythonName } from '../python-requirement.js';
import { SourceText, type Span } from '../source.js';
import { lookup, readTomlRoot, stringAt, textSpan, type TomlString, type TomlTable, type TomlValue } from '../toml.js';

interface Locked {
  readonly name: string;
  readonly rawName: string;
  readonly nameSpan: Span;
  readonly version: TomlString;
  readonly registry?: TomlString;
  /**
   * Where a package that comes from no index is taken from: `source = { git = … }`, `{ url = … }`, `{ path = … }`,
   * `{ directory = … }` or a workspace member's `{ editable = … }` (uv's lockfile). uv fetches or builds it from there,
   * so it is a direct reference, never looked up on an index.
   */
  readonly direct?: TomlString;
  readonly table: TomlTable;
}

/** The `source` keys of a package that is not taken from an index. */
const DIRECT_SOURCES = ['git', 'url', 'path', 'directory', 'editable'] as const;

/** Package facts one lock may make across its selections (each selection holds what it installs, transitively). */
const MAX_FACTS = 50_000;

const PYPI = /^https:\/\/pypi\.org\/simple\/?$/;

/** What a lock lists that no check reads: the files of each package (most of a large lock's bytes). */
const UNREAD_KEYS: ReadonlySet<string> = new Set(['wheels', 'sdist']);

export function parseUvLock(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  const root = readTomlRoot(text, sink.problems, UNREAD_KEYS);
  if (!root) return sink.finish(path, 'uv-lock', source);
  const list = lookup(root, 'package');
  const tables = list?.kind === 'array' ? list.items.filter((item): item is TomlTable => item.kind === 'table') : [];
  const byName = new Map<string, Locked[]>();
  const roots: TomlTable[] = [];
  for (const table of tables) {
    const name = stringAt(table, 'name');
    const version = stringAt(table, 'version');
    const origin = table.entries.get('source');
    if (!name) continue;
    if (origin?.kind === 'table' && (origin.entries.has('virtual') || origin.entries.has('editable')))
      roots.push(table);
    if (!version) continue;
    const registry = origin?.kind === 'table' ? stringAt(origin, 'registry') : undefined;
    const direct =
      origin?.kind === 'table'
        ? DIRECT_SOURCES.map((key) => stringAt(origin, key)).find((value) => value !== undefined)
        : undefined;
    const locked: Locked = {
      name: normalizePythonName(name.value),
      rawName: name.value,
      nameSpan: textSpan(name),
      version,
      table,
      ...(registry ? { registry } : {}),
      ...(direct ? { direct } : {}),
    };
    const same = byName.get(locked.name) ?? [];
    same.push(locked);
    byName.set(locked.name, same);
  }

  let budget = MAX_FACTS;
  for (const root of roots) {
    // Markers are judged with the selection's extras: uv's lock writes which of several conflicting builds each
    // extra installs as `extra == 'extra-8-nanochat-cpu'` (see markers.ts).
    const project = stringAt(root, 'name')?.value ?? '';
    /** Each selection: its extras and groups, and its direct references in an environment with them. */
    const selections: { name: string; extras: Set<string>; direct: (env: MarkerEnvironment) => TomlTable[] }[] = [];
    const base = (env: MarkerEnvironment) => refs(root.entries.get('dependencies'), env);
    selections.push({ name: 'the project', extras: activeExtras(project, []), direct: base });
    const extras = root.entries.get('optional-dependencies');
    if (extras?.kind === 'table')
      for (const [extra, value] of extras.entries)
        selections.push({
          name: `extra ${extra}`,
          extras: activeExtras(project, [extra]),
          direct: (env) => [...base(env), ...refs(value, env)],
        });
    const groups = root.entries.get('dev-dependencies');
    if (groups?.kind === 'table')
      for (const [group, value] of groups.entries) {
        const active = activeExtras(project, [], [group]);
        selections.push({
          name: `group ${group}`,
          extras: active,
          direct: (env) => [...base(env), ...refs(value, env)],
        });
        // `uv sync --only-group G` installs the group without the project and its dependencies.
        selections.push({ name: `only group ${group}`, extras: active, direct: (env) => refs(value, env) });
      }

    checking: for (const selection of selections) {
      for (const { name, order: installed, through } of resolveSelection(selection, byName)) {
        budget -= installed.length;
        if (budget < 0) {
          if (budget + installed.length >= 0)
            sink.problems.push({
              span: root.span,
              message: `too many selections and packages to check each one; ${selection.name} and those after it were not checked`,
            });
          break checking;
        }
        const byRegistry = new Map<string, Locked[]>();
        for (const locked of installed) {
          const key = locked.registry && !PYPI.test(locked.registry.value) ? locked.registry.value : '';
          const group = byRegistry.get(key) ?? [];
          if (!group.includes(locked)) group.push(locked);
          byRegistry.set(key, group);
        }
        for (const [registry, group] of byRegistry) {
          const first = group.find((locked) => locked.registry?.value === registry)?.registry;
          const id = sink.addLockContext(
            'uv',
            name,
            registry && first ? { url: registry, urlSpan: textSpan(first), span: textSpan(first) } : undefined,
          );
          for (const locked of group) sink.packages.push(lockedFact(locked, id, through.get(locked)));
        }
      }
    }
  }
  return sink.finish(path, 'uv-lock', source);
}

/**
 * What a selection installs: its direct references' entries, then what each entry depends on (`dependencies`,
 * and `optional-dependencies.X` for a reference with `extra = ["X"]`), each once, in that order; and for each entry
 * that is not a direct reference, the direct references it is reached through.
 */
function closure(
  direct: readonly TomlTable[],
  byName: ReadonlyMap<string, readonly Locked[]>,
  env: MarkerEnvironment,
): { order: Locked[]; through: Map<Locked, Set<string>>; byMachine: boolean } {
  const seen = new Set<Locked>();
  /** Entries a reference with a `platform_machine` marker leads to: where a lock forks per machine. */
  const machineMarked = new Set<Locked>();
  const extrasSeen = new Map<Locked, Set<string>>();
  const order: Locked[] = [];
  const children = new Map<Locked, Set<Locked>>();
  const roots = new Set<Locked>();
  const queue: { ref: TomlTable; parent?: Locked }[] = direct.map((ref) => ({ ref }));
  for (let i = 0; i < queue.length; i++) {
    const { ref, parent } = queue[i]!;
    const locked = resolve(ref, byName);
    if (!locked) continue;
    if (stringAt(ref, 'marker')?.value.includes('platform_machine')) machineMarked.add(locked);
    if (parent) {
      let own = children.get(parent);
      if (!own) children.set(parent, (own = new Set()));
      own.add(locked);
    } else roots.add(locked);
    const follow = (value: TomlValue | undefined) =>
      queue.push(...refs(value, env).map((child) => ({ ref: child, parent: locked })));
    if (!seen.has(locked)) {
      seen.add(locked);
      order.push(locked);
      follow(locked.table.entries.get('dependencies'));
    }
    const wanted = ref.entries.get('extra');
    const optional = locked.table.entries.get('optional-dependencies');
    if (wanted?.kind === 'array' && optional?.kind === 'table')
      for (const extra of wanted.items) {
        if (extra.kind !== 'string' || extrasSeen.get(locked)?.has(extra.value)) continue;
        extrasSeen.set(locked, new Set([...(extrasSeen.get(locked) ?? []), extra.value]));
        follow(optional.entries.get(extra.value));
      }
  }
  // Each direct reference's name flows down its dependencies (a worklist: cycles end when nothing is added).
  const through = new Map<Locked, Set<string>>();
  const work = [...roots].map((root) => ({ node: root, name: root.name }));
  while (work.length > 0) {
    const { node, name } = work.pop()!;
    for (const child of children.get(node) ?? []) {
      if (roots.has(child)) continue;
      let names = through.get(child);
      if (!names) through.set(child, (names = new Set()));
      if (names.has(name)) continue;
      names.add(name);
      work.push({ node: child, name });
    }
  }
  // Two versions of one package (only one can be installed); one of them reached under a `platform_machine` marker:
  // a fork per machine.
  const names = new Map<string, Locked>();
  let byMachine = false;
  for (const locked of order) {
    const other = names.get(locked.name);
    if (other && (machineMarked.has(locked) || machineMarked.has(other))) byMachine = true;
    names.set(locked.name, locked);
  }
  return { order, through, byMachine };
}

/**
 * Each marker's verdict per environment (a selection's extras, and a machine where one is fixed): a lock repeats the
 * same few markers on thousands of references (a 2.3 MB uv.lock spent most of its parse evaluating them again).
 */
const verdicts = new WeakMap<MarkerEnvironment, Map<string, ReturnType<typeof evaluateMarker>>>();

/** The references in a list of `{ name, version?, source?, marker? }` whose marker can hold on Linux in `env`. */
function refs(value: TomlValue | undefined, env: MarkerEnvironment): TomlTable[] {
  if (value?.kind !== 'array') return [];
  let known = verdicts.get(env);
  if (!known) verdicts.set(env, (known = new Map()));
  const holds = (marker: string | undefined): boolean => {
    if (marker === undefined) return true;
    let verdict = known.get(marker);
    if (verdict === undefined && !known.has(marker)) known.set(marker, (verdict = evaluateMarker(marker, env)));
    return verdict !== false;
  };
  return value.items.filter(
    (item): item is TomlTable => item.kind === 'table' && holds(stringAt(item, 'marker')?.value),
  );
}

/**
 * What a selection installs (closure), on any Linux machine; or, where that holds two versions of one package reached
 * under `platform_machine` markers, once per machine. A lock resolves per architecture where the project asks it to
 * (InvokeAI's extras install `torch 2.7.1+cpu` on x86_64 and PyPI's `torch 2.7.1` on aarch64): those are never
 * installed together, and each machine's selection is named for it (`extra cpu on aarch64`).
 */
function resolveSelection(
  selection: {
    readonly name: string;
    readonly extras: Set<string>;
    readonly direct: (env: MarkerEnvironment) => TomlTable[];
  },
  byName: ReadonlyMap<string, readonly Locked[]>,
): { name: string; order: Locked[]; through: Map<Locked, Set<string>> }[] {
  const anyMachine: MarkerEnvironment = { extras: selection.extras };
  const whole = closure(selection.direct(anyMachine), byName, anyMachine);
  if (!whole.byMachine) return [{ name: selection.name, ...whole }];
  // Each machine's closure, even where it still holds two versions of a package by another marker (whisperX's scipy
  // per Python version): what two machines install is never one environment.
  return MACHINES.map((machine) => {
    const env: MarkerEnvironment = { extras: selection.extras, values: { platform_machine: machine } };
    return { name: `${selection.name} on ${machine}`, ...closure(selection.direct(env), byName, env) };
  });
}

/**
 * The locked entry a reference names: by name and, where given, version, registry and address; ambiguous → none.
 */
function resolve(ref: TomlTable, byName: ReadonlyMap<string, readonly Locked[]>): Locked | undefined {
  const name = stringAt(ref, 'name');
  if (!name) return undefined;
  let candidates = byName.get(normalizePythonName(name.value)) ?? [];
  const version = stringAt(ref, 'version')?.value;
  if (version) candidates = candidates.filter((locked) => locked.version.value === version);
  const origin = ref.entries.get('source');
  const registry = origin?.kind === 'table' ? stringAt(origin, 'registry')?.value : undefined;
  if (registry) candidates = candidates.filter((locked) => locked.registry?.value === registry);
  // A direct reference names its address (one wheel per platform of a URL source: `{ url = "…x86_64.whl" }`).
  const direct =
    origin?.kind === 'table'
      ? DIRECT_SOURCES.map((key) => stringAt(origin, key)?.value).find((value) => value !== undefined)
      : undefined;
  if (direct) candidates = candidates.filter((locked) => locked.direct?.value === direct);
  return candidates.length === 1 ? candidates[0] : undefined;
}

function lockedFact(locked: Locked, context: number, through: ReadonlySet<string> | undefined): PackageFact {
  return lockedPip(locked.rawName, locked.nameSpan, locked.version.value, textSpan(locked.version), {
    ...(locked.direct ? { url: locked.direct } : {}),
    ...(through ? { pulledInBy: [...through].sort() } : {}),
    context,
  });
}
