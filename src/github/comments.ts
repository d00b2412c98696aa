/**
 * `/cuda-check` comments and the Apply fixes button. The bot keeps one comment per pull request, found by its
 * marker among the comments it wrote (paged: a pull request can have thousands) and updated in place.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from 'probot';
import { HELP, parseCommand } from './commands.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { plan } from '../plan/plan.js';
import { baselineMarkdown, planMarkdown } from '../render/markdown.js';
import { packageRoot } from '../util/package-root.js';
import { RULE_IDS } from '../../rules/index.js';
import { analyzePull } from './analyze.js';
import { APPLY_FIXES } from './check.js';
import { resolveBaseline } from './config.js';
import type { AppDeps } from './deps.js';
import { safeFixContents } from '../analysis/safe-fixes.js';
import { commitFixes, isFork } from './fixes.js';
import { partialQuery } from './graphql.js';
import { checkPull, describeError, type CheckOutcome } from './pull-check.js';
import { readBaselineFiles } from './read.js';
import { pullTarget, targetsOfCheck } from './targets.js';
import type { GitHub, PullTarget } from './types.js';

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
    if (id !== undefined) await github.rest.issues.updateComment({ owner: target.owner, repo: target.repo, comment_id: id, body: text });
    else await github.rest.issues.createComment({ owner: target.owner, repo: target.repo, issue_number: target.number, body: text });
  };
}

export async function onComment(context: Context<'issue_comment.created'>, deps: AppDeps): Promise<CheckOutcome | undefined> {
  const { comment, issue, repository, sender } = context.payload;
  if (!issue.pull_request || sender.type === 'Bot' || comment.user?.type === 'Bot' || comment.body.includes(COMMENT_MARKER)) return undefined;
  const command = parseCommand(comment.body);
  if (!command) return undefined;
  const github = context.octokit as GitHub;
  const repo = { owner: repository.owner.login, repo: repository.name };
  await github.rest.reactions.createForIssueComment({ ...repo, comment_id: comment.id, content: 'eyes' });
  const target = await pullTarget(github, repo, issue.number, context.payload.installation?.id ?? 0);
  if (!target) return undefined;
  const reply = replier(github, target);

  switch (command.kind) {
    case 'rerun':
      return checkPull(github, deps, context.log, { target, trigger: 'request', deliveryId: context.id });
    case 'help':
      await reply(`${command.problem ? `${command.problem}.\n\n` : ''}${HELP}`);
      return undefined;
    case 'explain': {
      if (!RULE_IDS.has(command.ruleId)) {
        await reply(
          `There is no rule \`${command.ruleId}\`. Rules: ${[...RULE_IDS]
            .sort()
            .map((id) => `\`${id}\``)
            .join(', ')}.`,
        );
        return undefined;
      }
      const readme = readFileSync(join(packageRoot(), 'rules', command.ruleId, 'README.md'), 'utf8');
      const withoutExamples = readme.split('\n## Examples')[0]!.trim();
      await reply(`${withoutExamples.replace(/^# /, '### ')}\n\nExamples: \`rules/${command.ruleId}/README.md\` in cuda-gatekeeper.`);
      return undefined;
    }
    case 'baseline': {
      const cached = deps.orgCache.get(target.installationId, repo.owner);
      const read = await readBaselineFiles(github, repo, cached === undefined);
      if (read.org?.state === 'unavailable') {
        await reply(`The organisation baseline could not be read: ${read.org.reason}.`);
        return undefined;
      }
      const org = read.org ? (read.org.state === 'found' ? read.org.config : null) : cached;
      if (read.org) deps.orgCache.set(target.installationId, repo.owner, org ?? null);
      const resolved = resolveBaseline(repo.owner, repo.repo, read.repoConfig, org);
      const problems = [...(resolved.repoFile?.problems.map((problem) => problem.message) ?? []), ...resolved.problems.map((problem) => problem.message)];
      await reply(baselineMarkdown(resolved.baseline, resolved.provenance, resolved.origin, problems));
      return undefined;
    }
    case 'fix': {
      const permission = await github.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: sender.login });
      if (!['admin', 'maintain', 'write'].includes(permission.data.permission) && permission.data.role_name !== 'maintain') {
        await reply(
          `Sorry @${sender.login}, only people with write access to ${repo.owner}/${repo.repo} can ask me to commit fixes. The review suggestions can still be applied by the author.`,
        );
        return undefined;
      }
      await applyFixes(github, target, deps, reply);
      return undefined;
    }
    case 'plan': {
      const changed = await github.paginate(github.rest.pulls.listFiles, { ...repo, pull_number: target.number, per_page: 100 });
      const analysis = await analyzePull(github, target, deps, changed);
      await reply(planMarkdown(plan(analysis.files, command.cuda, defaultKnowledgeBase(), analysis.baseline.baseline)));
      return undefined;
    }
  }
}

async function applyFixes(github: GitHub, target: PullTarget, deps: AppDeps, reply: (body: string) => Promise<void>): Promise<void> {
  if (isFork(target)) {
    await reply(
      `This pull request comes from the fork ${target.headRepo}. The app can commit only to repositories it is installed on, so it cannot push the fixes there. Apply the review suggestions with **Commit suggestion**, or run \`cuda-gatekeeper check --fix\` locally and push.`,
    );
    return;
  }
  const changed = await github.paginate(github.rest.pulls.listFiles, { owner: target.owner, repo: target.repo, pull_number: target.number, per_page: 100 });
  const analysis = await analyzePull(github, target, deps, changed);
  const commit = safeFixContents(analysis.report, analysis.texts);
  if (commit.files.length === 0) {
    await reply('There are no safe fixes to apply on this pull request.');
    return;
  }
  try {
    const oid = await commitFixes(github, target, commit);
    await reply(
      `Committed ${commit.titles.length} safe fix${commit.titles.length === 1 ? '' : 'es'} to \`${target.headRef}\` (${oid.slice(0, 7)}):\n\n${commit.titles.map((title) => `- ${title}`).join('\n')}`,
    );
  } catch (error) {
    await reply(
      `I could not commit the fixes: ${describeError(error)} If the branch moved, run the check again first; if the app lacks write access to contents, apply the suggestions instead.`,
    );
  }
}

/** The Apply fixes button of a check run (offered only where the branch can receive a commit). */
export async function onRequestedAction(context: Context<'check_run.requested_action'>, deps: AppDeps): Promise<void> {
  if (context.payload.requested_action?.identifier !== APPLY_FIXES) return;
  const github = context.octokit as GitHub;
  const run = context.payload.check_run;
  for (const target of await targetsOfCheck(github, context.payload, run.pull_requests, run.head_sha, { run }))
    await applyFixes(github, target, deps, replier(github, target));
}
