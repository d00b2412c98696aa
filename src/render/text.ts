import type { Finding, Report } from '../finding.js';
import { poolTableText } from './pools.js';

/** `path:line:col: severity: message [rule-id]` lines, then a one-line summary. */
export function renderText(
  report: Report,
  options: { readonly color?: boolean; readonly verbose?: boolean } = {},
): string {
  const lines: string[] = [];
  for (const finding of report.findings) {
    lines.push(formatLine(finding, options.color ?? false));
    if (options.verbose) {
      if (finding.help) lines.push(`    why: ${escapeControl(finding.help)}`);
      for (const related of finding.related)
        lines.push(
          `    see: ${escapeControl(related.location.path)}:${related.location.start.line}:${related.location.start.column}: ${escapeControl(related.message)}`,
        );
      if (finding.fix)
        lines.push(
          `    fix (${finding.fix.safety}): ${escapeControl(finding.fix.title)}${finding.fix.verification ? ` (${escapeControl(finding.fix.verification)})` : ''}`,
        );
      for (const suggestion of finding.suggestions ?? []) lines.push(`    option: ${escapeControl(suggestion.title)}`);
    }
  }
  if (options.verbose && report.fleet) lines.push(...poolTableText(report.fleet, escapeControl));
  lines.push(summaryLine(report));
  return `${lines.join('\n')}\n`;
}

const COLORS = { error: '\x1b[31m', warning: '\x1b[33m', notice: '\x1b[36m' } as const;

function formatLine(finding: Finding, color: boolean): string {
  const { path, start } = finding.location;
  const severity = color ? `${COLORS[finding.severity]}${finding.severity}\x1b[0m` : finding.severity;
  return `${escapeControl(path)}:${start.line}:${start.column}: ${severity}: ${escapeControl(finding.message)} [${finding.ruleId}]`;
}

export function summaryLine(report: Report): string {
  const { error, warning, notice } = report.counts;
  const fixable = report.findings.filter((finding) => finding.fix?.safety === 'safe').length;
  const rules = ruleCounts(report);
  return `${report.filesChecked} file${report.filesChecked === 1 ? '' : 's'} checked: ${error} error${error === 1 ? '' : 's'}, ${warning} warning${warning === 1 ? '' : 's'}, ${notice} notice${notice === 1 ? '' : 's'}${rules.length > 1 ? `; by rule: ${rules.map(([rule, count]) => `${rule} ${count}`).join(', ')}` : ''}${fixable ? ` (${fixable} fixable with --fix)` : ''}`;
}

/** Findings per rule, the most frequent first (what a first screen of many findings is mostly about). */
export function ruleCounts(report: Pick<Report, 'findings'>): [string, number][] {
  const counts = new Map<string, number>();
  for (const finding of report.findings) counts.set(finding.ruleId, (counts.get(finding.ruleId) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

/** The golden-file form used by rule fixtures: `path:line:col: message [rule-id]`. */
export function renderGolden(findings: readonly Finding[]): string {
  return (
    findings
      .map(
        (finding) =>
          `${finding.location.path}:${finding.location.start.line}:${finding.location.start.column}: ${finding.message} [${finding.ruleId}]`,
      )
      .join('\n') + (findings.length ? '\n' : '')
  );
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * Text with its control characters shown as escapes (`\x1b`, `\n`), so a crafted file name or content cannot
 * print terminal sequences or start a line that a CI runner reads as a workflow command (`::error …`).
 */
export function escapeControl(text: string): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROL, (char) =>
    char === '\n'
      ? '\\n'
      : char === '\r'
        ? '\\r'
        : char === '\t'
          ? '\\t'
          : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
