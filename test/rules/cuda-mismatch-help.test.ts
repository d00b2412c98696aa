/** cuda-mismatch's help says what holds for the direction and the builds PyTorch publishes (sweep 4's findings). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { RULE_IDS } from '../../rules/index.js';
import { ROOT } from '../support/harness.js';

const kb = defaultKnowledgeBase();
const { baseline } = loadBaseline('baseline.yaml', readFileSync(join(ROOT, 'baseline.yaml'), 'utf8'), RULE_IDS);

function helpOf(dockerfile: string): string[] {
  const report = gate([parseFile('Dockerfile', dockerfile, 'dockerfile')], baseline, kb);
  return report.findings.filter((finding) => finding.ruleId === 'cuda-mismatch').map((finding) => finding.help ?? '');
}

describe('cuda-mismatch help', () => {
  it('an older minor build runs by backward compatibility, a newer one only under minor-version compatibility', () => {
    const [older] = helpOf(
      'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN pip install --index-url https://download.pytorch.org/whl/cu121 torch==2.5.1\n',
    );
    expect(older).toContain("CUDA's backward compatibility");
    expect(older).not.toContain('only under minor-version compatibility');
    const [newer] = helpOf(
      'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN pip install --index-url https://download.pytorch.org/whl/cu126 torch==2.7.1\n',
    );
    expect(newer).toContain('only under minor-version compatibility');
  });

  it('never asks for a build PyTorch does not publish', () => {
    const [help] = helpOf('FROM nvidia/cuda:12.3.1-base-ubuntu20.04\nRUN pip install "torch<2.2"\n');
    expect(help).toContain('PyTorch publishes no CUDA 12.3 build');
    expect(help).toContain('CUDA 12.1 or 12.4');
    expect(help).not.toContain('a release with a CUDA 12.3 build');
  });

  it('moves a PyTorch index only to a CUDA PyTorch publishes: cu123 is offered as cu121, by hand', () => {
    const report = gate(
      [
        parseFile(
          'Dockerfile',
          'FROM nvidia/cuda:12.3.2-devel-ubuntu22.04\nRUN pip install torch --index-url https://download.pytorch.org/whl/cu118\n',
          'dockerfile',
        ),
      ],
      baseline,
      kb,
    );
    const [finding] = report.findings.filter((one) => one.ruleId === 'cuda-mismatch');
    expect(finding?.fix).toBeUndefined();
    expect(finding?.suggestions?.map((fix) => [fix.title, fix.safety, fix.edits.map((edit) => edit.text)])).toEqual([
      ['Use the cu121 index (CUDA 12.1: PyTorch publishes no CUDA 12.3 builds)', 'unsafe', ['121']],
    ]);
  });
});
