/**
 * Pipenv's Pipfile and Pipfile.lock: each package from the source its `index` names, else the first; Linux's packages
 * only; the lock's categories as selections, and the commands that install them.
 */
import { describe, expect, it } from 'vitest';
import { parseDockerfile } from '../../src/parsers/dockerfile/parse.js';
import { parseFile } from '../../src/parsers/index.js';
import { codeBlock } from '../support/code-block.js';

describe('a Pipfile', () => {
  it('routes each package to its index or the first source, pins a bare version, and reads only what Linux installs', () => {
    const file = parseFile(
      'Pipfile',
      codeBlock`
        [[source]]
        url = "https://pypi.org/simple"
        name = "pypi"

        [[source]]
        url = "https://download.pytorch.org/whl/cu121"
        name = "pytorch"

        [packages]
        torch = {version = "2.3.1+cu121", index = "pytorch", sys_platform = "!= 'win32'"}
        numpy = "*"
        pywinusb = {version = "*", sys_platform = "== 'win32'"}
        tool = {git = "https://github.com/example/tool.git"}
        stray = {version = "==1.0", index = "nowhere"}

        [dev-packages]
        pytest = "==8.3.2"
      `,
      'pipfile',
    );
    const indexOf = (name: string) => {
      const pkg = file.packages.find((candidate) => candidate.name === name)!;
      return file.contexts[pkg.context]!.indexes.map((index) => index.url);
    };
    expect(file.packages.map((pkg) => [pkg.name, pkg.specifier])).toEqual([
      ['torch', '==2.3.1+cu121'],
      ['numpy', ''],
      ['pytest', '==8.3.2'],
    ]);
    expect([indexOf('torch'), indexOf('numpy'), indexOf('pytest')]).toEqual([
      ['https://download.pytorch.org/whl/cu121'],
      ['https://pypi.org/simple'],
      ['https://pypi.org/simple'],
    ]);
    expect(file.problems.map((problem) => problem.message)).toEqual(['stray: no [[source]] is named "nowhere"']);
  });

  it("installs a `file` entry's wheel as pip installs `name @ URL`, and passes over an archive that is built", () => {
    const wheel = 'https://download.pytorch.org/whl/cu102/torch-1.11.0%2Bcu102-cp38-cp38-linux_x86_64.whl';
    const pipfile = `[packages]\ntorch = {file = "${wheel}"}\ntool = {file = "https://example.com/tool-1.0.tar.gz"}\n`;
    const lock = JSON.stringify({
      _meta: { sources: [{ name: 'pypi', url: 'https://pypi.org/simple' }] },
      default: { torch: { file: wheel, hashes: [], index: 'pypi', version: '==1.11.0+cu102' } },
    });
    for (const [path, text, kind] of [
      ['Pipfile', pipfile, 'pipfile'],
      ['Pipfile.lock', lock, 'pipfile-lock'],
    ] as const) {
      const file = parseFile(path, text, kind);
      expect(
        file.packages.map((pkg) => [
          pkg.name,
          pkg.exact,
          pkg.localLabel,
          pkg.url,
          text.slice(pkg.urlSpan!.start, pkg.urlSpan!.end),
        ]),
        path,
      ).toEqual([['torch', '1.11.0+cu102', 'cu102', wheel, wheel]]);
      expect(file.problems).toEqual([]);
    }
  });

  it('is one positioned problem where it is not TOML', () => {
    const file = parseFile('Pipfile', '[packages\ntorch = "*"\n', 'pipfile');
    expect([file.packages, file.problems.length]).toEqual([[], 1]);
  });
});

