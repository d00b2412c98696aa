/**
 * pixi manifests: `pixi.toml`, or the `[tool.pixi]` tables of a pyproject.toml
 * (pixi.sh/latest/reference/pixi_manifest).
 *
 * - The default feature is the manifest's top level: `[dependencies]` (conda match specs, `name = "spec"` or
 *   `{ version, build, channel }`), `[pypi-dependencies]` (`name = "spec"` or `{ version, index, extras }`; git,
 *   path and url sources name no index build), `[system-requirements]` (`cuda = "12"`: the CUDA version the
 *   machines' driver supports, the `__cuda` virtual package pixi solves against), `[target.<platform>.…]`.
 * - `[feature.<name>.…]` holds the same tables, with its own `channels`, `platforms` and `system-requirements`.
 * - `[environments]`: `name = ["feature", …]` or `{ features = […], no-default-feature = true }`; each
 *   environment is the default feature plus its features, and `default` is the default feature alone unless the
 *   table redefines it.
 * - Platforms: `[workspace] platforms` (older `[project]`), strings (`linux-64`) or, in newer pixi, tables
 *   `{ name = "linux-64-cuda", platform = "linux-64", cuda = "12.0" }` with targets selected by name or glob
 *   (`[target."*-cuda".pypi-dependencies]`).
 *
 * Every environment is a selection ("environment cuda") with one install context for its conda packages and
 * one per PyPI index; an environment whose Linux platforms install different packages (a `*-cuda` and a `*-cpu`
 * platform) is one selection per platform ("environment default on linux-64-cuda"). Only Linux platforms are
 * read: the CUDA checks are about Linux, where the images run. Where features set the same package, the later
 * one (and a target over the feature's own table) is what this reads.
 */
import {
  FactSink,
  packageFact,
  type IndexFact,
  type ContextDraft,
  type PackageFact,
  type ParsedFile,
} from '../facts.js';
import { compareDotted } from '../../util/dotted.js';
import { parseMatchSpec } from '../conda/match-spec.js';
import { Mapped, MappedBuilder } from '../mapped.js';
import { normalizePythonName, parsePythonRequirement } from '../python-requirement.js';
import { SourceText, type Span } from '../source.js';
import { findSuppressions } from '../suppressions.js';
import {
  isTrue,
  lookup,
  readTomlRoot,
  stringAt,
  textSpan,
  type TomlString,
  type TomlTable,
  type TomlValue,
} from '../toml.js';

const PYPI = 'https://pypi.org/simple';

/** A package as one feature declares it, before it is placed in an environment's contexts. */
interface Declared {
  readonly key: string;
  readonly fact: PackageFact;
  /** A PyPI package's own index (`{ index = "…" }`). */
  readonly index?: TomlString;
}

/** A PyPI declaration: a package to check, or (no fact) a git/path source that replaces earlier declarations. */
interface DeclaredPypi {
  readonly key: string;
  readonly fact?: PackageFact;
  /** A PyPI package's own index (`{ index = "…" }`). */
  readonly index?: TomlString;
}

interface Feature {
  readonly table: TomlTable;
  readonly channels: readonly TomlString[];
  readonly platforms?: readonly string[];
}

interface Platform {
  readonly name: string;
  readonly platform: string;
  readonly cuda?: TomlString;
}

/** What one environment installs on one Linux platform. */
interface Selection {
  readonly conda: readonly Declared[];
  readonly pypi: readonly Declared[];
  readonly cuda?: TomlString;
}

/** `[pypi-options]`: the index every PyPI package without its own comes from, and the extra ones searched too. */
interface PypiOptions {
  readonly indexUrl?: TomlString;
  readonly extra: readonly TomlString[];
}

function pypiOptions(table: TomlTable): PypiOptions {
  const options = lookup(table, 'pypi-options');
  if (options?.kind !== 'table') return { extra: [] };
  const indexUrl = stringAt(options, 'index-url');
  const extra = options.entries.get('extra-index-urls');
  return {
    ...(indexUrl ? { indexUrl } : {}),
    extra: extra?.kind === 'array' ? extra.items.filter((item): item is TomlString => item.kind === 'string') : [],
  };
}

export function parsePixiManifest(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  const root = readTomlRoot(text, sink.problems);
  if (!root) return sink.finish(path, 'pixi', source);
  readPixi(root, sink, []);
  sink.suppressions.push(...findSuppressions(source));
  return sink.finish(path, 'pixi', source);
}

