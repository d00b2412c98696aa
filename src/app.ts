/** Probot entry: wires GitHub events to the handlers in src/github. No decision is made here. */
import type { ApplicationFunctionOptions, Context, Probot } from 'probot';
import { pino } from 'pino';
import { webhooksHandled } from './util/metrics.js';
import { createWebHandler } from './web/handler.js';
import { onComment, onRequestedAction } from './github/comments.js';
import { createDeps, type AppDeps } from './github/deps.js';
import { DurableFanout } from './github/durable.js';
import { onInstallationChange, onPush } from './github/org.js';
import { RedisPathIndex } from './github/path-index.js';
import { MemoryCache, TieredCache } from './images/cache.js';
import { RedisCache } from './images/redis-cache.js';
import { checkPull, type CheckOutcome } from './github/pull-check.js';
import { GatePool, snippetRunner } from './sandbox/gate-pool.js';
import { runJob } from './github/runners.js';
import { MemoryRedeliveryState, scheduleRedelivery, type AppClient } from './github/redeliver.js';
import { RedisRedeliveryState } from './github/redeliver-redis.js';
import { sweepEveryInstallation } from './github/sweep.js';
import { mergeGroupTarget, queueTarget, retargetedPull, targetFromPull, targetsOfCheck } from './github/targets.js';
import type { GitHub, PullTarget } from './github/types.js';
import type { Trigger } from './github/check.js';

/** The Probot app function, and how to finish its background work when the server drains. */
export type GatekeeperApp = ((probot: Probot, options?: Partial<ApplicationFunctionOptions>) => void) & {
  readonly idle: () => Promise<void>;
  /** With Redis: stores a verified delivery for the workers (the server answers 202 once it resolves). */
  readonly store?: (delivery: {
    readonly id: string;
    readonly name: string;
    readonly payload: Record<string, unknown>;
  }) => Promise<void>;
};

