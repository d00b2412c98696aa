/**
 * The knowledge-base audit of 2026-12 (`kb-audit-2026-12.md`, section 1), row by row: each probe of the audit's
 * section 5, written like the source it cites, with what the gate must say now. Every row here failed before the
 * corrections of issue 15 (a false error, a false warning, or a wrong number in the message).
 */
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import type { Finding, Severity } from '../../src/finding.js';
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

/** `rule level: message` of each finding, for readable expectations. */
function said(findings: readonly Finding[]): string[] {
  return findings.map((finding) => `${finding.ruleId} ${finding.severity}: ${finding.message}`);
}

function levels(findings: readonly Finding[], ruleId: string): Severity[] {
  return findings.filter((finding) => finding.ruleId === ruleId).map((finding) => finding.severity);
}

describe('row 1: a release\'s own Table 3 row comes before the 11.x MVC floor (CUDA Toolkit release notes, Table 3: "CUDA 11.0.3 Update 1 >= 450.51.06")', () => {
  const fleet = codeBlock`
    driver:
      minimum: "450.51.06"
  `;
  it('nvidia/cuda:11.0.3 on 450.51.06 runs fully', () => {
    expect(said(check({ Dockerfile: 'FROM nvidia/cuda:11.0.3-cudnn8-devel-ubuntu20.04\n' }, fleet))).toEqual([]);
  });
  it('torch +cu110 (CUDA 11.0 GA, >= 450.51.05) on 450.51.06 runs fully', () => {
    expect(levels(check({ 'requirements.txt': 'torch==1.7.1+cu110\n' }, fleet), 'driver-floor')).toEqual([]);
  });
  it('CUDA 11.1+ code on an R450 driver below 450.80.02 does not run (MVC page: "by upgrading to … 450.80.02 … minor version compatibility is possible")', () => {
    const findings = check({ Dockerfile: 'FROM nvidia/cuda:11.1.1-cudnn8-devel-ubuntu20.04\n' }, fleet);
    expect(said(findings).filter((line) => line.startsWith('driver-floor'))).toEqual([
      'driver-floor error: nvidia/cuda:11.1.1-cudnn8-devel-ubuntu20.04 needs CUDA 11.x, which needs NVIDIA driver >= 450.80.02; the fleet runs 450.51.06',
    ]);
  });
});

describe('row 2: torch 1.7.0 was released with torchvision 0.8.1 (googlecolab/colabtools#1676, huggingface/pytorch-image-models#268)', () => {
  it('torch==1.7.0 with torchvision==0.8.1 is a pair', () => {
    expect(
      said(
        check({
          'requirements.txt': codeBlock`
            torch==1.7.0
            torchvision==0.8.1
          `,
        }),
      ),
    ).toEqual([]);
  });
});

describe("row 3: the pytorch conda channel's measured cudatoolkit builds (moi90/pytorch_compute_capabilities table.md)", () => {
  const env = (pytorch: string, toolkit: string) =>
    `name: x\nchannels:\n  - pytorch\ndependencies:\n  - pytorch=${pytorch}\n  - cudatoolkit=${toolkit}\n`;
  it.each([
    ['1.11.0', '11.1'],
    ['1.11.0', '11.5'],
    ['1.10.1', '11.1'],
    ['1.8.0', '10.1'],
  ])('pytorch=%s with cudatoolkit=%s exists', (pytorch, toolkit) => {
    expect(levels(check({ 'environment.yml': env(pytorch, toolkit) }), 'wheel-missing')).toEqual([]);
  });
  it('pytorch=1.9.0 with cudatoolkit=11.3 has no build on the channel (a false pass before)', () => {
    expect(levels(check({ 'environment.yml': env('1.9.0', '11.3') }), 'wheel-missing')).toEqual(['error']);
  });
});

