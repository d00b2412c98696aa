/**
 * Checking one pull request's head commit, in numbered steps: what this exact commit changes, the preview for a
 * pull request that changes the organisation baseline, the files read and judged, what the installation may do,
 * the run (check.ts has the run model), the review suggestions. Every path that checks a pull request — its
 * events, Re-run, Re-run all checks, `/cuda-check`, the re-checks after a baseline merge, a retry after GitHub's
 * rate limit — comes through `checkPull`, so a config pull request always shows its preview and a failure never
 * passes silently.
 *
 * When the check cannot run, two promises hold: a verdict already on the commit is never replaced by "could not
 * check" (it stays, and the check is retried), and a commit with no verdict gets a failing run with the cause.
 * GitHub's rate limits are waited out as GitHub asks ("Rate limits for the REST API", Exceeding the rate limit):
 * the check is queued again after `retry-after` (or the reset time, or a minute).
 */
import type { Context } from 'probot';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { checkRuns, latency, queueDepth } from '../util/metrics.js';
import { orgBaselineUnavailable, rateLimitNote } from '../render/github-prose.js';
import { CHECK_NAME, renderCheckRun, renderFailure, type CheckOutput, type FixesOffer } from '../render/check-run.js';
import { installationGrants, type Grants } from './access.js';
import { analyzePull, type Analysis } from './analyze.js';
import { counted } from './calls.js';
import { readChanges } from './changes.js';
import { holdsVerdict, sendCheck, type Trigger } from './check.js';
import { rememberRun, type AppDeps } from './deps.js';
import { rateLimitWaitMs } from './durable.js';
import { isFork } from './fixes.js';
import { runKey } from './jobs.js';
import { inCheckOrder } from './pacing.js';
import { CONFIG_PATH, ORG_CONFIG_PATH, ORG_CONFIG_REPO } from '../baseline/layers.js';
import type { ExistingRun } from './read.js';
import { reviewSuggestions } from './suggestions.js';
import type { ChangedFile, GitHub, Logger, PullTarget } from './types.js';

export type CheckOutcome = 'posted' | 'unchanged' | 'queued' | 'coalesced' | 'deferred' | 'failed';

export interface CheckRequest {
  readonly target: PullTarget;
  readonly trigger: Trigger;
  readonly deliveryId: string;
  /** When a check that waited for GitHub's rate limit was first asked for (ISO time). */
  readonly deferredSince?: string;
  /** Retries already made after GitHub failed this check (outages are retried a few times, with backoff). */
  readonly attempt?: number;
}

export interface CheckOptions {
  /** Throw instead of reporting a failure (a durable job that its queue will retry). */
  readonly throwOnFailure?: boolean;
}

type Log = Context['log'] | Logger;

/** A rate-limit wait longer than this is said on the pull request (the verdict in place stays). */
export const QUIET_WAIT_MS = 15 * 60 * 1000;
/** Retries of a check that GitHub failed (5xx, a dropped connection) while a verdict is on the commit. */
export const OUTAGE_RETRIES = 3;

/** A pull request of the organisation config repository that changes the organisation baseline. */
export function isConfigPull(target: PullTarget, changed: readonly ChangedFile[]): boolean {
  return (
    target.repo === ORG_CONFIG_REPO &&
    !target.queue &&
    changed.some((file) => file.filename === ORG_CONFIG_PATH || file.previous_filename === ORG_CONFIG_PATH)
  );
}

/** The most of an error's message a check run shows (a message can quote a whole response; a summary holds 65,535). */
const MESSAGE_LIMIT = 2000;

/** An error as the person reading the check needs it: every message GitHub gave, and what it probably means. */
export function describeError(error: unknown): string {
  const status = (error as { status?: number }).status;
  const whole = ((error as Error).message ?? String(error))
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ');
  const message =
    whole.length > MESSAGE_LIMIT
      ? `${whole.slice(0, MESSAGE_LIMIT)}… (${whole.length - MESSAGE_LIMIT} more characters)`
      : whole;
  if (status === 404)
    return `GitHub answered 404 (${message}): the branch or commit may have been deleted while the check ran.`;
  if (status === 403 && /not accessible by integration/i.test(message))
    return `GitHub refused the request (403: ${message}): the App's installation lacks a permission this needs.`;
  if (status === 403 || status === 429)
    return `GitHub refused the request (${status}: ${message}), probably a rate limit.`;
  if (status && status >= 500) return `GitHub answered ${status} (${message}).`;
  const code = (error as { code?: string }).code;
  if (code && /^E[A-Z]+$/.test(code)) return `GitHub could not be reached (${code}: ${message}).`;
  return `An error occurred: ${message}`;
}

