/**
 * What people really write, read as they meant it (issue 14): file names and contents the walk must find, files
 * named on the command line, .gitignore and the baseline's `files` patterns, YAML aliases, --changed-since with the
 * files that include a changed one, and the severities that say how certain a finding is.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import type { Finding } from '../../src/finding.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { classifyPath, condaByContent, parseFile, sniffKind } from '../../src/parsers/index.js';
import { cli } from '../support/cli.js';
import { codeBlock } from '../support/code-block.js';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cgk-real-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** The paths a JSON report's findings are about. */
function pathsOf(out: string): string[] {
  return [
    ...new Set((JSON.parse(out) as { findings: Finding[] }).findings.map((finding) => finding.location.path)),
  ].sort();
}

const BAD = 'torch==2.3.0+cu999\n';
const DOCKER = codeBlock`
  FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
  RUN pip install torch==2.3.0+cu999
`;
const CONDA = codeBlock`
  name: x
  channels:
    - pytorch
  dependencies:
    - pytorch=9.9.9
`;

describe('file names, as Renovate and hadolint match them', () => {
  it.each([
    ['Dockerfile-cuda', 'dockerfile'],
    ['Dockerfile-gpu', 'dockerfile'],
    ['Dockerfile_dev', 'dockerfile'],
    ['docker/Dockerfile.cuda12', 'dockerfile'],
    ['.devops/cuda.Dockerfile', 'dockerfile'],
    ['backend.dockerfile', 'dockerfile'],
    ['Containerfile', 'dockerfile'],
    ['Containerfile.gpu', 'dockerfile'],
    ['gpu.Containerfile', 'dockerfile'],
    ['Dockerfile.md', undefined],
    ['Dockerfile.j2', undefined],
    // A Dockerfile's own ignore file (vllm-project/aibrix build/container/Dockerfile.python.dockerignore).
    ['build/container/Dockerfile.python.dockerignore', undefined],
    ['requirements_lnx_cu13.txt', 'requirements'],
    ['dev-requirements.txt', 'requirements'],
    ['requirement.txt', 'requirements'],
    ['requirements/gpu.in', 'requirements'],
    ['constraints-cuda.txt', 'requirements'],
    ['environment.gpu.yaml', 'conda'],
    ['cpu-environment.yml', 'conda'],
    ['conda-recipe.yaml', 'conda'],
    ['docker-compose.yml', 'compose'],
    ['.github/workflows/ci.yml', undefined],
  ])('%s → %s', (path, kind) => {
    expect(classifyPath(path)).toBe(kind);
  });

  it.each([
    ['conda/environments/all_cuda-129_arch-x86_64.yaml', true],
    ['envs/gpu.yml', true],
    ['packages/env.gpu.yml', true],
    ['pytorch-env.yml', true],
    ['deploy/values.yaml', false],
    ['environment.yml', false], // known by name already
  ])('%s may be a conda environment by content: %s', (path, maybe) => {
    expect(condaByContent(path)).toBe(maybe);
  });

  it('the walk finds every kind by name, and environments by content', () => {
    const dir = tree({
      'Dockerfile-cuda': DOCKER,
      'docker/train.Dockerfile': DOCKER,
      'Containerfile.gpu': DOCKER,
      'conda/environments/all_cuda-129.yaml': CONDA,
      'conda/environments/notes.yaml': 'title: not an environment\n',
      'packages/env.gpu.yml': CONDA,
      'requirements_lnx_cu13.txt': BAD,
    });
    const { out } = cli(dir, 'check', '--baseline', 'none', '--format', 'json');
    expect(pathsOf(out)).toEqual([
      'Containerfile.gpu',
      'Dockerfile-cuda',
      'conda/environments/all_cuda-129.yaml',
      'docker/train.Dockerfile',
      'packages/env.gpu.yml',
      'requirements_lnx_cu13.txt',
    ]);
  });
});

