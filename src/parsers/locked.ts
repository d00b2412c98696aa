/**
 * What the pip lock files (poetry.lock, Pipfile.lock, pdm.lock; uv.lock its facts) share: a locked package as a pip
 * fact pinned at its version's characters, and a selection's packages as install contexts, one per source they come
 * from (the lock's registry, which findings on the lock name instead of an edit).
 */
import { packageFact, type FactSink, type PackageFact } from './facts.js';
import { normalizePythonName } from './python-requirement.js';
import type { Span } from './source.js';
import { textSpan, type TomlString } from './toml.js';

/** PyPI named as a source: no registry of its own (the packages from it are PyPI's builds). */
const PYPI = /^https:\/\/pypi\.org\/(?:simple|pypi)\/?$/;

/** A package pinned to `version` (`2.3.1+cu121`), the pin at `versionSpan`; its local label is its build. */
export function lockedPip(
  rawName: string,
  nameSpan: Span,
  version: string,
  versionSpan: Span,
  more: {
    readonly localLabel?: string;
    readonly url?: TomlString;
    /** The packages that pull it in, where the lock records them (uv.lock). */
    readonly pulledInBy?: readonly string[];
    readonly context?: number;
  } = {},
): PackageFact {
  const plus = version.indexOf('+');
  const localLabel = plus >= 0 ? version.slice(plus + 1).toLowerCase() : more.localLabel;
  return packageFact({
    ecosystem: 'pip',
    name: normalizePythonName(rawName),
    rawName,
    nameSpan,
    span: versionSpan,
    extras: [],
    specifier: `==${version}`,
    specifierSpan: versionSpan,
    clauses: [{ operator: '==', version, versionSpan }],
    exact: version,
    ...(localLabel ? { localLabel } : {}),
    ...(more.url ? { url: more.url.value, urlSpan: textSpan(more.url) } : {}),
    ...(more.pulledInBy ? { pulledInBy: more.pulledInBy } : {}),
    ...(more.context !== undefined ? { context: more.context } : {}),
  });
}

/**
 * One selection's packages as install contexts of the lock, one per source URL they come from (PyPI's, and a
 * package with no source, in one context without a registry). Returns the contexts made.
 */
export function addSelection(
  sink: FactSink,
  selection: string,
  entries: readonly { readonly fact: PackageFact; readonly source?: TomlString }[],
): number[] {
  const bySource = new Map<string, (typeof entries)[number][]>();
  for (const entry of entries) {
    const key = entry.source && !PYPI.test(entry.source.value) ? entry.source.value : '';
    const group = bySource.get(key);
    if (group) group.push(entry);
    else bySource.set(key, [entry]);
  }
  const ids: number[] = [];
  for (const [url, group] of bySource) {
    const first = group.find((entry) => entry.source?.value === url)?.source;
    const id = sink.addLockContext(
      'pip',
      selection,
      url && first ? { url, urlSpan: textSpan(first), span: first.span } : undefined,
    );
    ids.push(id);
    for (const entry of group) sink.packages.push(packageFact({ ...entry.fact, context: id }));
  }
  return ids;
}
