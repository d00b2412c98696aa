/**
 * `/cuda-check` comments and the Apply fixes button. The bot keeps one comment per pull request, found by its
 * marker among the comments it wrote (paged: a pull request can have thousands) and updated in place.
 */
import {
  fixReplies,
  noSuchRule,
  orgBaselineUnreadable,
  ruleExplanation,
  upgradeReplies,
} from '../render/github-prose.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'probot';
import { HELP, parseCommand, type Command } from './commands.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { plan } from '../plan/plan.js';
import { baselineMarkdown, planMarkdown } from '../render/markdown.js';
import { packageRoot } from '../util/package-root.js';
import { RULE_IDS } from '../../rules/ids.js';
import { grantsForWrite, installationGrants, WriteAccess } from './access.js';
import { analyzePull } from './analyze.js';
import { readChanges } from './changes.js';
import { APPLY_FIXES } from './check.js';
import { layerBaselines, ORG_CONFIG_REPO } from '../baseline/layers.js';
import type { AppDeps } from './deps.js';
import { safeFixContents } from '../analysis/safe-fixes.js';
import { commitFixes, isFork } from './fixes.js';
import { partialQuery } from './graphql.js';
import { checkPull, describeError, orgHiddenNote, type CheckOutcome } from './pull-check.js';
import { readBaselineFiles } from './read.js';
import { pullTarget, targetsOfCheck } from './targets.js';
import type { GitHub, PullTarget } from './types.js';
import { upgrade, type UpgradeRequest } from './upgrade.js';
import { bundledBaseline } from '../util/package-root.js';

export const COMMENT_MARKER = '<!-- cuda-gatekeeper:comment -->';
/** Pages of 100 comments searched for the bot's comment before a new one is written. */
const MAX_COMMENT_PAGES = 30;

const COMMENTS_QUERY = `query CudaGatekeeperComments($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) { comments(first: 100, after: $after) { pageInfo { hasNextPage endCursor } nodes { databaseId body viewerDidAuthor } } }
  }
}`;

interface CommentsAnswer {
  repository: {
    pullRequest: {
      comments: {
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
        nodes: ({ databaseId: number | null; body: string; viewerDidAuthor: boolean } | null)[];
      };
    } | null;
  } | null;
}

/** The bot's own comment on a pull request: the first comment it wrote with the marker, found page by page. */
export async function findBotComment(github: GitHub, target: PullTarget): Promise<number | undefined> {
  let after: string | null = null;
  for (let page = 0; page < MAX_COMMENT_PAGES; page++) {
    const answer: { data: CommentsAnswer } = await partialQuery<CommentsAnswer>(github, COMMENTS_QUERY, {
      owner: target.owner,
      name: target.repo,
      number: target.number,
      after,
    });
    const comments: NonNullable<NonNullable<CommentsAnswer['repository']>['pullRequest']>['comments'] | undefined =
      answer.data.repository?.pullRequest?.comments;
    const found = comments?.nodes.find((node) => node?.viewerDidAuthor && node.body.includes(COMMENT_MARKER));
    if (found?.databaseId) return found.databaseId;
    if (!comments?.pageInfo.hasNextPage) return undefined;
    after = comments.pageInfo.endCursor;
  }
  return undefined;
}

function replier(github: GitHub, target: PullTarget): (body: string) => Promise<void> {
  let existing: Promise<number | undefined> | undefined;
  return async (body) => {
    existing ??= findBotComment(github, target);
    const id = await existing;
    const text = `${COMMENT_MARKER}\n${body}`;
    if (id !== undefined)
      await github.rest.issues.updateComment({ owner: target.owner, repo: target.repo, comment_id: id, body: text });
    else
      await github.rest.issues.createComment({
        owner: target.owner,
        repo: target.repo,
        issue_number: target.number,
        body: text,
      });
  };
}

/** What a command handler gets: the pull request, the reply channel, the person who asked, the delivery's caches. */
interface CommandContext {
  readonly github: GitHub;
  readonly deps: AppDeps;
  readonly target: PullTarget & { readonly state: string };
  readonly reply: (body: string) => Promise<void>;
  readonly sender: string;
  readonly access: WriteAccess;
  readonly log: Context['log'];
  readonly deliveryId: string;
}