export function cudaGatekeeper(deps: AppDeps): GatekeeperApp {
  let stopRedelivery: (() => void) | undefined;
  const app = function app(probot: Probot, options?: Partial<ApplicationFunctionOptions>): void {
    // Fan-out jobs run in this process: the in-process queue's, or (with REDIS_URL) the shared durable queue's, a
    // stored delivery of which is handed to Probot's own handlers; a durable check that GitHub fails is retried.
    const durable = deps.fanout instanceof DurableFanout;
    const receive = (delivery: { readonly id: string; readonly name: string; readonly payload: unknown }) =>
      probot.receive(delivery as never);
    deps.fanout.start(probot, (github, job) => runJob(github, job, deps, probot.log, { durable, receive }), probot.log);

    /**
     * A delivery is handled once: a redelivery with the same id is dropped while the first is running, and after
     * it succeeded. A failed one is forgotten, so a manual redelivery runs it again.
     */
    const once =
      <C extends { id: string; name: string }>(
        handler: (
          context: C,
        ) => Promise<readonly (CheckOutcome | undefined | void)[] | CheckOutcome | undefined | void>,
      ) =>
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
    const check = (context: Context, targets: readonly PullTarget[], trigger: Trigger) =>
      Promise.all(
        targets.map((target) =>
          checkPull(context.octokit as GitHub, deps, context.log, { target, trigger, deliveryId: context.id }),
        ),
      );

    probot.on(
      ['pull_request.opened', 'pull_request.synchronize', 'pull_request.reopened', 'pull_request.ready_for_review'],
      once((context) => check(context, [targetFromPull(context.payload, context.payload.pull_request)], 'event')),
    );

    // A new base branch (targets.ts, retargetedPull); a title or body edit costs nothing.
    probot.on(
      'pull_request.edited',
      once(async (context) => {
        const target = retargetedPull(context.payload);
        return target ? check(context, [target], 'event') : [];
      }),
    );

    // A merge queue waits for the required checks on its own commit ("Managing a merge queue"): that commit is
    // checked against the base it was built on, and the run posted on it.
    probot.on(
      'merge_group.checks_requested',
      once(async (context) => {
        const target = mergeGroupTarget(context.payload);
        return target ? check(context, [target], 'event') : [];
      }),
    );

    // Every push also sends pull_request.synchronize, which names the pull request even for forks (whose suites list
    // none): a suite with no pull request listed is left to it. The two events for one commit give one run (check.ts).
    // A merge queue's branch lists none either, and no pull request event follows: it is checked as the queue's commit.
    probot.on(
      'check_suite.requested',
      once(async (context) => {
        const suite = context.payload.check_suite;
        if (suite.pull_requests.length === 0) {
          const queued = queueTarget(context.payload, { headSha: suite.head_sha, headRef: suite.head_branch ?? '' });
          return queued ? check(context, [queued], 'event') : [];
        }
        return check(
          context,
          await targetsOfCheck(context.octokit as GitHub, context.payload, suite.pull_requests, suite.head_sha, {
            suite,
          }),
          'event',
        );
      }),
    );
    probot.on(
      'check_suite.rerequested',
      once(async (context) =>
        check(
          context,
          await targetsOfCheck(
            context.octokit as GitHub,
            context.payload,
            context.payload.check_suite.pull_requests,
            context.payload.check_suite.head_sha,
            { suite: context.payload.check_suite, headBranch: context.payload.check_suite.head_branch },
          ),
          'request',
        ),
      ),
    );
    probot.on(
      'check_run.rerequested',
      once(async (context) =>
        check(
          context,
          await targetsOfCheck(
            context.octokit as GitHub,
            context.payload,
            context.payload.check_run.pull_requests,
            context.payload.check_run.head_sha,
            { run: context.payload.check_run, headBranch: context.payload.check_run.check_suite.head_branch },
          ),
          'request',
        ),
      ),
    );
    probot.on(
      'check_run.requested_action',
      once((context) => onRequestedAction(context, deps)),
    );
    probot.on(
      'issue_comment.created',
      once((context) => onComment(context, deps)),
    );
    probot.on('push', (context) => onPush(context.octokit as GitHub, context.payload, deps, context.log, context.id));
    // Adding the organisation's .github to an installation (or a new installation) changes its baseline at once.
    probot.on(['installation_repositories.added', 'installation_repositories.removed'], (context) =>
      onInstallationChange(context, deps),
    );
    // New permissions and unsuspension renew the cached token; a suspension forgets the organisation layer (org.ts).
    probot.on(
      [
        'installation.created',
        'installation.new_permissions_accepted',
        'installation.unsuspend',
        'installation.suspend',
      ],
      (context) => onInstallationChange(context, deps),
    );

    // The drift sweep over every installation's default branches (SWEEP_INTERVAL_HOURS; 0 turns it off).
    if (deps.sweepIntervalMs) sweepEveryInstallation(probot, deps, deps.sweepIntervalMs);
    // Failed deliveries (refused while busy or draining, lost in a restart) asked for again (redeliver.ts).
    if (deps.redelivery)
      stopRedelivery = scheduleRedelivery(async () => (await probot.auth()) as unknown as AppClient, {
        ...deps.redelivery,
        log: probot.log,
      });

    // The self-service page, its JSON API, /healthz and /metrics, on the App's own server (when there is
    // one: Probot throws "No server instance" for apps loaded without a server, as in tests).
    try {
      options?.addHandler?.(createWebHandler(deps.snippetPool ? snippetRunner(deps.snippetPool) : undefined));
    } catch {
      probot.log.debug('no HTTP server: the self-service page is not mounted');
    }
  };
  // Draining: the in-process queue finishes its jobs; a durable worker stops taking jobs and finishes the ones it
  // holds (what it has not taken stays in Redis for the other replicas).
  const idle = async (): Promise<void> => {
    stopRedelivery?.();
    deps.redelivery?.close?.();
    const fanout = deps.fanout;
    if (fanout instanceof DurableFanout) await fanout.close();
    else await fanout.idle();
    await deps.gatePool.close();
    await deps.snippetPool?.close();
    if (deps.paths instanceof RedisPathIndex) deps.paths.close();
    await deps.images?.close?.();
  };
  const fanout = deps.fanout;
  return Object.assign(app, {
    idle,
    ...(fanout instanceof DurableFanout
      ? { store: (delivery: Parameters<DurableFanout['store']>[0]) => fanout.store(delivery) }
      : {}),
  });
}

/** Where Redis's state goes (the queue exists before Probot's logger): pino, one line per change of state. */
const bootLog = pino({ level: process.env.LOG_LEVEL ?? 'info', name: 'redis' });

