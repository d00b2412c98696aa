/**
 * The baseline preview of a pull request to the organisation config repository, as check-run output (pure):
 * which repositories and open pull requests newly fail or pass under the proposed baseline.
 */
import type { PolicyProblem } from '../baseline/load.js';
import type { SourceText } from '../parsers/source.js';
import { MAX_OUTPUT, type CheckOutput } from './check-run.js';

export interface PreviewOutcome {
  readonly name: string;
  readonly url: string;
  /** Error-level findings under the current and the proposed baseline. */
  readonly before: number;
  readonly after: number;
  /** Whether any finding (of any level) differs. */
  readonly changed: boolean;
  /** Why part of it was not evaluated (files not checked, a tree GitHub cut short). */
  readonly incomplete?: string;
  /** The fleet's pools on which some image, environment or workload newly fails. */
  readonly pools?: readonly string[];
}

export type Verdict = 'newly fails' | 'newly passes' | 'findings change' | 'unchanged';

/**
 * One comparison decides everything the preview says: a repository or pull request newly fails when it gets its
 * first error, or when some unit of it newly fails on a pool (its pool lines count the same outcomes), so a neutral
 * preview with a "would newly fail on pool" line cannot be.
 */
export function verdict(outcome: PreviewOutcome): Verdict {
  if ((outcome.before === 0 && outcome.after > 0) || (outcome.pools?.length ?? 0) > 0) return 'newly fails';
  if (outcome.before > 0 && outcome.after === 0) return 'newly passes';
  return outcome.changed ? 'findings change' : 'unchanged';
}

export function previewOutput(
  outcomes: readonly PreviewOutcome[],
  repositories: number,
  unreadable: readonly { readonly name: string; readonly reason: string }[],
): CheckOutput {
  const of = (wanted: Verdict) => outcomes.filter((outcome) => verdict(outcome) === wanted);
  const breaking = of('newly fails');
  const fixed = of('newly passes');
  const changed = of('findings change');
  const incomplete = outcomes.filter((outcome) => outcome.incomplete);
  const title = breaking.length
    ? `Would newly fail ${breaking.length} repositor${breaking.length === 1 ? 'y or pull request' : 'ies and pull requests'}`
    : `Breaks nothing (${fixed.length} newly pass, ${changed.length} change findings)`;
  const row = (outcome: PreviewOutcome) =>
    `| [${outcome.name}](${outcome.url}) | ${verdict(outcome)} | ${outcome.before} | ${outcome.after} |${outcome.incomplete ? ` ${outcome.incomplete}` : ''} |`;
  const table = (rows: readonly PreviewOutcome[]) =>
    [
      '| repository / pull request | result | errors before | errors after | not evaluated |',
      '|---|---|---:|---:|---|',
      ...rows.map(row),
    ].join('\n');
  const interesting = [...breaking, ...fixed, ...changed];
  const shown = interesting.slice(0, 50);
  const gaps = [
    ...unreadable.map((entry) => `- \`${entry.name}\`: ${entry.reason}`),
    ...incomplete.map((outcome) => `- \`${outcome.name}\`: ${outcome.incomplete}`),
  ];
  // Per pool: how many repositories and pull requests the proposed baseline makes fail there.
  const byPool = new Map<string, number>();
  for (const outcome of outcomes) for (const pool of outcome.pools ?? []) byPool.set(pool, (byPool.get(pool) ?? 0) + 1);
  const pools = [...byPool].map(
    ([pool, count]) =>
      `- would newly fail on pool **${pool}**: ${count} repositor${count === 1 ? 'y or pull request' : 'ies and pull requests'}`,
  );
  const summary = [
    `Evaluated ${repositories} repositories (default branches) and their open pull requests under the current and the proposed baseline.`,
    '',
    `**${breaking.length}** newly fail, **${fixed.length}** newly pass, **${changed.length}** change findings, ${outcomes.length - interesting.length} unchanged.`,
    pools.length ? `\n${pools.join('\n')}` : '',
    interesting.length ? `\n${table(shown)}` : '',
    interesting.length > shown.length ? `\n… and ${interesting.length - shown.length} more in the details below.` : '',
    gaps.length
      ? `\n### Not evaluated\n\nThe preview is incomplete here, so it is not a pass:\n\n${gaps.join('\n')}`
      : '',
  ].join('\n');
  return {
    conclusion: breaking.length ? 'failure' : 'neutral',
    title: gaps.length && !breaking.length ? `${title}; ${gaps.length} not evaluated` : title,
    summary: summary.slice(0, MAX_OUTPUT),
    text: table(outcomes).slice(0, MAX_OUTPUT),
    annotations: [],
    verdict: { preview: outcomes, repositories, unreadable },
  };
}

/** The proposed baseline is invalid: positioned annotations on the config file, nothing previewed. */
export function invalidBaselineOutput(
  path: string,
  source: SourceText,
  problems: readonly PolicyProblem[],
): CheckOutput {
  return {
    conclusion: 'failure',
    title: `The new baseline is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'})`,
    summary: 'Nothing was previewed: fix the baseline first.',
    annotations: problems.map((problem) => {
      const start = source.position(problem.span.start);
      const end = source.position(problem.span.end);
      return {
        path,
        start_line: start.line,
        end_line: Math.max(end.line, start.line),
        annotation_level: 'failure' as const,
        message: problem.message,
        title: 'policy-error',
      };
    }),
    verdict: {
      invalid: path,
      problems: problems.map((problem) => [problem.span.start, problem.span.end, problem.message]),
    },
  };
}

export function removedBaselineOutput(path: string): CheckOutput {
  return {
    conclusion: 'neutral',
    title: 'The organisation baseline is removed',
    summary: `This pull request deletes \`${path}\`; repositories fall back to their own files or the bundled baseline.`,
    annotations: [],
    verdict: { removed: path },
  };
}
