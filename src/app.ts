/** Probot entry: wires GitHub events to handlers. Logic lives in src/github and the engine. */
import type { ApplicationFunctionOptions, Probot } from 'probot';
import { webhooksHandled } from './metrics.js';
import { webHandler } from './web/handler.js';
import { checkPull, createDeps, firstDelivery, onComment, onPush, onRequestedAction, targetFromPull, targetsFromCheckPayload, type AppDeps } from './github/handlers.js';
import { DurableFanout } from './github/durable.js';
import { enqueue, runJob } from './github/jobs.js';
import { isConfigRepo } from './github/org.js';
import { scheduleSweeps } from './github/sweep.js';
import { ORG_CONFIG_PATH } from './github/read.js';
import type { GitHub, PullTarget } from './github/types.js';

export function cudaGatekeeper(deps: AppDeps) {
  /** Exact redeliveries (same delivery id) are dropped: the first one already did the work. */
  const once = <C extends { id: string; name: string }>(handler: (context: C) => Promise<void> | void) => async (context: C): Promise<void> => {
    webhooksHandled.inc({ event: context.name });
    if (firstDelivery(deps, context.id)) await handler(context);
  };

  return function app(probot: Probot, options?: Partial<ApplicationFunctionOptions>): void {

    probot.on(['pull_request.opened', 'pull_request.synchronize', 'pull_request.reopened', 'pull_request.ready_for_review'], once(async (context) => {
      const target = targetFromPull(context, context.payload.pull_request);
      const github = context.octokit as GitHub;
      if (isConfigRepo(target.repo) && (await touchesOrgConfig(github, target))) {
        // A new organisation baseline: validate and preview its blast radius (queued; it reads many repositories).
        await enqueue(deps, `preview:${target.installationId}:${target.owner}/${target.repo}@${target.headSha}`, { kind: 'preview', installationId: target.installationId, target, deliveryId: context.id }, github, context.log);
        return;
      }
      await checkPull(github, target, deps, context.log, context.id);
    }));

    probot.on(['check_suite.requested', 'check_suite.rerequested'], once(async (context) => {
      const suite = context.payload.check_suite;
      for (const target of targetsFromCheckPayload(context, suite.pull_requests, suite.head_sha)) await checkPull(context.octokit as GitHub, target, deps, context.log, context.id);
    }));

    probot.on('check_run.rerequested', once(async (context) => {
      const run = context.payload.check_run;
      for (const target of targetsFromCheckPayload(context, run.pull_requests, run.head_sha)) await checkPull(context.octokit as GitHub, target, deps, context.log, context.id);
    }));

    probot.on('check_run.requested_action', once((context) => onRequestedAction(context, deps)));
    probot.on('issue_comment.created', once((context) => onComment(context, deps)));
    probot.on('push', (context) => onPush(context, deps));

    // With REDIS_URL, this replica also works on the shared, durable fan-out queue.
    deps.fanout?.startWorker(probot, (github, job) => runJob(github, job, deps, probot.log, { durable: true }), probot.log);

    // The drift sweep over every installation's default branches (SWEEP_INTERVAL_HOURS; 0 turns it off).
    if (deps.sweepIntervalMs) {
      scheduleSweeps(
        async () => {
          const appOctokit = await probot.auth();
          const installations = await appOctokit.paginate(appOctokit.rest.apps.listInstallations, { per_page: 100 });
          return installations.map((installation) => ({ id: installation.id, owner: installation.account && 'login' in installation.account ? installation.account.login : '' })).filter((installation) => installation.owner);
        },
        async (id) => (await probot.auth(id)) as GitHub,
        deps,
        probot.log,
        deps.sweepIntervalMs,
      );
    }

    // The self-service page, its JSON API, /healthz and /metrics, on the App's own server (when there is
    // one: Probot throws "No server instance" for apps loaded without a server, as in tests).
    try {
      options?.addHandler?.((req, res) => webHandler(req, res));
    } catch {
      probot.log.debug('no HTTP server: the self-service page is not mounted');
    }
  };
}

async function touchesOrgConfig(github: GitHub, target: PullTarget): Promise<boolean> {
  const files = await github.paginate(github.rest.pulls.listFiles, { owner: target.owner, repo: target.repo, pull_number: target.number, per_page: 100 });
  return files.some((file) => file.filename === ORG_CONFIG_PATH || file.previous_filename === ORG_CONFIG_PATH);
}

/**
 * The app as Probot loads it (`probot run`, createNodeMiddleware): APP_ID names the app for check lookups;
 * REDIS_URL switches fan-out work to the durable queue (Probot itself then shares its rate-limit state there).
 */
function defaultDeps(): AppDeps {
  const deps = createDeps(Number(process.env.APP_ID ?? 0));
  if (process.env.REDIS_URL) deps.fanout = new DurableFanout({ redisUrl: process.env.REDIS_URL });
  const hours = Number(process.env.SWEEP_INTERVAL_HOURS ?? 24);
  if (Number.isFinite(hours) && hours > 0) deps.sweepIntervalMs = hours * 3600 * 1000;
  return deps;
}

export default cudaGatekeeper(defaultDeps());
