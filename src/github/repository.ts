/**
 * A repository's default branch and open pull requests, read for the organisation jobs (the baseline preview,
 * migrations, the drift sweep): one GraphQL query for the branch, the repository's baseline file and the open
 * pull requests with their changed files, one request for the tree, and the CUDA-relevant files through the
 * shared reader (files.ts).
 */
import type { ParsedFile } from '../parsers/facts.js';
import { candidatePath, classifyPath, yamlByContent } from '../parsers/index.js';
import { affectedFiles, listed, type Listed } from '../reader.js';
import { readCommit, readCommits, type CommitRead, type Skipped } from './files.js';
import { entryFromTree, indexKey, usablePaths, type PathIndex } from './path-index.js';
import { GitHubReadError, partialQuery, problemsAt } from './graphql.js';
import { CONFIG_PATH, type ConfigBlob } from '../baseline/layers.js';
import type { Blob, BlobAnswer } from './read.js';
import type { GitHub, RepoRef } from './types.js';

/** Open pull requests evaluated per repository (the most recently updated first). */
export const MAX_PULLS_PER_REPO = 20;

export interface OpenPull {
  readonly number: number;
  readonly url: string;
  readonly headSha: string;
  readonly headRef: string;
  /** `owner/name` of the head repository; "(deleted fork)" when GitHub no longer has it. */
  readonly headRepo: string;
  readonly baseSha: string;
  readonly changed: readonly string[];
  readonly removed: readonly string[];
}

export interface RepositoryInfo {
  readonly headSha: string;
  readonly repoConfig?: ConfigBlob;
  readonly pulls: readonly OpenPull[];
  /** More open pull requests than were asked for. */
  readonly morePulls: boolean;
}

/** Repositories per batched query: GraphQL aliases, one request for many repositories (see `repositoriesInfo`). */
export const REPOSITORIES_PER_QUERY = 25;

const repositoryFields = (files: boolean) => `defaultBranchRef { target { oid } }
    config: object(expression: ${JSON.stringify(`HEAD:${CONFIG_PATH}`)}) { ... on Blob { text byteSize isBinary } }
    pullRequests(states: OPEN, first: $pulls, orderBy: { field: UPDATED_AT, direction: DESC }) {
      nodes { number url headRefOid headRefName baseRefOid headRepository { nameWithOwner }${files ? ' files(first: 100) { nodes { path changeType } }' : ''} }
      pageInfo { hasNextPage }
    }`;

interface RepositoryAnswer {
  defaultBranchRef: { target: { oid: string } | null } | null;
  config: Blob | null;
  pullRequests: {
    nodes: ({
      number: number;
      url: string;
      headRefOid: string;
      headRefName: string;
      baseRefOid: string;
      headRepository: { nameWithOwner: string } | null;
      files?: { nodes: ({ path: string; changeType: string } | null)[] } | null;
    } | null)[];
    pageInfo: { hasNextPage: boolean };
  };
}

/**
 * Many repositories of one owner in one GraphQL request, each under its own alias (`r0`, `r1`, …): the default
 * branch's head, the repository's baseline file and its open pull requests (with their changed files when
 * `files`). GitHub answers a repository it will not show with `null` and a NOT_FOUND or FORBIDDEN error at that
 * alias while the others are answered (docs.github.com/en/graphql/guides/forming-calls-with-graphql, "Errors"), so
 * each repository gets its own answer: its information, `undefined` for an empty repository, or the error. The
 * node count stays far below GitHub's 500,000 limit (docs.github.com/en/graphql/overview/rate-limits-and-query-
 * limits-for-the-graphql-api): 25 repositories × 20 pull requests × 100 files = 50,000.
 */
