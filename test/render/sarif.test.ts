/**
 * SARIF as GitHub code scanning takes it: valid against the SARIF 2.1.0 JSON schema (the schema file Microsoft ships in
 * @microsoft/jest-sarif, validated with ajv's draft-04 support), with what GitHub's documentation says it reads
 * (docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning):
 * `partialFingerprints`, `rules[].fullDescription`, `help.text`/`help.markdown`, `properties.tags`; URIs
 * percent-encoded; at most 25,000 results per run.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import type { Finding, Report } from '../../src/finding.js';
import { pathUri, renderSarif, RULE_TAGS } from '../../src/render/sarif.js';
import { withoutExamples } from '../../src/rule.js';
import { RULES } from '../../rules/index.js';
import { ROOT } from '../support/harness.js';
import { runCli } from '../support/cli.js';
import { codeBlock } from '../support/code-block.js';

const require = createRequire(import.meta.url);
const schema = JSON.parse(
  readFileSync(require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'), 'utf8'),
) as object;
// A CommonJS module with `exports.default`: under NodeNext its default import is the module object.
const Ajv = (
  AjvDraft04 as unknown as {
    default: new (options: object) => { compile(schema: object): ValidateFunction; addFormat: unknown };
  }
).default;
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
// The schema's `uri` and `date-time` formats are checked too (ajv-formats), not ignored with a warning.
(addFormats as unknown as (instance: unknown) => void)(ajv);
const validate = ajv.compile(schema);

interface Sarif {
  runs: {
    tool: {
      driver: {
        rules: {
          id: string;
          fullDescription: { text: string };
          help: { text: string; markdown: string };
          properties: { tags: string[] };
        }[];
      };
    };
    invocations: { toolExecutionNotifications?: { message: { text: string } }[] }[];
    results: {
      ruleId: string;
      level: string;
      partialFingerprints: Record<string, string>;
      locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[];
    }[];
  }[];
}

/** The CLI's SARIF output, checked against the SARIF 2.1.0 schema. */
function cli(cwd: string, ...argv: string[]): Sarif {
  const sarif = JSON.parse(runCli(cwd, argv).out) as Sarif;
  expect(validate(sarif), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
  return sarif;
}

function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cgk-sarif-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const MISMATCH = codeBlock`
  FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
  RUN pip install torch==2.3.0+cu118 --index-url https://download.pytorch.org/whl/cu118
`;

describe('SARIF for code scanning', () => {
  it('the schema check can fail: a result without a message, or a region starting at line 0, is refused', () => {
    const sarif = { version: '2.1.0', runs: [{ tool: { driver: { name: 'x' } }, results: [{ ruleId: 'r' }] }] };
    expect(validate(sarif)).toBe(false);
    const zero = {
      version: '2.1.0',
      runs: [
        {
          tool: { driver: { name: 'x' } },
          results: [{ message: { text: 'm' }, locations: [{ physicalLocation: { region: { startLine: 0 } } }] }],
        },
      ],
    };
    expect(validate(zero)).toBe(false);
  });

  it('one category per upload, and related locations linked from the message', () => {
    const demo = mkdtempSync(join(tmpdir(), 'cgk-sarif-related-'));
    cpSync(join(ROOT, 'fixtures', 'repos', 'demo'), demo, { recursive: true });
    const run = cli(demo, 'check', '--format', 'sarif', '--baseline', 'baseline.yaml').runs[0]! as unknown as {
      automationDetails: { id: string };
      results: { message: { text: string }; relatedLocations?: { id: number }[] }[];
    };
    expect(run.automationDetails).toEqual({ id: 'cuda-gatekeeper/' });
    const withRelated = run.results.filter((result) => result.relatedLocations?.length);
    expect(withRelated.length).toBeGreaterThan(0);
    for (const result of withRelated)
      for (const related of result.relatedLocations!) expect(result.message.text).toContain(`](${related.id})`);
  });

  it("gives a fix its results share once, and names it from the others (a unit's fix, offered by each pin)", () => {
    /** A Dockerfile on CUDA 12.4 installing `pins` pins of torch 2.4.1's family built for CUDA 12.1. */
    const pinned = (pins: number) => {
      const family = ['torch==2.4.1+cu121', 'torchvision==0.19.1+cu121', 'torchaudio==2.4.1+cu121'];
      const lines = Array.from({ length: pins }, (_, i) => `${family[i % 3]}\n`).join('');
      const dir = repo({
        Dockerfile:
          'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n',
        'requirements.txt': `--extra-index-url https://download.pytorch.org/whl/cu121\n${lines}`,
      });
      return runCli(dir, ['check', '--format', 'sarif', '--baseline', 'none']).out;
    };
    const text = pinned(60);
    const sarif = JSON.parse(text);
    expect(validate(sarif), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    const results = sarif.runs[0].results as { fixes?: unknown[]; properties?: { sameFixAs?: string } }[];
    const pointing = results.filter((result) => result.properties?.sameFixAs);
    expect(pointing.length).toBeGreaterThan(50);
    for (const result of pointing) {
      expect(result.fixes).toBeUndefined();
      const [, , , , index] = result.properties!.sameFixAs!.split('/');
      const target = results[Number(index)]!;
      expect(target.fixes).toHaveLength(1);
      expect(target.properties?.sameFixAs).toBeUndefined();
    }
    // 16 times the pins: each fix's replacements grow 16 times, written once.
    expect(pinned(960).length / text.length).toBeLessThan(20);
  });

  it('the demo and every real file of the corpus give schema-valid SARIF', () => {
    const demo = mkdtempSync(join(tmpdir(), 'cgk-sarif-demo-'));
    cpSync(join(ROOT, 'fixtures', 'repos', 'demo'), demo, { recursive: true });
    expect(
      cli(demo, 'check', '--format', 'sarif', '--baseline', 'baseline.yaml').runs[0]!.results.length,
    ).toBeGreaterThan(3);
    const corpus = cli(join(ROOT, 'fixtures'), 'check', 'corpus', '--format', 'sarif', '--baseline', 'none');
    expect(corpus.runs[0]!.results.length).toBeGreaterThan(5);
  });

  it('describes every rule with its README: fullDescription, help text and markdown, tags', () => {
    const sarif = cli(repo({ Dockerfile: MISMATCH }), 'check', '--format', 'sarif', '--baseline', 'none');
    const rules = sarif.runs[0]!.tool.driver.rules;
    expect(rules.map((rule) => rule.id)).toEqual(RULES.map((rule) => rule.id));
    for (const rule of rules) {
      const readme = readFileSync(join(ROOT, 'rules', rule.id, 'README.md'), 'utf8');
      // The README without its generated examples (each fixture with its findings), which it links to instead.
      expect(rule.help.markdown).toBe(withoutExamples(readme, rule.id));
      expect(rule.help.markdown).not.toContain('examples:start');
      expect(rule.fullDescription.text.length).toBeGreaterThan(40);
      expect(rule.fullDescription.text).not.toMatch(/`|\*\*|\n/);
      expect(rule.help.text).toContain(rule.fullDescription.text);
      expect(rule.properties.tags.length).toBeGreaterThan(0);
    }
  });

  it('every rule has its own tags (a new rule must say what it is about)', () => {
    expect(Object.keys(RULE_TAGS).sort()).toEqual(RULES.map((rule) => rule.id).sort());
  });

  it('fingerprints stay when lines move and differ between findings', () => {
    const before = cli(repo({ Dockerfile: MISMATCH }), 'check', '--format', 'sarif', '--baseline', 'none').runs[0]!
      .results;
    const moved = cli(
      repo({ Dockerfile: `# a comment\n\n${MISMATCH}` }),
      'check',
      '--format',
      'sarif',
      '--baseline',
      'none',
    ).runs[0]!.results;
    expect(moved.map((result) => result.locations[0]!.physicalLocation.region.startLine)).toEqual(
      before.map((result) => result.locations[0]!.physicalLocation.region.startLine + 2),
    );
    const prints = (results: typeof before) =>
      results.map((result) => result.partialFingerprints['cudaGatekeeperFinding/v1']);
    expect(prints(moved)).toEqual(prints(before));
    expect(new Set(prints(before)).size).toBe(before.length);
    const edited = cli(
      repo({ Dockerfile: MISMATCH.replace('2.3.0', '2.3.1') }),
      'check',
      '--format',
      'sarif',
      '--baseline',
      'none',
    ).runs[0]!.results;
    expect(prints(edited)).not.toEqual(prints(before));
  });

  it('percent-encodes paths: spaces, #, %, non-ASCII', () => {
    expect(pathUri('my dir/requirements #1.txt')).toBe('my%20dir/requirements%20%231.txt');
    expect(pathUri('100%/Dockerfile')).toBe('100%25/Dockerfile');
    expect(pathUri('café/Dockerfile')).toBe('caf%C3%A9/Dockerfile');
    const dir = repo({ 'my service/Dockerfile': MISMATCH });
    const results = cli(dir, 'check', '--format', 'sarif', '--baseline', 'none').runs[0]!.results;
    expect(results[0]!.locations[0]!.physicalLocation.artifactLocation.uri).toBe('my%20service/Dockerfile');
  });

  it('keeps at most 25,000 results per run, the most severe first, and says how many it left out', () => {
    const finding = (i: number, severity: Finding['severity']): Finding =>
      ({
        ruleId: severity === 'error' ? 'cuda-mismatch' : 'exact-pin',
        severity,
        message: `finding ${i}`,
        location: { path: `svc${i}/requirements.txt`, start: { line: 1, column: 1 }, end: { line: 1, column: 5 } },
        related: [],
      }) as unknown as Finding;
    const findings = [
      ...Array.from({ length: 20_000 }, (_, i) => finding(i, 'warning')),
      ...Array.from({ length: 10_000 }, (_, i) => finding(i, 'error')),
    ];
    const report = {
      findings,
      counts: { error: 10_000, warning: 20_000, notice: 0 },
      filesChecked: 30_000,
    } as unknown as Report;
    const sarif = JSON.parse(renderSarif(report, { rules: RULES, version: '0.0.0' })) as Sarif;
    expect(validate(sarif)).toBe(true);
    const results = sarif.runs[0]!.results;
    expect(results).toHaveLength(25_000);
    expect(results.filter((result) => result.level === 'error')).toHaveLength(10_000);
    expect(sarif.runs[0]!.invocations[0]!.toolExecutionNotifications?.[0]?.message.text).toContain(
      '5000 of 30000 results were left out',
    );
  });
});
