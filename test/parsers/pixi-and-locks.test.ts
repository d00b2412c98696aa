/**
 * pixi manifests (pixi.toml, [tool.pixi]), pixi.lock, poetry.lock and conda-lock.yml, read as their tools install
 * them, on written cases and on the real files of fixtures/corpus-packaging with the reviewer's reading in its
 * README; and the Dockerfile commands that install them (`pixi install -e`, `poetry install --with/-E`,
 * `conda-lock install`).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import type { FileKind, ParsedFile } from '../../src/parsers/facts.js';
import { classifyPath, parseFile } from '../../src/parsers/index.js';
import { activeExtras, evaluateMarker } from '../../src/parsers/markers.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';

const CORPUS = join(ROOT, 'fixtures', 'corpus-packaging');
const real = (name: string) => readFileSync(join(CORPUS, name), 'utf8');

/** Each selection: its contexts' tools, channels or indexes, packages (name, spec, build) and CUDA requirement. */
function selections(file: ParsedFile): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const context of file.contexts) {
    const packages = file.packages
      .filter((pkg) => pkg.context === context.id)
      .map(
        (pkg) =>
          `${pkg.name}${pkg.specifier}${pkg.build ? ` [${pkg.build}]` : ''}${pkg.channel ? ` @${pkg.channel}` : ''}`,
      );
    const where =
      context.indexes.map((index) => index.url).join(' ') || (context.tool === 'conda-env' ? 'conda' : 'PyPI');
    (out[context.variant!] ??= []).push(
      `${where}: ${packages.join(', ')}${context.systemCuda ? ` (cuda ${context.systemCuda.value})` : ''}`,
    );
  }
  return out;
}

const parse = (path: string, text: string, kind: FileKind) => parseFile(path, text, kind);

/** Runs the CLI on a directory laid out from `files` (name → text) and returns its finding lines. */
/** lucaspar/poetry-torch's project and Poetry 1.8 lock: torch and torchvision of cu118 in an optional `cuda` group. */
const POETRY_TORCH = join(ROOT, 'fixtures', 'rules', 'cuda-mismatch', 'poetry-export-under-image');

