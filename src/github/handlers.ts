/**
 * Event handlers: each turns a webhook into a target, runs the engine through analyze.ts, and sends the
 * result. A check run is created only as `completed`, so it can never be left in progress; any failure
 * completes it with the reason.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'probot';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { apiCalls, checkRuns, latency, queueDepth, rateLimitRemaining } from '../metrics.js';
import { plan } from '../plan.js';
import { baselineMarkdown, planMarkdown } from '../render/markdown.js';
import { HELP, parseCommand } from '../commands.js';
import { packageRoot } from '../cli/package-root.js';
import { RULE_IDS } from '../../rules/index.js';
import { analyzePull, type Analysis, type AnalyzeDeps } from './analyze.js';
import { APPLY_FIXES, checkOutput, sendCheck, sendFailure } from './check.js';
import { OrgConfigCache, resolveBaseline } from './config.js';
import { commitFixes, isFork, safeFixContents } from './fixes.js';
import { COMMENT_MARKER, firstRead, ORG_CONFIG_PATH, ORG_CONFIG_REPO } from './read.js';
import { enqueue } from './jobs.js';
import { reviewSuggestions } from './suggestions.js';
import type { DurableFanout } from './durable.js';
import { JobQueue } from './queue.js';
import type { GitHub, Logger, PullTarget } from './types.js';

export interface AppDeps extends AnalyzeDeps {
  /** Check runs created by this process per repository and head commit (GitHub's search lags behind). */
  readonly created: Map<string, number>;
  /** Per repository and head commit: the run in flight, and whether another is already waiting. */
  readonly locks: Map<string, { running: Promise<unknown>; waiting: boolean }>;
  /** Recently handled delivery ids, to drop exact redeliveries. */
  readonly deliveries: Set<string>;
  /** Fan-out work (baseline previews, organisation re-checks). */
  readonly queue: JobQueue;
  /** Durable fan-out on Redis when REDIS_URL is set (pull-request re-checks). */
  fanout?: DurableFanout;
  /** How often the drift sweep runs; unset: no sweep (tests). */
  sweepIntervalMs?: number;
}

export function createDeps(appId: number): AppDeps {
  return { appId, orgCache: new OrgConfigCache(), created: new Map(), locks: new Map(), deliveries: new Set(), queue: new JobQueue(4) };
}

/** True the first time a delivery id is seen (GitHub redelivers with the same id). */
export function firstDelivery(deps: AppDeps, id: string): boolean {
  if (deps.deliveries.has(id)) return false;
  deps.deliveries.add(id);
  if (deps.deliveries.size > 10_000) deps.deliveries.delete(deps.deliveries.values().next().value!);
  return true;
}

/** Count the API requests a handler makes (reported in the logs, the metrics and by the benchmark). */
function countCalls(github: GitHub): () => number {
  let calls = 0;
  github.hook.before('request', () => {
    calls++;
    apiCalls.inc();
  });
  github.hook.after('request', (response) => {
    const remaining = Number((response.headers as Record<string, string | undefined>)['x-ratelimit-remaining']);
    if (Number.isFinite(remaining)) rateLimitRemaining.set(remaining);
  });
  return () => calls;
}

/**
 * One run at a time per repository and head commit, so concurrent events update one check run instead of
 * creating several. Events arriving while a run is in flight coalesce into a single follow-up run (the
 * commit is immutable; the follow-up only picks up a baseline that changed meanwhile).
 */
async function serialized(deps: AppDeps, key: string, task: () => Promise<void>): Promise<'ran' | 'coalesced'> {
  const current = deps.locks.get(key);
  if (current?.waiting) return 'coalesced';
  if (current) {
    current.waiting = true;
    await current.running.catch(() => undefined);
  }
  const entry = { running: task(), waiting: false };
  deps.locks.set(key, entry);
  queueDepth.set(deps.locks.size);
  try {
    await entry.running;
    return 'ran';
  } finally {
    if (deps.locks.get(key) === entry) deps.locks.delete(key);
    queueDepth.set(deps.locks.size);
  }
}

function describeError(error: unknown): string {
  const status = (error as { status?: number }).status;
  const message = (error as Error).message?.split('\n')[0] ?? String(error);
  if (status === 404) return `GitHub answered 404 (${message}): the branch or commit may have been deleted while the check ran.`;
  if (status === 403 || status === 429) return `GitHub refused the request (${status}: ${message}), probably a rate limit.`;
  if (status && status >= 500) return `GitHub answered ${status} (${message}).`;
  return `An error occurred: ${message}.`;
}

