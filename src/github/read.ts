/**
 * Reading from GitHub in as few requests as possible. One GraphQL query (the first read) returns the changed files
 * at the head commit, the directories around changed requirements files (to find the Dockerfiles that install
 * them), the repository's and the organisation's baseline files on their default branches, the newest check run
 * of ours on the head commit, and the review suggestions already posted. Later reads fetch more blobs in one
 * request each. Every answer is read by path, partial errors included (see graphql.ts): a missing organisation
 * config repository is "no organisation layer", not a failure.
 */
import {
  CONFIG_PATH,
  MISNAMED_CONFIG_PATH,
  MISNAMED_ORG_CONFIG_PATH,
  ORG_CONFIG_PATH,
  ORG_CONFIG_REPO,
  type ConfigBlob,
} from '../baseline/layers.js';
import { CHECK_NAME } from '../render/check-run.js';
import { GitHubReadError, partialQuery, problemsAt, type GraphqlProblem } from './graphql.js';
import { utf16Text } from '../util/utf16.js';
import type { GitHub, RepoRef } from './types.js';

/** Files read per GraphQL request; larger sets are read in several requests. */
export const READ_CHUNK = 100;

export interface Blob {
  readonly text: string | null;
  readonly byteSize: number;
  readonly isBinary: boolean | null;
  /** Whether `text` is only the start of the blob (GraphQL's Blob.isTruncated). */
  readonly isTruncated?: boolean;
  /** The blob's SHA, to read it whole through REST. */
  readonly oid?: string;
  /** Set when `text` was read whole through REST (readWholeBlob). */
  readonly whole?: boolean;
}

/** What a read of one path gave: the blob, null when no file is there, or why it could not be read. */
export type BlobAnswer = Blob | null | { readonly unreadable: string };

/**
 * The organisation layer: `none` when there is no `<owner>/.github` repository the installation can see, or no
 * baseline file in it (both mean "no organisation layer"); `unavailable` when GitHub refused to show it.
 */
export type OrgLayer =
  /** `missing`: no `<owner>/.github` the installation can see, or the repository without the baseline file. */
  | { readonly state: 'none'; readonly missing: 'repository' | 'file' }
  | { readonly state: 'found'; readonly config: ConfigBlob }
  | { readonly state: 'unavailable'; readonly reason: string };

/** Our newest check run on a commit, and what it says about itself (external_id, see check.ts). */
export interface ExistingRun {
  readonly id: number;
  readonly externalId: string | null;
}

export interface FirstRead {
  readonly blobs: ReadonlyMap<string, BlobAnswer>;
  /** Paths of the files in the directories listed (each directory and its subdirectories one level down). */
  readonly listedPaths: readonly string[];
  /** The directories whose every file is in `listedPaths`: a path in one of them that is not listed is no file. */
  readonly listedDirectories: ReadonlySet<string>;
  readonly repoConfig?: ConfigBlob;
  /**
   * The repository's baseline file as the head commit has it (its problems are annotated only where it is the same).
   */
  readonly headConfigText?: string;
  /** Absent when the organisation layer was not asked for (it was cached). */
  readonly org?: OrgLayer;
  readonly latestRun?: ExistingRun;
  readonly postedSuggestions: ReadonlySet<string>;
  /** The pull request's state: OPEN, CLOSED or MERGED. */
  readonly pullState?: string;
  /** Baseline files under a name that is not read (`.yaml` for `.yml`), on default branches. */
  readonly misnamed: readonly string[];
}

const BLOB = 'fragment blob on Blob { text byteSize isBinary isTruncated oid }';

/** A GraphQL string literal (paths may contain quotes or backslashes). */
function literal(value: string): string {
  return JSON.stringify(value);
}

/** `object(expression:)` for each path, as aliases f0, f1, … */
function blobFields(paths: readonly string[], revision: string): string {
  return paths
    .map((path, i) => `f${i}: object(expression: ${literal(`${revision}:${path}`)}) { ...blob }`)
    .join('\n    ');
}

/** The newest of our check runs on a commit: the last page of runs by our name in our app's suites. */
export const RUNS_FIELD = `checkSuites(first: 10, filterBy: { appId: $appId }) { nodes { checkRuns(last: 10, filterBy: { checkName: ${literal(CHECK_NAME)} }) { nodes { databaseId externalId } } } }`;

