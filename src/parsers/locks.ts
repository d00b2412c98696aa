/**
 * What the YAML lock files (pixi.lock, conda-lock.yml) share: reading the document with positions, and a
 * conda package's name, version, build and channel from its URL
 * (`https://conda.anaconda.org/conda-forge/linux-64/cuda-version-12.1-h1d6eff3_3.conda`: a package file is
 * `<name>-<version>-<build>.conda` or `.tar.bz2`, and neither the version nor the build holds a `-`;
 * docs.conda.io/projects/conda-build/en/latest/resources/package-spec.html).
 */
import { isMap, isSeq, parseDocument, type Node, type YAMLMap } from 'yaml';
import { packageFact, type PackageFact, type ParseProblem } from './facts.js';
import type { Mapped } from './mapped.js';
import { cudaLabelFromBuild } from './conda/match-spec.js';
import type { SourceText } from './source.js';
import { scalarText } from './yaml-text.js';

/** A lock file's top-level mapping, with the positioned problems of its YAML; undefined when there is none. Never throws. */
export function readLockYaml(text: string, what: string, problems: ParseProblem[]): YAMLMap | undefined {
  const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: false, strict: false, keepSourceTokens: false });
  for (const error of doc.errors) {
    const start = Math.min(error.pos[0], text.length);
    problems.push({ span: { start, end: Math.min(Math.max(error.pos[1], start), text.length) }, message: `YAML: ${error.message.split('\n')[0]}` });
  }
  const root = doc.contents;
  if (isMap(root)) return root;
  if (root !== null && doc.errors.length === 0) {
    const [start, end] = (root as Node).range ?? [0, 0];
    problems.push({ span: { start, end }, message: `${what} must be a mapping` });
  }
  return undefined;
}

/** The value at `key` of a mapping node. */
export function get(node: unknown, key: string): Node | undefined {
  if (!isMap(node)) return undefined;
  return (node.get(key, true) as Node | undefined) ?? undefined;
}

/** The items of a sequence node. */
export function items(node: unknown): Node[] {
  return isSeq(node) ? (node.items as Node[]) : [];
}

/** The entries of a mapping node, as [key, value] with string keys. */
export function entries(node: unknown): [string, Node, Node][] {
  if (!isMap(node)) return [];
  const out: [string, Node, Node][] = [];
  for (const pair of node.items) {
    const key = pair.key as Node & { value?: unknown };
    if (key && typeof key.value === 'string' && pair.value) out.push([key.value, key, pair.value as Node]);
  }
  return out;
}

/** A scalar's text mapped to the file. */
export function text(node: Node | undefined, source: SourceText): Mapped | undefined {
  return scalarText(node, source);
}

const SUBDIR = /^(?:noarch|linux-64|linux-aarch64|linux-ppc64le|linux-s390x|linux-armv7l|osx-64|osx-arm64|win-64|win-arm64|linux-32|win-32)$/;

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
  const versionSpan = url.origin(versionAt, versionAt + version.length) ?? url.site(versionAt, versionAt + version.length);
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