function check(files: Record<string, string>): string[] {
  const work = mkdtempSync(join(tmpdir(), 'cgk-pixi-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(work, name, '..'), { recursive: true });
    writeFileSync(join(work, name), text);
  }
  const { out } = cli(work, 'check', '.', '--baseline', 'none');
  return out.split('\n').filter((line) => /^\S+:\d+:\d+: /.test(line));
}

describe('file names', () => {
  it('pixi.toml, pixi.lock, poetry.lock and conda-lock.yml are kinds of their own; rendered conda-lock files are environments', () => {
    expect(classifyPath('pixi.toml')).toBe('pixi');
    expect(classifyPath('envs/gpu/pixi.toml')).toBe('pixi');
    expect(classifyPath('pixi.lock')).toBe('pixi-lock');
    expect(classifyPath('poetry.lock')).toBe('poetry-lock');
    expect(classifyPath('conda-lock.yml')).toBe('conda-lock');
    expect(classifyPath('ci/linux.conda-lock.yaml')).toBe('conda-lock');
    expect(classifyPath('tests/test-cuda/conda-linux-64.lock.yml')).toBe('conda');
    expect(classifyPath('pixi.toml.orig')).toBeUndefined();
  });
});

describe('pixi manifests', () => {
  it('01: the default environment with its CUDA requirement and a conda-forge pytorch range (conda-forge the only channel)', () => {
    const file = parse('pixi.toml', real('01__matthewfeickert__pytorch-gpu-pixi-example__pixi.toml'), 'pixi');
    expect(file.problems).toEqual([]);
    expect(selections(file)).toEqual({
      'environment default': ['conda: pytorch>=2.8.0,<3 @conda-forge, curl>=8.17.0,<9 @conda-forge (cuda 12.0)'],
    });
  });

  it('07: a gpu default environment and a cpu one, each its own selection', () => {
    const file = parse(
      'pixi.toml',
      real('07__prefix-dev__pixi__docs_source_files_pixi_tomls_pytorch-conda-forge-envs.toml'),
      'pixi',
    );
    expect(selections(file)).toEqual({
      'environment cpu': ['conda: pytorch-cpu* @conda-forge'],
      'environment default': ['conda: cuda-version=12.6.* @conda-forge, pytorch-gpu* @conda-forge (cuda 12.0)'],
    });
  });

  it('08: PyPI packages with their own index, per feature', () => {
    const file = parse(
      'pixi.toml',
      real('08__prefix-dev__pixi__docs_source_files_pixi_tomls_pytorch-pypi-envs.toml'),
      'pixi',
    );
    const gpu = selections(file)['environment gpu']!;
    expect(gpu).toContain('https://download.pytorch.org/whl/cu124: torch>=2.5.1, torchvision>=0.20.1 (cuda 12.0)');
  });

  it('09 ([tool.pixi] in pyproject.toml): named platforms with a cuda each, and targets chosen by glob', () => {
    const file = parse(
      'pyproject.toml',
      real('09__prefix-dev__pixi__docs_source_files_pyproject_tomls_pytorch-pypi-envs.toml'),
      'pyproject',
    );
    const all = selections(file);
    expect(all['environment default on linux-64-cuda']).toContain(
      'https://download.pytorch.org/whl/cu124: torch>=2.5.1, torchvision>=0.20.1 (cuda 12.0)',
    );
    expect(all['environment default on linux-64-cpu']).toContain(
      'https://download.pytorch.org/whl/cpu: torch>=2.5.1, torchvision>=0.20.1',
    );
  });

  it('03: one selection per environment, features in order, dependency tables with channel and version', () => {
    const file = parse('pixi.toml', real('03__intMinsu__pixi-sample__pixi.toml'), 'pixi');
    expect(file.problems).toEqual([]);
    const all = selections(file);
    expect(Object.keys(all)).toHaveLength(13); // the default environment and the 12 named ones
    const cu121 = all['environment py310cu121']!.join(' ');
    expect(cu121).toContain('pytorch=2.3.0 @pytorch');
    expect(cu121).toContain('pytorch-cuda=12.1 @pytorch');
    expect(cu121).toContain('cuda* @nvidia/label/cuda-12.1.0');
    expect(cu121).toContain('python=3.10.*');
  });

  it('23: [tool.pixi] with a cuda feature: a version with a build glob, and __cuda left out as the virtual package it is', () => {
    const file = parse('pyproject.toml', real('23__ericmjl__pixi-cuda-environment__pyproject.toml'), 'pyproject');
    const cuda = selections(file)['environment cuda']!.join(' ');
    expect(cuda).toContain('cuda-version==12.1');
    expect(cuda).toContain('jaxlib* [*cuda*]');
    expect(cuda).not.toContain('__cuda');
    expect(cuda).toContain('(cuda 12)');
  });

  it('31: features written as one table with inline dependencies and system-requirements', () => {
    const file = parse('pixi.toml', real('31__prefix-dev__pixi__examples_pytorch_pixi.toml'), 'pixi');
    const all = selections(file);
    expect(all['environment nvidia-channel']!.join(' ')).toContain('(cuda 11)');
    expect(all['environment cf-channel']!.join(' ')).toContain('pytorch* @conda-forge (cuda 12.1)');
  });

  it('32: a version spec with spaces after its commas is one version, not a version and a build', () => {
    const text = real('32__prefix-dev__pixi__examples_detectron2_pyproject.toml');
    const file = parse('pyproject.toml', text, 'pyproject');
    const pytorch = file.packages.find((pkg) => pkg.name === 'pytorch')!;
    expect([pytorch.specifier, pytorch.build]).toEqual(['>=2.4.0,<=3.0.0', undefined]);
    // Each bound still points at its characters in the file.
    expect(pytorch.clauses.map((clause) => text.slice(clause.versionSpan.start, clause.versionSpan.end))).toEqual([
      '2.4.0',
      '3.0.0',
    ]);
  });

  it('a build glob names its CUDA (`{ build = "cuda124*" }`, conda\'s `=*cuda118*`): a cuda118 pytorch build in a CUDA 12.4 environment is a mismatch', () => {
    const text = codeBlock`
      [workspace]
      channels = ["conda-forge"]
      platforms = ["linux-64"]
      [dependencies]
      cuda-version = "12.4.*"
      pytorch = { version = "2.5.*", build = "cuda118*" }
    `;
    const pytorch = parse('pixi.toml', text, 'pixi').packages.find((pkg) => pkg.name === 'pytorch')!;
    expect([pytorch.build, pytorch.localLabel]).toEqual(['cuda118*', 'cuda118']);
    expect(check({ 'pixi.toml': text })).toEqual([
      'pixi.toml:6:1: error: conda-forge::pytorch=2.5.*=cuda118* is built for CUDA 11.8, but conda-forge::cuda-version=12.4.* sets CUDA 12.4 [cuda-mismatch]',
    ]);
    const conda = parseFile(
      'environment.yml',
      codeBlock`
        channels: [conda-forge]
        dependencies:
          - pytorch=2.1.0=*cuda118*
      `,
      'conda',
    );
    expect(conda.packages[0]!.localLabel).toBe('cuda118');
  });

  it('the pixi files of the corpus: no error, as the reviewer reads them (consistent, or unpinned)', () => {
    for (const [name, as] of [
      ['01__matthewfeickert__pytorch-gpu-pixi-example__pixi.toml', 'pixi.toml'],
      ['03__intMinsu__pixi-sample__pixi.toml', 'pixi.toml'],
      ['06__prefix-dev__pixi__docs_source_files_pixi_tomls_pytorch-conda-forge.toml', 'pixi.toml'],
      ['07__prefix-dev__pixi__docs_source_files_pixi_tomls_pytorch-conda-forge-envs.toml', 'pixi.toml'],
      ['08__prefix-dev__pixi__docs_source_files_pixi_tomls_pytorch-pypi-envs.toml', 'pixi.toml'],
      ['09__prefix-dev__pixi__docs_source_files_pyproject_tomls_pytorch-pypi-envs.toml', 'pyproject.toml'],
      ['23__ericmjl__pixi-cuda-environment__pyproject.toml', 'pyproject.toml'],
      ['27__lhakso__QAT_pipeline__pixi.toml', 'pixi.toml'],
      ['31__prefix-dev__pixi__examples_pytorch_pixi.toml', 'pixi.toml'],
      ['32__prefix-dev__pixi__examples_detectron2_pyproject.toml', 'pyproject.toml'],
      ['36__ericmjl__pixi-cuda-environment__pixi.lock', 'pixi.lock'],
    ] as const)
      expect(check({ [as]: real(name) }), name).toEqual([]);
  });

  it('an environment with no-default-feature leaves the top-level dependencies out', () => {
    const text = `[workspace]
channels = ["conda-forge"]
platforms = ["linux-64"]
[dependencies]
python = "3.12.*"
[feature.lean.dependencies]
cuda-version = "12.6.*"
[environments]
lean = { features = ["lean"], no-default-feature = true }
full = ["lean"]
`;
    const all = selections(parse('pixi.toml', text, 'pixi'));
    expect(all['environment lean']).toEqual(['conda: cuda-version=12.6.* @conda-forge']);
    expect(all['environment full']).toEqual(['conda: python=3.12.* @conda-forge, cuda-version=12.6.* @conda-forge']);
  });

  it('a manifest that is not TOML is one positioned problem, and an unknown feature is named', () => {
    const broken = parse(
      'pixi.toml',
      codeBlock`
        [workspace
        channels = []
      `,
      'pixi',
    );
    expect(broken.problems).toHaveLength(1);
    const text = codeBlock`
      [workspace]
      platforms = ["linux-64"]
      [environments]
      gpu = ["cuda"]
    `;
    const unknown = parse('pixi.toml', text, 'pixi');
    expect(
      unknown.problems.map((problem) => [problem.message, text.slice(problem.span.start, problem.span.end)]),
    ).toEqual([['environment gpu: no [feature.cuda] in this manifest', '"cuda"']]);
  });
});

describe('pixi.lock', () => {
  it("36: each environment's Linux packages from their URLs, conda builds with their channel, PyPI wheels pinned", () => {
    const file = parse('pixi.lock', real('36__ericmjl__pixi-cuda-environment__pixi.lock'), 'pixi-lock');
    expect(file.problems).toEqual([]);
    const all = selections(file);
    expect(Object.keys(all)).toEqual(['environment cuda', 'environment default']);
    const cuda = all['environment cuda']!.join(' ');
    expect(cuda).toContain('cuda-version=12.1 [h1d6eff3_3] @conda-forge');
    expect(cuda).toContain('jaxlib=0.4.28 [cuda120py312h4008524_200] @conda-forge');
    expect(all['environment default']!.join(' ')).toContain('jaxlib=0.4.28 [cpu_py312h17e8b90_0] @conda-forge');
    const pandas = file.packages.find((pkg) => pkg.name === 'pandas')!;
    expect(pandas.exact).toBe('2.2.2');
  });

  it('is YAML or one positioned problem, never a throw', () => {
    expect(
      parse(
        'pixi.lock',
        codeBlock`
          version: 6
          environments: [
        `,
        'pixi-lock',
      ).problems.length,
    ).toBeGreaterThan(0);
    expect(parse('pixi.lock', '- a list\n', 'pixi-lock').problems.map((problem) => problem.message)).toEqual([
      'a pixi.lock must be a mapping',
    ]);
  });
});

describe('uv.lock forks per machine', () => {
  it('splits a selection that installs two versions of a package by machine, and only then', () => {
    // InvokeAI's lock: each extra installs its own build on x86_64 and PyPI's torch 2.7.1 on aarch64.
    const dir = join(ROOT, 'fixtures', 'rules', 'cpu-wheel', 'ok-uv-lock-machine-forks');
    const file = parseFile('uv.lock', readFileSync(join(dir, 'uv.lock'), 'utf8'), 'uv-lock');
    const torch = (variant: string) =>
      file.packages
        .filter((pkg) => pkg.name === 'torch' && file.contexts[pkg.context]!.variant === variant)
        .map((pkg) => pkg.exact);
    expect(torch('extra cpu on x86_64')).toEqual(['2.7.1+cpu']);
    expect(torch('extra cpu on aarch64')).toEqual(['2.7.1']);
    expect(torch('extra rocm on x86_64')).toEqual(['2.10.0+rocm7.1']);
    expect(torch('extra cpu')).toEqual([]);
    // The project alone installs PyPI's torch on both machines: one selection.
    expect(torch('the project')).toEqual(['2.7.1']);
    expect(file.contexts.some((context) => context.variant === 'the project on x86_64')).toBe(false);
  });
});

describe('poetry.lock and conda-lock.yml', () => {
  const POETRY = `[[package]]
name = "torch"
version = "2.3.1+cpu"
optional = true
python-versions = ">=3.8"
groups = ["main"]
markers = "extra == \\"cpu\\""
files = []

[package.source]
type = "legacy"
url = "https://download.pytorch.org/whl/cpu"
reference = "pytorch-cpu"

[[package]]
name = "torch"
version = "2.3.1+cu121"
optional = true
python-versions = ">=3.8"
groups = ["main"]
markers = "extra == \\"cuda\\""
files = []

[package.source]
type = "legacy"
url = "https://download.pytorch.org/whl/cu121"
reference = "pytorch-cuda"

[[package]]
name = "pytest"
version = "8.2.0"
optional = false
python-versions = ">=3.8"
groups = ["dev"]
files = []
`;

  it('poetry.lock: the main group, each group and each extra as selections; a source URL is the index', () => {
    const all = selections(parse('poetry.lock', POETRY, 'poetry-lock'));
    expect(all).toEqual({
      'group dev': ['PyPI: pytest==8.2.0'],
      'only group dev': ['PyPI: pytest==8.2.0'],
      'extra cpu': ['https://download.pytorch.org/whl/cpu: torch==2.3.1+cpu'],
      'extra cuda': ['https://download.pytorch.org/whl/cu121: torch==2.3.1+cu121'],
    });
  });

  it('conda-lock.yml: the Linux platforms, conda packages from their URLs, optional ones left out', () => {
    const text = `version: 1
metadata:
  channels:
  - url: conda-forge
  platforms: [linux-64, osx-arm64]
package:
- name: cudatoolkit
  version: 11.8.0
  manager: conda
  platform: linux-64
  url: https://conda.anaconda.org/conda-forge/linux-64/cudatoolkit-11.8.0-h4ba93d1_13.conda
  optional: false
- name: cudatoolkit
  version: 11.8.0
  manager: conda
  platform: osx-arm64
  url: https://conda.anaconda.org/conda-forge/osx-arm64/cudatoolkit-11.8.0-h0000000_13.conda
  optional: false
- name: torch
  version: 2.3.1
  manager: pip
  platform: linux-64
  url: https://files.pythonhosted.org/packages/00/00/torch-2.3.1-cp311-cp311-manylinux1_x86_64.whl
  optional: false
- name: pytest
  version: 8.2.0
  manager: conda
  platform: linux-64
  url: https://conda.anaconda.org/conda-forge/noarch/pytest-8.2.0-pyhd8ed1ab_0.conda
  optional: true
`;
    expect(selections(parse('conda-lock.yml', text, 'conda-lock'))).toEqual({
      'platform linux-64': ['conda: cudatoolkit=11.8.0 [h4ba93d1_13] @conda-forge', 'PyPI: torch'],
    });
  });
});

describe('YAML aliases in the locks (issue 26)', () => {
  const pkg = (n: number) =>
    `  - name: p${n}\n    version: 1.0\n    manager: conda\n    platform: linux-64\n    url: https://conda.anaconda.org/conda-forge/linux-64/p${n}-1.0-h0_0.conda\n`;

  it('a package listed through an alias of an anchored entry is read at the anchor', () => {
    const text = `version: 1\nx:\n  a: &a\n${pkg(1)
      .replace(/^ {2}- /, '    ')
      .replace(/\n {4}/g, '\n    ')}package:\n- *a\n`;
    const file = parseFile('conda-lock.yml', text, 'conda-lock');
    expect(file.problems).toEqual([]);
    expect(file.packages.map((fact) => fact.name)).toEqual(['p1']);
    expect(
      text.slice(file.packages[0]!.span.start).startsWith('https://conda.anaconda.org/conda-forge/linux-64/p1-1.0'),
    ).toBe(true);
  });

  it('nested aliases ("billion laughs", 10^11 nodes expanded) are read without expanding them', () => {
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++)
      levels.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
    const file = parseFile('conda-lock.yml', `version: 1\n${levels.join('\n')}\npackage:\n- *a11\n`, 'conda-lock');
    expect(file.packages).toEqual([]);
    expect(file.problems).toEqual([]);
  });

  it('past 1,000 aliases the rest are not read, with a positioned problem; an alias before its anchor names nothing', () => {
    const many = `version: 1\nx: &x 1\npackage:\n${'- *x\n'.repeat(1001)}`;
    const bound = parseFile('conda-lock.yml', many, 'conda-lock').problems;
    expect(bound).toHaveLength(1);
    expect(bound[0]!.message).toBe('YAML: more than 1000 aliases; the rest are not read');
    expect(many.slice(bound[0]!.span.start, bound[0]!.span.end)).toBe('*x');
    const early = parseFile(
      'conda-lock.yml',
      codeBlock`
        version: 1
        package:
        - *later
        x: &later 1
      `,
      'conda-lock',
    ).problems;
    expect(early.map((problem) => problem.message)).toContain('YAML: the alias *later names no anchor before it');
  });
});

