/** Pipenv's Pipfile: each package from the source its `index` names, else the first; Linux's packages only. */
import { describe, expect, it } from 'vitest';
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

  it('is one positioned problem where it is not TOML', () => {
    const file = parseFile('Pipfile', '[packages\ntorch = "*"\n', 'pipfile');
    expect([file.packages, file.problems.length]).toEqual([[], 1]);
  });
});