/**
 * The environments of a pixi manifest rooted at `root` (a pixi.toml, or a pyproject's `[tool.pixi]`) into `sink`.
 * `projectPypi` are the PyPI requirements every environment installs besides (a pyproject's `[project]
 * dependencies`, which pixi installs into each environment).
 */
export function readPixi(root: TomlTable, sink: FactSink, projectPypi: readonly PackageFact[]): void {
  const workspace = [lookup(root, 'workspace'), lookup(root, 'project')].find(
    (value): value is TomlTable => value?.kind === 'table',
  );
  const platforms = readPlatforms(workspace?.entries.get('platforms'));
  const features = new Map<string, Feature>();
  const defaultFeature: Feature = { table: root, channels: channelList(workspace?.entries.get('channels')) };
  const featureTable = root.entries.get('feature');
  if (featureTable?.kind === 'table')
    for (const [name, value] of featureTable.entries)
      if (value.kind === 'table') {
        const list = value.entries.get('platforms');
        features.set(name, {
          table: value,
          channels: channelList(value.entries.get('channels')),
          ...(list?.kind === 'array'
            ? { platforms: list.items.flatMap((item) => (item.kind === 'string' ? [item.value] : [])) }
            : {}),
        });
      }

  // Environments: name → its features, default feature first unless it is left out.
  const environments: { name: string; span?: Span; features: Feature[] }[] = [];
  const table = root.entries.get('environments');
  if (table?.kind === 'table') {
    for (const [name, value] of table.entries) {
      const list = value.kind === 'table' ? value.entries.get('features') : value;
      const noDefault = value.kind === 'table' && isTrue(value, 'no-default-feature');
      const chosen: Feature[] = noDefault ? [] : [defaultFeature];
      for (const item of list?.kind === 'array' ? list.items : []) {
        if (item.kind !== 'string') continue;
        const feature = features.get(item.value);
        if (feature) chosen.push(feature);
        else
          sink.problems.push({
            span: item.span,
            message: `environment ${name}: no [feature.${item.value}] in this manifest`,
          });
      }
      environments.push({ name, span: table.keySpans.get(name) ?? value.span, features: chosen });
    }
  }
  if (!environments.some((environment) => environment.name === 'default'))
    environments.unshift({ name: 'default', features: [defaultFeature] });

  const workspaceOptions = pypiOptions(root);
  for (const environment of environments) {
    // A feature's [pypi-options] add to the workspace's: its extra-index-urls are searched too, and its
    // index-url replaces PyPI (pixi's manifest reference: the options of an environment's features are merged,
    // and they must not name different index-urls).
    const options = environment.features
      .filter((feature) => feature !== defaultFeature)
      .map((feature) => pypiOptions(feature.table))
      .reduce<PypiOptions>(
        (merged, own) => ({
          ...((merged.indexUrl ?? own.indexUrl) ? { indexUrl: merged.indexUrl ?? own.indexUrl } : {}),
          extra: [...merged.extra, ...own.extra],
        }),
        workspaceOptions,
      );
    // Feature channels first, then the workspace's, which every environment can use.
    const ordered = [...environment.features.filter((feature) => feature !== defaultFeature), defaultFeature].flatMap(
      (feature) => feature.channels,
    );
    const channels = [...new Map(ordered.map((channel) => [channel.value, channel])).values()];
    // The environment's platforms: the narrowest list a feature gives, else the workspace's.
    const restricted = environment.features.find((feature) => feature.platforms)?.platforms;
    const linux = platforms.filter(
      (platform) => platform.platform.startsWith('linux') && (!restricted || restricted.includes(platform.name)),
    );
    const onLinux =
      linux.length > 0 ? linux : platforms.length === 0 ? [{ name: 'linux-64', platform: 'linux-64' }] : [];
    const selections = new Map<string, { platforms: string[]; selection: Selection }>();
    for (const platform of onLinux) {
      const selection = select(environment.features, platform, sink);
      const key = selectionKey(selection);
      const same = selections.get(key);
      if (same) same.platforms.push(platform.name);
      else selections.set(key, { platforms: [platform.name], selection });
    }
    for (const { platforms: names, selection } of selections.values()) {
      const variant = `environment ${environment.name}${selections.size > 1 ? ` on ${names.join(', ')}` : ''}`;
      writeSelection(sink, selection, { variant, variantSpan: environment.span, channels, projectPypi, options });
    }
  }
}