describe('Dockerfiles that install them', () => {
  const includes = (text: string) =>
    parseFile('Dockerfile', text, 'dockerfile').includes.map(
      (include) => `${include.target} ${JSON.stringify(include.selects)}${include.optional ? ' optional' : ''}`,
    );

  it('pixi install: the manifest and the lock, with the environments named', () => {
    expect(
      includes(codeBlock`
        FROM ubuntu:24.04
        RUN pixi install --manifest-path pyproject.toml --environment cuda
      `),
    ).toEqual(['pyproject.toml ["environment cuda"]', 'pixi.lock ["environment cuda"] optional']);
    expect(
      includes(codeBlock`
        FROM ubuntu:24.04
        RUN pixi install --frozen -e gpu -e cpu
      `),
    ).toEqual([
      'pixi.toml ["environment gpu","environment cpu"] optional',
      'pyproject.toml ["environment gpu","environment cpu"] optional',
      'pixi.lock ["environment gpu","environment cpu"] optional',
    ]);
  });

  it("poetry install: the main group, --with groups and -E extras (37's command)", () => {
    expect(
      includes(
        codeBlock`
          FROM ubuntu:24.04
          RUN poetry install -E vllm -E reranker --extras "awq gptq" --with cuda,docs --no-root
        `,
      ),
    ).toEqual([
      'pyproject.toml ["the project","extra vllm","extra reranker","extra awq","extra gptq","group cuda","group docs","*default-groups poetry"]',
      'poetry.lock ["the project","extra vllm","extra reranker","extra awq","extra gptq","group cuda","group docs","*default-groups poetry"] optional',
    ]);
  });

  it('pip install of a local project: its pyproject.toml as pip reads it, with the extras named; uv pip as uv reads it', () => {
    expect(
      includes(codeBlock`
        FROM python:3.12
        WORKDIR /app
        COPY . .
        RUN pip install ".[cu124,dev]" && pip install -e ./svc
      `),
    ).toEqual([
      'pyproject.toml ["pip: the project","pip: extra cu124","pip: extra dev"] optional',
      'svc/pyproject.toml ["pip: the project"] optional',
    ]);
    expect(
      includes(codeBlock`
        FROM python:3.12
        RUN uv pip install --system -e ".[deepspeed]"
      `),
    ).toEqual(['pyproject.toml ["the project","extra deepspeed"] optional']);
  });

  it("what pip reads of a pyproject.toml: the requirements without uv's routing, to be installed from the pip command's indexes", () => {
    const text = `[project]
name = "app"
version = "0.1.0"
dependencies = ["numpy==1.26.4"]
[project.optional-dependencies]
cu124 = ["torch==2.6.0"]
[tool.uv.sources]
torch = [{ index = "pytorch-cu124", extra = "cu124" }]
[[tool.uv.index]]
name = "pytorch-cu124"
url = "https://download.pytorch.org/whl/cu124"
explicit = true
`;
    const all = selections(parse('pyproject.toml', text, 'pyproject'));
    expect(all['extra cu124']).toContain('https://download.pytorch.org/whl/cu124: torch==2.6.0');
    expect(all['pip: extra cu124']).toEqual(['PyPI: numpy==1.26.4, torch==2.6.0']);
    expect(all['pip: the project']).toEqual(['PyPI: numpy==1.26.4']);
  });

  it('conda-lock install: the lock named, every platform', () => {
    expect(
      includes(codeBlock`
        FROM ubuntu:24.04
        RUN conda-lock install -n app locks/conda-lock.yml
      `),
    ).toEqual(['locks/conda-lock.yml ["*"]']);
  });

  it('24 + 23 + 36: pixi install --environment cuda is checked with that environment of the manifest and the lock', () => {
    const files = {
      Dockerfile: real('24__ericmjl__pixi-cuda-environment__Dockerfile'),
      'pyproject.toml': real('23__ericmjl__pixi-cuda-environment__pyproject.toml'),
      'pixi.lock': real('36__ericmjl__pixi-cuda-environment__pixi.lock'),
    };
    // The reviewer's CONSISTENT (12.1); the pixi image names no CUDA.
    expect(check(files).filter((line) => !line.includes('[image-pin]'))).toEqual([]);
    // On a CUDA 11.8 image the locked CUDA 12.1 libraries are a different major: the lock's lines say so.
    const under = check({
      ...files,
      Dockerfile: files.Dockerfile.replace(
        'FROM ghcr.io/prefix-dev/pixi:latest',
        'FROM nvidia/cuda:11.8.0-base-ubuntu22.04',
      ),
    });
    expect(
      under.some((line) =>
        /^pixi\.lock:\d+:\d+: error: conda-forge::cuda-version=12\.1=h1d6eff3_3 is built for CUDA 12\.1/.test(line),
      ),
    ).toBe(true);
    expect(under.every((line) => !line.startsWith('pixi.lock:') || !line.includes('cpu_py312'))).toBe(true);
  });

  it('a deleted pixi.toml is no missing include while pyproject.toml can be the manifest; a deleted requirements file is', () => {
    const dockerfile = codeBlock`
      FROM ubuntu:24.04
      WORKDIR /app
      COPY . .
      RUN pixi install -e cuda && pip install -r requirements.txt
    `;
    const files = [
      parseFile('Dockerfile', dockerfile, 'dockerfile'),
      parseFile(
        'pyproject.toml',
        codeBlock`
          [project]
          name = "app"
          version = "0.1.0"
          [tool.pixi.workspace]
          channels = ["conda-forge"]
          platforms = ["linux-64"]
        `,
        'pyproject',
      ),
    ];
    const missing = gate(files, EMPTY_BASELINE, defaultKnowledgeBase(), {
      removed: ['pixi.toml', 'requirements.txt'],
    }).findings.filter((finding) => finding.ruleId === 'missing-include');
    expect(missing.map((finding) => finding.message)).toEqual([
      'requirements.txt is deleted by this change, but this line still installs it',
    ]);
  });
});

