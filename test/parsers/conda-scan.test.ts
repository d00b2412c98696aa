/**
 * The plain environment-file scan (src/parsers/conda/document.ts) is a fast path: for every file it accepts it
 * must read exactly what the yaml package reads. These properties compare the two on the fixtures and corpus,
 * generated environment files and mutated real ones (FUZZ_RUNS per property, as in fuzz.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readWithYaml, scanPlainConda, type CondaDocument } from '../../src/parsers/conda/document.js';
import type { Mapped } from '../../src/parsers/mapped.js';
import { parseCondaEnvironment } from '../../src/parsers/conda/parse.js';
import { SourceText } from '../../src/parsers/source.js';
import { fastPathProperties } from '../support/fast-path.js';
import { codeBlock } from '../support/code-block.js';

function mapped(value: Mapped | undefined): unknown {
  return value ? { text: value.text, pieces: value.pieces() } : undefined;
}

function describeDocument(doc: CondaDocument): unknown {
  const dependencies =
    doc.dependencies && 'notList' in doc.dependencies
      ? doc.dependencies
      : doc.dependencies?.map((item) =>
          item.kind === 'scalar'
            ? { kind: 'scalar', value: mapped(item.value) }
            : item.kind === 'pip'
              ? { kind: 'pip', span: item.span, entries: item.entries.map(mapped) }
              : item,
        );
  return { errors: doc.errors, root: doc.root, channels: doc.channels?.map(mapped), dependencies };
}

/** The scan either declines or reads what the yaml package reads. */
function agrees(text: string): boolean {
  const scanned = scanPlainConda(text);
  if (!scanned) return false;
  expect(describeDocument(scanned)).toEqual(
    describeDocument(readWithYaml(text, new SourceText('environment.yml', text))),
  );
  return true;
}

const SPECS = [
  'python=3.11',
  'cuda-version=12.4',
  'pytorch::pytorch=2.3.1',
  'pytorch-cuda=12.1',
  'numpy>=1.26',
  'nvidia/label/cuda-12.1.0::cuda-toolkit',
  'pip',
  'pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0',
  'conda-forge',
  'transformers[torch]==4.41.2',
  '-r requirements.txt',
  '--extra-index-url https://download.pytorch.org/whl/cu121',
  'torch==2.3.1+cu121',
  'a#b',
  'a: b',
  'x:',
  '3.11',
  'true',
  'null',
  '~',
  "'quoted'",
  '"dq"',
  '[a, b]',
  '{a: 1}',
  '&anchor x',
  '*alias',
  '!tag x',
  '|',
  '>',
  '@x',
  '`x',
  '%x',
  '? x',
  'é',
  'name with spaces',
];
const KEYS = ['name', 'channels', 'dependencies', 'prefix', 'variables', 'channel_priority'];
const comment = fc.constantFrom('', '  # a comment', ' #c', '#no-space');
const scalar = fc.tuple(fc.constantFrom(...SPECS), comment).map(([spec, c]) => spec + c);
const list = (indent: string) =>
  fc
    .array(
      fc.oneof(
        scalar.map((value) => `${indent}- ${value}`),
        fc
          .tuple(fc.constantFrom('  ', '    ', ' ', ''), fc.array(scalar, { minLength: 0, maxLength: 3 }), comment)
          .map(([extra, values, c]) =>
            [`${indent}- pip:${c}`, ...values.map((value) => `${indent}${extra}  - ${value}`)].join('\n'),
          ),
        fc.constantFrom(
          '',
          '# between',
          `${indent}  # indented comment`,
          `${indent}      # deeper comment`,
          `${indent}# at the dash`,
        ),
      ),
      { maxLength: 6 },
    )
    .map((items) => items.join('\n'));
const flow = fc
  .tuple(
    fc.array(
      fc.constantFrom('pytorch', 'nvidia', 'conda-forge', 'defaults', 'a b', 'x:y', 'a: b', '#c', '"q"', '[x]', ''),
      { maxLength: 4 },
    ),
    fc.constantFrom(', ', ',', ' , ', ',  '),
    fc.constantFrom('', ' ', '  '),
    comment,
  )
  .map(([items, sep, pad, c]) => ` [${pad}${items.join(sep)}${pad}]${c}`);
const section = fc
  .tuple(
    fc.constantFrom(...KEYS),
    fc.oneof(
      scalar.map((value) => ` ${value}`),
      flow,
      fc.constantFrom('  ', '', '    ').chain((indent) => list(indent).map((body) => `\n${body}`)),
      fc.constantFrom('\n  A: b', '\n  CUDA_HOME: /usr/local/cuda', ''),
    ),
  )
  .map(([key, body]) => `${key}:${body}`);
const environment = fc
  .array(fc.oneof(section, fc.constantFrom('# comment', '', '---')), { minLength: 1, maxLength: 6 })
  .map((parts) => `${parts.join('\n')}\n`);

describe('the plain environment-file scan', () => {
  fastPathProperties('conda', 'the yaml package', environment, agrees, { generated: 0.048, mutated: 0.17 });

  it('declines what it does not handle, and the parser then uses the yaml package', () => {
    for (const text of [
      'dependencies: [a, {b: 1}]\n',
      codeBlock`
        channels: [a,
          b]
      `,
      codeBlock`
        dependencies:
          - "numpy"
      `,
      'dependencies:\r\n  - a\r\n',
      'dependencies:\n\t- a\n',
      'x: &a 1\n',
      codeBlock`
        dependencies:
          - a
           - b
      `,
      codeBlock`
        dependencies:
          - 3.11
      `,
      codeBlock`
        dependencies:
          - numpy
            >=1
      `,
      codeBlock`
        a: 1
        a: 2
      `,
      '# only a comment\n',
    ]) {
      expect(scanPlainConda(text), text).toBeUndefined();
    }
    const file = parseCondaEnvironment(
      'environment.yml',
      codeBlock`
        channels: [pytorch, "nvidia"]
        dependencies:
          - "pytorch-cuda=12.1"
      `,
    );
    expect(file.indexes.map((index) => index.url)).toEqual(['pytorch', 'nvidia']);
    expect(file.packages.map((pkg) => pkg.name)).toEqual(['pytorch-cuda']);
  });
});
