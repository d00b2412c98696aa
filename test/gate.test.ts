/**
 * gate() runs the rules over batches of linked files. Batching must not change the report: the same files give
 * the same findings whether they are checked in one batch, one connected component at a time, or in the
 * default batches, also when includes join files that are far apart in the list.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../src/baseline/load.js';
import { gate } from '../src/gate.js';
import { defaultKnowledgeBase } from '../src/knowledge/index.js';
import { classifyPath, parseFile } from '../src/parsers/index.js';
import { RULE_IDS } from '../rules/index.js';
import { project } from './bench/synthetic.js';
import { ROOT } from './support/harness.js';
import { codeBlock } from './support/code-block.js';

const kb = defaultKnowledgeBase();
const { baseline } = loadBaseline('baseline.yaml', readFileSync(join(ROOT, 'baseline.yaml'), 'utf8'), RULE_IDS);

function repository(): ReturnType<typeof parseFile>[] {
  const files = Array.from({ length: 130 }, (_, i) =>
    Object.entries(project(i)).map(([name, text]) => {
      // Every tenth project also installs a shared file that sits at the end of the list.
      const extra = name === 'requirements.txt' && i % 10 === 0 ? '-r ../shared/requirements-gpu.txt\n' : '';
      return parseFile(`p${i}/${name}`, extra + text, classifyPath(name)!);
    }),
  ).flat();
  files.push(
    parseFile(
      'shared/requirements-gpu.txt',
      codeBlock`
        torch==2.6.0+cu121
        nvidia-cudnn-cu12==9.1.0.70
      `,
      'requirements',
    ),
  );
  return files;
}

describe('gate batches', () => {
  it('gives the same report in one batch, per component, and in the default batches', () => {
    const files = repository();
    expect(files.length).toBeGreaterThan(600);
    const one = gate(files, baseline, kb, { batchFiles: Number.POSITIVE_INFINITY });
    const perComponent = gate(files, baseline, kb, { batchFiles: 1 });
    const byDefault = gate(files, baseline, kb);
    expect(one.findings.length).toBeGreaterThan(100);
    expect(one.findings.some((finding) => finding.location.path === 'shared/requirements-gpu.txt')).toBe(true);
    expect(perComponent).toEqual(one);
    expect(byDefault).toEqual(one);
  });
});

describe('a command inside an if, case or loop of a RUN', () => {
  it('is checked, and what rests on it is a warning saying so (policy findings and parse problems stay as they are)', () => {
    const text = readFileSync(join(ROOT, 'fixtures/rules/cuda-mismatch/install-in-if-branch/Dockerfile'), 'utf8');
    const report = gate([parseFile('Dockerfile', text, 'dockerfile')], baseline, kb);
    expect(
      report.findings
        .filter((finding) => finding.ruleId === 'cuda-mismatch')
        .map((finding) => [
          finding.location.start.line,
          finding.severity,
          finding.message.endsWith('which may not run)'),
        ]),
    ).toEqual([
      [6, 'warning', true],
      [9, 'error', false],
    ]);
    const policy = loadBaseline('baseline.yaml', 'packages:\n  torch: ["2.6.0"]\n', RULE_IDS);
    const denied = gate(
      [parseFile('Dockerfile', 'FROM ubuntu:22.04\nRUN if true; then pip install torch==2.5.1; fi\n', 'dockerfile')],
      policy.baseline,
      kb,
      { policy },
    );
    expect(
      denied.findings.filter((finding) => finding.ruleId === 'package-not-allowed').map((f) => f.severity),
    ).toEqual(['error']);
  });
});

describe('one finding per mistake', () => {
  it('merges what a file installed by two stages meets in each image into one finding, the other its related place', () => {
    const dockerfile = codeBlock`
      FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04 AS build
      COPY requirements.txt .
      RUN pip install -r requirements.txt

      FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04
      COPY requirements.txt .
      RUN pip install -r requirements.txt
    `;
    const files = [
      parseFile('Dockerfile', dockerfile, 'dockerfile'),
      parseFile('requirements.txt', 'torch==2.3.0+cu118\n', 'requirements'),
    ];
    const mismatches = gate(files, baseline, kb).findings.filter((finding) => finding.ruleId === 'cuda-mismatch');
    expect(mismatches.map((finding) => [finding.location.path, finding.location.start.line])).toEqual([
      ['requirements.txt', 1],
    ]);
    expect(mismatches[0]!.related.map((entry) => [entry.location.start.line, entry.message])).toEqual([
      [5, 'CUDA 12.1 is set here (Dockerfile stage 2)'],
      [1, 'also: CUDA 12.1 is set here (Dockerfile stage "build")'],
    ]);
    // Another CUDA is another mistake: two findings.
    files[0] = parseFile('Dockerfile', dockerfile.replace('12.1.0', '12.4.1'), 'dockerfile');
    expect(gate(files, baseline, kb).findings.filter((finding) => finding.ruleId === 'cuda-mismatch')).toHaveLength(2);
  });
});
