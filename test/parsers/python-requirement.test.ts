/** PEP 508 requirement reading (src/parsers/python-requirement.ts), checked against the expressions it replaces. */
import fc from 'fast-check';
import { assertProperty } from '../support/property.js';
import { describe, expect, it } from 'vitest';
import { parseRequirements } from '../../src/parsers/requirements/parse.js';
import { endsInWheel, isLocalProject } from '../../src/parsers/python-requirement.js';

describe('endsInWheel', () => {
  it('answers as /\\.whl(?:[#?].*)?$/i does, on text built from its own pieces', () => {
    const piece = fc.constantFrom('.whl', '.WHL', '.wh', 'l', '#', '?', 'a', '\n', '\r', '\u2028', '\u2029', ' ', 'İ');
    assertProperty(
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
    assertProperty(
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
    assertProperty(
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

describe('source archives named by their path', () => {
  it('reads them as the archive pip installs, not as a name followed by junk (pip _get_url_from_path)', () => {
    const file = parseRequirements(
      'requirements.txt',
      [
        'dist/text_generation_server-2.0.1.tar.gz',
        'sub/foo-1.0.zip ; python_version > "3"',
        'vendor/bar_baz-0.3.tgz',
        'dist/server*.tar.gz',
        'named @ file:///src/named-1.0.tar.gz',
        '',
      ].join('\n'),
    );
    expect(file.problems).toEqual([]);
    expect(file.packages.map((pkg) => [pkg.name, pkg.exact, pkg.url, pkg.markers])).toEqual([
      ['text-generation-server', '2.0.1', 'dist/text_generation_server-2.0.1.tar.gz', undefined],
      ['foo', '1.0', 'sub/foo-1.0.zip', 'python_version > "3"'],
      ['bar-baz', '0.3', 'vendor/bar_baz-0.3.tgz', undefined],
      // A glob the shell expands: no project name to read, and no version.
      ['server*-tar-gz', undefined, 'dist/server*.tar.gz', undefined],
      ['named', undefined, 'file:///src/named-1.0.tar.gz', undefined],
    ]);
  });
});

describe('exact versions', () => {
  it('pads a release of one or two parts as PEP 440 compares it (==2.7 is ==2.7.0), and leaves others as written', () => {
    const file = parseRequirements(
      'requirements.txt',
      [
        'torch==2.7',
        'torchvision==0.22+cu126',
        'numpy==2',
        'xformers==0.0.30',
        'triton===3.3',
        'jax==0.4.*',
        'a==1.0rc1',
        '',
      ].join('\n'),
    );
    expect(file.packages.map((pkg) => [pkg.name, pkg.exact, pkg.localLabel])).toEqual([
      ['torch', '2.7.0', undefined],
      ['torchvision', '0.22.0+cu126', 'cu126'],
      ['numpy', '2.0.0', undefined],
      ['xformers', '0.0.30', undefined],
      ['triton', '3.3', undefined],
      ['jax', undefined, undefined],
      ['a', '1.0rc1', undefined],
    ]);
  });
});

describe('local files with extras', () => {
  it('are the file, with the extras pip strips from the path (_strip_extras)', () => {
    // NVIDIA/DeepLearningExamples PyTorch/Recommendation/DLRM/triton/Dockerfile
    const file = parseRequirements(
      'requirements.txt',
      ['./tritonclient-2.3.0-py3-none-any.whl[all]', 'dist/foo-1.0.tar.gz[a, b]', ''].join('\n'),
    );
    expect(file.problems).toEqual([]);
    expect(file.packages.map((pkg) => [pkg.name, pkg.exact, pkg.url, pkg.extras])).toEqual([
      ['tritonclient', '2.3.0', './tritonclient-2.3.0-py3-none-any.whl', ['all']],
      ['foo', '1.0', 'dist/foo-1.0.tar.gz', ['a', 'b']],
    ]);
  });
});