export function firstReadQuery(
  paths: readonly string[],
  directories: readonly string[],
  headSha: string,
  withOrg: boolean,
  withPull = true,
): string {
  const trees = directories
    .map(
      (dir, i) =>
        `t${i}: object(expression: ${literal(`${headSha}:${dir}`)}) { ... on Tree { entries { path type object { ... on Tree { entries { path type } } } } } }`,
    )
    .join('\n    ');
  const org = withOrg
    ? `org: repository(owner: $owner, name: ${literal(ORG_CONFIG_REPO)}) { config: object(expression: ${literal(`HEAD:${ORG_CONFIG_PATH}`)}) { ...blob } misnamed: object(expression: ${literal(`HEAD:${MISNAMED_ORG_CONFIG_PATH}`)}) { ... on Blob { byteSize } } defaultBranchRef { target { oid } } }`
    : '';
  // A merge queue's commit has no pull request (and GraphQL refuses a variable the query does not use).
  const pull = withPull
    ? 'pullRequest(number: $number) { state reviews(last: 100) { nodes { comments(first: 100) { nodes { body } } } } }'
    : '';
  return `query CudaGatekeeperRead($owner: String!, $name: String!${withPull ? ', $number: Int!' : ''}, $head: GitObjectID!, $appId: Int!) {
  repository(owner: $owner, name: $name) {
    ${blobFields(paths, headSha)}
    ${trees}
    config: object(expression: ${literal(`HEAD:${CONFIG_PATH}`)}) { ...blob }
    headConfig: object(expression: ${literal(`${headSha}:${CONFIG_PATH}`)}) { ...blob }
    misnamed: object(expression: ${literal(`HEAD:${MISNAMED_CONFIG_PATH}`)}) { ... on Blob { byteSize } }
    defaultBranchRef { target { oid } }
    head: object(oid: $head) { ... on Commit { ${RUNS_FIELD} } }
    ${pull}
  }
  ${org}
}
${BLOB}`;
}

interface TreeEntry {
  readonly path: string | null;
  readonly type: string;
  readonly object?: { readonly entries?: readonly TreeEntry[] } | null;
}

type RunsAnswer = {
  checkSuites?: {
    nodes: ({
      checkRuns: { nodes: ({ databaseId: number | null; externalId: string | null } | null)[] } | null;
    } | null)[];
  };
} | null;

interface FirstReadResponse {
  repository:
    | (Record<string, unknown> & {
        config: Blob | null;
        headConfig: Blob | null;
        misnamed?: { byteSize?: number } | null;
        defaultBranchRef: { target: { oid: string } | null } | null;
        head: RunsAnswer;
        pullRequest: {
          state: string;
          reviews: { nodes: ({ comments: { nodes: ({ body: string } | null)[] } } | null)[] };
        } | null;
      })
    | null;
  org?: {
    config: Blob | null;
    misnamed?: { byteSize?: number } | null;
    defaultBranchRef: { target: { oid: string } | null } | null;
  } | null;
}

const SUGGESTION_KEY = /<!-- cuda-gatekeeper:suggestion:([0-9a-f]{16}) -->/;

/** Why GitHub would not show a field, for the check's summary. */
function reasonOf(problems: readonly GraphqlProblem[]): string {
  return problems.map((problem) => `${problem.message}${problem.type ? ` (${problem.type})` : ''}`).join('; ');
}

/** The answer for one blob field, with the problems GitHub gave for it. */
function blobAnswer(value: unknown, problems: readonly GraphqlProblem[]): BlobAnswer {
  if (problems.length > 0 && (value === null || value === undefined))
    return { unreadable: `GitHub would not show it: ${reasonOf(problems)}` };
  return (value as Blob | null | undefined) ?? null;
}

/** Our newest run among the check runs GitHub listed (the highest id is the newest). */
export function newestRun(answer: RunsAnswer): ExistingRun | undefined {
  let newest: ExistingRun | undefined;
  for (const suite of answer?.checkSuites?.nodes ?? []) {
    for (const run of suite?.checkRuns?.nodes ?? []) {
      if (run?.databaseId && (!newest || run.databaseId > newest.id))
        newest = { id: run.databaseId, externalId: run.externalId };
    }
  }
  return newest;
}

/** The organisation layer from the `org` field of a query. */
export function orgLayer(answer: FirstReadResponse['org'], problems: readonly GraphqlProblem[]): OrgLayer {
  const forbidden = problems.filter((problem) => problem.type !== 'NOT_FOUND');
  if (forbidden.length > 0) return { state: 'unavailable', reason: reasonOf(forbidden) };
  const text = answer?.config?.text;
  if (!answer) return { state: 'none', missing: 'repository' };
  if (text === null || text === undefined) return { state: 'none', missing: 'file' };
  return { state: 'found', config: { text, commit: answer.defaultBranchRef?.target?.oid ?? '' } };
}

export interface FirstReadOptions {
  readonly paths: readonly string[];
  readonly directories: readonly string[];
  readonly headSha: string;
  /** The pull request (0: a merge queue's commit, which has none). */
  readonly number: number;
  readonly appId: number;
  readonly withOrg: boolean;
}

