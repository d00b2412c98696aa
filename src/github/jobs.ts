/**
 * Fan-out work as plain data: previews, organisation re-checks, pull-request re-checks, migrations and sweeps.
 * Each job's key (`jobKey`: installation, repository, commit, baseline) is derived from its data, so duplicates
 * collapse. Producers see only the small `Fanout` interface; the runners live in runners.ts, which app.ts hands to
 * the queue when Probot loads the App.
 */
import type { Probot } from 'probot';
import type { Trigger } from './check.js';
import type { GitHub, Logger, PullTarget } from './types.js';

export type FanoutJob =
  | {
      readonly kind: 'check-pull';
      readonly installationId: number;
      readonly target: PullTarget;
      readonly deliveryId: string;
      readonly trigger: Trigger;
      /**
       * Set on a check that waited for GitHub's rate limit: when it was asked for (ISO time), so the run can say so.
       */
      readonly deferredSince?: string;
      /** Retries already made after GitHub failed this check. */
      readonly attempt?: number;
      /** Set on the re-check of an open pull request after a new organisation baseline: that baseline's commit. */
      readonly baselineCommit?: string;
    }
  | {
      readonly kind: 'preview';
      readonly installationId: number;
      readonly target: PullTarget;
      readonly deliveryId: string;
      readonly trigger: Trigger;
    }
  | {
      readonly kind: 'recheck-org';
      readonly installationId: number;
      readonly owner: string;
      readonly deliveryId: string;
      /** The pushed commit that landed the new baseline (unset: the installation changed; one job per delivery). */
      readonly baselineCommit?: string;
    }
  | {
      readonly kind: 'migrate';
      readonly installationId: number;
      readonly owner: string;
      readonly repo: string;
      readonly defaultBranch: string;
      readonly deliveryId: string;
      /** The organisation baseline commit that asks for the migration. */
      readonly baselineCommit: string;
    }
  /** The drift sweep of one installation, once per sweep period (`Date.now() / interval`, rounded down). */
  | { readonly kind: 'sweep'; readonly installationId: number; readonly owner: string; readonly period: number }
  /**
   * A webhook delivery stored before it was answered 202 (with Redis): any replica's worker hands it to Probot, so
   * a restart or a crash after the answer loses nothing (GitHub does not redeliver what it got a 202 for).
   */
  | {
      readonly kind: 'delivery';
      readonly installationId: number;
      readonly id: string;
      readonly name: string;
      readonly payload: unknown;
    };

/** Where fan-out work goes: the in-process queue, or the durable queue on Redis (REDIS_URL). */
export interface AddOptions {
  /** Run the job no sooner than this (GitHub asked us to wait); the key stays taken meanwhile. */
  readonly delayMs?: number;
}

export interface Fanout {
  /** Queue a job; false when a job with the same key (`jobKey`) is already waiting, delayed or running. */
  add(job: FanoutJob, github: GitHub, options?: AddOptions): Promise<boolean>;
  /** Start running jobs (once, when Probot loads the App): each with `run`, failures logged to `log`. */
  start(probot: Probot, run: JobRunner, log: Logger): void;
  /** Resolves when no job is waiting or running (tests and shutdown). */
  idle(): Promise<void>;
}

/** Runs one job with an installation's Octokit. */
export type JobRunner = (github: GitHub, job: FanoutJob) => Promise<void>;

/** A pull request's head commit, the key of its check run, its lock and its fan-out jobs: `owner/repo@sha`. */
export function runKey(target: Pick<PullTarget, 'owner' | 'repo' | 'headSha'>): string {
  return `${target.owner}/${target.repo}@${target.headSha}`.toLowerCase();
}

/** What makes two jobs the same work: a second job with the key of one still waiting or running is not queued. */
export function jobKey(job: FanoutJob): string {
  switch (job.kind) {
    case 'check-pull':
      // Under a new baseline, once per head commit and baseline; a retry (GitHub failed or asked to wait), once per
      // head commit.
      return job.baselineCommit
        ? `recheck:${job.installationId}:${job.target.owner}/${job.target.repo}@${job.target.headSha}:${job.baselineCommit}`
        : `retry:${runKey(job.target)}:${job.trigger}`;
    case 'preview':
      return `preview:${job.installationId}:${runKey(job.target)}:${job.deliveryId}`;
    case 'recheck-org':
      return `recheck-org:${job.installationId}:${job.owner}@${job.baselineCommit ?? job.deliveryId}`;
    case 'migrate':
      return `migrate:${job.installationId}:${job.owner}/${job.repo}:${job.baselineCommit}`;
    case 'sweep':
      return `sweep:${job.installationId}:${job.period}`;
    case 'delivery':
      return `delivery:${job.id}`;
  }
}
