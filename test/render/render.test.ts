/** Renderers are pure: small snapshots of each format for one report. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { loadFiles } from '../../src/cli/discover.js';
import { verdictOf } from '../../src/github/check.js';
import { renderCheckRun, renderFailure, type CheckOutput } from '../../src/render/check-run.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { renderGithubAnnotations } from '../../src/render/github.js';
import { renderJson } from '../../src/render/json.js';
import { renderSarif } from '../../src/render/sarif.js';
import { renderText } from '../../src/render/text.js';
import { RULES } from '../../rules/index.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';

const file = parseFile(
  'requirements.txt',
  codeBlock`
    --extra-index-url https://download.pytorch.org/whl/cu121
    torch==2.3.0+cu121
    torchvision==0.17.0+cu121
  `,
  'requirements',
);
const report = gate([file], EMPTY_BASELINE, defaultKnowledgeBase());

describe('renderers', () => {
  it('text', () => {
    expect(renderText(report)).toMatchInlineSnapshot(`
      "requirements.txt:3:1: error: torchvision 0.17.0 does not belong to torch 2.3.0 (it belongs to torch 2.2.0) [companion-mismatch]
      1 file checked: 1 error, 0 warnings, 0 notices (1 fixable with --fix)
      "
    `);
  });

  it('GitHub annotations escape newlines, commas and colons', () => {
    expect(renderGithubAnnotations(report).split('%0A')[0]).toBe(
      '::error file=requirements.txt,line=3,col=1,endLine=3,endColumn=26,title=companion-mismatch::torchvision 0.17.0 does not belong to torch 2.3.0 (it belongs to torch 2.2.0)',
    );
  });

  it('SARIF results carry ids, levels, regions and replacements', () => {
    const sarif = JSON.parse(
      renderSarif(report, { rules: RULES, version: '0.0.0', sources: new Map([[file.path, file.source]]) }),
    );
    expect(sarif.runs[0].results).toEqual([
      expect.objectContaining({
        ruleId: 'companion-mismatch',
        level: 'error',
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: 'requirements.txt' },
              region: { startLine: 3, startColumn: 1, endLine: 3, endColumn: 26 },
            },
          },
        ],
        fixes: [
          {
            description: { text: 'Use torchvision 0.18.0' },
            artifactChanges: [
              {
                artifactLocation: { uri: 'requirements.txt' },
                replacements: [
                  {
                    deletedRegion: { startLine: 3, startColumn: 14, endLine: 3, endColumn: 20 },
                    insertedContent: { text: '0.18.0' },
                  },
                ],
              },
            ],
          },
        ],
      }),
    ]);
    expect(sarif.runs[0].tool.driver.rules).toHaveLength(RULES.length);
  });
});

describe('JSON', () => {
  /** A Dockerfile on CUDA 12.4 installing `pins` torch-family pins of two releases built for CUDA 12.1. */
  const pinned = (pins: number) => {
    const families = [
      ['torch==2.3.1', 'torchvision==0.18.1', 'torchaudio==2.3.1'],
      ['torch==2.4.1', 'torchvision==0.19.1', 'torchaudio==2.4.1'],
    ];
    const lines = Array.from({ length: pins }, (_, i) => `${families[Math.floor(i / 3) % 2]![i % 3]}+cu121\n`);
    const files = [
      parseFile(
        'Dockerfile',
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n',
        'dockerfile',
      ),
      parseFile(
        'requirements.txt',
        `--extra-index-url https://download.pytorch.org/whl/cu121\n${lines.join('')}`,
        'requirements',
      ),
    ];
    return gate(files, EMPTY_BASELINE, defaultKnowledgeBase());
  };

  it('writes a fix that findings share once, and points to it from the others', () => {
    const report = pinned(60);
    const json = JSON.parse(renderJson(report));
    const at = (pointer: string) =>
      pointer
        .split('/')
        .slice(1)
        .reduce((node: Record<string, unknown>, key) => node[key] as Record<string, unknown>, json);
    const shared = json.findings.flatMap((finding: { suggestions?: Record<string, unknown>[] }) =>
      (finding.suggestions ?? []).filter((suggestion) => 'sameAs' in suggestion),
    );
    // Every pin of a release is offered the same move of its whole family: written once per release.
    expect(shared.length).toBeGreaterThan(50);
    for (const reference of shared) {
      const target = at(reference.sameAs);
      expect(reference).not.toHaveProperty('edits');
      expect(target).toMatchObject({ title: reference.title, safety: reference.safety });
      expect(target).not.toHaveProperty('sameAs');
      expect((target.edits as unknown[]).length).toBeGreaterThan(20);
    }
    // The findings in memory keep their suggestions whole.
    const original = report.findings.flatMap((finding) => finding.suggestions ?? []);
    expect(original.every((suggestion) => suggestion.edits.length > 0)).toBe(true);
  });

  it('grows with the findings, not with their square', () => {
    const small = renderJson(pinned(60)).length;
    const large = renderJson(pinned(960)).length;
    // 16 times the pins: the edits of each release's move grow 16 times, written once each.
    expect(large / small).toBeLessThan(20);
  });

  it("as a check run's verdict data (what the App digests), grows with the findings too", () => {
    const verdict = (pins: number) => {
      const report = pinned(pins);
      const run = renderCheckRun(report, {
        baselineOrigin: 'octo-org/x:.github/cuda-gatekeeper.yml@4f2c1a9',
        knowledgeRetrieved: '2026-12-01',
        texts: new Map(),
        skipped: [],
        relevantFiles: 2,
      });
      return JSON.stringify(run.verdict).length;
    };
    expect(verdict(960) / verdict(60)).toBeLessThan(20);
  });
});

