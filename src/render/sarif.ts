import { createHash } from 'node:crypto';
import { severityRank, type Finding, type Report } from '../finding.js';
import { FixPlaces } from './fix-places.js';
import type { AnyRule } from '../rule.js';
import { docsUrl } from '../rule.js';
import type { SourceText } from '../parsers/source.js';

const LEVEL = { error: 'error', warning: 'warning', notice: 'note' } as const;

export interface SarifOptions {
  readonly rules: readonly AnyRule[];
  readonly version: string;
  /** Map a finding path to the URI relative to the working directory. */
  readonly uri?: (path: string) => string;
  /** Source texts, to express fixes as SARIF replacements with line/column regions, and for fingerprints. */
  readonly sources?: ReadonlyMap<string, SourceText>;
  /** Each rule's README (its documentation), for `fullDescription` and `help`. */
  readonly docs?: ReadonlyMap<string, string>;
  /** Results per run at most (GitHub code scanning accepts 25,000; see MAX_RESULTS). */
  readonly maxResults?: number;
}

/**
 * GitHub code scanning's limits for an uploaded SARIF file: at most 25,000 results per run (only the first 5,000
 * are shown), 1,000 rules, 1,000 locations per result (docs.github.com/en/code-security/code-scanning/
 * integrating-with-code-scanning/sarif-support-for-code-scanning, "Specifying the results").
 */
export const MAX_RESULTS = 25_000;

/** Tags GitHub shows and filters by (`properties.tags`); every rule has its own entry (test/render/sarif.test.ts). */
export const RULE_TAGS: Readonly<Record<string, readonly string[]>> = {
  'arch-unsupported': ['cuda', 'gpu', 'docker', 'correctness'],
  'companion-mismatch': ['cuda', 'pytorch', 'dependencies', 'correctness'],
  'cpu-wheel': ['cuda', 'pytorch', 'dependencies', 'correctness'],
  'cuda-mismatch': ['cuda', 'pytorch', 'docker', 'dependencies', 'correctness'],
  'cuda-not-allowed': ['cuda', 'policy'],
  'driver-floor': ['cuda', 'driver', 'policy', 'correctness'],
  'exact-pin': ['dependencies', 'reproducibility'],
  'gpu-arch': ['cuda', 'gpu', 'policy', 'correctness'],
  'image-missing': ['docker', 'cuda', 'correctness'],
  'image-pin': ['docker', 'reproducibility'],
  'image-unknown': ['docker', 'kubernetes', 'cuda', 'coverage'],
  'index-url': ['pytorch', 'dependencies', 'correctness'],
  'invalid-suppression': ['configuration'],
  'missing-include': ['dependencies', 'configuration'],
  'package-not-allowed': ['dependencies', 'policy'],
  'parse-error': ['configuration'],
  'policy-error': ['configuration', 'policy'],
  prerelease: ['dependencies', 'reproducibility'],
  'wheel-missing': ['cuda', 'pytorch', 'dependencies', 'correctness'],
};

/** A repository path as a SARIF URI reference (RFC 3986): each segment percent-encoded, `/` kept. */
export function pathUri(path: string): string {
  return path
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join('/');
}

