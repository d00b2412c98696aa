/**
 * The read → parse → gate pipeline for one pull request (I/O at the edges, the engine in the middle).
 *
 * Reads: the changed files, the files they include, and the files that include them (a requirements file changed on
 * its own is checked with the Dockerfile that installs it). The first GraphQL read also lists the directories
 * around changed requirements files and reads, on speculation, the files most likely to be needed next (the
 * requirements file beside a changed Dockerfile, the Dockerfile beside a changed requirements file), so the common
 * pull request needs one read. What the listing shows beyond that is read in one more request.
 */
import { basename, dirname, joinRepo } from '../analysis/paths.js';
import type { ParsedFile } from '../parsers/facts.js';
import type { Report } from '../finding.js';
import { gate } from '../gate.js';
import { verifyFixes } from '../verify.js';
import type { GateJob } from '../sandbox/gate-job.js';
import { GateBudgetError, type GatePool } from '../sandbox/gate-pool.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import ignore from 'ignore';
import { classifyPath, kindByContent, yamlByContent } from '../parsers/index.js';
import { affectedFiles, type Listed } from '../reader.js';
import { gateOptionsFor, resolveBaseline, type OrgConfigCache, type ResolvedBaseline } from './config.js';
import type { PullChanges } from './changes.js';
import { readCommit, type Skipped } from './files.js';
import { firstRead, READ_CHUNK, type FirstRead, type OrgLayer } from './read.js';
import { addedLines } from './suggestions.js';
import type { GitHub, PullTarget } from './types.js';

/** Beside a changed Dockerfile: the files it most likely installs. */
const BESIDE_DOCKERFILE = [
  'requirements.txt',
  'requirements-gpu.txt',
  'requirements-cuda.txt',
  'environment.yml',
  'environment.yaml',
  // What `uv sync`, `pip install .`, `pixi install` and `poetry install` read.
  'pyproject.toml',
  'uv.lock',
  'pixi.toml',
  'pixi.lock',
  'poetry.lock',
];
/** Beside a changed requirements or conda file, and in each directory above it: the files most likely to install it. */
const BESIDE_REQUIREMENTS = ['Dockerfile'];
/** Beside a changed manifest or lock: the files read with it (a manifest and its lock are one selection). */
const BESIDE_PACKAGING: Readonly<Partial<Record<string, readonly string[]>>> = {
  'uv.lock': ['pyproject.toml'],
  'poetry.lock': ['pyproject.toml'],
  'pixi.lock': ['pixi.toml', 'pyproject.toml'],
  'pixi.toml': ['pixi.lock'],
  'pyproject.toml': ['uv.lock', 'poetry.lock', 'pixi.lock'],
};
/** Directories listed to find the files that include a changed one (the nearest first). */
const MAX_DIRECTORIES = 20;

/** A file as `pulls.listFiles` gives it. */
export interface ChangedFile {
  readonly filename: string;
  readonly status: string;
  readonly previous_filename?: string;
  readonly patch?: string;
}

export interface Analysis {
  readonly report: Report;
  /** The files checked: the changed ones and every file joined to them by includes. */
  readonly files: readonly ParsedFile[];
  readonly texts: ReadonlyMap<string, string>;
  /** CUDA-relevant paths the pull request adds or changes. */
  readonly relevant: readonly string[];
  /** CUDA-relevant paths it deletes (or renames away). */
  readonly removed: readonly string[];
  readonly skipped: readonly Skipped[];
  readonly baseline: ResolvedBaseline;
  readonly read?: FirstRead;
  readonly added: ReadonlyMap<string, ReadonlySet<number>>;
  /** Why the check cannot be trusted to run (the organisation baseline could not be read): it fails closed. */
  readonly unavailable?: string;
  /** Why some changed paths may not have been seen (GitHub's listing limits): the run counts them as unchecked. */
  readonly unseen?: string;
  /** The organisation's baseline was found (false: none, or this installation cannot see `<owner>/.github`). */
  readonly orgFound: boolean;
  /** GitHub requests made. */
  readonly requests: number;
}

export interface AnalyzeDeps {
  readonly appId: number;
  readonly orgCache: OrgConfigCache;
  /** Worker threads for the gate (the server); without it the gate runs inline (tests, tools). */
  readonly gatePool?: GatePool;
}

