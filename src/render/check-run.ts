/**
 * Report → GitHub check-run output: title, summary (table per file, baseline provenance, knowledge date, fixes
 * as diffs), text (every finding with its reason) and annotations. Pure; sizes respect GitHub's limits.
 */
import type { Finding, Report, Severity, TextEdit } from '../finding.js';

export const CHECK_NAME = 'CUDA gatekeeper';
export const MAX_OUTPUT = 65_535;
export const ANNOTATION_BATCH = 50;

export interface CheckContext {
  readonly baselineOrigin: string;
  readonly knowledgeRetrieved: string;
  /** Current text of files, to show fixes as diffs. */
  readonly texts: ReadonlyMap<string, string>;
  /** CUDA-relevant files that could not be checked (too large, binary, unreadable) with the reason. */
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
  readonly relevantFiles: number;
  /** The head repository, when the pull request comes from a fork (no commit can be pushed to it). */
  readonly fork?: string;
}

export interface Annotation {
  readonly path: string;
  readonly start_line: number;
  readonly end_line: number;
  readonly start_column?: number;
  readonly end_column?: number;
  readonly annotation_level: 'failure' | 'warning' | 'notice';
  readonly message: string;
  readonly title: string;
  readonly raw_details?: string;
}

export interface CheckOutput {
  readonly conclusion: 'success' | 'failure' | 'neutral';
  readonly title: string;
  readonly summary: string;
  readonly text?: string;
  readonly annotations: readonly Annotation[];
}

const LEVEL: Readonly<Record<Severity, Annotation['annotation_level']>> = { error: 'failure', warning: 'warning', notice: 'notice' };

export function countsTitle(report: Report): string {
  const { error, warning, notice } = report.counts;
  if (error + warning + notice === 0) return 'No CUDA problems found';
  const parts = [
    [error, 'error'],
    [warning, 'warning'],
    [notice, 'notice'],
  ]
    .filter(([count]) => (count as number) > 0)
    .map(([count, word]) => `${count} ${word}${count === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/**
 * The check run for a report. Errors fail it. A check never claims what it did not do: when a CUDA-relevant file
 * could not be checked, the conclusion is `neutral` (not `success`) and the summary says which and why.
 */
export function renderCheckRun(report: Report, context: CheckContext): CheckOutput {
  if (context.relevantFiles === 0 && report.findings.length === 0 && context.skipped.length === 0) {
    return {
      conclusion: 'success',
      title: 'No CUDA-relevant files changed',
      summary: `This pull request changes no Dockerfile, requirements, conda environment or pyproject.toml file.\n\n${footer(context)}`,
      annotations: [],
    };
  }
  const summary = truncate([summaryTable(report), fixesSection(report, context), skippedSection(context), footer(context)].filter(Boolean).join('\n\n'));
  const text = report.findings.length > 0 ? truncate(report.findings.map(detail).join('\n\n')) : undefined;
  const unchecked = context.skipped.length;
  const title =
    unchecked === 0
      ? countsTitle(report)
      : `${report.findings.length === 0 ? 'No CUDA problems found' : countsTitle(report)}; ${unchecked} file${unchecked === 1 ? '' : 's'} not checked`;
  return {
    conclusion: report.counts.error > 0 ? 'failure' : unchecked > 0 ? 'neutral' : 'success',
    title,
    summary,
    ...(text ? { text } : {}),
    annotations: report.findings.map(annotation),
  };
}

/** The check could not run: a failing run with every cause, so nothing unchecked passes. */
export function renderFailure(reason: string): CheckOutput {
  return {
    conclusion: 'failure',
    title: 'cuda-gatekeeper could not check this pull request',
    summary: `${reason}\n\nNothing was checked, so the check fails closed. Re-run it with the **Re-run** button or a \`/cuda-check\` comment once the cause is gone.`,
    annotations: [],
  };
}

function summaryTable(report: Report): string {
  const waived = report.waived ? ` ${report.waived} finding${report.waived === 1 ? ' is' : 's are'} waived by the baseline.` : '';
  if (report.findings.length === 0) return `Checked ${report.filesChecked} file${report.filesChecked === 1 ? '' : 's'}: no CUDA problems found.${waived}`;
  const byFile = new Map<string, Record<Severity, number>>();
  for (const finding of report.findings) {
    const row = byFile.get(finding.location.path) ?? { error: 0, warning: 0, notice: 0 };
    row[finding.severity]++;
    byFile.set(finding.location.path, row);
  }
  const rows = [...byFile].map(([path, row]) => `| \`${path}\` | ${row.error} | ${row.warning} | ${row.notice} |`);
  return [`Checked ${report.filesChecked} files.${waived}`, '', '| File | Errors | Warnings | Notices |', '|---|---:|---:|---:|', ...rows].join('\n');
}