export async function repositoriesInfo(
  github: GitHub,
  owner: string,
  names: readonly string[],
  options: { readonly pulls?: number; readonly files?: boolean } = {},
): Promise<Map<string, RepositoryInfo | undefined | GitHubReadError>> {
  const answers = new Map<string, RepositoryInfo | undefined | GitHubReadError>();
  const files = options.files ?? true;
  const pulls = Math.max(1, Math.min(options.pulls ?? MAX_PULLS_PER_REPO, 100));
  for (let from = 0; from < names.length; from += REPOSITORIES_PER_QUERY) {
    const batch = names.slice(from, from + REPOSITORIES_PER_QUERY);
    const query = `query CudaGatekeeperRepositories($owner: String!, $pulls: Int!${batch.map((_, i) => `, $n${i}: String!`).join('')}) {
${batch.map((_, i) => `  r${i}: repository(owner: $owner, name: $n${i}) {\n    ${repositoryFields(files)}\n  }`).join('\n')}
}`;
    const variables: Record<string, unknown> = { owner, pulls };
    batch.forEach((name, i) => (variables[`n${i}`] = name));
    const { data, problems } = await partialQuery<Record<string, RepositoryAnswer | null>>(github, query, variables);
    batch.forEach((name, i) => {
      const answer = data[`r${i}`];
      answers.set(
        name,
        answer
          ? infoOf(answer)
          : new GitHubReadError(`GitHub would not show ${owner}/${name}`, problemsAt(problems, `r${i}`)),
      );
    });
  }
  return answers;
}

/** One repository's information (one request); throws when GitHub will not show it. */
export async function repositoryInfo(
  github: GitHub,
  repo: RepoRef,
  pulls = MAX_PULLS_PER_REPO,
): Promise<RepositoryInfo | undefined> {
  const answer = (await repositoriesInfo(github, repo.owner, [repo.repo], { pulls })).get(repo.repo);
  if (answer instanceof Error) throw answer;
  return answer;
}