describe('the real lock files of the corpus (fixtures/corpus-packaging 39–49), as the reviewer reads them', () => {
  const lines = (files: Record<string, string>) => check(files).filter((line) => !line.includes('[image-pin]'));

  it('every one parses without a problem', () => {
    for (const [name, kind, as] of [
      ['39__hironow__gpu-using-with-poetry__poetry.lock', 'poetry-lock', 'poetry.lock'],
      ['41__thawro__pulse-from-face-pytorch__poetry.lock', 'poetry-lock', 'poetry.lock'],
      ['42__matthewfeickert__pytorch-gpu-pixi-example__pixi.lock', 'pixi-lock', 'pixi.lock'],
      ['44__intMinsu__pixi-sample__pixi.lock', 'pixi-lock', 'pixi.lock'],
      ['45__FSadrieh__BERTchen__conda-lock.yml', 'conda-lock', 'conda-lock.yml'],
      ['47__METHODS-Group__DRDMannTurb__conda_env_files_conda-lock.yml', 'conda-lock', 'conda-lock.yml'],
      ['48__karpathy__nanochat__uv.lock', 'uv-lock', 'uv.lock'],
    ] as const)
      expect(parse(as, real(name), kind).problems, name).toEqual([]);
  });

  it('39–40 and 41 + 12: Poetry 1.x locks with torch from the cu118 source, a secondary source named by the dependency; CONSISTENT', () => {
    const hironow = parse('poetry.lock', real('39__hironow__gpu-using-with-poetry__poetry.lock'), 'poetry-lock');
    expect(selections(hironow)['the project']).toContain('https://download.pytorch.org/whl/cu118: torch==2.0.1+cu118');
    expect(
      lines({
        'poetry.lock': real('39__hironow__gpu-using-with-poetry__poetry.lock'),
        'pyproject.toml': real('40__hironow__gpu-using-with-poetry__pyproject.toml'),
      }),
    ).toEqual([]);
    const thawro = {
      'poetry.lock': real('41__thawro__pulse-from-face-pytorch__poetry.lock'),
      'pyproject.toml': real('12__thawro__pulse-from-face-pytorch__pyproject.toml'),
    };
    expect(lines(thawro)).toEqual([]);
    // Under a CUDA 12.4 image installed with poetry install, the lock's cu118 builds are the lock's lines.
    const under = lines({
      ...thawro,
      Dockerfile: codeBlock`
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        COPY pyproject.toml poetry.lock ./
        RUN pip install poetry==1.8.5 && poetry install --no-root
      `,
    });
    expect(under).toContain(
      'poetry.lock:4174:12: error: torch==2.0.1+cu118 is built for CUDA 11.8, but nvidia/cuda:12.4.1-runtime-ubuntu22.04 sets CUDA 12.4 [cuda-mismatch]',
    );
  });

  // Poetry 1.5–1.8 write no group into the lock: what `poetry install` leaves out there is told by pyproject.toml.
  it("a Poetry 1.x lock's packages that only a group the install leaves out needs are no certain mismatch", () => {
    const project = readFileSync(join(POETRY_TORCH, 'pyproject.toml'), 'utf8');
    const poetry = (install: string, pyproject = project) =>
      lines({
        'pyproject.toml': pyproject,
        'poetry.lock': readFileSync(join(POETRY_TORCH, 'poetry.lock'), 'utf8'),
        Dockerfile: codeBlock`
          FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
          COPY pyproject.toml poetry.lock ./
          RUN pip install poetry==1.8.5 && ${install}
        `,
      }).map((line) => line.replace(/: (error|warning): (\S+).*(\[[a-z-]+\])$/, ': $1 $2 $3'));
    // torch and torchvision are in the optional `cuda` group: `poetry install` does not install them.
    expect(poetry('poetry install --no-root')).toEqual([
      'poetry.lock:15:12: warning torch==2.0.1+cu118 [cuda-mismatch]',
      'poetry.lock:25:7: warning the [cuda-mismatch]',
      'poetry.lock:30:12: warning torchvision==0.15.2+cu118 [cuda-mismatch]',
    ]);
    // A group not marked optional is installed by default (python-poetry.org, "Installing group dependencies").
    expect(
      poetry('poetry install --no-root', project.replace('optional = true', '')).filter((line) =>
        line.startsWith('poetry.lock'),
      ),
    ).toEqual([
      'poetry.lock:15:12: error torch==2.0.1+cu118 [cuda-mismatch]',
      'poetry.lock:25:7: error the [cuda-mismatch]',
      'poetry.lock:30:12: error torchvision==0.15.2+cu118 [cuda-mismatch]',
    ]);
    // With the group, they are installed: certain.
    expect(poetry('poetry install --no-root --with cuda').filter((line) => line.startsWith('poetry.lock'))).toEqual([
      'poetry.lock:15:12: error torch==2.0.1+cu118 [cuda-mismatch]',
      'poetry.lock:25:7: error the [cuda-mismatch]',
      'poetry.lock:30:12: error torchvision==0.15.2+cu118 [cuda-mismatch]',
    ]);
  });

  it('42–43: a pixi.lock v6 (file names only) with CUDA 12.9 builds on Linux; CONSISTENT', () => {
    const file = parse('pixi.lock', real('42__matthewfeickert__pytorch-gpu-pixi-example__pixi.lock'), 'pixi-lock');
    const linux = selections(file)['environment default']!.join(' ');
    expect(linux).toContain('pytorch=2.8.0 [cuda129_mkl_py313_h7947483_302] @conda-forge');
    expect(linux).toContain('cuda-version=12.9 [h4f385c5_3] @conda-forge');
    expect(
      lines({
        'pixi.lock': real('42__matthewfeickert__pytorch-gpu-pixi-example__pixi.lock'),
        'pixi.toml': real('43__matthewfeickert__pytorch-gpu-pixi-example__pixi.toml'),
      }),
    ).toEqual([]);
  });

  it('44 + 03: the cu121 environments lock CUDA 12.6 toolkit packages beside the 12.1 runtime (INCONSISTENT, minor); the others are consistent', () => {
    const found = lines({
      'pixi.lock': real('44__intMinsu__pixi-sample__pixi.lock'),
      'pixi.toml': real('03__intMinsu__pixi-sample__pixi.toml'),
    });
    expect(found.every((line) => / warning: .*\[cuda-mismatch\]$/.test(line))).toBe(true);
    expect(found.map((line) => Number(/^pixi\.lock:(\d+):/.exec(line)?.[1]))).toEqual([
      // Per environment: cuda-cccl, cuda-compiler, cuda-driver-dev, cuda-libraries-dev, cuda-nvcc, cuda-profiler-api
      // and cuda-version, all packages of CUDA 12.6.
      592, 595, 609, 613, 616, 635, 640, 1649, 1652, 1666, 1670, 1673, 1692, 1697, 2526, 2529, 2543, 2547, 2550, 2569,
      2574,
    ]);
    expect(found.filter((line) => line.includes('cuda-version=12.6'))).toHaveLength(3);
  });

  it('45–46: cuda-version 12.5 from conda-forge in a pytorch-cuda 11.8 environment (INCONSISTENT)', () => {
    expect(
      lines({
        'conda-lock.yml': real('45__FSadrieh__BERTchen__conda-lock.yml'),
        'environment.yml': real('46__FSadrieh__BERTchen__environment.yml'),
      }),
    ).toEqual([
      'conda-lock.yml:2026:8: error: conda-forge::cuda-version=12.5=hd4f0392_3 is built for CUDA 12.5, but nvidia::cuda-cudart=11.8.89=0 sets CUDA 11.8 [cuda-mismatch]',
    ]);
  });

  it('47: conda-forge pytorch cuda118 with cuda-version 11.8 and cudatoolkit 11.8.0 on Linux; CONSISTENT', () => {
    const file = parse(
      'conda-lock.yml',
      real('47__METHODS-Group__DRDMannTurb__conda_env_files_conda-lock.yml'),
      'conda-lock',
    );
    expect(Object.keys(selections(file))).toEqual(['platform linux-64']);
    expect(lines({ 'conda-lock.yml': real('47__METHODS-Group__DRDMannTurb__conda_env_files_conda-lock.yml') })).toEqual(
      [],
    );
  });

  it("48–49: uv's conflict markers pick one torch per extra (PyPI's without an extra, +cpu, +cu128); CONSISTENT", () => {
    const file = parse('uv.lock', real('48__karpathy__nanochat__uv.lock'), 'uv-lock');
    const torch = (variant: string) =>
      file.packages
        .filter((pkg) => pkg.name === 'torch' && file.contexts[pkg.context]!.variant === variant)
        .map((pkg) => pkg.exact);
    expect(torch('the project')).toEqual(['2.9.1']);
    expect(torch('extra cpu')).toEqual(['2.9.1+cpu']);
    expect(torch('extra gpu')).toEqual(['2.9.1+cu128']);
    expect(
      lines({
        'uv.lock': real('48__karpathy__nanochat__uv.lock'),
        'pyproject.toml': real('49__karpathy__nanochat__pyproject.toml'),
      }),
    ).toEqual([]);
  });
});