export async function onComment(
  context: Context<'issue_comment.created'>,
  deps: AppDeps,
): Promise<CheckOutcome | undefined> {
  const { comment, issue, repository, sender } = context.payload;
  // 1. Only people's comments with a command: on pull requests, and `upgrade` on issues as well.
  if (sender.type === 'Bot' || comment.user?.type === 'Bot' || comment.body.includes(COMMENT_MARKER)) return undefined;
  const command = parseCommand(comment.body);
  if (!command || (!issue.pull_request && command.kind !== 'upgrade')) return undefined;
  // 2. Acknowledge, and find the pull request as it is now.
  const github = context.octokit as GitHub;
  const repo = { owner: repository.owner.login, repo: repository.name };
  await github.rest.reactions.createForIssueComment({ ...repo, comment_id: comment.id, content: 'eyes' });
  if (command.kind === 'upgrade') {
    await upgradeFor(github, deps, {
      ...repo,
      cuda: command.cuda,
      defaultBranch: repository.default_branch,
      requester: sender.login,
      from: issue.number,
    });
    return undefined;
  }
  const target = await pullTarget(github, repo, issue.number, context.payload.installation?.id ?? 0);
  if (!target) return undefined;
  // 3. The command.
  const run: CommandContext = {
    github,
    deps,
    target,
    reply: replier(github, target),
    sender: sender.login,
    access: new WriteAccess(github),
    log: context.log,
    deliveryId: context.id,
  };
  const handler = COMMANDS[command.kind as Exclude<Command['kind'], 'upgrade'>] as (
    run: CommandContext,
    command: Command,
  ) => Promise<CheckOutcome | undefined>;
  return handler(run, command);
}

/** One handler per command, keyed by its kind (commands.ts parses them). */
const COMMANDS: {
  readonly [K in Exclude<Command['kind'], 'upgrade'>]: (
    run: CommandContext,
    command: Extract<Command, { kind: K }>,
  ) => Promise<CheckOutcome | undefined>;
} = {
  rerun: (run) =>
    checkPull(run.github, run.deps, run.log, { target: run.target, trigger: 'request', deliveryId: run.deliveryId }),
  help: (run, command) => run.reply(`${command.problem ? `${command.problem}.\n\n` : ''}${HELP}`).then(() => undefined),
  explain: (run, command) => explain(run, command.ruleId),
  baseline: (run) => showBaseline(run),
  fix: (run) => fixFor(run),
  plan: (run, command) => showPlan(run, command.cuda),
};

async function explain(run: CommandContext, ruleId: string): Promise<undefined> {
  if (!RULE_IDS.has(ruleId)) {
    await run.reply(noSuchRule(ruleId, RULE_IDS));
    return undefined;
  }
  const readme = readFileSync(join(packageRoot(), 'rules', ruleId, 'README.md'), 'utf8');
  await run.reply(ruleExplanation(ruleId, readme));
  return undefined;
}

async function showBaseline(run: CommandContext): Promise<undefined> {
  const { github, deps, target } = run;
  const repo = { owner: target.owner, repo: target.repo };
  const cached = deps.orgCache.get(target.installationId, repo.owner);
  const read = await readBaselineFiles(github, repo, cached === undefined);
  if (read.org?.state === 'unavailable') {
    await run.reply(orgBaselineUnreadable(read.org.reason));
    return undefined;
  }
  const org = read.org ? (read.org.state === 'found' ? read.org.config : null) : cached;
  if (read.org) deps.orgCache.set(target.installationId, repo.owner, org ?? null);
  const resolved = layerBaselines(repo.owner, repo.repo, read.repoConfig, org, bundledBaseline());
  const problems = [
    ...(resolved.repoFile?.problems.map((problem) => problem.message) ?? []),
    ...resolved.problems.map((problem) => problem.message),
  ];
  const grants = await installationGrants(github);
  const notes =
    !org && grants.selection === 'selected' && repo.repo !== ORG_CONFIG_REPO ? [orgHiddenNote(repo.owner)] : [];
  await run.reply(baselineMarkdown(resolved.baseline, resolved.provenance, resolved.origin, problems, notes));
  return undefined;
}

