/**
 * A repository's default branch and open pull requests, read for the organisation jobs (the baseline preview,
 * migrations, the drift sweep): one GraphQL query for the branch, the repository's baseline file and the open
 * pull requests with their changed files, one request for the tree, and the CUDA-relevant files through the
 * shared reader (files.ts).
 */
import type { ParsedFile } from '../parsers/facts.js';
import { classifyPath } from '../parsers/index.js';
import { affectedFiles, listed, type Listed } from '../reader.js';
import { readCommit, type CommitRead, type Skipped } from './files.js';
import { GitHubReadError, partialQuery, problemsAt } from './graphql.js';
import { CONFIG_PATH, type Blob, type BlobAnswer, type ConfigBlob } from './read.js';
import type { GitHub, RepoRef } from './types.js';

/** Open pull requests evaluated per repository (the most recently updated first). */
export const MAX_PULLS_PER_REPO = 20;

export interface OpenPull {
  readonly number: number;
  readonly url: string;
  readonly headSha: string;
  readonly changed: readonly string[];
  readonly removed: readonly string[];
}

export interface RepositoryInfo {
  readonly headSha: string;
  readonly repoConfig?: ConfigBlob;
  readonly pulls: readonly OpenPull[];
}

const INFO_QUERY = `query CudaGatekeeperRepository($owner: String!, $name: String!, $pulls: Int!) {
  repository(owner: $owner, name: $name) {
    defaultBranchRef { target { oid } }
    config: object(expression: ${JSON.stringify(`HEAD:${CONFIG_PATH}`)}) { ... on Blob { text byteSize isBinary } }
    pullRequests(states: OPEN, first: $pulls, orderBy: { field: UPDATED_AT, direction: DESC }) {
      nodes { number url headRefOid files(first: 100) { nodes { path changeType } } }
    }
  }
}`;

interface InfoAnswer {
  repository: {
    defaultBranchRef: { target: { oid: string } | null } | null;
    config: Blob | null;
    pullRequests: {
      nodes: ({ number: number; url: string; headRefOid: string; files: { nodes: ({ path: string; changeType: string } | null)[] } | null } | null)[];
    };
  } | null;
}

/** The default branch's head, the repository's baseline file and its open pull requests (one request). */
export async function repositoryInfo(github: GitHub, repo: RepoRef, pulls = MAX_PULLS_PER_REPO): Promise<RepositoryInfo | undefined> {
  const { data, problems } = await partialQuery<InfoAnswer>(github, INFO_QUERY, {
    owner: repo.owner,
    name: repo.repo,
    pulls: Math.max(1, Math.min(pulls, 100)),
  });
  if (!data.repository) throw new GitHubReadError(`GitHub would not show ${repo.owner}/${repo.repo}`, problemsAt(problems, 'repository'));
  const headSha = data.repository.defaultBranchRef?.target?.oid;
  if (!headSha) return undefined; // an empty repository
  const config = data.repository.config?.text;
  return {
    headSha,
    ...(config != null ? { repoConfig: { text: config, commit: headSha } } : {}),
    pulls: data.repository.pullRequests.nodes.flatMap((pull) => {
      if (!pull) return [];
      const files = (pull.files?.nodes ?? []).filter((file) => file !== null && classifyPath(file.path) !== undefined) as {
        path: string;
        changeType: string;
      }[];
      return [
        {
          number: pull.number,
          url: pull.url,
          headSha: pull.headRefOid,
          changed: files.filter((file) => file.changeType !== 'DELETED').map((file) => file.path),
          removed: files.filter((file) => file.changeType === 'DELETED').map((file) => file.path),
        },
      ];
    }),
  };
}

export interface BranchFiles {
  readonly files: readonly ParsedFile[];
  readonly texts: ReadonlyMap<string, string>;
  readonly skipped: readonly Skipped[];
  readonly blobs: ReadonlyMap<string, BlobAnswer>;
  /** The listed CUDA-relevant paths of the commit (from its tree). */
  readonly paths: readonly Listed[];
  /** Set when GitHub cut the tree listing short: some files were not seen. */
  readonly truncated: boolean;
}

/** Every CUDA-relevant file of a commit, from its tree (one request) and the shared reader. */
export async function readBranch(github: GitHub, repo: RepoRef, sha: string): Promise<BranchFiles> {
  const tree = await github.rest.git.getTree({ ...repo, tree_sha: sha, recursive: 'true' });
  const paths = listed(tree.data.tree.filter((entry) => entry.type === 'blob' && entry.path).map((entry) => entry.path!));
  const read = await readCommit(github, repo, sha, paths);
  return { ...fromRead(read), blobs: read.blobs, paths, truncated: tree.data.truncated };
}

/**
 * The files an open pull request would be checked with: its changed files and every file joined to them, read at
 * its head. The default branch's blobs are reused for the files the pull request does not change.
 */
export async function readPullAgainst(
  github: GitHub,
  repo: RepoRef,
  pull: OpenPull,
  branch: BranchFiles,
): Promise<Pick<BranchFiles, 'files' | 'texts' | 'skipped'>> {
  const changed = new Set(pull.changed);
  const known = new Map([...branch.blobs].filter(([path]) => !changed.has(path) && !pull.removed.includes(path)));
  const inputs = [...listed(pull.changed), ...branch.paths.filter((file) => !changed.has(file.path) && !pull.removed.includes(file.path))];
  const read = await readCommit(github, repo, pull.headSha, inputs, known);
  const all = fromRead(read);
  const files = affectedFiles(all.files, changed, new Set(pull.removed));
  const kept = new Set(files.map((file) => file.path));
  return { files, texts: new Map([...all.texts].filter(([path]) => kept.has(path))), skipped: all.skipped.filter((entry) => changed.has(entry.path)) };
}

function fromRead(read: CommitRead): Pick<BranchFiles, 'files' | 'texts' | 'skipped'> {
  return {
    files: read.files.map((file) => file.parsed),
    texts: new Map(read.files.map((file) => [file.source.path, file.source.text])),
    skipped: read.skipped,
  };
}