function infoOf(repository: RepositoryAnswer): RepositoryInfo | undefined {
  const headSha = repository.defaultBranchRef?.target?.oid;
  if (!headSha) return undefined; // an empty repository
  const config = repository.config?.text;
  return {
    headSha,
    ...(config != null ? { repoConfig: { text: config, commit: headSha } } : {}),
    morePulls: repository.pullRequests.pageInfo.hasNextPage,
    pulls: repository.pullRequests.nodes.flatMap((pull) => {
      if (!pull) return [];
      const files = (pull.files?.nodes ?? []).filter((file) => file !== null && candidatePath(file.path)) as {
        path: string;
        changeType: string;
      }[];
      return [
        {
          number: pull.number,
          url: pull.url,
          headSha: pull.headRefOid,
          headRef: pull.headRefName,
          headRepo: pull.headRepository?.nameWithOwner ?? '(deleted fork)',
          baseSha: pull.baseRefOid,
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
  /** Whether a path is known to be no file of the commit (CommitRead.noFile). */
  readonly noFile?: (path: string) => boolean;
}

/**
 * A commit's CUDA-relevant paths (those its names say, and YAML files whose content decides: `byContent`), and its
 * whole tree's file paths when it was read.
 */
interface BranchPaths {
  readonly paths: readonly Listed[];
  readonly byContent: ReadonlySet<string>;
  readonly tree?: ReadonlySet<string>;
  readonly truncated: boolean;
}

/** Candidate paths as listed files: named ones with their kind, YAML ones without (their content decides). */
function candidates(paths: readonly string[]): Pick<BranchPaths, 'paths' | 'byContent'> {
  const byContent = new Set(paths.filter((path) => classifyPath(path) === undefined && yamlByContent(path)));
  return { paths: [...listed(paths), ...[...byContent].map((path) => ({ path }))], byContent };
}

/**
 * A default branch commit's CUDA-relevant paths: from the path index when it holds them for this very commit
 * (no request), else from the commit's tree (one request), which then goes into the index unless GitHub cut it
 * short.
 */
async function branchPaths(github: GitHub, repo: RepoRef, sha: string, index?: PathIndex): Promise<BranchPaths> {
  const key = indexKey(repo.owner, repo.repo);
  const indexed = index ? usablePaths(await index.get(key), sha) : undefined;
  if (indexed) return { ...candidates(indexed), truncated: false };
  const tree = await github.rest.git.getTree({ ...repo, tree_sha: sha, recursive: 'true' });
  const all = tree.data.tree.filter((entry) => entry.type === 'blob' && entry.path).map((entry) => entry.path!);
  const found = candidates(all.filter(candidatePath));
  if (tree.data.truncated) return { ...found, truncated: true };
  if (index)
    await index.put(
      key,
      entryFromTree(
        sha,
        found.paths.map((file) => file.path),
      ),
    );
  // The whole tree says which paths are files: an include to a path outside it needs no read to find out.
  return { ...found, tree: new Set(all), truncated: false };
}

/** Every CUDA-relevant file of a default branch commit, from the index or its tree, and the shared reader. */
export async function readBranch(github: GitHub, repo: RepoRef, sha: string, index?: PathIndex): Promise<BranchFiles> {
  const where = await branchPaths(github, repo, sha, index);
  const read = await readCommit(github, repo, sha, where.paths, { tree: where.tree, byContent: where.byContent });
  return { ...fromRead(read), blobs: read.blobs, paths: where.paths, truncated: where.truncated };
}

/**
 * The default branches of many repositories of one owner, their files read together (readCommits: a request
 * per READ_CHUNK files across repositories). Each answer is that branch, or the error that stopped its read.
 */
export async function readBranches(
  github: GitHub,
  owner: string,
  branches: readonly { readonly repo: string; readonly sha: string }[],
  index?: PathIndex,
): Promise<(BranchFiles | Error)[]> {
  const wheres: (BranchPaths | Error)[] = [];
  for (const branch of branches)
    wheres.push(
      await branchPaths(github, { owner, repo: branch.repo }, branch.sha, index).catch((error: Error) => error),
    );
  const listed = branches.flatMap((branch, i) => {
    const where = wheres[i]!;
    return where instanceof Error ? [] : [{ i, branch, where }];
  });
  const reads = await readCommits(
    github,
    owner,
    listed.map(({ branch, where }) => ({
      repo: branch.repo,
      revision: branch.sha,
      listed: where.paths,
      byContent: where.byContent,
      ...(where.tree ? { tree: where.tree } : {}),
    })),
  );
  const readOf = new Map(listed.map(({ i }, j) => [i, reads[j]!]));
  return wheres.map((where, i) => {
    if (where instanceof Error) return where;
    const read = readOf.get(i)!;
    return read instanceof Error
      ? read
      : { ...fromRead(read), blobs: read.blobs, paths: where.paths, truncated: where.truncated };
  });
}

/**
 * The files open pull requests would be checked with: each one's changed files and every file joined to them,
 * read at its head, with its default branch's blobs reused for the files it does not change. Pull requests of
 * many repositories of one owner are read together (readCommits).
 */
export async function readPullsAgainst(
  github: GitHub,
  owner: string,
  pulls: readonly { readonly repo: string; readonly pull: OpenPull; readonly branch: BranchFiles }[],
): Promise<(Pick<BranchFiles, 'files' | 'texts' | 'skipped' | 'noFile'> | Error)[]> {
  const jobs = pulls.map(({ repo, pull, branch }) => {
    const changed = new Set(pull.changed);
    const known = new Map([...branch.blobs].filter(([path]) => !changed.has(path) && !pull.removed.includes(path)));
    const inputs = [
      ...candidates(pull.changed).paths,
      ...branch.paths.filter((file) => !changed.has(file.path) && !pull.removed.includes(file.path)),
    ];
    const byContent = new Set(inputs.filter((file) => file.kind === undefined).map((file) => file.path));
    return { repo, revision: pull.headSha, listed: inputs, known, byContent };
  });
  const reads = await readCommits(github, owner, jobs);
  return pulls.map(({ pull }, i) => {
    const read = reads[i]!;
    if (read instanceof Error) return read;
    const changed = new Set(pull.changed);
    const all = fromRead(read);
    const files = affectedFiles(all.files, changed, new Set(pull.removed));
    const kept = new Set(files.map((file) => file.path));
    return {
      files,
      texts: new Map([...all.texts].filter(([path]) => kept.has(path))),
      skipped: all.skipped.filter((entry) => changed.has(entry.path)),
      ...(all.noFile ? { noFile: all.noFile } : {}),
    };
  });
}

function fromRead(read: CommitRead): Pick<BranchFiles, 'files' | 'texts' | 'skipped' | 'noFile'> {
  return {
    files: read.files.map((file) => file.parsed),
    texts: new Map(read.files.map((file) => [file.source.path, file.source.text])),
    skipped: read.skipped,
    ...(read.noFile ? { noFile: read.noFile } : {}),
  };
}