describe('the verdict digest of a check run', () => {
  const root = join(ROOT, 'fixtures', 'repos', 'demo');
  const { files } = loadFiles(root, ['Dockerfile', 'requirements.txt', 'environment.yml']);
  const policy = loadBaseline('.github/cuda-gatekeeper.yml', readFileSync(join(root, 'baseline.yaml'), 'utf8'));
  const report = gate(files, policy.baseline, defaultKnowledgeBase(), { policy });
  const context = {
    baselineOrigin: 'octo-org/demo:.github/cuda-gatekeeper.yml@4f2c1a9',
    knowledgeRetrieved: '2026-12-01',
    texts: new Map(files.map((file) => [file.path, file.source.text])),
    skipped: [],
    relevantFiles: 3,
  };
  const digest = (output: CheckOutput) => verdictOf(output, false);

  it('is computed from what the run says, not from its footer', () => {
    const base = renderCheckRun(report, context);
    expect(report.findings.length).toBeGreaterThan(0);
    // Another baseline commit and knowledge date: the footer changes, the verdict does not.
    const footer = renderCheckRun(report, {
      ...context,
      baselineOrigin: 'octo-org/demo:.github/cuda-gatekeeper.yml@9e8d7c6',
      knowledgeRetrieved: '2026-12-03',
    });
    expect(footer.summary).not.toBe(base.summary);
    expect(digest(footer)).toBe(digest(base));
    // One finding fewer, a file not checked, another text under a fix, or the Apply fixes button: another verdict.
    expect(digest(renderCheckRun({ ...report, findings: report.findings.slice(1) }, context))).not.toBe(digest(base));
    expect(
      digest(renderCheckRun(report, { ...context, skipped: [{ path: 'uv.lock', reason: 'over 32 MiB' }] })),
    ).not.toBe(digest(base));
    const fixed = report.findings.find((finding) => finding.fix)!.fix!.edits[0]!.path;
    const texts = new Map(context.texts).set(fixed, `${context.texts.get(fixed)!}\n# edited\n`);
    expect(digest(renderCheckRun(report, { ...context, texts }))).not.toBe(digest(base));
    expect(verdictOf(base, true)).not.toBe(digest(base));
    expect(digest(renderFailure('GitHub answered 502'))).not.toBe(digest(renderFailure('GitHub answered 503')));
  });
});
