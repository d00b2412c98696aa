/**
 * Reading from GitHub in as few requests as possible: one GraphQL query returns the changed files at the head
 * commit, the repository's and the organisation's baseline files on their default branches, the check run
 * already on the head commit, and the bot's earlier review suggestions and comment.
 */
import { CHECK_NAME } from '../render/check-run.js';
import type { GitHub, RepoRef } from './types.js';

export const CONFIG_PATH = '.github/cuda-gatekeeper.yml';
export const ORG_CONFIG_REPO = '.github';
export const ORG_CONFIG_PATH = 'cuda-gatekeeper.yml';
export const MAX_BLOB_BYTES = 1024 * 1024;

export interface Blob {
  readonly text: string | null;
  readonly byteSize: number;
  readonly isBinary: boolean | null;
}

export interface ConfigBlob {
  readonly text: string;
  readonly commit: string;
}

export interface FirstRead {
  readonly files: ReadonlyMap<string, Blob | null>;
  readonly repoConfig?: ConfigBlob;
  readonly orgConfig?: ConfigBlob | null;
  readonly existingCheckRunId?: number;
  /** What the existing check run says, to skip updates that would change nothing. */
  readonly existingCheck?: { readonly conclusion: string | null; readonly title: string | null; readonly summary: string | null };
  readonly postedSuggestions: ReadonlySet<string>;
  readonly botCommentId?: number;
}

const BLOB = 'fragment blob on Blob { text byteSize isBinary }';

/** A GraphQL string literal (paths may contain quotes or backslashes). */
function literal(value: string): string {
  return JSON.stringify(value);
}

export function firstReadQuery(paths: readonly string[], headSha: string, withOrg: boolean, withPull: boolean): string {
  const files = paths.map((path, i) => `f${i}: object(expression: ${literal(`${headSha}:${path}`)}) { ...blob }`).join('\n    ');
  const pull = withPull
    ? `pullRequest(number: $number) {
      reviews(last: 50) { nodes { comments(first: 100) { nodes { body } } } }
      comments(last: 100) { nodes { databaseId body } }
    }`
    : '';
  const org = withOrg ? `org: repository(owner: $owner, name: ${literal(ORG_CONFIG_REPO)}) { config: object(expression: ${literal(`HEAD:${ORG_CONFIG_PATH}`)}) { ...blob } defaultBranchRef { target { oid } } }` : '';
  return `query CudaGatekeeperRead($owner: String!, $name: String!,${withPull ? ' $number: Int!,' : ''} $head: GitObjectID!, $appId: Int!) {
  repository(owner: $owner, name: $name) {
    ${files}
    config: object(expression: ${literal(`HEAD:${CONFIG_PATH}`)}) { ...blob }
    defaultBranchRef { target { oid } }
    head: object(oid: $head) { ... on Commit { checkSuites(first: 10, filterBy: { appId: $appId }) { nodes { checkRuns(first: 5, filterBy: { checkName: ${literal(CHECK_NAME)} }) { nodes { databaseId conclusion title summary } } } } } }
    ${pull}
  }
  ${org}
}
${BLOB}`;
}

interface FirstReadResponse {
  repository: Record<string, unknown> & {
    config: Blob | null;
    defaultBranchRef: { target: { oid: string } } | null;
    head: { checkSuites?: { nodes: { checkRuns: { nodes: { databaseId: number; conclusion: string | null; title: string | null; summary: string | null }[] } }[] } } | null;
    pullRequest?: { reviews: { nodes: { comments: { nodes: { body: string }[] } }[] }; comments: { nodes: { databaseId: number; body: string }[] } } | null;
  };
  org?: { config: Blob | null; defaultBranchRef: { target: { oid: string } } | null } | null;
}

export const COMMENT_MARKER = '<!-- cuda-gatekeeper:comment -->';

export async function firstRead(github: GitHub, repo: RepoRef, options: { paths: readonly string[]; headSha: string; number: number; appId: number; withOrg: boolean }): Promise<FirstRead> {
  const query = firstReadQuery(options.paths, options.headSha, options.withOrg, options.number > 0);
  const data = await github.graphql<FirstReadResponse>(query, { owner: repo.owner, name: repo.repo, ...(options.number > 0 ? { number: options.number } : {}), head: options.headSha, appId: options.appId });
  const files = new Map<string, Blob | null>();
  options.paths.forEach((path, i) => files.set(path, (data.repository[`f${i}`] as Blob | null) ?? null));
  const config = data.repository.config;
  const repoCommit = data.repository.defaultBranchRef?.target.oid ?? '';
  const existingRun = data.repository.head?.checkSuites?.nodes.flatMap((suite) => suite.checkRuns.nodes)[0];
  const existing = existingRun?.databaseId;
  const posted = new Set<string>();
  for (const review of data.repository.pullRequest?.reviews.nodes ?? []) {
    for (const comment of review.comments.nodes) {
      const key = /<!-- cuda-gatekeeper:suggestion:([0-9a-f]{16}) -->/.exec(comment.body)?.[1];
      if (key) posted.add(key);
    }
  }
  const bot = data.repository.pullRequest?.comments.nodes.find((comment) => comment.body.includes(COMMENT_MARKER));
  const org = data.org;
  return {
    files,
    ...(config?.text != null ? { repoConfig: { text: config.text, commit: repoCommit } } : {}),
    ...(options.withOrg ? { orgConfig: org?.config?.text != null ? { text: org.config.text, commit: org.defaultBranchRef?.target.oid ?? '' } : null } : {}),
    ...(existing ? { existingCheckRunId: existing, existingCheck: { conclusion: existingRun!.conclusion, title: existingRun!.title, summary: existingRun!.summary } } : {}),
    postedSuggestions: posted,
    ...(bot ? { botCommentId: bot.databaseId } : {}),
  };
}

export function blobsQuery(paths: readonly string[], revision: string): string {
  const files = paths.map((path, i) => `f${i}: object(expression: ${literal(`${revision}:${path}`)}) { ...blob }`).join('\n    ');
  return `query CudaGatekeeperBlobs($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) {
    ${files}
  }
}
${BLOB}`;
}

/** Read more files at a revision in one request (files that changed files pull in). */
export async function readBlobs(github: GitHub, repo: RepoRef, paths: readonly string[], revision: string): Promise<Map<string, Blob | null>> {
  const data = await github.graphql<{ repository: Record<string, Blob | null> }>(blobsQuery(paths, revision), { owner: repo.owner, name: repo.repo });
  return new Map(paths.map((path, i) => [path, data.repository[`f${i}`] ?? null]));
}

/** Read the organisation's baseline on its own (for the cache, after it was invalidated). */
export function orgConfigQuery(): string {
  return `query CudaGatekeeperOrgConfig($owner: String!) {
  org: repository(owner: $owner, name: ${literal(ORG_CONFIG_REPO)}) { config: object(expression: ${literal(`HEAD:${ORG_CONFIG_PATH}`)}) { ...blob } defaultBranchRef { target { oid } } }
}
${BLOB}`;
}
