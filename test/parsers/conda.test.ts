/** The conda environment parser on small inline inputs: channels, specs, build strings and the pip list. */
import { describe, expect, it } from 'vitest';
import { parseCondaEnvironment } from '../../src/parsers/conda/parse.js';
import { looksLikeConda, sniffKind } from '../../src/parsers/index.js';
import { growth } from '../support/growth.js';
import { codeBlock } from '../support/code-block.js';
import { text } from '../support/positions.js';

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

describe('telling a conda environment by its content', () => {
  it('needs a list under dependencies: (RAPIDS dependencies.yaml and Flutter pubspec.yaml hold a mapping there)', () => {
    expect(sniffKind('name: env\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n')).toBe('conda');
    expect(sniffKind('dependencies:\n# the GPU stack\n\n- pytorch\n')).toBe('conda');
    expect(sniffKind('name: x\ndependencies: [python=3.11, numpy]\n')).toBe('conda');
    expect(
      looksLikeConda(
        'channels:\n  - rapidsai\ndependencies:\n  build_python:\n    common:\n      - output_types: conda\n',
      ),
    ).toBe(false);
    expect(
      sniffKind('channels:\n  - rapidsai\ndependencies:\n  build_python:\n    common:\n      - output_types: conda\n'),
    ).toBe(undefined);
    expect(sniffKind('name: my_app\ndependencies:\n  flutter:\n    sdk: flutter\n')).toBe(undefined);
  });
});