export async function firstRead(github: GitHub, repo: RepoRef, options: FirstReadOptions): Promise<FirstRead> {
  const withPull = options.number > 0;
  const query = firstReadQuery(options.paths, options.directories, options.headSha, options.withOrg, withPull);
  const { data, problems } = await partialQuery<FirstReadResponse>(github, query, {
    owner: repo.owner,
    name: repo.repo,
    ...(withPull ? { number: options.number } : {}),
    head: options.headSha,
    appId: options.appId,
  });
  const repository = data.repository;
  if (!repository)
    throw new GitHubReadError(`GitHub would not show ${repo.owner}/${repo.repo}`, problemsAt(problems, 'repository'));
  const blobs = new Map<string, BlobAnswer>();
  options.paths.forEach((path, i) =>
    blobs.set(path, blobAnswer(repository[`f${i}`], problemsAt(problems, 'repository', `f${i}`))),
  );
  const listedPaths: string[] = [];
  const listedDirectories = new Set<string>();
  const visit = (entries: readonly TreeEntry[] | undefined): void => {
    for (const entry of entries ?? []) {
      if (entry.type === 'blob' && entry.path) listedPaths.push(entry.path);
      else if (entry.type === 'tree') {
        if (entry.path && entry.object?.entries) listedDirectories.add(entry.path);
        visit(entry.object?.entries);
      }
    }
  };
  options.directories.forEach((dir, i) => {
    const tree = repository[`t${i}`] as { entries?: TreeEntry[] } | null;
    if (tree?.entries) listedDirectories.add(dir);
    visit(tree?.entries);
  });
  const config = repository.config;
  const repoCommit = repository.defaultBranchRef?.target?.oid ?? '';
  const posted = new Set<string>();
  for (const review of repository.pullRequest?.reviews.nodes ?? []) {
    for (const comment of review?.comments.nodes ?? []) {
      const key = comment ? SUGGESTION_KEY.exec(comment.body)?.[1] : undefined;
      if (key) posted.add(key);
    }
  }
  const latestRun = newestRun(repository.head);
  return {
    blobs,
    listedPaths,
    listedDirectories,
    ...(config?.text != null ? { repoConfig: { text: config.text, commit: repoCommit } } : {}),
    ...(repository.headConfig?.text != null ? { headConfigText: repository.headConfig.text } : {}),
    ...(options.withOrg ? { org: orgLayer(data.org, problemsAt(problems, 'org')) } : {}),
    ...(latestRun ? { latestRun } : {}),
    postedSuggestions: posted,
    ...(repository.pullRequest?.state ? { pullState: repository.pullRequest.state } : {}),
    misnamed: [
      ...(repository.misnamed && !repository.config ? [MISNAMED_CONFIG_PATH] : []),
      ...(data.org?.misnamed && !data.org.config
        ? [`${repo.owner}/${ORG_CONFIG_REPO}:${MISNAMED_ORG_CONFIG_PATH}`]
        : []),
    ],
  };
}

export function blobsQuery(paths: readonly string[], revision: string): string {
  return `query CudaGatekeeperBlobs($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
    ${blobFields(paths, revision)}
  }
}
${BLOB}`;
}

/** Read more files at a revision, one request per READ_CHUNK paths. */
export async function readBlobs(
  github: GitHub,
  repo: RepoRef,
  paths: readonly string[],
  revision: string,
): Promise<Map<string, BlobAnswer>> {
  const out = new Map<string, BlobAnswer>();
  for (let at = 0; at < paths.length; at += READ_CHUNK) {
    const part = paths.slice(at, at + READ_CHUNK);
    const { data, problems } = await partialQuery<{ repository: Record<string, Blob | null> | null }>(
      github,
      blobsQuery(part, revision),
      {
        owner: repo.owner,
        name: repo.repo,
      },
    );
    if (!data.repository)
      throw new GitHubReadError(`GitHub would not show ${repo.owner}/${repo.repo}`, problemsAt(problems, 'repository'));
    part.forEach((path, i) =>
      out.set(path, blobAnswer(data.repository![`f${i}`], problemsAt(problems, 'repository', `f${i}`))),
    );
  }
  return out;
}

/**
 * Files of several repositories of one owner in one request, each repository under its own alias (`r0`, `r1`, …)
 * with its paths at its revision. GitHub answers a repository it will not show with `null` and an error at that
 * alias while the others are answered (docs.github.com/en/graphql/guides/forming-calls-with-graphql, "Errors"):
 * that repository's answer is the error. The caller keeps a request to READ_CHUNK paths in all.
 */