describe('PEP 508 markers, judged for Linux with the extras a selection installs', () => {
  it('is true, false, or unknown (undefined) when it depends on what is not known', () => {
    const nanochat = (extras: string[]) => ({ extras: activeExtras('nanochat', extras) });
    const cases: [string, Parameters<typeof evaluateMarker>[1], boolean | undefined][] = [
      ["sys_platform == 'linux' or sys_platform == 'win32'", {}, true],
      ["sys_platform == 'darwin'", {}, false],
      ["platform_machine == 'x86_64' and platform_system == 'Linux'", {}, undefined],
      ["python_version=='3.10' and ('linux' in sys_platform)", {}, undefined],
      ["python_version=='3.10' and ('win' in sys_platform)", {}, false],
      ["extra == 'extra-8-nanochat-gpu'", nanochat(['gpu']), true],
      ["extra == 'extra-8-nanochat-gpu'", nanochat([]), false],
      [
        "(extra == 'extra-8-nanochat-cpu' and extra == 'extra-8-nanochat-gpu') or (extra != 'extra-8-nanochat-cpu' and extra != 'extra-8-nanochat-gpu')",
        nanochat([]),
        true,
      ],
      ["extra=='cpu' and extra!='cuda'", {}, undefined],
      ["extra=='cpu' and extra!='cuda'", { extras: new Set(['cuda']) }, false],
      ['not a marker ((', {}, undefined],
      // A name only an object's prototype knows is no variable with a value.
      ["constructor == 'x'", {}, undefined],
      ['toString == toString', { values: { python_version: '3.11' } }, undefined],
    ];
    for (const [marker, environment, expected] of cases)
      expect(evaluateMarker(marker, environment), marker).toBe(expected);
  });
});

describe('pixi keys that are not the dependency name as written', () => {
  it('a dotted key (`0.cuda-version = …`, from the fuzz suite) gives facts positioned inside the file', () => {
    const text = codeBlock`
      [feature.cu126.dependencies]
      0.cuda-version = "12.6.*"
      pytorch = { version = "2.6.0", build = "cuda126*" }

      [environments]
      cu126 = ["cu126"]
    `;
    const file = parseFile('pixi.toml', text, 'pixi');
    for (const pkg of file.packages) expect(pkg.span.start).toBeGreaterThanOrEqual(0);
    expect(text.slice(file.packages[0]!.span.start, file.packages[0]!.span.end)).toMatch(/^0\.cuda-version/);
  });
});
