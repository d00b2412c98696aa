/**
 * Migration pull requests (baseline key `migration.pullRequests`, off by default): when a new organisation
 * baseline makes a repository's default branch fail, open one pull request with the reasons in its body. Where the
 * baseline no longer allows the repository's CUDA, the planner moves it to the newest CUDA the baseline allows (one
 * commit per unit, each move verified, as `/cuda-check upgrade` does); then the safe fixes of what remains are a
 * commit of their own. At most one per repository, updated in place on the app's own branch; default branches are
 * never pushed to.
 */
import type { Report } from '../finding.js';
import type { Baseline } from '../baseline/schema.js';
import type { ParsedFile } from '../parsers/facts.js';
import { safeFixContents, type FixCommit } from '../analysis/safe-fixes.js';
import { gate, type GateOptions } from '../gate.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { parseFile } from '../parsers/index.js';
import { plan, PlanError, type Plan } from '../plan/plan.js';
import { migrationBody } from '../render/github-prose.js';
import { planMarkdown } from '../render/markdown.js';
import { compareDotted } from '../util/dotted.js';
import { openOrUpdatePull, pushAppBranch, type BranchCommit } from './app-branch.js';
import type { GitHub } from './types.js';
import { upgradeCommits, type UpgradeCommit } from './upgrade.js';

export const MIGRATION_BRANCH = 'cuda-gatekeeper/baseline-migration';
export const MIGRATION_MARKER = '<!-- cuda-gatekeeper:migration -->';

export interface MigrationResult {
  readonly action: 'opened' | 'updated' | 'nothing to fix';
  readonly number?: number;
}

/** A repository's default branch as it was judged under the new baseline. */
export interface MigrationInput {
  readonly owner: string;
  readonly repo: string;
  readonly defaultBranch: string;
  /** The commit judged: the migration branch starts there. */
  readonly headSha: string;
  readonly report: Report;
  /** The texts the report's fixes apply to. */
  readonly texts: ReadonlyMap<string, string>;
  /** Where the new baseline comes from (`owner/.github:cuda-gatekeeper.yml@sha`), for the body. */
  readonly baselineOrigin: string;
  /** The files judged, and the baseline and options they were judged under: the planner moves them where needed. */
  readonly files?: readonly ParsedFile[];
  readonly baseline?: Baseline;
  readonly gateOptions?: GateOptions;
}

/** What the migration branch carries: the planned move (where the CUDA must move), then the safe fixes. */
export interface Migration {
  readonly plan?: Plan;
  readonly commits: readonly UpgradeCommit[];
  readonly fixes: FixCommit;
}

/**
 * The newest CUDA the baseline allows, where the report says the repository's CUDA is not allowed and the knowledge
 * base knows that release; undefined otherwise.
 */
function allowedTarget(report: Report, baseline: Baseline | undefined): string | undefined {
  if (!baseline?.cuda.allowed?.length) return undefined;
  if (!report.findings.some((finding) => finding.ruleId === 'cuda-not-allowed' && finding.severity === 'error'))
    return undefined;
  const kb = defaultKnowledgeBase();
  return baseline.cuda.allowed
    .filter((cuda) => kb.cudaExists(cuda) === 'yes')
    .sort(compareDotted)
    .at(-1);
}

/** The commits of a migration: a verified move to an allowed CUDA where needed, then the safe fixes left. */
export function migrationCommits(input: MigrationInput): Migration {
  const { report, texts, files, baseline } = input;
  const target = allowedTarget(report, baseline);
  let moved: Plan | undefined;
  if (target && files && baseline) {
    try {
      moved = plan(files, target, defaultKnowledgeBase(), baseline);
    } catch (error) {
      if (!(error instanceof PlanError)) throw error;
    }
  }
  if (!moved || moved.steps.length === 0 || !files || !baseline)
    return { commits: [], fixes: safeFixContents(report, texts) };
  const commits = upgradeCommits(moved, texts);
  // The safe fixes of the moved tree, judged again: they apply on top of the move.
  const after = new Map(texts);
  for (const commit of commits) for (const file of commit.files) after.set(file.path, file.contents);
  const reparsed = files.map((file) =>
    after.get(file.path) === texts.get(file.path) ? file : parseFile(file.path, after.get(file.path)!, file.kind),
  );
  const again = gate(reparsed, baseline, defaultKnowledgeBase(), input.gateOptions);
  return { plan: moved, commits, fixes: safeFixContents(again, after) };
}

export async function migrate(github: GitHub, input: MigrationInput): Promise<MigrationResult> {
  const { owner, repo, defaultBranch, headSha, report, baselineOrigin } = input;
  const migration = migrationCommits(input);
  const fixes = migration.fixes;
  const commits: readonly BranchCommit[] = [
    ...migration.commits,
    ...(fixes.files.length > 0
      ? [
          {
            headline: 'Follow the organisation CUDA baseline',
            body: fixes.titles.map((title) => `- ${title}`).join('\n'),
            files: fixes.files,
          },
        ]
      : []),
  ];
  if (commits.length === 0) return { action: 'nothing to fix' };
  await pushAppBranch(github, { owner, repo }, MIGRATION_BRANCH, headSha, commits);
  const titles = [
    ...(migration.plan
      ? [`Move to CUDA ${migration.plan.cuda}, the newest CUDA the baseline allows (the plan below)`]
      : []),
    ...fixes.titles,
  ];
  const planned = migration.plan ? `\n\n${planMarkdown(migration.plan, { for: 'pull' })}` : '';
  const body = `${MIGRATION_MARKER}\n${migrationBody(report, titles, baselineOrigin)}${planned}`;
  const pull = await openOrUpdatePull(
    github,
    { owner, repo },
    { branch: MIGRATION_BRANCH, base: defaultBranch, title: 'Follow the organisation CUDA baseline', body },
  );
  return { action: pull.action, number: pull.number };
}
