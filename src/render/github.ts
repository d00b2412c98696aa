import type { Finding, Report } from '../finding.js';

const LEVEL = { error: 'error', warning: 'warning', notice: 'notice' } as const;

/** GitHub Actions workflow commands (`::error file=…,line=…::message`), one per finding. */
export function renderGithubAnnotations(report: Report): string {
  return report.findings.map(annotation).join('\n') + (report.findings.length ? '\n' : '');
}

function annotation(finding: Finding): string {
  const { path, start, end } = finding.location;
  const properties = [
    `file=${escapeProperty(path)}`,
    `line=${start.line}`,
    `col=${start.column}`,
    `endLine=${end.line}`,
    ...(end.line === start.line ? [`endColumn=${Math.max(end.column, start.column)}`] : []),
    `title=${escapeProperty(finding.ruleId)}`,
  ];
  const body = finding.help ? `${finding.message}\n${finding.help}` : finding.message;
  return `::${LEVEL[finding.severity]} ${properties.join(',')}::${escapeData(body)}`;
}

/** A workflow command's data, escaped as the runner reads it (% CR LF). */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A workflow command's property value (`file=…`, `title=…`): its data escaping, and `:` and `,`. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