/**
 * One check at a time per repository and head commit, so concurrent events for one commit give one run. Requests
 * arriving while one runs coalesce into a single follow-up, which counts as asked for by a person if any of them
 * was (a Re-run must not be swallowed by an event).
 */
export async function serialized(
  deps: AppDeps,
  key: string,
  trigger: Trigger,
  task: (trigger: Trigger) => Promise<CheckOutcome>,
): Promise<CheckOutcome> {
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

/** How the safe fixes of this run can be applied: the button only where a commit can land and is allowed. */
export function fixesOffer(target: PullTarget, analysis: Pick<Analysis, 'read'>, grants: Grants): FixesOffer {
  if (target.queue) return { kind: 'queue', base: target.queue.baseRef };
  if (target.superseded) return { kind: 'superseded' };
  if (isFork(target)) return { kind: 'fork', repo: target.headRepo };
  const state = analysis.read?.pullState;
  if (state && state !== 'OPEN') return { kind: 'closed', state: state.toLowerCase() };
  if (!grants.contentsWrite) return { kind: 'read-only' };
  return { kind: 'button' };
}

/**
 * What the summary says about the baseline files: a file under a name that is not read, and, for an installation on
 * selected repositories, why no organisation layer applies (`.github` not seen, or seen without a baseline file).
 */
function orgNotes(
  target: PullTarget,
  analysis: Pick<Analysis, 'orgFound' | 'orgMissing' | 'read'>,
  grants: Grants,
): string[] {
  const notes = (analysis.read?.misnamed ?? []).map(misnamedNote);
  if (analysis.orgFound || grants.selection !== 'selected' || target.repo === ORG_CONFIG_REPO) return notes;
  if (analysis.orgMissing === 'file') notes.push(orgFileMissingNote(target.owner));
  else notes.push(orgHiddenNote(target.owner));
  return notes;
}

/** A baseline file named `.yaml`: it is not read, and nothing else says so. */
export function misnamedNote(path: string): string {
  return `**\`${path}\` is not read.** The baseline file is named \`.yml\` (\`${path.replace(/\.yaml$/, '.yml')}\`): rename it, and it applies.`;
}

/** `<owner>/.github` is in the installation but holds no baseline file. */
export function orgFileMissingNote(owner: string): string {
  return `**No organisation baseline.** \`${owner}/${ORG_CONFIG_REPO}\` is in this installation but has no \`${ORG_CONFIG_PATH}\` on its default branch, so only this repository's baseline and the bundled one apply.`;
}

/** The installation covers selected repositories and `<owner>/.github` is not among them (or does not exist). */
export function orgHiddenNote(owner: string): string {
  return `**The organisation baseline cannot be seen.** This installation covers selected repositories, and \`${owner}/${ORG_CONFIG_REPO}\` is not one of them (or does not exist), so the bundled baseline applies. If \`${owner}/${ORG_CONFIG_REPO}\` holds \`${ORG_CONFIG_PATH}\`, add that repository to the installation (the organisation's Settings → GitHub Apps → cuda-gatekeeper → Repository access): it takes effect at once, and open pull requests are checked again.`;
}

/** Where the baseline files a finding may be about can be seen on GitHub (they live on default branches). */
function baselineLinks(target: PullTarget, analysis: Pick<Analysis, 'baseline'>, webUrl: string): Map<string, string> {
  const links = new Map<string, string>();
  for (const layer of analysis.baseline.layers) {
    const path = layer.loaded.source.path;
    const commit = layer.commit;
    if (!commit) continue;
    if (path === `${target.owner}/${ORG_CONFIG_REPO}/${ORG_CONFIG_PATH}`)
      links.set(path, `${webUrl}/${target.owner}/${ORG_CONFIG_REPO}/blob/${commit}/${ORG_CONFIG_PATH}`);
    else if (path === CONFIG_PATH)
      links.set(path, `${webUrl}/${target.owner}/${target.repo}/blob/${commit}/${CONFIG_PATH}`);
  }
  return links;
}

export interface OutputContext {
  readonly grants: Grants;
  readonly webUrl?: string;
  readonly deferredSince?: string;
}

export function checkOutput(analysis: Analysis, target: PullTarget, context: OutputContext): CheckOutput {
  if (analysis.unavailable) {
    return renderFailure(
      orgBaselineUnavailable(`${target.owner}/${ORG_CONFIG_REPO}:${ORG_CONFIG_PATH}`, analysis.unavailable),
    );
  }
  const notes = orgNotes(target, analysis, context.grants);
  if (context.deferredSince) notes.push(rateLimitNote(context.deferredSince));
  if (analysis.submodules?.length)
    notes.push(
      `**Submodules are not followed.** This change moves ${analysis.submodules.map((path) => `\`${path}\``).join(', ')}: a submodule's files live in its own repository and are not checked here (install cuda-gatekeeper there, or run \`cuda-gatekeeper check\` in a checkout with the submodule).`,
    );
  if (target.queue)
    notes.push(
      `**Merge queue.** This is the queue's commit for \`${target.queue.baseRef}\`, checked as it would land: the changes from the base it was built on.`,
    );
  // The repository's baseline comes from the default branch: its problems are annotated only where the head commit
  // has the same file (else they are listed in the summary with a link).
  const config = analysis.read?.repoConfig?.text;
  const texts =
    config !== undefined && config === analysis.read?.headConfigText
      ? new Map([...analysis.texts, [CONFIG_PATH, config]])
      : analysis.texts;
  return renderCheckRun(analysis.report, {
    baselineOrigin: analysis.baseline.origin,
    knowledgeRetrieved: defaultKnowledgeBase().retrieved,
    texts,
    skipped: analysis.skipped,
    ...(analysis.unseen ? { unseen: analysis.unseen } : {}),
    unchecked: analysis.baseline.baseline.unchecked,
    relevantFiles: analysis.relevant.length + analysis.removed.length,
    fixes: fixesOffer(target, analysis, context.grants),
    links: baselineLinks(target, analysis, context.webUrl ?? 'https://github.com'),
    notes,
  });
}

