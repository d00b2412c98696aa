/**
 * The lock scanners (src/parsers/yaml-block-scan.ts for pixi.lock and conda-lock.yml, src/parsers/toml-scan.ts for
 * uv.lock, poetry.lock and every other TOML file) are fast paths: whatever they accept they must read into exactly
 * the tree the reference parser gives (the `yaml` package, toml-eslint-parser), spans included. These properties
 * compare the two on the fixtures, the real locks of fixtures/corpus-packaging and fixtures/locks (1–10 MB, from
 * public repositories), generated files and mutated real ones (FUZZ_RUNS per property, as in fuzz.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { assertProperty, expectShare } from '../support/property.js';
import { describe, expect, it } from 'vitest';
import type { ParseProblem } from '../../src/parsers/facts.js';
import { parseLockYaml } from '../../src/parsers/locks.js';
import { parseFile } from '../../src/parsers/index.js';
import { SourceText } from '../../src/parsers/source.js';
import { scanToml } from '../../src/parsers/toml-scan.js';
import { parseToml, type TomlValue } from '../../src/parsers/toml.js';
import { scanBlockYaml } from '../../src/parsers/yaml-block-scan.js';
import { fastPathProperties } from '../support/fast-path.js';
import { RUNS, seeds } from '../support/fuzz-inputs.js';
import { codeBlock } from '../support/code-block.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The real large locks, decompressed (stored gzipped, byte for byte: fixtures/locks/SOURCES.md). */
export function largeLocks(): { name: string; text: string }[] {
  const dir = join(ROOT, 'fixtures', 'locks');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.gz'))
    .map((name) => ({ name: name.slice(0, -3), text: gunzipSync(readFileSync(join(dir, name))).toString('utf8') }));
}

function yamlAgrees(text: string): boolean {
  const scanned = scanBlockYaml(text);
  if (!scanned) return false;
  const problems: ParseProblem[] = [];
  const reference = parseLockYaml(text, 'a lock', new SourceText('pixi.lock', text), problems);
  expect(problems).toEqual([]);
  expect(scanned).toEqual(reference);
  return true;
}

/**
 * The parser's tree with the values of `omit`'s keys, at any depth, as the scanner leaves them: `other` at their span.
 */
function pruned(value: TomlValue, omit: ReadonlySet<string>): TomlValue {
  if (value.kind === 'array') return { ...value, items: value.items.map((item) => pruned(item, omit)) };
  if (value.kind !== 'table') return value;
  const entries = new Map<string, TomlValue>();
  for (const [key, entry] of value.entries)
    entries.set(key, omit.has(key) ? { kind: 'other', span: entry.span } : pruned(entry, omit));
  return { ...value, entries };
}

/** What the uv.lock and poetry.lock readers leave unbuilt (their UNREAD_KEYS). */
const OMIT: ReadonlySet<string> = new Set(['wheels', 'sdist', 'files']);

function tomlAgrees(text: string): boolean {
  const scanned = scanToml(text);
  if (!scanned) {
    expect(scanToml(text, OMIT)).toBeUndefined();
    return false;
  }
  const reference = parseToml(text);
  expect(reference.ok).toBe(true);
  if (!reference.ok) return false;
  expect(scanned).toEqual(reference.root);
  expect(scanToml(text, OMIT)).toEqual(pruned(reference.root, OMIT));
  return true;
}

