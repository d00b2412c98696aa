/**
 * Poetry's tables in pyproject.toml (python-poetry.org/docs/pyproject, /dependency-specification, /repositories):
 * `[tool.poetry.dependencies]` (`name = "2.0.1"` or `{ version, source, markers, optional }`, or a list of such
 * tables for several platforms), `[tool.poetry.group.<name>.dependencies]` (and the older `dev-dependencies`),
 * `[tool.poetry.extras]` (extra → names of optional dependencies) and `[[tool.poetry.source]]` (name, url,
 * priority: `explicit` serves only the dependencies that name it; `primary` or the older `default = true` replaces
 * PyPI; `supplemental` or the older `secondary = true` is searched after it).
 */
import { packageFact, type PackageFact, type VersionClause } from '../facts.js';
import { holdsOnLinux, markerExtras } from '../markers.js';
import { MappedBuilder } from '../mapped.js';
import { normalizePythonName, parsePythonRequirement } from '../python-requirement.js';
import type { Span } from '../source.js';
import { isTrue, lookup, stringAt, textSpan, type TomlString, type TomlTable, type TomlValue } from '../toml.js';

/** A package index a pyproject.toml names, in any tool's table. */
export interface PackageIndex {
  readonly name: string;
  readonly url: string;
  readonly urlSpan: Span;
  readonly span: Span;
  readonly explicit: boolean;
  /** Replaces PyPI (uv `default = true` or [tool.uv] index-url; Poetry `primary`). */
  readonly isDefault: boolean;
  /** Declared as a table entry ([[tool.uv.index]], [[tool.poetry.source]]), not [tool.uv]'s older options. */
  readonly table: boolean;
  /** A page of links (PDM's `type = "find_links"`), read as pip's `--find-links`, not an index. */
  readonly findLinks?: boolean;
}

export interface PoetryDependency {
  readonly fact: PackageFact;
  /** The source (index) it names. */
  readonly source?: string;
  /**
   * Installed only with this extra (`optional = true` and listed in [tool.poetry.extras], or a marker `extra == 'x'`).
   */
  readonly extras?: readonly string[];
}

export interface PoetryProject {
  readonly base: readonly PoetryDependency[];
  readonly groups: ReadonlyMap<string, { readonly span: Span; readonly dependencies: readonly PoetryDependency[] }>;
  /**
   * Groups marked `optional = true` ([tool.poetry.group.NAME]): `poetry install` leaves them out unless `--with` names
   * them; it installs every other group ("By default, dependencies across all non-optional groups will be installed",
   * python-poetry.org/docs/managing-dependencies/#installing-group-dependencies), [dependency-groups] ones too.
   */
  readonly optionalGroups: ReadonlySet<string>;
  /** Extra → its key span. */
  readonly extras: ReadonlyMap<string, Span>;
  readonly sources: readonly PackageIndex[];
}

/** A Poetry version constraint: an exact version (`2.0.1`, `==2.0.1`) is a pin; `^`, `~`, `*` and ranges are not. */
function dependencyFact(name: string, nameSpan: Span, version: TomlString | undefined, span: Span): PackageFact {
  const text = version?.value.trim() ?? '';
  const exact = /^(?:==\s*)?(\d[\w.!+-]*)$/.exec(text)?.[1];
  const at = version ? textSpan(version) : span;
  const offset =
    version && version.mapped.plainOffset >= 0 && exact ? at.start + version.value.indexOf(exact) : at.start;
  const versionSpan =
    exact && version && version.mapped.plainOffset >= 0 ? { start: offset, end: offset + exact.length } : at;
  const clauses: VersionClause[] = exact ? [{ operator: '==', version: exact, versionSpan }] : [];
  const plus = exact?.indexOf('+') ?? -1;
  return packageFact({
    ecosystem: 'pip',
    name: normalizePythonName(name),
    rawName: name,
    nameSpan,
    span: version ? at : span,
    extras: [],
    specifier: exact ? `==${exact}` : text === '*' ? '' : text,
    specifierSpan: at,
    clauses,
    ...(exact ? { exact } : {}),
    ...(exact && plus >= 0 ? { localLabel: exact.slice(plus + 1) } : {}),
  });
}

/** A URL dependency as the PEP 508 `name @ url` it means, or undefined when the URL is not one. */
function urlFact(name: string, nameSpan: Span, url: TomlString): PackageFact | undefined {
  const builder = new MappedBuilder();
  builder.pushSegment(name, -1, nameSpan);
  builder.pushSegment(' @ ', -1, nameSpan);
  builder.pushMapped(url.mapped);
  const result = parsePythonRequirement(builder.build());
  return result.ok ? packageFact(result.fact) : undefined;
}

