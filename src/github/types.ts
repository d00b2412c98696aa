import type { ProbotOctokit } from 'probot';

/** The installation-authenticated Octokit that Probot hands to handlers. */
export type GitHub = InstanceType<typeof ProbotOctokit>;

export interface RepoRef {
  readonly owner: string;
  readonly repo: string;
}

/** A pull request to check, as the webhook payloads describe it. */
export interface PullTarget extends RepoRef {
  readonly number: number;
  readonly headSha: string;
  readonly headRef: string;
  /** owner/name of the repository the head branch lives in (differs for forks). */
  readonly headRepo: string;
  readonly installationId: number;
  /** The base branch's commit the pull request is against (its diff starts at their merge base). */
  readonly baseSha?: string;
  /** How many files the pull request changes at `headSha`, when the payload says (`pull_request.changed_files`). */
  readonly changedFiles?: number;
  /**
   * A merge queue's commit (`merge_group`, or the check suite of its `gh-readonly-queue/…` branch): no pull request
   * (`number` is 0); its changes are `baseSha` (or the base branch) `...headSha`.
   */
  readonly queue?: { readonly baseRef: string };
  /** The pull request's head has moved past `headSha` (a Re-run of an older commit): nothing is committed there. */
  readonly superseded?: boolean;
}

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** A file as `pulls.listFiles` gives it. */
export interface ChangedFile {
  readonly filename: string;
  readonly status: string;
  readonly previous_filename?: string;
  readonly patch?: string;
}
