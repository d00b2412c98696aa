/** The runner of each kind of fan-out job; app.ts hands `runJob` to the queue. */
import type { AppDeps } from './deps.js';
import type { FanoutJob } from './jobs.js';
import { migrateIfEnabled } from './org-migrate.js';
import { previewConfigPull } from './org-preview.js';
import { recheckOrganisation } from './org-recheck.js';
import { checkPull } from './pull-check.js';
import { sweepInstallation } from './sweep.js';
import type { GitHub, Logger } from './types.js';

export interface RunOptions {
  /** Jobs of the durable queue: a check that GitHub fails throws, so the queue retries it. */
  readonly durable?: boolean;
  /** Hands a stored delivery to Probot's handlers. */
  readonly receive?: (delivery: {
    readonly id: string;
    readonly name: string;
    readonly payload: unknown;
  }) => Promise<void>;
}

export async function runJob(
  github: GitHub,
  job: FanoutJob,
  deps: AppDeps,
  log: Logger,
  options: RunOptions = {},
): Promise<void> {
  switch (job.kind) {
    case 'delivery':
      // Probot runs the handlers as it would for a delivery it had just received.
      if (!options.receive) throw new Error('no webhook receiver to hand the stored delivery to');
      await options.receive({ id: job.id, name: job.name, payload: job.payload });
      return;
    case 'check-pull':
      await checkPull(
        github,
        deps,
        log,
        {
          target: job.target,
          trigger: job.trigger,
          deliveryId: job.deliveryId,
          ...(job.deferredSince ? { deferredSince: job.deferredSince } : {}),
          ...(job.attempt ? { attempt: job.attempt } : {}),
        },
        { throwOnFailure: options.durable === true },
      );
      return;
    case 'preview':
      return previewConfigPull(github, deps, log, job);
    case 'recheck-org':
      await recheckOrganisation(github, deps, log, job);
      return;
    case 'migrate':
      return migrateIfEnabled(github, log, job, deps.paths);
    case 'sweep':
      await sweepInstallation(github, job.owner, log, undefined, deps.paths);
      return;
  }
}