/** Run the check for one pull request and send the check run, suggestions included. */
export async function checkPull(github: GitHub, target: PullTarget, deps: AppDeps, log: Context['log'] | Logger, deliveryId: string, options: { readonly skipUnchanged?: boolean; readonly throwOnFailure?: boolean } = {}): Promise<void> {
  const key = `${target.owner}/${target.repo}@${target.headSha}`;
  const outcome = await serialized(deps, key, async () => {
    const calls = countCalls(github);
    const started = Date.now();
    let existing = deps.created.get(key);
    try {
      const analysis = await analyzePull(github, target, deps);
      existing ??= analysis.read.existingCheckRunId;
      const output = checkOutput(analysis);
      checkRuns.inc({ conclusion: output.conclusion });
      latency.observe((Date.now() - started) / 1000);
      const hasSafeFixes = analysis.report.findings.some((finding) => finding.fix?.safety === 'safe');
      const previous = analysis.read.existingCheck;
      // The footer names the baseline commit; a new commit with the same findings is not a change worth posting.
      const body = (summary: string | null) => (summary ?? '').replace(/<sub>Baseline: .*<\/sub>/, '');
      if (options.skipUnchanged && existing !== undefined && previous && previous.conclusion?.toLowerCase() === output.conclusion && previous.title === output.title && body(previous.summary) === body(output.summary)) {
        log.info({ deliveryId, repo: `${target.owner}/${target.repo}`, pr: target.number, apiCalls: calls() }, 'check unchanged; nothing posted');
        return;
      }
      const id = await sendCheck(github, target, output, existing, hasSafeFixes);
      existing = id;
      deps.created.set(key, id);
      trimCreated(deps.created);
      const suggestions = reviewSuggestions(analysis.report, analysis.texts, analysis.added, analysis.read.postedSuggestions);
      if (suggestions.length > 0) {
        // The check run is complete and correct; a failed review only costs the one-click suggestions.
        await github.rest.pulls
          .createReview({ owner: target.owner, repo: target.repo, pull_number: target.number, commit_id: target.headSha, event: 'COMMENT', body: `cuda-gatekeeper has ${suggestions.length} one-click fix${suggestions.length === 1 ? '' : 'es'} for this change.`, comments: suggestions.map((s) => ({ ...s })) })
          .catch((error: unknown) => log.warn({ deliveryId, repo: `${target.owner}/${target.repo}`, pr: target.number, err: { message: (error as Error).message, status: (error as { status?: number }).status } }, 'could not post review suggestions'));
      }
      log.info({ deliveryId, repo: `${target.owner}/${target.repo}`, pr: target.number, conclusion: output.conclusion, findings: analysis.report.findings.length, suggestions: suggestions.length, apiCalls: calls(), ms: Date.now() - started }, 'check completed');
    } catch (error) {
      log.error({ deliveryId, repo: `${target.owner}/${target.repo}`, pr: target.number, apiCalls: calls(), err: { message: (error as Error).message, status: (error as { status?: number }).status } }, 'check failed');
      // A durable job is retried by its queue: leave the check run alone until the retries are used up.
      if (options.throwOnFailure) throw error;
      try {
        await sendFailure(github, target, describeError(error), existing);
        checkRuns.inc({ conclusion: 'failure' });
      } catch (sendError) {
        log.error({ deliveryId, err: { message: (sendError as Error).message } }, 'could not report the failure on a check run');
      }
    }
  });
  if (outcome === 'coalesced') log.info({ deliveryId, repo: `${target.owner}/${target.repo}`, pr: target.number }, 'check already queued for this commit');
}

function trimCreated(created: Map<string, number>): void {
  while (created.size > 5000) created.delete(created.keys().next().value!);
}

type PullPayload = {
  number: number;
  head: { sha: string; ref: string; repo: { full_name: string } | null };
};

