import type { Report } from '../finding.js';

/** Findings as data (schema version 1): stable keys, positions 1-based, edit ranges as offsets. */
export function renderJson(report: Report, meta: Readonly<Record<string, unknown>> = {}): string {
  return `${JSON.stringify({ version: 1, ...meta, filesChecked: report.filesChecked, counts: report.counts, findings: report.findings }, null, 2)}\n`;
}