/** `platforms = ["linux-64", …]` or `[{ name, platform, cuda }, …]`. */
function readPlatforms(value: TomlValue | undefined): Platform[] {
  if (value?.kind !== 'array') return [];
  return value.items.flatMap((item): Platform[] => {
    if (item.kind === 'string') return [{ name: item.value, platform: item.value }];
    if (item.kind !== 'table') return [];
    // `{ name, platform, cuda = "12.0" }`, or `{ name, subdir, virtual-packages = ["__cuda=12.0", …] }`.
    const name = stringAt(item, 'name')?.value;
    const platform = stringAt(item, 'platform')?.value ?? stringAt(item, 'subdir')?.value ?? name;
    const cuda = stringAt(item, 'cuda') ?? virtualCuda(item.entries.get('virtual-packages'));
    return name && platform ? [{ name, platform, ...(cuda ? { cuda } : {}) }] : [];
  });
}

/** The CUDA version of a `__cuda=12.0` virtual package in a platform's list, as the string it is written in. */
function virtualCuda(list: TomlValue | undefined): TomlString | undefined {
  if (list?.kind !== 'array') return undefined;
  for (const item of list.items) {
    const match = item.kind === 'string' ? /^__cuda\s*[= ]\s*(\d+(?:\.\d+)*)/.exec(item.value) : null;
    if (item.kind === 'string' && match) {
      const at = item.value.indexOf(match[1]!);
      return {
        kind: 'string',
        span: item.span,
        value: match[1]!,
        mapped: item.mapped.slice(at, at + match[1]!.length),
      };
    }
  }
  return undefined;
}

function channelList(value: TomlValue | undefined): TomlString[] {
  if (value?.kind !== 'array') return [];
  return value.items.flatMap((item) =>
    item.kind === 'string'
      ? [item]
      : item.kind === 'table' && stringAt(item, 'channel')
        ? [stringAt(item, 'channel')!]
        : [],
  );
}