/** Line edits that keep a lock mostly plain: drop, repeat, re-indent or comment a line, add a pair or an item. */
function lineMutated(base: readonly string[]): fc.Arbitrary<string> {
  const edit = fc.tuple(
    fc.nat(),
    fc.constantFrom('drop', 'repeat', 'indent', 'dedent', 'comment', 'pair', 'item', 'value', 'tail'),
    fc.constantFrom(
      'name: torch',
      "version: '2.1'",
      'x: "a b"',
      "k: 'it''s'",
      'y: null',
      'z: ~',
      '1: one',
      'true: yes',
      "'quoted key': v",
      'a: {}',
      'b: []',
      'c: d # note',
      'e: f: g',
      'h:#i',
      'j: -1',
      'url = "https://x/y"',
      'v = 1_000',
      'w = { name = "a" }',
      'u = ["a",]',
      'd = 1979-05-27',
      'q = "a\\"b"',
      'dotted.key = 1',
      '[package.extras]',
      '[[package]]',
    ),
  );
  return fc.tuple(fc.constantFrom(...base), fc.array(edit, { minLength: 1, maxLength: 4 })).map(([text, edits]) => {
    const lines = text.split('\n');
    for (const [at, kind, extra] of edits) {
      const i = at % lines.length;
      const line = lines[i]!;
      const indent = /^ */.exec(line)![0];
      if (kind === 'drop') lines.splice(i, 1);
      else if (kind === 'repeat') lines.splice(i, 0, line);
      else if (kind === 'indent') lines[i] = ` ${line}`;
      else if (kind === 'dedent') lines[i] = line.replace(/^ /, '');
      else if (kind === 'comment') lines.splice(i, 0, `${' '.repeat(at % 7)}# a comment`);
      else if (kind === 'pair') lines.splice(i + 1, 0, `${indent}${extra}`);
      else if (kind === 'item') lines.splice(i + 1, 0, `${indent}- ${extra}`);
      else if (kind === 'value') lines[i] = line.replace(/([:=] ).*$/, `$1${extra.replace(/^[^:=]*[:=] /, '')}`);
      else lines[i] = `${line} ${extra}`;
    }
    return lines.join('\n');
  });
}

/**
 * The scanner agrees with `reference` on lines edited in real files, and accepts about the `measured` share of them
 * (as fastPathProperties measures it).
 */
function lineEditProperty(
  reference: string,
  seedsOf: () => string[],
  agrees: (text: string) => boolean,
  measured: number,
): void {
  it(`agrees with ${reference} on lines edited in real files, and accepts many of them`, () => {
    let accepted = 0;
    assertProperty(
      fc.property(lineMutated(seedsOf()), (text) => void (agrees(text) && accepted++)),
      { numRuns: RUNS },
    );
    expectShare(accepted, RUNS, measured);
  });
}

const yamlSeeds = (): string[] => [...seeds('pixi-lock'), ...seeds('conda-lock')];
const tomlSeeds = (): string[] => [
  ...seeds('uv-lock'),
  ...seeds('poetry-lock'),
  ...seeds('pyproject'),
  ...seeds('pixi'),
];

