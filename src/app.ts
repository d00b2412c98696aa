/** Probot entry: wires GitHub events to the handlers in src/github. No decision is made here. */
import type { ApplicationFunctionOptions, Probot } from 'probot';
import { createWebHandler } from './web/handler.js';
import { onComment, onRequestedAction } from './github/comments.js';
import type { AppDeps } from './github/deps.js';
import { depsFromEnv } from './github/env-deps.js';
import { checksOf, handledOnce } from './github/events.js';
import { DurableFanout } from './github/durable.js';
import { onInstallationChange, onPush } from './github/org-recheck.js';
import { RedisPathIndex } from './github/path-index.js';
import { snippetRunner } from './sandbox/gate-pool.js';
import { runJob } from './github/runners.js';
import { scheduleRedelivery, type AppClient } from './github/redeliver.js';
import { sweepEveryInstallation } from './github/sweep.js';
import type { GitHub } from './github/types.js';

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

    const once = handledOnce(deps);
    const checks = checksOf(deps);

    probot.on(
      ['pull_request.opened', 'pull_request.synchronize', 'pull_request.reopened', 'pull_request.ready_for_review'],
      once(checks.pullRequest),
    );
    probot.on('pull_request.edited', once(checks.edited));
    probot.on('merge_group.checks_requested', once(checks.mergeGroup));
    probot.on('check_suite.requested', once(checks.suiteRequested));
    probot.on('check_suite.rerequested', once(checks.suiteRerequested));
    probot.on('check_run.rerequested', once(checks.runRerequested));
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

export default cudaGatekeeper(depsFromEnv(process.env));