/** Whether a `[target.<selector>]` applies to a platform: its name, its base platform, `linux`/`unix`, or a glob. */
function targets(selector: string, platform: Platform): boolean {
  if (selector === platform.name || selector === platform.platform || selector === 'linux' || selector === 'unix')
    return true;
  if (!selector.includes('*')) return false;
  const pattern = new RegExp(`^${selector.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  return pattern.test(platform.name) || pattern.test(platform.platform);
}

/** The packages and CUDA requirement of an environment's features on one platform (later declarations win). */
function select(features: readonly Feature[], platform: Platform, sink: FactSink): Selection {
  const conda = new Map<string, Declared>();
  const pypi = new Map<string, Declared>();
  let cuda = platform.cuda;
  for (const feature of features) {
    const tables = [feature.table];
    const target = feature.table.entries.get('target');
    if (target?.kind === 'table')
      for (const [selector, value] of target.entries)
        if (value.kind === 'table' && targets(selector, platform)) tables.push(value);
    for (const table of tables) {
      for (const declared of condaDependencies(table.entries.get('dependencies'), sink))
        conda.set(declared.key, declared);
      for (const declared of pypiDependencies(table.entries.get('pypi-dependencies'), sink)) {
        if (declared.fact) pypi.set(declared.key, { ...declared, fact: declared.fact });
        else pypi.delete(declared.key);
      }
      const required = lookup(table, 'system-requirements', 'cuda');
      // pixi keeps the highest requirement its features set.
      if (required?.kind === 'string' && (!cuda || compareDotted(required.value, cuda.value) > 0)) cuda = required;
    }
  }
  return { conda: [...conda.values()], pypi: [...pypi.values()], ...(cuda ? { cuda } : {}) };
}

function selectionKey(selection: Selection): string {
  const part = (declared: Declared) => `${declared.key}@${declared.fact.span.start}`;
  return [
    selection.conda.map(part).join(','),
    selection.pypi.map(part).join(','),
    selection.cuda?.span.start ?? '',
  ].join('|');
}

/** A mapped string made of pieces of the file and synthetic text (spaces, operators) between them. */
function assemble(pieces: readonly (Mapped | string)[], site: Span): Mapped {
  const builder = new MappedBuilder();
  for (const piece of pieces) {
    if (typeof piece === 'string') builder.pushSegment(piece, -1, site);
    else builder.pushMapped(piece);
  }
  return builder.build();
}

const BARE_VERSION = /^\d/;

/**
 * A pixi version spec without the spaces it may have around `,`, `|` and operators (`">=2.4.0, <=3.0.0"`,
 * `">= 2.0"`), which a match spec would read as a version and a build. The space between a version and a build
 * (`"* *cuda*"`) stays.
 */
function compact(value: Mapped): Mapped {
  const spaces = /\s+(?=[,|])|(?<=[,|<>=!~])\s+/g;
  if (!spaces.test(value.text)) return value;
  spaces.lastIndex = 0;
  const builder = new MappedBuilder();
  let at = 0;
  for (let match = spaces.exec(value.text); match; match = spaces.exec(value.text)) {
    if (match.index > at) builder.pushMapped(value.slice(at, match.index));
    at = match.index + match[0].length;
  }
  if (at < value.length) builder.pushMapped(value.slice(at));
  return builder.build();
}

/**
 * A dependency's name mapped to the file: at its key where the key is written as the name, else to the whole key
 * (a quoted or dotted key, `0.cuda-version = …`) or, lacking one, the value.
 */
function keyText(table: TomlTable, name: string, spec: TomlValue): Mapped {
  const span = table.keySpans.get(name) ?? spec.span;
  if (span.end - span.start === name.length) return Mapped.of(name, span.start);
  const builder = new MappedBuilder();
  builder.pushSegment(name, -1, span);
  return builder.build();
}

/** `[dependencies]`: conda match specs, as a string or a `{ version, build, channel }` table. */
function condaDependencies(value: TomlValue | undefined, sink: FactSink): Declared[] {
  if (value?.kind !== 'table') return [];
  const out: Declared[] = [];
  for (const [name, spec] of value.entries) {
    const nameText = keyText(value, name, spec);
    const pieces: (Mapped | string)[] = [];
    let channel: TomlString | undefined;
    if (spec.kind === 'string')
      pieces.push(nameText, ' ', ...(BARE_VERSION.test(spec.value) ? ['='] : []), compact(spec.mapped.trim()));
    else if (spec.kind === 'table') {
      channel = stringAt(spec, 'channel');
      const version = stringAt(spec, 'version');
      const build = stringAt(spec, 'build');
      if (channel) pieces.push(channel.mapped, '::');
      pieces.push(nameText);
      if (version) pieces.push(' ', ...(BARE_VERSION.test(version.value) ? ['='] : []), compact(version.mapped.trim()));
      if (build) pieces.push(version ? ' ' : ' * ', build.mapped);
    } else {
      sink.problems.push({
        span: spec.span,
        message: `${name}: expected a conda version such as "12.6.*" or a table { version = "…" }`,
      });
      continue;
    }
    const result = parseMatchSpec(assemble(pieces, spec.span));
    if (!result.ok) {
      sink.problems.push({ span: spec.span, message: `${name}: ${result.message}` });
      continue;
    }
    // `__cuda = "*"` asks for the virtual package: a requirement on the machine, not a package.
    if (name.startsWith('__')) continue;
    out.push({ key: name.toLowerCase(), fact: result.fact });
  }
  return out;
}

/** `[pypi-dependencies]`: PEP 440 specifiers, as a string or a `{ version, index, extras }` table. */
function pypiDependencies(value: TomlValue | undefined, sink: FactSink): DeclaredPypi[] {
  if (value?.kind !== 'table') return [];
  const out: DeclaredPypi[] = [];
  for (const [name, spec] of value.entries) {
    const nameText = keyText(value, name, spec);
    let version: TomlString | undefined;
    let index: TomlString | undefined;
    const extras: string[] = [];
    if (spec.kind === 'string') version = spec;
    else if (spec.kind === 'table') {
      // A wheel or archive URL is read as `name @ url` (the URL says its build); git and path sources are built
      // here, not taken from an index: nothing to check, but they replace what an earlier feature declared.
      const url = stringAt(spec, 'url');
      if (url) {
        const result = parsePythonRequirement(assemble([nameText, ' @ ', url.mapped], spec.span));
        if (result.ok) out.push({ key: result.fact.name, fact: result.fact });
        else sink.problems.push({ span: result.span, message: result.message });
        continue;
      }
      if (spec.entries.has('git') || spec.entries.has('path')) {
        out.push({ key: normalizePythonName(name) });
        continue;
      }
      version = stringAt(spec, 'version');
      index = stringAt(spec, 'index');
      const list = spec.entries.get('extras');
      if (list?.kind === 'array') for (const item of list.items) if (item.kind === 'string') extras.push(item.value);
    } else {
      sink.problems.push({
        span: spec.span,
        message: `${name}: expected a version such as ">=2.5" or a table { version = "…" }`,
      });
      continue;
    }
    const text = version?.value.trim() ?? '*';
    const pieces: (Mapped | string)[] = [nameText, ...(extras.length ? [`[${extras.join(',')}]`] : [])];
    if (version && text !== '*' && text !== '') pieces.push(...(BARE_VERSION.test(text) ? ['=='] : []), version.mapped);
    const result = parsePythonRequirement(assemble(pieces, spec.span));
    if (!result.ok) {
      sink.problems.push({ span: result.span, message: result.message });
      continue;
    }
    out.push({ key: result.fact.name, fact: result.fact, ...(index ? { index } : {}) });
  }
  return out;
}

/** The environment a selection is written for: its name (with the platforms), channels and PyPI settings. */
interface SelectionSetting {
  readonly variant: string;
  readonly variantSpan: Span | undefined;
  readonly channels: readonly TomlString[];
  /** The project's own PyPI dependencies, which every environment installs. */
  readonly projectPypi: readonly PackageFact[];
  readonly options: PypiOptions;
}

/**
 * One selection's contexts: its conda packages (with the channels and its CUDA requirement), then its PyPI ones by
 * index.
 */
function writeSelection(
  sink: FactSink,
  selection: Selection,
  { variant, variantSpan, channels, projectPypi, options }: SelectionSetting,
): void {
  const systemCuda = selection.cuda ? { value: selection.cuda.value, span: selection.cuda.span } : undefined;
  const common = {
    span: { start: 0, end: 0 },
    includes: [],
    variant,
    ...(variantSpan ? { variantSpan } : {}),
    ...(systemCuda ? { systemCuda } : {}),
  };
  // The channels are kept as the context's, not as index facts: pixi takes each package from the first channel
  // that has it (strict priority), so a `nvidia/label/cuda-12.1.0` late in the list serves only what no earlier
  // channel has, or what names it (`{ channel = "…" }`, a claim of that package's own).
  const condaId = sink.contexts.length;
  const conda: ContextDraft = {
    id: condaId,
    tool: 'conda-env',
    indexes: [],
    channels: channels.map((channel) => channel.value),
    ...common,
  };
  sink.contexts.push(conda);
  // With conda-forge the only channel, every package without a channel of its own comes from it (conda-forge's
  // CUDA builds then say their major only; claims.ts).
  const forge = channels.length === 1 && /(?:^|\/)conda-forge\/?$/.test(channels[0]!.value) ? 'conda-forge' : undefined;
  for (const { fact } of selection.conda)
    sink.packages.push(packageFact({ ...fact, channel: fact.channel ?? forge, context: condaId }));

  const byIndex = new Map<string, { index?: TomlString; facts: PackageFact[] }>();
  for (const fact of projectPypi) byIndex.set('', { facts: [...(byIndex.get('')?.facts ?? []), fact] });
  for (const { fact, index } of selection.pypi) {
    const key = index?.value ?? '';
    const group = byIndex.get(key) ?? { ...(index ? { index } : {}), facts: [] };
    group.facts.push(fact);
    byIndex.set(key, group);
  }
  for (const [url, group] of byIndex) {
    const id = sink.contexts.length;
    const fact = (kind: 'index-url' | 'extra-index-url', value: TomlString): IndexFact => ({
      kind,
      url: value.value,
      urlSpan: textSpan(value),
      span: value.span,
      context: id,
    });
    // A package's own index is the only one it comes from; the others use [pypi-options].
    const own = url && group.index ? group.index : undefined;
    const indexes: IndexFact[] = own
      ? own.value.replace(/\/+$/, '') === PYPI
        ? []
        : [fact('index-url', own)]
      : [
          ...(options.indexUrl ? [fact('index-url', options.indexUrl)] : []),
          ...options.extra.map((extra) => fact('extra-index-url', extra)),
        ];
    sink.indexes.push(...indexes);
    sink.contexts.push({ id, tool: 'uv', indexes, channels: [], ...common });
    for (const declared of group.facts) sink.packages.push(packageFact({ ...declared, context: id }));
  }
}
