/**
 * pyproject.toml: what `uv sync` / `pip install .` install, as pip facts the rules already read.
 *
 * - PEP 621 `[project] dependencies` (always installed) and `[project.optional-dependencies]` (one extra each);
 *   PEP 735 `[dependency-groups]` (one group each, `{ include-group = "…" }` followed), uv's older
 *   `[tool.uv] dev-dependencies` merged into the `dev` group.
 * - uv's `[[tool.uv.index]]` (name, url, explicit) and `[tool.uv.sources]` (a package routed to an index, for
 *   an extra, a group or a marker; docs.astral.sh/uv/concepts/indexes and uv's PyTorch guide): a package routed
 *   to an index is installed from that index alone; an `explicit = true` index serves only the packages routed to
 *   it, and PyPI serves the rest.
 *
 * Every selection (the project alone, the project with one extra, the project with one group) is a variant of its
 * own: the parser writes one install context per variant and index, each holding every package that variant
 * installs from that index, with the index as that context's `--index-url`. The units (analysis/units.ts) make
 * each variant a unit, so a `cpu` extra and a `cu124` extra are never compared with each other, and a torchaudio
 * that no source routes next to a torch routed to the cu128 index is compared with it, as uv installs them.
 *
 * Source entries whose marker cannot hold on Linux (`sys_platform == 'darwin'`) are left out: the CUDA
 * checks are about Linux, where the images run. Poetry's tables are read by poetry.ts, pixi's (`[tool.pixi]`,
 * each environment a selection) by pixi/parse.ts.
 */
import {
  FactSink,
  packageFact,
  type IndexFact,
  type ContextDraft,
  type DefaultGroupTool,
  type PackageFact,
  type ParsedFile,
} from '../facts.js';
import { MappedBuilder, type Mapped } from '../mapped.js';
import { SourceText, type Span } from '../source.js';
import { findSuppressions } from '../suppressions.js';
import { isTrue, lookup, readTomlRoot, textSpan, type TomlTable, type TomlValue } from '../toml.js';
import { evaluateMarker, holdsOnLinux, MACHINES } from '../markers.js';
import { readPixi } from '../pixi/parse.js';
import { readPoetry, type PackageIndex, type PoetryDependency, type PoetryProject } from './poetry.js';
import { normalizePythonName, parsePythonRequirement, TORCH_FAMILY } from '../python-requirement.js';

/** An index (uv's [[tool.uv.index]], [tool.uv] options, Poetry's [[tool.poetry.source]]). */
type Index = PackageIndex;

/** Package facts one file may make across its selections (see parsePyproject). */
const MAX_FACTS = 50_000;

/** Where a `[tool.uv.sources]` entry holds: for an extra, a group, a machine (undefined: always). */
interface SourceScope {
  readonly extra?: string;
  readonly group?: string;
  /** The entry's `marker` where it names the machine (`platform_machine != 'aarch64'`): elsewhere it does not hold. */
  readonly machineMarker?: string;
}

interface Route extends SourceScope {
  readonly index: string;
  readonly span: Span;
}

/** A `[tool.uv.sources]` entry that installs a package from an address (`{ url = "…whl" }`). */
interface UrlSource extends SourceScope {
  readonly url: Mapped;
}

/** Whether a source entry holds for a selection's declaration (its extra or group, its machine marker). */
function holdsFor(
  scope: SourceScope,
  variant: { readonly extra?: string; readonly group?: string },
  fact: PackageFact,
): boolean {
  return (
    (scope.extra === undefined || scope.extra === variant.extra) &&
    (scope.group === undefined || scope.group === variant.group) &&
    sameMachine(scope.machineMarker, fact.markers)
  );
}

interface Declared {
  readonly fact: PackageFact;
  /** The index this declaration names itself (Poetry's `source = "…"`), over [tool.uv.sources]. */
  readonly index?: string;
}

/** A variant: what one `uv sync` selection installs. */
interface Variant {
  readonly name: string;
  /** The extra's or group's key. */
  readonly span?: Span;
  readonly extra?: string;
  readonly group?: string;
  /** The tools that install this group by default (InstallContext.defaultFor). */
  readonly defaultFor?: readonly DefaultGroupTool[];
  readonly declared: readonly Declared[];
  /** A group installed without the project and its dependencies (`uv sync --only-group G`). */
  readonly alone?: boolean;
}

/** A selection before the project's own dependencies are added to it: `own` is what it adds. */
type Selection = Omit<Variant, 'declared'> & { readonly own: readonly Declared[] };