describe('a Pipfile.lock', () => {
  const lock = JSON.stringify(
    {
      _meta: {
        pipfile_spec: 6,
        sources: [
          { name: 'pypi', url: 'https://pypi.org/simple', verify_ssl: true },
          { name: 'pytorch', url: 'https://download.pytorch.org/whl/cu121', verify_ssl: true },
        ],
      },
      default: {
        numpy: { hashes: ['sha256:00'], index: 'pypi', version: '==1.26.4' },
        torch: {
          hashes: ['sha256:01'],
          index: 'pytorch',
          markers: "python_version >= '3.8'",
          version: '==2.3.1+cu121',
        },
        pywin32: { hashes: ['sha256:02'], markers: "sys_platform == 'win32'", version: '==306' },
        tool: { git: 'https://github.com/example/tool.git', ref: 'abc' },
        stray: { index: 'nowhere', version: '==1.0' },
        odd: { version: '>=1.0' },
      },
      develop: { pytest: { hashes: ['sha256:03'], version: '==8.3.2' } },
      docs: { sphinx: { hashes: ['sha256:04'], index: 'pypi', version: '==7.4.7' } },
    },
    null,
    4,
  );

  it('reads each category as a selection, each package from its source, and only what Linux installs', () => {
    const file = parseFile('Pipfile.lock', lock, 'pipfile-lock');
    const bySelection = (variant: string) =>
      file.packages
        .filter((pkg) => file.contexts[pkg.context]!.variant === variant)
        .map((pkg) => [pkg.name, pkg.exact, file.contexts[pkg.context]!.indexes.map((index) => index.url)]);
    expect(bySelection('the project')).toEqual([
      ['numpy', '1.26.4', []],
      ['torch', '2.3.1+cu121', ['https://download.pytorch.org/whl/cu121']],
    ]);
    expect(bySelection('dev')).toEqual([
      ['numpy', '1.26.4', []],
      ['pytest', '8.3.2', []],
      ['torch', '2.3.1+cu121', ['https://download.pytorch.org/whl/cu121']],
    ]);
    expect(bySelection('category docs')).toEqual([['sphinx', '7.4.7', []]]);
    const torch = file.packages.find((pkg) => pkg.name === 'torch')!;
    expect([lock.slice(torch.span.start, torch.span.end), torch.localLabel]).toEqual(['2.3.1+cu121', 'cu121']);
    expect(lock.slice(torch.nameSpan.start, torch.nameSpan.end)).toBe('torch');
    expect(file.problems.map((problem) => [problem.message, lock.slice(problem.span.start, problem.span.end)])).toEqual(
      [
        ['stray: no source in _meta.sources is named "nowhere"', '"nowhere"'],
        ['odd: a locked version is "==X", not ">=1.0"', '">=1.0"'],
      ],
    );
  });

  it('is one positioned problem where it is not JSON', () => {
    const file = parseFile('Pipfile.lock', '{"default": {"torch": {"version": "==2.3.1"}}', 'pipfile-lock');
    expect([file.packages, file.problems.map((problem) => problem.span)]).toEqual([[], [{ start: 45, end: 45 }]]);
  });

  it('is installed with its Pipfile by pipenv sync and install, with the categories the command names', () => {
    const selects = (run: string) =>
      parseDockerfile('Dockerfile', `FROM python:3.12\nRUN ${run}\n`).includes.map((include) => [
        include.target,
        include.optional ?? false,
        include.selects,
      ]);
    expect(selects('pipenv sync --system')).toEqual([
      ['Pipfile', false, ['the project']],
      ['Pipfile.lock', true, ['the project']],
    ]);
    expect(selects('pipenv install --system --deploy --dev')[1]).toEqual(['Pipfile.lock', true, ['dev']]);
    expect(selects('pipenv sync --categories="docs packages"')[1]).toEqual([
      'Pipfile.lock',
      true,
      ['category docs', 'the project'],
    ]);
    expect(selects('pipenv install torch')).toEqual([]);
  });

  // pipenv.pypa.io/en/latest/configuration/: PIPENV_PIPFILE "specifies a custom Pipfile location".
  it("is the Pipfile PIPENV_PIPFILE names, from the command's own assignment or the image's ENV or ARG", () => {
    const read = (...lines: string[]) => {
      const file = parseDockerfile(
        'Dockerfile',
        `FROM python:3.12
${lines.join('\n')}
`,
      );
      return [file.includes.map((include) => include.target), file.unresolved.map((fact) => [fact.text, fact.reason])];
    };
    expect(read('ENV PIPENV_PIPFILE=/app/backend/Pipfile', 'RUN pipenv sync --system')).toEqual([
      ['/app/backend/Pipfile', '/app/backend/Pipfile.lock'],
      [],
    ]);
    expect(read('ARG PIPFILE=deploy/Pipfile', 'RUN PIPENV_PIPFILE=$PIPFILE pipenv install --deploy')).toEqual([
      ['deploy/Pipfile', 'deploy/Pipfile.lock'],
      [],
    ]);
    // The command's own assignment goes before the image's.
    expect(read('ENV PIPENV_PIPFILE=/a/Pipfile', 'RUN PIPENV_PIPFILE=/b/Pipfile pipenv sync')[0]).toEqual([
      '/b/Pipfile',
      '/b/Pipfile.lock',
    ]);
    // Empty: the working directory's, as without it.
    expect(read('ENV PIPENV_PIPFILE=', 'RUN pipenv sync')[0]).toEqual(['Pipfile', 'Pipfile.lock']);
    // Not known, or a Pipfile by another name: said, not guessed.
    expect(read('ARG PIPENV_PIPFILE', 'RUN pipenv sync')).toEqual([
      [],
      [
        [
          'PIPENV_PIPFILE',
          "the Pipfile pipenv installs is PIPENV_PIPFILE's, and ARG PIPENV_PIPFILE has no default value, so it is only known at build time (--build-arg PIPENV_PIPFILE=…)",
        ],
      ],
    ]);
    expect(read('ENV PIPENV_PIPFILE=/app/Pipfile.gpu', 'RUN pipenv sync')).toEqual([
      [],
      [
        [
          'PIPENV_PIPFILE=/app/Pipfile.gpu',
          'pipenv installs /app/Pipfile.gpu (PIPENV_PIPFILE), a Pipfile by another name, which this check does not read',
        ],
      ],
    ]);
  });
});
