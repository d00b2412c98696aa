/**
 * The knowledge-base audit of round 4 (`kb-audit-2026-12-round4.md`, section 1), row by row: what each row's
 * sources say, and what the gate says now. Each probe here failed before the row was corrected (issue 50).
 */
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import type { Finding } from '../../src/finding.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { classifyPath, parseFile } from '../../src/parsers/index.js';
import { RULE_IDS } from '../../rules/index.js';
import { codeBlock } from '../support/code-block.js';

const kb = defaultKnowledgeBase();

function check(files: Record<string, string>, baseline = ''): readonly Finding[] {
  const parsed = Object.entries(files).map(([path, text]) => parseFile(path, text, classifyPath(path)!));
  const policy = baseline ? loadBaseline('baseline.yaml', baseline, RULE_IDS) : undefined;
  expect(policy?.problems ?? []).toEqual([]);
  return gate(parsed, policy?.baseline ?? EMPTY_BASELINE, kb, policy ? { policy } : {}).findings;
}

const said = (findings: readonly Finding[]): string[] =>
  findings.map((finding) => `${finding.ruleId} ${finding.severity}: ${finding.message}`);

describe('row 1: the cu129 index holds torch 2.9.0, 2.9.1, 2.10.0, 2.11.0, 2.12.1 and 2.13.0 (pytorch/test-infra#8164, #8215; pytorch/pytorch#188443)', () => {
  it.each([
    ['2.9.0', '0.24.0', '2.9.0'],
    ['2.9.1', '0.24.1', '2.9.1'],
    ['2.10.0', '0.25.0', '2.10.0'],
    ['2.11.0', '0.26.0', '2.11.0'],
    ['2.12.1', '0.27.1', '2.11.0'],
    ['2.13.0', '0.28.0', '2.11.0'],
  ])(
    'torch %s, torchvision %s and torchaudio %s from the cu129 index: no finding (three errors before)',
    (torch, vision, audio) => {
      const requirements = codeBlock`
      --index-url https://download.pytorch.org/whl/cu129
      torch==${torch}+cu129
      torchvision==${vision}+cu129
      torchaudio==${audio}+cu129
    `;
      expect(said(check({ 'requirements.txt': requirements }))).toEqual([]);
    },
  );

  it.each(['2.12.0', '2.14.0'])('torch %s has no cu129 build', (torch) => {
    const requirements = `--index-url https://download.pytorch.org/whl/cu129\ntorch==${torch}+cu129\n`;
    expect(said(check({ 'requirements.txt': requirements }))).toEqual([
      `wheel-missing error: torch ${torch} has no cu129 build`,
    ]);
  });

  it('the re-added 12.9 builds are for Linux x86_64 and aarch64 only', () => {
    expect(kb.torchRelease('2.12.1')?.platforms).toEqual({ cu129: ['linux_x86_64', 'linux_aarch64'] });
  });
});

describe('row 2: the 12.9 builds of release/2.12 and release/2.13 are compiled for 7.5 to 12.0 (pytorch/pytorch#188443)', () => {
  it('no Volta, Blackwell included', () => {
    expect(kb.compiledArchs('2.13.0', 'cu129')?.sass).toEqual(['7.5', '8.0', '8.6', '9.0', '10.0', '12.0']);
    const findings = check(
      { 'requirements.txt': '--index-url https://download.pytorch.org/whl/cu129\ntorch==2.12.1+cu129\n' },
      'gpus: ["V100", "B200"]\n',
    );
    expect(said(findings)).toEqual([
      'gpu-arch error: torch 2.12.1+cu129 has no kernels for V100 (sm_70): it is compiled for sm_75, sm_80, sm_86, sm_90, sm_100, sm_120',
    ]);
  });
});

describe("row 5: nvidia/cuda 12.9.2 is published for Ubuntu 20.04 (replicate/cog#3016's Docker Hub scrape)", () => {
  it('12.9.2-cudnn-devel-ubuntu20.04: no warning (a false warning before)', () => {
    expect(said(check({ Dockerfile: 'FROM nvidia/cuda:12.9.2-cudnn-devel-ubuntu20.04\n' }))).toEqual([]);
  });
});

describe('row 6: torch 2.11.0+cu130 requires nvidia-cudnn-cu13==9.19.0.56 (its METADATA; cudnn.version() 91900 on an H200)', () => {
  it('records cuDNN 9.19.0.56', () => {
    expect(kb.torchRelease('2.11.0')?.cudnn?.cu130).toBe('9.19.0.56');
  });
});

describe("row 3: NVIDIA's table lists the RTX PRO 4500 Blackwell Server Edition under Data Center", () => {
  it('is a data-center GPU (forward compatibility applies), unlike the workstation RTX PRO 4500 Blackwell', () => {
    expect(kb.gpu('NVIDIA RTX PRO 4500 Blackwell Server Edition')).toMatchObject({ cc: '12.0', class: 'data-center' });
    expect(kb.gpu('NVIDIA-RTX-PRO-4500-Blackwell-Server-Edition')?.class).toBe('data-center');
    expect(kb.gpu('NVIDIA RTX PRO 4500 Blackwell')?.class).toBe('workstation');
  });
});

describe("row 7: GPU names NVIDIA's pages and nvidia-smi print", () => {
  it.each([
    ['Quadro RTX 4000', '7.5', 'workstation'],
    ['Quadro RTX 5000', '7.5', 'workstation'],
    ['NVIDIA T400', '7.5', 'workstation'],
    ['NVIDIA T600', '7.5', 'workstation'],
    ['NVIDIA T1000', '7.5', 'workstation'],
    ['NVIDIA GeForce GTX 1660 Ti', '7.5', 'geforce'],
    ['NVIDIA GeForce GTX 1650', '7.5', 'geforce'],
    ['NVIDIA Thor', '11.0', 'jetson'],
    ['Orin (nvgpu)', '8.7', 'jetson'],
    ['NVIDIA GB10', '12.1', 'workstation'],
  ])('%s: compute capability %s, %s', (name, cc, line) => {
    expect(kb.gpu(name)).toMatchObject({ cc, class: line });
    expect(kb.gpu(name)?.record.confidence).toBeUndefined();
  });

  it.each([
    ['NVIDIA L2', '8.9'],
    ['NVIDIA L40G', '8.9'],
    ['NVIDIA AX800', '8.0'],
    ['NVIDIA GeForce GTX 1630', '7.5'],
  ])("%s: compute capability %s from its chip, marked unverified (not on NVIDIA's table)", (name, cc) => {
    expect(kb.gpu(name)).toMatchObject({ cc });
    expect(kb.gpu(name)?.record.confidence).toBe('unverified');
  });

  it('a hand-written gpus: entry with one of these names is a valid baseline', () => {
    const findings = check(
      { 'requirements.txt': 'numpy==1.26.4\n' },
      'gpus: ["Quadro RTX 4000", "NVIDIA Thor", "L2"]\n',
    );
    expect(said(findings)).toEqual([]);
  });
});