describe('files named on the command line are always checked', () => {
  it('a file whose name says nothing is read by its content', () => {
    expect(
      sniffKind('# syntax=docker/dockerfile:1\nARG CUDA=12.4.1\nFROM nvidia/cuda:${CUDA}-base-ubuntu22.04\n'),
    ).toBe('dockerfile');
    expect(sniffKind(CONDA)).toBe('conda');
    expect(
      sniffKind(
        codeBlock`
          --extra-index-url https://download.pytorch.org/whl/cu121
          torch==2.3.0+cu121 ; python_version < "3.12"
          -e .
        `,
      ),
    ).toBe('requirements');
    expect(
      sniffKind(codeBlock`
        #!/bin/sh
        echo hello
      `),
    ).toBeUndefined();
    const dir = tree({ 'build/gpu.df': DOCKER, 'deps/gpu.pip': BAD });
    const { code, out } = cli(dir, 'check', 'build/gpu.df', 'deps/gpu.pip', '--baseline', 'none', '--format', 'json');
    expect(code).toBe(1);
    expect(pathsOf(out)).toEqual(['build/gpu.df', 'deps/gpu.pip']);
  });

  it('--type names the kind', () => {
    const dir = tree({ 'deps.list': 'torch==2.3.0+cu999\n' });
    expect(
      pathsOf(cli(dir, 'check', 'deps.list', '--type', 'requirements', '--baseline', 'none', '--format', 'json').out),
    ).toEqual(['deps.list']);
    expect(cli(dir, 'check', 'deps.list', '--type', 'pom', '--baseline', 'none').code).toBe(2);
  });

  it('a file that cannot be classified is an error message and exit 2, never a silent exit 0', () => {
    const dir = tree({
      'notes.cfg': codeBlock`
        [section]
        key = value
      `,
    });
    const { code, err } = cli(dir, 'check', 'notes.cfg', '--baseline', 'none');
    expect(code).toBe(2);
    expect(err).toContain(
      'notes.cfg: skipped: cannot tell what kind of file this is: a Dockerfile, a requirements file, a conda environment, a Kubernetes manifest, a project or lock file',
    );
  });
});

describe('.gitignore and the baseline’s files patterns', () => {
  it('the walk respects .gitignore at every level; files.exclude and files.include add to it', () => {
    const dir = tree({
      '.gitignore': 'vendor/\n',
      'vendor/requirements.txt': BAD,
      'sub/.gitignore': 'generated/\n',
      'sub/generated/requirements.txt': BAD,
      'sub/requirements.txt': BAD,
      'requirements.txt': BAD,
      'deps/gpu.deps': BAD,
      'baseline.yaml': codeBlock`
        files:
          include: ["deps/*.deps"]
          exclude: ["sub/requirements.txt"]
      `,
    });
    expect(pathsOf(cli(dir, 'check', '--baseline', 'baseline.yaml', '--format', 'json').out)).toEqual([
      'deps/gpu.deps',
      'requirements.txt',
    ]);
    // Named on the command line, an ignored file is checked.
    expect(pathsOf(cli(dir, 'check', 'vendor/requirements.txt', '--baseline', 'none', '--format', 'json').out)).toEqual(
      ['vendor/requirements.txt'],
    );
  });
});

describe('YAML aliases in conda files', () => {
  it('a dependency written as an alias is checked like the anchor it names', () => {
    const text = codeBlock`
      name: x
      channels:
        - pytorch
        - nvidia
      dependencies:
        - &cuda pytorch-cuda=12.6
        - pip
        - pip:
          - torch==2.3.0
        - *cuda
    `;
    const file = parseFile('environment.yml', text, 'conda');
    expect(file.problems).toEqual([]);
    expect(file.packages.filter((pkg) => pkg.name === 'pytorch-cuda')).toHaveLength(2);
  });

  it('an alias that names no anchor is a positioned error', () => {
    const file = parseFile(
      'environment.yml',
      codeBlock`
        name: x
        dependencies:
          - *missing
      `,
      'conda',
    );
    expect(file.problems.map((problem) => problem.message).join('\n')).toMatch(/alias|anchor/i);
  });
});

describe('--changed-since keeps the cross-file check', () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, {
      cwd,
      stdio: 'pipe',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });

  it('a changed requirements file is checked with the Dockerfile that installs it, as a full check would', () => {
    const dir = tree({
      Dockerfile: codeBlock`
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        COPY requirements.txt .
        RUN pip install -r requirements.txt
      `,
      'requirements.txt': 'torch==2.5.1\n',
      'other/requirements.txt': 'numpy==1.26.4\n',
    });
    git(dir, 'init', '-q');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'init');
    writeFileSync(
      join(dir, 'requirements.txt'),
      codeBlock`
        --index-url https://download.pytorch.org/whl/cu118
        torch==2.3.0+cu118
      `,
    );
    const changed = JSON.parse(
      cli(dir, 'check', '--changed-since', 'HEAD', '--baseline', 'none', '--format', 'json').out,
    ) as { findings: Finding[] };
    const full = JSON.parse(cli(dir, 'check', '--baseline', 'none', '--format', 'json').out) as { findings: Finding[] };
    expect(changed.findings.filter((finding) => finding.ruleId === 'cuda-mismatch')).toHaveLength(2);
    expect(changed.findings).toEqual(
      full.findings.filter((finding) => finding.location.path !== 'other/requirements.txt'),
    );
    rmSync(join(dir, 'requirements.txt'));
    const deleted = JSON.parse(
      cli(dir, 'check', '--changed-since', 'HEAD', '--baseline', 'none', '--format', 'json').out,
    ) as { findings: Finding[] };
    expect(
      deleted.findings.map((finding) => `${finding.ruleId}@${finding.location.path}:${finding.location.start.line}`),
    ).toEqual(['missing-include@Dockerfile:3']);
  });
});

