/**
 * pyproject.toml read as uv installs it (docs.astral.sh/uv/concepts/indexes, uv's PyTorch guide), on written
 * cases and on the real files of fixtures/corpus-packaging with the reviewer's reading in its README.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { classifyPath, parseFile } from '../../src/parsers/index.js';
import { holdsOnLinux } from '../../src/parsers/markers.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';

const parse = (text: string) => parseFile('pyproject.toml', text, 'pyproject');
const at = (text: string, needle: string) => ({
  start: text.indexOf(needle),
  end: text.indexOf(needle) + needle.length,
});

/** Each context's variant, its indexes and its packages. */
function selections(text: string): Record<string, { index: string; packages: string[] }[]> {
  const file = parse(text);
  const out: Record<string, { index: string; packages: string[] }[]> = {};
  for (const context of file.contexts) {
    // What `pip install .` reads is tested on its own (test/parsers/pixi-and-locks.test.ts).
    if (context.variant!.startsWith('pip: ')) continue;
    (out[context.variant!] ??= []).push({
      index: context.indexes.map((index) => `${index.kind} ${index.url}`).join(', ') || 'PyPI',
      packages: file.packages.filter((pkg) => pkg.context === context.id).map((pkg) => `${pkg.name}${pkg.specifier}`),
    });
  }
  return out;
}

const GUIDE = `[project]
name = "project"
version = "0.1.0"
dependencies = ["numpy==1.26.4"]

[project.optional-dependencies]
cpu = ["torch==2.6.0", "torchvision==0.21.0"]
cu124 = ["torch==2.6.0", "torchvision==0.21.0", "torchaudio==2.6.0"]

[tool.uv]
conflicts = [[{ extra = "cpu" }, { extra = "cu124" }]]

[tool.uv.sources]
torch = [
  { index = "pytorch-cpu", extra = "cpu" },
  { index = "pytorch-cu124", extra = "cu124" },
  { index = "pytorch-mac", marker = "sys_platform == 'darwin'" },
]
torchvision = [{ index = "pytorch-cpu", extra = "cpu" }, { index = "pytorch-cu124", extra = "cu124" }]

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu124"
url = "https://download.pytorch.org/whl/cu124"
explicit = true
`;

