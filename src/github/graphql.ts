/**
 * GraphQL answers as GitHub gives them: HTTP 200 with `data` *and* `errors` when part of a query cannot be
 * answered. A repository that does not exist, or that the installation cannot see, answers its field with null and
 * an error `{ type: "NOT_FOUND", path: [alias], message: "Could not resolve to a Repository with the name
 * 'owner/name'." }`; a field hidden by SAML SSO or an IP allow list answers `type: "FORBIDDEN"` while the rest of
 * `data` is filled (docs.github.com/en/graphql/guides/forming-calls-with-graphql, "Errors"). @octokit/graphql throws
 * a `GraphqlResponseError` whenever `errors` is non-empty and keeps the partial result on `error.data`, so every
 * query of the App goes through `partialQuery`, which hands back the data and the problems by path.
 */
import type { GitHub } from './types.js';

export interface GraphqlProblem {
  /** GitHub's error type: NOT_FOUND, FORBIDDEN, … (absent for errors GitHub gives without one). */
  readonly type?: string;
  /** The field the error is about, from the top of the query (aliases as written). */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

export interface PartialAnswer<T> {
  readonly data: T;
  readonly problems: readonly GraphqlProblem[];
}

interface ResponseError {
  readonly name: string;
  readonly message: string;
  readonly errors?: readonly { type?: string; path?: readonly (string | number)[]; message: string }[];
  readonly data?: unknown;
}

function isResponseError(error: unknown): error is ResponseError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as ResponseError).name === 'GraphqlResponseError' &&
    Array.isArray((error as ResponseError).errors)
  );
}

/**
 * Run a query and return what GitHub answered, errors included. Throws only when there is no data at all (a
 * query GitHub rejects as a whole, or a transport error), with every error message in the thrown error.
 */
export async function partialQuery<T>(
  github: GitHub,
  query: string,
  variables: Record<string, unknown>,
): Promise<PartialAnswer<T>> {
  try {
    return { data: await github.graphql<T>(query, variables), problems: [] };
  } catch (error) {
    if (!isResponseError(error) || error.data === null || error.data === undefined) throw error;
    const problems = (error.errors ?? []).map((problem) => ({
      ...(problem.type ? { type: problem.type } : {}),
      path: problem.path ?? [],
      message: problem.message,
    }));
    return { data: error.data as T, problems };
  }
}

/** The problems about a field at `path` or below it. */
export function problemsAt(
  problems: readonly GraphqlProblem[],
  ...path: readonly (string | number)[]
): GraphqlProblem[] {
  return problems.filter((problem) => path.every((part, i) => problem.path[i] === part));
}

/** Errors a caller has no answer for: thrown with every message, not only the first line. */
export class GitHubReadError extends Error {
  constructor(
    readonly what: string,
    readonly problems: readonly GraphqlProblem[],
  ) {
    super(
      `${what}: ${problems.map((problem) => `${problem.message}${problem.type ? ` (${problem.type})` : ''}`).join('; ')}`,
    );
    this.name = 'GitHubReadError';
  }
}