export async function readBlobsAcross(
  github: GitHub,
  owner: string,
  wants: readonly { readonly repo: string; readonly revision: string; readonly paths: readonly string[] }[],
): Promise<(Map<string, BlobAnswer> | GitHubReadError)[]> {
  const query = `query CudaGatekeeperBlobsAcross($owner: String!${wants.map((_, i) => `, $n${i}: String!`).join('')}) {
${wants.map((want, i) => `  r${i}: repository(owner: $owner, name: $n${i}) {\n    ${blobFields(want.paths, want.revision)}\n  }`).join('\n')}
}
${BLOB}`;
  const variables: Record<string, unknown> = { owner };
  wants.forEach((want, i) => (variables[`n${i}`] = want.repo));
  const { data, problems } = await partialQuery<Record<string, Record<string, Blob | null> | null>>(
    github,
    query,
    variables,
  );
  return wants.map((want, i) => {
    const repository = data[`r${i}`];
    if (!repository)
      return new GitHubReadError(`GitHub would not show ${owner}/${want.repo}`, problemsAt(problems, `r${i}`));
    return new Map(
      want.paths.map((path, j) => [path, blobAnswer(repository[`f${j}`], problemsAt(problems, `r${i}`, `f${j}`))]),
    );
  });
}

/**
 * A blob read whole through REST ("Get a blob": base64 content, "blobs up to 100 megabytes in size",
 * docs.github.com/en/rest/git/blobs#get-a-blob): for a lock file larger than GraphQL is trusted to give in full.
 * A blob GitHub will not give (404, 403, 409, 422) is unreadable with the status; other failures throw (retried).
 */
export async function readWholeBlob(github: GitHub, repo: RepoRef, sha: string): Promise<BlobAnswer> {
  try {
    const { data } = await github.rest.git.getBlob({ owner: repo.owner, repo: repo.repo, file_sha: sha });
    const bytes = Buffer.from(data.content, data.encoding === 'base64' ? 'base64' : 'utf8');
    // Zero bytes: binary, unless a byte-order mark says UTF-16 text (a requirements file a Windows editor wrote).
    const text = bytes.includes(0) ? (utf16Text(bytes) ?? null) : bytes.toString('utf8');
    return { text, byteSize: bytes.length, isBinary: text === null, whole: true, oid: sha };
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 404 || status === 403 || status === 409 || status === 422)
      return { unreadable: `GitHub would not give the whole file (HTTP ${status})` };
    throw error;
  }
}

const ORG_QUERY = `query CudaGatekeeperOrgBaseline($owner: String!) {
  org: repository(owner: $owner, name: ${literal(ORG_CONFIG_REPO)}) { config: object(expression: ${literal(`HEAD:${ORG_CONFIG_PATH}`)}) { ...blob } defaultBranchRef { target { oid } } }
}
${BLOB}`;

/** The organisation's baseline on its own (fan-out jobs, `/cuda-check baseline` after the cache expired). */
export async function readOrgLayer(github: GitHub, owner: string): Promise<OrgLayer> {
  const { data, problems } = await partialQuery<Pick<FirstReadResponse, 'org'>>(github, ORG_QUERY, { owner });
  return orgLayer(data.org, problemsAt(problems, 'org'));
}

const BASELINES_QUERY = (withOrg: boolean) => `query CudaGatekeeperBaselines($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
    config: object(expression: ${literal(`HEAD:${CONFIG_PATH}`)}) { ...blob }
    defaultBranchRef { target { oid } }
  }
  ${withOrg ? `org: repository(owner: $owner, name: ${literal(ORG_CONFIG_REPO)}) { config: object(expression: ${literal(`HEAD:${ORG_CONFIG_PATH}`)}) { ...blob } defaultBranchRef { target { oid } } }` : ''}
}
${BLOB}`;

/** The repository's baseline file and (unless cached) the organisation layer, from default branches. */
export async function readBaselineFiles(
  github: GitHub,
  repo: RepoRef,
  withOrg: boolean,
): Promise<{ readonly repoConfig?: ConfigBlob; readonly org?: OrgLayer }> {
  type Answer = {
    repository: { config: Blob | null; defaultBranchRef: { target: { oid: string } | null } | null } | null;
    org?: FirstReadResponse['org'];
  };
  const { data, problems } = await partialQuery<Answer>(github, BASELINES_QUERY(withOrg), {
    owner: repo.owner,
    name: repo.repo,
  });
  if (!data.repository)
    throw new GitHubReadError(`GitHub would not show ${repo.owner}/${repo.repo}`, problemsAt(problems, 'repository'));
  const text = data.repository.config?.text;
  return {
    ...(text != null ? { repoConfig: { text, commit: data.repository.defaultBranchRef?.target?.oid ?? '' } } : {}),
    ...(withOrg ? { org: orgLayer(data.org, problemsAt(problems, 'org')) } : {}),
  };
}