describe('say error only when it is certain', () => {
  const kb = defaultKnowledgeBase();
  const findings = (path: string, text: string, kind: 'dockerfile' | 'requirements' | 'conda') =>
    gate([parseFile(path, text, kind)], EMPTY_BASELINE, kb).findings.map(
      (finding) => `${finding.ruleId}:${finding.severity}@${finding.location.start.line}`,
    );

  it('a CPU torch beside jax[cuda12] is deliberate: notices, no error', () => {
    expect(
      findings(
        'requirements.txt',
        codeBlock`
          --extra-index-url https://download.pytorch.org/whl/cpu
          torch==2.3.0+cpu
          jax[cuda12]==0.4.30
        `,
        'requirements',
      ),
    ).toEqual(['cpu-wheel:notice@1', 'cpu-wheel:notice@2']);
  });

  it('a CPU torch on an nvidia/cuda image is an error', () => {
    expect(
      findings(
        'Dockerfile',
        codeBlock`
          FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04
          RUN pip install torch==2.3.0+cpu --index-url https://download.pytorch.org/whl/cpu
        `,
        'dockerfile',
      ),
    ).toContain('cpu-wheel:error@2');
  });

  it('a plain tensorflow pin does not make an environment target CUDA', () => {
    expect(
      findings(
        'requirements.txt',
        codeBlock`
          tensorflow==2.15.0
          torch==2.3.0+cpu
          --extra-index-url https://download.pytorch.org/whl/cpu
        `,
        'requirements',
      ),
    ).toEqual([]);
  });

  it('a +cu117 pin no index serves cannot be installed: an error; with torch_stable.html or an index in the environment: nothing', () => {
    expect(findings('requirements.txt', 'torch==1.13.1+cu117\n', 'requirements')).toContain('index-url:error@1');
    expect(
      findings(
        'requirements.txt',
        codeBlock`
          -f https://download.pytorch.org/whl/torch_stable.html
          torch==1.13.1+cu117
        `,
        'requirements',
      ),
    ).toEqual([]);
    expect(
      findings(
        'Dockerfile',
        codeBlock`
          FROM nvidia/cuda:11.7.1-runtime-ubuntu22.04
          ENV PIP_EXTRA_INDEX_URL="https://download.pytorch.org/whl/cu117"
          RUN pip install torch==1.13.1+cu117
        `,
        'dockerfile',
      ),
    ).toEqual([]);
    expect(
      findings(
        'Dockerfile',
        codeBlock`
          FROM nvidia/cuda:11.7.1-runtime-ubuntu22.04
          RUN pip config set global.extra-index-url https://download.pytorch.org/whl/cu117 && pip install torch==1.13.1+cu117
        `,
        'dockerfile',
      ),
    ).toEqual([]);
    expect(
      findings(
        'Dockerfile',
        codeBlock`
          FROM nvidia/cuda:11.7.1-runtime-ubuntu22.04
          RUN PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu117 pip install torch==1.13.1+cu117
        `,
        'dockerfile',
      ),
    ).toEqual([]);
    // Names only an object's prototype knows set no index (`constructor` was once read as one: a red check).
    expect(
      findings(
        'Dockerfile',
        codeBlock`
          FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04
          ENV constructor=https://download.pytorch.org/whl/cu118 toString=https://download.pytorch.org/whl/cu118
          RUN pip config set global.constructor https://download.pytorch.org/whl/cu118
          RUN constructor=https://download.pytorch.org/whl/cu118 pip install torch==2.3.0
          RUN X=$(echo CU121 | tr '[:constructor:]' a) && pip install torch==2.3.0
        `,
        'dockerfile',
      ),
    ).toEqual([]);
  });

  it('an extra index beside an exact pin it has is what pip installs; beside a range, PyPI wins (a warning)', () => {
    expect(
      findings(
        'requirements.txt',
        codeBlock`
          --extra-index-url https://download.pytorch.org/whl/cu118
          torch==2.3.0
        `,
        'requirements',
      ),
    ).toEqual([]);
    expect(
      findings(
        'requirements.txt',
        codeBlock`
          --extra-index-url https://download.pytorch.org/whl/cu118
          torch>=2.0
        `,
        'requirements',
      ),
    ).toContain('index-url:warning@2');
  });

  it('an image tag built from an ARG with no default is not judged', () => {
    expect(findings('Dockerfile', 'ARG CUDA\nFROM nvidia/cuda:${CUDA}-devel-ubuntu22.04\n', 'dockerfile')).toEqual([]);
  });
});