function dependencies(table: TomlValue | undefined, extrasOf: ReadonlyMap<string, string[]>): PoetryDependency[] {
  if (table?.kind !== 'table') return [];
  const out: PoetryDependency[] = [];
  for (const [name, value] of table.entries) {
    if (name === 'python') continue;
    const nameSpan = table.keySpans.get(name) ?? value.span;
    const choices = value.kind === 'array' ? value.items : [value];
    for (const choice of choices) {
      if (choice.kind === 'string') {
        out.push({ fact: dependencyFact(name, nameSpan, choice, choice.span) });
        break;
      }
      if (choice.kind !== 'table') continue;
      const str = (key: string) => stringAt(choice, key);
      // git and path dependencies are built here, from no index.
      if (choice.entries.has('git') || choice.entries.has('path')) continue;
      const platform = str('platform')?.value;
      if (platform && platform.toLowerCase() !== 'linux') continue;
      const markers = str('markers')?.value;
      if (!holdsOnLinux(markers)) continue;
      const optional = isTrue(choice, 'optional');
      const extras = [...markerExtras(markers), ...(optional ? (extrasOf.get(normalizePythonName(name)) ?? []) : [])];
      const source = str('source')?.value;
      // A wheel URL (`torch = { url = "…/cu118/torch-2.0.1%2Bcu118-…linux_x86_64.whl", platform = "linux" }`,
      // Poetry's dependency-specification "url dependencies") says its build: read as `name @ url`.
      const url = str('url');
      const fact = url ? urlFact(name, nameSpan, url) : dependencyFact(name, nameSpan, str('version'), choice.span);
      if (!fact) continue;
      out.push({
        fact,
        ...(source ? { source } : {}),
        ...(extras.length || optional ? { extras } : {}),
      });
    }
  }
  return out;
}

/** Poetry's project, or undefined when the file has no [tool.poetry] dependencies. */
export function readPoetry(root: TomlTable): PoetryProject | undefined {
  const poetry = lookup(root, 'tool', 'poetry');
  if (poetry?.kind !== 'table') return undefined;
  const extrasTable = poetry.entries.get('extras');
  const extras = new Map<string, Span>();
  const extrasOf = new Map<string, string[]>();
  if (extrasTable?.kind === 'table') {
    for (const [extra, list] of extrasTable.entries) {
      extras.set(extra, extrasTable.keySpans.get(extra) ?? list.span);
      if (list.kind !== 'array') continue;
      for (const item of list.items) {
        if (item.kind !== 'string') continue;
        const key = normalizePythonName(item.value);
        extrasOf.set(key, [...(extrasOf.get(key) ?? []), extra]);
      }
    }
  }
  const base = dependencies(poetry.entries.get('dependencies'), extrasOf);
  const groups = new Map<string, { span: Span; dependencies: PoetryDependency[] }>();
  const optionalGroups = new Set<string>();
  const groupTable = poetry.entries.get('group');
  if (groupTable?.kind === 'table')
    for (const [name, group] of groupTable.entries) {
      if (group.kind === 'table' && isTrue(group, 'optional')) optionalGroups.add(name);
      groups.set(name, {
        span: groupTable.keySpans.get(name) ?? group.span,
        dependencies: dependencies(lookup(group, 'dependencies'), extrasOf),
      });
    }
  // The older `[tool.poetry.dev-dependencies]` is the `dev` group, merged with `[tool.poetry.group.dev]` when
  // both are there (Poetry's docs, "Managing dependencies": dev-dependencies are read as the dev group).
  const dev = poetry.entries.get('dev-dependencies');
  if (dev) {
    const group = groups.get('dev');
    const legacy = dependencies(dev, extrasOf);
    groups.set('dev', {
      span: group?.span ?? poetry.keySpans.get('dev-dependencies') ?? dev.span,
      dependencies: [...legacy, ...(group?.dependencies ?? [])],
    });
  }
  if (base.length === 0 && groups.size === 0) return undefined;

  const sources: PackageIndex[] = [];
  const list = poetry.entries.get('source');
  if (list?.kind === 'array') {
    for (const entry of list.items) {
      if (entry.kind !== 'table') continue;
      const name = entry.entries.get('name');
      const url = entry.entries.get('url');
      if (name?.kind !== 'string' || url?.kind !== 'string') continue;
      const priority = entry.entries.get('priority');
      const level =
        priority?.kind === 'string'
          ? priority.value
          : isTrue(entry, 'default')
            ? 'primary'
            : isTrue(entry, 'secondary')
              ? 'supplemental'
              : 'primary';
      sources.push({
        name: name.value,
        url: url.value,
        urlSpan: textSpan(url),
        span: url.span,
        explicit: level === 'explicit',
        isDefault: level === 'primary' || level === 'default',
        table: true,
      });
    }
  }
  return { base, groups, optionalGroups, extras, sources };
}