/** The CUDA-relevant part of a pull request's file list: what it adds or changes, and what it deletes. */
export function relevantChanges(changed: readonly ChangedFile[]): {
  relevant: Listed[];
  removed: string[];
  added: Map<string, Set<number>>;
  others: ChangedFile[];
} {
  const relevant: Listed[] = [];
  const removed: string[] = [];
  const others: ChangedFile[] = [];
  const added = new Map<string, Set<number>>();
  for (const file of changed) {
    if (file.previous_filename && file.status === 'renamed' && classifyPath(file.previous_filename)) removed.push(file.previous_filename);
    const kind = classifyPath(file.filename);
    if (!kind) {
      if (file.status !== 'removed') others.push(file);
      continue;
    }
    if (file.status === 'removed') removed.push(file.filename);
    else {
      relevant.push({ path: file.filename, kind });
      added.set(file.filename, addedLines(file.patch));
    }
  }
  return { relevant, removed, added, others };
}

/** `dir` and every directory above it, the nearest first ('' is the root). */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    out.push(dir);
    if (dir === '') return out;
  }
}

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

function organisationConfig(layer: OrgLayer | undefined, cached: ReturnType<OrgConfigCache['get']>) {
  if (!layer) return { config: cached };
  if (layer.state === 'unavailable') return { config: undefined, unavailable: layer.reason };
  return { config: layer.state === 'found' ? layer.config : null };
}

