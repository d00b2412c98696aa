/** The requirements parser on small inline inputs: facts, exact positions, options as pip reads them. */
import { describe, expect, it } from 'vitest';
import { parseRequirements } from '../../src/parsers/requirements/parse.js';
import { parseDockerfile } from '../../src/parsers/dockerfile/parse.js';
import { codeBlock } from '../support/code-block.js';
import { at, text } from '../support/positions.js';

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

describe('a requirements or constraints file named by its web address', () => {
  it('is said to be not checked, at the address, in a requirements file and in a Dockerfile', () => {
    const file = parseRequirements(
      'requirements.txt',
      'numpy==1.26.4\n-r https://raw.githubusercontent.com/org/repo/main/gpu.txt\n--constraint=https://example.org/c.txt\n-r base.txt\n',
    );
    expect(file.unresolved.map((fact) => [text(file, fact.span), fact.reason])).toEqual([
      [
        'https://raw.githubusercontent.com/org/repo/main/gpu.txt',
        "pip fetches this requirements file from the web when it runs, and this check reads only the repository's files",
      ],
      [
        'https://example.org/c.txt',
        "pip fetches this constraints file from the web when it runs, and this check reads only the repository's files",
      ],
    ]);
    const dockerfile = parseDockerfile(
      'Dockerfile',
      'FROM python:3.12\nARG BRANCH=main\nRUN pip install -r https://raw.githubusercontent.com/org/repo/$BRANCH/r.txt\n',
    );
    expect(dockerfile.unresolved.map((fact) => fact.text)).toEqual([
      'https://raw.githubusercontent.com/org/repo/main/r.txt',
    ]);
  });
});