export function parsePyproject(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  const root = readTomlRoot(text, sink.problems);
  if (!root) return sink.finish(path, 'pyproject', source);
  const indexes = readIndexes(root, sink);
  const { routes, urls } = readSources(root, sink);
  readPdmSources(root, sink, indexes, routes);

  // Poetry's main dependencies are the project's as much as PEP 621's; its sources are indexes like uv's.
  const read = readPoetry(root);
  // Poetry 2 reads PEP 621's [project] dependencies; an entry of [tool.poetry.dependencies] that names one of them only
  // enriches it for locking (an explicit source, markers): "tool.poetry.dependencies is only used to enrich
  // project.dependencies for locking", optional dependencies alike (python-poetry.org/docs/pyproject/#dependencies).
  const declaredPep621 = pep621Names(root);
  const enrichment = new Map<string, PoetryDependency[]>();
  for (const dependency of read?.base ?? [])
    if (declaredPep621.has(dependency.fact.name) && dependency.source)
      enrichment.set(dependency.fact.name, [...(enrichment.get(dependency.fact.name) ?? []), dependency]);
  const poetry =
    read && declaredPep621.size > 0
      ? { ...read, base: read.base.filter((dependency) => !declaredPep621.has(dependency.fact.name)) }
      : read;
  /** A PEP 621 requirement with the Poetry source an enriching entry names for it (in this extra, if any). */
  const enriched = (list: Declared[], extra?: string): Declared[] =>
    enrichment.size === 0
      ? list
      : list.map((declared) => {
          const entry = enrichment
            .get(declared.fact.name)
            ?.find(({ extras }) => !extras?.length || (extra !== undefined && extras.includes(extra)));
          return entry?.source ? { ...declared, index: entry.source } : declared;
        });
  // A dependency that names a source (`source = "pytorch"`) comes from it whatever its priority; supplemental
  // (or `secondary = true`) sources serve nothing else here, as PyPI has every torch before them.
  const named = new Map<string, Index>();
  for (const source of poetry?.sources ?? []) {
    named.set(source.name, source);
    if (source.explicit || source.isDefault) indexes.set(source.name, source);
  }
  const base = [
    ...enriched(requirements(lookup(root, 'project', 'dependencies'), sink, '[project] dependencies')),
    ...(poetry?.base.filter((dependency) => !dependency.extras).map(poetryDeclared) ?? []),
  ];
  const variants: Variant[] = [{ name: 'the project', declared: base }];
  // Each selection holds the project's own dependencies again: past a budget of facts (a hostile file of thousands of
  // extras over thousands of dependencies), the remaining selections are not checked, and the file says so. A
  // selection's list is made only within the budget (made for every extra, the copies were the quadratic part).
  let budget = MAX_FACTS;
  const add = ({ own, ...selection }: Selection): void => {
    // A group is also installed alone, without the project and its dependencies (`uv sync --only-group G`, `poetry
    // install --only G`): that selection is checked only with the command that installs it.
    const size = base.length + own.length + (selection.group === undefined ? 0 : own.length);
    budget -= size;
    if (budget >= 0) {
      variants.push({ ...selection, declared: [...base, ...own] });
      if (selection.group !== undefined) {
        const { defaultFor: _default, ...only } = selection;
        variants.push({ ...only, name: `only ${selection.name}`, declared: own, alone: true });
      }
    } else if (budget + size >= 0)
      sink.problems.push({
        span: selection.span ?? { start: 0, end: 0 },
        message: `too many extras and groups to check each one; ${selection.name} and those after it were not checked`,
      });
  };
  const optional = lookup(root, 'project', 'optional-dependencies');
  if (optional?.kind === 'table')
    for (const [extra, list] of optional.entries)
      add({
        name: `extra ${extra}`,
        span: optional.keySpans.get(extra),
        extra,
        own: enriched(requirements(list, sink, `extra ${extra}`), extra),
      });
  // setuptools' dynamic metadata read from files (`[tool.setuptools.dynamic] dependencies = {file =
  // ["requirements.txt"]}`, an extra's `optional-dependencies.cv = {file = [...]}`): requirements files the project
  // installs, as `-r` would (setuptools.pypa.io, "Dynamic metadata": "file … in the requirements.txt format").
  const dynamic = dynamicFiles(root);
  for (const extra of dynamic.extras.keys())
    if (!(optional?.kind === 'table' && optional.entries.has(extra)))
      add({ name: `extra ${extra}`, span: dynamic.extraSpans.get(extra), extra, own: [] });
  const groups = lookup(root, 'dependency-groups');
  // uv's older `[tool.uv] dev-dependencies` is merged into the `dev` group, which `uv sync` installs by default
  // (docs.astral.sh/uv/concepts/projects/dependencies, "Legacy dev dependencies").
  const uvDevList = lookup(root, 'tool', 'uv', 'dev-dependencies');
  const uvDev = uvDevList ? requirements(uvDevList, sink, '[tool.uv] dev-dependencies') : [];
  // PDM's older `[tool.pdm.dev-dependencies]` (group → list), read with [dependency-groups] as PDM 2.20 and later do.
  const pdmDev = lookup(root, 'tool', 'pdm', 'dev-dependencies');
  // Each group once, from whichever tables declare it, with the tools that read those tables and install it by
  // default (defaultGroups).
  const isDefault = defaultGroups(root, poetry);
  const declared = new Map<string, { span?: Span; own: Declared[]; tools: Set<DefaultGroupTool> }>();
  const declare = (group: string, span: Span | undefined, own: readonly Declared[], tools: DefaultGroupTool[]) => {
    const entry = declared.get(group) ?? { ...(span ? { span } : {}), own: [], tools: new Set() };
    entry.own.push(...own);
    for (const tool of tools) entry.tools.add(tool);
    declared.set(group, entry);
  };
  if (groups?.kind === 'table')
    for (const group of groups.entries.keys())
      declare(group, groups.keySpans.get(group), groupRequirements(groups, group, sink, new Set()), [
        ...(isDefault.poetry(group) ? (['poetry'] as const) : []),
        ...(isDefault.uv(group) ? (['uv'] as const) : []),
        'pdm',
      ]);
  if (uvDev.length > 0) declare('dev', uvDevList?.span, uvDev, isDefault.uv('dev') ? ['uv'] : []);
  if (pdmDev?.kind === 'table')
    for (const [group, list] of pdmDev.entries)
      declare(group, pdmDev.keySpans.get(group), requirements(list, sink, `[tool.pdm.dev-dependencies] ${group}`), [
        'pdm',
      ]);
  for (const [group, { span, own, tools }] of declared)
    add({ name: `group ${group}`, ...(span ? { span } : {}), group, defaultFor: [...tools], own });

  // Indexes every package may come from: non-explicit [[tool.uv.index]] entries, then [tool.uv] extra-index-url,
  // then the default index (an entry with default = true, or [tool.uv] index-url; else PyPI).
  const implicit = [...indexes.values()].filter((index) => !index.explicit && !index.isDefault);
  const fallback = [...indexes.values()].find((index) => index.isDefault);
  // uv's default strategy, first-index, takes a package from the first index that has it; unsafe-best-match
  // compares versions across all of them as pip does (docs.astral.sh/uv/concepts/indexes, "Searching across
  // multiple indexes"). The PyTorch index has every torch, torchvision and torchaudio release it lists.
  const strategy = lookup(root, 'tool', 'uv', 'index-strategy');
  const bestMatch = strategy?.kind === 'string' && strategy.value === 'unsafe-best-match';
  const firstPytorch = implicit.find((index) => /^https?:\/\/download\.pytorch\.org\//.test(index.url));

  for (const selection of poetry ? poetrySelections(poetry) : [])
    add(
      selection.group === undefined || !isDefault.poetry(selection.group)
        ? selection
        : { ...selection, defaultFor: ['poetry'] },
    );
  // What `pip install .[extra]` installs (a Dockerfile's, see installers.ts): the same requirements without uv's
  // or Poetry's routing, from the indexes of the pip command. Checked only with that command, never on their own.
  const asPip: Variant[] = [
    { name: 'pip: the project', declared: base.map(({ fact }) => ({ fact })) },
    ...variants
      .filter((variant) => variant.extra !== undefined)
      .map((variant) => ({
        name: `pip: extra ${variant.extra}`,
        extra: variant.extra,
        declared: variant.declared.map(({ fact }) => ({ fact })),
      })),
  ];

  const override = overrides(root, sink);
  for (const variant of variants) {
    /** `machines`: the machine markers of the routes that lead here, or null once one leads here on every machine. */
    const groups = new Map<
      string,
      { served: readonly Index[]; primary: boolean; packages: PackageFact[]; machines: string[] | null }
    >();
    const place = (key: string, served: readonly Index[], primary: boolean, fact: PackageFact, machine?: string) => {
      const group = groups.get(key) ?? { served, primary, packages: [], machines: [] };
      group.packages.push(fact);
      if (machine === undefined) group.machines = null;
      else if (group.machines && !group.machines.includes(machine)) group.machines.push(machine);
      groups.set(key, group);
    };
    for (const { fact: declaredFact, index: own } of override(variant.declared)) {
      // A direct URL source (`vllm = { url = "…/vllm-0.26.0+cu129-….whl" }`): uv installs that file for it.
      const urlSource = own
        ? undefined
        : (urls.get(declaredFact.name) ?? []).find((candidate) => holdsFor(candidate, variant, declaredFact));
      const fact = (urlSource && fromUrl(declaredFact, urlSource.url)) ?? declaredFact;
      const route = own
        ? { index: own, span: fact.span }
        : (routes.get(fact.name) ?? []).find((candidate) => holdsFor(candidate, variant, fact));
      const routed =
        route &&
        (indexes.get(route.index) ??
          (own ? (named.get(route.index) ?? poetryPypi(route.index, route.span)) : undefined));
      if (route && !routed)
        sink.problems.push({
          span: route.span,
          message: own
            ? `${fact.rawName}: no [[tool.poetry.source]] is named "${route.index}"`
            : `[tool.uv.sources] ${fact.rawName}: no [[tool.uv.index]] is named "${route.index}"`,
        });
      if (routed) place(`route:${routed.name}`, [routed], true, fact, route.machineMarker);
      else if (!bestMatch && firstPytorch && TORCH_FAMILY.has(fact.name))
        place(`first:${firstPytorch.name}`, [firstPytorch], true, fact);
      else place('all', [...implicit, ...(fallback ? [fallback] : [])], false, fact);
    }
    const files = dynamicFor(dynamic, variant);
    /** The install context of this selection that reads `indexes`, with the dynamic files it installs. */
    const selectionContext = (id: number, indexes: IndexFact[]): ContextDraft => {
      const context: ContextDraft = {
        id,
        tool: 'uv',
        span: { start: 0, end: 0 },
        indexes,
        includes: [],
        channels: [],
        variant: variant.name,
        ...(variant.span ? { variantSpan: variant.span } : {}),
        ...(variant.defaultFor?.length ? { defaultFor: variant.defaultFor } : {}),
      };
      sink.contexts.push(context);
      includeDynamic(sink, context, files);
      return context;
    };
    // A selection that declares nothing of its own here still installs what its dynamic files name.
    if (groups.size === 0 && files.length > 0) selectionContext(sink.contexts.length, []);
    for (const group of groups.values()) {
      const id = sink.contexts.length;
      // A package from one index alone reads that index as pip reads --index-url; the others as extra indexes
      // beside the default (PyPI, or the default index as --index-url).
      const machines = group.machines?.length ? group.machines.map((marker) => `(${marker})`).join(' or ') : undefined;
      const facts: IndexFact[] = group.served.map((index) => ({
        kind: index.findLinks ? 'find-links' : group.primary || index.isDefault ? 'index-url' : 'extra-index-url',
        url: index.url,
        urlSpan: index.urlSpan,
        span: index.span,
        context: id,
        ...(index.table ? { uvIndex: { name: index.name, explicit: index.explicit } } : {}),
        ...(machines ? { machines } : {}),
      }));
      sink.indexes.push(...facts);
      const context = selectionContext(id, facts);
      if (bestMatch) sink.options.push({ name: 'unsafe-best-match', span: strategy.span, context: id });
      // One fact per selection: a dependency of the project is installed by each of them.
      for (const fact of group.packages) sink.packages.push(packageFact({ ...fact, context: context.id }));
    }
  }
  for (const variant of asPip) {
    budget -= variant.declared.length;
    if (budget < 0) break;
    const id = sink.contexts.length;
    const context: ContextDraft = {
      id,
      tool: 'requirements',
      span: { start: 0, end: 0 },
      indexes: [],
      includes: [],
      channels: [],
      variant: variant.name,
    };
    sink.contexts.push(context);
    includeDynamic(sink, context, dynamicFor(dynamic, variant));
    for (const { fact } of variant.declared) sink.packages.push(packageFact({ ...fact, context: id }));
  }

  // pixi's tables: its environments install the project's dependencies from PyPI beside their own packages.
  const pixi = lookup(root, 'tool', 'pixi');
  if (pixi?.kind === 'table')
    readPixi(
      pixi,
      sink,
      base.map((declared) => declared.fact),
    );
  sink.suppressions.push(...findSuppressions(source));
  const file = sink.finish(path, 'pyproject', source);
  const library =
    lookup(root, 'build-system')?.kind === 'table' &&
    lookup(root, 'project')?.kind === 'table' &&
    pixi === undefined &&
    indexes.size === 0 &&
    file.indexes.length === 0;
  // pip refuses to install the project on a Python `requires-python` excludes, and uv resolves for those it admits.
  const requires = lookup(root, 'project', 'requires-python');
  const requiresPython = requires?.kind === 'string' && requires.value.trim() ? requires.value.trim() : undefined;
  // Dependencies the build backend provides (PEP 621 `dynamic`), from no file setuptools is told to read.
  const declaredDynamic = lookup(root, 'project', 'dynamic');
  const dynamicDependencies =
    declaredDynamic?.kind === 'array' &&
    declaredDynamic.items.some((item) => item.kind === 'string' && item.value === 'dependencies') &&
    dynamic.dependencies.length === 0;
  return library || requiresPython || dynamicDependencies
    ? {
        ...file,
        ...(library ? { library: true } : {}),
        ...(requiresPython ? { requiresPython } : {}),
        ...(dynamicDependencies ? { dynamicDependencies: true } : {}),
      }
    : file;
}

/**
 * uv's `[tool.uv] override-dependencies`: each replaces every requirement on its package, the project's and its
 * dependencies' (docs.astral.sh/uv/reference/settings/#override-dependencies). An override whose marker cannot hold on
 * Linux keeps the package out of what uv installs there (Megatron-LM's `"torch; sys_platform == 'never'"` leaves the
 * base image's torch alone). Returns what a selection's declarations become (pip reads no [tool.uv]).
 */
function overrides(root: TomlTable, sink: FactSink): (declared: readonly Declared[]) => readonly Declared[] {
  const list = lookup(root, 'tool', 'uv', 'override-dependencies');
  if (!list) return (declared) => declared;
  const byName = new Map<string, Declared[]>();
  for (const declared of requirements(list, sink, '[tool.uv] override-dependencies')) {
    const same = byName.get(declared.fact.name);
    if (same) same.push(declared);
    else byName.set(declared.fact.name, [declared]);
  }
  return (declared) => {
    const replaced = new Set<string>();
    return declared.flatMap((entry) => {
      const over = byName.get(entry.fact.name);
      if (!over) return [entry];
      if (replaced.has(entry.fact.name)) return [];
      replaced.add(entry.fact.name);
      return over.filter((candidate) => holdsOnLinux(candidate.fact.markers));
    });
  };
}

/**
 * Which groups the tools install when their install names no group (PDM's are every group of the tables it reads, so
 * the caller needs no test for it):
 * - Poetry: every group not marked `optional = true` (PoetryProject.optionalGroups), PEP 735's as well.
 * - uv: the groups of `[tool.uv] default-groups` (a list, or "all"), by default `dev` alone ("uv syncs the dev group
 *   by default … The default groups can be changed with the tool.uv.default-groups setting", uv 0.4.27's release notes;
 *   docs.astral.sh/uv/concepts/projects/dependencies/#default-groups).
 * - PDM: every development group, [dependency-groups] and `[tool.pdm.dev-dependencies]` ("Include dev dependencies by
 *   default for install and sync commands. Add a new option --prod/--production to exclude them", PDM 1.5.0's
 *   release notes).
 */
function defaultGroups(
  root: TomlTable,
  poetry: PoetryProject | undefined,
): { readonly poetry: (group: string) => boolean; readonly uv: (group: string) => boolean } {
  const setting = lookup(root, 'tool', 'uv', 'default-groups');
  const uvAll = setting?.kind === 'string' && setting.value === 'all';
  const uv =
    setting?.kind === 'array'
      ? new Set(setting.items.flatMap((item) => (item.kind === 'string' ? [item.value] : [])))
      : new Set(setting ? [] : ['dev']);
  return { poetry: (group) => !poetry?.optionalGroups.has(group), uv: (group) => uvAll || uv.has(group) };
}

const poetryDeclared = (dependency: PoetryDependency): Declared => ({
  fact: dependency.fact,
  ...(dependency.source ? { index: dependency.source } : {}),
});

/**
 * Poetry's extras and groups as selections beside PEP 621's (see poetry.ts). Poetry's supplemental sources are
 * searched only for what PyPI and the primary sources lack, so they serve no torch and are not indexes here.
 */
/** The names of PEP 621's [project] dependencies and optional dependencies, as written in their requirements. */
function pep621Names(root: TomlTable): ReadonlySet<string> {
  const names = new Set<string>();
  const add = (list: TomlValue | undefined): void => {
    if (list?.kind !== 'array') return;
    for (const item of list.items) {
      if (item.kind !== 'string') continue;
      const name = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(item.value)?.[1];
      if (name) names.add(normalizePythonName(name));
    }
  };
  add(lookup(root, 'project', 'dependencies'));
  const optional = lookup(root, 'project', 'optional-dependencies');
  if (optional?.kind === 'table') for (const list of optional.entries.values()) add(list);
  return names;
}

function poetrySelections(poetry: PoetryProject): Selection[] {
  // The optional dependencies of each extra, found in one pass over the dependencies.
  const byExtra = new Map<string, Declared[]>();
  for (const dependency of poetry.base)
    for (const extra of new Set(dependency.extras ?? [])) {
      const list = byExtra.get(extra);
      if (list) list.push(poetryDeclared(dependency));
      else byExtra.set(extra, [poetryDeclared(dependency)]);
    }
  return [
    ...[...poetry.extras].map(([extra, span]) => ({
      name: `extra ${extra}`,
      span,
      extra,
      own: byExtra.get(extra) ?? [],
    })),
    ...[...poetry.groups].map(([group, { span, dependencies }]) => ({
      name: `group ${group}`,
      span,
      group,
      own: dependencies.map(poetryDeclared),
    })),
  ];
}

/**
 * Poetry's built-in PyPI source, which `source = "pypi"` names in any case (Poetry's own `pypi_reference` fixture;
 * python-poetry.org/docs/repositories/#package-sources: "the default source is PyPI"), unless a
 * [[tool.poetry.source]] of that name configures it.
 */
function poetryPypi(name: string, span: Span): Index | undefined {
  if (name.toLowerCase() !== 'pypi') return undefined;
  return { name, url: 'https://pypi.org/simple/', urlSpan: span, span, explicit: true, isDefault: false, table: false };
}

/** `[[tool.uv.index]]` by name, then [tool.uv]'s older `extra-index-url` list and `index-url`. */
function readIndexes(root: TomlTable, sink: FactSink): Map<string, Index> {
  const indexes = new Map<string, Index>();
  const list = lookup(root, 'tool', 'uv', 'index');
  if (list?.kind === 'array') {
    for (const entry of list.items) {
      if (entry.kind !== 'table') continue;
      const name = entry.entries.get('name');
      const url = entry.entries.get('url');
      // uv's `name` is optional: an unnamed index serves every package (it only cannot be named in
      // [tool.uv.sources]); the url is not (docs.astral.sh/uv/reference/settings/#index).
      if (url?.kind !== 'string' || (name !== undefined && name.kind !== 'string')) {
        sink.problems.push({
          span: entry.span,
          message: 'a [[tool.uv.index]] entry needs a url (and a name, if any, is a string)',
        });
        continue;
      }
      const key = name?.kind === 'string' ? name.value : `unnamed index ${indexes.size + 1}`;
      indexes.set(key, {
        name: key,
        url: url.value,
        urlSpan: textSpan(url),
        span: url.span,
        explicit: isTrue(entry, 'explicit'),
        isDefault: isTrue(entry, 'default'),
        table: true,
      });
    }
  }
  const extra = lookup(root, 'tool', 'uv', 'extra-index-url');
  const legacy = [...(extra?.kind === 'array' ? extra.items : extra ? [extra] : [])];
  legacy.forEach((url, i) => {
    if (url.kind === 'string')
      indexes.set(`extra-index-url ${i}`, {
        name: `extra-index-url ${i}`,
        url: url.value,
        urlSpan: textSpan(url),
        span: url.span,
        explicit: false,
        isDefault: false,
        table: false,
      });
  });
  const main = lookup(root, 'tool', 'uv', 'index-url');
  if (main?.kind === 'string' && ![...indexes.values()].some((index) => index.isDefault))
    indexes.set('index-url', {
      name: 'index-url',
      url: main.value,
      urlSpan: textSpan(main),
      span: main.span,
      explicit: false,
      isDefault: true,
      table: false,
    });
  return indexes;
}

/**
 * PDM's `[[tool.pdm.source]]` (pdm-project.org/latest/usage/config/, "Configure the package indexes"): an index of
 * `type = "index"` (the default) beside PyPI, or PyPI itself where it is named `pypi`; `type = "find_links"` a page
 * of links, read as pip's `--find-links`. A source with `include_packages` is the only one those packages are
 * searched in ("Specify index for individual packages"): a route of each package it names to that source, which then
 * serves nothing else. A name pattern (`torch*`) is not followed; such a source is read as serving every package, as
 * without the list.
 */
function readPdmSources(
  root: TomlTable,
  sink: FactSink,
  indexes: Map<string, Index>,
  routes: Map<string, Route[]>,
): void {
  const list = lookup(root, 'tool', 'pdm', 'source');
  if (list?.kind !== 'array') return;
  for (const entry of list.items) {
    if (entry.kind !== 'table') continue;
    const name = entry.entries.get('name');
    const url = entry.entries.get('url');
    if (url?.kind !== 'string' || name?.kind !== 'string') {
      sink.problems.push({ span: entry.span, message: 'a [[tool.pdm.source]] entry needs a name and a url' });
      continue;
    }
    const type = entry.entries.get('type');
    const findLinks = type?.kind === 'string' && type.value === 'find_links';
    const include = entry.entries.get('include_packages');
    const names =
      include?.kind === 'array' ? include.items.flatMap((item) => (item.kind === 'string' ? [item.value] : [])) : [];
    const routed = names.length > 0 && names.every((pattern) => /^[A-Za-z0-9._-]+$/.test(pattern));
    const key = `pdm ${name.value}`;
    indexes.set(key, {
      name: key,
      url: url.value,
      urlSpan: textSpan(url),
      span: url.span,
      explicit: routed,
      isDefault: name.value.toLowerCase() === 'pypi',
      // Not uv's table: PDM takes the best match across its sources, as pip does, unless its opt-in
      // `resolution.respect-source-order` is on (pdm-project.org/latest/usage/config/): no first-index rule here.
      table: false,
      ...(findLinks ? { findLinks } : {}),
    });
    if (routed)
      for (const pattern of names) {
        const pkg = normalizePythonName(pattern);
        routes.set(pkg, [...(routes.get(pkg) ?? []), { index: key, span: include!.span }]);
      }
  }
}

/**
 * Whether a source entry's machine marker and a requirement's own marker hold on some machine together: uv routes a
 * requirement for aarch64 only (`torch==2.7.1; platform_machine == 'aarch64'`) by the entry that holds there, not by
 * an earlier one for the other machines.
 */
function sameMachine(route: string | undefined, own: string | undefined): boolean {
  if (!route || !own?.includes('platform_machine')) return true;
  return MACHINES.some((machine) => {
    const values = { values: { platform_machine: machine } };
    return evaluateMarker(route, values) !== false && evaluateMarker(own, values) !== false;
  });
}

/**
 * `[tool.uv.sources]`: package → the index routes and the URL sources that can hold on Linux (git and path sources are
 * neither).
 */
function readSources(
  root: TomlTable,
  sink: FactSink,
): { readonly routes: Map<string, Route[]>; readonly urls: Map<string, UrlSource[]> } {
  const routes = new Map<string, Route[]>();
  const urls = new Map<string, UrlSource[]>();
  const sources = lookup(root, 'tool', 'uv', 'sources');
  if (sources?.kind !== 'table') return { routes, urls };
  for (const [name, value] of sources.entries) {
    const entries = value.kind === 'array' ? value.items : [value];
    const list: Route[] = [];
    const addresses: UrlSource[] = [];
    for (const entry of entries) {
      if (entry.kind !== 'table') {
        sink.problems.push({
          span: entry.span,
          message: `[tool.uv.sources] ${name}: expected a table such as { index = "pytorch-cu124" }`,
        });
        continue;
      }
      const marker = entry.entries.get('marker');
      if (!holdsOnLinux(marker?.kind === 'string' ? marker.value : undefined)) continue;
      const extra = entry.entries.get('extra');
      const group = entry.entries.get('group');
      const scope: SourceScope = {
        ...(extra?.kind === 'string' ? { extra: extra.value } : {}),
        ...(group?.kind === 'string' ? { group: group.value } : {}),
        ...(marker?.kind === 'string' && marker.value.includes('platform_machine')
          ? { machineMarker: marker.value }
          : {}),
      };
      // An index (a route to one), or a direct URL (docs.astral.sh/uv/concepts/projects/dependencies/#url); git and
      // path sources are no indexes and name no build.
      const index = entry.entries.get('index');
      const url = entry.entries.get('url');
      if (index?.kind === 'string') list.push({ index: index.value, span: index.span, ...scope });
      else if (url?.kind === 'string') addresses.push({ url: url.mapped, ...scope });
    }
    routes.set(normalizePythonName(name), list);
    if (addresses.length > 0) urls.set(normalizePythonName(name), addresses);
  }
  return { routes, urls };
}

/**
 * A dependency as uv installs it from its URL source: `name[extras] @ URL ; markers`, read as such a requirement is
 * (a wheel's name says its version and local label, `+cu129`), positioned at the address.
 */
function fromUrl(fact: PackageFact, url: Mapped): PackageFact | undefined {
  const site = url.site(0, url.text.length);
  const builder = new MappedBuilder();
  builder.pushSegment(`${fact.rawName}${fact.extras.length ? `[${fact.extras.join(',')}]` : ''} @ `, -1, site);
  builder.pushMapped(url);
  if (fact.markers) builder.pushSegment(` ; ${fact.markers}`, -1, site);
  const parsed = parsePythonRequirement(builder.build());
  return parsed.ok ? { ...parsed.fact, context: fact.context } : undefined;
}

/** A list of PEP 508 strings. */
function requirements(list: TomlValue | undefined, sink: FactSink, where: string): Declared[] {
  if (!list) return [];
  if (list.kind !== 'array') {
    sink.problems.push({ span: list.span, message: `${where}: expected a list of requirements` });
    return [];
  }
  const declared: Declared[] = [];
  for (const item of list.items) {
    if (item.kind !== 'string') continue;
    const mapped = item.mapped.trim();
    if (mapped.length === 0) continue;
    const result = parsePythonRequirement(mapped);
    if (!result.ok) {
      sink.problems.push({ span: result.span, message: result.message });
      continue;
    }
    declared.push({ fact: result.fact });
  }
  return declared;
}

/** A dependency group's requirements, with the groups it includes (PEP 735 `{ include-group = "name" }`). */
function groupRequirements(groups: TomlTable, name: string, sink: FactSink, seen: Set<string>): Declared[] {
  if (seen.has(name)) return [];
  seen.add(name);
  const list = groups.entries.get(name);
  if (list?.kind !== 'array') return requirements(list, sink, `group ${name}`);
  const declared: Declared[] = [];
  for (const item of list.items) {
    if (item.kind === 'table') {
      const include = item.entries.get('include-group');
      if (include?.kind === 'string') declared.push(...groupRequirements(groups, include.value, sink, seen));
    } else declared.push(...requirements({ kind: 'array', span: item.span, items: [item] }, sink, `group ${name}`));
  }
  return declared;
}

/** The files of setuptools' dynamic metadata: the project's dependencies', and each extra's. */
interface DynamicFiles {
  readonly dependencies: readonly { readonly value: string; readonly span: Span }[];
  readonly extras: ReadonlyMap<string, readonly { readonly value: string; readonly span: Span }[]>;
  readonly extraSpans: ReadonlyMap<string, Span>;
}

function dynamicFiles(root: TomlTable): DynamicFiles {
  const filesOf = (entry: TomlValue | undefined) => {
    const file = entry?.kind === 'table' ? entry.entries.get('file') : undefined;
    const items = file?.kind === 'array' ? file.items : file ? [file] : [];
    return items.flatMap((item) => (item.kind === 'string' ? [{ value: item.value, span: item.span }] : []));
  };
  const extras = new Map<string, { value: string; span: Span }[]>();
  const extraSpans = new Map<string, Span>();
  const optional = lookup(root, 'tool', 'setuptools', 'dynamic', 'optional-dependencies');
  if (optional?.kind === 'table')
    for (const [extra, entry] of optional.entries) {
      const files = filesOf(entry);
      if (files.length === 0) continue;
      extras.set(extra, files);
      const span = optional.keySpans.get(extra);
      if (span) extraSpans.set(extra, span);
    }
  return { dependencies: filesOf(lookup(root, 'tool', 'setuptools', 'dynamic', 'dependencies')), extras, extraSpans };
}

/**
 * The dynamic files a selection installs: the project's dependencies' in every selection but a group installed alone,
 * and an extra's own in that extra's.
 */
function dynamicFor(
  dynamic: DynamicFiles,
  variant: Pick<Variant, 'alone' | 'extra'>,
): readonly { readonly value: string; readonly span: Span }[] {
  if (variant.alone) return [];
  const extra = variant.extra === undefined ? [] : (dynamic.extras.get(variant.extra) ?? []);
  return [...dynamic.dependencies, ...extra];
}

/** Each of `files` as a requirements file the context installs (as `-r` would). */
function includeDynamic(
  sink: FactSink,
  context: ContextDraft,
  files: readonly { readonly value: string; readonly span: Span }[],
): void {
  for (const file of files)
    sink.addInclude(context, {
      kind: 'requirement',
      target: file.value,
      targetSpan: file.span,
      span: file.span,
      context: context.id,
    });
}