export async function analyzePull(github: GitHub, target: PullTarget, deps: AnalyzeDeps, changes: PullChanges): Promise<Analysis> {
  const repo = { owner: target.owner, repo: target.repo };
  const { relevant, removed, added, others } = relevantChanges(changes.files);
  const unseen = changes.incomplete ? { unseen: changes.incomplete } : {};
  const cachedOrg = deps.orgCache.get(target.installationId, target.owner);
  // YAML files no name claims (env.gpu.yml, conda/environments/…, k8s/train.yaml): read, kept if their content is an
  // environment or a Kubernetes manifest.
  const byContent = others.filter((file) => yamlByContent(file.filename)).map((file) => file.filename);
  if (relevant.length === 0 && removed.length === 0 && byContent.length === 0) {
    // Nothing CUDA-relevant changed: no file is read (the baseline only matters for files).
    const baseline = resolveBaseline(target.owner, target.repo, undefined, cachedOrg ?? null);
    return {
      report: gate([], baseline.baseline, defaultKnowledgeBase()),
      files: [],
      texts: new Map(),
      relevant: [],
      removed: [],
      skipped: [],
      baseline,
      added,
      requests: 0,
      orgFound: Boolean(cachedOrg),
      ...unseen,
    };
  }

  const paths = [...relevant.map((file) => file.path), ...byContent];
  const requirementsLike = [...paths.filter((path) => classifyPath(path) !== 'dockerfile'), ...removed];
  const directories = unique(requirementsLike.flatMap(ancestors)).slice(0, MAX_DIRECTORIES);
  const speculative = unique([
    ...paths.filter((path) => classifyPath(path) === 'dockerfile').flatMap((path) => BESIDE_DOCKERFILE.map((name) => joinRepo(dirname(path), name) ?? name)),
    ...paths.flatMap((path) => (BESIDE_PACKAGING[basename(path)] ?? []).map((name) => joinRepo(dirname(path), name) ?? name)),
    ...directories.flatMap((dir) => BESIDE_REQUIREMENTS.map((name) => joinRepo(dir, name) ?? name)),
  ]).filter((path) => !paths.includes(path));
  const firstPaths = [...paths, ...speculative].slice(0, Math.max(READ_CHUNK, paths.length));
  const read = await firstRead(github, repo, {
    paths: firstPaths,
    directories,
    headSha: target.headSha,
    number: target.number,
    appId: deps.appId,
    withOrg: cachedOrg === undefined,
  });
  const org = organisationConfig(read.org, cachedOrg);
  if (read.org && read.org.state !== 'unavailable') deps.orgCache.set(target.installationId, target.owner, org.config ?? null);
  const baseline = resolveBaseline(target.owner, target.repo, read.repoConfig, org.config);
  // A changed YAML file GitHub would not show cannot be told apart from a manifest: it is not checked, and says so.
  const undecided: Skipped[] = [];
  for (const path of byContent) {
    const blob = read.blobs.get(path);
    if (blob && 'unreadable' in blob) {
      undecided.push({ path, reason: `could not be read to tell whether it is a Kubernetes manifest or a conda environment (${blob.unreadable})` });
      continue;
    }
    const kind = blob && blob.text !== null ? kindByContent(path, blob.text) : undefined;
    if (kind) {
      relevant.push({ path, kind });
      added.set(path, addedLines(others.find((file) => file.filename === path)?.patch));
    }
  }
  // The baseline's `files` patterns: more changed files to check (their content decides the kind), and files not to.
  const { include, exclude } = baseline.baseline.files;
  const excluded = exclude.length ? ignore().add([...exclude]) : undefined;
  const included = include.length ? ignore().add([...include]) : undefined;
  for (const file of others) {
    if (!included?.ignores(file.filename) || relevant.some((entry) => entry.path === file.filename)) continue;
    relevant.push({ path: file.filename });
    added.set(file.filename, addedLines(file.patch));
  }
  const kept = (path: string) => !excluded?.ignores(path);

  // Files that may include a changed or deleted one: what the listing shows, and the speculative reads that exist.
  const checkedRelevant = relevant.filter((file) => kept(file.path));
  const given = new Set(checkedRelevant.map((file) => file.path));
  const includers = unique([...read.listedPaths, ...speculative.filter((path) => read.blobs.get(path))])
    .filter((path) => !given.has(path) && classifyPath(path) !== undefined && kept(path))
    .slice(0, READ_CHUNK)
    .map((path) => ({ path, kind: classifyPath(path)! }));
  const listing = { directories: read.listedDirectories, files: new Set(read.listedPaths) };
  const commit = await readCommit(github, repo, target.headSha, [...checkedRelevant, ...includers], read.blobs, undefined, listing, {
    images: baseline.baseline.images,
  });
  const parsed = commit.files.map((file) => file.parsed);
  const files = affectedFiles(parsed, given, new Set(removed));
  const checked = new Set(files.map((file) => file.path));
  // What could not be checked and matters: a changed file, or a file a checked file includes.
  const followed = new Set(commit.files.filter((file) => checked.has(file.source.path)).flatMap((file) => file.links.filter((link) => link !== undefined)));
  const skipped = [...undecided, ...commit.skipped.filter((entry) => given.has(entry.path) || followed.has(entry.path))];
  const texts = new Map(commit.files.filter((file) => checked.has(file.source.path)).map((file) => [file.source.path, file.source.text]));
  const options = gateOptionsFor(baseline, target.owner, target.repo, { removed });
  const kb = defaultKnowledgeBase();
  const result = {
    files,
    texts,
    relevant: [...given],
    removed,
    baseline,
    read,
    added,
    ...(org.unavailable ? { unavailable: org.unavailable } : {}),
    ...unseen,
    orgFound: Boolean(org.config),
    requests: 1 + commit.requests,
  };
  if (deps.gatePool) {
    // On a worker thread, within the time and size budget (see src/sandbox/gate-pool.ts).
    const sources = commit.files.filter((file) => checked.has(file.source.path)).map((file) => file.source);
    const job: GateJob = {
      owner: target.owner,
      repo: target.repo,
      ...(read.repoConfig ? { repoConfig: read.repoConfig } : {}),
      orgConfig: org.config,
      sources,
      options: { repository: options.repository, today: options.today, removed },
    };
    try {
      return { ...result, report: await deps.gatePool.run(job), skipped };
    } catch (error) {
      if (!(error instanceof GateBudgetError)) throw error;
      // Over budget: nothing is judged; every file counts as not checked (the run fails unless `unchecked: neutral`).
      const unchecked = files.map((file) => ({ path: file.path, reason: `could not be checked: ${error.message} (the files are too large or too complex)` }));
      return { ...result, report: gate([], baseline.baseline, kb, { ...options, removed: [] }), skipped: [...skipped, ...unchecked] };
    }
  }
  // Apply fixes, review suggestions and /cuda-check fix offer only fixes the gate accepts once applied.
  const report = verifyFixes(gate(files, baseline.baseline, kb, options), files, (subset) => gate(subset, baseline.baseline, kb, options));
  return { ...result, report, skipped };
}
