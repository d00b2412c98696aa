import type { Finding, Report } from '../finding.js';
import type { AnyRule } from '../rule.js';
import { docsUrl } from '../rule.js';
import type { SourceText } from '../parsers/source.js';

const LEVEL = { error: 'error', warning: 'warning', notice: 'note' } as const;

export interface SarifOptions {
  readonly rules: readonly AnyRule[];
  readonly version: string;
  /** Map a finding path to the URI relative to the working directory. */
  readonly uri?: (path: string) => string;
  /** Source texts, to express fixes as SARIF replacements with line/column regions. */
  readonly sources?: ReadonlyMap<string, SourceText>;
}

/** SARIF 2.1.0 for code scanning: one run, the rule catalogue, results with regions and fixes. */
export function renderSarif(report: Report, options: SarifOptions): string {
  const uri = options.uri ?? ((path: string) => path);
  const ruleIndex = new Map(options.rules.map((rule, index) => [rule.id, index]));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'cuda-gatekeeper',
            version: options.version,
            informationUri: 'https://github.com/cuda-gatekeeper/cuda-gatekeeper',
            rules: options.rules.map((rule) => ({
              id: rule.id,
              name: rule.id.replace(/(^|-)([a-z])/g, (_m, _d: string, c: string) => c.toUpperCase()),
              shortDescription: { text: rule.description },
              helpUri: docsUrl(rule.id),
              defaultConfiguration: { level: LEVEL[rule.defaultSeverity] },
            })),
          },
        },
        results: report.findings.map((finding) => result(finding, uri, ruleIndex, options.sources)),
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}

function region(location: Finding['location']) {
  return {
    startLine: location.start.line,
    startColumn: location.start.column,
    endLine: location.end.line,
    endColumn: Math.max(location.end.column, location.start.line === location.end.line ? location.start.column : 1),
  };
}

function result(finding: Finding, uri: (path: string) => string, ruleIndex: ReadonlyMap<string, number>, sources?: ReadonlyMap<string, SourceText>) {
  const fixes = finding.fix && sources ? [sarifFix(finding.fix, uri, sources)].filter((fix) => fix !== undefined) : [];
  return {
    ruleId: finding.ruleId,
    ...(ruleIndex.has(finding.ruleId) ? { ruleIndex: ruleIndex.get(finding.ruleId) } : {}),
    level: LEVEL[finding.severity],
    message: { text: finding.help ? `${finding.message}. ${finding.help}` : finding.message },
    locations: [{ physicalLocation: { artifactLocation: { uri: uri(finding.location.path) }, region: region(finding.location) } }],
    ...(finding.related.length
      ? {
          relatedLocations: finding.related.map((related, id) => ({
            id,
            message: { text: related.message },
            physicalLocation: { artifactLocation: { uri: uri(related.location.path) }, region: region(related.location) },
          })),
        }
      : {}),
    ...(fixes.length ? { fixes } : {}),
  };
}

function sarifFix(fix: NonNullable<Finding['fix']>, uri: (path: string) => string, sources: ReadonlyMap<string, SourceText>) {
  const byPath = new Map<string, (typeof fix.edits)[number][]>();
  for (const edit of fix.edits) byPath.set(edit.path, [...(byPath.get(edit.path) ?? []), edit]);
  const changes = [];
  for (const [path, edits] of byPath) {
    const source = sources.get(path);
    if (!source) return undefined;
    changes.push({
      artifactLocation: { uri: uri(path) },
      replacements: edits.map((edit) => {
        const start = source.position(edit.range[0]);
        const end = source.position(edit.range[1]);
        return {
          deletedRegion: { startLine: start.line, startColumn: start.column, endLine: end.line, endColumn: end.column },
          insertedContent: { text: edit.text },
        };
      }),
    });
  }
  return { description: { text: fix.title }, artifactChanges: changes };
}