export function targetFromPull(context: { payload: { repository: { owner: { login: string }; name: string }; installation?: { id: number } } }, pull: PullPayload): PullTarget {
  const owner = context.payload.repository.owner.login;
  const repo = context.payload.repository.name;
  return { owner, repo, number: pull.number, headSha: pull.head.sha, headRef: pull.head.ref, headRepo: pull.head.repo?.full_name ?? `${owner}/${repo}`, installationId: context.payload.installation?.id ?? 0 };
}

/** check_suite / check_run payloads list their pull requests with the head repository only as a URL. */
export function targetsFromCheckPayload(context: Context<'check_suite' | 'check_run'>, pulls: readonly { number: number; head: { ref: string; sha: string; repo: { url: string } }; base: { repo: { id: number } } }[], headSha: string): PullTarget[] {
  const owner = context.payload.repository.owner.login;
  const repo = context.payload.repository.name;
  return pulls.map((pull) => ({
    owner,
    repo,
    number: pull.number,
    headSha,
    headRef: pull.head.ref,
    headRepo: /\/repos\/([^/]+\/[^/]+)$/.exec(pull.head.repo.url)?.[1] ?? `${owner}/${repo}`,
    installationId: context.payload.installation?.id ?? 0,
  }));
}

// ---------------------------------------------------------------------------------------- comments

const PR_INFO = `query CudaGatekeeperPull($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      headRefOid
      headRefName
      headRepository { nameWithOwner }
      comments(last: 100) { nodes { databaseId body } }
    }
  }
}`;

interface PullInfo {
  repository: { pullRequest: { headRefOid: string; headRefName: string; headRepository: { nameWithOwner: string } | null; comments: { nodes: { databaseId: number; body: string }[] } } | null };
}

async function upsertComment(github: GitHub, target: PullTarget, existingId: number | undefined, body: string): Promise<void> {
  const text = `${COMMENT_MARKER}\n${body}`;
  if (existingId !== undefined) await github.rest.issues.updateComment({ owner: target.owner, repo: target.repo, comment_id: existingId, body: text });
  else await github.rest.issues.createComment({ owner: target.owner, repo: target.repo, issue_number: target.number, body: text });
}

export async function onComment(context: Context<'issue_comment.created'>, deps: AppDeps): Promise<void> {
  const { comment, issue, repository, sender } = context.payload;
  if (!issue.pull_request || sender.type === 'Bot' || comment.user?.type === 'Bot' || comment.body.includes(COMMENT_MARKER)) return;
  const command = parseCommand(comment.body);
  if (!command) return;
  const github = context.octokit as GitHub;
  const owner = repository.owner.login;
  const repo = repository.name;
  await github.rest.reactions.createForIssueComment({ owner, repo, comment_id: comment.id, content: 'eyes' });
  const info = await github.graphql<PullInfo>(PR_INFO, { owner, name: repo, number: issue.number });
  const pull = info.repository.pullRequest;
  if (!pull) return;
  const target: PullTarget = { owner, repo, number: issue.number, headSha: pull.headRefOid, headRef: pull.headRefName, headRepo: pull.headRepository?.nameWithOwner ?? `${owner}/${repo}`, installationId: context.payload.installation?.id ?? 0 };
  const botComment = pull.comments.nodes.find((node) => node.body.includes(COMMENT_MARKER))?.databaseId;
  const reply = (body: string) => upsertComment(github, target, botComment, body);

  switch (command.kind) {
    case 'rerun':
      await checkPull(github, target, deps, context.log, context.id);
      return;
    case 'help':
      await reply(`${command.problem ? `${command.problem}.\n\n` : ''}${HELP}`);
      return;
    case 'explain': {
      if (!RULE_IDS.has(command.ruleId)) {
        await reply(`There is no rule \`${command.ruleId}\`. Rules: ${[...RULE_IDS].sort().map((id) => `\`${id}\``).join(', ')}.`);
        return;
      }
      const readme = readFileSync(join(packageRoot(), 'rules', command.ruleId, 'README.md'), 'utf8');
      const withoutExamples = readme.split('\n## Examples')[0]!.trim();
      await reply(`${withoutExamples.replace(/^# /, '### ')}\n\nExamples: ${'`'}rules/${command.ruleId}/README.md${'`'} in cuda-gatekeeper.`);
      return;
    }
    case 'baseline': {
      const cached = deps.orgCache.get(target.installationId, owner);
      const read = await firstRead(github, { owner, repo }, { paths: [], headSha: target.headSha, number: 0, appId: deps.appId, withOrg: cached === undefined });
      if (read.orgConfig !== undefined) deps.orgCache.set(target.installationId, owner, read.orgConfig);
      const resolved = resolveBaseline(owner, repo, read.repoConfig, read.orgConfig === undefined ? cached : read.orgConfig);
      const problems = [...(resolved.repoFile?.problems.map((problem) => problem.message) ?? []), ...resolved.problems.map((problem) => problem.message)];
      await reply(baselineMarkdown(resolved.baseline, resolved.provenance, resolved.origin, problems));
      return;
    }
    case 'fix': {
      const permission = await github.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: sender.login });
      if (!['admin', 'maintain', 'write'].includes(permission.data.permission) && permission.data.role_name !== 'maintain') {
        await reply(`Sorry @${sender.login}, only people with write access to ${owner}/${repo} can ask me to commit fixes. The review suggestions can still be applied by the author.`);
        return;
      }
      await applyFixes(github, target, deps, reply);
      return;
    }
    case 'plan': {
      const analysis = await analyzePull(github, target, deps);
      const result = plan(analysis.files, command.cuda, defaultKnowledgeBase(), analysis.baseline.baseline);
      await reply(planMarkdown(result));
      return;
    }
  }
}

