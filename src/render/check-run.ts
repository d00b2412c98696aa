/**
 * Report → GitHub check-run output: title, summary (table per file, baseline provenance, knowledge date, fixes
 * as diffs), text (every finding with its reason) and annotations. Pure; sizes respect GitHub's limits.
 */
import { poolTableMarkdown } from './pools.js';
import { ruleCounts } from './text.js';
import type { Finding, Fix, Report, Severity, TextEdit } from '../finding.js';
import { fixesOnce } from './json.js';

export const CHECK_NAME = 'CUDA gatekeeper';
export const MAX_OUTPUT = 65_535;
export const ANNOTATION_BATCH = 50;

/** How the safe fixes of a run can be applied, which decides what its summary offers. */
export type FixesOffer =
  | { readonly kind: 'button' }
  /** The head branch lives in a fork: the App cannot push there. */
  | { readonly kind: 'fork'; readonly repo: string }
  /** The installation was granted `contents: read` only: no commit is possible. */
  | { readonly kind: 'read-only' }
  /** The pull request is closed or merged: nothing to commit to. */
  | { readonly kind: 'closed'; readonly state: string }
  /** No App around (the Action): the command line and the suggestions only. */
  | { readonly kind: 'local' }
  /** A merge queue's commit: the fixes belong on the pull request's branch. */
  | { readonly kind: 'queue'; readonly base: string }
  /** A Re-run of a commit the pull request has moved past: a commit there would be lost. */
  | { readonly kind: 'superseded' };

export interface CheckContext {
  readonly baselineOrigin: string;
  readonly knowledgeRetrieved: string;
  /**
   * Current text of the files of the commit the run is on: fixes are shown as diffs against them, and only they
   * get annotations (a finding about another file, such as the organisation's baseline, is listed in the summary).
   */
  readonly texts: ReadonlyMap<string, string>;
  /** CUDA-relevant files that could not be checked (too large, binary, unreadable) with the reason. */
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
  /** Why some changed files may not have been seen at all (GitHub's listing limits), when so. */
  readonly unseen?: string;
  /** What a file not checked makes the run (the baseline's `unchecked`): failure (default) or neutral. */
  readonly unchecked?: 'fail' | 'neutral';
  readonly relevantFiles: number;
  /** How the safe fixes can be applied (default: the Apply fixes button). */
  readonly fixes?: FixesOffer;
  /** Where a finding about a file outside the commit can be seen (the baseline files on default branches). */
  readonly links?: ReadonlyMap<string, string>;
  /** Sentences for the summary, above the footer (e.g. the organisation baseline this installation cannot see). */
  readonly notes?: readonly string[];
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
  /**
   * What the run says, as the data it was rendered from (JSON): two runs that say the same have equal data. The
   * footer's baseline commit and knowledge date are not part of it, so a run that differs only there is the same
   * verdict (src/github/check.ts digests it; no rendered Markdown is parsed back).
   */
  readonly verdict: unknown;
}

const LEVEL: Readonly<Record<Severity, Annotation['annotation_level']>> = {
  error: 'failure',
  warning: 'warning',
  notice: 'notice',
};

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
 * could not be checked, or GitHub could not list every changed file, the run fails (or, where the baseline says
 * `unchecked: neutral`, is neutral), and its title says what was not checked and why.
 */
