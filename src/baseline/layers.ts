/**
 * Which baseline a repository runs with, from the files of its default branches (never from a pull request): the
 * organisation's `<owner>/.github:cuda-gatekeeper.yml` is the base layer whenever it exists, the repository's
 * `.github/cuda-gatekeeper.yml` is layered on top (it may say `_extends: .github`, which is implied), and the
 * bundled baseline.yaml applies when neither exists. Locked organisation keys cannot be weakened. Pure: the hosts
 * (the App, its gate threads, the CLI) read the files, the bundled baseline and the clock, and hand them in.
 */
import type { GateOptions } from '../gate.js';
import type { Span } from '../parsers/source.js';
import type { BundledBaseline } from '../util/package-root.js';
import { RULE_DEFAULTS, RULE_IDS } from '../../rules/ids.js';
import { loadBaseline, type LoadedBaseline } from './load.js';
import { mergeBaselines, type Layer, type MergedBaseline } from './merge.js';

/** A repository's own baseline file, on its default branch. */
export const CONFIG_PATH = '.github/cuda-gatekeeper.yml';
/** The organisation's config repository, and its baseline file there. */
export const ORG_CONFIG_REPO = '.github';
export const ORG_CONFIG_PATH = 'cuda-gatekeeper.yml';
/** The same files with `.yaml`: not read (one name, one file); the App and the CLI say so where they find one. */
export const MISNAMED_CONFIG_PATH = '.github/cuda-gatekeeper.yaml';
export const MISNAMED_ORG_CONFIG_PATH = 'cuda-gatekeeper.yaml';

/** A baseline file as read: its text and the commit it was read at. */
export interface ConfigBlob {
  readonly text: string;
  readonly commit: string;
}

export interface ResolvedBaseline extends MergedBaseline {
  /** The repository's own file, for positioned policy errors. */
  readonly repoFile?: LoadedBaseline;
  /** Problems to report as policy-error: weakened locks and invalid organisation files. */
  readonly problems: readonly {
    readonly file: { readonly path: string; readonly source: LoadedBaseline['source'] };
    readonly span: Span;
    readonly message: string;
  }[];
  /** One line for humans: which files, at which commits. */
  readonly origin: string;
  readonly layers: readonly Layer[];
}

export function layerBaselines(
  owner: string,
  repo: string,
  repoConfig: ConfigBlob | undefined,
  orgConfig: ConfigBlob | null | undefined,
  bundled: BundledBaseline,
): ResolvedBaseline {
  const layers: Layer[] = [];
  const problems: ResolvedBaseline['problems'][number][] = [];
  if (orgConfig) {
    const origin = `${owner}/${ORG_CONFIG_REPO}:${ORG_CONFIG_PATH}@${orgConfig.commit.slice(0, 7)}`;
    const loaded = loadBaseline(`${owner}/${ORG_CONFIG_REPO}/${ORG_CONFIG_PATH}`, orgConfig.text, RULE_IDS);
    layers.push({ origin, loaded, organisation: true, ...(orgConfig.commit ? { commit: orgConfig.commit } : {}) });
    for (const problem of loaded.problems)
      problems.push({
        file: { path: loaded.source.path, source: loaded.source },
        span: problem.span,
        message: `organisation baseline: ${problem.message}`,
      });
  }
  let repoFile: LoadedBaseline | undefined;
  if (repoConfig) {
    repoFile = loadBaseline(CONFIG_PATH, repoConfig.text, RULE_IDS);
    const wrong = extendsProblem(repoFile, owner);
    if (wrong) problems.push({ file: { path: CONFIG_PATH, source: repoFile.source }, ...wrong });
    if (repo !== ORG_CONFIG_REPO)
      layers.push({
        origin: `${owner}/${repo}:${CONFIG_PATH}@${repoConfig.commit.slice(0, 7)}`,
        loaded: repoFile,
        ...(repoConfig.commit ? { commit: repoConfig.commit } : {}),
      });
  }
  if (layers.length === 0) {
    layers.push({
      origin: `bundled baseline.yaml (cuda-gatekeeper ${bundled.version})`,
      loaded: loadBaseline('baseline.yaml', bundled.text, RULE_IDS),
    });
  }
  const merged = mergeBaselines(layers, RULE_DEFAULTS);
  for (const weakening of merged.weakenings) {
    const loaded = weakening.layer.loaded;
    problems.push({
      file: { path: loaded.source.path, source: loaded.source },
      span: loaded.locate(weakening.at ?? weakening.key.split('.')),
      message: weakening.message,
    });
  }
  return {
    ...merged,
    ...(repoFile ? { repoFile } : {}),
    problems,
    origin: layers.map((layer) => layer.origin).join(' + '),
    layers,
  };
}

function isOrgConfigRepo(value: string, owner: string): boolean {
  const target = value.split(':')[0]!;
  return target === ORG_CONFIG_REPO || target === `${owner}/${ORG_CONFIG_REPO}`;
}

/**
 * A repository baseline's `_extends` that names anything but an organisation's config repository (the CLI, which
 * knows no owner, accepts `.github` and `<any owner>/.github`): what is wrong, and where.
 */
export function extendsProblem(
  file: LoadedBaseline,
  owner?: string,
): { readonly span: ReturnType<LoadedBaseline['locate']>; readonly message: string } | undefined {
  const value = file.file?._extends;
  if (value === undefined) return undefined;
  const target = value.split(':')[0]!;
  const ok = owner === undefined ? /^(?:[A-Za-z0-9-]+\/)?\.github$/.test(target) : isOrgConfigRepo(value, owner);
  if (ok) return undefined;
  return {
    span: file.locate(['_extends']),
    message: `_extends can only name the organisation's config repository (".github" or "${owner ?? '<owner>'}/.github"), not "${value}"`,
  };
}

/** The gate's options for a repository checked under a resolved baseline: its file, the layer problems, its name. */
export function gateOptionsFor(
  resolved: ResolvedBaseline,
  owner: string,
  repo: string,
  extra: {
    readonly today: string;
    readonly removed?: readonly string[];
    /** Whether a path is known to be no file of the commit checked (its read's answer): missing-include's notices. */
    readonly noFile?: ((path: string) => boolean) | undefined;
  },
): GateOptions {
  const { noFile } = extra;
  return {
    ...(resolved.repoFile ? { policy: resolved.repoFile } : {}),
    policyProblems: resolved.problems,
    policyFiles: resolved.layers.map((layer) => layer.loaded),
    repository: `${owner}/${repo}`,
    today: extra.today,
    ...(extra.removed ? { removed: extra.removed } : {}),
    ...(noFile ? { fileExists: (path: string) => (noFile(path) ? false : undefined) } : {}),
  };
}
