/** The read → parse → gate pipeline for one pull request (I/O at the edges, the engine in the middle). */
import { includeCandidates } from '../analysis/links.js';
import { dirname, joinRepo } from '../analysis/paths.js';
import type { ParsedFile } from '../facts.js';
import type { Report } from '../finding.js';
import { gate } from '../gate.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { classifyPath, parseFile } from '../parsers/index.js';
import { resolveBaseline, type OrgConfigCache, type ResolvedBaseline } from './config.js';
import { firstRead, MAX_BLOB_BYTES, readBlobs, type Blob, type FirstRead } from './read.js';
import { addedLines } from './suggestions.js';
import type { GitHub, PullTarget } from './types.js';

export const MAX_CHANGED_FILES = 3000;
/** Files read per GraphQL request; larger sets are read in several requests. */
const READ_CHUNK = 100;
/** How deep `-r` chains are followed beyond the changed files. */
const LINK_ROUNDS = 3;
const SIBLINGS = ['requirements.txt', 'requirements-gpu.txt', 'requirements-cuda.txt', 'environment.yml', 'environment.yaml'];

export interface Analysis {
  readonly report: Report;
  readonly files: readonly ParsedFile[];
  readonly texts: ReadonlyMap<string, string>;
  readonly relevant: readonly string[];
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
  readonly baseline: ResolvedBaseline;
  readonly read: FirstRead;
  readonly added: ReadonlyMap<string, ReadonlySet<number>>;
}

export interface AnalyzeDeps {
  readonly appId: number;
  readonly orgCache: OrgConfigCache;
}

export async function analyzePull(github: GitHub, target: PullTarget, deps: AnalyzeDeps): Promise<Analysis> {
  const repo = { owner: target.owner, repo: target.repo };
  const changed = await github.paginate(github.rest.pulls.listFiles, { ...repo, pull_number: target.number, per_page: 100 });
  const relevantChanges = changed.slice(0, MAX_CHANGED_FILES).filter((file) => file.status !== 'removed' && classifyPath(file.filename) !== undefined);
  const relevant = relevantChanges.map((file) => file.filename);
  const added = new Map(relevantChanges.map((file) => [file.filename, addedLines(file.patch)]));

  const cachedOrg = deps.orgCache.get(target.installationId, target.owner);
  // Dockerfiles usually install a requirements or environment file next to them: read those speculatively
  // in the same request, so the common case needs no second read (missing files just come back empty).
  const speculative = [...new Set(relevant.filter((path) => classifyPath(path) === 'dockerfile').flatMap((path) => SIBLINGS.map((name) => joinRepo(dirname(path), name) ?? name)))].filter((path) => !relevant.includes(path));
  const chunks = chunk([...relevant, ...speculative].slice(0, Math.max(READ_CHUNK, relevant.length)), READ_CHUNK);
  const read = await firstRead(github, repo, { paths: chunks[0] ?? [], headSha: target.headSha, number: target.number, appId: deps.appId, withOrg: cachedOrg === undefined });
  if (read.orgConfig !== undefined) deps.orgCache.set(target.installationId, target.owner, read.orgConfig);
  const blobs = new Map(read.files);
  for (const rest of chunks.slice(1)) for (const [path, blob] of await readBlobs(github, repo, rest, target.headSha)) blobs.set(path, blob);

  const skipped: { path: string; reason: string }[] = [];
  const files: ParsedFile[] = [];
  const texts = new Map<string, string>();
  const accept = (path: string, blob: Blob | null): void => {
    const kind = classifyPath(path) ?? (/\.ya?ml$/.test(path) ? 'conda' : 'requirements');
    if (!blob) return;
    if (blob.byteSize > MAX_BLOB_BYTES) return void skipped.push({ path, reason: `larger than 1 MiB (${blob.byteSize} bytes)` });
    if (blob.isBinary || blob.text === null) return void skipped.push({ path, reason: 'binary file' });
    texts.set(path, blob.text);
    files.push(parseFile(path, blob.text, kind));
  };
  const accepted = new Set<string>();
  const acceptOnce = (path: string, blob: Blob | null): void => {
    if (accepted.has(path)) return;
    accepted.add(path);
    accept(path, blob);
  };
  const speculativeSet = new Set(speculative);
  for (const [path, blob] of blobs) if (!speculativeSet.has(path)) acceptOnce(path, blob);

  // Files the changed files pull in (`-r`, a Dockerfile's COPY + pip install -r), read at the head commit;
  // speculative reads are used only when something really pulls them in.
  const tried = new Set(blobs.keys());
  for (let round = 0; round < LINK_ROUNDS; round++) {
    // Per include, candidates are in order of preference: stop at the first that exists.
    const open = files.flatMap((file) => file.includes.map((include) => includeCandidates(file, include))).filter((candidates) => !candidates.some((path) => accepted.has(path)));
    const known = [...new Set(open.flatMap((candidates) => candidates.find((path) => blobs.get(path)) ?? []))];
    const toRead = [...new Set(open.filter((candidates) => !candidates.some((path) => blobs.get(path))).flatMap((candidates) => candidates.filter((path) => !tried.has(path))))];
    for (const path of known) acceptOnce(path, blobs.get(path)!);
    if (toRead.length === 0) {
      if (known.length === 0) break;
      continue;
    }
    for (const path of toRead) tried.add(path);
    for (const part of chunk(toRead, READ_CHUNK)) for (const [path, blob] of await readBlobs(github, repo, part, target.headSha)) {
      blobs.set(path, blob);
      acceptOnce(path, blob);
    }
  }

  const baseline = resolveBaseline(target.owner, target.repo, read.repoConfig, read.orgConfig === undefined ? cachedOrg : read.orgConfig);
  const report = gate(files, baseline.baseline, defaultKnowledgeBase(), { ...(baseline.repoFile ? { policy: baseline.repoFile } : {}), policyProblems: baseline.problems, repository: `${target.owner}/${target.repo}`, today: new Date().toISOString().slice(0, 10) });
  return { report, files, texts, relevant, skipped, baseline, read, added };
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
