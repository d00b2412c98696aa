/**
 * The read → parse → gate pipeline for one pull request (I/O at the edges, the engine in the middle).
 *
 * Reads: the changed files, the files they include, and the files that include them (a requirements file changed on
 * its own is checked with the Dockerfile that installs it). The first GraphQL read also lists the directories
 * around changed requirements files and reads, on speculation, the files most likely to be needed next (the
 * requirements file beside a changed Dockerfile, the Dockerfile beside a changed requirements file), so the common
 * pull request needs one read. What the listing shows beyond that is read in one more request.
 */
import { followLinks } from './links.js';
import { includeCandidates } from '../analysis/links.js';
import { basename, dirname, joinRepo } from '../analysis/paths.js';
import type { ParsedFile } from '../parsers/facts.js';
import type { Report } from '../finding.js';
import { gate } from '../gate.js';
import type { GateJob } from '../sandbox/gate-job.js';
import { GateBudgetError, type Gates } from '../sandbox/gate-pool.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import ignore from 'ignore';
import { BESIDE_DOCKERFILE, formatByName, packagingPartners } from '../parsers/formats.js';
import { classifyPath, kindByContent, yamlByContent } from '../parsers/index.js';
import { affectedFiles, type Listed, type SourceFile } from '../reader.js';
import { gateOptionsFor, layerBaselines, type ResolvedBaseline } from '../baseline/layers.js';
import type { OrgConfigCache } from './config.js';
import type { PullChanges } from './changes.js';
import { readCommit, type Skipped } from './files.js';
import { firstRead, READ_CHUNK, type FirstRead, type OrgLayer } from './read.js';
import { addedLines } from './suggestions.js';
import type { ChangedFile, GitHub, PullTarget } from './types.js';
import type { ImageLookupService } from './deps.js';
import type { Baseline } from '../baseline/schema.js';
import type { ImageLookups } from '../images/lookup.js';
import { fleetPlatform, imagesToLookUp, lookUpImages } from '../images/resolve.js';
import { snapshotKnows } from '../analysis/claims.js';
import { bundledBaseline, today } from '../util/package-root.js';

/** Beside a changed requirements or conda file, and in each directory above it: the files most likely to install it. */
const BESIDE_REQUIREMENTS = ['Dockerfile'];
/** Directories listed to find the files that include a changed one (the nearest first). */
const MAX_DIRECTORIES = 20;

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
  /** Submodules the pull request moves: their files live in other repositories and are not read here. */
  readonly submodules?: readonly string[];
  /** Why no organisation baseline applies, where known: no `.github` seen, or no baseline file in it. */
  readonly orgMissing?: 'repository' | 'file';
  /** GitHub requests made. */
  readonly requests: number;
}

