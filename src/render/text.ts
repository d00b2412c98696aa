import type { Finding, Report } from '../finding.js';

/** `path:line:col: severity: message [rule-id]` lines, then a one-line summary. */
export function renderText(report: Report, options: { readonly color?: boolean; readonly verbose?: boolean } = {}): string {
  const lines: string[] = [];
  for (const finding of report.findings) {
    lines.push(formatLine(finding, options.color ?? false));
    if (options.verbose) {
      if (finding.help) lines.push(`    why: ${finding.help}`);
      for (const related of finding.related) lines.push(`    see: ${related.location.path}:${related.location.start.line}:${related.location.start.column}: ${related.message}`);
      if (finding.fix) lines.push(`    fix (${finding.fix.safety}): ${finding.fix.title}${finding.fix.verification ? ` (${finding.fix.verification})` : ''}`);
      for (const suggestion of finding.suggestions ?? []) lines.push(`    option: ${suggestion.title}`);
    }
  }
  lines.push(summaryLine(report));
  return `${lines.join('\n')}\n`;
}

const COLORS = { error: '\x1b[31m', warning: '\x1b[33m', notice: '\x1b[36m' } as const;

function formatLine(finding: Finding, color: boolean): string {
  const { path, start } = finding.location;
  const severity = color ? `${COLORS[finding.severity]}${finding.severity}\x1b[0m` : finding.severity;
  return `${path}:${start.line}:${start.column}: ${severity}: ${finding.message} [${finding.ruleId}]`;
}

export function summaryLine(report: Report): string {
  const { error, warning, notice } = report.counts;
  const fixable = report.findings.filter((finding) => finding.fix?.safety === 'safe').length;
  return `${report.filesChecked} file${report.filesChecked === 1 ? '' : 's'} checked: ${error} error${error === 1 ? '' : 's'}, ${warning} warning${warning === 1 ? '' : 's'}, ${notice} notice${notice === 1 ? '' : 's'}${fixable ? ` (${fixable} fixable with --fix)` : ''}`;
}

/** The golden-file form used by rule fixtures: `path:line:col: message [rule-id]`. */
export function renderGolden(findings: readonly Finding[]): string {
  return findings.map((finding) => `${finding.location.path}:${finding.location.start.line}:${finding.location.start.column}: ${finding.message} [${finding.ruleId}]`).join('\n') + (findings.length ? '\n' : '');
}