describe('row 4: torchaudio before 0.10 had no CUDA variants (pytorch/audio installation.rst: "Starting 0.10, torchaudio has CPU-only and CUDA-enabled binary distributions")', () => {
  it("PyTorch's own 1.9.0 command (-f torch_stable.html) passes", () => {
    const text = codeBlock`
      -f https://download.pytorch.org/whl/torch_stable.html
      torch==1.9.0+cu111
      torchvision==0.10.0+cu111
      torchaudio==0.9.0
    `;
    expect(said(check({ 'requirements.txt': text }))).toEqual([]);
  });
  it('a plain torchaudio==0.9.0 from PyPI beside a cu111 torch wheel claims no CUDA 10.2', () => {
    const text = codeBlock`
      torch @ https://download.pytorch.org/whl/cu111/torch-1.9.0%2Bcu111-cp38-cp38-linux_x86_64.whl
      torchaudio==0.9.0
    `;
    expect(levels(check({ 'requirements.txt': text }), 'cuda-mismatch')).toEqual([]);
  });
  it("PyTorch's 1.7.1 command with --extra-index-url …/cu110 gets no warning about torchaudio", () => {
    const text = codeBlock`
      --extra-index-url https://download.pytorch.org/whl/cu110
      torch==1.7.1+cu110
      torchvision==0.8.2+cu110
      torchaudio==0.7.2
    `;
    expect(said(check({ 'requirements.txt': text }))).toEqual([]);
  });
});

describe('row 5: forward compatibility on data-center GPUs (docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html)', () => {
  const file = { Dockerfile: 'FROM nvcr.io/nvidia/pytorch:25.12-py3\n' };
  it('NGC 25.12 (CUDA 13.1) on R570 is a warning that names the condition', () => {
    const findings = check(
      file,
      codeBlock`
        driver:
          minimum: "570.172.08"
      `,
    ).filter((finding) => finding.ruleId === 'driver-floor');
    expect(findings.map((finding) => finding.severity)).toEqual(['warning']);
    expect(findings[0]!.message).toContain(
      'forward compatibility (cuda-compat-13-1 in the image, data-center GPUs only)',
    );
  });
  it('a data-center fleet (driver.forwardCompat: true) gets a notice', () => {
    expect(
      levels(
        check(
          file,
          codeBlock`
            driver:
              minimum: "570.172.08"
              forwardCompat: true
          `,
        ),
        'driver-floor',
      ),
    ).toEqual(['notice']);
  });
  it('a fleet without forward compatibility (driver.forwardCompat: false) gets the error', () => {
    expect(
      levels(
        check(
          file,
          codeBlock`
            driver:
              minimum: "570.172.08"
              forwardCompat: false
          `,
        ),
        'driver-floor',
      ),
    ).toEqual(['error']);
  });
  it('an R550 driver is not in the cuda-compat-13-1 matrix: error', () => {
    expect(
      levels(
        check(
          file,
          codeBlock`
            driver:
              minimum: "550.54.14"
          `,
        ),
        'driver-floor',
      ),
    ).toEqual(['error']);
  });
  it('pip wheels on a bare image cannot use forward compatibility: error', () => {
    expect(
      levels(
        check(
          {
            Dockerfile: codeBlock`
              FROM ubuntu:24.04
              RUN pip install torch==2.9.1+cu130 --index-url https://download.pytorch.org/whl/cu130
            `,
          },
          codeBlock`
            driver:
              minimum: "570.172.08"
          `,
        ),
        'driver-floor',
      ),
    ).toEqual(['error']);
  });
});

describe('row 6: NVIDIA_REQUIRE_CUDA as the container toolkit reads it ("space-separated constraints are ORed, comma-separated constraints are ANDed")', () => {
  const require = (value: string) => ({ Dockerfile: `FROM ubuntu:22.04\nENV NVIDIA_REQUIRE_CUDA="${value}"\n` });
  it('a Tesla R535 alternative accepts 535.104.05, on Tesla GPUs only (warning)', () => {
    expect(
      levels(
        check(
          require('cuda>=12.8 brand=tesla,driver>=535,driver<536'),
          codeBlock`
            driver:
              minimum: "535.104.05"
          `,
        ),
        'driver-floor',
      ),
    ).toEqual(['warning']);
  });
  it('cuda>=12.8 holds on 570.172.08 whatever the other terms say', () => {
    expect(
      levels(
        check(
          require('cuda>=12.8 brand=tesla,driver>=470,driver<471'),
          codeBlock`
            driver:
              minimum: "570.172.08"
          `,
        ),
        'driver-floor',
      ),
    ).toEqual([]);
  });
  it('no term holds: error', () => {
    expect(
      levels(
        check(
          require('cuda>=12.8 brand=tesla,driver>=550,driver<551'),
          codeBlock`
            driver:
              minimum: "535.104.05"
          `,
        ),
        'driver-floor',
      ),
    ).toEqual(['error']);
  });
});

