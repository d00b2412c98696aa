/** Parsers on small inline inputs: facts, exact positions, and no throwing on odd input. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParsedFile } from '../../src/parsers/facts.js';
import { classifyPath, parseFile } from '../../src/parsers/index.js';
import { parseCondaEnvironment } from '../../src/parsers/conda/parse.js';
import { parseDockerfile } from '../../src/parsers/dockerfile/parse.js';
import { parseRequirements } from '../../src/parsers/requirements/parse.js';
import { endsInWheel, isLocalProject } from '../../src/parsers/python-requirement.js';
import { growth } from '../support/growth.js';
import { codeBlock } from '../support/code-block.js';

const at = (file: ParsedFile, offset: number): string => {
  const position = file.source.position(offset);
  return `${position.line}:${position.column}`;
};
const text = (file: ParsedFile, span: { start: number; end: number }): string =>
  file.source.text.slice(span.start, span.end);

describe('classifyPath', () => {
  it.each([
    ['Dockerfile', 'dockerfile'],
    ['docker/Dockerfile.gpu', 'dockerfile'],
    ['train.Dockerfile', 'dockerfile'],
    ['Containerfile', 'dockerfile'],
    ['requirements.txt', 'requirements'],
    ['requirements-gpu.txt', 'requirements'],
    ['requirements/base.txt', 'requirements'],
    ['requirements/dev.in', 'requirements'],
    ['environment.yml', 'conda'],
    ['environment-cuda.yaml', 'conda'],
    ['conda/env.yml', undefined], // by content: condaByContent
    ['README.md', undefined],
    ['src/main.py', undefined],
    ['docker-compose.yml', undefined],
  ])('%s → %s', (path, kind) => {
    expect(classifyPath(path)).toBe(kind);
  });
});

describe('requirements parser', () => {
  it('reads PEP 508 requirements with extras, markers, local labels and wildcards', () => {
    const file = parseRequirements(
      'r.txt',
      codeBlock`
        torch[opt]==2.3.0+cu121 ; python_version < "3.12"
        numpy==1.26.*
        requests>=2,<3
      `,
    );
    const [torch, numpy, requests] = file.packages;
    expect(torch).toMatchObject({
      name: 'torch',
      extras: ['opt'],
      exact: '2.3.0+cu121',
      localLabel: 'cu121',
      markers: 'python_version < "3.12"',
    });
    expect(text(file, torch!.clauses[0]!.versionSpan)).toBe('2.3.0+cu121');
    expect(numpy!.exact).toBeUndefined();
    expect(requests!.clauses.map((clause) => clause.operator)).toEqual(['>=', '<']);
    expect(file.problems).toEqual([]);
  });

  it('normalises names as PEP 503 does', () => {
    expect(
      parseRequirements(
        'r.txt',
        codeBlock`
          Torch_Vision==1
          nvidia.cudnn-cu12==9
        `,
      ).packages.map((pkg) => pkg.name),
    ).toEqual(['torch-vision', 'nvidia-cudnn-cu12']);
  });

  it('joins continuation lines, drops comments, counts hashes', () => {
    const file = parseRequirements(
      'r.txt',
      '# top\ntorch==2.1.0 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb  # trailing\n',
    );
    expect(file.packages).toHaveLength(1);
    expect(file.packages[0]).toMatchObject({ exact: '2.1.0', hashes: 2 });
    expect(at(file, file.packages[0]!.span.start)).toBe('2:1');
  });

  it('reads index options in both forms, and marks those on requirement lines as ignored by pip', () => {
    const file = parseRequirements(
      'r.txt',
      codeBlock`
        --index-url=https://a/simple
        -i https://b/simple
        --extra-index-url https://c
        -f https://d
        torch==2.1.0 --extra-index-url https://e
      `,
    );
    expect(file.indexes.map((index) => [index.kind, index.url, index.ignoredReason !== undefined])).toEqual([
      ['index-url', 'https://a/simple', false],
      ['index-url', 'https://b/simple', false],
      ['extra-index-url', 'https://c', false],
      ['find-links', 'https://d', false],
      ['extra-index-url', 'https://e', true],
    ]);
    expect(file.contexts[0]!.indexes).toHaveLength(4);
  });

  it('records -r and -c includes with the span of the path', () => {
    const file = parseRequirements(
      'req/a.txt',
      codeBlock`
        -r base.txt
        --constraint=../constraints.txt
      `,
    );
    expect(file.includes.map((include) => [include.kind, include.target, text(file, include.targetSpan)])).toEqual([
      ['requirement', 'base.txt', 'base.txt'],
      ['constraint', '../constraints.txt', '../constraints.txt'],
    ]);
  });

  it('reads direct wheel URLs (with %2B) and name @ url requirements', () => {
    const file = parseRequirements(
      'r.txt',
      codeBlock`
        https://download.pytorch.org/whl/cu118/torch-2.0.1%2Bcu118-cp310-cp310-linux_x86_64.whl
        flash-attn @ https://x/flash_attn-2.8.3+cu12torch2.6cxx11abiFALSE-cp311-cp311-linux_x86_64.whl
      `,
    );
    expect(file.packages[0]).toMatchObject({ name: 'torch', exact: '2.0.1+cu118', localLabel: 'cu118' });
    expect(file.packages[1]).toMatchObject({ name: 'flash-attn', url: expect.stringContaining('flash_attn') });
  });

  it('turns bad lines into positioned problems and keeps going', () => {
    const file = parseRequirements(
      'r.txt',
      codeBlock`
        torch==
        -r
        ok==1
        ???
      `,
    );
    expect(file.problems.map((problem) => [at(file, problem.span.start), problem.message])).toEqual([
      ['1:6', 'expected a version after "=="'],
      ['2:1', 'option -r needs a value'],
      ['4:1', 'expected a package name, found "???"'],
    ]);
    expect(file.packages.map((pkg) => pkg.name)).toEqual(['ok']);
  });

  it('handles a BOM and CRLF line ends', () => {
    const file = parseRequirements('r.txt', '\ufefftorch==2.1.0\r\ntorchvision==0.16.0\r\n');
    expect(file.packages.map((pkg) => [pkg.name, at(file, pkg.span.start)])).toEqual([
      ['torch', '1:2'],
      ['torchvision', '2:1'],
    ]);
  });

  it('finds suppressions for the next statement or the same line', () => {
    const file = parseRequirements(
      'r.txt',
      codeBlock`
        # cuda-gatekeeper: ignore[exact-pin] pinned by the lock file

        torch>=2
        numpy # cuda-gatekeeper: ignore[exact-pin, index-url] fine
      `,
    );
    expect(file.suppressions.map((s) => [s.fromLine, s.toLine, s.rules, s.reason])).toEqual([
      [3, 3, ['exact-pin'], 'pinned by the lock file'],
      [4, 4, ['exact-pin', 'index-url'], 'fine'],
    ]);
  });
});

describe('found by the peers’ own test inputs (issue 32)', () => {
  it('reads `name @ wheel-url` with the name written, the URL without it, and the extras', () => {
    const text =
      'vision[gpu] @ https://download.pytorch.org/whl/cu118/torchvision-0.18.0%2Bcu118-cp311-cp311-linux_x86_64.whl\n';
    const [pkg] = parseRequirements('requirements.txt', text).packages;
    expect(pkg).toMatchObject({ name: 'vision', extras: ['gpu'], url: text.slice(text.indexOf('https'), -1) });
    expect(pkg?.exact).toBeUndefined(); // the file is torchvision's, not vision's: its version is not this package's
    const [torch] = parseRequirements(
      'requirements.txt',
      'torch @ https://download.pytorch.org/whl/cu118/torch-2.3.0%2Bcu118-cp311-cp311-linux_x86_64.whl',
    ).packages;
    expect(torch).toMatchObject({
      name: 'torch',
      exact: '2.3.0+cu118',
      localLabel: 'cu118',
      nameSpan: { start: 0, end: 5 },
    });
    expect(torch?.url?.startsWith('https://')).toBe(true);
  });

  it('reads option values as pip does, through shlex: quotes are not part of the URL', () => {
    for (const line of [
      "-i 'https://example.com/simple'",
      '--index-url="https://example.com/simple"',
      '--index-url https://example.com/"simple"',
    ]) {
      const parsed = parseRequirements('requirements.txt', `${line}\n`);
      expect(parsed.problems, line).toEqual([]);
      expect(
        parsed.indexes.map((index) => index.url),
        line,
      ).toEqual(['https://example.com/simple']);
    }
    const quoted = parseRequirements('requirements.txt', "-i 'https://example.com/simple'\n").indexes[0]!;
    expect(quoted.urlSpan).toEqual({ start: 4, end: 30 }); // inside the quotes: an edit keeps them
  });
});

describe('conda parser', () => {
  it('reads channels, channel::pkg specs, build strings, spaced specs and the pip list', () => {
    const file = parseCondaEnvironment(
      'environment.yml',
      [
        'name: x',
        'channels: [pytorch, nvidia]',
        'dependencies:',
        '  - pytorch::pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0',
        '  - pytorch-cuda = 12.1',
        '  - "cudatoolkit==11.8.0"',
        '  - cuda-version >=12.0,<13',
        '  - pip:',
        '      - --extra-index-url https://download.pytorch.org/whl/cu121',
        '      - xformers==0.0.23',
        '',
      ].join('\n'),
    );
    expect(file.contexts.map((context) => context.tool)).toEqual(['conda-env', 'conda-env-pip']);
    expect(file.contexts[0]!.channels).toEqual(['pytorch', 'nvidia']);
    const byName = Object.fromEntries(file.packages.map((pkg) => [pkg.name, pkg]));
    expect(byName['pytorch']).toMatchObject({
      channel: 'pytorch',
      exact: '2.1.0',
      build: 'py3.10_cuda12.1_cudnn8.9.2_0',
      localLabel: 'cuda12.1',
    });
    expect(byName['pytorch-cuda']).toMatchObject({ exact: '12.1' });
    expect(byName['cudatoolkit']).toMatchObject({ exact: '11.8.0' });
    expect(text(file, byName['cudatoolkit']!.clauses[0]!.versionSpan)).toBe('11.8.0');
    expect(byName['cuda-version']!.clauses.map((clause) => clause.operator)).toEqual(['>=', '<']);
    expect(byName['xformers']).toMatchObject({ ecosystem: 'pip', exact: '0.0.23' });
    expect(file.indexes.find((index) => index.kind === 'extra-index-url')?.context).toBe(1);
  });

  it('reports YAML errors with positions instead of throwing', () => {
    const file = parseCondaEnvironment(
      'environment.yml',
      codeBlock`
        dependencies:
          - [oops
      `,
    );
    expect(file.problems.length).toBeGreaterThan(0);
    expect(file.problems[0]!.message).toMatch(/^YAML: /);
  });

  it('rejects a non-mapping document with a clear message', () => {
    expect(
      parseCondaEnvironment(
        'environment.yml',
        codeBlock`
          - a
          - b
        `,
      ).problems[0]!.message,
    ).toContain('must be a mapping');
  });

  it('does not expand alias bombs', async () => {
    // Each level names the one below nine times: expanded, level n is 9^n strings. Two levels more (81 times the
    // expansion) must cost about what the longer text costs, not 81 times as much.
    const bomb = (levels: number): string => {
      const lines = ['l0: &l0 ["x","x","x","x","x","x","x","x","x"]'];
      for (let i = 1; i < levels; i++)
        lines.push(
          `l${i}: &l${i} [${Array(9)
            .fill(`*l${i - 1}`)
            .join(',')}]`,
        );
      return `${lines.join('\n')}\ndependencies: [*l${levels - 1}]\n`;
    };
    expect(parseCondaEnvironment('environment.yml', bomb(4)).packages).toEqual([]);
    expect(await growth((levels) => parseCondaEnvironment('environment.yml', bomb(levels)), 4, 6)).toBeLessThan(8);
  });
});

describe('Dockerfile parser', () => {
  it('reads stages: --platform, AS name, FROM <stage> chains, registries and digests', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM --platform=linux/amd64 nvcr.io/nvidia/pytorch:24.05-py3 AS base',
        'FROM base AS build',
        'FROM docker.io/library/python:3.11@sha256:abc',
        '',
      ].join('\n'),
    );
    expect(
      file.images.map((image) => ({
        registry: image.registry,
        repository: image.repository,
        tag: image.tag,
        digest: image.digest,
        platform: image.platform,
        stageName: image.stageName,
        fromStage: image.fromStage,
      })),
    ).toEqual([
      {
        registry: 'nvcr.io',
        repository: 'nvidia/pytorch',
        tag: '24.05-py3',
        digest: undefined,
        platform: 'linux/amd64',
        stageName: 'base',
        fromStage: undefined,
      },
      {
        registry: undefined,
        repository: 'base',
        tag: undefined,
        digest: undefined,
        platform: undefined,
        stageName: 'build',
        fromStage: 0,
      },
      {
        registry: undefined,
        repository: 'python',
        tag: '3.11',
        digest: 'sha256:abc',
        platform: undefined,
        stageName: undefined,
        fromStage: undefined,
      },
    ]);
  });

  it('resolves global and stage ARGs into FROM and RUN, and maps edits to the ARG default', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'ARG CUDA=12.4.1',
        'ARG TORCH',
        'FROM nvidia/cuda:${CUDA}-cudnn-devel-ubuntu22.04',
        'ARG CUDA',
        'ARG TV=0.19.1',
        'RUN pip install "torchvision==${TV}" torch==$TORCH',
        '',
      ].join('\n'),
    );
    const image = file.images[0]!;
    expect(image.tag).toBe('12.4.1-cudnn-devel-ubuntu22.04');
    expect(image.via?.name).toBe('CUDA');
    expect(at(file, image.span.start)).toBe('3:6');
    const versionSpan = image.tagMap!.origin(0, 6)!;
    expect([text(file, versionSpan), at(file, versionSpan.start)]).toEqual(['12.4.1', '1:10']);
    const vision = file.packages.find((pkg) => pkg.name === 'torchvision')!;
    expect(vision.exact).toBe('0.19.1');
    expect(at(file, vision.clauses[0]!.versionSpan.start)).toBe('5:8');
    expect(file.unresolved).toEqual([
      expect.objectContaining({ text: 'torch==$TORCH', reason: expect.stringContaining('re-declare it after FROM') }),
    ]);
  });

  it('reads pip, pip3, python -m pip and uv pip commands across continuations and comments', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN pip3 install --no-cache-dir \\',
        '      --extra-index-url=https://download.pytorch.org/whl/cu121 \\',
        '    # a comment inside the continuation',
        '      torch==2.3.0+cu121 \\',
        '    && python3 -m pip install -r /app/requirements.txt -c constraints.txt \\',
        '    && uv pip install --system --index-url https://download.pytorch.org/whl/cu124 torchaudio==2.4.1',
        '',
      ].join('\n'),
    );
    expect(file.contexts.map((context) => context.tool)).toEqual(['pip', 'pip', 'uv']);
    expect(file.packages.map((pkg) => [pkg.name, pkg.exact, at(file, pkg.span.start)])).toEqual([
      ['torch', '2.3.0+cu121', '5:7'],
      ['torchaudio', '2.4.1', '7:83'],
    ]);
    expect(file.indexes.map((index) => [index.kind, index.url, at(file, index.span.start)])).toEqual([
      ['extra-index-url', 'https://download.pytorch.org/whl/cu121', '3:7'],
      ['index-url', 'https://download.pytorch.org/whl/cu124', '7:32'],
    ]);
    expect(file.includes.map((include) => [include.kind, include.target])).toEqual([
      ['requirement', '/app/requirements.txt'],
      ['constraint', 'constraints.txt'],
    ]);
  });

  it('reads heredoc scripts but not heredoc data', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN <<EOF',
        'set -e',
        'pip install torch==2.5.1',
        'EOF',
        'RUN cat <<EOF > /tmp/requirements.txt',
        'pip install numpy==1.0',
        'EOF',
        '',
      ].join('\n'),
    );
    expect(file.packages.map((pkg) => [pkg.name, at(file, pkg.span.start)])).toEqual([['torch', '4:13']]);
  });

  it('reads conda, mamba and apt-get installs', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN conda install -y -c pytorch -c nvidia pytorch=2.1.0 "pytorch-cuda=12.1" && conda clean -a',
        'RUN micromamba install -n base cuda-version=12.4',
        'RUN apt-get update && apt-get install -y --no-install-recommends cuda-toolkit-12-4 libcudnn8=8.9.2.26-1+cuda12.2',
        '',
      ].join('\n'),
    );
    expect(file.packages.map((pkg) => [pkg.ecosystem, pkg.name, pkg.exact ?? '', pkg.localLabel ?? ''])).toEqual([
      ['conda', 'pytorch', '2.1.0', ''],
      ['conda', 'pytorch-cuda', '12.1', ''],
      ['conda', 'cuda-version', '12.4', ''],
      ['apt', 'cuda-toolkit-12-4', '', ''],
      ['apt', 'libcudnn8', '8.9.2.26-1+cuda12.2', 'cuda12.2'],
    ]);
    expect(file.contexts[0]!.channels).toEqual(['pytorch', 'nvidia']);
  });

  it('reads ENV (both forms) and COPY sources', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM nvidia/cuda:12.4.1-base-ubuntu22.04',
        'ENV TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX" CUDA_HOME=/usr/local/cuda',
        'ENV NVIDIA_REQUIRE_CUDA cuda>=12.4',
        'COPY --chown=app requirements.txt requirements-gpu.txt /app/',
        'COPY ["env/environment.yml", "/env.yml"]',
        '',
      ].join('\n'),
    );
    expect(file.env.map((env) => [env.key, env.value])).toEqual([
      ['TORCH_CUDA_ARCH_LIST', '8.0;9.0+PTX'],
      ['CUDA_HOME', '/usr/local/cuda'],
      ['NVIDIA_REQUIRE_CUDA', 'cuda>=12.4'],
    ]);
    expect(text(file, file.env[0]!.valueSpan)).toBe('8.0;9.0+PTX');
    expect(file.copies.map((copy) => [copy.sources.map((source) => source.path), copy.destination])).toEqual([
      [['requirements.txt', 'requirements-gpu.txt'], '/app/'],
      [['env/environment.yml'], '/env.yml'],
    ]);
  });

  it('a stage inherits ENV from every stage it builds on, nearest first, and ARG from none', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04 AS base',
        'ENV TORCH_INDEX=https://download.pytorch.org/whl/cu118 EXTRA=https://download.pytorch.org/whl/cu121',
        'ARG LOCAL=https://example.com/simple',
        'FROM base AS deps',
        'ENV TORCH_INDEX=https://download.pytorch.org/whl/cu124',
        'FROM deps AS app',
        'RUN pip install --index-url ${TORCH_INDEX} --extra-index-url $EXTRA --extra-index-url $LOCAL torch==2.5.1',
        '',
      ].join('\n'),
    );
    expect(file.indexes.map((index) => index.url)).toEqual([
      'https://download.pytorch.org/whl/cu124',
      'https://download.pytorch.org/whl/cu121',
    ]);
    expect(file.unresolved.map((u) => u.reason)).toEqual([expect.stringContaining('$LOCAL is not defined')]);
    // An edit to the inherited URL goes to its definition two stages up.
    expect(text(file, file.indexes[1]!.urlSpan)).toBe('https://download.pytorch.org/whl/cu121');
    expect(file.indexes[1]!.urlSpan.start).toBeLessThan(file.source.text.indexOf('FROM base'));
  });

  it('honours the escape directive', () => {
    const file = parseDockerfile(
      'Dockerfile',
      '# escape=`\nFROM mcr.microsoft.com/windows:ltsc2022\nRUN pip install `\n  torch==2.1.0\n',
    );
    expect(file.packages.map((pkg) => pkg.name)).toEqual(['torch']);
  });

  it('reports a file without FROM', () => {
    expect(parseDockerfile('Dockerfile', 'RUN echo hi\n').problems[0]!.message).toContain('no FROM');
  });
});

describe('robustness', () => {
  const odd = [
    '',
    '\0\0\0',
    '\ufeff',
    'FROM',
    'RUN \\',
    '- - -',
    ':::',
    '[[[',
    '{{{',
    'a'.repeat(10_000),
    '\r\r\r',
    '${',
    '"unterminated',
    "RUN pip install 'torch==",
    '<<EOF',
    'ARG =',
    'FROM ${',
    '-r',
    '--index-url',
  ];
  it.each(['dockerfile', 'requirements', 'conda'] as const)(
    '%s parser never throws and keeps spans in range',
    (kind) => {
      for (const input of odd) {
        const file = parseFile('f', input, kind);
        for (const span of [
          ...file.packages.map((pkg) => pkg.span),
          ...file.problems.map((problem) => problem.span),
          ...file.indexes.map((index) => index.span),
        ]) {
          expect(span.start).toBeGreaterThanOrEqual(0);
          expect(span.end).toBeLessThanOrEqual(input.length);
          expect(span.start).toBeLessThanOrEqual(span.end);
        }
      }
    },
  );
});

describe('regressions found by fuzzing', () => {
  it('a COPY source with a bracket does not break the link glob', async () => {
    const { gate } = await import('../../src/gate.js');
    const { EMPTY_BASELINE } = await import('../../src/baseline/schema.js');
    const { defaultKnowledgeBase } = await import('../../src/knowledge/index.js');
    const file = parseFile(
      'Dockerfile',
      codeBlock`
        FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04
        WORKDIR /app
        COPY [requirements.txt .
        RUN pip install -r requirements.txt
      `,
      'dockerfile',
    );
    expect(() => gate([file], EMPTY_BASELINE, defaultKnowledgeBase())).not.toThrow();
  });

  it('YAML error recovery never yields positions past the end of the file', () => {
    const text = 'channels: [     !';
    const file = parseFile('environment.yml', text, 'conda');
    for (const span of [
      ...file.indexes.flatMap((index) => [index.span, index.urlSpan]),
      ...file.problems.map((problem) => problem.span),
    ])
      expect(span.end).toBeLessThanOrEqual(text.length);
  });
});

describe('endsInWheel', () => {
  it('answers as /\\.whl(?:[#?].*)?$/i does, on text built from its own pieces', () => {
    const piece = fc.constantFrom('.whl', '.WHL', '.wh', 'l', '#', '?', 'a', '\n', '\r', '\u2028', '\u2029', ' ', 'İ');
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 12 }).map((parts) => parts.join('')),
        (text) => {
          expect(endsInWheel(text)).toBe(/\.whl(?:[#?].*)?$/i.test(text));
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('PEP 508 names and operators, read without regular expressions', () => {
  const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?/;

  it('reads the name /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?/ matches, on text built from its own pieces', () => {
    const namePiece = fc.constantFrom('a', 'Z', '7', '.', '_', '-', 'é', ' ');
    const rest = fc.constantFrom('', '==1.0', ' >=2', '[x]', ' ; python_version < "3"', '@', ']');
    fc.assert(
      fc.property(
        fc.array(namePiece, { minLength: 1, maxLength: 8 }).map((parts) => parts.join('')),
        rest,
        (name, tail) => {
          const line = `${name}${tail}`;
          if (line.trim().startsWith('-')) return; // an option line
          if (isLocalProject(line.trim().split(/\s+-/)[0]!)) return; // `.`, `.[x]`: a local project, not a name
          const file = parseRequirements('requirements.txt', `${line}\n`);
          const expected = NAME.exec(line.trim())?.[0];
          if (file.packages[0]) expect(file.packages[0].rawName).toBe(expected);
          // A name the expression reads whole, followed by a valid rest, is a package.
          if (
            name.trim() !== '' &&
            expected === name.trim() &&
            !['@', ']'].includes(tail) &&
            !(name.endsWith(' ') && tail === '[x]')
          )
            expect(file.packages[0]?.rawName).toBe(name.trim());
          if (expected === undefined && line.trim() !== '')
            expect(file.problems[0]?.message).toMatch(/^expected a package name/);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('takes the longest operator at each clause, as /(===|==|!=|~=|<=|>=|<|>)/y does', () => {
    const operator = fc.constantFrom('===', '==', '!=', '~=', '<=', '>=', '<', '>');
    const space = fc.constantFrom('', ' ', '\t');
    const clause = fc
      .tuple(operator, space, fc.stringMatching(/^[0-9][0-9.]{0,5}$/))
      .map(([op, sp, version]) => ({ op, text: `${op}${sp}${version}`, version }));
    fc.assert(
      fc.property(fc.array(clause, { minLength: 1, maxLength: 3 }), space, (clauses, sp) => {
        const file = parseRequirements('requirements.txt', `pkg${sp}${clauses.map((c) => c.text).join(',')}\n`);
        expect(file.packages[0]?.clauses.map((c) => [c.operator, c.version])).toEqual(
          clauses.map((c) => [c.op, c.version]),
        );
      }),
      { numRuns: 5000 },
    );
  });
});