async function applyFixes(github: GitHub, target: PullTarget, deps: AppDeps, reply: (body: string) => Promise<void>): Promise<void> {
  if (isFork(target)) {
    await reply(`This pull request comes from the fork ${target.headRepo}, which the app cannot push to. Apply the review suggestions with **Commit suggestion**, or run \`cuda-gatekeeper check --fix\` locally and push.`);
    return;
  }
  const analysis: Analysis = await analyzePull(github, target, deps);
  const commit = safeFixContents(analysis.report, analysis.texts);
  if (commit.files.length === 0) {
    await reply('There are no safe fixes to apply on this pull request.');
    return;
  }
  try {
    const oid = await commitFixes(github, target, commit);
    await reply(`Committed ${commit.titles.length} safe fix${commit.titles.length === 1 ? '' : 'es'} to \`${target.headRef}\` (${oid.slice(0, 7)}):\n\n${commit.titles.map((title) => `- ${title}`).join('\n')}`);
  } catch (error) {
    await reply(`I could not commit the fixes: ${describeError(error)} If the branch moved, run the check again first; if the app lacks write access to contents, apply the suggestions instead.`);
  }
}

export async function onRequestedAction(context: Context<'check_run.requested_action'>, deps: AppDeps): Promise<void> {
  if (context.payload.requested_action?.identifier !== APPLY_FIXES) return;
  const github = context.octokit as GitHub;
  const checkRun = context.payload.check_run;
  const targets = targetsFromCheckPayload(context, checkRun.pull_requests, checkRun.head_sha);
  for (const target of targets) {
    const info = await github.graphql<PullInfo>(PR_INFO, { owner: target.owner, name: target.repo, number: target.number });
    const botComment = info.repository.pullRequest?.comments.nodes.find((node) => node.body.includes(COMMENT_MARKER))?.databaseId;
    await applyFixes(github, target, deps, (body) => upsertComment(github, target, botComment, body));
  }
}

/**
 * A push of a new baseline to the organisation's config repository invalidates its cached copy and re-checks
 * every open pull request (queued; check runs that would not change are left alone).
 */
export function onPush(context: Context<'push'>, deps: AppDeps): void {
  const { repository, ref, installation, commits } = context.payload;
  if (repository.name !== ORG_CONFIG_REPO || ref !== `refs/heads/${repository.default_branch}`) return;
  const touched = commits.length === 0 || commits.some((commit) => [...(commit.added ?? []), ...(commit.modified ?? []), ...(commit.removed ?? [])].includes(ORG_CONFIG_PATH));
  if (!touched || !installation || !repository.owner) return;
  const owner = repository.owner.login;
  deps.orgCache.invalidate(installation.id, owner);
  const key = `recheck-org:${installation.id}:${owner}@${context.payload.after}`;
  void enqueue(deps, key, { kind: 'recheck-org', installationId: installation.id, owner, deliveryId: context.id }, context.octokit as GitHub, context.log).catch((error: Error) => context.log.error({ deliveryId: context.id, owner, err: { message: error.message } }, 'could not queue the organisation re-check'));
}