const scalar = fc.constantFrom(
  'torch',
  '2.1.0',
  "'2.1'",
  '"x"',
  'a b',
  'null',
  '~',
  'true',
  '1e3',
  'http://a/b',
  "'it''s'",
  '{}',
  '[]',
  'a # c',
  '',
);
const yamlDoc = fc
  .array(
    fc.tuple(
      fc.constantFrom('version', 'environments', 'packages', 'package', '1', 'null', "'k'"),
      fc.nat({ max: 3 }),
      fc.array(scalar, { maxLength: 3 }),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((sections) =>
    sections
      .map(([key, shape, values]) => {
        if (shape === 0) return `${key}: ${values[0] ?? ''}`;
        if (shape === 1) return `${key}:\n${values.map((value) => `- ${value}`).join('\n')}`;
        if (shape === 2) return `${key}:\n${values.map((value, i) => `  k${i}: ${value}`).join('\n')}`;
        return `${key}:\n${values.map((value, i) => `- name: n${i}\n  v: ${value}`).join('\n')}`;
      })
      .join('\n'),
  );
const tomlValue = fc.constantFrom(
  '"a"',
  "'b'",
  '"e\\"q"',
  'true',
  '1',
  '1.5',
  '[]',
  '["x", "y",]',
  '[\n  { name = "a" },\n]',
  '{ registry = "r" }',
  '{}',
);
const tomlDoc = fc
  .array(
    fc.tuple(
      fc.constantFrom('[[package]]', '[package.source]', '[metadata]', '', '[a.b]'),
      fc.array(fc.tuple(fc.constantFrom('name', 'version', '"q"', 'k-1'), tomlValue), { maxLength: 3 }),
    ),
    {
      minLength: 1,
      maxLength: 5,
    },
  )
  .map((tables) =>
    tables
      .map(([header, pairs]) => [header, ...pairs.map(([key, value]) => `${key} = ${value}`)].join('\n'))
      .join('\n\n'),
  );

describe('the YAML lock scanner', () => {
  fastPathProperties('pixi-lock', 'the yaml package', yamlDoc, yamlAgrees, { generated: 0.85, mutated: 0.31 });

  lineEditProperty('the yaml package', yamlSeeds, yamlAgrees, 0.25);

  it('declines what it does not read, and the lock is then read by the yaml package', () => {
    for (const text of [
      'a:\r\n  b: 1\r\n',
      'a:\n\tb: 1\n',
      codeBlock`
        ---
        a: 1
      `,
      codeBlock`
        a: &x 1
        b: *x
      `,
      'a: !!str 1\n',
      codeBlock`
        a: |
          text
      `,
      'a: [1, 2]\n',
      'a: "esc\\"aped"\n',
      codeBlock`
        a: b
          c
      `,
      codeBlock`
        a:
          b: 1
         c: 2
      `,
      'a: b: c\n',
      '- a\n',
      codeBlock`
        a:
        - - b
      `,
      codeBlock`
        ? a
        : b
      `,
      '',
      '  a: 1\n',
    ])
      expect(scanBlockYaml(text), JSON.stringify(text)).toBeUndefined();
    const file = parseFile(
      'pixi.lock',
      codeBlock`
        version: 6
        environments:
          default:
            packages:
              linux-64:
              - conda: &t https://conda.anaconda.org/conda-forge/linux-64/cuda-version-12.1-h1d6eff3_3.conda
      `,
      'pixi-lock',
    );
    expect(file.packages.map((pkg) => pkg.name)).toEqual(['cuda-version']);
  });
});

describe('the TOML scanner', () => {
  // It accepts about 6.5 % of the mutated uv.lock files (a byte edit anywhere in a lock mostly breaks its TOML).
  fastPathProperties('uv-lock', 'toml-eslint-parser', tomlDoc, tomlAgrees, { generated: 0.33, mutated: 0.06 });

  lineEditProperty('toml-eslint-parser', tomlSeeds, tomlAgrees, 0.31);

  it('declines what it does not read, and the file is then read by toml-eslint-parser', () => {
    for (const text of [
      'a = 1\r\n',
      'a = """x"""\n',
      'a = "\\u00e9"\n',
      'a.b = 1\n',
      'd = 1979-05-27\n',
      'a = { b = 1, }\n',
      codeBlock`
        a = {
         b = 1 }
      `,
      codeBlock`
        a = 1
        a = 2
      `,
      codeBlock`
        [t]
        [t]
      `,
      codeBlock`
        x = []
        [[x]]
      `,
      '[ spaced ]\n',
      'a = 012\n',
      'a = 0',
      'a = 1 # \ud834\n',
    ])
      expect(scanToml(text), JSON.stringify(text)).toBeUndefined();
  });
});

describe('the real large locks (fixtures/locks)', () => {
  const locks = largeLocks();

  it('are all read by the scanners, into the trees the reference parsers give', { timeout: 600_000 }, () => {
    expect(locks.length).toBeGreaterThanOrEqual(4);
    for (const { name, text } of locks) {
      const yaml = /pixi\.lock$|conda-lock\.ya?ml$/.test(name);
      expect(yaml ? yamlAgrees(text) : tomlAgrees(text), name).toBe(true);
    }
  });
});
