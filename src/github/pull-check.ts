/**
 * Checking one pull request's head commit: list its files, decide what the check is (the baseline preview for a
 * pull request that changes the organisation baseline, else the file check), run the engine and send the verdict
 * (check.ts has the run model). Every path that checks a pull request — its events, Re-run, Re-run all checks,
 * `/cuda-check`, the re-checks after a baseline merge — comes through `checkPull`, so a config pull request always
 * shows its preview and any failure completes a run with its full cause.
 */
import type { Context } from 'probot';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { checkRuns, latency, queueDepth } from '../util/metrics.js';
import { renderCheckRun, renderFailure, type CheckOutput } from '../render/check-run.js';
import { analyzePull, type Analysis, type ChangedFile } from './analyze.js';
import { counted } from './calls.js';
import { sendCheck, type Trigger } from './check.js';
import { rememberRun, type AppDeps } from './deps.js';
import { isFork } from './fixes.js';
import { ORG_CONFIG_PATH, ORG_CONFIG_REPO, type ExistingRun } from './read.js';
import { reviewSuggestions } from './suggestions.js';
import type { GitHub, Logger, PullTarget } from './types.js';

export type CheckOutcome = 'posted' | 'unchanged' | 'queued' | 'coalesced' | 'failed';

export interface CheckRequest {
  readonly target: PullTarget;
  readonly trigger: Trigger;
  readonly deliveryId: string;
}

type Log = Context['log'] | Logger;

export function runKey(target: Pick<PullTarget, 'owner' | 'repo' | 'headSha'>): string {
  return `${target.owner}/${target.repo}@${target.headSha}`.toLowerCase();
}

/** A pull request of the organisation config repository that changes the organisation baseline. */
export function isConfigPull(target: PullTarget, changed: readonly ChangedFile[]): boolean {
  return target.repo === ORG_CONFIG_REPO && changed.some((file) => file.filename === ORG_CONFIG_PATH || file.previous_filename === ORG_CONFIG_PATH);
}

/** An error as the person reading the check needs it: every message GitHub gave, and what it probably means. */
export function describeError(error: unknown): string {
  const status = (error as { status?: number }).status;
  const message = ((error as Error).message ?? String(error))
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ');
  if (status === 404) return `GitHub answered 404 (${message}): the branch or commit may have been deleted while the check ran.`;
  if (status === 403 || status === 429) return `GitHub refused the request (${status}: ${message}), probably a rate limit.`;
  if (status && status >= 500) return `GitHub answered ${status} (${message}).`;
  return `An error occurred: ${message}`;
}

/**
 * One check at a time per repository and head commit, so concurrent events for one commit give one run. Requests
 * arriving while one runs coalesce into a single follow-up, which counts as asked for by a person if any of them
 * was (a Re-run must not be swallowed by an event).
 */
export async function serialized(deps: AppDeps, key: string, trigger: Trigger, task: (trigger: Trigger) => Promise<CheckOutcome>): Promise<CheckOutcome> {
  const current = deps.locks.get(key);
  if (current?.next) {
    if (trigger === 'request') current.next.trigger = 'request';
    return 'coalesced';
  }
  let effective = trigger;
  if (current) {
    const next = { trigger };
    current.next = next;
    await current.running.catch(() => undefined);
    effective = next.trigger;
  }
  const entry: { running: Promise<CheckOutcome>; next?: { trigger: Trigger } } = { running: task(effective) };
  deps.locks.set(key, entry);
  queueDepth.set(deps.locks.size);
  try {
    return await entry.running;
  } finally {
    if (deps.locks.get(key) === entry) deps.locks.delete(key);
    queueDepth.set(deps.locks.size);
  }
}

/** The newer of two runs (by id): the one this process created, or the one GitHub listed. */
function newer(a: ExistingRun | undefined, b: ExistingRun | undefined): ExistingRun | undefined {
  if (!a) return b;
  if (!b) return a;
  return a.id >= b.id ? a : b;
}

export function checkOutput(analysis: Analysis, target: PullTarget): CheckOutput {
  if (analysis.unavailable) {
    return renderFailure(
      `The organisation baseline (\`${target.owner}/${ORG_CONFIG_REPO}:${ORG_CONFIG_PATH}\`) could not be read: ${analysis.unavailable}. The organisation's policy may forbid what this pull request changes, so nothing is judged without it. If the organisation restricts access (SAML single sign-on, an IP allow list), allow the app there.`,
    );
  }
  return renderCheckRun(analysis.report, {
    baselineOrigin: analysis.baseline.origin,
    knowledgeRetrieved: defaultKnowledgeBase().retrieved,
    texts: analysis.texts,
    skipped: analysis.skipped,
    relevantFiles: analysis.relevant.length + analysis.removed.length,
    ...(isFork(target) ? { fork: target.headRepo } : {}),
  });
}

