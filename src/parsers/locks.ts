/**
 * What the YAML lock files (pixi.lock, conda-lock.yml) share: reading the document with positions, and a
 * conda package's name, version, build and channel from its URL
 * (`https://conda.anaconda.org/conda-forge/linux-64/cuda-version-12.1-h1d6eff3_3.conda`: a package file is
 * `<name>-<version>-<build>.conda` or `.tar.bz2`, and neither the version nor the build holds a `-`;
 * docs.conda.io/projects/conda-build/en/latest/resources/package-spec.html).
 */
import { isAlias, isMap, isSeq, parseDocument, type Document, type Node } from 'yaml';
import { packageFact, type PackageFact, type ParseProblem } from './facts.js';
import type { Mapped } from './mapped.js';
import { cudaLabelFromBuild } from './conda/match-spec.js';
import { fromYaml, type LockMap } from './lock-tree.js';
import type { SourceText } from './source.js';
import { scanBlockYaml } from './yaml-block-scan.js';

export { entries, get, items, text, type LockNode } from './lock-tree.js';

/** Aliases resolved per lock at most this many times (YAML's "billion laughs" bound, as for environment files). */
export const MAX_LOCK_ALIASES = 1000;

/**
 * A lock file's top-level mapping, with the positioned problems of its YAML; undefined when there is none. Never
 * throws. A lock in the plain layout lock writers emit is read by the line scanner (yaml-block-scan.ts); any other
 * by the `yaml` package, where aliases (`- *torch`, a package moved under an anchor) are replaced by the node they
 * name, so a package listed through one is read as conda-lock and pixi install it; its facts point at the
 * anchor's text.
 */
export function readLockYaml(
  text: string,
  what: string,
  source: SourceText,
  problems: ParseProblem[],
): LockMap | undefined {
  return scanBlockYaml(text) ?? parseLockYaml(text, what, source, problems);
}

/** readLockYaml with the `yaml` package alone (the reference the scanner is checked against). */
export function parseLockYaml(
  text: string,
  what: string,
  source: SourceText,
  problems: ParseProblem[],
): LockMap | undefined {
  const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false, strict: false, keepSourceTokens: false });
  for (const error of doc.errors) {
    const start = Math.min(error.pos[0], text.length);
    problems.push({
      span: { start, end: Math.min(Math.max(error.pos[1], start), text.length) },
      message: `YAML: ${error.message.split('\n')[0]}`,
    });
  }
  resolveAliases(doc, problems);
  const root = doc.contents;
  if (isMap(root)) return fromYaml(root, source) as LockMap;
  if (root !== null && doc.errors.length === 0) {
    const [start, end] = (root as Node).range ?? [0, 0];
    problems.push({ span: { start, end }, message: `${what} must be a mapping` });
  }
  return undefined;
}

/**
 * Replace every alias by its anchor's node, at most MAX_LOCK_ALIASES of them (past that, naming nothing, or naming
 * a node it is inside of: a positioned problem). One walk in document order records each anchor as it is met (an
 * alias names the last anchor of that name before it) and never goes into what an alias stands for, so nested
 * aliases ("billion laughs") cost one step each, not their expansion. (yaml's own `Alias.resolve` walks the whole
 * document for every alias.)
 */