/**
 * Check a pull request's head commit and send the verdict; never throws unless `throwOnFailure` (durable jobs retry).
 */
export async function checkPull(
  github: GitHub,
  deps: AppDeps,
  log: Log,
  request: CheckRequest,
  options: CheckOptions = {},
): Promise<CheckOutcome> {
  const { target, deliveryId } = request;
  const key = runKey(target);
  const where = { deliveryId, repo: `${target.owner}/${target.repo}`, pr: target.number };
  // Its writes go before those of checks started after it (pacing.ts): a burst of pull requests gets its verdicts
  // one after another, not all at the end.
  const outcome = await serialized(deps, key, request.trigger, (trigger) =>
    inCheckOrder(() =>
      counted(github, async (calls) => {
        const started = Date.now();
        try {
          // 1. What this exact commit changes (never the file list of a newer push).
          const changes = await readChanges(github, target);

          // 2. A new organisation baseline: validated and previewed by a fan-out job (it reads many repositories).
          if (isConfigPull(target, changes.files)) {
            await deps.fanout.add(
              { kind: 'preview', installationId: target.installationId, target, deliveryId, trigger },
              github,
            );
            return 'queued';
          }

          // 3. The files, read at this commit, and the verdict.
          const analysis = await analyzePull(github, target, deps, changes);

          // 4. What the installation may do here (from its cached token: no request).
          const grants = await installationGrants(github);
          const output = checkOutput(analysis, target, {
            grants,
            ...(deps.webUrl ? { webUrl: deps.webUrl } : {}),
            ...deferred(request),
          });
          const applyFixes =
            !analysis.unavailable &&
            fixesOffer(target, analysis, grants).kind === 'button' &&
            analysis.report.findings.some((finding) => finding.fix?.safety === 'safe');

          // 5. The run (nothing is written when an event finds the same verdict already posted).
          const sent = await sendCheck(github, target, output, {
            existing: newer(deps.runs.get(key), analysis.read?.latestRun),
            trigger,
            applyFixes,
          });
          let suggestions = 0;
          if (sent.posted) {
            rememberRun(deps, key, { id: sent.id, externalId: sent.externalId });
            checkRuns.inc({ conclusion: output.conclusion });
            // 6. The one-click fixes, as review suggestions on the lines the pull request adds.
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
              changes: changes.source,
              apiCalls: calls(),
              ms: Date.now() - started,
            },
            sent.posted ? 'check completed' : 'check unchanged; nothing posted',
          );
          return sent.posted ? 'posted' : 'unchanged';
        } catch (error) {
          log.error(
            {
              ...where,
              apiCalls: calls(),
              err: { message: (error as Error).message, status: (error as { status?: number }).status },
            },
            'check failed',
          );
          return checkFailed(github, deps, log, { request, error, where }, options);
        }
      }),
    ),
  );
  if (outcome === 'coalesced') log.info(where, 'check already queued for this commit');
  return outcome;
}

function deferred(request: CheckRequest): { deferredSince?: string } {
  return request.deferredSince ? { deferredSince: request.deferredSince } : {};
}

/**
 * The check could not run. A rate limit is waited out (the check is queued again); an outage is retried a few
 * times where a verdict is already on the commit; otherwise the commit gets a failing run with the cause.
 */