/** Check a pull request's head commit and send the verdict; never throws unless `throwOnFailure` (durable jobs retry). */
export async function checkPull(
  github: GitHub,
  deps: AppDeps,
  log: Log,
  request: CheckRequest,
  options: { readonly throwOnFailure?: boolean } = {},
): Promise<CheckOutcome> {
  const { target, deliveryId } = request;
  const key = runKey(target);
  const where = { deliveryId, repo: `${target.owner}/${target.repo}`, pr: target.number };
  const outcome = await serialized(deps, key, request.trigger, (trigger) =>
    counted(github, async (calls) => {
      const started = Date.now();
      try {
        const changed = await github.paginate(github.rest.pulls.listFiles, {
          owner: target.owner,
          repo: target.repo,
          pull_number: target.number,
          per_page: 100,
        });
        if (isConfigPull(target, changed)) {
          // A new organisation baseline: validated and previewed by a fan-out job (it reads many repositories).
          await deps.fanout!.add(
            `preview:${target.installationId}:${key}:${deliveryId}`,
            { kind: 'preview', installationId: target.installationId, target, deliveryId, trigger },
            github,
          );
          return 'queued';
        }
        const analysis = await analyzePull(github, target, deps, changed);
        const output = checkOutput(analysis, target);
        const applyFixes = !isFork(target) && !analysis.unavailable && analysis.report.findings.some((finding) => finding.fix?.safety === 'safe');
        const sent = await sendCheck(github, target, output, { existing: newer(deps.runs.get(key), analysis.read?.latestRun), trigger, applyFixes });
        let suggestions = 0;
        if (sent.posted) {
          rememberRun(deps, key, { id: sent.id, externalId: sent.externalId });
          checkRuns.inc({ conclusion: output.conclusion });
          suggestions = await postSuggestions(github, target, analysis, log, where);
        }
        latency.observe((Date.now() - started) / 1000);
        log.info(
          {
            ...where,
            conclusion: output.conclusion,
            posted: sent.posted,
            findings: analysis.report.findings.length,
            suggestions,
            apiCalls: calls(),
            ms: Date.now() - started,
          },
          sent.posted ? 'check completed' : 'check unchanged; nothing posted',
        );
        return sent.posted ? 'posted' : 'unchanged';
      } catch (error) {
        log.error({ ...where, apiCalls: calls(), err: { message: (error as Error).message, status: (error as { status?: number }).status } }, 'check failed');
        // A durable job is retried by its queue: leave the runs alone until the retries are used up.
        if (options.throwOnFailure) throw error;
        await sendFailure(github, deps, target, describeError(error), log, where);
        return 'failed';
      }
    }),
  );
  if (outcome === 'coalesced') log.info(where, 'check already queued for this commit');
  return outcome;
}

/** The check could not run: a failing run with the cause (never nothing, never a run in progress). */
export async function sendFailure(github: GitHub, deps: AppDeps, target: PullTarget, reason: string, log: Log, where: object): Promise<void> {
  try {
    // The same failure again (an event redelivered while GitHub is down) is not posted twice.
    const sent = await sendCheck(github, target, renderFailure(reason), { existing: deps.runs.get(runKey(target)), trigger: 'event', applyFixes: false });
    rememberRun(deps, runKey(target), { id: sent.id, externalId: sent.externalId });
    checkRuns.inc({ conclusion: 'failure' });
  } catch (sendError) {
    log.error({ ...where, err: { message: (sendError as Error).message } }, 'could not report the failure on a check run');
  }
}

/** One review with the suggestions not posted before; a failed review costs only the one-click fixes. */
async function postSuggestions(github: GitHub, target: PullTarget, analysis: Analysis, log: Log, where: object): Promise<number> {
  const suggestions = reviewSuggestions(analysis.report, analysis.texts, analysis.added, analysis.read?.postedSuggestions ?? new Set());
  if (suggestions.length === 0) return 0;
  try {
    await github.rest.pulls.createReview({
      owner: target.owner,
      repo: target.repo,
      pull_number: target.number,
      commit_id: target.headSha,
      event: 'COMMENT',
      body: `cuda-gatekeeper has ${suggestions.length} one-click fix${suggestions.length === 1 ? '' : 'es'} for this change.`,
      comments: suggestions.map((s) => ({ ...s })),
    });
    return suggestions.length;
  } catch (error) {
    log.warn({ ...where, err: { message: (error as Error).message, status: (error as { status?: number }).status } }, 'could not post review suggestions');
    return 0;
  }
}
