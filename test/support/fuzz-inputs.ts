/**
 * Inputs for the property-based tests: real files as seeds, and random edits biased towards the syntax of our formats.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { CORPUS, inputPaths, ROOT } from './harness.js';
import type { FileKind } from '../../src/parsers/facts.js';
import { formatOf } from '../../src/parsers/formats.js';
import { classifyPath, looksLikeManifest, looksLikeSkypilot } from '../../src/parsers/index.js';

/** Cases per property: FUZZ_RUNS (`npm run fuzz` sets 100,000), else a sample of 1,500 for every test run. */
export const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);

export type Kind = FileKind;

/** Seeds: every fixture input and corpus file, by kind. */
export function seeds(kind: Kind): string[] {
  const out: string[] = [];
  const rules = join(ROOT, 'fixtures', 'rules');
  for (const rule of readdirSync(rules)) {
    for (const name of readdirSync(join(rules, rule))) {
      for (const path of inputPaths(join(rules, rule, name))) {
        const text = readFileSync(join(rules, rule, name, path), 'utf8');
        const fileKind: Kind =
          classifyPath(path) ??
          (/\.ya?ml$/.test(path)
            ? looksLikeManifest(text)
              ? 'kubernetes'
              : looksLikeSkypilot(text)
                ? 'skypilot'
                : 'conda'
            : 'requirements');
        if (fileKind === kind) out.push(text);
      }
    }
  }
  for (const name of readdirSync(CORPUS).filter((file) => file !== 'README.md')) {
    if ((name.endsWith('.txt') ? 'requirements' : 'conda') === kind) out.push(readFileSync(join(CORPUS, name), 'utf8'));
  }
  // Real pyproject.toml files (fixtures/corpus-packaging).
  const packaging = join(ROOT, 'fixtures', 'corpus-packaging');
  const ending =
    kind === 'dockerfile' || kind === 'requirements' || kind === 'conda' || kind === 'kubernetes' || kind === 'skypilot'
      ? undefined
      : formatOf(kind).fileName;
  // Files up to 64 KiB: a mutated seed is parsed once per case, and the large real locks are for their own tests.
  if (ending)
    for (const name of readdirSync(packaging).filter((file) => file.endsWith(ending))) {
      const text = readFileSync(join(packaging, name), 'utf8');
      if (text.length <= 64 * 1024) out.push(text);
    }
  return out;
}

const SYNTAX = [
  '[[tool.uv.index]]\n',
  '[tool.uv.sources]\n',
  '"""',
  "'''",
  ' = ',
  '{ index = "x" }',
  '\n',
  '\r\n',
  ' ',
  '\t',
  '\\',
  '#',
  '=',
  '==',
  '>=',
  '+cu121',
  ':',
  '::',
  '-',
  '- ',
  '[',
  ']',
  '{',
  '}',
  '"',
  "'",
  '$',
  '${',
  '}',
  '@',
  ';',
  '&&',
  '|',
  '<<EOF\n',
  'EOF\n',
  '--index-url ',
  '-r ',
  'FROM ',
  'RUN pip install ',
  'ARG X=',
  'ENV ',
  'COPY ',
  'torch',
  '2.3.0',
  'nvidia/cuda:',
  'dependencies:\n',
  '---\n',
  'kind: Deployment\n',
  'containers:\n',
  '- image: ',
  'nodeSelector:\n',
  'nvidia.com/gpu: 1\n',
  'pip:\n',
  '*',
  '&a ',
  '*a',
  '!!',
  '%',
  '\u00a0',
  '\ufeff',
  '\0',
  'é',
  '𝄞',
];

/** Random text with a bias towards the syntax of all three formats. */
export const syntaxText = fc
  .array(
    fc.oneof(fc.constantFrom(...SYNTAX), fc.string({ maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 4 })),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));

/** A seed file with random edits: insertions, deletions, duplications and truncation. */
export function mutated(kind: Kind): fc.Arbitrary<string> {
  const base = seeds(kind);
  return fc
    .tuple(
      fc.constantFrom(...base),
      fc.array(fc.tuple(fc.nat(), fc.nat({ max: 20 }), syntaxText), { maxLength: 6 }),
      fc.option(fc.nat()),
    )
    .map(([text, edits, cut]) => {
      let out = text;
      for (const [at, remove, insert] of edits) {
        const position = out.length ? at % out.length : 0;
        out = out.slice(0, position) + insert + out.slice(position + remove);
      }
      return cut === null ? out : out.slice(0, cut % (out.length + 1));
    });
}
