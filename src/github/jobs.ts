/**
 * Fan-out work as plain data: previews, organisation re-checks, pull-request re-checks, migrations and sweeps.
 * Each job has a key (installation, repository, commit, baseline) so duplicates collapse. Producers see only
 * the small `Fanout` interface; the runners live in runners.ts, which app.ts wires to the queue.
 */
import type { Trigger } from './check.js';
import type { GitHub, PullTarget } from './types.js';

export type FanoutJob =
  | {
      readonly kind: 'check-pull';
      readonly installationId: number;
      readonly target: PullTarget;
      readonly deliveryId: string;
      readonly trigger: Trigger;
      /** Set on a check that waited for GitHub's rate limit: when it was asked for (ISO time), so the run can say so. */
      readonly deferredSince?: string;
      /** Retries already made after GitHub failed this check. */
      readonly attempt?: number;
    }
  | { readonly kind: 'preview'; readonly installationId: number; readonly target: PullTarget; readonly deliveryId: string; readonly trigger: Trigger }
  | { readonly kind: 'recheck-org'; readonly installationId: number; readonly owner: string; readonly deliveryId: string }
  | {
      readonly kind: 'migrate';
      readonly installationId: number;
      readonly owner: string;
      readonly repo: string;
      readonly defaultBranch: string;
      readonly deliveryId: string;
    }
  | { readonly kind: 'sweep'; readonly installationId: number; readonly owner: string }
  /**
   * A webhook delivery stored before it was answered 202 (with Redis): any replica's worker hands it to Probot, so
   * a restart or a crash after the answer loses nothing (GitHub does not redeliver what it got a 202 for).
   */
  | { readonly kind: 'delivery'; readonly installationId: number; readonly id: string; readonly name: string; readonly payload: unknown };

/** Where fan-out work goes: the in-process queue, or the durable queue on Redis (REDIS_URL). */
export interface AddOptions {
  /** Run the job no sooner than this (GitHub asked us to wait); the key stays taken meanwhile. */
  readonly delayMs?: number;
}

export interface Fanout {
  /** Queue a job; false when a job with the same key is already waiting, delayed or running. */
  add(key: string, job: FanoutJob, github: GitHub, options?: AddOptions): Promise<boolean>;
  /** Resolves when no job is waiting or running (tests and shutdown). */
  idle(): Promise<void>;
}

/** Runs one job with an installation's Octokit. */
export type JobRunner = (github: GitHub, job: FanoutJob) => Promise<void>;