export function renderCheckRun(report: Report, context: CheckContext): CheckOutput {
  const unchecked = context.skipped.length + (context.unseen ? 1 : 0);
  if (context.relevantFiles === 0 && report.findings.length === 0 && unchecked === 0) {
    return {
      conclusion: 'success',
      title: 'No CUDA-relevant files changed',
      summary: [
        'This pull request changes no Dockerfile, requirements, conda environment, pyproject.toml, pixi or lock file.',
        ...(context.notes ?? []),
        footer(context),
      ].join('\n\n'),
      annotations: [],
      verdict: { nothingRelevant: true, notes: context.notes ?? [], fixes: context.fixes ?? { kind: 'button' } },
    };
  }
  const [here, elsewhere] = partition(report.findings, (finding) => context.texts.has(finding.location.path));
  const summary = truncate(
    [
      summaryTable(report),
      report.fleet ? poolTableMarkdown(report.fleet) : '',
      elsewhereSection(elsewhere, context),
      fixesSection(report, context),
      uncheckedSection(context),
      ...(context.notes ?? []),
      footer(context),
    ]
      .filter(Boolean)
      .join('\n\n'),
  );
  const text = report.findings.length > 0 ? truncate(report.findings.map(detail).join('\n\n')) : undefined;
  const counts = report.findings.length === 0 ? '' : countsTitle(report);
  const title = unchecked === 0 ? countsTitle(report) : [counts, uncheckedTitle(context)].filter(Boolean).join('; ');
  return {
    conclusion:
      report.counts.error > 0
        ? 'failure'
        : unchecked > 0
          ? context.unchecked === 'neutral'
            ? 'neutral'
            : 'failure'
          : 'success',
    title,
    summary,
    ...(text ? { text } : {}),
    annotations: here.map((finding) => annotation(finding, context.texts.get(finding.location.path))),
    verdict: verdictData(report, context),
  };
}

/**
 * Everything a run's output is rendered from but the footer's baseline origin and knowledge date: the report, what
 * was not checked, how fixes are offered, the notes, and the texts the fixes' diffs are shown against.
 */
function verdictData(report: Report, context: CheckContext): unknown {
  // Each list of edits once: findings share lists (a unit's fix, a family move), and a digest of every copy grew with
  // the square of the pins (see fixesOnce).
  const lists = new Set<Fix['edits']>();
  for (const finding of report.findings) {
    if (finding.fix) lists.add(finding.fix.edits);
    for (const option of finding.suggestions ?? []) lists.add(option.edits);
  }
  const edited = new Set<string>();
  for (const edits of lists) for (const edit of edits) edited.add(edit.path);
  return {
    report: { ...report, findings: fixesOnce(report.findings) },
    skipped: context.skipped,
    unseen: context.unseen ?? null,
    unchecked: context.unchecked ?? 'fail',
    relevantFiles: context.relevantFiles,
    fixes: context.fixes ?? { kind: 'button' },
    // The links shown: those of findings about files outside the commit (a baseline file at its commit).
    links: [...(context.links ?? [])].filter(([path]) =>
      report.findings.some((finding) => finding.location.path === path && !context.texts.has(path)),
    ),
    notes: context.notes ?? [],
    texts: [...edited].sort().map((path) => [path, context.texts.get(path) ?? null]),
    annotated: [...new Set(report.findings.map((finding) => finding.location.path))]
      .filter((path) => context.texts.has(path))
      .sort(),
  };
}

/** "1 file not checked (uv.lock: 1.3 MB, over the 1 MiB size limit)", or what GitHub did not list. */
function uncheckedTitle(context: CheckContext): string {
  const parts: string[] = [];
  const [first, ...rest] = context.skipped;
  if (first) {
    const count = context.skipped.length;
    parts.push(
      `${count} file${count === 1 ? '' : 's'} not checked (${first.path}: ${first.reason}${rest.length ? `; and ${rest.length} more` : ''})`,
    );
  }
  if (context.unseen) parts.push(`not every changed file was seen (${context.unseen})`);
  return parts.join('; ');
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}

/** Findings about files that are not in the commit (baseline files read from default branches), with links. */
function elsewhereSection(findings: readonly Finding[], context: CheckContext): string {
  if (findings.length === 0) return '';
  const lines = findings.map((finding) => {
    const { path, start } = finding.location;
    const link = context.links?.get(path);
    const where = link ? `[\`${path}:${start.line}\`](${link}#L${start.line})` : `\`${path}:${start.line}\``;
    return `- **${finding.severity}** ${where}: ${finding.message} (${finding.ruleId})`;
  });
  return `### Baseline problems\n\nThese are in baseline files on default branches, not in this pull request:\n\n${lines.join('\n')}`;
}