function resolveAliases(doc: Document, problems: ParseProblem[]): void {
  const anchors = new Map<string, Node>();
  const open = new Set<Node>();
  let count = 0;
  const resolve = (alias: Node & { source: string }): Node | null => {
    const [start, end] = alias.range ?? [0, 0];
    if (++count > MAX_LOCK_ALIASES) {
      if (count === MAX_LOCK_ALIASES + 1)
        problems.push({
          span: { start, end },
          message: `YAML: more than ${MAX_LOCK_ALIASES} aliases; the rest are not read`,
        });
      return null;
    }
    const target = anchors.get(alias.source);
    if (!target)
      problems.push({ span: { start, end }, message: `YAML: the alias *${alias.source} names no anchor before it` });
    else if (open.has(target))
      problems.push({ span: { start, end }, message: `YAML: the alias *${alias.source} is inside the node it names` });
    else return target;
    return null;
  };
  // Each step enters a node, leaves it, or resolves an alias where it stands (in document order, so every anchor
  // before it has been recorded).
  type Step =
    | { readonly enter: Node }
    | { readonly leave: Node }
    | { readonly alias: Node & { source: string }; readonly put: (node: Node | null) => void };
  const steps: Step[] = [];
  const root = doc.contents as Node | null;
  if (isAlias(root)) doc.contents = null;
  else if (root) steps.push({ enter: root });
  while (steps.length > 0) {
    const step = steps.pop()!;
    if ('leave' in step) {
      open.delete(step.leave);
      continue;
    }
    if ('alias' in step) {
      step.put(resolve(step.alias));
      continue;
    }
    const node = step.enter;
    const anchor = (node as { anchor?: string }).anchor;
    if (anchor) anchors.set(anchor, node);
    const children: Step[] = [];
    const child = (value: unknown, put: (node: Node | null) => void): void => {
      if (isAlias(value)) children.push({ alias: value, put });
      else if (value) children.push({ enter: value as Node });
    };
    if (isSeq(node)) {
      const list = node.items;
      list.forEach((item, i) => child(item, (resolved) => (list[i] = resolved)));
    } else if (isMap(node)) {
      for (const pair of node.items) {
        child(pair.key, (resolved) => (pair.key = resolved as typeof pair.key));
        child(pair.value, (resolved) => (pair.value = resolved as typeof pair.value));
      }
    } else continue;
    open.add(node);
    steps.push({ leave: node });
    // Children in document order: the stack takes them last first.
    for (let i = children.length - 1; i >= 0; i--) steps.push(children[i]!);
  }
}

const SUBDIR =
  /^(?:noarch|linux-64|linux-aarch64|linux-ppc64le|linux-s390x|linux-armv7l|osx-64|osx-arm64|win-64|win-arm64|linux-32|win-32)$/;

/**
 * A conda package file's URL as a conda fact at the URL's characters (`channel::name=version=build`). Undefined
 * for a URL that does not end in a package file.
 */
export function condaPackageFromUrl(url: Mapped): PackageFact | undefined {
  const value = url.text;
  const path = value.split(/[?#]/)[0]!;
  const slash = path.lastIndexOf('/');
  const file = path.slice(slash + 1);
  const match = /^(.+)-([^-]+)-([^-]+)\.(?:conda|tar\.bz2)$/.exec(file);
  if (!match) return undefined;
  const [, name, version, build] = match as unknown as [string, string, string, string];
  const parts = path
    .slice(0, slash)
    .replace(/^[a-z]+:\/\/[^/]+\//i, '')
    .split('/');
  const subdirAt = parts.findIndex((part) => SUBDIR.test(part));
  const channel = subdirAt > 0 ? parts.slice(0, subdirAt).join('/') : undefined;
  const at = slash + 1;
  const versionAt = at + name.length + 1;
  const buildAt = versionAt + version.length + 1;
  const versionSpan =
    url.origin(versionAt, versionAt + version.length) ?? url.site(versionAt, versionAt + version.length);
  const label = cudaLabelFromBuild(build);
  return packageFact({
    ecosystem: 'conda',
    name: name.toLowerCase(),
    rawName: name,
    nameSpan: url.site(at, at + name.length),
    span: url.site(0, value.length),
    extras: [],
    specifier: `=${version}`,
    specifierSpan: versionSpan,
    clauses: [{ operator: '==', version, versionSpan }],
    exact: version,
    ...(label ? { localLabel: label } : {}),
    ...(channel ? { channel } : {}),
    build,
    buildSpan: url.origin(buildAt, buildAt + build.length) ?? url.site(buildAt, buildAt + build.length),
  });
}