export interface AnalyzeDeps {
  readonly appId: number;
  readonly orgCache: OrgConfigCache;
  /** What runs the gate: worker threads (the server), or the calling thread (tests). */
  readonly gatePool: Gates;
  /** How images are looked up in their registries; unset, they are not. */
  readonly images?: ImageLookupService;
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
    if (file.previous_filename && file.status === 'renamed' && classifyPath(file.previous_filename))
      removed.push(file.previous_filename);
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

/** What the first read asks for: the changed paths, what may join them, the directories to list. */
interface ReadPlan {
  readonly relevant: Listed[];
  readonly removed: readonly string[];
  readonly added: Map<string, Set<number>>;
  readonly others: readonly ChangedFile[];
  /** Changed YAML files no name claims: read, kept if their content is an environment or a Kubernetes manifest. */
  readonly byContent: readonly string[];
  /** Files read on speculation (beside a changed file, in the directories above it). */
  readonly speculative: readonly string[];
  readonly firstPaths: readonly string[];
  readonly directories: readonly string[];
}

/** The files a pull request checks, read, with the baseline that applies and what could not be checked. */
interface Selection {
  readonly baseline: ResolvedBaseline;
  readonly org: ReturnType<typeof organisationConfig>;
  readonly read: FirstRead;
  readonly files: readonly ParsedFile[];
  readonly sources: readonly SourceFile[];
  readonly texts: Map<string, string>;
  readonly given: ReadonlySet<string>;
  readonly skipped: readonly Skipped[];
  /** Include candidates of the files checked that GitHub showed are no file of the head commit (missing-include). */
  readonly noFile: readonly string[];
  readonly requests: number;
}

/**
 * One pull request's analysis, in four steps: plan the reads from the changed files, read them with the baselines
 * in one request, select and read every file the baseline checks and the files joined to them, judge.
 */
export async function analyzePull(
  github: GitHub,
  target: PullTarget,
  deps: AnalyzeDeps,
  changes: PullChanges,
): Promise<Analysis> {
  const moved = movedSubmodules(changes.files);
  const unseen = {
    ...(changes.incomplete ? { unseen: changes.incomplete } : {}),
    ...(moved.length > 0 ? { submodules: moved } : {}),
  };
  const cachedOrg = deps.orgCache.get(target.installationId, target.owner);
  // 1. What changed, and what to read for it.
  const plan = planReads(changes);
  if (!plan) {
    // Nothing CUDA-relevant changed: no file is read (the baseline only matters for files).
    const baseline = layerBaselines(target.owner, target.repo, undefined, cachedOrg ?? null, bundledBaseline());
    const report = gate([], baseline.baseline, defaultKnowledgeBase());
    return {
      report,
      files: [],
      texts: new Map(),
      relevant: [],
      removed: [],
      skipped: [],
      baseline,
      added: new Map(),
      requests: 0,
      orgFound: Boolean(cachedOrg),
      ...(cachedOrg === null && deps.orgCache.missing(target.installationId, target.owner)
        ? { orgMissing: deps.orgCache.missing(target.installationId, target.owner)! }
        : {}),
      ...unseen,
    };
  }
  // 2. The changed files, the speculative reads, the directory listings and the baselines: one request (and, where a
  // file read could be a symbolic link, its mode and its target: links.ts).
  const repo = { owner: target.owner, repo: target.repo };
  const first = await firstRead(github, repo, {
    paths: plan.firstPaths,
    directories: plan.directories,
    headSha: target.headSha,
    number: target.number,
    appId: deps.appId,
    withOrg: cachedOrg === undefined,
  });
  const linked = await followLinks(github, repo, target.headSha, first.blobs);
  const read: FirstRead = { ...first, blobs: linked.blobs };
  const org = organisationConfig(read.org, cachedOrg);
  if (read.org && read.org.state !== 'unavailable')
    deps.orgCache.set(
      target.installationId,
      target.owner,
      org.config ?? null,
      read.org.state === 'none' ? read.org.missing : undefined,
    );
  const orgMissing = org.config ? undefined : deps.orgCache.missing(target.installationId, target.owner);
  // 3. The files the baseline checks, and every file joined to them.
  const selection = await selectFiles(github, target, plan, read, org);
  // 4. The verdict.
  const report = await judge(target, plan, selection, deps);
  return {
    files: report.files,
    texts: selection.texts,
    relevant: [...selection.given],
    removed: plan.removed,
    baseline: selection.baseline,
    read,
    added: plan.added,
    ...(org.unavailable ? { unavailable: org.unavailable } : {}),
    ...unseen,
    orgFound: Boolean(org.config),
    ...(orgMissing ? { orgMissing } : {}),
    requests: selection.requests + linked.requests,
    report: report.report,
    skipped: report.skipped,
  };
}

/**
 * The submodules a change moves. GitHub's diff of a submodule is its commit line ("-Subproject commit <sha>",
 * "+Subproject commit <sha>", as `git diff` writes a gitlink); the files behind it are another repository's.
 */
export function movedSubmodules(files: readonly ChangedFile[]): string[] {
  return files
    .filter((file) => /^[-+]Subproject commit [0-9a-f]{40}/m.test(file.patch ?? ''))
    .map((file) => file.filename);
}

/** A Dockerfile by its name: the files beside it are read with it. */
function isDockerfile(path: string): boolean {
  return formatByName(path)?.units === 'stages';
}

/** Step 1: the relevant changes and the first read's paths and directories; undefined when nothing relevant changed. */
function planReads(changes: PullChanges): ReadPlan | undefined {
  const { relevant, removed, added, others } = relevantChanges(changes.files);
  const byContent = others.filter((file) => yamlByContent(file.filename)).map((file) => file.filename);
  if (relevant.length === 0 && removed.length === 0 && byContent.length === 0) return undefined;
  const paths = [...relevant.map((file) => file.path), ...byContent];
  const requirementsLike = [...paths.filter((path) => !isDockerfile(path)), ...removed];
  const directories = unique(requirementsLike.flatMap(ancestors)).slice(0, MAX_DIRECTORIES);
  const speculative = unique([
    ...paths
      .filter(isDockerfile)
      .flatMap((path) => BESIDE_DOCKERFILE.map((name) => joinRepo(dirname(path), name) ?? name)),
    ...paths.flatMap((path) => packagingPartners(basename(path)).map((name) => joinRepo(dirname(path), name) ?? name)),
    ...directories.flatMap((dir) => BESIDE_REQUIREMENTS.map((name) => joinRepo(dir, name) ?? name)),
  ]).filter((path) => !paths.includes(path));
  const firstPaths = [...paths, ...speculative].slice(0, Math.max(READ_CHUNK, paths.length));
  return { relevant, removed, added, others, byContent, speculative, firstPaths, directories };
}

/**
 * Step 3: the baseline that applies; the changed files it checks (by name, by content, by its `files` patterns);
 * the files that may include them (what the listing shows, and the speculative reads that exist); all of them
 * read, with the files their includes lead to. A changed YAML file GitHub would not show cannot be told apart
 * from a manifest: it is not checked, and says so.
 */
async function selectFiles(
  github: GitHub,
  target: PullTarget,
  plan: ReadPlan,
  read: FirstRead,
  org: ReturnType<typeof organisationConfig>,
): Promise<Selection> {
  const baseline = layerBaselines(target.owner, target.repo, read.repoConfig, org.config, bundledBaseline());
  const relevant = [...plan.relevant];
  const undecided: Skipped[] = [];
  for (const path of plan.byContent) {
    const blob = read.blobs.get(path);
    if (blob && 'unreadable' in blob) {
      undecided.push({
        path,
        reason: `could not be read to tell whether it is a Kubernetes manifest or a conda environment (${blob.unreadable})`,
      });
      continue;
    }
    const kind = blob && blob.text !== null ? kindByContent(path, blob.text) : undefined;
    if (kind) {
      relevant.push({ path, kind });
      plan.added.set(path, addedLines(plan.others.find((file) => file.filename === path)?.patch));
    }
  }
  const { include, exclude } = baseline.baseline.files;
  const excluded = exclude.length ? ignore().add([...exclude]) : undefined;
  const included = include.length ? ignore().add([...include]) : undefined;
  for (const file of plan.others) {
    if (!included?.ignores(file.filename) || relevant.some((entry) => entry.path === file.filename)) continue;
    relevant.push({ path: file.filename });
    plan.added.set(file.filename, addedLines(file.patch));
  }
  const kept = (path: string) => !excluded?.ignores(path);
  const checkedRelevant = relevant.filter((file) => kept(file.path));
  const given = new Set<string>(checkedRelevant.map((file) => file.path));
  const includers = unique([...read.listedPaths, ...plan.speculative.filter((path) => read.blobs.get(path))])
    .filter((path) => !given.has(path) && classifyPath(path) !== undefined && kept(path))
    .slice(0, READ_CHUNK)
    .map((path) => ({ path, kind: classifyPath(path)! }));
  const listing = { directories: read.listedDirectories, files: new Set(read.listedPaths) };
  // The manifests that run an image whose Dockerfile this change edits (the baseline's `images` maps it): read from
  // the head tree's YAML files, and judged with the new image.
  const runners = await runnersOf(github, target, baseline.baseline, checkedRelevant, kept);
  const commit = await readCommit(
    github,
    { owner: target.owner, repo: target.repo },
    target.headSha,
    [...checkedRelevant, ...includers, ...runners.candidates],
    {
      known: read.blobs,
      listing,
      parse: { images: baseline.baseline.images },
      byContent: new Set(runners.candidates.map((file) => file.path)),
    },
  );
  for (const file of commit.files)
    if (
      file.parsed.containers.some(
        (container) => container.dockerfile && runners.dockerfiles.has(container.dockerfile.path),
      )
    )
      given.add(file.source.path);
  const files = affectedFiles(
    commit.files.map((file) => file.parsed),
    given,
    new Set(plan.removed),
  );
  const checked = new Set(files.map((file) => file.path));
  // What could not be checked and matters: a changed file, or a file a checked file includes.
  const followed = new Set(
    commit.files
      .filter((file) => checked.has(file.source.path))
      .flatMap((file) => file.links.filter((link) => link !== undefined)),
  );
  const skipped = [
    ...undecided,
    ...commit.skipped.filter((entry) => given.has(entry.path) || followed.has(entry.path)),
  ];
  const sources = commit.files.filter((file) => checked.has(file.source.path)).map((file) => file.source);
  const texts = new Map(sources.map((source) => [source.path, source.text]));
  const noFile = new Set<string>();
  if (commit.noFile)
    for (const file of files)
      for (const include of file.includes)
        for (const path of includeCandidates(file, include)) if (commit.noFile(path)) noFile.add(path);
  return {
    baseline,
    org,
    read,
    files,
    sources,
    texts,
    given,
    skipped,
    noFile: [...noFile],
    requests: 1 + commit.requests + runners.requests,
  };
}

/**
 * When the change edits a Dockerfile the baseline maps an image to (`images: { ghcr.io/org/trainer: … }`), the head
 * tree's YAML files (one tree read) to read by content: the manifests among them that run the image are checked
 * with it. No request otherwise.
 */
async function runnersOf(
  github: GitHub,
  target: PullTarget,
  baseline: Baseline,
  changed: readonly Listed[],
  kept: (path: string) => boolean,
): Promise<{
  readonly candidates: readonly Listed[];
  readonly dockerfiles: ReadonlySet<string>;
  readonly requests: number;
}> {
  const mapped = new Set(Object.values(baseline.images));
  const dockerfiles = new Set(
    changed.filter((file) => isDockerfile(file.path) && mapped.has(file.path)).map((file) => file.path),
  );
  if (dockerfiles.size === 0) return { candidates: [], dockerfiles, requests: 0 };
  const tree = await github.rest.git.getTree({
    owner: target.owner,
    repo: target.repo,
    tree_sha: target.headSha,
    recursive: 'true',
  });
  const yaml = tree.data.tree
    .filter((entry) => entry.type === 'blob' && entry.path && yamlByContent(entry.path) && kept(entry.path))
    .map((entry) => ({ path: entry.path! }))
    .filter((file) => !changed.some((other) => other.path === file.path));
  return { candidates: yaml, dockerfiles, requests: 1 };
}

/**
 * The images of the checked files that the knowledge snapshot does not know, looked up in their registries within
 * the service's budget (unless the baseline says registries.lookup: false). Never throws: what could not be read is
 * a lookup state the gate says.
 */
async function lookUpImagesOf(
  files: readonly ParsedFile[],
  baseline: Baseline,
  service: ImageLookupService | undefined,
  today: string,
): Promise<ImageLookups | undefined> {
  if (!service || baseline.registries.lookup === false) return undefined;
  const kb = defaultKnowledgeBase();
  const refs = imagesToLookUp(files, (image) => snapshotKnows(image, kb));
  if (refs.length === 0) return undefined;
  const run = await lookUpImages(refs, baseline, {
    cache: service.cache,
    env: service.env,
    budgetMs: service.budgetMs,
    platform: fleetPlatform(baseline),
    today,
    ...(service.fetch ? { fetch: service.fetch } : {}),
  });
  return run.lookups;
}

/**
 * Step 4: the gate, with the fixes verified (apply fixes, review suggestions and `/cuda-check fix` offer only fixes the
 * gate accepts once applied), run by the gates: in the server on a worker thread within its time and size budget
 * (src/sandbox/gate-pool.ts), in tests on the calling thread within the size budget; over budget nothing is judged and
 * every file counts as not checked (the run fails unless `unchecked: neutral`).
 */
async function judge(
  target: PullTarget,
  plan: ReadPlan,
  selection: Selection,
  deps: Pick<AnalyzeDeps, 'gatePool' | 'images'>,
): Promise<{ readonly report: Report; readonly files: readonly ParsedFile[]; readonly skipped: readonly Skipped[] }> {
  const pool = deps.gatePool;
  const { baseline, files, skipped } = selection;
  const options = gateOptionsFor(baseline, target.owner, target.repo, { today: today(), removed: plan.removed });
  const images = await lookUpImagesOf(files, baseline.baseline, deps.images, options.today!);
  const job: GateJob = {
    owner: target.owner,
    repo: target.repo,
    ...(selection.read.repoConfig ? { repoConfig: selection.read.repoConfig } : {}),
    orgConfig: selection.org.config,
    sources: [...selection.sources],
    ...(selection.noFile.length > 0 ? { noFile: selection.noFile } : {}),
    options: {
      repository: options.repository,
      today: options.today,
      removed: plan.removed,
      ...(images ? { images } : {}),
    },
  };
  try {
    return { report: await pool.run(job), files, skipped };
  } catch (error) {
    if (!(error instanceof GateBudgetError)) throw error;
    const unchecked = files.map((file) => ({
      path: file.path,
      reason: `could not be checked: ${error.message} (the files are too large or too complex)`,
    }));
    return {
      report: gate([], baseline.baseline, defaultKnowledgeBase(), { ...options, removed: [] }),
      files,
      skipped: [...skipped, ...unchecked],
    };
  }
}