/**
 * The app as Probot loads it (`probot run`, createNodeMiddleware): APP_ID names the app for check lookups;
 * REDIS_URL switches fan-out work to the durable queue (Probot itself then shares its rate-limit state there).
 */
function defaultDeps(): AppDeps {
  // Gates on worker threads, each within GATE_TIMEOUT_MS (default 30 s), GATE_THREADS at a time (default 2).
  const gatePool = new GatePool(Number(process.env.GATE_THREADS ?? 2), Number(process.env.GATE_TIMEOUT_MS ?? 30_000));
  const hours = Number(process.env.SWEEP_INTERVAL_HOURS ?? 24);
  return createDeps({
    appId: Number(process.env.APP_ID ?? 0),
    // Links in check runs point at GitHub's web pages (the GitHub Enterprise host when GHE_HOST is set).
    webUrl: process.env.GHE_HOST
      ? `${process.env.GHE_PROTOCOL ?? 'https'}://${process.env.GHE_HOST}`
      : 'https://github.com',
    // With REDIS_URL: the durable fan-out queue, and the path index shared by every replica (it outlives a restart).
    ...(process.env.REDIS_URL
      ? {
          fanout: new DurableFanout({ redisUrl: process.env.REDIS_URL, log: bootLog }),
          paths: new RedisPathIndex(process.env.REDIS_URL, bootLog),
        }
      : {}),
    gatePool,
    // The public snippet checks: one thread of their own, a small budget (SNIPPET_TIMEOUT_MS, 5 s) and queue
    // (SNIPPET_QUEUE, 4), and they start only while no pull request's gate is running.
    snippetPool: new GatePool(1, Number(process.env.SNIPPET_TIMEOUT_MS ?? 5000), {
      maxQueue: Number(process.env.SNIPPET_QUEUE ?? 4),
      maxWaitMs: 10_000,
      yieldTo: () => gatePool.busy,
    }),
    ...(Number.isFinite(hours) && hours > 0 ? { sweepIntervalMs: hours * 3600 * 1000 } : {}),
    ...imageLookups(process.env),
    ...redelivery(process.env),
  });
}

/**
 * Redelivery of failed webhook deliveries (README "Running the GitHub App"): every REDELIVER_INTERVAL_MINUTES
 * (default 10; 0 turns it off) and on start, back at most REDELIVER_WINDOW_HOURS (default 6; GitHub keeps three
 * days). With REDIS_URL one replica scans at a time.
 */
export function redelivery(env: NodeJS.ProcessEnv): Pick<AppDeps, 'redelivery'> {
  const minutes = Number(env.REDELIVER_INTERVAL_MINUTES ?? 10);
  if (!Number.isFinite(minutes) || minutes <= 0) return {};
  const hours = Number(env.REDELIVER_WINDOW_HOURS ?? 6);
  const windowHours = Number.isFinite(hours) && hours > 0 ? Math.min(hours, 72) : 6;
  const shared = env.REDIS_URL ? new RedisRedeliveryState(env.REDIS_URL) : undefined;
  return {
    redelivery: {
      intervalMs: minutes * 60_000,
      windowMs: windowHours * 3600_000,
      state: shared ?? new MemoryRedeliveryState(),
      ...(shared ? { close: () => shared.close() } : {}),
    },
  };
}

/**
 * Image lookups (README "Images"): on unless IMAGE_LOOKUP=off; IMAGE_LOOKUP_BUDGET_MS (default 8 s) per pull
 * request, inside its gate's budget; configs and tags cached in memory, and in Redis with REDIS_URL so every replica
 * shares what one read.
 */
export function imageLookups(env: NodeJS.ProcessEnv): Pick<AppDeps, 'images'> {
  if (env.IMAGE_LOOKUP === 'off') return {};
  const budget = Number(env.IMAGE_LOOKUP_BUDGET_MS ?? 8000);
  const shared = env.REDIS_URL ? new RedisCache(env.REDIS_URL) : undefined;
  return {
    images: {
      cache: shared ? new TieredCache(new MemoryCache(), shared) : new MemoryCache(),
      env,
      budgetMs: Number.isFinite(budget) && budget > 0 ? budget : 8000,
      ...(shared ? { close: () => shared.close() } : {}),
    },
  };
}

export default cudaGatekeeper(defaultDeps());