async function showPlan(run: CommandContext, cuda: string): Promise<undefined> {
  const analysis = await analyzePull(run.github, run.target, run.deps, await readChanges(run.github, run.target));
  await run.reply(planMarkdown(plan(analysis.files, cuda, defaultKnowledgeBase(), analysis.baseline.baseline)));
  return undefined;
}

/**
 * `/cuda-check upgrade X.Y`, on an issue or a pull request: for a person with write access, on an installation that
 * may write contents, the default branch's move to CUDA X.Y as a pull request (upgrade.ts). The answer is a new
 * comment where it was asked.
 */
async function upgradeFor(github: GitHub, deps: AppDeps, request: UpgradeRequest): Promise<void> {
  const repo = { owner: request.owner, repo: request.repo };
  const reply = async (body: string): Promise<void> => {
    await github.rest.issues.createComment({ ...repo, issue_number: request.from!, body });
  };
  if (!(await new WriteAccess(github).allows(repo, request.requester))) {
    await reply(upgradeReplies.noWriteAccess(request.requester, `${repo.owner}/${repo.repo}`));
    return;
  }
  if (!(await grantsForWrite(github)).contentsWrite) {
    await reply(upgradeReplies.readOnly());
    return;
  }
  try {
    const result = await upgrade(github, request, deps.paths);
    if (result.action === 'refused') await reply(upgradeReplies.refused(request.cuda, result.reason));
    else if (result.action === 'nothing to move') await reply(upgradeReplies.nothingToMove(planMarkdown(result.plan)));
    else await reply(upgradeReplies.done(result.action, result.number, result.draft));
  } catch (error) {
    await reply(upgradeReplies.failed(describeError(error)));
  }
}

/** `/cuda-check fix`: the safe fixes committed for a person with write access, on an open pull request. */
async function fixFor(run: CommandContext): Promise<undefined> {
  await applyFixes(run);
  return undefined;
}

/**
 * Commit the safe fixes to the pull request's branch for `run.sender`. One rule for every path that writes for a
 * person (the button and `/cuda-check fix`): write access or more (access.ts), an open pull request, a branch in
 * this repository, an installation allowed to write contents.
 */
async function applyFixes(run: CommandContext): Promise<void> {
  const { github, deps, target, reply } = run;
  const repo = { owner: target.owner, repo: target.repo };
  if (!(await run.access.allows(repo, run.sender))) {
    await reply(fixReplies.noWriteAccess(run.sender, `${repo.owner}/${repo.repo}`));
    return;
  }
  if (target.state !== 'OPEN') {
    await reply(fixReplies.closed(target.state));
    return;
  }
  if (isFork(target)) {
    await reply(fixReplies.fork(target.headRepo));
    return;
  }
  if (!(await grantsForWrite(github)).contentsWrite) {
    await reply(fixReplies.readOnly());
    return;
  }
  const analysis = await analyzePull(github, target, deps, await readChanges(github, target));
  const commit = safeFixContents(analysis.report, analysis.texts);
  if (commit.files.length === 0) {
    await reply(fixReplies.nothingToFix());
    return;
  }
  try {
    const oid = await commitFixes(github, target, commit);
    await reply(fixReplies.committed(commit.titles, target.headRef, oid));
  } catch (error) {
    await reply(fixReplies.failed(describeError(error)));
  }
}

/** The Apply fixes button of a check run: the same rule as `/cuda-check fix`, for the person who clicked. */
export async function onRequestedAction(context: Context<'check_run.requested_action'>, deps: AppDeps): Promise<void> {
  if (context.payload.requested_action?.identifier !== APPLY_FIXES) return;
  const github = context.octokit as GitHub;
  const checkRun = context.payload.check_run;
  const access = new WriteAccess(github);
  for (const listed of await targetsOfCheck(github, context.payload, checkRun.pull_requests, checkRun.head_sha, {
    run: checkRun,
  })) {
    // The pull request as it is now (its state; the button may be clicked long after the run was posted).
    const target = await pullTarget(github, listed, listed.number, listed.installationId, listed.headSha);
    if (!target) continue;
    await applyFixes({
      github,
      deps,
      target,
      reply: replier(github, target),
      sender: context.payload.sender.login,
      access,
      log: context.log,
      deliveryId: context.id,
    });
  }
}