describe('pyproject.toml', () => {
  it('is classified by name, by the CLI and the App alike', () => {
    expect(classifyPath('pyproject.toml')).toBe('pyproject');
    expect(classifyPath('services/api/pyproject.toml')).toBe('pyproject');
    expect(classifyPath('pyproject.toml.bak')).toBeUndefined();
  });

  it('one selection per extra and group, each package from the index its source routes it to', () => {
    expect(selections(GUIDE)).toEqual({
      'the project': [{ index: 'PyPI', packages: ['numpy==1.26.4'] }],
      'extra cpu': [
        { index: 'PyPI', packages: ['numpy==1.26.4'] },
        { index: 'index-url https://download.pytorch.org/whl/cpu', packages: ['torch==2.6.0', 'torchvision==0.21.0'] },
      ],
      'extra cu124': [
        { index: 'PyPI', packages: ['numpy==1.26.4', 'torchaudio==2.6.0'] },
        {
          index: 'index-url https://download.pytorch.org/whl/cu124',
          packages: ['torch==2.6.0', 'torchvision==0.21.0'],
        },
      ],
    });
  });

  it('keeps exact positions: each requirement and each index URL where it is written', () => {
    const file = parse(GUIDE);
    const torch = file.packages.find((pkg) => pkg.name === 'torchaudio')!;
    expect(torch.span).toEqual(at(GUIDE, 'torchaudio==2.6.0'));
    expect(GUIDE.slice(torch.clauses[0]!.versionSpan.start, torch.clauses[0]!.versionSpan.end)).toBe('2.6.0');
    const index = file.indexes.find((candidate) => candidate.url.endsWith('cu124'))!;
    expect(index.urlSpan).toEqual(at(GUIDE, 'https://download.pytorch.org/whl/cu124'));
    expect(file.problems).toEqual([]);
  });

  it('reads dotted keys, inline tables, groups with include-group, and [tool.uv] index-url / extra-index-url', () => {
    const text = `project.dependencies = ["torch==2.3.1+cu121"]
[dependency-groups]
test = ["pytest==8.3.2"]
dev = [{ include-group = "test" }, "ruff==0.6.0"]
[tool.uv]
extra-index-url = ["https://download.pytorch.org/whl/cu121"]
index-url = "https://pypi.example.org/simple"
index-strategy = "unsafe-best-match"
`;
    expect(selections(text)).toEqual({
      'the project': [
        {
          index: 'extra-index-url https://download.pytorch.org/whl/cu121, index-url https://pypi.example.org/simple',
          packages: ['torch==2.3.1+cu121'],
        },
      ],
      'group test': [
        {
          index: 'extra-index-url https://download.pytorch.org/whl/cu121, index-url https://pypi.example.org/simple',
          packages: ['torch==2.3.1+cu121', 'pytest==8.3.2'],
        },
      ],
      'group dev': [
        {
          index: 'extra-index-url https://download.pytorch.org/whl/cu121, index-url https://pypi.example.org/simple',
          packages: ['torch==2.3.1+cu121', 'pytest==8.3.2', 'ruff==0.6.0'],
        },
      ],
      // A group installed alone (`uv sync --only-group dev`), without the project's dependencies.
      'only group test': [
        {
          index: 'extra-index-url https://download.pytorch.org/whl/cu121, index-url https://pypi.example.org/simple',
          packages: ['pytest==8.3.2'],
        },
      ],
      'only group dev': [
        {
          index: 'extra-index-url https://download.pytorch.org/whl/cu121, index-url https://pypi.example.org/simple',
          packages: ['pytest==8.3.2', 'ruff==0.6.0'],
        },
      ],
    });
  });

  it('[tool.uv] override-dependencies replace the requirements on their package for uv; one that never holds drops it', () => {
    const text = codeBlock`
      [project]
      dependencies = ["torch>=2.6", "torchvision", "numpy<2"]
      [project.optional-dependencies]
      serve = ["torch==2.7.1"]
      [tool.uv]
      override-dependencies = [
        "torch; sys_platform == 'never'",
        "numpy==1.26.4; sys_platform == 'linux'",
        "numpy==1.26.0; sys_platform == 'darwin'",
      ]
    `;
    expect(selections(text)).toEqual({
      'the project': [{ index: 'PyPI', packages: ['torchvision', 'numpy==1.26.4'] }],
      'extra serve': [{ index: 'PyPI', packages: ['torchvision', 'numpy==1.26.4'] }],
    });
    // pip reads no [tool.uv]: what `pip install .` installs keeps the project's own requirements.
    const file = parse(text);
    const pip = file.contexts.find((context) => context.variant === 'pip: the project')!;
    expect(file.packages.filter((pkg) => pkg.context === pip.id).map((pkg) => pkg.name + pkg.specifier)).toEqual([
      'torch>=2.6',
      'torchvision',
      'numpy<2',
    ]);
  });

  it("uv's default first-index strategy takes torch from a non-explicit PyTorch index, other packages from PyPI", () => {
    const text = codeBlock`
      [project]
      dependencies = ["torch==2.6.0", "numpy==1.26.4"]
      [[tool.uv.index]]
      name = "pytorch"
      url = "https://download.pytorch.org/whl/cu126"
    `;
    expect(selections(text)['the project']).toEqual([
      { index: 'index-url https://download.pytorch.org/whl/cu126', packages: ['torch==2.6.0'] },
      { index: 'extra-index-url https://download.pytorch.org/whl/cu126', packages: ['numpy==1.26.4'] },
    ]);
  });

  it("PDM's sources: include_packages routes its packages there alone, pypi replaces PyPI, find_links is a page", () => {
    const text = codeBlock`
      [project]
      dependencies = ["torch==2.1.0+cu118", "numpy==1.26.4", "xformers==0.0.22.post7"]
      [[tool.pdm.source]]
      name = "pypi"
      url = "https://mirror.example.com/simple"
      [[tool.pdm.source]]
      name = "torch"
      url = "https://download.pytorch.org/whl/cu118"
      include_packages = ["torch"]
      [[tool.pdm.source]]
      name = "wheels"
      url = "https://download.pytorch.org/whl/torch_stable.html"
      type = "find_links"
    `;
    expect(selections(text)['the project']).toEqual([
      { index: 'index-url https://download.pytorch.org/whl/cu118', packages: ['torch==2.1.0+cu118'] },
      {
        index:
          'find-links https://download.pytorch.org/whl/torch_stable.html, index-url https://mirror.example.com/simple',
        packages: ['numpy==1.26.4', 'xformers==0.0.22.post7'],
      },
    ]);
  });

  it('reads the CUDA an extra or group is named for', async () => {
    const { cudaOfName } = await import('../../src/analysis/claims.js');
    expect(
      [
        'cu124',
        'cu118only',
        'cu126-torch280',
        'cu124onlytorch250',
        'cu12',
        'cuda12',
        'cuda-12.4',
        'gpu-cu130',
        'cu92',
        'cpu',
        'cuda',
        'accu128x',
        'cu1240',
      ].map((name) => cudaOfName(name)),
    ).toEqual([
      { cuda: '12.4', precision: 'minor' },
      { cuda: '11.8', precision: 'minor' },
      { cuda: '12.6', precision: 'minor' },
      { cuda: '12.4', precision: 'minor' },
      { cuda: '12', precision: 'major' },
      { cuda: '12', precision: 'major' },
      { cuda: '12.4', precision: 'minor' },
      { cuda: '13.0', precision: 'minor' },
      { cuda: '9.2', precision: 'minor' },
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('judges only platform markers: a source for macOS or Windows alone does not hold on Linux', () => {
    expect(holdsOnLinux(undefined)).toBe(true);
    expect(holdsOnLinux("sys_platform == 'linux'")).toBe(true);
    expect(holdsOnLinux("sys_platform == 'linux' or sys_platform == 'win32'")).toBe(true);
    expect(holdsOnLinux("sys_platform != 'darwin'")).toBe(true);
    expect(holdsOnLinux("sys_platform == 'darwin'")).toBe(false);
    expect(holdsOnLinux("platform_system == 'Windows'")).toBe(false);
    expect(holdsOnLinux("python_version >= '3.10'")).toBe(true);
  });

  it('a string written with escapes is pointed at whole and never edited', () => {
    const text = '[project]\ndependencies = ["torch==2.3.0\\u002bcu118"]\n';
    const file = parse(text);
    expect(file.packages[0]).toMatchObject({ name: 'torch', exact: '2.3.0+cu118' });
    expect(file.packages[0]!.span).toEqual(at(text, '"torch==2.3.0\\u002bcu118"'));
  });

  it('a file that is not TOML is one positioned parse-error, never a crash', () => {
    const text = codeBlock`
      [project]
      dependencies = ["torch==2.6.0"
      name = "x"
    `;
    const file = parse(text);
    expect(file.packages).toEqual([]);
    expect(file.problems).toHaveLength(1);
    expect(file.problems[0]!.message).toMatch(/^not valid TOML: /);
    const report = gate([file], EMPTY_BASELINE, defaultKnowledgeBase());
    expect(report.findings.map((finding) => [finding.ruleId, finding.location.start.line])).toEqual([
      ['parse-error', 3],
    ]);
  });

  it('names a source routed to an index that does not exist', () => {
    const text = codeBlock`
      [project]
      dependencies = ["torch==2.6.0"]
      [tool.uv.sources]
      torch = { index = "pytorch-cu124" }
    `;
    expect(parse(text).problems.map((problem) => problem.message)).toEqual([
      '[tool.uv.sources] torch: no [[tool.uv.index]] is named "pytorch-cu124"',
    ]);
  });
});

describe('a Dockerfile that runs uv sync', () => {
  it("includes the project's pyproject.toml with the selection its options name", () => {
    const text = codeBlock`
      FROM ubuntu:22.04
      WORKDIR /app
      COPY svc/ svc/
      RUN uv sync --frozen --project svc --extra cu124 --group=dev && uv sync --all-extras
      RUN uv sync --only-group lint && uv sync --only-dev && poetry install --only main,docs
      RUN uv sync --no-dev --no-group lint && uv sync --all-groups --no-default-groups
      RUN poetry install --without dev,test --with cuda && poetry install --no-dev
    `;
    const file = parseFile('Dockerfile', text, 'dockerfile');
    // uv and Poetry install their default groups with what the options select, less those left out by name; --only
    // (uv's --only-group, --only-dev) and uv's --no-default-groups leave them all out.
    expect(file.includes.map((include) => [include.target, include.selects])).toEqual([
      ['svc/pyproject.toml', ['extra cu124', 'group dev', '*default-groups uv']],
      ['svc/uv.lock', ['extra cu124', 'group dev', '*default-groups uv']],
      ['pyproject.toml', ['*extras', '*default-groups uv']],
      ['uv.lock', ['*extras', '*default-groups uv']],
      ['pyproject.toml', ['only group lint']],
      ['uv.lock', ['only group lint']],
      ['pyproject.toml', ['only group dev']],
      ['uv.lock', ['only group dev']],
      ['pyproject.toml', ['the project', 'only group docs']],
      ['poetry.lock', ['the project', 'only group docs']],
      ['pyproject.toml', ['the project', '*default-groups uv', '!group dev', '!group lint']],
      ['uv.lock', ['the project', '*default-groups uv', '!group dev', '!group lint']],
      ['pyproject.toml', ['*groups']],
      ['uv.lock', ['*groups']],
      ['pyproject.toml', ['the project', 'group cuda', '*default-groups poetry', '!group dev', '!group test']],
      ['poetry.lock', ['the project', 'group cuda', '*default-groups poetry', '!group dev', '!group test']],
      ['pyproject.toml', ['the project', '*default-groups poetry', '!group dev']],
      ['poetry.lock', ['the project', '*default-groups poetry', '!group dev']],
    ]);
  });

  it('checks the selected extra with the image, and the other extras on their own', () => {
    const work = mkdtempSync(join(tmpdir(), 'cgk-uv-sync-'));
    const fixture = join(ROOT, 'fixtures', 'rules', 'cuda-mismatch', 'pyproject-uv-sync-extra');
    for (const name of ['Dockerfile', 'pyproject.toml'])
      writeFileSync(join(work, name), readFileSync(join(fixture, name)));
    const out = (args: string[]) => cli(work, ...args).out;
    expect(out(['check', '.', '--baseline', 'none'])).toContain(
      'but nvidia/cuda:12.4.1-runtime-ubuntu22.04 sets CUDA 12.4 [cuda-mismatch]',
    );
    // Selecting the extra that matches the image leaves nothing to say.
    writeFileSync(
      join(work, 'Dockerfile'),
      readFileSync(join(fixture, 'Dockerfile'), 'utf8').replace('--extra cu118', '--extra cu124'),
    );
    expect(out(['check', '.', '--baseline', 'none'])).toMatch(/^2 files checked: 0 errors, 0 warnings, 0 notices$/m);
  });
});

describe("Poetry's tables", () => {
  it('main dependencies, groups and extras as selections; a dependency names its source; explicit sources serve only those', () => {
    const text = `[tool.poetry.dependencies]
python = "^3.12"
numpy = "^1.26.4"
torch = { version = "^2.2", source = "pytorch-cpu", markers = "extra=='cpu' and extra!='cuda'" }
mac = { version = "1.0", platform = "darwin" }
[tool.poetry.group.cuda.dependencies]
torch = [{ version = "2.3.0", source = "pytorch-cuda", markers = "sys_platform == 'linux'" }, { version = "2.3.0", markers = "sys_platform == 'darwin'" }]
[tool.poetry.extras]
cpu = ["torch"]
[[tool.poetry.source]]
name = "pytorch-cuda"
priority = "explicit"
url = "https://download.pytorch.org/whl/cu121"
[[tool.poetry.source]]
name = "pytorch-cpu"
priority = "explicit"
url = "https://download.pytorch.org/whl/cpu"
`;
    expect(selections(text)).toEqual({
      'the project': [{ index: 'PyPI', packages: ['numpy^1.26.4'] }],
      'extra cpu': [
        { index: 'PyPI', packages: ['numpy^1.26.4'] },
        { index: 'index-url https://download.pytorch.org/whl/cpu', packages: ['torch^2.2'] },
      ],
      'group cuda': [
        { index: 'PyPI', packages: ['numpy^1.26.4'] },
        { index: 'index-url https://download.pytorch.org/whl/cu121', packages: ['torch==2.3.0'] },
      ],
      'only group cuda': [{ index: 'index-url https://download.pytorch.org/whl/cu121', packages: ['torch==2.3.0'] }],
    });
    const file = parse(text);
    const torch = file.packages.find((pkg) => pkg.exact === '2.3.0')!;
    expect(text.slice(torch.clauses[0]!.versionSpan.start, torch.clauses[0]!.versionSpan.end)).toBe('2.3.0');
    expect(file.problems).toEqual([]);
  });

  it("12 and 30, the corpus's Poetry files: routed as the reviewer reads them, and consistent", () => {
    const twelve = parse(
      readFileSync(
        join(ROOT, 'fixtures', 'corpus-packaging', '12__thawro__pulse-from-face-pytorch__pyproject.toml'),
        'utf8',
      ),
    );
    const routed = twelve.contexts.find(
      (context) => context.variant === 'the project' && context.indexes.some((index) => index.url.endsWith('/cu118')),
    )!;
    expect(
      twelve.packages.filter((pkg) => pkg.context === routed.id).map((pkg) => `${pkg.name}==${pkg.exact}`),
    ).toEqual(['torch==2.0.1+cu118', 'torchvision==0.15.2']);
    expect(
      gate([twelve], EMPTY_BASELINE, defaultKnowledgeBase()).findings.filter((finding) => finding.severity === 'error'),
    ).toEqual([]);
  });
});

describe('uv.lock', () => {
  const lock = (text: string) => parseFile('uv.lock', text, 'uv-lock');

  it('the real lock of yyhhenry/uv-torch-env: what the project installs as locked, each from its registry', () => {
    const text = readFileSync(
      join(ROOT, 'fixtures', 'corpus-packaging', '18__yyhhenry__uv-torch-env__uv.lock'),
      'utf8',
    );
    const file = lock(text);
    expect(file.problems).toEqual([]);
    expect(classifyPath('uv.lock')).toBe('uv-lock');
    const byContext = file.contexts.map((context) => ({
      variant: context.variant,
      index: context.indexes.map((index) => index.url).join(', ') || 'PyPI',
      packages: file.packages.filter((pkg) => pkg.context === context.id).map((pkg) => `${pkg.name}==${pkg.exact}`),
    }));
    expect(byContext.map((context) => [context.variant, context.index])).toEqual([
      ['the project', 'https://download.pytorch.org/whl/cu121'],
      ['the project', 'PyPI'],
    ]);
    // The direct dependencies first, then what they pull in: the reviewer's nvidia-* wheels at 12.1.x, cuDNN 8.9.2.26.
    expect(byContext[0]!.packages.slice(0, 4)).toEqual([
      'numpy==1.26.3',
      'torch==2.3.1+cu121',
      'torchaudio==2.3.1+cu121',
      'torchvision==0.18.1+cu121',
    ]);
    expect(byContext[0]!.packages).toEqual(
      expect.arrayContaining([
        'nvidia-cublas-cu12==12.1.3.1',
        'nvidia-cuda-runtime-cu12==12.1.105',
        'nvidia-cudnn-cu12==8.9.2.26',
        'nvidia-nccl-cu12==2.20.5',
        'nvidia-nvjitlink-cu12==12.1.105',
        'triton==2.3.1',
      ]),
    );
    expect(byContext[0]!.packages).toHaveLength(26);
    expect(byContext[1]!.packages).toEqual(['setuptools==69.5.1']);
    const torch = file.packages.find((pkg) => pkg.name === 'torch')!;
    expect(text.slice(torch.span.start, torch.span.end)).toBe('2.3.1+cu121');
  });

  it('several builds of torch (one per extra): each extra gets its own, a reference without a version is left out', () => {
    const text = `version = 1
[[package]]
name = "torch"
version = "2.6.0+cpu"
source = { registry = "https://download.pytorch.org/whl/cpu" }
[[package]]
name = "torch"
version = "2.6.0+cu124"
source = { registry = "https://download.pytorch.org/whl/cu124" }
[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
dependencies = [{ name = "torch" }]
[package.optional-dependencies]
cpu = [{ name = "torch", version = "2.6.0+cpu", source = { registry = "https://download.pytorch.org/whl/cpu" } }]
cu124 = [{ name = "torch", version = "2.6.0+cu124", source = { registry = "https://download.pytorch.org/whl/cu124" }, marker = "sys_platform == 'linux'" }]
mac = [{ name = "torch", version = "2.6.0+cpu", source = { registry = "https://download.pytorch.org/whl/cpu" }, marker = "sys_platform == 'darwin'" }]
`;
    const file = lock(text);
    const of = (variant: string) =>
      file.packages
        .filter((pkg) => file.contexts[pkg.context]!.variant === variant)
        .map((pkg) => `${pkg.name}==${pkg.exact}`);
    expect(of('the project')).toEqual([]);
    expect(of('extra cpu')).toEqual(['torch==2.6.0+cpu']);
    expect(of('extra cu124')).toEqual(['torch==2.6.0+cu124']);
    expect(of('extra mac')).toEqual([]);
    // The extras are checked apart: a cpu build and a cu124 build of one lock never disagree.
    expect(gate([file], EMPTY_BASELINE, defaultKnowledgeBase()).findings).toEqual([]);
  });

  it('is never edited: a finding on it carries no fix, and says which uv command changes it', () => {
    const dir = join(ROOT, 'fixtures', 'rules', 'cuda-mismatch', 'uv-lock-under-image');
    const files = ['Dockerfile', 'pyproject.toml', 'uv.lock'].map((name) =>
      parseFile(name, readFileSync(join(dir, name), 'utf8'), classifyPath(name)!),
    );
    const findings = gate(files, EMPTY_BASELINE, defaultKnowledgeBase()).findings;
    const onLock = findings.filter((finding) => finding.location.path === 'uv.lock');
    expect(onLock.length).toBeGreaterThan(0);
    for (const finding of findings) {
      for (const edit of [
        ...(finding.fix?.edits ?? []),
        ...(finding.suggestions ?? []).flatMap((suggestion) => suggestion.edits),
      ])
        expect(edit.path).not.toBe('uv.lock');
    }
    for (const finding of onLock) expect(finding.help).toContain('run uv lock');
  });
});

describe('the uv demo (fixtures/repos/demo-uv)', () => {
  it('shows the selected extra as locked under the image, and the mistakes of the files alone', () => {
    const { code, out } = cli(ROOT, 'check', 'fixtures/repos/demo-uv', '--baseline', 'none');
    expect(code).toBe(1);
    expect(out.split('\n').filter(Boolean)).toEqual([
      'fixtures/repos/demo-uv/pyproject.toml:32:7: error: the index https://download.pytorch.org/whl/cu118 serves CUDA 11.8 builds, but nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 sets CUDA 12.4 [cuda-mismatch]',
      'fixtures/repos/demo-uv/uv.lock:24:12: error: torch==2.5.1+cu118 is built for CUDA 11.8, but nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 sets CUDA 12.4 [cuda-mismatch]',
      'fixtures/repos/demo-uv/uv.lock:25:24: error: the registry https://download.pytorch.org/whl/cu118 serves CUDA 11.8 builds, but nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 sets CUDA 12.4 [cuda-mismatch]',
      'fixtures/repos/demo-uv/uv.lock:42:12: error: torchvision==0.20.1+cu118 is built for CUDA 11.8, but nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 sets CUDA 12.4 [cuda-mismatch]',
      '3 files checked: 4 errors, 0 warnings, 0 notices',
    ]);
  });
});

describe('the real pyproject.toml files (fixtures/corpus-packaging)', () => {
  const dir = join(ROOT, 'fixtures', 'corpus-packaging');
  const files = readdirSync(dir).filter((name) => name.endsWith('pyproject.toml'));

  function check(name: string): string[] {
    const work = mkdtempSync(join(tmpdir(), 'cgk-pyproject-'));
    writeFileSync(join(work, 'pyproject.toml'), readFileSync(join(dir, name)));
    return cli(work, 'check', '.', '--baseline', 'none')
      .out.split('\n')
      .filter((line) => line.startsWith('pyproject.toml:'));
  }

  it('every one reads without a problem', () => {
    expect(files.length).toBeGreaterThanOrEqual(18);
    for (const name of files) expect(parse(readFileSync(join(dir, name), 'utf8')).problems, name).toEqual([]);
  });

  it("04 nanochat: torch in the base and in the cpu/gpu extras, routed per extra; the reviewer's CONSISTENT", () => {
    const file = parse(readFileSync(join(dir, '04__karpathy__nanochat__pyproject.toml'), 'utf8'));
    const gpu = file.contexts.filter((context) => context.variant === 'extra gpu');
    const routed = gpu.find((context) => context.indexes.some((index) => index.url.endsWith('/cu128')))!;
    expect(file.packages.filter((pkg) => pkg.context === routed.id).map((pkg) => pkg.name)).toEqual(['torch', 'torch']);
    expect(check('04__karpathy__nanochat__pyproject.toml')).toEqual([]);
  });

  it("34 ML-Dev-Kit: torchaudio is never routed, so every extra mixes builds (the reviewer's INCONSISTENT)", () => {
    // torchaudio refuses to import beside a torch of another CUDA minor (its _check_cuda_version): errors, each.
    expect(check('34__tonnetonne814__ML-Dev-Kit__pyproject.toml')).toEqual([
      'pyproject.toml:31:4: error: torchaudio==2.7.0 installs the CUDA 12.6 build that plain PyPI gives on Linux x86_64, but torch==2.7.0 sets CUDA 12.8 [cuda-mismatch]',
      'pyproject.toml:36:4: error: torchaudio==2.6.0 installs the CUDA 12.4 build that plain PyPI gives on Linux x86_64, but torch==2.6.0 sets CUDA 12.6 [cuda-mismatch]',
      'pyproject.toml:41:4: error: torchaudio==2.5.1 installs the CUDA 12.4 build that plain PyPI gives on Linux x86_64, but torch==2.5.1 sets CUDA 11.8 [cuda-mismatch]',
      'pyproject.toml:73:7: error: the index https://download.pytorch.org/whl/cpu serves CPU-only builds, but torchaudio==2.7.0 targets CUDA 12.6 [cpu-wheel]',
    ]);
  });

  it("33 unsloth: the torch 2.8.0 extras are named one CUDA step below their wheels (the reviewer's INCONSISTENT)", () => {
    expect(check('33__unslothai__unsloth__pyproject.toml')).toEqual([
      'pyproject.toml:257:1: error: the extra "cu118onlytorch280" is named for CUDA 11.8, but xformers 0.0.32.post2 sets CUDA 12.6 [cuda-mismatch]',
      'pyproject.toml:261:1: warning: the extra "cu126onlytorch280" is named for CUDA 12.6, but xformers 0.0.32.post2 sets CUDA 12.8 [cuda-mismatch]',
      'pyproject.toml:265:1: warning: the extra "cu128onlytorch280" is named for CUDA 12.8, but xformers 0.0.32.post2 sets CUDA 12.9 [cuda-mismatch]',
    ]);
  });

  it('no error on the files the reviewer reads as consistent or unpinned', () => {
    for (const name of files.filter((file) => !file.startsWith('34__') && !file.startsWith('33__'))) {
      expect(
        check(name).filter((line) => line.includes(': error: ')),
        name,
      ).toEqual([]);
    }
  });
});

describe('strings longer than the TOML parser can take (issue 26)', () => {
  const readme = 'lorem ipsum dolor sit amet, "quoted" \\ and more\n'.repeat(4000); // ~200 KB
  it.each([
    ['a multi-line basic string', `"""\n${readme.replace(/\\/g, '\\\\').replace(/"""/g, '')}"""`],
    ['a multi-line literal string', `'''\n${readme}'''`],
    ['a one-line basic string', `"${'x\\" '.repeat(60_000)}"`],
    ['a multi-line string ending in two quotes of its own', `"""${'a'.repeat(200_000)}"""""`],
  ])(
    '%s of 200 KB (an inlined readme) is valid TOML, and the rest of the file is read at its lines',
    (_name, value) => {
      const text = `[project]\nname = "x"\nversion = "1"\nreadme = ${value}\ndependencies = ["torch==2.3.0+cu118"]\n`;
      const file = parseFile('pyproject.toml', text, 'pyproject');
      expect(file.problems).toEqual([]);
      const torch = file.packages.find((pkg) => pkg.name === 'torch')!;
      expect(text.slice(torch.span.start, torch.span.end)).toBe('torch==2.3.0+cu118');
    },
  );

  it('an unterminated long string is still a positioned parse problem', () => {
    const file = parseFile('pyproject.toml', `[project]\nreadme = """${'x'.repeat(200_000)}\n`, 'pyproject');
    expect(file.problems).toHaveLength(1);
    expect(file.problems[0]!.message).toMatch(/^not valid TOML/);
  });

  it("installs setuptools' dynamic dependency files in each selection that installs them", () => {
    const file = parseFile(
      'pyproject.toml',
      [
        '[project]',
        'name = "demo"',
        'dynamic = ["dependencies", "optional-dependencies"]',
        '[dependency-groups]',
        'dev = ["pytest"]',
        '[tool.setuptools.dynamic]',
        'dependencies = {file = ["requirements.txt"]}',
        'optional-dependencies.cv = {file = ["requirements/framework.txt", "requirements/cv.txt"]}',
        '',
      ].join('\n'),
      'pyproject',
    );
    const byVariant = new Map<string, string[]>();
    for (const context of file.contexts)
      byVariant.set(context.variant!, [
        ...(byVariant.get(context.variant!) ?? []),
        ...context.includes.map((include) => include.target),
      ]);
    expect(byVariant.get('the project')).toEqual(['requirements.txt']);
    expect(byVariant.get('pip: extra cv')).toEqual([
      'requirements.txt',
      'requirements/framework.txt',
      'requirements/cv.txt',
    ]);
    expect(byVariant.get('group dev')).toEqual(['requirements.txt']);
    // A group installed alone (`uv sync --only-group dev`) installs neither the project nor its dependencies.
    expect(byVariant.get('only group dev')).toEqual([]);
  });
});