/** The README's "What it checks" section as plain text: the rule's `fullDescription`. */
function whatItChecks(readme: string): string | undefined {
  const section = /^## What it checks\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1]?.trim();
  return section
    ?.replace(/`([^`]*)`/g, '$1')
    .replace(/\*\*([^*]*)\*\*/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s*\n\s*/g, ' ');
}

/**
 * SARIF 2.1.0 for code scanning: one run, the rule catalogue with descriptions, help and tags, results with
 * regions, fixes and fingerprints that stay put when lines move. Past `maxResults`, the most severe results are
 * kept and a tool notification says how many were left out.
 */
export function renderSarif(report: Report, options: SarifOptions): string {
  const uri = options.uri ?? pathUri;
  const ruleIndex = new Map(options.rules.map((rule, index) => [rule.id, index]));
  const limit = options.maxResults ?? MAX_RESULTS;
  const ordered =
    report.findings.length > limit
      ? [...report.findings].sort((a, b) => severityRank[b.severity] - severityRank[a.severity]).slice(0, limit)
      : report.findings;
  const fingerprints = fingerprinter(options.sources);
  // A fix several results share is given with the first; the others name it (`properties.sameFixAs`, SARIF 2.1.0
  // §3.8 property bags), as the JSON report's `sameAs` does.
  const given = new FixPlaces();
  const left = report.findings.length - ordered.length;
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        // Code scanning keeps one analysis per category: ours replaces the previous cuda-gatekeeper upload, never
        // another tool's ("SARIF support for code scanning", runAutomationDetails: `id` is "category/run-id").
        automationDetails: { id: 'cuda-gatekeeper/' },
        tool: {
          driver: {
            name: 'cuda-gatekeeper',
            version: options.version,
            semanticVersion: options.version,
            informationUri: 'https://github.com/cuda-gatekeeper/cuda-gatekeeper',
            rules: options.rules.map((rule) => {
              const readme = options.docs?.get(rule.id);
              const full = readme ? whatItChecks(readme) : undefined;
              return {
                id: rule.id,
                name: rule.id.replace(/(^|-)([a-z])/g, (_m, _d: string, c: string) => c.toUpperCase()),
                shortDescription: { text: rule.description },
                fullDescription: { text: full ?? rule.description },
                helpUri: docsUrl(rule.id),
                help: {
                  text: `${full ?? rule.description} Documentation: ${docsUrl(rule.id)}`,
                  markdown: readme ?? `${rule.description}\n\n[Documentation](${docsUrl(rule.id)})`,
                },
                defaultConfiguration: { level: LEVEL[rule.defaultSeverity] },
                properties: {
                  tags: [...(RULE_TAGS[rule.id] ?? ['cuda'])],
                  precision: 'very-high',
                  'problem.severity': PROBLEM_SEVERITY[rule.defaultSeverity],
                },
              };
            }),
          },
        },
        invocations: [
          {
            executionSuccessful: true,
            ...(left > 0
              ? {
                  toolExecutionNotifications: [
                    {
                      level: 'warning',
                      message: {
                        text: `${left} of ${report.findings.length} results were left out: GitHub code scanning accepts at most ${limit} per run. The most severe are kept; run cuda-gatekeeper check for all of them.`,
                      },
                    },
                  ],
                }
              : {}),
          },
        ],
        results: ordered.map((finding, index) =>
          result(finding, index, uri, ruleIndex, fingerprints, options.sources, given),
        ),
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
}

const PROBLEM_SEVERITY = { error: 'error', warning: 'warning', notice: 'recommendation' } as const;

/**
 * `partialFingerprints` that survive lines moving: the rule, the file, the text of the finding's first line
 * (whitespace collapsed) and the message, hashed; a second finding with the same key gets its ordinal.
 */
function fingerprinter(sources: ReadonlyMap<string, SourceText> | undefined): (finding: Finding) => string {
  const seen = new Map<string, number>();
  return (finding) => {
    const source = sources?.get(finding.location.path);
    const at = finding.location.start.line;
    const line =
      source && at >= 1 && at <= source.lineCount
        ? source.slice(source.lineStart(at), source.lineEnd(at)).replace(/\s+/g, ' ').trim()
        : '';
    const key = createHash('sha256')
      .update(`${finding.ruleId}\0${finding.location.path}\0${line}\0${finding.message}`)
      .digest('hex')
      .slice(0, 32);
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    return `${key}:${count}`;
  };
}

function region(location: Finding['location']) {
  return {
    startLine: location.start.line,
    startColumn: location.start.column,
    endLine: location.end.line,
    endColumn: Math.max(location.end.column, location.start.line === location.end.line ? location.start.column : 1),
  };
}

/** SARIF message text is plain text in which `[`, `]` and `\\` are escaped (SARIF 2.1.0 §3.11.5). */
function plain(text: string): string {
  return text.replace(/[\\[\]]/g, (character) => `\\${character}`);
}

/**
 * The message, with each related location linked by its id (`[text](id)`, SARIF 2.1.0 §3.11.6: "embedded links"
 * to `relatedLocations`), which code scanning shows as links to those lines.
 */
function messageText(finding: Finding): string {
  const text = plain(finding.help ? `${finding.message}. ${finding.help}` : finding.message);
  if (finding.related.length === 0) return text;
  const links = finding.related.map((related, id) => `[${plain(related.message)}](${id})`);
  return `${text} See ${links.join('; ')}.`;
}

function result(
  finding: Finding,
  index: number,
  uri: (path: string) => string,
  ruleIndex: ReadonlyMap<string, number>,
  fingerprint: (finding: Finding) => string,
  sources: ReadonlyMap<string, SourceText> | undefined,
  given: FixPlaces,
) {
  const sameFixAs = finding.fix && given.before(finding.fix);
  const fix = finding.fix && sources && !sameFixAs ? sarifFix(finding.fix, uri, sources) : undefined;
  if (fix) given.written(finding.fix!, `/runs/0/results/${index}/fixes/0`);
  return {
    ruleId: finding.ruleId,
    ...(ruleIndex.has(finding.ruleId) ? { ruleIndex: ruleIndex.get(finding.ruleId) } : {}),
    level: LEVEL[finding.severity],
    message: { text: messageText(finding) },
    locations: [
      { physicalLocation: { artifactLocation: { uri: uri(finding.location.path) }, region: region(finding.location) } },
    ],
    ...(finding.related.length
      ? {
          relatedLocations: finding.related.map((related, id) => ({
            id,
            message: { text: related.message },
            physicalLocation: {
              artifactLocation: { uri: uri(related.location.path) },
              region: region(related.location),
            },
          })),
        }
      : {}),
    partialFingerprints: { 'cudaGatekeeperFinding/v1': fingerprint(finding) },
    ...(fix ? { fixes: [fix] } : {}),
    ...(sameFixAs ? { properties: { sameFixAs } } : {}),
  };
}

function sarifFix(
  fix: NonNullable<Finding['fix']>,
  uri: (path: string) => string,
  sources: ReadonlyMap<string, SourceText>,
) {
  const byPath = new Map<string, (typeof fix.edits)[number][]>();
  for (const edit of fix.edits) {
    const edits = byPath.get(edit.path);
    if (edits) edits.push(edit);
    else byPath.set(edit.path, [edit]);
  }
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
