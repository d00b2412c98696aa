/**
 * Fan-out jobs: previews, organisation re-checks, pull-request re-checks, migrations and sweeps. Each is plain
 * data with a key (installation, repository, commit, baseline) so duplicates collapse, and runs either on the
 * in-process queue or, with REDIS_URL, on the durable BullMQ queue shared by replicas.
 */
import type { AppDeps } from './handlers.js';
import { checkPull } from './handlers.js';
import { migrateIfEnabled, previewConfigPull, recheckOrganisation } from './org.js';
import { sweepInstallation } from './sweep.js';
import type { GitHub, Logger, PullTarget } from './types.js';

export type FanoutJob =
  | { readonly kind: 'check-pull'; readonly installationId: number; readonly target: PullTarget; readonly deliveryId: string; readonly skipUnchanged: boolean }
  | { readonly kind: 'preview'; readonly installationId: number; readonly target: PullTarget; readonly deliveryId: string }
  | { readonly kind: 'recheck-org'; readonly installationId: number; readonly owner: string; readonly deliveryId: string }
  | { readonly kind: 'migrate'; readonly installationId: number; readonly owner: string; readonly repo: string; readonly defaultBranch: string; readonly deliveryId: string }
  | { readonly kind: 'sweep'; readonly installationId: number; readonly owner: string };

export async function runJob(github: GitHub, job: FanoutJob, deps: AppDeps, log: Logger, options: { readonly durable?: boolean } = {}): Promise<void> {
  switch (job.kind) {
    case 'check-pull':
      return checkPull(github, job.target, deps, log, job.deliveryId, { skipUnchanged: job.skipUnchanged, throwOnFailure: options.durable === true });
    case 'preview':
      return previewConfigPull(github, job.target, deps, log);
    case 'recheck-org':
      await recheckOrganisation(github, job.owner, job.installationId, deps, log, job.deliveryId);
      return;
    case 'migrate':
      return migrateIfEnabled(github, job.owner, job.repo, job.defaultBranch, log);
    case 'sweep':
      await sweepInstallation(github, job.owner, log);
      return;
  }
}

/** Queue a job durably (REDIS_URL) or in this process; returns false when an identical job is pending. */
export async function enqueue(deps: AppDeps, key: string, job: FanoutJob, github: GitHub, log: Logger): Promise<boolean> {
  if (deps.fanout) return deps.fanout.add(key, job);
  return deps.queue.add(key, () => runJob(github, job, deps, log).catch((error: Error) => log.error({ job: key, err: { message: error.message } }, `${job.kind} job failed`)));
}
