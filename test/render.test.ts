/** Renderers are pure: small snapshots of each format for one report. */
import { describe, expect, it } from 'vitest';
import { EMPTY_BASELINE } from '../src/baseline/schema.js';
import { gate } from '../src/gate.js';
import { defaultKnowledgeBase } from '../src/knowledge/index.js';
import { parseFile } from '../src/parsers/index.js';
import { renderGithubAnnotations } from '../src/render/github.js';
import { renderSarif } from '../src/render/sarif.js';
import { renderText } from '../src/render/text.js';
import { RULES } from '../rules/index.js';

const file = parseFile(
  'requirements.txt',
  '--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.0+cu121\ntorchvision==0.17.0+cu121\n',
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
    const sarif = JSON.parse(renderSarif(report, { rules: RULES, version: '0.0.0', sources: new Map([[file.path, file.source]]) }));
    expect(sarif.runs[0].results).toEqual([
      expect.objectContaining({
        ruleId: 'companion-mismatch',
        level: 'error',
        locations: [
          { physicalLocation: { artifactLocation: { uri: 'requirements.txt' }, region: { startLine: 3, startColumn: 1, endLine: 3, endColumn: 26 } } },
        ],
        fixes: [
          {
            description: { text: 'Use torchvision 0.18.0' },
            artifactChanges: [
              {
                artifactLocation: { uri: 'requirements.txt' },
                replacements: [{ deletedRegion: { startLine: 3, startColumn: 14, endLine: 3, endColumn: 20 }, insertedContent: { text: '0.18.0' } }],
              },
            ],
          },
        ],
      }),
    ]);
    expect(sarif.runs[0].tool.driver.rules).toHaveLength(RULES.length);
  });
});