/** The check could not run: a failing run with every cause, so nothing unchecked passes. */
export function renderFailure(reason: string): CheckOutput {
  return {
    conclusion: 'failure',
    title: 'cuda-gatekeeper could not check this pull request',
    summary: `${reason}\n\nNothing was checked, so the check fails closed. Re-run it with the **Re-run** button or a \`/cuda-check\` comment once the cause is gone.`,
    annotations: [],
    verdict: { failed: reason },
  };
}

function summaryTable(report: Report): string {
  const waived = report.waived
    ? ` ${report.waived} finding${report.waived === 1 ? ' is' : 's are'} waived by the baseline.`
    : '';
  if (report.findings.length === 0)
    return `Checked ${report.filesChecked} file${report.filesChecked === 1 ? '' : 's'}: no CUDA problems found.${waived}`;
  const byFile = new Map<string, Record<Severity, number>>();
  for (const finding of report.findings) {
    const row = byFile.get(finding.location.path) ?? { error: 0, warning: 0, notice: 0 };
    row[finding.severity]++;
    byFile.set(finding.location.path, row);
  }
  const rows = [...byFile].map(([path, row]) => `| \`${path}\` | ${row.error} | ${row.warning} | ${row.notice} |`);
  const rules = ruleCounts(report);
  const byRule =
    rules.length > 1 ? ` By rule: ${rules.map(([rule, count]) => `\`${rule}\` ${count}`).join(', ')}.` : '';
  return [
    `Checked ${report.filesChecked} file${report.filesChecked === 1 ? '' : 's'}.${byRule}${waived}`,
    '',
    '| File | Errors | Warnings | Notices |',
    '|---|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

function fixesSection(report: Report, context: CheckContext): string {
  const fixes = report.findings.filter((finding) => finding.fix?.safety === 'safe');
  if (fixes.length === 0) return '';
  // One diff per fix: a fix that resolves several findings (the same edits) is shown once, naming each of them.
  const byEdits = new Map<string, Finding[]>();
  // One key per list of edits (findings share lists: a unit's fix, offered by each of its claims).
  const keys = new Map<Fix['edits'], string>();
  for (const finding of fixes) {
    const edits = finding.fix!.edits;
    let key = keys.get(edits);
    if (key === undefined) keys.set(edits, (key = JSON.stringify(edits)));
    const group = byEdits.get(key);
    if (group) group.push(finding);
    else byEdits.set(key, [finding]);
  }
  const blocks = [...byEdits.values()].map((group) => {
    const [first] = group as [Finding, ...Finding[]];
    const where = group
      .map((finding) => `${finding.ruleId}, \`${finding.location.path}:${finding.location.start.line}\``)
      .join('; ');
    return `**${first.fix!.title}** (${where})\n\n\`\`\`diff\n${diff(first.fix!.edits, context.texts)}\n\`\`\``;
  });
  return `### Safe fixes\n\n${howToApply(context.fixes ?? { kind: 'button' })}\n\n${blocks.join('\n\n')}`;
}

