/**
 * What the App does with each pull-request event, as handlers src/app.ts wires to Probot: which pull requests (or
 * merge-queue commits) an event asks to check, and the rule that one delivery is handled once.
 */
import type { Context } from 'probot';
import { webhooksHandled } from '../util/metrics.js';
import type { Trigger } from './check.js';
import type { AppDeps } from './deps.js';
import { checkPull, type CheckOutcome } from './pull-check.js';
import { mergeGroupTarget, queueTarget, retargetedPull, targetFromPull, targetsOfCheck } from './targets.js';
import type { GitHub, PullTarget } from './types.js';

type Outcome = readonly (CheckOutcome | undefined | void)[] | CheckOutcome | undefined | void;

/**
 * A delivery is handled once: a redelivery with the same id is dropped while the first is running, and after it
 * succeeded. A failed one is forgotten, so a manual redelivery runs it again.
 */
export function handledOnce(deps: AppDeps) {
  return <C extends { id: string; name: string }>(handler: (context: C) => Promise<Outcome>) =>
    async (context: C): Promise<void> => {
      webhooksHandled.inc({ event: context.name });
      if (!deps.deliveries.begin(context.id)) return;
      let succeeded = false;
      try {
        const outcome = await handler(context);
        succeeded = !(Array.isArray(outcome) ? outcome : [outcome]).includes('failed');
      } finally {
        deps.deliveries.end(context.id, succeeded);
      }
    };
}

/** The handlers of the events that check pull requests, each giving the outcome of every check it ran. */
export function checksOf(deps: AppDeps) {
  const check = (context: Context, targets: readonly PullTarget[], trigger: Trigger) =>
    Promise.all(
      targets.map((target) =>
        checkPull(context.octokit as GitHub, deps, context.log, { target, trigger, deliveryId: context.id }),
      ),
    );
  return {
    pullRequest: (
      context: Context<
        'pull_request.opened' | 'pull_request.synchronize' | 'pull_request.reopened' | 'pull_request.ready_for_review'
      >,
    ) => check(context, [targetFromPull(context.payload, context.payload.pull_request)], 'event'),

    /** A new base branch (targets.ts, retargetedPull); a title or body edit costs nothing. */
    edited: async (context: Context<'pull_request.edited'>) => {
      const target = retargetedPull(context.payload);
      return target ? check(context, [target], 'event') : [];
    },

    /**
     * A merge queue waits for the required checks on its own commit ("Managing a merge queue"): that commit is
     * checked against the base it was built on, and the run posted on it.
     */
    mergeGroup: async (context: Context<'merge_group.checks_requested'>) => {
      const target = mergeGroupTarget(context.payload);
      return target ? check(context, [target], 'event') : [];
    },

    /**
     * Every push also sends pull_request.synchronize, which names the pull request even for forks (whose suites list
     * none): a suite with no pull request listed is left to it. The two events for one commit give one run
     * (check.ts). A merge queue's branch lists none either, and no pull request event follows: it is checked as the
     * queue's commit.
     */
    suiteRequested: async (context: Context<'check_suite.requested'>) => {
      const suite = context.payload.check_suite;
      if (suite.pull_requests.length === 0) {
        const queued = queueTarget(context.payload, { headSha: suite.head_sha, headRef: suite.head_branch ?? '' });
        return queued ? check(context, [queued], 'event') : [];
      }
      const targets = await targetsOfCheck(
        context.octokit as GitHub,
        context.payload,
        suite.pull_requests,
        suite.head_sha,
        { suite },
      );
      return check(context, targets, 'event');
    },

    suiteRerequested: async (context: Context<'check_suite.rerequested'>) => {
      const suite = context.payload.check_suite;
      const targets = await targetsOfCheck(
        context.octokit as GitHub,
        context.payload,
        suite.pull_requests,
        suite.head_sha,
        { suite, headBranch: suite.head_branch },
      );
      return check(context, targets, 'request');
    },

    runRerequested: async (context: Context<'check_run.rerequested'>) => {
      const run = context.payload.check_run;
      const targets = await targetsOfCheck(
        context.octokit as GitHub,
        context.payload,
        run.pull_requests,
        run.head_sha,
        {
          run,
          headBranch: run.check_suite.head_branch,
        },
      );
      return check(context, targets, 'request');
    },
  };
}