function fixesSection(report: Report, context: CheckContext): string {
  const fixes = report.findings.filter((finding) => finding.fix?.safety === 'safe');
  if (fixes.length === 0) return '';
  const blocks = fixes.map(
    (finding) =>
      `**${finding.fix!.title}** (${finding.ruleId}, \`${finding.location.path}:${finding.location.start.line}\`)\n\n\`\`\`diff\n${diff(finding.fix!.edits, context.texts)}\n\`\`\``,
  );
  const how = context.fork
    ? `This pull request comes from the fork \`${context.fork}\`. The app can commit only to repositories it is installed on, so there is no **Apply fixes** button: apply the review suggestions (**Commit suggestion**), or run \`cuda-gatekeeper check --fix\` locally and push.`
    : 'Apply them with the **Apply fixes** button, the review suggestions, `/cuda-check fix`, or `cuda-gatekeeper check --fix` locally.';
  return `### Safe fixes\n\n${how}\n\n${blocks.join('\n\n')}`;
}

/** Changed lines as a small unified diff: `- old` / `+ new` per touched line. */
export function diff(edits: readonly TextEdit[], texts: ReadonlyMap<string, string>): string {
  const out: string[] = [];
  const byPath = new Map<string, TextEdit[]>();
  for (const edit of edits) byPath.set(edit.path, [...(byPath.get(edit.path) ?? []), edit]);
  for (const [path, list] of byPath) {
    const text = texts.get(path);
    if (text === undefined) continue;
    const lineStart = (offset: number): number => text.lastIndexOf('\n', offset - 1) + 1;
    const lineEnd = (offset: number): number => {
      const end = text.indexOf('\n', offset);
      return end < 0 ? text.length : end;
    };
    const start = Math.min(...list.map((edit) => lineStart(edit.range[0])));
    const end = Math.max(...list.map((edit) => lineEnd(edit.range[1])));
    let after = text.slice(start, end);
    for (const edit of [...list].sort((a, b) => b.range[0] - a.range[0]))
      after = after.slice(0, edit.range[0] - start) + edit.text + after.slice(edit.range[1] - start);
    out.push(
      `--- ${path}`,
      ...text
        .slice(start, end)
        .split('\n')
        .map((line) => `- ${line}`),
      ...after.split('\n').map((line) => `+ ${line}`),
    );
  }
  return out.join('\n');
}

function skippedSection(context: CheckContext): string {
  if (context.skipped.length === 0) return '';
  return `### Not checked\n\nThese CUDA-relevant files could not be checked, so the check is neutral rather than a pass:\n\n${context.skipped.map((entry) => `- \`${entry.path}\`: ${entry.reason}`).join('\n')}`;
}

function footer(context: CheckContext): string {
  return `<sub>Baseline: ${context.baselineOrigin}. Knowledge base: data retrieved ${context.knowledgeRetrieved}. Comment \`/cuda-check\` to re-run, \`/cuda-check explain <rule>\` for a rule's documentation.</sub>`;
}

function detail(finding: Finding): string {
  const where = `${finding.location.path}:${finding.location.start.line}:${finding.location.start.column}`;
  const lines = [`**${finding.severity}** \`${where}\` ${finding.message} ([${finding.ruleId}](${finding.docsUrl}))`];
  if (finding.help) lines.push(`> ${finding.help}`);
  for (const related of finding.related) lines.push(`> see \`${related.location.path}:${related.location.start.line}\`: ${related.message}`);
  for (const suggestion of finding.suggestions ?? []) lines.push(`> option: ${suggestion.title}`);
  return lines.join('\n');
}

export function annotation(finding: Finding): Annotation {
  const { location } = finding;
  const sameLine = location.start.line === location.end.line;
  const details = [
    finding.help,
    ...finding.related.map((related) => `${related.location.path}:${related.location.start.line}: ${related.message}`),
    finding.fix ? `Fix (${finding.fix.safety}): ${finding.fix.title}${finding.fix.verification ? ` (${finding.fix.verification})` : ''}` : undefined,
  ]
    .filter(Boolean)
    .join('\n');
  return {
    path: location.path,
    start_line: location.start.line,
    end_line: Math.max(location.end.line, location.start.line),
    ...(sameLine ? { start_column: location.start.column, end_column: Math.max(location.end.column, location.start.column) } : {}),
    annotation_level: LEVEL[finding.severity],
    message: finding.message.slice(0, 64_000),
    title: finding.ruleId,
    ...(details ? { raw_details: details.slice(0, 64_000) } : {}),
  };
}

function truncate(text: string): string {
  if (text.length <= MAX_OUTPUT) return text;
  const note = '\n\n… (truncated: GitHub limits this field to 65,535 characters; every finding is still annotated)';
  return text.slice(0, MAX_OUTPUT - note.length) + note;
}

export function batches<T>(items: readonly T[], size = ANNOTATION_BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