function howToApply(offer: FixesOffer): string {
  switch (offer.kind) {
    case 'button':
      return 'Apply them with the **Apply fixes** button, the review suggestions, `/cuda-check fix`, or `cuda-gatekeeper check --fix` locally.';
    case 'fork':
      return `This pull request comes from the fork \`${offer.repo}\`. The app can commit only to repositories it is installed on, so there is no **Apply fixes** button: apply the review suggestions (**Commit suggestion**), or run \`cuda-gatekeeper check --fix\` locally and push.`;
    case 'read-only':
      return 'This installation may read contents but not write them, so there is no **Apply fixes** button: apply the review suggestions (**Commit suggestion**), or run `cuda-gatekeeper check --fix` locally and push. To commit fixes from here, give the App the **Contents: Read and write** repository permission (its settings, Permissions & events) and accept the new permission on the installation.';
    case 'closed':
      return `This pull request is ${offer.state}, so nothing is committed to it: the fixes below are for a new pull request.`;
    case 'local':
      return 'Apply them with `cuda-gatekeeper check --fix` (in a checkout of this branch), then commit and push.';
    case 'queue':
      return `This is a merge queue's commit for \`${offer.base}\`, so nothing is committed to it: remove the pull request from the queue, apply the fixes on its branch (\`cuda-gatekeeper check --fix\`), and queue it again.`;
    case 'superseded':
      return "This run is of a commit the pull request has moved past, so there is no **Apply fixes** button (a commit would not land on the pull request's head): the newest commit's run offers the fixes that still apply.";
  }
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

function uncheckedSection(context: CheckContext): string {
  if (context.skipped.length === 0 && !context.unseen) return '';
  const effect =
    context.unchecked === 'neutral'
      ? 'The baseline says `unchecked: neutral`, so the run is neutral rather than a pass (branch protection lets neutral through).'
      : `A file that was not checked is not a pass, so the run fails. ${
          context.fixes?.kind === 'local'
            ? 'Re-run the job'
            : 'Re-run it with the **Re-run** button or a `/cuda-check` comment'
        } once the cause is gone; a baseline with \`unchecked: neutral\` makes such runs neutral instead.`;
  const lines = [
    ...(context.unseen ? [`- Not every changed file was seen: ${context.unseen}.`] : []),
    ...context.skipped.map((entry) => `- \`${entry.path}\`: ${entry.reason}`),
  ];
  return `### Not checked\n\n${lines.join('\n')}\n\n${effect}`;
}

function footer(context: CheckContext): string {
  // The `/cuda-check` commands are the App's; in the Action (fixes offered locally) the job is re-run instead.
  const commands =
    context.fixes?.kind === 'local'
      ? 'Re-run the job to check again; `cuda-gatekeeper check --verbose` shows each finding with its sources.'
      : "Comment `/cuda-check` to re-run, `/cuda-check explain <rule>` for a rule's documentation.";
  return `<sub>Baseline: ${context.baselineOrigin}. Knowledge base: data retrieved ${context.knowledgeRetrieved}. ${commands}</sub>`;
}

function detail(finding: Finding): string {
  const where = `${finding.location.path}:${finding.location.start.line}:${finding.location.start.column}`;
  const lines = [`**${finding.severity}** \`${where}\` ${finding.message} ([${finding.ruleId}](${finding.docsUrl}))`];
  if (finding.help) lines.push(`> ${finding.help}`);
  for (const related of finding.related)
    lines.push(`> see \`${related.location.path}:${related.location.start.line}\`: ${related.message}`);
  for (const suggestion of finding.suggestions ?? []) lines.push(`> option: ${suggestion.title}`);
  return lines.join('\n');
}

/** The annotation of a finding, its lines kept inside the file when its text is known. */
export function annotation(finding: Finding, text?: string): Annotation {
  const location = text === undefined ? finding.location : insideFile(finding.location, text);
  const sameLine = location.start.line === location.end.line;
  const details = [
    finding.help,
    ...finding.related.map((related) => `${related.location.path}:${related.location.start.line}: ${related.message}`),
    finding.fix
      ? `Fix (${finding.fix.safety}): ${finding.fix.title}${finding.fix.verification ? ` (${finding.fix.verification})` : ''}`
      : undefined,
  ]
    .filter(Boolean)
    .join('\n');
  return {
    path: location.path,
    start_line: location.start.line,
    end_line: Math.max(location.end.line, location.start.line),
    ...(sameLine
      ? { start_column: location.start.column, end_column: Math.max(location.end.column, location.start.column) }
      : {}),
    annotation_level: LEVEL[finding.severity],
    message: finding.message.slice(0, 64_000),
    title: finding.ruleId,
    ...(details ? { raw_details: details.slice(0, 64_000) } : {}),
  };
}

/**
 * A location with its lines no further than the file's last line (an end at the file's end counts as its last line).
 */
function insideFile(location: Finding['location'], text: string): Finding['location'] {
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < text.length - 1; i = text.indexOf('\n', i + 1)) lines++;
  const clamp = (position: Finding['location']['start']) =>
    position.line <= lines ? position : { line: lines, column: 1, offset: position.offset };
  return { ...location, start: clamp(location.start), end: clamp(location.end) };
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