describe('rows 7 and 8: torch 2.14.1 / torchvision 0.29.1, and the 1.8.2 LTS line on /whl/lts/1.8/ (previous-versions.md, "v1.8.2 with LTS support")', () => {
  it('torch==2.14.1 with torchvision==0.29.1 is a known pair', () => {
    expect(
      said(
        check({
          'requirements.txt': codeBlock`
            torch==2.14.1
            torchvision==0.29.1
          `,
        }),
      ),
    ).toEqual([]);
  });
  it('the LTS requirements file passes', () => {
    const text = codeBlock`
      --extra-index-url https://download.pytorch.org/whl/lts/1.8/cu111
      torch==1.8.2+cu111
      torchvision==0.9.2+cu111
      torchaudio==0.8.2
    `;
    expect(said(check({ 'requirements.txt': text }))).toEqual([]);
  });
});

describe("row 9: Table 3 has no row for 12.8 Update 2 or 13.0 Update 3; the installer's bundled driver is not the minimum", () => {
  it('nvidia/cuda:12.8.2 on 570.172.08 asks for no newer driver', () => {
    expect(
      levels(
        check(
          { Dockerfile: 'FROM nvidia/cuda:12.8.2-cudnn-runtime-ubuntu24.04\n' },
          codeBlock`
            driver:
              minimum: "570.172.08"
          `,
        ),
        'driver-floor',
      ),
    ).toEqual([]);
    expect(kb.minDriver('12.8.2')?.linux).toBe('570.124.06');
    expect(kb.minDriver('13.0.3')?.linux).toBe('580.95.05');
  });
});

describe('row 10: two-part tags existed up to 11.0 and are deleted (NVIDIA/libnvidia-container#181: "they end-of-lifed this image … use nvidia/cuda:11.0.3-base")', () => {
  it('10.2-cudnn7-devel-ubuntu18.04 is gone, not misspelt', () => {
    const findings = check({ Dockerfile: 'FROM nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04\n' });
    expect(said(findings)).toEqual([
      'image-missing error: nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04 no longer exists: NVIDIA deleted the end-of-life CUDA 10.2 tags from Docker Hub',
    ]);
  });
  it('11.0-devel-ubuntu20.04 is gone, and 11.0.3 is offered', () => {
    const [finding] = check({ Dockerfile: 'FROM nvidia/cuda:11.0-devel-ubuntu20.04\n' });
    expect(finding?.fix?.title).toBe('Use 11.0.3');
  });
});

describe('row 11: NVIDIA\'s unsupported-tags list says the 11.6.1 tags "still exist"', () => {
  it('11.6.1-cudnn8-devel-ubuntu20.04 is not reported as deleted', () => {
    expect(said(check({ Dockerfile: 'FROM nvidia/cuda:11.6.1-cudnn8-devel-ubuntu20.04\n' }))).toEqual([]);
  });
});

describe("row 12 and §3: OS versions by the CUDA releases NVIDIA published them for (the dist/<version>/<os> directories of NVIDIA's image repository)", () => {
  it('no CUDA 13 image for ubuntu20.04 (a false pass before)', () => {
    expect(levels(check({ Dockerfile: 'FROM nvidia/cuda:13.0.0-devel-ubuntu20.04\n' }), 'image-missing')).toEqual([
      'warning',
    ]);
  });
  it('12.4.0-devel-centos7 exists', () => {
    expect(levels(check({ Dockerfile: 'FROM nvidia/cuda:12.4.0-devel-centos7\n' }), 'image-missing')).toEqual([]);
  });
});

describe('row 13: "11.0" is CUDA 11.0 GA, >= 450.51.05 (Table 3)', () => {
  it('has a driver row', () => {
    expect(kb.minDriver('11.0')?.linux).toBe('450.51.05');
  });
});

describe('row 15: triton pins carry the wheel\'s markers (triton-lang/triton#3359: "torch 2.2.1 requires triton==2.2.0; … python_version < "3.12"")', () => {
  it('torch 2.2.1 on Python 3.12 does not pin triton', () => {
    expect(
      levels(
        check({
          'environment.yml': codeBlock`
            name: x
            dependencies:
              - python=3.12
              - pip
              - pip:
                - torch==2.2.1
                - triton==2.3.0
          `,
        }),
        'companion-mismatch',
      ),
    ).toEqual([]);
  });
  it('torch 2.2.1 on Python 3.11 does', () => {
    expect(
      levels(
        check({
          'environment.yml': codeBlock`
            name: x
            dependencies:
              - python=3.11
              - pip
              - pip:
                - torch==2.2.1
                - triton==2.3.0
          `,
        }),
        'companion-mismatch',
      ),
    ).toEqual(['error']);
  });
});