async function checkFailed(
  github: GitHub,
  deps: AppDeps,
  log: Log,
  { request, error, where }: { readonly request: CheckRequest; readonly error: unknown; readonly where: object },
  options: CheckOptions,
): Promise<CheckOutcome> {
  const { target } = request;
  const wait = rateLimitWaitMs(error);
  const since = request.deferredSince ?? new Date().toISOString();
  const again = (delayMs: number, attempt = request.attempt ?? 0) =>
    deps.fanout.add(
      {
        kind: 'check-pull',
        installationId: target.installationId,
        target,
        deliveryId: request.deliveryId,
        trigger: request.trigger,
        deferredSince: since,
        attempt,
      },
      github,
      { delayMs },
    );
  if (wait !== undefined) {
    // A second past GitHub's time, and a little jitter so that many checks do not return at once.
    const delayMs = wait + 1000 + Math.floor(Math.random() * 2000);
    await again(delayMs);
    const at = new Date(Date.now() + delayMs).toISOString().slice(11, 16);
    log.warn({ ...where, waitMs: delayMs }, 'GitHub rate limit: the check runs again when GitHub allows');
    // A verdict already on the commit stays while the check waits a short while; with none, or for a long wait,
    // the newest run says why and when (sendFailure never replaces a verdict).
    if (delayMs <= QUIET_WAIT_MS && holdsVerdict(deps.runs.get(runKey(target)))) return 'deferred';
    await sendFailure(github, deps, log, {
      target,
      reason: `GitHub's rate limit stops this check until ${at} UTC; it runs again then by itself. ${describeError(error)}`,
      where,
    });
    return 'deferred';
  }
  if (options.throwOnFailure) throw error;
  const attempt = request.attempt ?? 0;
  const sent = await sendFailure(github, deps, log, { target, reason: describeError(error), where });
  if (sent === 'kept' && attempt < OUTAGE_RETRIES) {
    // The verdict stays; the check is tried again in 1, 2, 4 minutes.
    await again(60_000 * 2 ** attempt, attempt + 1).catch(() => undefined);
    return 'deferred';
  }
  return 'failed';
}

/**
 * The check could not run: a failing run with the cause (never nothing, never a run in progress) — unless a run
 * of ours with a verdict is already the newest on the commit, which stays ('kept').
 */
export async function sendFailure(
  github: GitHub,
  deps: AppDeps,
  log: Log,
  { target, reason, where }: { readonly target: PullTarget; readonly reason: string; readonly where: object },
): Promise<'posted' | 'kept' | 'lost'> {
  const key = runKey(target);
  const existing = deps.runs.get(key) ?? (await newestRunOnCommit(github, deps, target));
  if (holdsVerdict(existing)) {
    log.warn({ ...where, run: existing!.id }, 'the check failed; the verdict already on this commit stays');
    return 'kept';
  }
  try {
    // The same failure again (an event redelivered while GitHub is down) is not posted twice.
    const sent = await sendCheck(github, target, renderFailure(reason), {
      ...(existing ? { existing } : {}),
      trigger: 'event',
      applyFixes: false,
      failed: true,
    });
    rememberRun(deps, key, { id: sent.id, externalId: sent.externalId });
    checkRuns.inc({ conclusion: 'failure' });
    return 'posted';
  } catch (sendError) {
    log.error(
      { ...where, err: { message: (sendError as Error).message } },
      'could not report the failure on a check run',
    );
    return 'lost';
  }
}

/** Our newest run on the commit, as GitHub lists it (one request; undefined when GitHub cannot answer either). */
async function newestRunOnCommit(github: GitHub, deps: AppDeps, target: PullTarget): Promise<ExistingRun | undefined> {
  try {
    const runs = await github.rest.checks.listForRef({
      owner: target.owner,
      repo: target.repo,
      ref: target.headSha,
      check_name: CHECK_NAME,
      filter: 'latest',
      ...(deps.appId ? { app_id: deps.appId } : {}),
      per_page: 1,
    });
    const run = runs.data.check_runs[0];
    return run ? { id: run.id, externalId: run.external_id } : undefined;
  } catch {
    return undefined;
  }
}

/** One review with the suggestions not posted before; a failed review costs only the one-click fixes. */
async function postSuggestions(
  github: GitHub,
  target: PullTarget,
  analysis: Analysis,
  log: Log,
  where: object,
): Promise<number> {
  if (target.queue) return 0; // a merge queue's commit has no pull request to review
  const suggestions = reviewSuggestions(
    analysis.report,
    analysis.texts,
    analysis.added,
    analysis.read?.postedSuggestions ?? new Set(),
  );
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
    log.warn(
      { ...where, err: { message: (error as Error).message, status: (error as { status?: number }).status } },
      'could not post review suggestions',
    );
    return 0;
  }
}
